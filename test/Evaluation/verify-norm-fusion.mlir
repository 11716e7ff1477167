// evo-verify on the fused norms and the long f32 sums (docs/lowering.md, "Row programs" and
// "The naive baseline"): row programs over several trailing dimensions (LayerNorm over
// [C, H, W], InstanceNorm over [H, W]), rows longer than 65536 (a block per row), a row group
// (cross-entropy's per-row part before its mean), and long sums whose naive baselines, one
// sequential f32 accumulator, were past the f32 tolerance before they summed in two levels (a
// one-thread row sum of 65536, the l2norm row program over 65535, a 0-d sum of 16M squares).
// Also a row program over strided rows (RMSNorm over the channels of NCHW, its loops
// interchanged: lower-to-gpu-rows-strided.mlir) and a GroupNorm whose affine, read through a
// collapse_shape, fuses with the normalisation and writes the output through the returned
// reshape (lower-to-gpu-views.mlir).
// Each is proven equal to the oracle with the naive knobs, a block and a warp per row.
//
// REQUIRES: cuda
// RUN: evo-opt %s -split-input-file -verify-diagnostics --evo-pipeline="output-dir=-" \
// RUN:   --evo-verify="runs=5 warmup=1" -o /dev/null
// RUN: evo-opt %s -split-input-file -verify-diagnostics --evo-pipeline="output-dir=- reduction-strategy=block block-size=512" \
// RUN:   --evo-verify="runs=5 warmup=1" -o /dev/null
// RUN: evo-opt %s -split-input-file -verify-diagnostics --evo-pipeline="output-dir=- reduction-strategy=warp" \
// RUN:   --evo-verify="runs=5 warmup=1" -o /dev/null

