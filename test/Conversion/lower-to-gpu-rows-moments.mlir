// A row program's sum, its mean and the sum of squared distances to that mean (the variance of
// instance, group and layer norms) over rows of 64 KiB or more: both sums are folded in one pass
// over the row (Welford per thread, Chan's merge across threads), then the output pass. Two
// reads of x instead of three. Short rows, long chains per thread (over 1024 steps) and other
// divisors keep the two passes (cache_row needs none: its passes read registers).
// RUN: evo-opt %s -split-input-file -evo-lower-to-gpu="reduction-strategy=block block-size=1024 vector-width=4" | FileCheck %s
// RUN: evo-opt %s -split-input-file -evo-lower-to-gpu="reduction-strategy=warp vector-width=4" | FileCheck %s --check-prefix=WARP

// CHECK-LABEL: func.func @instnorm_long
// CHECK:         gpu.func @instnorm_long_k0
// One pass for both statistics: a count and (mean, M2) per lane of the vector, one reciprocal
// of the count per step.
// CHECK:           scf.for %{{.*}} = %thread_id_x to %c16384 step %c1024 iter_args({{.*}}) -> (f32, f32, f32, f32, f32, f32, f32, f32, f32)
// CHECK:             vector.load
// CHECK:             arith.divf %{{.*}}, %[[COUNT:.*]] : f32
// CHECK:           gpu.shuffle xor
// CHECK:           gpu.barrier
// The output pass; no third loop over the row.
// CHECK:           scf.for %{{.*}} = %thread_id_x to %c16384 step %c1024 {
// CHECK-NOT:       scf.for
// CHECK:           gpu.return
// WARP-LABEL: func.func @instnorm_long
// WARP:         scf.for %{{.*}} iter_args({{.*}}) -> (f32, f32, f32, f32, f32, f32, f32, f32, f32)
// WARP-COUNT-10: gpu.shuffle xor
// WARP:         scf.for
// WARP-NOT:     scf.for
// WARP:         gpu.return
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
#map2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @instnorm_long(%arg0: tensor<2x3x256x256xf32>) -> tensor<2x3x256x256xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %n = arith.constant 65536.0 : f32
  %eps = arith.constant 9.99999974E-6 : f32
  %0 = tensor.empty() : tensor<2x3xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%arg0 : tensor<2x3x256x256xf32>) outs(%1 : tensor<2x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %7 = arith.addf %in, %out : f32
    linalg.yield %7 : f32
  } -> tensor<2x3xf32>
  %3 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel"]} ins(%2 : tensor<2x3xf32>) outs(%0 : tensor<2x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %7 = arith.divf %in, %n : f32
    linalg.yield %7 : f32
  } -> tensor<2x3xf32>
  %4 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%arg0, %3 : tensor<2x3x256x256xf32>, tensor<2x3xf32>) outs(%1 : tensor<2x3xf32>) {
  ^bb0(%in: f32, %in_2: f32, %out: f32):
    %7 = arith.subf %in, %in_2 : f32
    %8 = arith.mulf %7, %7 : f32
    %9 = arith.addf %8, %out : f32
    linalg.yield %9 : f32
  } -> tensor<2x3xf32>
  %5 = tensor.empty() : tensor<2x3x256x256xf32>
  %6 = linalg.generic {indexing_maps = [#map, #map1, #map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0, %3, %4 : tensor<2x3x256x256xf32>, tensor<2x3xf32>, tensor<2x3xf32>) outs(%5 : tensor<2x3x256x256xf32>) {
  ^bb0(%in: f32, %in_2: f32, %in_3: f32, %out: f32):
    %7 = arith.subf %in, %in_2 : f32
    %8 = arith.divf %in_3, %n : f32
    %9 = arith.addf %8, %eps : f32
    %10 = math.rsqrt %9 : f32
    %11 = arith.mulf %7, %10 : f32
    linalg.yield %11 : f32
  } -> tensor<2x3x256x256xf32>
  return %6 : tensor<2x3x256x256xf32>
}

// -----

