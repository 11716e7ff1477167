// RUN: evo-opt %s -split-input-file -verify-diagnostics -evo-lower-to-gpu | FileCheck %s
// RUN: evo-opt %s -split-input-file -verify-diagnostics -evo-lower-to-gpu="vector-width=1 block-size=128 elements-per-thread=2" | FileCheck %s --check-prefix=KNOBS

// Elementwise: one thread per element, bare-buffer host signature (inputs, then results).

// CHECK-LABEL: func.func @relu
// CHECK-SAME:    (%[[X:.*]]: memref<1000x1024xf32>, %[[Y:.*]]: memref<1000x1024xf32>)
// CHECK-DAG:     %[[GRID:.*]] = arith.constant 4000 : index
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[BLOCK:.*]] = arith.constant 256 : index
// CHECK:         gpu.launch_func @relu_kernels::@relu_k0 blocks in (%[[GRID]], %[[ONE]], %[[ONE]]) threads in (%[[BLOCK]], %[[ONE]], %[[ONE]]) args(%[[X]] : memref<1000x1024xf32>, %[[Y]] : memref<1000x1024xf32>)
// CHECK-NEXT:    return
// CHECK:       gpu.module @relu_kernels attributes {evo.plan = #evo.plan<func = "relu", source = "func.func @relu(
// CHECK-SAME:    buffers = [#evo.buffer<name = "arg0", role = input, type = memref<1000x1024xf32>>, #evo.buffer<name = "result0", role = output, type = memref<1000x1024xf32>>]
// CHECK-SAME:    tasks = [#evo.task<name = "relu_t0", family = elementwise, source = "func.func @relu_t0(
// CHECK-SAME:    knobs = <block_size = 256, elements_per_thread = 1, vector_width = 1, transpose_tile = 0>, buffers = [0, 1]>]
// CHECK-SAME:    launches = [#evo.launch<kernel = "relu_k0", task = 0, grid = [4000, 1, 1], block = [256, 1, 1], args = [0, 1]>]>}
// CHECK:         gpu.func @relu_k0(%[[A:.*]]: memref<1000x1024xf32>, %[[B:.*]]: memref<1000x1024xf32>) kernel
// CHECK-SAME:      evo.family = #evo.family<elementwise>, evo.knobs = #evo.knobs<block_size = 256, elements_per_thread = 1, vector_width = 1, transpose_tile = 0>, evo.task = 0 : i64, known_block_size = array<i32: 256, 1, 1>
// CHECK:           %[[TID:.*]] = gpu.thread_id x
// CHECK:           %[[BID:.*]] = gpu.block_id x
// CHECK:           %[[LIN:.*]] = arith.addi %{{.*}}, %[[TID]] : index
// CHECK:           %[[J:.*]] = arith.remui %[[LIN]], %{{.*}} : index
// CHECK:           %[[I:.*]] = arith.divui %[[LIN]], %{{.*}} : index
// CHECK:           %[[V:.*]] = memref.load %[[A]][%[[I]], %[[J]]]
// CHECK:           %[[R:.*]] = arith.maximumf %[[V]], %{{.*}} : f32
// CHECK:           memref.store %[[R]], %[[B]][%[[I]], %[[J]]]
// CHECK-NOT:       scf.if
// CHECK:           gpu.return

// KNOBS-LABEL: func.func @relu
// KNOBS:         gpu.func @relu_k0
// KNOBS-SAME:      evo.knobs = #evo.knobs<block_size = 128, elements_per_thread = 2, vector_width = 1, transpose_tile = 0>
// KNOBS-SAME:      known_block_size = array<i32: 128, 1, 1>
// KNOBS-COUNT-2:   memref.store
// KNOBS-NOT:       memref.store
// KNOBS:           gpu.return
func.func @relu(%x: tensor<1000x1024xf32>) -> tensor<1000x1024xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1000x1024xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<1000x1024xf32>) outs(%e : tensor<1000x1024xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1000x1024xf32>
  return %r : tensor<1000x1024xf32>
}

// -----

// A chain of elementwise ops (arith on tensors, a broadcast bias, named ops) fuses into one
// kernel; the bias is read with its own (row-invariant) index.

// CHECK-LABEL: func.func @chain
// CHECK-SAME:    (%{{.*}}: memref<64x128xf32>, %{{.*}}: memref<64x128xf32>, %{{.*}}: memref<128xf32>, %{{.*}}: memref<64x128xf32>)
// CHECK:         gpu.launch_func @chain_kernels::@chain_k0
// CHECK-NOT:     gpu.launch_func
// CHECK:       gpu.module @chain_kernels
// CHECK:         gpu.func @chain_k0(%[[A:.*]]: memref<64x128xf32>, %[[B:.*]]: memref<64x128xf32>, %[[BIAS:.*]]: memref<128xf32>, %[[OUT:.*]]: memref<64x128xf32>)
// CHECK-DAG:       %[[J:.*]] = arith.remui
// CHECK-DAG:       %[[I:.*]] = arith.divui
// CHECK:           %[[VA:.*]] = memref.load %[[A]][%[[I]], %[[J]]]
// CHECK:           %[[VB:.*]] = memref.load %[[B]][%[[I]], %[[J]]]
// CHECK:           %[[VBIAS:.*]] = memref.load %[[BIAS]][%[[J]]]
// CHECK:           %[[S:.*]] = arith.addf %[[VA]], %[[VB]]
// CHECK:           %[[T:.*]] = arith.mulf %[[S]], %[[VBIAS]]
// CHECK:           %[[U:.*]] = math.exp %[[T]]
// CHECK:           memref.store %[[U]], %[[OUT]][%[[I]], %[[J]]]
// CHECK-NOT:     gpu.func
func.func @chain(%a: tensor<64x128xf32>, %b: tensor<64x128xf32>, %bias: tensor<128xf32>) -> tensor<64x128xf32> {
  %e = tensor.empty() : tensor<64x128xf32>
  %s = arith.addf %a, %b : tensor<64x128xf32>
  %bb = linalg.broadcast ins(%bias : tensor<128xf32>) outs(%e : tensor<64x128xf32>) dimensions = [0]
  %t = linalg.mul ins(%s, %bb : tensor<64x128xf32>, tensor<64x128xf32>) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  %u = linalg.exp ins(%t : tensor<64x128xf32>) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %u : tensor<64x128xf32>
}

