// evo-verify on evo's own kernels: every op family, several schedules and element kinds, all
// proven equal to the oracle on 5 seeds and timed.
//
// REQUIRES: cuda
// RUN: evo-opt %s -split-input-file -verify-diagnostics --evo-pipeline="output-dir=-" \
// RUN:   --evo-verify="runs=20 warmup=3" -o /dev/null
//
// The JSON report of one function: the seed that reproduces it, the inputs of each trial, the
// naive baseline as the reference of every element, the timed launches checked, the ceilings
// the floor comes from.
// RUN: rm -rf %t && mkdir -p %t
// RUN: evo-opt %evo_src_root/examples/softmax.mlir --evo-pipeline="output-dir=%t reduction-strategy=block vector-width=4" \
// RUN:   --evo-verify="output=%t/verify.json runs=20" -o /dev/null
// RUN: FileCheck %s --input-file=%t/verify.json --check-prefix=JSON
// JSON:      "ceilings": {
// JSON:        "copy_gbps": {{[0-9.]+}},
// JSON:        "read_gbps": {{[0-9.]+}},
// JSON:        "write_gbps": {{[0-9.]+}}
// JSON:      "format": "evo-verify/1",
// JSON:      "bytes": 33554432,
// JSON:      "checked_elements_per_trial": {{[0-9]+}},
// JSON:      "function": "softmax",
// JSON:      "read_bytes": 16777216,
// JSON:      "reference": "naive baseline (every element) and oracle samples",
// JSON:      "roofline": {
// JSON:        "below_floor": false,
// JSON:        "read_floor_ms": {{[0-9.e-]+}},
// JSON:      "seed": [[JSON_SEED:[1-9][0-9]*]],
// JSON:      "timing": {
// JSON:        "check_launches": true,
// JSON:        "checked_launches": {{[1-9][0-9]*}},
// JSON:        "launches": 40,
// JSON:        "median_ms": {{[0-9.]+}},
// JSON:        "repeat_medians_ms": [
// JSON:        "timing_seed": {{[1-9][0-9]*}}
// JSON:      "timing_inputs": {
// JSON:      "trial_inputs": [
// JSON-NEXT:   "uniform[-1, 1)",
// JSON-NEXT:   "normal(0, 1)",
// JSON-NEXT:   "wide(2^-12 <= |x| < 128)",
// JSON-NEXT:   "special{0, 1, -1, 0.5, -0.5, 2, 100, -100} + uniform[-1, 1)",
// JSON-NEXT:   "large(1 <= |x| < 128)"
// JSON:      "trials": [
// JSON-COUNT-5: "seed": {{[0-9]+}}
// JSON:      "verdict": "valid"
// JSON:      "write_bytes": 16777216
// JSON:      "seed": [[JSON_SEED]]

// An explicit seed reproduces a run: trial t uses seed + t.
// RUN: evo-opt %evo_src_root/examples/softmax.mlir --evo-pipeline="output-dir=%t reduction-strategy=block vector-width=4" \
// RUN:   --evo-verify="output=%t/again.json timing=false seed=12345" -o /dev/null
// RUN: FileCheck %s --input-file=%t/again.json --check-prefix=SEED
// SEED:      "seed": 12345,
// SEED:      "trials": [
// SEED:        "seed": 12345
// SEED:        "seed": 12346
// SEED:      "verdict": "valid"
// SEED:      "seed": 12345

// expected-remark @below {{evo-verify: 'softmax_block' is valid (5 trials, }}
func.func @softmax_block(%x: tensor<1024x4096xf32>) -> tensor<1024x4096xf32> {
  %e = tensor.empty() : tensor<1024x4096xf32>
  %r = linalg.softmax {evo.knobs = {reduction = "block", vector_width = 4}} dimension(1)
         ins(%x : tensor<1024x4096xf32>) outs(%e : tensor<1024x4096xf32>) -> tensor<1024x4096xf32>
  return %r : tensor<1024x4096xf32>
}

// -----