// The mean as a product with 1 / cols (exact for a power of two), and a row of 4 KiB: read
// three times (the second and third reads hit the caches; Welford's division per step would
// cost more than they do).
// CHECK-LABEL: func.func @layernorm_short
// CHECK:         gpu.func @layernorm_short_k0
// CHECK:           scf.for %{{.*}} iter_args({{.*}}) -> (f32, f32, f32, f32)
// CHECK:           scf.for %{{.*}} iter_args({{.*}}) -> (f32, f32, f32, f32)
// CHECK:           scf.for
// CHECK:           gpu.return
#m2 = affine_map<(r, c) -> (r, c)>
#r = affine_map<(r, c) -> (r)>
func.func @layernorm_short(%x: tensor<64x1024xf32>) -> tensor<64x1024xf32> {
  %zero = arith.constant 0.0 : f32
  %inv = arith.constant 9.765625E-4 : f32
  %eps = arith.constant 1.0e-5 : f32
  %e = tensor.empty() : tensor<64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %s = linalg.generic {indexing_maps = [#m2, #r], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<64x1024xf32>) outs(%f : tensor<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.addf %a, %o : f32
    linalg.yield %t : f32
  } -> tensor<64xf32>
  %v = linalg.generic {indexing_maps = [#m2, #r, #r], iterator_types = ["parallel", "reduction"]} ins(%x, %s : tensor<64x1024xf32>, tensor<64xf32>) outs(%f : tensor<64xf32>) {
  ^bb0(%a: f32, %sum: f32, %o: f32):
    %m = arith.mulf %sum, %inv : f32
    %d = arith.subf %a, %m : f32
    %q = arith.mulf %d, %d : f32
    %t = arith.addf %q, %o : f32
    linalg.yield %t : f32
  } -> tensor<64xf32>
  %e2 = tensor.empty() : tensor<64x1024xf32>
  %y = linalg.generic {indexing_maps = [#m2, #r, #r, #m2], iterator_types = ["parallel", "parallel"]} ins(%x, %s, %v : tensor<64x1024xf32>, tensor<64xf32>, tensor<64xf32>) outs(%e2 : tensor<64x1024xf32>) {
  ^bb0(%a: f32, %sum: f32, %var: f32, %o: f32):
    %m = arith.mulf %sum, %inv : f32
    %d = arith.subf %a, %m : f32
    %vm = arith.mulf %var, %inv : f32
    %ve = arith.addf %vm, %eps : f32
    %r = math.rsqrt %ve : f32
    %y = arith.mulf %d, %r : f32
    linalg.yield %y : f32
  } -> tensor<64x1024xf32>
  return %y : tensor<64x1024xf32>
}

// -----

// Distances to something other than the mean (sum / (cols - 1)): two passes, as written.
// CHECK-LABEL: func.func @not_the_mean
// CHECK:         gpu.func @not_the_mean_k0
// CHECK:           scf.for %{{.*}} iter_args({{.*}}) -> (f32, f32, f32, f32)
// CHECK:           scf.for %{{.*}} iter_args({{.*}}) -> (f32, f32, f32, f32)
#m2 = affine_map<(r, c) -> (r, c)>
#r = affine_map<(r, c) -> (r)>
func.func @not_the_mean(%x: tensor<8x65536xf32>) -> tensor<8xf32> {
  %zero = arith.constant 0.0 : f32
  %n1 = arith.constant 65535.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %s = linalg.generic {indexing_maps = [#m2, #r], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<8x65536xf32>) outs(%f : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.addf %a, %o : f32
    linalg.yield %t : f32
  } -> tensor<8xf32>
  %v = linalg.generic {indexing_maps = [#m2, #r, #r], iterator_types = ["parallel", "reduction"]} ins(%x, %s : tensor<8x65536xf32>, tensor<8xf32>) outs(%f : tensor<8xf32>) {
  ^bb0(%a: f32, %sum: f32, %o: f32):
    %m = arith.divf %sum, %n1 : f32
    %d = arith.subf %a, %m : f32
    %q = arith.mulf %d, %d : f32
    %t = arith.addf %q, %o : f32
    linalg.yield %t : f32
  } -> tensor<8xf32>
  return %v : tensor<8xf32>
}