// -----

// vector_width=4 (set on the op): 16-byte vector accesses along the innermost dimension; the
// broadcast operand is read with a vector too since it is contiguous along it. 1000 * 1022 is
// not a multiple of the block's work: the tail is guarded.

// CHECK-LABEL: func.func @vec_add
// CHECK:         gpu.func @vec_add_k0(%[[A:.*]]: memref<1000x1024xf16>, %[[B:.*]]: memref<1024xf16>, %[[C:.*]]: memref<1000x1024xf16>)
// CHECK-SAME:      evo.knobs = #evo.knobs<block_size = 64, elements_per_thread = 1, vector_width = 8, transpose_tile = 0>
// CHECK:           %[[VA:.*]] = vector.load %[[A]][%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<1000x1024xf16>, vector<8xf16>
// CHECK:           %[[VB:.*]] = vector.load %[[B]][%{{.*}}] {alignment = 16 : i64} : memref<1024xf16>, vector<8xf16>
// CHECK-COUNT-8:   arith.addf %{{.*}}, %{{.*}} : f16
// CHECK:           %[[V:.*]] = vector.from_elements
// CHECK:           vector.store %[[V]], %[[C]][%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<1000x1024xf16>, vector<8xf16>
func.func @vec_add(%a: tensor<1000x1024xf16>, %b: tensor<1024xf16>) -> tensor<1000x1024xf16> {
  %e = tensor.empty() : tensor<1000x1024xf16>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      {evo.knobs = {vector_width = 8, block_size = 64}}
      ins(%a, %b : tensor<1000x1024xf16>, tensor<1024xf16>) outs(%e : tensor<1000x1024xf16>) {
  ^bb0(%x: f16, %y: f16, %out: f16):
    %s = arith.addf %x, %y : f16
    linalg.yield %s : f16
  } -> tensor<1000x1024xf16>
  return %r : tensor<1000x1024xf16>
}

// -----

// Odd sizes get a bounds guard.

// CHECK-LABEL: func.func @tail
// CHECK:         gpu.func @tail_k0
// CHECK:           %[[IN:.*]] = arith.cmpi ult, %{{.*}}, %{{.*}} : index
// CHECK:           scf.if %[[IN]] {
// CHECK:             memref.load
// CHECK:             math.tanh
// CHECK:             memref.store
func.func @tail(%x: tensor<3x333xf32>) -> tensor<3x333xf32> {
  %e = tensor.empty() : tensor<3x333xf32>
  %r = linalg.tanh ins(%x : tensor<3x333xf32>) outs(%e : tensor<3x333xf32>) -> tensor<3x333xf32>
  return %r : tensor<3x333xf32>
}

// -----

// Row reduction, naive baseline: one thread per row, serial loop, the fill folds into the init.

// CHECK-LABEL: func.func @row_sum
// CHECK:         gpu.launch_func @row_sum_kernels::@row_sum_k0 blocks in (%c2, %c1, %c1) threads in (%c256, %c1, %c1)
// CHECK:         gpu.func @row_sum_k0(%[[X:.*]]: memref<512x300xf32>, %[[Y:.*]]: memref<512xf32>)
// CHECK-SAME:      evo.family = #evo.family<reduction>, evo.knobs = #evo.knobs<block_size = 256, vector_width = 1, reduction = thread, accumulators = 1, split = 1>
// CHECK:           %[[ROW:.*]] = arith.addi
// CHECK:           %[[SUM:.*]] = scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (f32) {
// CHECK:             %[[V:.*]] = memref.load %[[X]][%[[ROW]], %[[K]]]
// CHECK:             %[[NEXT:.*]] = arith.addf %[[ACC]], %[[V]] : f32
// CHECK:             scf.yield %[[NEXT]] : f32
// CHECK:           memref.store %{{.*}}, %[[Y]][%[[ROW]]]
func.func @row_sum(%x: tensor<512x300xf32>) -> tensor<512xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<512xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<512xf32>) -> tensor<512xf32>
  %r = linalg.reduce ins(%x : tensor<512x300xf32>) outs(%acc : tensor<512xf32>) dimensions = [1]
    (%in: f32, %init: f32) {
      %s = arith.addf %in, %init : f32
      linalg.yield %s : f32
    }
  return %r : tensor<512xf32>
}

// -----

// Warp strategy: one warp per row, lanes stride the row with 4-wide loads, butterfly shuffles,
// lane 0 writes.

// CHECK-LABEL: func.func @row_max_warp
// CHECK:         gpu.launch_func @row_max_warp_kernels::@row_max_warp_k0 blocks in (%c64, %c1, %c1) threads in (%c256, %c1, %c1)
// CHECK:         gpu.func @row_max_warp_k0
// CHECK-SAME:      vector_width = 4, reduction = warp, accumulators = 1, split = 1>
// CHECK:           scf.for
// CHECK:             vector.load %{{.*}} {alignment = 16 : i64} : memref<512x1024xf32>, vector<4xf32>
// CHECK-COUNT-4:     arith.maxnumf
// CHECK:           gpu.shuffle xor %{{.*}}, %c16_i32, %c32_i32 : f32
// CHECK:           gpu.shuffle xor %{{.*}}, %c8_i32, %c32_i32 : f32
// CHECK:           gpu.shuffle xor %{{.*}}, %c4_i32, %c32_i32 : f32
// CHECK:           gpu.shuffle xor %{{.*}}, %c2_i32, %c32_i32 : f32
// CHECK:           gpu.shuffle xor %{{.*}}, %c1_i32, %c32_i32 : f32
// CHECK:           %[[LANE0:.*]] = arith.cmpi eq
// CHECK:           scf.if %[[LANE0]] {
// CHECK:             memref.store
func.func @row_max_warp(%x: tensor<512x1024xf32>) -> tensor<512xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<512xf32>
  %acc = linalg.fill ins(%ninf : f32) outs(%e : tensor<512xf32>) -> tensor<512xf32>
  %r = linalg.reduce ins(%x : tensor<512x1024xf32>) outs(%acc : tensor<512xf32>) dimensions = [1]
         {evo.knobs = {reduction = "warp", vector_width = 4}}
    (%in: f32, %init: f32) {
      %s = arith.maxnumf %in, %init : f32
      linalg.yield %s : f32
    }
  return %r : tensor<512xf32>
}

