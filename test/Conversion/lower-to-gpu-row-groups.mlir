// Row programs over several trailing dimensions (a LayerNorm over [C, H, W], an InstanceNorm
// over [H, W]) and row groups (the row-wise ops of a function that is not a row program as a
// whole, e.g. cross-entropy's per-row part before its mean over the rows): docs/lowering.md,
// "Row programs".
// RUN: evo-opt %s -split-input-file -evo-lower-to-gpu | FileCheck %s

// LayerNorm over the last three dimensions: one rows task and one kernel; a row is the 512
// elements of [4, 8, 16], its linear column index split into the three indices, and the weight
// and bias [4, 8, 16] are read as column vectors at them.
// CHECK-LABEL: func.func @layernorm3
// CHECK-COUNT-1: gpu.launch_func
// CHECK-NOT:     gpu.launch_func
// CHECK:         tasks = [#evo.task<name = "layernorm3_t0", family = rows,
// CHECK:         gpu.func @layernorm3_k0(%[[X:.*]]: memref<8x4x8x16xf32>, %[[W:.*]]: memref<4x8x16xf32>, %[[B:.*]]: memref<4x8x16xf32>, %[[Y:.*]]: memref<8x4x8x16xf32>)
// CHECK-SAME:      reduction = thread
// CHECK:           scf.for %{{.*}} = %c0 to %c512 step %c1 iter_args
// CHECK:           scf.for %{{.*}} = %c0 to %c512 step %c1 iter_args
// CHECK:           scf.for %[[J:.*]] = %c0 to %c512 step %c1 {
// CHECK-DAG:         %[[I3:.*]] = arith.remui %[[J]], %c16
// CHECK-DAG:         %[[Q:.*]] = arith.divui %[[J]], %c16
// CHECK-DAG:         %[[I2:.*]] = arith.remui %[[Q]], %c8
// CHECK-DAG:         %[[I1:.*]] = arith.divui %[[Q]], %c8
// CHECK:             memref.load %[[X]][%{{.*}}, %[[I1]], %[[I2]], %[[I3]]]
// CHECK:             memref.load %[[W]][%[[I1]], %[[I2]], %[[I3]]]
// CHECK:             memref.load %[[B]][%[[I1]], %[[I2]], %[[I3]]]
// CHECK:             memref.store %{{.*}}, %[[Y]][%{{.*}}, %[[I1]], %[[I2]], %[[I3]]]
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d0)>
#map2 = affine_map<(d0) -> (d0)>
#map3 = affine_map<(d0, d1, d2, d3) -> (d1, d2, d3)>
func.func @layernorm3(%x: tensor<8x4x8x16xf32>, %w: tensor<4x8x16xf32>, %b: tensor<4x8x16xf32>) -> tensor<8x4x8x16xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %n = arith.constant 512.0 : f32
  %eps = arith.constant 9.99999974E-6 : f32
  %0 = tensor.empty() : tensor<8xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<8xf32>) -> tensor<8xf32>
  %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction", "reduction", "reduction"]} ins(%x : tensor<8x4x8x16xf32>) outs(%1 : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %9 = arith.addf %in, %out : f32
    linalg.yield %9 : f32
  } -> tensor<8xf32>
  %3 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel"]} ins(%2 : tensor<8xf32>) outs(%0 : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %9 = arith.divf %in, %n : f32
    linalg.yield %9 : f32
  } -> tensor<8xf32>
  %4 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "reduction", "reduction", "reduction"]} ins(%x, %3 : tensor<8x4x8x16xf32>, tensor<8xf32>) outs(%1 : tensor<8xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %9 = arith.subf %in, %m : f32
    %10 = arith.mulf %9, %9 : f32
    %11 = arith.addf %10, %out : f32
    linalg.yield %11 : f32
  } -> tensor<8xf32>
  %5 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel"]} ins(%4 : tensor<8xf32>) outs(%0 : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %9 = arith.divf %in, %n : f32
    %10 = arith.addf %9, %eps : f32
    %11 = math.rsqrt %10 : f32
    linalg.yield %11 : f32
  } -> tensor<8xf32>
  %6 = tensor.empty() : tensor<8x4x8x16xf32>
  %7 = linalg.generic {indexing_maps = [#map, #map1, #map1, #map3, #map3, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %3, %5, %w, %b : tensor<8x4x8x16xf32>, tensor<8xf32>, tensor<8xf32>, tensor<4x8x16xf32>, tensor<4x8x16xf32>) outs(%6 : tensor<8x4x8x16xf32>) {
  ^bb0(%in: f32, %m: f32, %r: f32, %ww: f32, %bb: f32, %out: f32):
    %9 = arith.subf %in, %m : f32
    %10 = arith.mulf %9, %r : f32
    %11 = arith.mulf %10, %ww : f32
    %12 = arith.addf %11, %bb : f32
    linalg.yield %12 : f32
  } -> tensor<8x4x8x16xf32>
  return %7 : tensor<8x4x8x16xf32>
}

