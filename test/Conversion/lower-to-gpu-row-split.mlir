// row_split (EmitRows.cpp, docs/lowering.md "Rows split over blocks"): each row of a row program
// is cut into S slices, one thread/warp/block each (gridDim.y = S), and the program runs as one
// kernel per pass: the kernel of a reduction's pass writes one partial per (slice, row) to a
// scratch buffer [S, rows]; every later kernel combines the S partials in slice order; the last
// kernel writes its slice of the outputs.
// RUN: evo-opt %s -split-input-file -verify-diagnostics -evo-lower-to-gpu="row-split=4 reduction-strategy=block block-size=128 vector-width=4" | FileCheck %s
// RUN: evo-opt %s -split-input-file -verify-diagnostics -evo-lower-to-gpu="row-split=4 reduction-strategy=warp vector-width=4 cache-row=1" | FileCheck %s --check-prefix=WARP
// RUN: evo-opt %s -split-input-file -verify-diagnostics -evo-lower-to-gpu="row-split=64 reduction-strategy=thread" | FileCheck %s --check-prefix=THREAD
// RUN: not evo-opt %s -split-input-file -evo-lower-to-gpu="row-split=2 reduction-strategy=warp vector-width=4 cache-row=1" 2>&1 | FileCheck %s --check-prefix=CACHE-ERR
// RUN: not evo-opt %s -split-input-file -evo-lower-to-gpu="row-split=3" 2>&1 | FileCheck %s --check-prefix=VALUE
// Every kernel of every case is accepted by ptxas (sm_90a), with each strategy and cache_row:
// RUN: %if ptxas %{ rm -rf %t.b && evo-opt %s -split-input-file -verify-diagnostics -evo-pipeline="output-dir=%t.b chip=sm_90a row-split=4 reduction-strategy=block block-size=128 vector-width=4" -o /dev/null && FileCheck %s --input-file=%t.b/ln3.json --check-prefix=ASM %}
// RUN: %if ptxas %{ rm -rf %t.w && evo-opt %s -split-input-file -verify-diagnostics -evo-pipeline="output-dir=%t.w chip=sm_90a row-split=4 reduction-strategy=warp vector-width=2" -o /dev/null %}
// RUN: %if ptxas %{ rm -rf %t.c && evo-opt %s -split-input-file -verify-diagnostics -evo-pipeline="output-dir=%t.c chip=sm_90a row-split=4 reduction-strategy=warp vector-width=4 cache-row=1" -o /dev/null %}
// RUN: %if ptxas %{ rm -rf %t.t && evo-opt %s -split-input-file -verify-diagnostics -evo-pipeline="output-dir=%t.t chip=sm_90a row-split=8 reduction-strategy=thread block-size=64" -o /dev/null %}

// LayerNorm over [C, H, W] (rows of 8192): a sum (pass 0), the centered squares (pass 1, they
// read the mean) and the normalized output (pass 2): three kernels, two scratch buffers of
// partials [4, 16], every launch on a grid of 16 rows x 4 slices.

