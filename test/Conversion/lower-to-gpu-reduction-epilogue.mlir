// Reductions with fused epilogues (evo-lower-to-gpu): elementwise ops on a reduction's result,
// where the result has no other use and each op reads it at the output point, are one task and
// one kernel with the reduction (as for contractions, lower-to-gpu-epilogue.mlir): an average
// pooling's division by the window, a norm's square root. The value is finished and stored
// once (by the combine kernel of a split reduction), with no scratch buffer for the sum.
// A reduction or a consumer with its own knobs, or a result used twice, keeps its own kernel.

// RUN: evo-opt %s -split-input-file -evo-lower-to-gpu | FileCheck %s
// RUN: evo-opt %s -split-input-file -evo-lower-to-gpu="reduction-strategy=warp split=4" | FileCheck %s --check-prefix=SPLIT

// Average pooling: the window sum, then / 4 before the store; one launch, no scratch.

// CHECK-LABEL: func.func @avgpool1d
// CHECK-NOT:     gpu.alloc
// CHECK:         gpu.launch_func @avgpool1d_kernels::@avgpool1d_k0
// CHECK-NOT:     gpu.launch_func
// CHECK:         tasks = [#evo.task<name = "avgpool1d_t0", family = reduction, source = "{{.*}}linalg.pooling_ncw_sum{{.*}}linalg.generic{{.*}}arith.divf
// CHECK:         gpu.func @avgpool1d_k0(%[[X:.*]]: memref<2x3x16xf32>, %[[Y:.*]]: memref<2x3x7xf32>)
// CHECK-SAME:      evo.family = #evo.family<reduction>
// CHECK:           %[[SUM:.*]] = scf.for
// CHECK:             memref.load %[[X]]
// CHECK:           %[[INIT:.*]] = arith.addf %[[SUM]], %{{.*}} : f32
// CHECK:           %[[AVG:.*]] = arith.divf %[[INIT]], %{{.*}} : f32
// CHECK:           memref.store %[[AVG]], %[[Y]]
// CHECK-NOT:     gpu.func
func.func @avgpool1d(%x: tensor<2x3x16xf32>) -> tensor<2x3x7xf32> {
  %zero = arith.constant 0.0 : f32
  %four = arith.constant 4.0 : f32
  %e = tensor.empty() : tensor<2x3x7xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3x7xf32>) -> tensor<2x3x7xf32>
  %w = tensor.empty() : tensor<4xf32>
  %s = linalg.pooling_ncw_sum {dilations = dense<1> : vector<1xi64>, strides = dense<2> : vector<1xi64>}
      ins(%x, %w : tensor<2x3x16xf32>, tensor<4xf32>) outs(%acc : tensor<2x3x7xf32>) -> tensor<2x3x7xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(a, b, c) -> (a, b, c)>, affine_map<(a, b, c) -> (a, b, c)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x3x7xf32>) outs(%e : tensor<2x3x7xf32>) {
  ^bb0(%v: f32, %o: f32):
    %d = arith.divf %v, %four : f32
    linalg.yield %d : f32
  } -> tensor<2x3x7xf32>
  return %y : tensor<2x3x7xf32>
}

// -----

// A 0-d sum of squares and its square root. Split over 4 blocks, the combine kernel finishes
// the value: the partials kernel stores no result, the combine applies the root.

// CHECK-LABEL: func.func @frobenius
// CHECK-NOT:     gpu.alloc
// CHECK:         gpu.launch_func @frobenius_kernels::@frobenius_k0
// CHECK-NOT:     gpu.launch_func
// CHECK:         gpu.func @frobenius_k0
// CHECK-SAME:      evo.family = #evo.family<reduction>
// CHECK:           math.sqrt
// CHECK:           memref.store
// SPLIT-LABEL: func.func @frobenius
// SPLIT:         gpu.launch_func @frobenius_kernels::@frobenius_k0 blocks in (%{{.*}}, %c4, %{{.*}})
// SPLIT:         gpu.launch_func @frobenius_kernels::@frobenius_k0_combine
// SPLIT:         gpu.func @frobenius_k0(
// SPLIT-NOT:       math.sqrt
// SPLIT:         gpu.func @frobenius_k0_combine(%{{.*}}: memref<64x64xf32>, %[[OUT:.*]]: memref<f32>, %{{.*}}: memref<4x1xf32>)
// SPLIT:           %[[R:.*]] = math.sqrt
// SPLIT:           memref.store %[[R]], %[[OUT]][]
func.func @frobenius(%x: tensor<64x64xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>],
                       iterator_types = ["reduction", "reduction"]}
      ins(%x : tensor<64x64xf32>) outs(%acc : tensor<f32>) {
  ^bb0(%v: f32, %o: f32):
    %q = arith.mulf %v, %v : f32
    %a = arith.addf %q, %o : f32
    linalg.yield %a : f32
  } -> tensor<f32>
  %y = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []}
      ins(%s : tensor<f32>) outs(%e : tensor<f32>) {
  ^bb0(%v: f32, %o: f32):
    %r = math.sqrt %v : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %y : tensor<f32>
}