#mapf = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#mapr = affine_map<(d0, d1, d2, d3) -> (d0)>
#mapv = affine_map<(d0) -> (d0)>
#mapw = affine_map<(d0, d1, d2, d3) -> (d1, d2, d3)>
// expected-remark @below {{evo-verify: 'layernorm3' is valid (5 trials, }}
func.func @layernorm3(%x: tensor<16x8x32x32xf32>, %w: tensor<8x32x32xf32>, %b: tensor<8x32x32xf32>) -> tensor<16x8x32x32xf32> {
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

#min = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#min1 = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
#min2 = affine_map<(d0, d1) -> (d0, d1)>
// expected-remark @below {{evo-verify: 'instnorm' is valid (5 trials, }}
func.func @instnorm(%arg0: tensor<4x8x64x64xf32>) -> tensor<4x8x64x64xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %cst_0 = arith.constant 4096.0 : f32
  %cst_1 = arith.constant 9.99999974E-6 : f32
  %0 = tensor.empty() : tensor<4x8xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = linalg.generic {indexing_maps = [#min, #min1], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%arg0 : tensor<4x8x64x64xf32>) outs(%1 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %7 = arith.addf %in, %out : f32
    linalg.yield %7 : f32
  } -> tensor<4x8xf32>
  %3 = linalg.generic {indexing_maps = [#min2, #min2], iterator_types = ["parallel", "parallel"]} ins(%2 : tensor<4x8xf32>) outs(%0 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %7 = arith.divf %in, %cst_0 : f32
    linalg.yield %7 : f32
  } -> tensor<4x8xf32>
  %4 = linalg.generic {indexing_maps = [#min, #min1, #min1], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%arg0, %3 : tensor<4x8x64x64xf32>, tensor<4x8xf32>) outs(%1 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %in_2: f32, %out: f32):
    %7 = arith.subf %in, %in_2 : f32
    %8 = arith.mulf %7, %7 : f32
    %9 = arith.addf %8, %out : f32
    linalg.yield %9 : f32
  } -> tensor<4x8xf32>
  %5 = tensor.empty() : tensor<4x8x64x64xf32>
  %6 = linalg.generic {indexing_maps = [#min, #min1, #min1, #min], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0, %3, %4 : tensor<4x8x64x64xf32>, tensor<4x8xf32>, tensor<4x8xf32>) outs(%5 : tensor<4x8x64x64xf32>) {
  ^bb0(%in: f32, %in_2: f32, %in_3: f32, %out: f32):
    %7 = arith.subf %in, %in_2 : f32
    %8 = arith.divf %in_3, %cst_0 : f32
    %9 = arith.addf %8, %cst_1 : f32
    %10 = math.rsqrt %9 : f32
    %11 = arith.mulf %7, %10 : f32
    linalg.yield %11 : f32
  } -> tensor<4x8x64x64xf32>
  return %6 : tensor<4x8x64x64xf32>
}

// -----

// expected-remark @below {{evo-verify: 'long_rows' is valid (5 trials, }}
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

#mce = affine_map<(d0, d1) -> (d0, d1)>
#mce1 = affine_map<(d0, d1) -> (d0)>
#mcev = affine_map<(d0) -> (d0)>
#mcev0 = affine_map<(d0) -> ()>
#mce2 = affine_map<() -> ()>
// expected-remark @below {{evo-verify: 'cross_entropy' is valid (5 trials, }}
func.func @cross_entropy(%arg0: tensor<256x1000xf32>, %arg1: tensor<256xi64> {evo.range = [0, 999]}) -> tensor<f32> {
  %cst = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %cst_n = arith.constant 256.0 : f32
  %0 = tensor.empty() : tensor<256xf32>
  %1 = linalg.fill ins(%ninf : f32) outs(%0 : tensor<256xf32>) -> tensor<256xf32>
  %2 = linalg.generic {indexing_maps = [#mce, #mce1], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<256x1000xf32>) outs(%1 : tensor<256xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.maximumf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<256xf32>
  %z = linalg.fill ins(%cst : f32) outs(%0 : tensor<256xf32>) -> tensor<256xf32>
  %3 = linalg.generic {indexing_maps = [#mce, #mce1, #mce1], iterator_types = ["parallel", "reduction"]} ins(%arg0, %2 : tensor<256x1000xf32>, tensor<256xf32>) outs(%z : tensor<256xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %s0 = arith.subf %in, %in_0 : f32
    %s1 = math.exp %s0 : f32
    %s2 = arith.addf %s1, %out : f32
    linalg.yield %s2 : f32
  } -> tensor<256xf32>
  %4 = linalg.generic {indexing_maps = [#mce, #mce1, #mce1], iterator_types = ["parallel", "reduction"]} ins(%arg0, %arg1 : tensor<256x1000xf32>, tensor<256xi64>) outs(%z : tensor<256xf32>) {
  ^bb0(%in: f32, %in_0: i64, %out: f32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %s0 = arith.cmpi eq, %ji, %in_0 : i64
    %s1 = arith.select %s0, %in, %cst : f32
    %s2 = arith.addf %s1, %out : f32
    linalg.yield %s2 : f32
  } -> tensor<256xf32>
  %5 = linalg.generic {indexing_maps = [#mcev, #mcev, #mcev, #mcev], iterator_types = ["parallel"]} ins(%2, %3, %4 : tensor<256xf32>, tensor<256xf32>, tensor<256xf32>) outs(%0 : tensor<256xf32>) {
  ^bb0(%in: f32, %in_0: f32, %in_1: f32, %out: f32):
    %s0 = math.log %in_0 : f32
    %s1 = arith.addf %in, %s0 : f32
    %s2 = arith.subf %s1, %in_1 : f32
    linalg.yield %s2 : f32
  } -> tensor<256xf32>
  %6 = tensor.empty() : tensor<f32>
  %7 = linalg.fill ins(%cst : f32) outs(%6 : tensor<f32>) -> tensor<f32>
  %8 = linalg.generic {indexing_maps = [#mcev, #mcev0], iterator_types = ["reduction"]} ins(%5 : tensor<256xf32>) outs(%7 : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %9 = linalg.generic {indexing_maps = [#mce2, #mce2], iterator_types = []} ins(%8 : tensor<f32>) outs(%6 : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.divf %in, %cst_n : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %9 : tensor<f32>
}

// -----

// expected-remark @below {{evo-verify: 'row_sum_64k' is valid (5 trials, }}
func.func @row_sum_64k(%x: tensor<256x65536xf32>) -> tensor<256xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<256xf32>) -> tensor<256xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<256x65536xf32>) outs(%acc : tensor<256xf32>) {
    ^bb0(%a: f32, %o: f32):
      %r = arith.addf %o, %a : f32
      linalg.yield %r : f32
  } -> tensor<256xf32>
  return %s : tensor<256xf32>
}

// -----

// expected-remark @below {{evo-verify: 'frobenius_squared' is valid (5 trials, }}
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

// expected-remark @below {{evo-verify: 'l2norm' is valid (5 trials, }}
func.func @l2norm(%x: tensor<32x65535xf32>) -> tensor<32x65535xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<32xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<32xf32>) -> tensor<32xf32>
  %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<32x65535xf32>) outs(%1 : tensor<32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %5 = arith.mulf %in, %in : f32
    %6 = arith.addf %5, %out : f32
    linalg.yield %6 : f32
  } -> tensor<32xf32>
  %3 = tensor.empty() : tensor<32x65535xf32>
  %4 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %2 : tensor<32x65535xf32>, tensor<32xf32>) outs(%3 : tensor<32x65535xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %5 = math.sqrt %in_0 : f32
    %6 = arith.divf %in, %5 : f32
    linalg.yield %6 : f32
  } -> tensor<32x65535xf32>
  return %4 : tensor<32x65535xf32>
}

// -----

#rx = affine_map<(n, c, h, w) -> (n, c, h, w)>
#rs = affine_map<(n, c, h, w) -> (n, h, w)>
// expected-remark @below {{evo-verify: 'rmsnorm_nchw' is valid (5 trials, }}
func.func @rmsnorm_nchw(%x: tensor<4x64x32x64xf32>) -> tensor<4x64x32x64xf32> {
  %zero = arith.constant 0.0 : f32
  %c = arith.constant 64.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %e = tensor.empty() : tensor<4x32x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x32x64xf32>) -> tensor<4x32x64xf32>
  %ss = linalg.generic {indexing_maps = [#rx, #rs], iterator_types = ["parallel", "reduction", "parallel", "parallel"]}
      ins(%x : tensor<4x64x32x64xf32>) outs(%f : tensor<4x32x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    %t = arith.addf %m, %o : f32
    linalg.yield %t : f32
  } -> tensor<4x32x64xf32>
  %e4 = tensor.empty() : tensor<4x64x32x64xf32>
  %y = linalg.generic {indexing_maps = [#rx, #rs, #rx], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %ss : tensor<4x64x32x64xf32>, tensor<4x32x64xf32>) outs(%e4 : tensor<4x64x32x64xf32>) {
  ^bb0(%a: f32, %q: f32, %o: f32):
    %mean = arith.divf %q, %c : f32
    %me = arith.addf %mean, %eps : f32
    %r = math.sqrt %me : f32
    %v = arith.divf %a, %r : f32
    linalg.yield %v : f32
  } -> tensor<4x64x32x64xf32>
  return %y : tensor<4x64x32x64xf32>
}

// -----

#g5 = affine_map<(n, g, c, s) -> (n, g, c, s)>
#g2 = affine_map<(n, g, c, s) -> (n, g)>
#c3 = affine_map<(n, c, s) -> (n, c, s)>
#cw = affine_map<(n, c, s) -> (c)>
// expected-remark @below {{evo-verify: 'groupnorm_affine' is valid (5 trials, }}
func.func @groupnorm_affine(%x: tensor<4x32x1024xf32>, %w: tensor<32xf32>, %b: tensor<32xf32>) -> tensor<4x32x1024xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 8192.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %xe = tensor.expand_shape %x [[0], [1, 2], [3]] output_shape [4, 4, 8, 1024] : tensor<4x32x1024xf32> into tensor<4x4x8x1024xf32>
  %e2 = tensor.empty() : tensor<4x4xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %sum = linalg.generic {indexing_maps = [#g5, #g2], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%xe : tensor<4x4x8x1024xf32>) outs(%f2 : tensor<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  %sq = linalg.generic {indexing_maps = [#g5, #g2, #g2], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%xe, %sum : tensor<4x4x8x1024xf32>, tensor<4x4xf32>) outs(%f2 : tensor<4x4xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %m = arith.divf %s, %n : f32
    %d = arith.subf %a, %m : f32
    %d2 = arith.mulf %d, %d : f32
    %t = arith.addf %d2, %o : f32
    linalg.yield %t : f32
  } -> tensor<4x4xf32>
  %e5 = tensor.empty() : tensor<4x4x8x1024xf32>
  %norm = linalg.generic {indexing_maps = [#g5, #g2, #g2, #g5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%xe, %sum, %sq : tensor<4x4x8x1024xf32>, tensor<4x4xf32>, tensor<4x4xf32>) outs(%e5 : tensor<4x4x8x1024xf32>) {
  ^bb0(%a: f32, %s: f32, %v: f32, %o: f32):
    %m = arith.divf %s, %n : f32
    %d = arith.subf %a, %m : f32
    %var = arith.divf %v, %n : f32
    %ve = arith.addf %var, %eps : f32
    %r = math.rsqrt %ve : f32
    %y = arith.mulf %d, %r : f32
    linalg.yield %y : f32
  } -> tensor<4x4x8x1024xf32>
  %c = tensor.collapse_shape %norm [[0], [1, 2], [3]] : tensor<4x4x8x1024xf32> into tensor<4x32x1024xf32>
  %e3 = tensor.empty() : tensor<4x32x1024xf32>
  %out = linalg.generic {indexing_maps = [#c3, #cw, #cw, #c3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%c, %w, %b : tensor<4x32x1024xf32>, tensor<32xf32>, tensor<32xf32>) outs(%e3 : tensor<4x32x1024xf32>) {
  ^bb0(%a: f32, %wv: f32, %bv: f32, %o: f32):
    %m = arith.mulf %a, %wv : f32
    %y = arith.addf %m, %bv : f32
    linalg.yield %y : f32
  } -> tensor<4x32x1024xf32>
  return %out : tensor<4x32x1024xf32>
}