// CHECK-LABEL: func.func @ln3
// CHECK:         gpu.launch_func @ln3_kernels::@ln3_k0 blocks in (%c16, %c4, %c1) threads in (%c128, %c1, %c1) args(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[P0:.*]] : memref<4x16xf32>, %[[P1:.*]] : memref<4x16xf32>)
// CHECK:         gpu.launch_func @ln3_kernels::@ln3_k0_s1 blocks in (%c16, %c4, %c1) threads in (%c128, %c1, %c1) args({{.*}}, %[[P0]] : memref<4x16xf32>, %[[P1]] : memref<4x16xf32>)
// CHECK:         gpu.launch_func @ln3_kernels::@ln3_k0_s2 blocks in (%c16, %c4, %c1) threads in (%c128, %c1, %c1) args({{.*}}, %[[P0]] : memref<4x16xf32>, %[[P1]] : memref<4x16xf32>)
// CHECK-NOT:     gpu.launch_func
// CHECK:         gpu.module @ln3_kernels
// CHECK-SAME:      #evo.buffer<name = "tmp{{[0-9]+}}", role = scratch, type = memref<4x16xf32>>, #evo.buffer<name = "tmp{{[0-9]+}}", role = scratch, type = memref<4x16xf32>>]
// CHECK-SAME:      knobs = <block_size = 128, vector_width = 4, reduction = block, cache_row = false, row_split = 4>, buffers = [0, 1, 2, 3, 4, 5]>]
// CHECK-SAME:      launches = [#evo.launch<kernel = "ln3_k0", task = 0, grid = [16, 4, 1], block = [128, 1, 1], args = [0, 1, 2, 3, 4, 5]>, #evo.launch<kernel = "ln3_k0_s1", task = 0, grid = [16, 4, 1], block = [128, 1, 1], args = [0, 1, 2, 3, 4, 5]>, #evo.launch<kernel = "ln3_k0_s2", task = 0, grid = [16, 4, 1], block = [128, 1, 1], args = [0, 1, 2, 3, 4, 5]>]

// Pass 0: slice y folds chunks [512 y, 512 y + 512) of its row; thread 0 writes the partial.
// CHECK:         gpu.func @ln3_k0(%[[X:.*]]: memref<16x8x32x32xf32>, %{{.*}}: memref<8x32x32xf32>, %{{.*}}: memref<8x32x32xf32>, %[[Y:.*]]: memref<16x8x32x32xf32>, %[[Q0:.*]]: memref<4x16xf32>, %[[Q1:.*]]: memref<4x16xf32>)
// CHECK-SAME:      evo.knobs = #evo.knobs<block_size = 128, vector_width = 4, reduction = block, cache_row = false, row_split = 4>
// CHECK:           %[[ROW:.*]] = gpu.block_id  x
// CHECK:           %[[SLICE:.*]] = gpu.block_id  y
// CHECK:           %[[BASE:.*]] = arith.muli %[[SLICE]], %c512
// CHECK-DAG:       %[[FIRST:.*]] = arith.addi %{{.*}}, %[[BASE]]
// CHECK-DAG:       %[[END:.*]] = arith.addi %[[BASE]], %c512
// CHECK:           scf.for %{{.*}} = %[[FIRST]] to %[[END]] step %c128
// CHECK:             vector.load %[[X]]
// CHECK:           gpu.shuffle xor
// CHECK:           gpu.barrier
// CHECK:           scf.if
// CHECK-NEXT:        memref.store %{{.*}}, %[[Q0]][%[[SLICE]], %[[ROW]]]
// CHECK-NOT:       memref.store
// CHECK-NOT:       vector.store
// CHECK:           gpu.return

// Pass 1: the sum from the 4 partials in order, then this slice's centered squares.
// CHECK:         gpu.func @ln3_k0_s1(%[[X:.*]]: memref<16x8x32x32xf32>, %{{.*}}: memref<8x32x32xf32>, %{{.*}}: memref<8x32x32xf32>, %[[Y:.*]]: memref<16x8x32x32xf32>, %[[Q0:.*]]: memref<4x16xf32>, %[[Q1:.*]]: memref<4x16xf32>)
// CHECK:           %[[ROW:.*]] = gpu.block_id  x
// CHECK:           %[[SLICE:.*]] = gpu.block_id  y
// CHECK:           scf.for %[[S:.*]] = %c0 to %c4 step %c1 iter_args
// CHECK-NEXT:        memref.load %[[Q0]][%[[S]], %[[ROW]]]
// CHECK-NEXT:        arith.addf
// CHECK:           scf.for
// CHECK:             vector.load %[[X]]
// CHECK:             arith.subf
// CHECK:           gpu.shuffle xor
// CHECK:           gpu.barrier
// CHECK:           scf.if
// CHECK-NEXT:        memref.store %{{.*}}, %[[Q1]][%[[SLICE]], %[[ROW]]]
// CHECK-NOT:       memref.load %[[Q1]]
// CHECK-NOT:       vector.store
// CHECK:           gpu.return