// expected-remark @below {{evo-verify: 'row_sum_warp' is valid (5 trials, }}
func.func @row_sum_warp(%x: tensor<4096x2048xf32>) -> tensor<4096xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4096xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4096xf32>) -> tensor<4096xf32>
  %r = linalg.reduce ins(%x : tensor<4096x2048xf32>) outs(%acc : tensor<4096xf32>) dimensions = [1]
         {evo.knobs = {reduction = "warp", vector_width = 4, accumulators = 2}}
    (%in: f32, %init: f32) {
      %s = arith.addf %in, %init : f32
      linalg.yield %s : f32
    }
  return %r : tensor<4096xf32>
}

// -----

// expected-remark @below {{evo-verify: 'matmul_tiled' is valid (5 trials, }}
func.func @matmul_tiled(%a: tensor<512x256xf32>, %b: tensor<256x384xf32>) -> tensor<512x384xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<512x384xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<512x384xf32>) -> tensor<512x384xf32>
  %c = linalg.matmul {evo.knobs = {tile_sizes = [64, 64, 16], thread_tile = [4, 4]}}
         ins(%a, %b : tensor<512x256xf32>, tensor<256x384xf32>) outs(%acc : tensor<512x384xf32>) -> tensor<512x384xf32>
  return %c : tensor<512x384xf32>
}

// -----

// 128-bit shared-memory fragments, padded A tile, unrolled K step, FMA, vector stores of C.
// expected-remark @below {{evo-verify: 'matmul_vec' is valid (5 trials, }}
func.func @matmul_vec(%a: tensor<512x256xf32>, %b: tensor<256x384xf32>) -> tensor<512x384xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<512x384xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<512x384xf32>) -> tensor<512x384xf32>
  %c = linalg.matmul {evo.knobs = {tile_sizes = [128, 128, 8], thread_tile = [8, 8], vector_width = 4}}
         ins(%a, %b : tensor<512x256xf32>, tensor<256x384xf32>) outs(%acc : tensor<512x384xf32>) -> tensor<512x384xf32>
  return %c : tensor<512x384xf32>
}

// -----

// ... with the next K tile prefetched into registers (K = 264: 33 tiles of 8).
// expected-remark @below {{evo-verify: 'matmul_prefetch' is valid (5 trials, }}
func.func @matmul_prefetch(%a: tensor<256x264xf32>, %b: tensor<264x384xf32>) -> tensor<256x384xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x384xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<256x384xf32>) -> tensor<256x384xf32>
  %c = linalg.matmul {evo.knobs = {tile_sizes = [128, 128, 8], thread_tile = [8, 8], vector_width = 4, prefetch = 1}}
         ins(%a, %b : tensor<256x264xf32>, tensor<264x384xf32>) outs(%acc : tensor<256x384xf32>) -> tensor<256x384xf32>
  return %c : tensor<256x384xf32>
}

// -----

// A convolution as an implicit GEMM (filter x image columns), with prefetch.
// expected-remark @below {{evo-verify: 'conv_gemm' is valid (5 trials, }}
func.func @conv_gemm(%x: tensor<4x32x34x34xf32>, %w: tensor<64x32x3x3xf32>) -> tensor<4x64x32x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x64x32x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x64x32x32xf32>) -> tensor<4x64x32x32xf32>
  %r = linalg.conv_2d_nchw_fchw {evo.knobs = {tile_sizes = [64, 128, 8], thread_tile = [4, 8], vector_width = 4, prefetch = 1}}
         ins(%x, %w : tensor<4x32x34x34xf32>, tensor<64x32x3x3xf32>)
         outs(%acc : tensor<4x64x32x32xf32>) -> tensor<4x64x32x32xf32>
  return %r : tensor<4x64x32x32xf32>
}

// -----

// The same schedule on f16 operands (64-bit fragments) with a batch dimension.
// expected-remark @below {{evo-verify: 'bmm_f16_vec' is valid (5 trials, }}
func.func @bmm_f16_vec(%a: tensor<4x128x256xf16>, %b: tensor<4x256x128xf16>) -> tensor<4x128x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x128x128xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x128x128xf32>) -> tensor<4x128x128xf32>
  %c = linalg.batch_matmul {evo.knobs = {tile_sizes = [64, 64, 16], thread_tile = [4, 4], vector_width = 4, prefetch = 1}}
         ins(%a, %b : tensor<4x128x256xf16>, tensor<4x256x128xf16>)
         outs(%acc : tensor<4x128x128xf32>) -> tensor<4x128x128xf32>
  return %c : tensor<4x128x128xf32>
}

