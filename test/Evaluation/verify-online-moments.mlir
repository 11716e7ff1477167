// evo-verify on the one-pass statistics of long rows (lower-to-gpu-rows-moments.mlir: the sum
// and the sum of squared distances to the mean folded together, Welford per thread and Chan's
// merge across threads): an InstanceNorm over 256 x 256 planes and a LayerNorm over rows of
// 131072 with an affine and the mean written as a product, each with a thread, a warp and a
// block of 1024 per row, vector widths 1 and 4. The verifier's trials include wide and large
// inputs, where a sum-of-squares shortcut (E[x^2] - E[x]^2) would lose the variance.
//
// REQUIRES: cuda
// RUN: evo-opt %s -split-input-file -verify-diagnostics --evo-pipeline="output-dir=- reduction-strategy=thread" \
// RUN:   --evo-verify="runs=5 warmup=1" -o /dev/null
// RUN: evo-opt %s -split-input-file -verify-diagnostics --evo-pipeline="output-dir=- reduction-strategy=warp vector-width=4" \
// RUN:   --evo-verify="runs=5 warmup=1" -o /dev/null
// RUN: evo-opt %s -split-input-file -verify-diagnostics --evo-pipeline="output-dir=- reduction-strategy=block block-size=1024 vector-width=4" \
// RUN:   --evo-verify="runs=5 warmup=1" -o /dev/null
// RUN: evo-opt %s -split-input-file -verify-diagnostics --evo-pipeline="output-dir=- reduction-strategy=block block-size=256" \
// RUN:   --evo-verify="runs=5 warmup=1" -o /dev/null

#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
#map2 = affine_map<(d0, d1) -> (d0, d1)>
// expected-remark @below {{evo-verify: 'instnorm_long' is valid (5 trials, }}
func.func @instnorm_long(%arg0: tensor<2x5x256x256xf32>) -> tensor<2x5x256x256xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %n = arith.constant 65536.0 : f32
  %eps = arith.constant 9.99999974E-6 : f32
  %0 = tensor.empty() : tensor<2x5xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<2x5xf32>) -> tensor<2x5xf32>
  %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%arg0 : tensor<2x5x256x256xf32>) outs(%1 : tensor<2x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %7 = arith.addf %in, %out : f32
    linalg.yield %7 : f32
  } -> tensor<2x5xf32>
  %3 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel"]} ins(%2 : tensor<2x5xf32>) outs(%0 : tensor<2x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %7 = arith.divf %in, %n : f32
    linalg.yield %7 : f32
  } -> tensor<2x5xf32>
  %4 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%arg0, %3 : tensor<2x5x256x256xf32>, tensor<2x5xf32>) outs(%1 : tensor<2x5xf32>) {
  ^bb0(%in: f32, %in_2: f32, %out: f32):
    %7 = arith.subf %in, %in_2 : f32
    %8 = arith.mulf %7, %7 : f32
    %9 = arith.addf %8, %out : f32
    linalg.yield %9 : f32
  } -> tensor<2x5xf32>
  %5 = tensor.empty() : tensor<2x5x256x256xf32>
  %6 = linalg.generic {indexing_maps = [#map, #map1, #map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0, %3, %4 : tensor<2x5x256x256xf32>, tensor<2x5xf32>, tensor<2x5xf32>) outs(%5 : tensor<2x5x256x256xf32>) {
  ^bb0(%in: f32, %in_2: f32, %in_3: f32, %out: f32):
    %7 = arith.subf %in, %in_2 : f32
    %8 = arith.divf %in_3, %n : f32
    %9 = arith.addf %8, %eps : f32
    %10 = math.rsqrt %9 : f32
    %11 = arith.mulf %7, %10 : f32
    linalg.yield %11 : f32
  } -> tensor<2x5x256x256xf32>
  return %6 : tensor<2x5x256x256xf32>
}

// -----

#m2 = affine_map<(r, c) -> (r, c)>
#r = affine_map<(r, c) -> (r)>
#c = affine_map<(r, c) -> (c)>
// expected-remark @below {{evo-verify: 'layernorm_affine' is valid (5 trials, }}
func.func @layernorm_affine(%x: tensor<6x131072xf32>, %w: tensor<131072xf32>, %b: tensor<131072xf32>) -> tensor<6x131072xf32> {
  %zero = arith.constant 0.0 : f32
  %inv = arith.constant 7.62939453125E-6 : f32
  %eps = arith.constant 1.0e-5 : f32
  %e = tensor.empty() : tensor<6xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<6xf32>) -> tensor<6xf32>
  %s = linalg.generic {indexing_maps = [#m2, #r], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<6x131072xf32>) outs(%f : tensor<6xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.addf %o, %a : f32
    linalg.yield %t : f32
  } -> tensor<6xf32>
  %v = linalg.generic {indexing_maps = [#m2, #r, #r], iterator_types = ["parallel", "reduction"]} ins(%x, %s : tensor<6x131072xf32>, tensor<6xf32>) outs(%f : tensor<6xf32>) {
  ^bb0(%a: f32, %sum: f32, %o: f32):
    %m = arith.mulf %inv, %sum : f32
    %d = arith.subf %a, %m : f32
    %q = arith.mulf %d, %d : f32
    %t = arith.addf %o, %q : f32
    linalg.yield %t : f32
  } -> tensor<6xf32>
  %e2 = tensor.empty() : tensor<6x131072xf32>
  %y = linalg.generic {indexing_maps = [#m2, #r, #r, #c, #c, #m2], iterator_types = ["parallel", "parallel"]} ins(%x, %s, %v, %w, %b : tensor<6x131072xf32>, tensor<6xf32>, tensor<6xf32>, tensor<131072xf32>, tensor<131072xf32>) outs(%e2 : tensor<6x131072xf32>) {
  ^bb0(%a: f32, %sum: f32, %var: f32, %wc: f32, %bc: f32, %o: f32):
    %m = arith.mulf %sum, %inv : f32
    %d = arith.subf %a, %m : f32
    %vm = arith.mulf %var, %inv : f32
    %ve = arith.addf %vm, %eps : f32
    %r = math.rsqrt %ve : f32
    %n = arith.mulf %d, %r : f32
    %sc = arith.mulf %n, %wc : f32
    %y = arith.addf %sc, %bc : f32
    linalg.yield %y : f32
  } -> tensor<6x131072xf32>
  return %y : tensor<6x131072xf32>
}
