// evo-verify on the GPU with scalar arguments (docs/lowering.md, "Scalar arguments"): every
// kernel takes them by value, the worker passes the value each input set drew (the oracle reads
// the same value as a 0-d input), and every output is proven equal to the float64 oracle. Covers
// the families a scalar reaches: elementwise (f32; an f64 truncated outside the payload, as
// torch-mlir writes alpha; a fill of an f16; i1 and bf16), a row program (LayerNorm's eps, with a
// declared range), a contraction's epilogue on the SIMT, mma.sync and wgmma schedules, and an
// integer row sum.
//
// REQUIRES: cuda
// RUN: rm -rf %t && mkdir -p %t
// RUN: evo-opt %s -split-input-file --evo-pipeline="output-dir=%t chip=sm_90a" --evo-verify="runs=3" -o /dev/null 2>&1 | FileCheck %s
// RUN: %python -c "import json,sys; m = json.load(open(sys.argv[1])); print([(b['dtype'], b['shape'], b.get('by_value', False)) for b in m['buffers']]); print([p.get('by_value', False) for p in m['kernels'][0]['params']])" %t/select_bf16.json | FileCheck %s --check-prefix=MANIFEST

// CHECK-NOT: error
// MANIFEST: [('bf16', [256], False), ('i1', [], True), ('bf16', [], True), ('bf16', [256], False)]
// MANIFEST: [False, True, True, False]

#id = affine_map<(d0) -> (d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
// torch-mlir style: f64 scalar truncated outside the payload
func.func @mul_scalar(%x: tensor<1024xf32>, %s: f64) -> tensor<1024xf32> {
  %t = arith.truncf %s : f64 to f32
  %e = tensor.empty() : tensor<1024xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<1024xf32>) outs(%e : tensor<1024xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %t : f32
    linalg.yield %m : f32
  } -> tensor<1024xf32>
  return %r : tensor<1024xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
// fill with a scalar, then add
func.func @fill_add(%x: tensor<64x64xf16>, %v: f16) -> tensor<64x64xf16> {
  %e = tensor.empty() : tensor<64x64xf16>
  %f = linalg.fill ins(%v : f16) outs(%e : tensor<64x64xf16>) -> tensor<64x64xf16>
  %r = linalg.add ins(%x, %f : tensor<64x64xf16>, tensor<64x64xf16>) outs(%e : tensor<64x64xf16>) -> tensor<64x64xf16>
  return %r : tensor<64x64xf16>
}

// -----

#id = affine_map<(d0) -> (d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
// matmul then scale (epilogue)
func.func @mm_scale(%a: tensor<128x64xf32>, %b: tensor<64x128xf32>, %alpha: f32) -> tensor<128x128xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x128xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<128x128xf32>) -> tensor<128x128xf32>
  %m = linalg.matmul ins(%a, %b : tensor<128x64xf32>, tensor<64x128xf32>) outs(%f : tensor<128x128xf32>) -> tensor<128x128xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%m : tensor<128x128xf32>) outs(%e : tensor<128x128xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.mulf %x, %alpha : f32
    linalg.yield %y : f32
  } -> tensor<128x128xf32>
  return %r : tensor<128x128xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
// row sum plus an integer offset
func.func @rowsum_i32(%x: tensor<64x256xi32>, %k: i32) -> tensor<64xi32> {
  %z = arith.constant 0 : i32
  %e = tensor.empty() : tensor<64xi32>
  %f = linalg.fill ins(%z : i32) outs(%e : tensor<64xi32>) -> tensor<64xi32>
  %s = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<64x256xi32>) outs(%f : tensor<64xi32>) {
  ^bb0(%a: i32, %o: i32):
    %y = arith.addi %a, %o : i32
    linalg.yield %y : i32
  } -> tensor<64xi32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%s : tensor<64xi32>) outs(%e : tensor<64xi32>) {
  ^bb0(%a: i32, %o: i32):
    %y = arith.addi %a, %k : i32
    linalg.yield %y : i32
  } -> tensor<64xi32>
  return %r : tensor<64xi32>
}

// -----

#id = affine_map<(d0) -> (d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
// i1 and bf16 scalars
func.func @select_bf16(%x: tensor<256xbf16>, %c: i1, %d: bf16) -> tensor<256xbf16> {
  %e = tensor.empty() : tensor<256xbf16>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<256xbf16>) outs(%e : tensor<256xbf16>) {
  ^bb0(%a: bf16, %o: bf16):
    %y = arith.select %c, %a, %d : bf16
    linalg.yield %y : bf16
  } -> tensor<256xbf16>
  return %r : tensor<256xbf16>
}

// -----