// -----

// Block strategy with f16 input: accumulates in f32, reduces warps through shared memory.

// CHECK-LABEL: func.func @row_sum_block_f16
// CHECK:         gpu.launch_func @row_sum_block_f16_kernels::@row_sum_block_f16_k0 blocks in (%c128, %c1, %c1) threads in (%c128, %c1, %c1)
// CHECK:         gpu.func @row_sum_block_f16_k0({{.*}}) workgroup(%[[SMEM:.*]] : memref<4xf32, #gpu.address_space<workgroup>>) kernel
// CHECK:           scf.for {{.*}} -> (f32)
// CHECK:             arith.extf %{{.*}} : f16 to f32
// CHECK:           gpu.barrier
// CHECK:           gpu.shuffle xor
// CHECK:           memref.store %{{.*}}, %[[SMEM]]
// CHECK:           gpu.barrier
// CHECK-COUNT-4:   memref.load %[[SMEM]]
// CHECK:           arith.truncf %{{.*}} : f32 to f16
func.func @row_sum_block_f16(%x: tensor<128x4096xf16>) -> tensor<128xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<128xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%e : tensor<128xf16>) -> tensor<128xf16>
  %r = linalg.reduce ins(%x : tensor<128x4096xf16>) outs(%acc : tensor<128xf16>) dimensions = [1]
         {evo.knobs = {reduction = "block", block_size = 128}}
    (%in: f16, %init: f16) {
      %s = arith.addf %in, %init : f16
      linalg.yield %s : f16
    }
  return %r : tensor<128xf16>
}

// -----

// Column reduction: the reduced dimension is the outer one, so one thread per column reads
// consecutive addresses across the warp.

// CHECK-LABEL: func.func @col_sum
// CHECK:         gpu.func @col_sum_k0(%[[X:.*]]: memref<4096x2048xf32>, %[[Y:.*]]: memref<2048xf32>)
// CHECK:           %[[COL:.*]] = arith.addi
// CHECK:           scf.for %[[R:.*]] = %{{.*}} to %{{.*}} step
// CHECK:             memref.load %[[X]][%[[R]], %[[COL]]]
// CHECK:           memref.store %{{.*}}, %[[Y]][%[[COL]]]
func.func @col_sum(%x: tensor<4096x2048xf32>) -> tensor<2048xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2048xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2048xf32>) -> tensor<2048xf32>
  %r = linalg.reduce ins(%x : tensor<4096x2048xf32>) outs(%acc : tensor<2048xf32>) dimensions = [0]
    (%in: f32, %init: f32) {
      %s = arith.addf %in, %init : f32
      linalg.yield %s : f32
    }
  return %r : tensor<2048xf32>
}

// -----

// An elementwise producer fuses into the reduction that consumes it (sum of squares).

// CHECK-LABEL: func.func @sum_sq
// CHECK:         gpu.launch_func
// CHECK-NOT:     gpu.launch_func
// CHECK:         gpu.func @sum_sq_k0
// CHECK:           scf.for
// CHECK:             %[[V:.*]] = memref.load
// CHECK:             %[[SQ:.*]] = arith.mulf %[[V]], %[[V]]
// CHECK:             arith.addf %{{.*}}, %[[SQ]]
func.func @sum_sq(%x: tensor<64x256xf32>) -> tensor<64xf32> {
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<64x256xf32>
  %sq = linalg.mul ins(%x, %x : tensor<64x256xf32>, tensor<64x256xf32>) outs(%e2 : tensor<64x256xf32>) -> tensor<64x256xf32>
  %e = tensor.empty() : tensor<64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %r = linalg.reduce ins(%sq : tensor<64x256xf32>) outs(%acc : tensor<64xf32>) dimensions = [1]
    (%in: f32, %init: f32) {
      %s = arith.addf %in, %init : f32
      linalg.yield %s : f32
    }
  return %r : tensor<64xf32>
}

// -----

// Softmax over the last dimension is a row program: max, sum of exponentials, scaled
// exponentials; one thread per row by default, each pass re-reading the row.

// CHECK-LABEL: func.func @softmax
// CHECK:         gpu.launch_func @softmax_kernels::@softmax_k0 blocks in (%c4, %c1, %c1) threads in (%c256, %c1, %c1)
// CHECK:         gpu.func @softmax_k0(%[[X:.*]]: memref<1000x77xf32>, %[[Y:.*]]: memref<1000x77xf32>)
// CHECK-SAME:      evo.family = #evo.family<rows>, evo.knobs = #evo.knobs<block_size = 256, vector_width = 1, reduction = thread, cache_row = false>
// CHECK:           scf.if
// CHECK:             %[[MAX:.*]] = scf.for
// CHECK:               arith.maximumf
// CHECK:             %[[SUM:.*]] = scf.for
// CHECK:               arith.subf %{{.*}}, %[[MAX]]
// CHECK:               math.exp
// CHECK:             %[[INV:.*]] = arith.divf %{{.*}}, %[[SUM]]
// CHECK:             scf.for
// CHECK:               math.exp
// CHECK:               arith.mulf %{{.*}}, %[[INV]]
// CHECK:               memref.store %{{.*}}, %[[Y]]
func.func @softmax(%x: tensor<1000x77xf32>) -> tensor<1000x77xf32> {
  %e = tensor.empty() : tensor<1000x77xf32>
  %r = linalg.softmax dimension(1) ins(%x : tensor<1000x77xf32>) outs(%e : tensor<1000x77xf32>) -> tensor<1000x77xf32>
  return %r : tensor<1000x77xf32>
}

// -----

// Softmax over a non-innermost dimension, one block per row.

