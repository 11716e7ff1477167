// evo-verify on row programs split over blocks (docs/lowering.md, "Rows split over blocks"):
// each row cut into row_split slices, one kernel per pass, the partials of every reduction
// combined in slice order by the later kernels. A LayerNorm over [C, H, W] (three passes), a
// GroupNorm read through its expand_shape into groups (rows task + the affine after the
// collapse_shape), an RMSNorm (f32 and f16: f32 partials), a lone softmax (max, then sum of
// exponentials: three kernels), a scaled softmax written as generics, and a multi-result
// reduction returning a row vector (written by slice 0) are each proven equal to the float64
// oracle with a thread, a warp and a block per (row, slice), several slice counts, vector widths
// and cache_row.
//
// REQUIRES: cuda
// RUN: evo-opt %s -split-input-file -verify-diagnostics --evo-pipeline="output-dir=- row-split=2 reduction-strategy=block block-size=256 vector-width=4" \
// RUN:   --evo-verify="runs=5 warmup=1" -o /dev/null
// RUN: evo-opt %s -split-input-file -verify-diagnostics --evo-pipeline="output-dir=- row-split=8 reduction-strategy=warp vector-width=2" \
// RUN:   --evo-verify="runs=5 warmup=1" -o /dev/null
// RUN: evo-opt %s -split-input-file -verify-diagnostics --evo-pipeline="output-dir=- row-split=16 reduction-strategy=thread block-size=64" \
// RUN:   --evo-verify="runs=5 warmup=1" -o /dev/null
// RUN: evo-opt %s -split-input-file -verify-diagnostics --evo-pipeline="output-dir=- row-split=4 reduction-strategy=block block-size=128 vector-width=4 cache-row=1" \
// RUN:   --evo-verify="runs=5 warmup=1" -o /dev/null
// RUN: evo-opt %s -split-input-file -verify-diagnostics --evo-pipeline="output-dir=- row-split=32 reduction-strategy=block block-size=64" \
// RUN:   --evo-verify="runs=5 warmup=1" -o /dev/null

// LayerNorm over [C, H, W]: 16 rows of 8192.
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

