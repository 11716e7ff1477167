// evo-verify on the portable tensor-core schedule (mma.sync m16n8k16 fed by cp.async, ldmatrix
// fragments): each function lowered with mma_sync, compiled for sm_80 (PTX the driver runs on any
// newer GPU), and proven equal to the oracle and the naive baseline on the GPU. Odd sizes (cp.async
// zero-fills the chunks past M, N and K; the stores are guarded), a K shorter than one tile, bf16
// with B given as [n][k] (ldmatrix without .trans), a result accumulated onto an input, batches,
// and fused epilogues (bias + tanh-GELU in f16 at odd sizes; a residual, SiLU and a cast to
// bf16). Four tilings: 64 x 64 warps over 2 x 2 and 2 x 4 of them, 32-row and 32-column tiles
// (64-byte swizzled rows), K tiles of 32 and 64, two to five stages.
//
// REQUIRES: cuda-sm80
// RUN: rm -rf %t && mkdir -p %t
// RUN: evo-opt %s -split-input-file --evo-pipeline="output-dir=%t chip=sm_80 tile-sizes=128,128,32 mma-sync=1 stages=4" \
// RUN:   --evo-verify="runs=5 output=%t/verify.json" -o /dev/null
// RUN: evo-opt %s -split-input-file --evo-pipeline="output-dir=%t/n256 chip=sm_80 tile-sizes=128,256,64 mma-sync=1 stages=3" \
// RUN:   --evo-verify="runs=5" -o /dev/null
// RUN: evo-opt %s -split-input-file --evo-pipeline="output-dir=%t/m32 chip=sm_80 tile-sizes=32,64,32 mma-sync=1 stages=2" \
// RUN:   --evo-verify="runs=5" -o /dev/null
// RUN: evo-opt %s -split-input-file --evo-pipeline="output-dir=%t/n32 chip=sm_80 tile-sizes=256,32,64 mma-sync=1 stages=5" \
// RUN:   --evo-verify="runs=5" -o /dev/null

func.func @odd_f16(%a: tensor<1000x1000xf16>, %b: tensor<1000x1000xf16>) -> tensor<1000x1000xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<1000x1000xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%e : tensor<1000x1000xf16>) -> tensor<1000x1000xf16>
  %c = linalg.matmul ins(%a, %b : tensor<1000x1000xf16>, tensor<1000x1000xf16>) outs(%acc : tensor<1000x1000xf16>) -> tensor<1000x1000xf16>
  return %c : tensor<1000x1000xf16>
}

// -----

func.func @short_k(%a: tensor<256x40xf16>, %b: tensor<40x520xf16>) -> tensor<256x520xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x520xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<256x520xf32>) -> tensor<256x520xf32>
  %c = linalg.matmul ins(%a, %b : tensor<256x40xf16>, tensor<40x520xf16>) outs(%acc : tensor<256x520xf32>) -> tensor<256x520xf32>
  return %c : tensor<256x520xf32>
}

// -----

func.func @bmm_nt_bf16(%a: tensor<3x250x512xbf16>, %b: tensor<3x300x512xbf16>) -> tensor<3x250x300xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x250x300xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<3x250x300xf32>) -> tensor<3x250x300xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%a, %b : tensor<3x250x512xbf16>, tensor<3x300x512xbf16>) outs(%acc : tensor<3x250x300xf32>) {
  ^bb0(%x: bf16, %y: bf16, %o: f32):
    %xe = arith.extf %x : bf16 to f32
    %ye = arith.extf %y : bf16 to f32
    %p = arith.mulf %xe, %ye : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<3x250x300xf32>
  return %c : tensor<3x250x300xf32>
}

// -----

func.func @accumulate_bf16(%a: tensor<384x256xbf16>, %b: tensor<256x640xbf16>, %c0: tensor<384x640xbf16>) -> tensor<384x640xbf16> {
  %c = linalg.matmul ins(%a, %b : tensor<384x256xbf16>, tensor<256x640xbf16>) outs(%c0 : tensor<384x640xbf16>) -> tensor<384x640xbf16>
  return %c : tensor<384x640xbf16>
}

// -----