// -----

// f16 operands, f32 accumulation: checked at f32's tolerance.
// expected-remark @below {{evo-verify: 'bmm_f16' is valid (5 trials, }}
func.func @bmm_f16(%a: tensor<4x128x256xf16>, %b: tensor<4x256x128xf16>) -> tensor<4x128x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x128x128xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x128x128xf32>) -> tensor<4x128x128xf32>
  %c = linalg.batch_matmul ins(%a, %b : tensor<4x128x256xf16>, tensor<4x256x128xf16>)
                           outs(%acc : tensor<4x128x128xf32>) -> tensor<4x128x128xf32>
  return %c : tensor<4x128x128xf32>
}

// -----

// bf16 elementwise with a broadcast bias.
// expected-remark @below {{evo-verify: 'add_bf16' is valid (5 trials, }}
func.func @add_bf16(%x: tensor<512x1024xbf16>, %b: tensor<1024xbf16>) -> tensor<512x1024xbf16> {
  %e = tensor.empty() : tensor<512x1024xbf16>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      {evo.knobs = {vector_width = 8}}
      ins(%x, %b : tensor<512x1024xbf16>, tensor<1024xbf16>) outs(%e : tensor<512x1024xbf16>) {
  ^bb0(%u: bf16, %v: bf16, %o: bf16):
    %s = arith.addf %u, %v : bf16
    linalg.yield %s : bf16
  } -> tensor<512x1024xbf16>
  return %r : tensor<512x1024xbf16>
}

// -----

// Integers are compared exactly.
// expected-remark @below {{evo-verify: 'muladd_i32' is valid (5 trials, }}
func.func @muladd_i32(%a: tensor<1000x1000xi32>, %b: tensor<1000x1000xi32>) -> tensor<1000x1000xi32> {
  %e = tensor.empty() : tensor<1000x1000xi32>
  %m = arith.muli %a, %b : tensor<1000x1000xi32>
  %r = arith.addi %m, %a : tensor<1000x1000xi32>
  return %r : tensor<1000x1000xi32>
}

// -----

// log needs positive inputs: the argument's evo.range says so.
// expected-remark @below {{evo-verify: 'log_sqrt' is valid (5 trials, }}
func.func @log_sqrt(%x: tensor<2048x2048xf32> {evo.range = [0.01, 100.0]}) -> tensor<2048x2048xf32> {
  %l = math.log %x : tensor<2048x2048xf32>
  %s = math.sqrt %x : tensor<2048x2048xf32>
  %r = arith.addf %l, %s : tensor<2048x2048xf32>
  return %r : tensor<2048x2048xf32>
}

// -----

// One task: the relu is the matmul kernel's epilogue (no scratch buffer).
// expected-remark @below {{evo-verify: 'mm_relu' is valid (5 trials, }}
func.func @mm_relu(%a: tensor<256x64xf32>, %b: tensor<64x128xf32>) -> tensor<256x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x128xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<256x128xf32>) -> tensor<256x128xf32>
  %c = linalg.matmul ins(%a, %b : tensor<256x64xf32>, tensor<64x128xf32>) outs(%acc : tensor<256x128xf32>) -> tensor<256x128xf32>
  %r = linalg.max ins(%c, %acc : tensor<256x128xf32>, tensor<256x128xf32>) outs(%e : tensor<256x128xf32>) -> tensor<256x128xf32>
  return %r : tensor<256x128xf32>
}

// -----