// GroupNorm as torch-mlir exports it (bench/kernelbench/groupnorm.mlir, smaller): the input
// expand_shape'd into 4 groups of 4 channels (rows: 16 groups of 4 x 32 x 32, read through the
// view), the statistics and the normalization, collapse_shape back, the per-channel affine.
#g5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#g2 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1)>
#gv = affine_map<(d0, d1) -> (d0, d1)>
#g4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#gc = affine_map<(d0, d1, d2, d3) -> (d1)>
// expected-remark @below {{evo-verify: 'groupnorm' is valid (5 trials, }}
func.func @groupnorm(%arg0: tensor<4x16x32x32xf32>, %arg1: tensor<16xf32>, %arg2: tensor<16xf32>) -> tensor<4x16x32x32xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %cst_0 = arith.constant 4096.0 : f32
  %cst_1 = arith.constant 9.99999974E-6 : f32
  %expanded = tensor.expand_shape %arg0 [[0], [1, 2], [3], [4]] output_shape [4, 4, 4, 32, 32] : tensor<4x16x32x32xf32> into tensor<4x4x4x32x32xf32>
  %0 = tensor.empty() : tensor<4x4xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %2 = linalg.generic {indexing_maps = [#g5, #g2], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%expanded : tensor<4x4x4x32x32xf32>) outs(%1 : tensor<4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %9 = arith.addf %in, %out : f32
    linalg.yield %9 : f32
  } -> tensor<4x4xf32>
  %3 = linalg.generic {indexing_maps = [#gv, #gv], iterator_types = ["parallel", "parallel"]} ins(%2 : tensor<4x4xf32>) outs(%0 : tensor<4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %9 = arith.divf %in, %cst_0 : f32
    linalg.yield %9 : f32
  } -> tensor<4x4xf32>
  %4 = linalg.generic {indexing_maps = [#g5, #g2, #g2], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%expanded, %3 : tensor<4x4x4x32x32xf32>, tensor<4x4xf32>) outs(%1 : tensor<4x4xf32>) {
  ^bb0(%in: f32, %in_2: f32, %out: f32):
    %9 = arith.subf %in, %in_2 : f32
    %10 = arith.mulf %9, %9 : f32
    %11 = arith.addf %10, %out : f32
    linalg.yield %11 : f32
  } -> tensor<4x4xf32>
  %5 = tensor.empty() : tensor<4x4x4x32x32xf32>
  %6 = linalg.generic {indexing_maps = [#g5, #g2, #g2, #g5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%expanded, %3, %4 : tensor<4x4x4x32x32xf32>, tensor<4x4xf32>, tensor<4x4xf32>) outs(%5 : tensor<4x4x4x32x32xf32>) {
  ^bb0(%in: f32, %in_2: f32, %in_3: f32, %out: f32):
    %9 = arith.subf %in, %in_2 : f32
    %10 = arith.divf %in_3, %cst_0 : f32
    %11 = arith.addf %10, %cst_1 : f32
    %12 = math.rsqrt %11 : f32
    %13 = arith.mulf %9, %12 : f32
    linalg.yield %13 : f32
  } -> tensor<4x4x4x32x32xf32>
  %collapsed = tensor.collapse_shape %6 [[0], [1, 2], [3], [4]] : tensor<4x4x4x32x32xf32> into tensor<4x16x32x32xf32>
  %7 = tensor.empty() : tensor<4x16x32x32xf32>
  %8 = linalg.generic {indexing_maps = [#g4, #gc, #gc, #g4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%collapsed, %arg1, %arg2 : tensor<4x16x32x32xf32>, tensor<16xf32>, tensor<16xf32>) outs(%7 : tensor<4x16x32x32xf32>) {
  ^bb0(%in: f32, %in_2: f32, %in_3: f32, %out: f32):
    %9 = arith.mulf %in, %in_2 : f32
    %10 = arith.addf %9, %in_3 : f32
    linalg.yield %10 : f32
  } -> tensor<4x16x32x32xf32>
  return %8 : tensor<4x16x32x32xf32>
}

// -----

// RMSNorm over the last dimension with a weight: one reduction, two kernels.
#r2 = affine_map<(i, j) -> (i, j)>
#r1 = affine_map<(i, j) -> (i)>
#rc = affine_map<(i, j) -> (j)>
#rv = affine_map<(i) -> (i)>
// expected-remark @below {{evo-verify: 'rmsnorm' is valid (5 trials, }}
func.func @rmsnorm(%x: tensor<24x4096xf32>, %w: tensor<4096xf32>) -> tensor<24x4096xf32> {
  %zero = arith.constant 0.0 : f32
  %inv = arith.constant 2.44140625e-04 : f32
  %eps = arith.constant 1.0e-05 : f32
  %er = tensor.empty() : tensor<24xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%er : tensor<24xf32>) -> tensor<24xf32>
  %ss = linalg.generic {indexing_maps = [#r2, #r1], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<24x4096xf32>) outs(%acc : tensor<24xf32>) {
  ^bb0(%a: f32, %o: f32):
    %q = arith.mulf %a, %a : f32
    %s = arith.addf %q, %o : f32
    linalg.yield %s : f32
  } -> tensor<24xf32>
  %r = linalg.generic {indexing_maps = [#rv, #rv], iterator_types = ["parallel"]}
      ins(%ss : tensor<24xf32>) outs(%er : tensor<24xf32>) {
  ^bb0(%s: f32, %o: f32):
    %m = arith.mulf %s, %inv : f32
    %me = arith.addf %m, %eps : f32
    %rs = math.rsqrt %me : f32
    linalg.yield %rs : f32
  } -> tensor<24xf32>
  %e = tensor.empty() : tensor<24x4096xf32>
  %y = linalg.generic {indexing_maps = [#r2, #r1, #rc, #r2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %r, %w : tensor<24x4096xf32>, tensor<24xf32>, tensor<4096xf32>) outs(%e : tensor<24x4096xf32>) {
  ^bb0(%a: f32, %s: f32, %ww: f32, %o: f32):
    %n = arith.mulf %a, %s : f32
    %t = arith.mulf %n, %ww : f32
    linalg.yield %t : f32
  } -> tensor<24x4096xf32>
  return %y : tensor<24x4096xf32>
}

// -----

// The same in f16: f16 loads and stores, the sum of squares and its partials in f32. The input's
// range is declared: the naive baseline (the reference) accumulates in f16, as the IR says, and
// a sum of 4096 squares of the wide trial's values (up to 2^7) overflows f16 (H200, 2026-12-01:
// the reference was invalid, '0 but the oracle says 0.456'); |x| <= 2 keeps it below 16384.
#h2 = affine_map<(i, j) -> (i, j)>
#h1 = affine_map<(i, j) -> (i)>
#hv = affine_map<(i) -> (i)>
// expected-remark @below {{evo-verify: 'rmsnorm_f16' is valid (5 trials, }}
func.func @rmsnorm_f16(%x: tensor<24x4096xf16> {evo.range = [-2.0, 2.0]}) -> tensor<24x4096xf16> {
  %zero = arith.constant 0.0 : f16
  %inv = arith.constant 2.44140625e-04 : f16
  %eps = arith.constant 1.0e-03 : f16
  %er = tensor.empty() : tensor<24xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%er : tensor<24xf16>) -> tensor<24xf16>
  %ss = linalg.generic {indexing_maps = [#h2, #h1], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<24x4096xf16>) outs(%acc : tensor<24xf16>) {
  ^bb0(%a: f16, %o: f16):
    %q = arith.mulf %a, %a : f16
    %s = arith.addf %q, %o : f16
    linalg.yield %s : f16
  } -> tensor<24xf16>
  %r = linalg.generic {indexing_maps = [#hv, #hv], iterator_types = ["parallel"]}
      ins(%ss : tensor<24xf16>) outs(%er : tensor<24xf16>) {
  ^bb0(%s: f16, %o: f16):
    %m = arith.mulf %s, %inv : f16
    %me = arith.addf %m, %eps : f16
    %rs = math.rsqrt %me : f16
    linalg.yield %rs : f16
  } -> tensor<24xf16>
  %e = tensor.empty() : tensor<24x4096xf16>
  %y = linalg.generic {indexing_maps = [#h2, #h1, #h2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %r : tensor<24x4096xf16>, tensor<24xf16>) outs(%e : tensor<24x4096xf16>) {
  ^bb0(%a: f16, %s: f16, %o: f16):
    %n = arith.mulf %a, %s : f16
    linalg.yield %n : f16
  } -> tensor<24x4096xf16>
  return %y : tensor<24x4096xf16>
}

// -----

// A lone softmax: the max, the sum of exponentials, the output: three kernels.
// expected-remark @below {{evo-verify: 'softmax' is valid (5 trials, }}
func.func @softmax(%x: tensor<40x2048xf32>) -> tensor<40x2048xf32> {
  %e = tensor.empty() : tensor<40x2048xf32>
  %s = linalg.softmax dimension(1) ins(%x : tensor<40x2048xf32>) outs(%e : tensor<40x2048xf32>) -> tensor<40x2048xf32>
  return %s : tensor<40x2048xf32>
}

// -----

// A scaled softmax written as generics (max, exp of the shifted scaled input, sum, divide).
#s2 = affine_map<(i, j) -> (i, j)>
#s1 = affine_map<(i, j) -> (i)>
// expected-remark @below {{evo-verify: 'softmax_generics' is valid (5 trials, }}
func.func @softmax_generics(%x: tensor<16x2048xf32>) -> tensor<16x2048xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %scale = arith.constant 0.125 : f32
  %er = tensor.empty() : tensor<16xf32>
  %mi = linalg.fill ins(%ninf : f32) outs(%er : tensor<16xf32>) -> tensor<16xf32>
  %zi = linalg.fill ins(%zero : f32) outs(%er : tensor<16xf32>) -> tensor<16xf32>
  %max = linalg.generic {indexing_maps = [#s2, #s1], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<16x2048xf32>) outs(%mi : tensor<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.mulf %a, %scale : f32
    %m = arith.maximumf %v, %o : f32
    linalg.yield %m : f32
  } -> tensor<16xf32>
  %e = tensor.empty() : tensor<16x2048xf32>
  %ex = linalg.generic {indexing_maps = [#s2, #s1, #s2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %max : tensor<16x2048xf32>, tensor<16xf32>) outs(%e : tensor<16x2048xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %v = arith.mulf %a, %scale : f32
    %d = arith.subf %v, %m : f32
    %x2 = math.exp %d : f32
    linalg.yield %x2 : f32
  } -> tensor<16x2048xf32>
  %sum = linalg.generic {indexing_maps = [#s2, #s1], iterator_types = ["parallel", "reduction"]}
      ins(%ex : tensor<16x2048xf32>) outs(%zi : tensor<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  %y = linalg.generic {indexing_maps = [#s2, #s1, #s2], iterator_types = ["parallel", "parallel"]}
      ins(%ex, %sum : tensor<16x2048xf32>, tensor<16xf32>) outs(%e : tensor<16x2048xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %q = arith.divf %a, %s : f32
    linalg.yield %q : f32
  } -> tensor<16x2048xf32>
  return %y : tensor<16x2048xf32>
}

// -----

// Two reductions of one generic and an independent max share the first kernel; the second
// writes the normalized rows and the means (a row vector: slice 0 writes it).
#m2 = affine_map<(i, j) -> (i, j)>
#m1 = affine_map<(i, j) -> (i)>
#v1 = affine_map<(i) -> (i)>
// expected-remark @below {{evo-verify: 'moments' is valid (5 trials, }}
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
    %msq = arith.mulf %mean, %mean : f32
    %var = arith.subf %ex2, %msq : f32
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