// CHECK-LABEL: func.func @softmax_dim0
// CHECK:         gpu.launch_func @softmax_dim0_kernels::@softmax_dim0_k0 blocks in (%c64, %c1, %c1) threads in (%c32, %c1, %c1)
// CHECK:         gpu.func @softmax_dim0_k0(%[[X:.*]]: memref<512x64xf32>, %{{.*}}: memref<512x64xf32>)
// CHECK:           %[[COL:.*]] = gpu.block_id x
// CHECK:           scf.for %[[R:[^ ]*]] = %{{.*}}
// CHECK:             memref.load %[[X]][%[[R]], %[[COL]]]
// CHECK:           gpu.shuffle xor
func.func @softmax_dim0(%x: tensor<512x64xf32>) -> tensor<512x64xf32> {
  %e = tensor.empty() : tensor<512x64xf32>
  %r = linalg.softmax {evo.knobs = {reduction = "block", block_size = 32}} dimension(0)
         ins(%x : tensor<512x64xf32>) outs(%e : tensor<512x64xf32>) -> tensor<512x64xf32>
  return %r : tensor<512x64xf32>
}

// -----

// Matmul, naive baseline: one thread per element of C, a serial loop over K.

// CHECK-LABEL: func.func @matmul
// CHECK:         gpu.launch_func @matmul_kernels::@matmul_k0 blocks in (%c192, %c1, %c1) threads in (%c256, %c1, %c1)
// CHECK:         gpu.func @matmul_k0(%[[A:.*]]: memref<256x128xf32>, %[[B:.*]]: memref<128x192xf32>, %[[C:.*]]: memref<256x192xf32>)
// CHECK-SAME:      evo.family = #evo.family<matmul>, evo.knobs = #evo.knobs<block_size = 256, accumulators = 1>
// CHECK-DAG:       %[[N:.*]] = arith.remui
// CHECK-DAG:       %[[M:.*]] = arith.divui
// CHECK:           scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (f32)
// CHECK:             %[[VA:.*]] = memref.load %[[A]][%[[M]], %[[K]]]
// CHECK:             %[[VB:.*]] = memref.load %[[B]][%[[K]], %[[N]]]
// CHECK:             %[[P:.*]] = arith.mulf %[[VA]], %[[VB]]
// CHECK:             arith.addf %[[ACC]], %[[P]]
// CHECK:           memref.store %{{.*}}, %[[C]][%[[M]], %[[N]]]
func.func @matmul(%a: tensor<256x128xf32>, %b: tensor<128x192xf32>) -> tensor<256x192xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x192xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<256x192xf32>) -> tensor<256x192xf32>
  %c = linalg.matmul ins(%a, %b : tensor<256x128xf32>, tensor<128x192xf32>) outs(%acc : tensor<256x192xf32>) -> tensor<256x192xf32>
  return %c : tensor<256x192xf32>
}

// -----

// Tiled matmul with f16 operands and f32 accumulation: shared-memory tiles (workgroup
// attributions), barriers, a 4x4 register tile per thread, a (N/BN, M/BM, batch) grid.

// CHECK-LABEL: func.func @bmm_f16
// CHECK:         gpu.launch_func @bmm_f16_kernels::@bmm_f16_k0 blocks in (%c4, %c2, %c8) threads in (%c256, %c1, %c1)
// CHECK:         gpu.func @bmm_f16_k0({{.*}}) workgroup(%[[AS:.*]] : memref<2048xf16, #gpu.address_space<workgroup>>, %[[BS:.*]] : memref<2048xf16, #gpu.address_space<workgroup>>) kernel
// CHECK-SAME:      evo.knobs = #evo.knobs<tile_sizes = [64, 64, 32], thread_tile = [4, 4]>
// CHECK:           gpu.block_id z
// CHECK:           scf.for {{.*}} -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)
// CHECK:             memref.store %{{.*}}, %[[AS]]
// CHECK:             memref.store %{{.*}}, %[[BS]]
// CHECK:             gpu.barrier
// CHECK:             scf.for
// CHECK-COUNT-4:       memref.load %[[AS]]
// CHECK-COUNT-4:       memref.load %[[BS]]
// CHECK:               arith.extf
// CHECK:             gpu.barrier
// CHECK-COUNT-16:  memref.store
func.func @bmm_f16(%a: tensor<8x128x256xf16>, %b: tensor<8x256x256xf16>) -> tensor<8x128x256xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x128x256xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8x128x256xf32>) -> tensor<8x128x256xf32>
  %c = linalg.batch_matmul {evo.knobs = {tile_sizes = [64, 64, 32], thread_tile = [4, 4]}}
         ins(%a, %b : tensor<8x128x256xf16>, tensor<8x256x256xf16>)
         outs(%acc : tensor<8x128x256xf32>) -> tensor<8x128x256xf32>
  return %c : tensor<8x128x256xf32>
}

// -----

// vector_width=4 tiles: A's tile padded to 64+4 per K row, 128-bit fragments from shared memory
// (4 vector.loads per K step for a 8x8 thread tile), the K step unrolled (BK=4), multiply-adds
// marked contract (FMA), C written 4 columns at a time.

// CHECK-LABEL: func.func @matmul_vec
// CHECK:         gpu.launch_func @matmul_vec_kernels::@matmul_vec_k0 blocks in (%c2, %c2, %c1) threads in (%c64, %c1, %c1)
// CHECK:         gpu.func @matmul_vec_k0(%[[A:.*]]: memref<128x64xf32>, %[[B:.*]]: memref<64x128xf32>, %{{.*}}: memref<128x128xf32>) workgroup(%[[AS:.*]] : memref<272xf32, #gpu.address_space<workgroup>>, %[[BS:.*]] : memref<256xf32, #gpu.address_space<workgroup>>) kernel
// CHECK-SAME:      evo.knobs = #evo.knobs<vector_width = 4, tile_sizes = [64, 64, 4], thread_tile = [8, 8]>
// CHECK:           scf.for
// CHECK:             vector.load %[[A]][%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<128x64xf32>, vector<4xf32>
// CHECK:             vector.load %[[B]][%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<64x128xf32>, vector<4xf32>
// CHECK-COUNT-4:     memref.store %{{.*}}, %[[AS]]
// CHECK:             vector.store %{{.*}}, %[[BS]][%{{.*}}] {alignment = 16 : i64}
// CHECK:             gpu.barrier
// CHECK-NOT:         scf.for
// CHECK-COUNT-2:     vector.load %[[AS]][%{{.*}}] {alignment = 16 : i64} : memref<272xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK-COUNT-2:     vector.load %[[BS]][%{{.*}}] {alignment = 16 : i64} : memref<256xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK:             arith.mulf %{{.*}}, %{{.*}} fastmath<contract> : f32
// CHECK-NEXT:        arith.addf %{{.*}}, %{{.*}} fastmath<contract> : f32
// CHECK-COUNT-16:  vector.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<128x128xf32>, vector<4xf32>
func.func @matmul_vec(%a: tensor<128x64xf32>, %b: tensor<64x128xf32>) -> tensor<128x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x128xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<128x128xf32>) -> tensor<128x128xf32>
  %c = linalg.matmul {evo.knobs = {tile_sizes = [64, 64, 4], thread_tile = [8, 8], vector_width = 4}}
         ins(%a, %b : tensor<128x64xf32>, tensor<64x128xf32>) outs(%acc : tensor<128x128xf32>) -> tensor<128x128xf32>
  return %c : tensor<128x128xf32>
}