func.func @bmm_f16(%a: tensor<4x512x256xf16>, %b: tensor<4x256x384xf16>) -> tensor<4x512x384xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<4x512x384xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%e : tensor<4x512x384xf16>) -> tensor<4x512x384xf16>
  %c = linalg.batch_matmul ins(%a, %b : tensor<4x512x256xf16>, tensor<4x256x384xf16>) outs(%acc : tensor<4x512x384xf16>) -> tensor<4x512x384xf16>
  return %c : tensor<4x512x384xf16>
}

// -----

func.func @bias_gelu_f16(%a: tensor<1000x512xf16>, %b: tensor<512x1000xf16>, %bias: tensor<1000xf16>) -> tensor<1000x1000xf16> {
  %zero = arith.constant 0.0 : f16
  %half = arith.constant dense<0.5> : tensor<1000x1000xf16>
  %one = arith.constant dense<1.0> : tensor<1000x1000xf16>
  %k0 = arith.constant dense<0.7978845608> : tensor<1000x1000xf16>
  %k1 = arith.constant dense<0.044715> : tensor<1000x1000xf16>
  %e = tensor.empty() : tensor<1000x1000xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%e : tensor<1000x1000xf16>) -> tensor<1000x1000xf16>
  %c = linalg.matmul ins(%a, %b : tensor<1000x512xf16>, tensor<512x1000xf16>) outs(%acc : tensor<1000x1000xf16>) -> tensor<1000x1000xf16>
  %bb = linalg.broadcast ins(%bias : tensor<1000xf16>) outs(%e : tensor<1000x1000xf16>) dimensions = [0]
  %x = arith.addf %c, %bb : tensor<1000x1000xf16>
  %x2 = arith.mulf %x, %x : tensor<1000x1000xf16>
  %x3 = arith.mulf %x2, %x : tensor<1000x1000xf16>
  %t0 = arith.mulf %x3, %k1 : tensor<1000x1000xf16>
  %t1 = arith.addf %x, %t0 : tensor<1000x1000xf16>
  %t2 = arith.mulf %t1, %k0 : tensor<1000x1000xf16>
  %t3 = math.tanh %t2 : tensor<1000x1000xf16>
  %t4 = arith.addf %t3, %one : tensor<1000x1000xf16>
  %h = arith.mulf %x, %half : tensor<1000x1000xf16>
  %y = arith.mulf %h, %t4 : tensor<1000x1000xf16>
  return %y : tensor<1000x1000xf16>
}

// -----

func.func @residual_silu_bf16(%a: tensor<384x256xbf16>, %b: tensor<256x640xbf16>, %res: tensor<384x640xf32>) -> tensor<384x640xbf16> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<384x640xf32>
  %e16 = tensor.empty() : tensor<384x640xbf16>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<384x640xf32>) -> tensor<384x640xf32>
  %c = linalg.matmul ins(%a, %b : tensor<384x256xbf16>, tensor<256x640xbf16>) outs(%acc : tensor<384x640xf32>) -> tensor<384x640xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%c, %res : tensor<384x640xf32>, tensor<384x640xf32>) outs(%e16 : tensor<384x640xbf16>) {
  ^bb0(%v: f32, %r: f32, %o: bf16):
    %one = arith.constant 1.0 : f32
    %x = arith.addf %v, %r : f32
    %n = arith.negf %x : f32
    %ex = math.exp %n : f32
    %d = arith.addf %one, %ex : f32
    %s = arith.divf %x, %d : f32
    %t = arith.truncf %s : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<384x640xbf16>
  return %y : tensor<384x640xbf16>
}

// -----

// An odd N with B K-major ([n][k], as nn.Linear stores W): the accumulator pairs straddle the
// last column, so they are stored one by one; M not a multiple of 8 either.

func.func @linear_odd_f16(%x: tensor<203x72xf16>, %w: tensor<301x72xf16>) -> tensor<203x301xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<203x301xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%e : tensor<203x301xf16>) -> tensor<203x301xf16>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
         ins(%x, %w : tensor<203x72xf16>, tensor<301x72xf16>) outs(%acc : tensor<203x301xf16>) -> tensor<203x301xf16>
  return %y : tensor<203x301xf16>
}