// -----

// InstanceNorm: rows of [H, W] per (sample, channel).
// CHECK-LABEL: func.func @instnorm
// CHECK-COUNT-1: gpu.launch_func
// CHECK-NOT:     gpu.launch_func
// CHECK:         gpu.func @instnorm_k0(%{{.*}}: memref<2x3x16x32xf32>, %{{.*}}: memref<2x3x16x32xf32>)
// CHECK-SAME:      evo.family = #evo.family<rows>
// CHECK:           scf.for %{{.*}} = %c0 to %c512 step %c1 iter_args
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
#map2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @instnorm(%arg0: tensor<2x3x16x32xf32>) -> tensor<2x3x16x32xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %cst_0 = arith.constant 512.0 : f32
  %cst_1 = arith.constant 9.99999974E-6 : f32
  %0 = tensor.empty() : tensor<2x3xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%arg0 : tensor<2x3x16x32xf32>) outs(%1 : tensor<2x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %7 = arith.addf %in, %out : f32
    linalg.yield %7 : f32
  } -> tensor<2x3xf32>
  %3 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel"]} ins(%2 : tensor<2x3xf32>) outs(%0 : tensor<2x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %7 = arith.divf %in, %cst_0 : f32
    linalg.yield %7 : f32
  } -> tensor<2x3xf32>
  %4 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%arg0, %3 : tensor<2x3x16x32xf32>, tensor<2x3xf32>) outs(%1 : tensor<2x3xf32>) {
  ^bb0(%in: f32, %in_2: f32, %out: f32):
    %7 = arith.subf %in, %in_2 : f32
    %8 = arith.mulf %7, %7 : f32
    %9 = arith.addf %8, %out : f32
    linalg.yield %9 : f32
  } -> tensor<2x3xf32>
  %5 = tensor.empty() : tensor<2x3x16x32xf32>
  %6 = linalg.generic {indexing_maps = [#map, #map1, #map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0, %3, %4 : tensor<2x3x16x32xf32>, tensor<2x3xf32>, tensor<2x3xf32>) outs(%5 : tensor<2x3x16x32xf32>) {
  ^bb0(%in: f32, %in_2: f32, %in_3: f32, %out: f32):
    %7 = arith.subf %in, %in_2 : f32
    %8 = arith.divf %in_3, %cst_0 : f32
    %9 = arith.addf %8, %cst_1 : f32
    %10 = math.rsqrt %9 : f32
    %11 = arith.mulf %7, %10 : f32
    linalg.yield %11 : f32
  } -> tensor<2x3x16x32xf32>
  return %6 : tensor<2x3x16x32xf32>
}

// -----