// -----

// prefetch=1: tile 0 is copied before the loop; the loop (from K tile 1) reads the next tile
// from global memory before computing on the current one, stores it after a barrier, and the
// last tile is computed after the loop.

// CHECK-LABEL: func.func @matmul_prefetch
// CHECK:         gpu.func @matmul_prefetch_k0(%[[A:.*]]: memref<128x64xf32>, %[[B:.*]]: memref<64x128xf32>, %{{.*}}: memref<128x128xf32>) workgroup(%[[AS:.*]] : {{.*}}, %[[BS:.*]] : {{.*}}) kernel
// CHECK-SAME:      prefetch = true>
// CHECK:           %[[C4:.*]] = arith.constant 4 : index
// CHECK:           vector.load %[[A]]
// CHECK:           gpu.barrier
// CHECK:           scf.for %{{.*}} = %[[C4]] to
// CHECK:             vector.load %[[A]]
// CHECK:             vector.load %[[B]]
// CHECK:             vector.load %[[AS]]
// CHECK:             gpu.barrier
// CHECK-NEXT:        memref.store %{{.*}}, %[[AS]]
// CHECK:             vector.store %{{.*}}, %[[BS]]
// CHECK-NEXT:        gpu.barrier
// CHECK:             scf.yield
// CHECK:           vector.load %[[AS]]
// CHECK:           vector.store
func.func @matmul_prefetch(%a: tensor<128x64xf32>, %b: tensor<64x128xf32>) -> tensor<128x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x128xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<128x128xf32>) -> tensor<128x128xf32>
  %c = linalg.matmul {evo.knobs = {tile_sizes = [64, 64, 4], thread_tile = [8, 8], vector_width = 4, prefetch = 1}}
         ins(%a, %b : tensor<128x64xf32>, tensor<64x128xf32>) outs(%acc : tensor<128x128xf32>) -> tensor<128x128xf32>
  return %c : tensor<128x128xf32>
}

// -----

// A matmul followed by relu: one task and one kernel, the relu applied to each output element
// in the matmul's kernel (its epilogue), no scratch buffer (test/Conversion/lower-to-gpu-epilogue.mlir;
// the host's scratch buffers are checked there with a chain that does not fuse).

// CHECK-LABEL: func.func @mm_relu
// CHECK-SAME:    (%[[A:.*]]: memref<64x32xf32>, %[[B:.*]]: memref<32x64xf32>, %[[Y:.*]]: memref<64x64xf32>)
// CHECK-NOT:     gpu.alloc
// CHECK:         gpu.launch_func @mm_relu_kernels::@mm_relu_k0 {{.*}} args(%[[A]] : memref<64x32xf32>, %[[B]] : memref<32x64xf32>, %[[Y]] : memref<64x64xf32>)
// CHECK-NEXT:    return
// CHECK:       gpu.module @mm_relu_kernels attributes {evo.plan = #evo.plan<
// CHECK-NOT:     role = scratch
// CHECK-SAME:    launches = [#evo.launch<kernel = "mm_relu_k0", task = 0, {{.*}}>]>}
// CHECK:         gpu.func @mm_relu_k0
// CHECK-SAME:      evo.family = #evo.family<matmul>
// CHECK:           scf.for
// CHECK:           arith.maximumf
// CHECK:           memref.store
// CHECK-NOT:     gpu.func
func.func @mm_relu(%a: tensor<64x32xf32>, %b: tensor<32x64xf32>) -> tensor<64x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %c = linalg.matmul ins(%a, %b : tensor<64x32xf32>, tensor<32x64xf32>) outs(%acc : tensor<64x64xf32>) -> tensor<64x64xf32>
  %r = linalg.max ins(%c, %acc : tensor<64x64xf32>, tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}

// -----

// A payload whose combiner is not a plain associative op (argmax-style select) still lowers with
// the serial schedule, which runs the payload exactly.

// CHECK-LABEL: func.func @max_select
// CHECK:         gpu.func @max_select_k0
// CHECK:           scf.for
// CHECK:             arith.cmpf ogt
// CHECK:             arith.select
func.func @max_select(%x: tensor<16x64xf32>, %init: tensor<16xf32>) -> tensor<16xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<16x64xf32>) outs(%init : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %c = arith.cmpf ogt, %in, %out : f32
    %s = arith.select %c, %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  return %r : tensor<16xf32>
}

// -----

// Convolutions and pooling lower through the general reduction emitter: affine indexing maps
// (h + kh) are evaluated with index arithmetic; the pooling window operand is never read. A
// convolution belongs to the matmul family (an implicit GEMM: its naive schedule is this one).

// CHECK-LABEL: func.func @conv
// CHECK:         gpu.func @conv_k0(%[[X:.*]]: memref<2x8x18x18xf32>, %[[W:.*]]: memref<16x8x3x3xf32>, %{{.*}}: memref<2x16x16x16xf32>)
// CHECK-SAME:      evo.family = #evo.family<matmul>
// CHECK:           scf.for
// CHECK:             arith.addi
// CHECK:             memref.load %[[X]]
// CHECK:             memref.load %[[W]]
func.func @conv(%x: tensor<2x8x18x18xf32>, %w: tensor<16x8x3x3xf32>) -> tensor<2x16x16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x16x16x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x16x16x16xf32>) -> tensor<2x16x16x16xf32>
  %r = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<2x8x18x18xf32>, tensor<16x8x3x3xf32>)
                                outs(%acc : tensor<2x16x16x16xf32>) -> tensor<2x16x16x16xf32>
  return %r : tensor<2x16x16x16xf32>
}