func.func @layernorm_eps(%x: tensor<999x256xf32>, %w: tensor<256xf32>, %b: tensor<256xf32>, %eps: f32 {evo.range = [1.0e-5, 1.0e-2]}) -> (tensor<999x256xf32>, tensor<999xf32>) {
  %zero = arith.constant 0.0 : f32
  %inv_n = arith.constant 3.90625e-03 : f32
  %er = tensor.empty() : tensor<999xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%er : tensor<999xf32>) -> tensor<999xf32>
  %sum = linalg.reduce ins(%x : tensor<999x256xf32>) outs(%acc : tensor<999xf32>) dimensions = [1]
    (%in: f32, %a: f32) {
      %s = arith.addf %in, %a : f32
      linalg.yield %s : f32
    }
  %mean = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%sum : tensor<999xf32>) outs(%er : tensor<999xf32>) {
  ^bb0(%s: f32, %o: f32):
    %m = arith.mulf %s, %inv_n : f32
    linalg.yield %m : f32
  } -> tensor<999xf32>
  %e = tensor.empty() : tensor<999x256xf32>
  %centered = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>],
                              iterator_types = ["parallel", "parallel"]}
      ins(%x, %mean : tensor<999x256xf32>, tensor<999xf32>) outs(%e : tensor<999x256xf32>) {
  ^bb0(%v: f32, %m: f32, %o: f32):
    %c = arith.subf %v, %m : f32
    linalg.yield %c : f32
  } -> tensor<999x256xf32>
  %sq = linalg.reduce ins(%centered : tensor<999x256xf32>) outs(%acc : tensor<999xf32>) dimensions = [1]
    (%in: f32, %a: f32) {
      %p = arith.mulf %in, %in : f32
      %s = arith.addf %p, %a : f32
      linalg.yield %s : f32
    }
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%centered, %sq, %w, %b : tensor<999x256xf32>, tensor<999xf32>, tensor<256xf32>, tensor<256xf32>) outs(%e : tensor<999x256xf32>) {
  ^bb0(%c: f32, %q: f32, %wv: f32, %bv: f32, %o: f32):
    %var = arith.mulf %q, %inv_n : f32
    %ve = arith.addf %var, %eps : f32
    %r = math.rsqrt %ve : f32
    %n = arith.mulf %c, %r : f32
    %sc = arith.mulf %n, %wv : f32
    %out = arith.addf %sc, %bv : f32
    linalg.yield %out : f32
  } -> tensor<999x256xf32>
  return %y, %mean : tensor<999x256xf32>, tensor<999xf32>
}

// -----

func.func @mm_simt(%a: tensor<256x128xf16>, %b: tensor<128x256xf16>, %alpha: f32, %beta: f32) -> tensor<256x256xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x256xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
  %m = linalg.matmul {evo.knobs = {tile_sizes = [64, 64, 16], thread_tile = [4, 4], vector_width = 4}} ins(%a, %b : tensor<256x128xf16>, tensor<128x256xf16>) outs(%f : tensor<256x256xf32>) -> tensor<256x256xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%m : tensor<256x256xf32>) outs(%e : tensor<256x256xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.mulf %x, %alpha : f32
    %w = arith.addf %y, %beta : f32
    linalg.yield %w : f32
  } -> tensor<256x256xf32>
  return %r : tensor<256x256xf32>
}
// -----

func.func @mm_mma_sync(%a: tensor<256x128xf16>, %b: tensor<128x256xf16>, %alpha: f32, %beta: f32) -> tensor<256x256xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x256xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
  %m = linalg.matmul {evo.knobs = {tile_sizes = [128, 128, 32], mma_sync = true, stages = 4}} ins(%a, %b : tensor<256x128xf16>, tensor<128x256xf16>) outs(%f : tensor<256x256xf32>) -> tensor<256x256xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%m : tensor<256x256xf32>) outs(%e : tensor<256x256xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.mulf %x, %alpha : f32
    %w = arith.addf %y, %beta : f32
    linalg.yield %w : f32
  } -> tensor<256x256xf32>
  return %r : tensor<256x256xf32>
}
// -----

func.func @mm_wgmma(%a: tensor<256x128xf16>, %b: tensor<128x256xf16>, %alpha: f32, %beta: f32) -> tensor<256x256xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x256xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
  %m = linalg.matmul {evo.knobs = {tile_sizes = [128, 128, 64], wgmma = true, stages = 4}} ins(%a, %b : tensor<256x128xf16>, tensor<128x256xf16>) outs(%f : tensor<256x256xf32>) -> tensor<256x256xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%m : tensor<256x256xf32>) outs(%e : tensor<256x256xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.mulf %x, %alpha : f32
    %w = arith.addf %y, %beta : f32
    linalg.yield %w : f32
  } -> tensor<256x256xf32>
  return %r : tensor<256x256xf32>
}
