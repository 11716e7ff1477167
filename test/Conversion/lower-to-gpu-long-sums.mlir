// Long serial sums accumulate in two levels (blockedForLoop in KernelBuilder.cpp): where one
// thread folds more than 4096 steps, an outer loop over blocks of 1024 steps adds up inner sums
// that each start from the identity, so the naive baseline of a long f32 sum stays within the
// verifier's tolerance (l2norm, instancenorm and frobenius_norm stopped at their baselines).
// RUN: evo-opt %s -split-input-file -evo-lower-to-gpu | FileCheck %s

// The naive row sum of 65536 columns: one thread per row, 64 blocks of 1024 columns.
// CHECK-LABEL: gpu.func @row_sum_64k_k0
// CHECK-SAME:    reduction = thread
// CHECK:         %[[OUTER:.*]] = scf.for %[[B:.*]] = %c0 to %c65536 step %c1024 iter_args(%[[ACC:.*]] = %[[ZERO:.*]]) -> (f32)
// CHECK:           %[[NEXT:.*]] = arith.addi %[[B]], %c1024
// CHECK:           %[[END:.*]] = arith.minui %[[NEXT]], %c65536
// CHECK:           %[[INNER:.*]] = scf.for %[[J:.*]] = %[[B]] to %[[END]] step %c1 iter_args(%[[PART:.*]] = %[[ZERO]]) -> (f32)
// CHECK:             memref.load %{{.*}}[%{{.*}}, %[[J]]]
// CHECK:             arith.addf %[[PART]]
// CHECK:           arith.addf %[[ACC]], %[[INNER]]
func.func @row_sum_64k(%x: tensor<4x65536xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x65536xf32>) outs(%acc : tensor<4xf32>) {
    ^bb0(%a: f32, %o: f32):
      %r = arith.addf %o, %a : f32
      linalg.yield %r : f32
  } -> tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

// A short row (4096 steps per thread) keeps the one serial loop.
// CHECK-LABEL: gpu.func @row_sum_4k_k0
// CHECK:         scf.for %{{.*}} = %c0 to %c4096 step %c1 iter_args
// CHECK-NOT:     arith.minui
// CHECK-NOT:     scf.for
// CHECK:         gpu.return
func.func @row_sum_4k(%x: tensor<4x4096xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x4096xf32>) outs(%acc : tensor<4xf32>) {
    ^bb0(%a: f32, %o: f32):
      %r = arith.addf %o, %a : f32
      linalg.yield %r : f32
  } -> tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

// A whole-tensor sum of squares of 2^24 elements to a 0-d result: a block (naiveLongReduction)
// whose 256 threads each walk 65536 elements, in blocks of 1024 steps of 256.
// CHECK-LABEL: gpu.func @frobenius_squared_k0
// CHECK-SAME:    reduction = block
// CHECK:         scf.for %[[B:.*]] = %thread_id_x to %c16777216 step %c262144 iter_args
// CHECK:           arith.minui %{{.*}}, %c16777216
// CHECK:           scf.for %{{.*}} = %[[B]] to %{{.*}} step %c256 iter_args
// CHECK:             arith.mulf
// CHECK:           arith.addf
// CHECK:         gpu.shuffle
func.func @frobenius_squared(%x: tensor<4096x4096xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%x : tensor<4096x4096xf32>) outs(%acc : tensor<f32>) {
    ^bb0(%a: f32, %o: f32):
      %sq = arith.mulf %a, %a : f32
      %r = arith.addf %o, %sq : f32
      linalg.yield %r : f32
  } -> tensor<f32>
  return %s : tensor<f32>
}

// -----

// A row program (x / ||x||) over rows of 65535: the naive thread per row sums in blocks; the
// output pass stays one loop.
// CHECK-LABEL: gpu.func @l2norm_k0
// CHECK-SAME:    evo.family = #evo.family<rows>
// CHECK:         scf.for %[[B:.*]] = %c0 to %c65535 step %c1024 iter_args
// CHECK:           arith.minui %{{.*}}, %c65535
// CHECK:           scf.for %{{.*}} = %[[B]] to %{{.*}} step %c1 iter_args
// CHECK:         scf.for %{{.*}} = %c0 to %c65535 step %c1 {
// CHECK:           math.sqrt
func.func @l2norm(%x: tensor<2x65535xf32>) -> tensor<2x65535xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<2xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<2xf32>) -> tensor<2xf32>
  %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<2x65535xf32>) outs(%1 : tensor<2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %5 = arith.mulf %in, %in : f32
    %6 = arith.addf %5, %out : f32
    linalg.yield %6 : f32
  } -> tensor<2xf32>
  %3 = tensor.empty() : tensor<2x65535xf32>
  %4 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %2 : tensor<2x65535xf32>, tensor<2xf32>) outs(%3 : tensor<2x65535xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %5 = math.sqrt %in_0 : f32
    %6 = arith.divf %in, %5 : f32
    linalg.yield %6 : f32
  } -> tensor<2x65535xf32>
  return %4 : tensor<2x65535xf32>
}