// Pass 2: both statistics from their partials, then the slice's outputs.
// CHECK:         gpu.func @ln3_k0_s2(%[[X:.*]]: memref<16x8x32x32xf32>, %{{.*}}: memref<8x32x32xf32>, %{{.*}}: memref<8x32x32xf32>, %[[Y:.*]]: memref<16x8x32x32xf32>, %[[Q0:.*]]: memref<4x16xf32>, %[[Q1:.*]]: memref<4x16xf32>)
// CHECK:           memref.load %[[Q0]]
// CHECK:           memref.load %[[Q1]]
// CHECK-NOT:       gpu.shuffle
// CHECK:           scf.for
// CHECK:             vector.load %[[X]]
// CHECK:             math.rsqrt
// CHECK:             vector.store %{{.*}}, %[[Y]]
// CHECK-NOT:       memref.store
// CHECK:           gpu.return

// ASM: "ptxas": {

// WARP-LABEL: func.func @ln3
// WARP:         gpu.launch_func @ln3_kernels::@ln3_k0 blocks in (%c2, %c4, %c1) threads in (%c256, %c1, %c1)
// CACHE-ERR:    error: cache_row would keep 128 elements per thread in registers (at most 64)
// THREAD-LABEL: func.func @ln3
// THREAD:         gpu.launch_func @ln3_kernels::@ln3_k0 blocks in (%c1, %c64, %c1) threads in (%c256, %c1, %c1)
// VALUE:        error: evo-lower-to-gpu: invalid option: row_split must be a power of 2 in [1, 256], got 3
#mapf = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#mapr = affine_map<(d0, d1, d2, d3) -> (d0)>
#mapv = affine_map<(d0) -> (d0)>
#mapw = affine_map<(d0, d1, d2, d3) -> (d1, d2, d3)>
func.func @ln3(%x: tensor<16x8x32x32xf32>, %w: tensor<8x32x32xf32>, %b: tensor<8x32x32xf32>) -> tensor<16x8x32x32xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %n = arith.constant 8192.0 : f32
  %eps = arith.constant 9.99999974E-6 : f32
  %0 = tensor.empty() : tensor<16xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<16xf32>) -> tensor<16xf32>
  %2 = linalg.generic {indexing_maps = [#mapf, #mapr], iterator_types = ["parallel", "reduction", "reduction", "reduction"]} ins(%x : tensor<16x8x32x32xf32>) outs(%1 : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %9 = arith.addf %in, %out : f32
    linalg.yield %9 : f32
  } -> tensor<16xf32>
  %3 = linalg.generic {indexing_maps = [#mapv, #mapv], iterator_types = ["parallel"]} ins(%2 : tensor<16xf32>) outs(%0 : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %9 = arith.divf %in, %n : f32
    linalg.yield %9 : f32
  } -> tensor<16xf32>
  %4 = linalg.generic {indexing_maps = [#mapf, #mapr, #mapr], iterator_types = ["parallel", "reduction", "reduction", "reduction"]} ins(%x, %3 : tensor<16x8x32x32xf32>, tensor<16xf32>) outs(%1 : tensor<16xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %9 = arith.subf %in, %m : f32
    %10 = arith.mulf %9, %9 : f32
    %11 = arith.addf %10, %out : f32
    linalg.yield %11 : f32
  } -> tensor<16xf32>
  %5 = linalg.generic {indexing_maps = [#mapv, #mapv], iterator_types = ["parallel"]} ins(%4 : tensor<16xf32>) outs(%0 : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %9 = arith.divf %in, %n : f32
    %10 = arith.addf %9, %eps : f32
    %11 = math.rsqrt %10 : f32
    linalg.yield %11 : f32
  } -> tensor<16xf32>
  %6 = tensor.empty() : tensor<16x8x32x32xf32>
  %7 = linalg.generic {indexing_maps = [#mapf, #mapr, #mapr, #mapw, #mapw, #mapf], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %3, %5, %w, %b : tensor<16x8x32x32xf32>, tensor<16xf32>, tensor<16xf32>, tensor<8x32x32xf32>, tensor<8x32x32xf32>) outs(%6 : tensor<16x8x32x32xf32>) {
  ^bb0(%in: f32, %m: f32, %r: f32, %ww: f32, %bb: f32, %out: f32):
    %9 = arith.subf %in, %m : f32
    %10 = arith.mulf %9, %r : f32
    %11 = arith.mulf %10, %ww : f32
    %12 = arith.addf %11, %bb : f32
    linalg.yield %12 : f32
  } -> tensor<16x8x32x32xf32>
  return %7 : tensor<16x8x32x32xf32>
}

// -----

// A lone softmax: its max (pass 0) and its sum of exponentials (pass 1, they read the max) are
// two reductions in sequence, so three kernels; the last one writes.

// CHECK-LABEL: func.func @softmax
// CHECK:         gpu.launch_func @softmax_kernels::@softmax_k0 blocks in (%c64, %c4, %c1)
// CHECK:         gpu.launch_func @softmax_kernels::@softmax_k0_s1 blocks in (%c64, %c4, %c1)
// CHECK:         gpu.launch_func @softmax_kernels::@softmax_k0_s2 blocks in (%c64, %c4, %c1)
// CHECK-NOT:     gpu.launch_func
// CHECK:         gpu.func @softmax_k0(%{{.*}}: memref<64x1024xf32>, %[[Y:.*]]: memref<64x1024xf32>, %[[MAX:.*]]: memref<4x64xf32>, %[[SUM:.*]]: memref<4x64xf32>)
// CHECK:           arith.maximumf
// CHECK:           memref.store %{{.*}}, %[[MAX]]
// CHECK-NOT:       math.exp
// CHECK:           gpu.return
// CHECK:         gpu.func @softmax_k0_s1
// CHECK:           scf.for
// CHECK-NEXT:        memref.load %[[MAX]]
// CHECK-NEXT:        arith.maximumf
// CHECK:           math.exp
// CHECK:           memref.store %{{.*}}, %[[SUM]]
// CHECK:           gpu.return
// CHECK:         gpu.func @softmax_k0_s2
// CHECK:           memref.load %[[MAX]]
// CHECK:           memref.load %[[SUM]]
// CHECK:           arith.divf
// CHECK:           math.exp
// CHECK:           vector.store %{{.*}}, %[[Y]]
// CHECK:           gpu.return

// With cache_row, a warp per (row, slice): each lane keeps its 2 chunks of its slice of 256.
// WARP-LABEL: func.func @softmax
// WARP:         gpu.launch_func @softmax_kernels::@softmax_k0 blocks in (%c8, %c4, %c1) threads in (%c256, %c1, %c1)
// WARP:         gpu.func @softmax_k0_s2(%[[X:.*]]: memref<64x1024xf32>, %[[Y:.*]]: memref<64x1024xf32>
// WARP-SAME:      cache_row = true, row_split = 4
// WARP-NOT:       scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c32
// WARP-COUNT-2:   vector.load %[[X]]
// WARP-NOT:       vector.load %[[X]]
// WARP-COUNT-2:   vector.store %{{.*}}, %[[Y]]
// THREAD-LABEL: func.func @softmax
// THREAD:         gpu.launch_func @softmax_kernels::@softmax_k0 blocks in (%c1, %c64, %c1) threads in (%c256, %c1, %c1)
func.func @softmax(%x: tensor<64x1024xf32>) -> tensor<64x1024xf32> {
  %e = tensor.empty() : tensor<64x1024xf32>
  %s = linalg.softmax dimension(1) ins(%x : tensor<64x1024xf32>) outs(%e : tensor<64x1024xf32>) -> tensor<64x1024xf32>
  return %s : tensor<64x1024xf32>
}

// -----

// Independent reductions share a pass: the sum and the sum of squares of one generic (two
// results), and an RMS of the same row, are all folded by the first kernel; the second kernel
// combines the three and writes. The per-row mean (a row vector result) is written by thread 0
// of slice 0 only.

// CHECK-LABEL: func.func @moments
// CHECK:         gpu.launch_func @moments_kernels::@moments_k0 blocks in (%c32, %c4, %c1)
// CHECK:         gpu.launch_func @moments_kernels::@moments_k0_s1 blocks in (%c32, %c4, %c1)
// CHECK-NOT:     gpu.launch_func
// CHECK:         gpu.func @moments_k0(%{{.*}}: memref<32x2048xf32>, %{{.*}}: memref<32x2048xf32>, %{{.*}}: memref<32xf32>, %[[P0:.*]]: memref<4x32xf32>, %[[P1:.*]]: memref<4x32xf32>, %[[P2:.*]]: memref<4x32xf32>)
// CHECK:           memref.store %{{.*}}, %[[P0]]
// CHECK:           memref.store %{{.*}}, %[[P1]]
// CHECK:           memref.store %{{.*}}, %[[P2]]
// CHECK:           gpu.return
// CHECK:         gpu.func @moments_k0_s1(%{{.*}}: memref<32x2048xf32>, %[[Y:.*]]: memref<32x2048xf32>, %[[MEAN:.*]]: memref<32xf32>,
// CHECK:           %[[SLICE:.*]] = gpu.block_id  y
// CHECK:           vector.store %{{.*}}, %[[Y]]
// CHECK:           %[[L0:.*]] = arith.cmpi eq, %{{.*}}, %c0
// CHECK:           %[[S0:.*]] = arith.cmpi eq, %[[SLICE]], %c0
// CHECK:           %[[ONE:.*]] = arith.andi %[[L0]], %[[S0]]
// CHECK:           scf.if %[[ONE]]
// CHECK-NEXT:        memref.store %{{.*}}, %[[MEAN]]
// THREAD-LABEL: func.func @moments
// THREAD:         gpu.launch_func @moments_kernels::@moments_k0 blocks in (%c1, %c64, %c1) threads in (%c256, %c1, %c1)
// THREAD:         gpu.launch_func @moments_kernels::@moments_k0_s1 blocks in (%c1, %c64, %c1) threads in (%c256, %c1, %c1)
#m2 = affine_map<(i, j) -> (i, j)>
#m1 = affine_map<(i, j) -> (i)>
#v1 = affine_map<(i) -> (i)>
func.func @moments(%x: tensor<32x2048xf32>) -> (tensor<32x2048xf32>, tensor<32xf32>) {
  %zero = arith.constant 0.0 : f32
  %inv = arith.constant 4.8828125e-04 : f32
  %eps = arith.constant 1.0e-05 : f32
  %er = tensor.empty() : tensor<32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%er : tensor<32xf32>) -> tensor<32xf32>
  %s:2 = linalg.generic {indexing_maps = [#m2, #m1, #m1], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<32x2048xf32>) outs(%acc, %acc : tensor<32xf32>, tensor<32xf32>) {
  ^bb0(%a: f32, %o1: f32, %o2: f32):
    %r1 = arith.addf %a, %o1 : f32
    %q = arith.mulf %a, %a : f32
    %r2 = arith.addf %q, %o2 : f32
    linalg.yield %r1, %r2 : f32, f32
  } -> (tensor<32xf32>, tensor<32xf32>)
  %amax = linalg.generic {indexing_maps = [#m2, #m1], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<32x2048xf32>) outs(%acc : tensor<32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = math.absf %a : f32
    %r = arith.maximumf %m, %o : f32
    linalg.yield %r : f32
  } -> tensor<32xf32>
  %stats:2 = linalg.generic {indexing_maps = [#v1, #v1, #v1, #v1, #v1], iterator_types = ["parallel"]}
      ins(%s#0, %s#1, %amax : tensor<32xf32>, tensor<32xf32>, tensor<32xf32>) outs(%er, %er : tensor<32xf32>, tensor<32xf32>) {
  ^bb0(%sum: f32, %sq: f32, %mx: f32, %o1: f32, %o2: f32):
    %mean = arith.mulf %sum, %inv : f32
    %ex2 = arith.mulf %sq, %inv : f32
    %m2 = arith.mulf %mean, %mean : f32
    %var = arith.subf %ex2, %m2 : f32
    %ve = arith.addf %var, %eps : f32
    %r = math.rsqrt %ve : f32
    %rm = arith.divf %r, %mx : f32
    linalg.yield %mean, %rm : f32, f32
  } -> (tensor<32xf32>, tensor<32xf32>)
  %e = tensor.empty() : tensor<32x2048xf32>
  %y = linalg.generic {indexing_maps = [#m2, #m1, #m1, #m2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %stats#0, %stats#1 : tensor<32x2048xf32>, tensor<32xf32>, tensor<32xf32>) outs(%e : tensor<32x2048xf32>) {
  ^bb0(%a: f32, %m: f32, %r: f32, %o: f32):
    %c = arith.subf %a, %m : f32
    %n = arith.mulf %c, %r : f32
    linalg.yield %n : f32
  } -> tensor<32x2048xf32>
  return %y, %stats#0 : tensor<32x2048xf32>, tensor<32xf32>
}

// -----

// A GroupNorm as torch-mlir writes it: the input expand_shape'd into groups (read through the
// view: its map composes to one that reads the lanes contiguously, so vector loads of the
// input itself), rows = the 4 groups of 4 x 16 x 16, whose statistics the rows task computes;
// the normalisation and the affine after the collapse_shape fuse into one elementwise task that
// writes the output itself (lower-to-gpu-views.mlir): no normalised tensor in scratch.

// CHECK-LABEL: func.func @groupnorm
// CHECK:         gpu.launch_func @groupnorm_kernels::@groupnorm_k0 blocks in (%c4, %c4, %c1)
// CHECK:         gpu.launch_func @groupnorm_kernels::@groupnorm_k0_s1 blocks in (%c4, %c4, %c1)
// CHECK:         gpu.launch_func @groupnorm_kernels::@groupnorm_k0_s2 blocks in (%c4, %c4, %c1)
// CHECK:         gpu.launch_func @groupnorm_kernels::@groupnorm_k1
// CHECK-NOT:     gpu.launch_func
// CHECK:         gpu.func @groupnorm_k0(%[[X:.*]]: memref<2x8x16x16xf32>, %{{.*}}: memref<2x2xf32>, %{{.*}}: memref<2x2xf32>, %{{.*}}: memref<4x4xf32>, %{{.*}}: memref<4x4xf32>)
// CHECK-SAME:      evo.family = #evo.family<rows>
// CHECK-NOT:       memref.load %[[X]]
// CHECK:           vector.load %[[X]]{{.*}} {alignment = 16 : i64} : memref<2x8x16x16xf32>, vector<4xf32>
// CHECK-NOT:       memref.load %[[X]]
// CHECK:           gpu.return
// CHECK:         gpu.func @groupnorm_k1(%{{.*}}: memref<2x8x16x16xf32>, %{{.*}}: memref<2x2xf32>, %{{.*}}: memref<2x2xf32>, %{{.*}}: memref<8xf32>, %{{.*}}: memref<8xf32>, %{{.*}}: memref<2x8x16x16xf32>)
// CHECK-SAME:      evo.family = #evo.family<elementwise>
// CHECK:           math.rsqrt
#g5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#g2 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1)>
#gv = affine_map<(d0, d1) -> (d0, d1)>
#g4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#gc = affine_map<(d0, d1, d2, d3) -> (d1)>
func.func @groupnorm(%arg0: tensor<2x8x16x16xf32>, %arg1: tensor<8xf32>, %arg2: tensor<8xf32>) -> tensor<2x8x16x16xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %cst_0 = arith.constant 1024.0 : f32
  %cst_1 = arith.constant 9.99999974E-6 : f32
  %expanded = tensor.expand_shape %arg0 [[0], [1, 2], [3], [4]] output_shape [2, 2, 4, 16, 16] : tensor<2x8x16x16xf32> into tensor<2x2x4x16x16xf32>
  %0 = tensor.empty() : tensor<2x2xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<2x2xf32>) -> tensor<2x2xf32>
  %2 = linalg.generic {indexing_maps = [#g5, #g2], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%expanded : tensor<2x2x4x16x16xf32>) outs(%1 : tensor<2x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %9 = arith.addf %in, %out : f32
    linalg.yield %9 : f32
  } -> tensor<2x2xf32>
  %3 = linalg.generic {indexing_maps = [#gv, #gv], iterator_types = ["parallel", "parallel"]} ins(%2 : tensor<2x2xf32>) outs(%0 : tensor<2x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %9 = arith.divf %in, %cst_0 : f32
    linalg.yield %9 : f32
  } -> tensor<2x2xf32>
  %4 = linalg.generic {indexing_maps = [#g5, #g2, #g2], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%expanded, %3 : tensor<2x2x4x16x16xf32>, tensor<2x2xf32>) outs(%1 : tensor<2x2xf32>) {
  ^bb0(%in: f32, %in_2: f32, %out: f32):
    %9 = arith.subf %in, %in_2 : f32
    %10 = arith.mulf %9, %9 : f32
    %11 = arith.addf %10, %out : f32
    linalg.yield %11 : f32
  } -> tensor<2x2xf32>
  %5 = tensor.empty() : tensor<2x2x4x16x16xf32>
  %6 = linalg.generic {indexing_maps = [#g5, #g2, #g2, #g5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%expanded, %3, %4 : tensor<2x2x4x16x16xf32>, tensor<2x2xf32>, tensor<2x2xf32>) outs(%5 : tensor<2x2x4x16x16xf32>) {
  ^bb0(%in: f32, %in_2: f32, %in_3: f32, %out: f32):
    %9 = arith.subf %in, %in_2 : f32
    %10 = arith.divf %in_3, %cst_0 : f32
    %11 = arith.addf %10, %cst_1 : f32
    %12 = math.rsqrt %11 : f32
    %13 = arith.mulf %9, %12 : f32
    linalg.yield %13 : f32
  } -> tensor<2x2x4x16x16xf32>
  %collapsed = tensor.collapse_shape %6 [[0], [1, 2], [3], [4]] : tensor<2x2x4x16x16xf32> into tensor<2x8x16x16xf32>
  %7 = tensor.empty() : tensor<2x8x16x16xf32>
  %8 = linalg.generic {indexing_maps = [#g4, #gc, #gc, #g4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%collapsed, %arg1, %arg2 : tensor<2x8x16x16xf32>, tensor<8xf32>, tensor<8xf32>) outs(%7 : tensor<2x8x16x16xf32>) {
  ^bb0(%in: f32, %in_2: f32, %in_3: f32, %out: f32):
    %9 = arith.mulf %in, %in_2 : f32
    %10 = arith.addf %9, %in_3 : f32
    linalg.yield %10 : f32
  } -> tensor<2x8x16x16xf32>
  return %8 : tensor<2x8x16x16xf32>
}

// -----

// Refusals: the slices must split the row's vector chunks evenly (100 columns are 25 chunks
// of 4: not 4 slices, not 2).

// CACHE-ERR:  error: row_split=2 does not divide the 25 chunks of vector_width=4 elements of the row (100)
// expected-error @below {{does not divide the}}
func.func @odd(%x: tensor<8x100xf32>) -> tensor<8x100xf32> {
  %e = tensor.empty() : tensor<8x100xf32>
  %s = linalg.softmax dimension(1) ins(%x : tensor<8x100xf32>) outs(%e : tensor<8x100xf32>) -> tensor<8x100xf32>
  return %s : tensor<8x100xf32>
}