// -----

// A convolution with tile sizes is an implicit GEMM: M = output channels (16), N = (batch,
// output rows, output columns) = 2*16*16, K = (input channels, filter rows, filter columns) =
// 8*3*3. The filter is A (read along K, contiguous), the image B (read along the output columns),
// and C is written 4 output columns at a time.

// CHECK-LABEL: func.func @conv_tiled
// CHECK:         gpu.launch_func @conv_tiled_kernels::@conv_tiled_k0 blocks in (%c8, %c1, %c1) threads in (%c64, %c1, %c1)
// CHECK:         gpu.func @conv_tiled_k0(%[[X:.*]]: memref<2x8x18x18xf32>, %[[W:.*]]: memref<16x8x3x3xf32>, %[[Y:.*]]: memref<2x16x16x16xf32>) workgroup(%[[AS:.*]] : memref<160xf32, #gpu.address_space<workgroup>>, %[[BS:.*]] : memref<512xf32, #gpu.address_space<workgroup>>)
// CHECK-SAME:      evo.family = #evo.family<matmul>, evo.knobs = #evo.knobs<vector_width = 4, tile_sizes = [16, 64, 8], thread_tile = [4, 4]>
// CHECK:           scf.for
// CHECK:             memref.load %[[W]]
// CHECK:             memref.load %[[X]]
// CHECK:             memref.store %{{.*}}, %[[AS]]
// CHECK:             memref.store %{{.*}}, %[[BS]]
// CHECK:             gpu.barrier
// CHECK:             vector.load %[[AS]]
// CHECK:             vector.load %[[BS]]
// CHECK-COUNT-4:   vector.store %{{.*}}, %[[Y]]
func.func @conv_tiled(%x: tensor<2x8x18x18xf32>, %w: tensor<16x8x3x3xf32>) -> tensor<2x16x16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x16x16x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x16x16x16xf32>) -> tensor<2x16x16x16xf32>
  %r = linalg.conv_2d_nchw_fchw {evo.knobs = {tile_sizes = [16, 64, 8], thread_tile = [4, 4], vector_width = 4}}
         ins(%x, %w : tensor<2x8x18x18xf32>, tensor<16x8x3x3xf32>)
         outs(%acc : tensor<2x16x16x16xf32>) -> tensor<2x16x16x16xf32>
  return %r : tensor<2x16x16x16xf32>
}

// -----

// CHECK-LABEL: func.func @pool
// CHECK-SAME:    (%{{.*}}: memref<2x8x32x32xf32>, %{{.*}}: memref<2x8x16x16xf32>)
// CHECK:         gpu.func @pool_k0(%[[X:.*]]: memref<2x8x32x32xf32>, %[[Y:.*]]: memref<2x8x16x16xf32>)
// CHECK:           scf.for
// CHECK:             memref.load %[[X]]
// CHECK:             arith.maximumf
func.func @pool(%x: tensor<2x8x32x32xf32>) -> tensor<2x8x16x16xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<2x8x16x16xf32>
  %acc = linalg.fill ins(%ninf : f32) outs(%e : tensor<2x8x16x16xf32>) -> tensor<2x8x16x16xf32>
  %win = tensor.empty() : tensor<2x2xf32>
  %r = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
     ins(%x, %win : tensor<2x8x32x32xf32>, tensor<2x2xf32>) outs(%acc : tensor<2x8x16x16xf32>) -> tensor<2x8x16x16xf32>
  return %r : tensor<2x8x16x16xf32>
}

// -----

// Functions without linalg ops (host code) are left alone; a module of them alone has nothing
// to lower (a warning: frontend-nothing.mlir).

// CHECK-LABEL: func.func @host_only
// CHECK-NEXT:    return
// expected-warning @+1 {{evo-lower-to-gpu: nothing to lower}}
func.func @host_only(%x: memref<4xf32>) {
  return
}

// -----

func.func @dynamic(%x: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @-1 {{evo-lower-to-gpu needs static shapes, got 'tensor<?xf32>'}}
  %c0 = arith.constant 0 : index
  %d = tensor.dim %x, %c0 : tensor<?xf32>
  %e = tensor.empty(%d) : tensor<?xf32>
  %r = linalg.exp ins(%x : tensor<?xf32>) outs(%e : tensor<?xf32>) -> tensor<?xf32>
  return %r : tensor<?xf32>
}

// -----

// tensor.pad and reshapes are views (lower-to-gpu-views.mlir); inserting into a tensor is not.
func.func @unsupported(%x: tensor<4x4xf32>, %y: tensor<6x6xf32>) -> tensor<6x6xf32> {
  // expected-error @+1 {{'tensor.insert_slice' is not supported by evo-lower-to-gpu}}
  %p = tensor.insert_slice %x into %y[1, 1] [4, 4] [1, 1] : tensor<4x4xf32> into tensor<6x6xf32>
  %e = tensor.empty() : tensor<6x6xf32>
  %r = linalg.exp ins(%p : tensor<6x6xf32>) outs(%e : tensor<6x6xf32>) -> tensor<6x6xf32>
  return %r : tensor<6x6xf32>
}

// -----

func.func @bad_vector_width(%x: tensor<4x1023xf32>) -> tensor<4x1023xf32> {
  %e = tensor.empty() : tensor<4x1023xf32>
  // expected-error @+1 {{vector_width=4 does not divide the innermost loop dimension (1023)}}
  %r = linalg.exp {evo.knobs = {vector_width = 4}} ins(%x : tensor<4x1023xf32>) outs(%e : tensor<4x1023xf32>) -> tensor<4x1023xf32>
  return %r : tensor<4x1023xf32>
}

// -----

func.func @wide_vector(%x: tensor<4x1024xf32>) -> tensor<4x1024xf32> {
  %e = tensor.empty() : tensor<4x1024xf32>
  // expected-error @+1 {{vector_width=8 makes 32-byte accesses to 'f32' elements; the limit is 16 bytes}}
  %r = linalg.exp {evo.knobs = {vector_width = 8}} ins(%x : tensor<4x1024xf32>) outs(%e : tensor<4x1024xf32>) -> tensor<4x1024xf32>
  return %r : tensor<4x1024xf32>
}

// -----

