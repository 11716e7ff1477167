// group_outputs=G: a thread, warp or block computes G output points together, along the output
// dimension the most input bytes do not depend on, and loads those inputs once for all G
// (lib/Conversion/EmitReduction.cpp). Contractions take it from their own evo.knobs (the
// pass-wide reduction knobs are for reductions).

// RUN: evo-opt %s -split-input-file -verify-diagnostics -evo-lower-to-gpu | FileCheck %s

// nn.Linear at batch 8 (y = x W^T): the 8 batch rows share each 128-bit load of W, so a warp
// issues 8 loads of x and one of W per chunk; 64 groups of 8 outputs, 8 warps per block.

// CHECK-LABEL: func.func @linear_b8
// CHECK:       launches = [#evo.launch<kernel = "linear_b8_k0", task = 0, grid = [8, 1, 1], block = [256, 1, 1]
// CHECK:       gpu.func @linear_b8_k0
// CHECK-SAME:    evo.knobs = #evo.knobs<block_size = 256, vector_width = 4, reduction = warp, accumulators = 1, group_outputs = 8>
// CHECK-COUNT-9: vector.load {{.*}} : memref<{{8x64|64x64}}xf32>, vector<4xf32>
// CHECK-NOT:     vector.load
// CHECK:         gpu.shuffle
// CHECK-COUNT-8: memref.store
// CHECK:         gpu.return
func.func @linear_b8(%x: tensor<8x64xf32>, %w: tensor<64x64xf32>) -> tensor<8x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8x64xf32>) -> tensor<8x64xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
         ins(%x, %w : tensor<8x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<8x64xf32>)
         {evo.knobs = #evo.knobs<reduction = warp, vector_width = 4, group_outputs = 8>} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// A GEMV's rows share x: 4 rows per warp, one load of x and four of A per chunk; with split-K
// the partials of each of the 4 points go to their own slot of the scratch buffer.

// CHECK-LABEL: func.func @gemv_split
// CHECK:       #evo.buffer<name = "tmp{{[0-9]+}}", role = scratch, type = memref<4x256xf32>>
// CHECK:       grid = [8, 4, 1], block = [256, 1, 1]
// CHECK:       gpu.func @gemv_split_k0
// CHECK-COUNT-5: vector.load {{.*}} vector<8xf16>
// CHECK-NOT:     vector.load
// CHECK-COUNT-4: memref.store {{.*}} : memref<4x256xf32>
// CHECK:       gpu.func @gemv_split_k0_combine
func.func @gemv_split(%a: tensor<256x1024xf16>, %x: tensor<1024xf16>) -> tensor<256xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<256xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%e : tensor<256xf16>) -> tensor<256xf16>
  %y = linalg.matvec ins(%a, %x : tensor<256x1024xf16>, tensor<1024xf16>) outs(%acc : tensor<256xf16>)
         {evo.knobs = #evo.knobs<reduction = warp, vector_width = 8, group_outputs = 4, split = 4>} -> tensor<256xf16>
  return %y : tensor<256xf16>
}

// -----

// A reduction (not a contraction) whose rows share an input: sum_k (x[r][k] - mu[k])^2, four
// rows per block; the pass-wide knobs apply to it (the other functions of this file refuse
// them: `not`).

// RUN: not evo-opt %s -split-input-file -evo-lower-to-gpu="reduction-strategy=block group-outputs=4" 2>&1 | FileCheck %s --check-prefix=RED
// RED-LABEL: func.func @centered_squares
// RED:       grid = [16, 1, 1], block = [256, 1, 1]
// RED:       gpu.func @centered_squares_k0
// RED-COUNT-5: memref.load {{.*}} : memref<{{64x512|512}}xf32>
// RED-NOT:     memref.load {{.*}} : memref<{{64x512|512}}xf32>
func.func @centered_squares(%x: tensor<64x512xf32>, %mu: tensor<512xf32>) -> tensor<64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(r, k) -> (r, k)>, affine_map<(r, k) -> (k)>, affine_map<(r, k) -> (r)>], iterator_types = ["parallel", "reduction"]}
         ins(%x, %mu : tensor<64x512xf32>, tensor<512xf32>) outs(%acc : tensor<64xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %s = arith.mulf %d, %d : f32
    %t = arith.addf %o, %s : f32
    linalg.yield %t : f32
  } -> tensor<64xf32>
  return %y : tensor<64xf32>
}