// Rows of more than 65536 elements: the naive schedule is a block per row.
// CHECK-LABEL: gpu.func @long_rows_k0
// CHECK-SAME:    evo.family = #evo.family<rows>, evo.knobs = #evo.knobs<block_size = 256, vector_width = 1, reduction = block, cache_row = false>
// CHECK:         scf.for %{{.*}} = %thread_id_x to %c131072 step %c256 iter_args
// CHECK:         gpu.shuffle
func.func @long_rows(%x: tensor<3x2x256x256xf32>) -> tensor<3x2x256x256xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<3xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<3xf32>) -> tensor<3xf32>
  %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0)>], iterator_types = ["parallel", "reduction", "reduction", "reduction"]} ins(%x : tensor<3x2x256x256xf32>) outs(%1 : tensor<3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %in : f32
    %9 = arith.addf %m, %out : f32
    linalg.yield %9 : f32
  } -> tensor<3xf32>
  %6 = tensor.empty() : tensor<3x2x256x256xf32>
  %7 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %2 : tensor<3x2x256x256xf32>, tensor<3xf32>) outs(%6 : tensor<3x2x256x256xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %r = math.rsqrt %s : f32
    %9 = arith.mulf %in, %r : f32
    linalg.yield %9 : f32
  } -> tensor<3x2x256x256xf32>
  return %7 : tensor<3x2x256x256xf32>
}

// -----

// Cross-entropy with class indices: the function ends in a mean over the rows, so it is no row
// program as a whole; its row-wise part (max, sum of exponentials, the target's logit picked
// with linalg.index) is one rows task with three row-vector results, then the mean's sum is a
// task of its own, the division its epilogue.
// CHECK-LABEL: func.func @cross_entropy
// CHECK-COUNT-2: gpu.launch_func
// CHECK-NOT:     gpu.launch_func
// CHECK:         tasks = [#evo.task<name = "cross_entropy_t0", family = rows, {{.*}}>, #evo.task<name = "cross_entropy_t1", family = reduction, source = "{{.*}}arith.divf{{.*}}>]
// CHECK:         gpu.func @cross_entropy_k0(%[[X:.*]]: memref<64x128xf32>, %[[T:.*]]: memref<64xi64>, %{{.*}}: memref<64xf32>, %{{.*}}: memref<64xf32>, %{{.*}}: memref<64xf32>)
// CHECK:           %[[LABEL:.*]] = memref.load %[[T]][%[[ROW:.*]]] : memref<64xi64>
// CHECK:           arith.maximumf
// CHECK:           math.exp
// CHECK:           scf.for %[[J:.*]] = %c0 to %c128
// CHECK:             %[[JI:.*]] = arith.index_cast %[[J]] : index to i64
// CHECK:             arith.cmpi eq, %[[JI]], %[[LABEL]] : i64
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0)>
#mapv = affine_map<(d0) -> (d0)>
#mapv0 = affine_map<(d0) -> ()>
#map2 = affine_map<() -> ()>
func.func @cross_entropy(%arg0: tensor<64x128xf32>, %arg1: tensor<64xi64> {evo.range = [0, 127]}) -> tensor<f32> {
  %cst = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %cst_n = arith.constant 64.0 : f32
  %0 = tensor.empty() : tensor<64xf32>
  %1 = linalg.fill ins(%ninf : f32) outs(%0 : tensor<64xf32>) -> tensor<64xf32>
  %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<64x128xf32>) outs(%1 : tensor<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.maximumf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %z = linalg.fill ins(%cst : f32) outs(%0 : tensor<64xf32>) -> tensor<64xf32>
  %3 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "reduction"]} ins(%arg0, %2 : tensor<64x128xf32>, tensor<64xf32>) outs(%z : tensor<64xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %s0 = arith.subf %in, %in_0 : f32
    %s1 = math.exp %s0 : f32
    %s2 = arith.addf %s1, %out : f32
    linalg.yield %s2 : f32
  } -> tensor<64xf32>
  %4 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "reduction"]} ins(%arg0, %arg1 : tensor<64x128xf32>, tensor<64xi64>) outs(%z : tensor<64xf32>) {
  ^bb0(%in: f32, %in_0: i64, %out: f32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %s0 = arith.cmpi eq, %ji, %in_0 : i64
    %s1 = arith.select %s0, %in, %cst : f32
    %s2 = arith.addf %s1, %out : f32
    linalg.yield %s2 : f32
  } -> tensor<64xf32>
  %5 = linalg.generic {indexing_maps = [#mapv, #mapv, #mapv, #mapv], iterator_types = ["parallel"]} ins(%2, %3, %4 : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) outs(%0 : tensor<64xf32>) {
  ^bb0(%in: f32, %in_0: f32, %in_1: f32, %out: f32):
    %s0 = math.log %in_0 : f32
    %s1 = arith.addf %in, %s0 : f32
    %s2 = arith.subf %s1, %in_1 : f32
    linalg.yield %s2 : f32
  } -> tensor<64xf32>
  %6 = tensor.empty() : tensor<f32>
  %7 = linalg.fill ins(%cst : f32) outs(%6 : tensor<f32>) -> tensor<f32>
  %8 = linalg.generic {indexing_maps = [#mapv, #mapv0], iterator_types = ["reduction"]} ins(%5 : tensor<64xf32>) outs(%7 : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %9 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = []} ins(%8 : tensor<f32>) outs(%6 : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.divf %in, %cst_n : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %9 : tensor<f32>
}

// -----

// Negative: reductions over dimensions that are not trailing (d1 and d3) are no rows; two tasks.
// CHECK-LABEL: func.func @not_trailing
// CHECK-COUNT-2: gpu.launch_func
// CHECK:         tasks = [#evo.task<name = "not_trailing_t0", family = reduction, {{.*}}>, #evo.task<name = "not_trailing_t1", family = elementwise,
func.func @not_trailing(%x: tensor<8x4x8x16xf32>) -> tensor<8x4x8x16xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<8x8xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<8x8xf32>) -> tensor<8x8xf32>
  %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel", "reduction"]} ins(%x : tensor<8x4x8x16xf32>) outs(%1 : tensor<8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %9 = arith.addf %in, %out : f32
    linalg.yield %9 : f32
  } -> tensor<8x8xf32>
  %6 = tensor.empty() : tensor<8x4x8x16xf32>
  %7 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %2 : tensor<8x4x8x16xf32>, tensor<8x8xf32>) outs(%6 : tensor<8x4x8x16xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %9 = arith.subf %in, %m : f32
    linalg.yield %9 : f32
  } -> tensor<8x4x8x16xf32>
  return %7 : tensor<8x4x8x16xf32>
}