func.func @typo_knob(%x: tensor<4x1024xf32>) -> tensor<4x1024xf32> {
  %e = tensor.empty() : tensor<4x1024xf32>
  // expected-error @+1 {{unknown knob 'blok_size'}}
  %r = linalg.exp {evo.knobs = {blok_size = 64}} ins(%x : tensor<4x1024xf32>) outs(%e : tensor<4x1024xf32>) -> tensor<4x1024xf32>
  return %r : tensor<4x1024xf32>
}

// -----

func.func @bad_block_size(%x: tensor<4x1024xf32>) -> tensor<4x1024xf32> {
  %e = tensor.empty() : tensor<4x1024xf32>
  // expected-error @+1 {{block_size must be a multiple of 32 in [32, 1024], got 100}}
  %r = linalg.exp {evo.knobs = {block_size = 100}} ins(%x : tensor<4x1024xf32>) outs(%e : tensor<4x1024xf32>) -> tensor<4x1024xf32>
  return %r : tensor<4x1024xf32>
}

// -----

func.func @uninitialized(%x: tensor<4x1024xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  // expected-error @+1 {{the op reads its output 0, which is uninitialized (tensor.empty); fill it first}}
  %r = linalg.reduce ins(%x : tensor<4x1024xf32>) outs(%e : tensor<4xf32>) dimensions = [1]
    (%in: f32, %init: f32) {
      %s = arith.addf %in, %init : f32
      linalg.yield %s : f32
    }
  return %r : tensor<4xf32>
}

// -----

func.func @select_warp(%x: tensor<16x64xf32>, %init: tensor<16xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{reduction=warp, vector_width=1 and accumulators=1 need a payload of the form `yield combine(f(ins), out)`}}
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                       iterator_types = ["parallel", "reduction"]}
      {evo.knobs = {reduction = "warp"}}
      ins(%x : tensor<16x64xf32>) outs(%init : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %c = arith.cmpf ogt, %in, %out : f32
    %s = arith.select %c, %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  return %r : tensor<16xf32>
}

// -----

// (Tiles need not divide the problem any more: lower-to-gpu-matmul-shapes.mlir.)
func.func @bad_tiles(%a: tensor<100x64xf32>, %b: tensor<64x64xf32>) -> tensor<100x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<100x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<100x64xf32>) -> tensor<100x64xf32>
  // expected-error @+1 {{tile_sizes=64,64,16 thread_tile=4,4 for M=100 N=64 K=64: split=8 needs at least 8 whole K tiles, got 4}}
  %c = linalg.matmul {evo.knobs = {tile_sizes = [64, 64, 16], thread_tile = [4, 4], split = 8}}
         ins(%a, %b : tensor<100x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<100x64xf32>) -> tensor<100x64xf32>
  return %c : tensor<100x64xf32>
}

// -----

func.func @bad_vector_tiles(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  // expected-error @+1 {{tile_sizes=64,64,16 thread_tile=4,2 for M=64 N=64 K=64: vector_width=4 needs thread_tile entries that are multiples of 4}}
  %c = linalg.matmul {evo.knobs = {tile_sizes = [64, 64, 16], thread_tile = [4, 2], vector_width = 4}}
         ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %c : tensor<64x64xf32>
}

// -----

// Arguments are tensors, or scalars the kernels take by value (lower-to-gpu-scalar-args.mlir);
// anything else is refused at the argument.
// expected-error @+1 {{evo-lower-to-gpu supports only tensor arguments and scalar arguments (f16, bf16, f32, f64, integers up to 64 bits), got 'vector<4xf32>'}}
func.func @vector_arg(%x: tensor<4xf32>, %s: vector<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.exp ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @returns_arg(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.exp ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{result 1 returns an argument unchanged}}
  return %r, %x : tensor<4xf32>, tensor<4xf32>
}

// -----

// split: each column's 4096 rows are cut into 8 slices reduced by 8x as many threads (grid y),
// into a scratch buffer of partials; a second kernel adds the 8 partials in order to the init.

// CHECK-LABEL: func.func @col_sum_split
// CHECK:         %[[P:.*]], %{{.*}} = gpu.alloc async [%{{.*}}] () : memref<8x2048xf32>
// CHECK:         gpu.launch_func @col_sum_split_kernels::@col_sum_split_k0 blocks in (%c8, %c8, %c1) threads in (%c256, %c1, %c1) args(%{{.*}} : memref<4096x2048xf32>, %{{.*}} : memref<2048xf32>, %[[P]] : memref<8x2048xf32>)
// CHECK-NEXT:    gpu.launch_func @col_sum_split_kernels::@col_sum_split_k0_combine blocks in (%c8, %c1, %c1) threads in (%c256, %c1, %c1) args(%{{.*}} : memref<4096x2048xf32>, %{{.*}} : memref<2048xf32>, %[[P]] : memref<8x2048xf32>)
// CHECK:         gpu.dealloc async [%{{.*}}] %[[P]]
// CHECK:         gpu.func @col_sum_split_k0(%[[X:.*]]: memref<4096x2048xf32>, %{{.*}}: memref<2048xf32>, %[[PART:.*]]: memref<8x2048xf32>)
// CHECK-SAME:      split = 8>
// CHECK:           %[[COL:.*]] = arith.addi
// CHECK:           %[[SLICE:.*]] = gpu.block_id y
// CHECK:           %[[LO:.*]] = arith.muli %[[SLICE]], %c512
// CHECK:           %[[HI:.*]] = arith.addi %[[LO]], %c512
// CHECK:           scf.for %[[R:.*]] = %[[LO]] to %[[HI]]
// CHECK:             memref.load %[[X]][%[[R]], %[[COL]]]
// CHECK:           memref.store %{{.*}}, %[[PART]][%[[SLICE]], %[[COL]]]
// CHECK:         gpu.func @col_sum_split_k0_combine(%{{.*}}: memref<4096x2048xf32>, %[[Y:.*]]: memref<2048xf32>, %[[PART2:.*]]: memref<8x2048xf32>)
// CHECK:           scf.for %[[S:.*]] = %c0 to %c8 step %c1
// CHECK:             memref.load %[[PART2]][%[[S]], %{{.*}}]
// CHECK:           memref.store %{{.*}}, %[[Y]]
func.func @col_sum_split(%x: tensor<4096x2048xf32>) -> tensor<2048xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2048xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2048xf32>) -> tensor<2048xf32>
  %r = linalg.reduce ins(%x : tensor<4096x2048xf32>) outs(%acc : tensor<2048xf32>) dimensions = [0] {evo.knobs = {split = 8}}
    (%in: f32, %init: f32) {
      %s = arith.addf %in, %init : f32
      linalg.yield %s : f32
    }
  return %r : tensor<2048xf32>
}

