// Contractions without tile sizes are reductions over K per output. With the default knobs they
// take the naive schedule; the reduction knobs (reduction strategy, vector_width, accumulators,
// split) give the GEMV and skinny-contraction schedules: a warp or a block per output, vector
// loads along K with several accumulators in flight, split-K combined in order by a second
// kernel.

// RUN: evo-opt %s -split-input-file -evo-lower-to-gpu | FileCheck %s
// Module-wide reduction knobs (meant for reductions and softmax) leave untiled contractions
// alone: only their own `evo.knobs` (or the search) set them.
// RUN: evo-opt %s -split-input-file -evo-lower-to-gpu="vector-width=8 split=4 reduction-strategy=block" | FileCheck %s --check-prefix=GLOBAL
// GLOBAL-LABEL: func.func @matvec_naive
// GLOBAL:       knobs = <block_size = 256, accumulators = 1>
// GLOBAL-LABEL: func.func @matvec_warp
// GLOBAL:       knobs = <block_size = 256, vector_width = 4, reduction = warp, accumulators = 4>

// The naive schedule: one warp per output (both operands contiguous along K), scalar loads;
// the reduction knobs are not recorded.

// CHECK-LABEL: func.func @matvec_naive
// CHECK:       knobs = <block_size = 256, accumulators = 1>
// CHECK:         gpu.func @matvec_naive_k0
// CHECK-NOT:       vector.load
// CHECK:           gpu.shuffle xor
func.func @matvec_naive(%a: tensor<512x1024xf32>, %x: tensor<1024xf32>) -> tensor<512xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<512xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<512xf32>) -> tensor<512xf32>
  %y = linalg.matvec ins(%a, %x : tensor<512x1024xf32>, tensor<1024xf32>) outs(%acc : tensor<512xf32>) -> tensor<512xf32>
  return %y : tensor<512xf32>
}

// -----

// A warp per row with 128-bit loads of A and x and four accumulators.

// CHECK-LABEL: func.func @matvec_warp
// CHECK:       knobs = <block_size = 256, vector_width = 4, reduction = warp, accumulators = 4>
// CHECK:         gpu.func @matvec_warp_k0
// CHECK:           vector.load {{.*}} : memref<512x1024xf32>, vector<4xf32>
// CHECK:           vector.load {{.*}} : memref<1024xf32>, vector<4xf32>
// CHECK:           gpu.shuffle xor
func.func @matvec_warp(%a: tensor<512x1024xf32>, %x: tensor<1024xf32>) -> tensor<512xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<512xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<512xf32>) -> tensor<512xf32>
  %y = linalg.matvec {evo.knobs = {reduction = "warp", vector_width = 4, accumulators = 4}}
         ins(%a, %x : tensor<512x1024xf32>, tensor<1024xf32>) outs(%acc : tensor<512xf32>) -> tensor<512xf32>
  return %y : tensor<512xf32>
}

// -----

// A matmul with N = 1 and a long K: a block per output and split-K: 8 slices into a scratch
// buffer of partials, then a second kernel that adds them in order (and the initial value).

// CHECK-LABEL: func.func @skinny_split
// CHECK:       #evo.buffer<name = "tmp1", role = scratch, type = memref<8x16xf32>>
// CHECK:       knobs = <block_size = 256, vector_width = 8, reduction = block, accumulators = 1, split = 8>
// CHECK:       #evo.launch<kernel = "skinny_split_k0", task = 0, grid = [16, 8, 1], block = [256, 1, 1]
// CHECK:       #evo.launch<kernel = "skinny_split_k0_combine", task = 0
// CHECK:         gpu.func @skinny_split_k0
// CHECK:           vector.load {{.*}} : memref<16x65536xf16>, vector<8xf16>
// CHECK:         gpu.func @skinny_split_k0_combine
func.func @skinny_split(%a: tensor<16x65536xf16>, %b: tensor<65536x1xf16>) -> tensor<16x1xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x1xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<16x1xf32>) -> tensor<16x1xf32>
  %c = linalg.matmul {evo.knobs = {reduction = "block", vector_width = 8, split = 8}}
         ins(%a, %b : tensor<16x65536xf16>, tensor<65536x1xf16>) outs(%acc : tensor<16x1xf32>) -> tensor<16x1xf32>
  return %c : tensor<16x1xf32>
}