// -----

// A weight read at (d1, d3) is no column vector of the [4, 8, 16] row, but an argument: it is
// loaded through its map, and the whole LayerNorm is still one rows kernel.
// CHECK-LABEL: func.func @ln_wcols
// CHECK-COUNT-1: gpu.launch_func
// CHECK-NOT:     gpu.launch_func
// CHECK:         tasks = [#evo.task<name = "ln_wcols_t0", family = rows,
// CHECK:         gpu.func @ln_wcols_k0(%{{.*}}: memref<8x4x8x16xf32>, %[[W:[a-z0-9]+]]: memref<4x16xf32>,
// CHECK:           memref.load %[[W]][%[[I1:.*]], %[[I3:.*]]] : memref<4x16xf32>
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d0)>
#map2 = affine_map<(d0) -> (d0)>
#map3 = affine_map<(d0, d1, d2, d3) -> (d1, d3)>
func.func @ln_wcols(%x: tensor<8x4x8x16xf32>, %w: tensor<4x16xf32>, %b: tensor<4x16xf32>) -> tensor<8x4x8x16xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %n = arith.constant 512.0 : f32
  %eps = arith.constant 9.99999974E-6 : f32
  %0 = tensor.empty() : tensor<8xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<8xf32>) -> tensor<8xf32>
  %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction", "reduction", "reduction"]} ins(%x : tensor<8x4x8x16xf32>) outs(%1 : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %9 = arith.addf %in, %out : f32
    linalg.yield %9 : f32
  } -> tensor<8xf32>
  %3 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel"]} ins(%2 : tensor<8xf32>) outs(%0 : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %9 = arith.divf %in, %n : f32
    linalg.yield %9 : f32
  } -> tensor<8xf32>
  %4 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "reduction", "reduction", "reduction"]} ins(%x, %3 : tensor<8x4x8x16xf32>, tensor<8xf32>) outs(%1 : tensor<8xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %9 = arith.subf %in, %m : f32
    %10 = arith.mulf %9, %9 : f32
    %11 = arith.addf %10, %out : f32
    linalg.yield %11 : f32
  } -> tensor<8xf32>
  %5 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel"]} ins(%4 : tensor<8xf32>) outs(%0 : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %9 = arith.divf %in, %n : f32
    %10 = arith.addf %9, %eps : f32
    %11 = math.rsqrt %10 : f32
    linalg.yield %11 : f32
  } -> tensor<8xf32>
  %6 = tensor.empty() : tensor<8x4x8x16xf32>
  %7 = linalg.generic {indexing_maps = [#map, #map1, #map1, #map3, #map3, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %3, %5, %w, %b : tensor<8x4x8x16xf32>, tensor<8xf32>, tensor<8xf32>, tensor<4x16xf32>, tensor<4x16xf32>) outs(%6 : tensor<8x4x8x16xf32>) {
  ^bb0(%in: f32, %m: f32, %r: f32, %ww: f32, %bb: f32, %out: f32):
    %9 = arith.subf %in, %m : f32
    %10 = arith.mulf %9, %r : f32
    %11 = arith.mulf %10, %ww : f32
    %12 = arith.addf %11, %bb : f32
    linalg.yield %12 : f32
  } -> tensor<8x4x8x16xf32>
  return %7 : tensor<8x4x8x16xf32>
}