// -----

// A 0-d sum split into 256 slices (a block each): one output, so the combine is one warp whose
// lanes fold every 32nd partial in order and then each other (a fixed butterfly), not one
// thread walking 256 partials.

// CHECK-LABEL: func.func @sum_0d_split
// CHECK:         gpu.launch_func @sum_0d_split_kernels::@sum_0d_split_k0 blocks in (%c1, %c256, %c1) threads in (%c256, %c1, %c1)
// CHECK-NEXT:    gpu.launch_func @sum_0d_split_kernels::@sum_0d_split_k0_combine blocks in (%c1, %c1, %c1) threads in (%c256, %c1, %c1)
// CHECK:         gpu.func @sum_0d_split_k0_combine(%{{.*}}: memref<4096x8192xf32>, %[[Y:.*]]: memref<f32>, %[[PART:.*]]: memref<256x1xf32>)
// CHECK:           %[[LANE:.*]] = arith.remui %{{.*}}, %c32
// CHECK:           scf.for %[[S:.*]] = %[[LANE]] to %c256 step %c32
// CHECK:             memref.load %[[PART]][%[[S]], %{{.*}}]
// CHECK-COUNT-5:   gpu.shuffle xor
// CHECK:           %[[FIRST:.*]] = arith.cmpi eq, %[[LANE]], %c0
// CHECK:           scf.if %[[FIRST]]
// CHECK:             memref.store %{{.*}}, %[[Y]][]
func.func @sum_0d_split(%x: tensor<4096x8192xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %r = linalg.reduce ins(%x : tensor<4096x8192xf32>) outs(%acc : tensor<f32>) dimensions = [0, 1] {evo.knobs = {reduction = "block", vector_width = 4, accumulators = 4, split = 256}}
    (%in: f32, %init: f32) {
      %s = arith.addf %in, %init : f32
      linalg.yield %s : f32
    }
  return %r : tensor<f32>
}

// -----

func.func @split_does_not_divide(%x: tensor<100x64xf32>) -> tensor<64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  // expected-error @+1 {{split=8 does not divide the 100 reduction chunks of vector_width=1 points}}
  %r = linalg.reduce ins(%x : tensor<100x64xf32>) outs(%acc : tensor<64xf32>) dimensions = [0] {evo.knobs = {split = 8}}
    (%in: f32, %init: f32) {
      %s = arith.addf %in, %init : f32
      linalg.yield %s : f32
    }
  return %r : tensor<64xf32>
}

// -----

// transpose_tile: a block owns a 32x32 tile; the input is read coalesced along its rows into a
// padded 32x33 workgroup buffer, then written coalesced along the output's rows.

// CHECK-LABEL: func.func @transpose_tiled
// CHECK:         gpu.launch_func @transpose_tiled_kernels::@transpose_tiled_k0 blocks in (%c128, %c1, %c1) threads in (%c256, %c1, %c1)
// CHECK:         gpu.func @transpose_tiled_k0(%[[X:.*]]: memref<256x512xf32>, %[[Y:.*]]: memref<512x256xf32>) workgroup(%[[TILE:.*]] : memref<1056xf32, #gpu.address_space<workgroup>>)
// CHECK-SAME:      transpose_tile = 32>
// CHECK:           %[[TX:.*]] = arith.remui %{{.*}}, %c32
// CHECK:           %[[TY:.*]] = arith.divui %{{.*}}, %c32
// CHECK-COUNT-4:   memref.store %{{.*}}, %[[TILE]]
// CHECK:           gpu.barrier
// CHECK:           %[[OUTCOL:.*]] = arith.addi %{{.*}}, %[[TX]]
// CHECK:           %[[ROWTX:.*]] = arith.muli %[[TX]], %c33
// CHECK:           %[[SLOT:.*]] = arith.addi %[[ROWTX]], %[[TY]]
// CHECK:           %[[V:.*]] = memref.load %[[TILE]][%[[SLOT]]]
// CHECK:           memref.store %[[V]], %[[Y]][%{{.*}}, %[[OUTCOL]]]
// CHECK-COUNT-3:   memref.store %{{.*}}, %[[Y]]
func.func @transpose_tiled(%x: tensor<256x512xf32>) -> tensor<512x256xf32> {
  %e = tensor.empty() : tensor<512x256xf32>
  %t = linalg.transpose ins(%x : tensor<256x512xf32>) outs(%e : tensor<512x256xf32>) permutation = [1, 0] {evo.knobs = {transpose_tile = 32, elements_per_thread = 1}}
  return %t : tensor<512x256xf32>
}

// -----

func.func @transpose_tile_without_transpose(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %e = tensor.empty() : tensor<64x64xf32>
  // expected-error @+1 {{transpose_tile needs an input read across the innermost loop dimension and along the one before it (a transpose)}}
  %r = linalg.exp ins(%x : tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) {evo.knobs = {transpose_tile = 32}} -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}

// -----

// The naive schedule of a long reduction (over 65536 points; here a whole-tensor sum of squares
// to a 0-d result) is a block per output whose threads' partial sums meet in a tree, never one
// sequential f32 accumulator over millions of elements.

// CHECK-LABEL: func.func @frobenius_squared
// CHECK:       knobs = <block_size = 256, vector_width = 1, reduction = block, accumulators = 1, split = 1>
// CHECK-SAME:  grid = [1, 1, 1], block = [256, 1, 1]
// CHECK:         gpu.func @frobenius_squared_k0
// CHECK:           gpu.shuffle xor
func.func @frobenius_squared(%x: tensor<2048x2048xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%x : tensor<2048x2048xf32>) outs(%acc : tensor<f32>) {
    ^bb0(%a: f32, %o: f32):
      %sq = arith.mulf %a, %a : f32
      %r = arith.addf %o, %sq : f32
      linalg.yield %r : f32
  } -> tensor<f32>
  return %s : tensor<f32>
}