// -----

// Nothing to share: every input of a row sum depends on the row.

func.func @row_sum(%x: tensor<64x512xf32>) -> tensor<64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  // expected-error @+1 {{group_outputs=4 needs an output dimension of a multiple of 4 points along which some input stays the same (nothing to share)}}
  %y = linalg.reduce ins(%x : tensor<64x512xf32>) outs(%acc : tensor<64xf32>) dimensions = [1] {evo.knobs = #evo.knobs<reduction = warp, group_outputs = 4>}
    (%a: f32, %o: f32) {
      %s = arith.addf %a, %o : f32
      linalg.yield %s : f32
    }
  return %y : tensor<64xf32>
}

// -----

// 6 rows do not split into groups of 4.

func.func @gemv_odd(%a: tensor<6x1024xf32>, %x: tensor<1024xf32>) -> tensor<6xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<6xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<6xf32>) -> tensor<6xf32>
  // expected-error @+1 {{group_outputs=4 needs an output dimension of a multiple of 4 points}}
  %y = linalg.matvec ins(%a, %x : tensor<6x1024xf32>, tensor<1024xf32>) outs(%acc : tensor<6xf32>)
         {evo.knobs = #evo.knobs<reduction = warp, group_outputs = 4>} -> tensor<6xf32>
  return %y : tensor<6xf32>
}

// -----

// group_outputs2: nn.Linear at batch 8, a warp over 8 batch rows x 4 rows of W. Per chunk it
// loads each of its 8 rows of x once and each of its 4 rows of W once (12 loads for 32 points,
// where group_outputs alone loads 8 of x per row of W); 64 / 4 = 16 groups, 8 warps per block.

// CHECK-LABEL: func.func @linear_b8_2d
// CHECK:       launches = [#evo.launch<kernel = "linear_b8_2d_k0", task = 0, grid = [2, 1, 1], block = [256, 1, 1]
// CHECK:       gpu.func @linear_b8_2d_k0
// CHECK-SAME:    group_outputs = 8, group_outputs2 = 4
// CHECK-COUNT-12: vector.load {{.*}} : memref<{{8x64|64x64}}xf32>, vector<4xf32>
// CHECK-NOT:     vector.load
// CHECK-COUNT-32: memref.store {{.*}} : memref<8x64xf32>
// CHECK-NOT:     memref.store
// CHECK:         gpu.return
func.func @linear_b8_2d(%x: tensor<8x64xf32>, %w: tensor<64x64xf32>) -> tensor<8x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8x64xf32>) -> tensor<8x64xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
         ins(%x, %w : tensor<8x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<8x64xf32>)
         {evo.knobs = #evo.knobs<reduction = warp, vector_width = 4, group_outputs = 8, group_outputs2 = 4>} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// group_outputs2 needs group_outputs, and a second output dimension (a GEMV has one).

func.func @second_without_first(%x: tensor<8x64xf32>, %w: tensor<64x64xf32>) -> tensor<8x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8x64xf32>) -> tensor<8x64xf32>
  // expected-error @+1 {{group_outputs2=2 needs group_outputs > 1}}
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
         ins(%x, %w : tensor<8x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<8x64xf32>)
         {evo.knobs = #evo.knobs<reduction = warp, vector_width = 4, group_outputs2 = 2>} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @gemv_2d(%a: tensor<64x1024xf32>, %x: tensor<1024xf32>) -> tensor<64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  // expected-error @+1 {{group_outputs2=2 needs a second output dimension of a multiple of 2 points along which some input stays the same}}
  %y = linalg.matvec ins(%a, %x : tensor<64x1024xf32>, tensor<1024xf32>) outs(%acc : tensor<64xf32>)
         {evo.knobs = #evo.knobs<reduction = warp, group_outputs = 4, group_outputs2 = 2>} -> tensor<64xf32>
  return %y : tensor<64xf32>
}