// -----

// An argument read through another map (InstanceNorm's per-channel weight [C] at c, for rows of
// [H, W] indexed by (n, c)) is loaded per element through its map: still one rows kernel.
// CHECK-LABEL: func.func @inorm_affine
// CHECK-COUNT-1: gpu.launch_func
// CHECK-NOT:     gpu.launch_func
// CHECK:         gpu.func @inorm_affine_k0(%[[X:[a-z0-9]+]]: memref<2x3x8x8xf32>, %[[W:[a-z0-9]+]]: memref<3xf32>, %{{.*}}: memref<2x3x8x8xf32>)
// CHECK-SAME:      evo.family = #evo.family<rows>
// CHECK:           scf.for
// CHECK:           scf.for
// CHECK:             memref.load %[[W]][%{{.*}}] : memref<3xf32>
func.func @inorm_affine(%x: tensor<2x3x8x8xf32>, %w: tensor<3xf32>) -> tensor<2x3x8x8xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<2x3xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%x : tensor<2x3x8x8xf32>) outs(%1 : tensor<2x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %7 = arith.addf %in, %out : f32
    linalg.yield %7 : f32
  } -> tensor<2x3xf32>
  %5 = tensor.empty() : tensor<2x3x8x8xf32>
  %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1)>, affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %2, %w : tensor<2x3x8x8xf32>, tensor<2x3xf32>, tensor<3xf32>) outs(%5 : tensor<2x3x8x8xf32>) {
  ^bb0(%in: f32, %s: f32, %ww: f32, %out: f32):
    %7 = arith.subf %in, %s : f32
    %8 = arith.mulf %7, %ww : f32
    linalg.yield %8 : f32
  } -> tensor<2x3x8x8xf32>
  return %6 : tensor<2x3x8x8xf32>
}

// -----

// Negative: a scan (a masked triangular reduction) followed by an elementwise op is no row
// group: the scan keeps its O(C) family, the exp its own task.
// CHECK-LABEL: func.func @scan_then_exp
// CHECK:         tasks = [#evo.task<name = "scan_then_exp_t0", family = scan, {{.*}}>, #evo.task<name = "scan_then_exp_t1", family = elementwise,
func.func @scan_then_exp(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8x64xf32>) -> tensor<8x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<8x64xf32>) outs(%acc : tensor<8x64xf32>) {
    ^bb0(%in: f32, %o: f32):
      %j = linalg.index 1 : index
      %k = linalg.index 2 : index
      %keep = arith.cmpi ule, %k, %j : index
      %v = arith.select %keep, %in, %zero : f32
      %s = arith.addf %o, %v : f32
      linalg.yield %s : f32
  } -> tensor<8x64xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%r : tensor<8x64xf32>) outs(%e : tensor<8x64xf32>) {
    ^bb0(%in: f32, %o: f32):
      %z = math.exp %in : f32
      linalg.yield %z : f32
  } -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}