// Fused epilogue on the tiled SIMT schedule: f16 operands, f32 accumulation, bias + tanh-GELU in
// f32 on the accumulators, rounded once to the f16 result, stored 4 columns at a time; checked
// against the oracle and the naive baseline (which rounds the dot product to f16 and runs the
// epilogue in f16, as the unfused ops would).
// expected-remark @below {{evo-verify: 'mm_bias_gelu_tiled' is valid (5 trials, }}
func.func @mm_bias_gelu_tiled(%a: tensor<256x192xf16>, %b: tensor<192x320xf16>, %bias: tensor<320xf16>) -> tensor<256x320xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<256x320xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%e : tensor<256x320xf16>) -> tensor<256x320xf16>
  %c = linalg.matmul {evo.knobs = {tile_sizes = [64, 64, 16], thread_tile = [4, 4], vector_width = 4}}
         ins(%a, %b : tensor<256x192xf16>, tensor<192x320xf16>) outs(%acc : tensor<256x320xf16>) -> tensor<256x320xf16>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%c, %bias : tensor<256x320xf16>, tensor<320xf16>) outs(%e : tensor<256x320xf16>) {
  ^bb0(%v: f16, %bv: f16, %o: f16):
    %half = arith.constant 0.5 : f16
    %one = arith.constant 1.0 : f16
    %k0 = arith.constant 0.7978845608028654 : f16
    %k1 = arith.constant 0.044715 : f16
    %x = arith.addf %v, %bv : f16
    %x2 = arith.mulf %x, %x : f16
    %x3 = arith.mulf %x2, %x : f16
    %t0 = arith.mulf %x3, %k1 : f16
    %t1 = arith.addf %x, %t0 : f16
    %t2 = arith.mulf %t1, %k0 : f16
    %t3 = math.tanh %t2 : f16
    %t4 = arith.addf %t3, %one : f16
    %h = arith.mulf %x, %half : f16
    %r = arith.mulf %h, %t4 : f16
    linalg.yield %r : f16
  } -> tensor<256x320xf16>
  return %y : tensor<256x320xf16>
}

// -----

// A batched f32 matmul with a residual and a scale, and a convolution with a per-channel bias
// and relu: fused epilogues on the tiled schedule (implicit GEMM for the convolution).
// expected-remark @below {{evo-verify: 'bmm_residual_scale' is valid (5 trials, }}
func.func @bmm_residual_scale(%a: tensor<3x128x64xf32>, %b: tensor<3x64x192xf32>, %res: tensor<3x128x192xf32>) -> tensor<3x128x192xf32> {
  %zero = arith.constant 0.0 : f32
  %scale = arith.constant dense<0.125> : tensor<3x128x192xf32>
  %e = tensor.empty() : tensor<3x128x192xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<3x128x192xf32>) -> tensor<3x128x192xf32>
  %c = linalg.batch_matmul {evo.knobs = {tile_sizes = [64, 64, 16], thread_tile = [4, 4], vector_width = 4, prefetch = 1}}
         ins(%a, %b : tensor<3x128x64xf32>, tensor<3x64x192xf32>) outs(%acc : tensor<3x128x192xf32>) -> tensor<3x128x192xf32>
  %s = arith.addf %c, %res : tensor<3x128x192xf32>
  %y = arith.mulf %s, %scale : tensor<3x128x192xf32>
  return %y : tensor<3x128x192xf32>
}

// -----

// expected-remark @below {{evo-verify: 'conv_bias_relu' is valid (5 trials, }}
func.func @conv_bias_relu(%x: tensor<2x16x34x34xf32>, %w: tensor<64x16x3x3xf32>, %bias: tensor<64xf32>) -> tensor<2x64x32x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x64x32x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x64x32x32xf32>) -> tensor<2x64x32x32xf32>
  %c = linalg.conv_2d_nchw_fchw {evo.knobs = {tile_sizes = [64, 128, 8], thread_tile = [4, 8], vector_width = 4}}
         ins(%x, %w : tensor<2x16x34x34xf32>, tensor<64x16x3x3xf32>) outs(%acc : tensor<2x64x32x32xf32>) -> tensor<2x64x32x32xf32>
  %bb = linalg.broadcast ins(%bias : tensor<64xf32>) outs(%e : tensor<2x64x32x32xf32>) dimensions = [0, 2, 3]
  %s = linalg.add ins(%c, %bb : tensor<2x64x32x32xf32>, tensor<2x64x32x32xf32>) outs(%e : tensor<2x64x32x32xf32>) -> tensor<2x64x32x32xf32>
  %r = linalg.max ins(%s, %acc : tensor<2x64x32x32xf32>, tensor<2x64x32x32xf32>) outs(%e : tensor<2x64x32x32xf32>) -> tensor<2x64x32x32xf32>
  return %r : tensor<2x64x32x32xf32>
}