// -----

// The sum is also returned: two tasks, the sum through a buffer.

// CHECK-LABEL: func.func @avgpool1d_two_uses
// CHECK:         gpu.launch_func @avgpool1d_two_uses_kernels::@avgpool1d_two_uses_k0
// CHECK:         gpu.launch_func @avgpool1d_two_uses_kernels::@avgpool1d_two_uses_k1
// CHECK:         gpu.func @avgpool1d_two_uses_k0
// CHECK-SAME:      evo.family = #evo.family<reduction>
// CHECK-NOT:       arith.divf
// CHECK:         gpu.func @avgpool1d_two_uses_k1
// CHECK-SAME:      evo.family = #evo.family<elementwise>
// CHECK:           arith.divf
func.func @avgpool1d_two_uses(%x: tensor<2x3x16xf32>) -> (tensor<2x3x7xf32>, tensor<2x3x7xf32>) {
  %zero = arith.constant 0.0 : f32
  %four = arith.constant 4.0 : f32
  %e = tensor.empty() : tensor<2x3x7xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3x7xf32>) -> tensor<2x3x7xf32>
  %w = tensor.empty() : tensor<4xf32>
  %s = linalg.pooling_ncw_sum {dilations = dense<1> : vector<1xi64>, strides = dense<2> : vector<1xi64>}
      ins(%x, %w : tensor<2x3x16xf32>, tensor<4xf32>) outs(%acc : tensor<2x3x7xf32>) -> tensor<2x3x7xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(a, b, c) -> (a, b, c)>, affine_map<(a, b, c) -> (a, b, c)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x3x7xf32>) outs(%e : tensor<2x3x7xf32>) {
  ^bb0(%v: f32, %o: f32):
    %d = arith.divf %v, %four : f32
    linalg.yield %d : f32
  } -> tensor<2x3x7xf32>
  return %s, %y : tensor<2x3x7xf32>, tensor<2x3x7xf32>
}

// -----

// The consumer carries its own knobs: its own kernel, with them.

// CHECK-LABEL: func.func @consumer_own_knobs
// CHECK:         gpu.alloc
// CHECK:         gpu.launch_func @consumer_own_knobs_kernels::@consumer_own_knobs_k0
// CHECK:         gpu.launch_func @consumer_own_knobs_kernels::@consumer_own_knobs_k1 {{.*}} threads in (%c64, %c1, %c1)
func.func @consumer_own_knobs(%x: tensor<64x32xf32>) -> tensor<32xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 64.0 : f32
  %e = tensor.empty() : tensor<32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<32xf32>) -> tensor<32xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (j, i)>, affine_map<(i, j) -> (i)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<64x32xf32>) outs(%acc : tensor<32xf32>) {
  ^bb0(%v: f32, %o: f32):
    %a = arith.addf %v, %o : f32
    linalg.yield %a : f32
  } -> tensor<32xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"], evo.knobs = {block_size = 64}}
      ins(%s : tensor<32xf32>) outs(%e : tensor<32xf32>) {
  ^bb0(%v: f32, %o: f32):
    %d = arith.divf %v, %n : f32
    linalg.yield %d : f32
  } -> tensor<32xf32>
  return %y : tensor<32xf32>
}

// -----

// The reduction carries its own knobs (a split): its own kernels with them, the division after.

// CHECK-LABEL: func.func @reduction_own_knobs
// CHECK:         gpu.launch_func @reduction_own_knobs_kernels::@reduction_own_knobs_k0 blocks in (%{{.*}}, %c2, %{{.*}})
// CHECK:         gpu.launch_func @reduction_own_knobs_kernels::@reduction_own_knobs_k0_combine
// CHECK:         gpu.launch_func @reduction_own_knobs_kernels::@reduction_own_knobs_k1
// CHECK:         gpu.func @reduction_own_knobs_k1
// CHECK-SAME:      evo.family = #evo.family<elementwise>
// CHECK:           arith.divf
func.func @reduction_own_knobs(%x: tensor<64x32xf32>) -> tensor<32xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 64.0 : f32
  %e = tensor.empty() : tensor<32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<32xf32>) -> tensor<32xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (j, i)>, affine_map<(i, j) -> (i)>],
                       iterator_types = ["parallel", "reduction"], evo.knobs = {reduction = "warp", split = 2}}
      ins(%x : tensor<64x32xf32>) outs(%acc : tensor<32xf32>) {
  ^bb0(%v: f32, %o: f32):
    %a = arith.addf %v, %o : f32
    linalg.yield %a : f32
  } -> tensor<32xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      ins(%s : tensor<32xf32>) outs(%e : tensor<32xf32>) {
  ^bb0(%v: f32, %o: f32):
    %d = arith.divf %v, %n : f32
    linalg.yield %d : f32
  } -> tensor<32xf32>
  return %y : tensor<32xf32>
}
