// evo-verify on the Hopper tensor-core schedule (wgmma fed by TMA): each function lowered with
// wgmma, compiled for sm_90a, and proven equal to the oracle and the naive baseline on the GPU.
// Odd sizes (TMA fills the edges with zeros, the stores are guarded), a K shorter than one tile,
// bf16 with B given as [n][k], a result accumulated onto an input, and batches; fused epilogues
// (bias + tanh-GELU in f16 at odd sizes; a residual, SiLU and a cast to bf16), applied in f32 to
// the accumulators and checked against the naive baseline, which runs them in the declared types.
// Convolutions as implicit GEMMs (NHWC images, HWCF and FHWC filters, odd output extents, a
// 72-channel image, a 1x1 window with a fused bias + ReLU) and persistent grids.
//
// REQUIRES: cuda-sm90a
// RUN: rm -rf %t && mkdir -p %t
// RUN: evo-opt %s -split-input-file --evo-pipeline="output-dir=%t chip=sm_90a tile-sizes=128,128,64 wgmma=1 stages=4" \
// RUN:   --evo-verify="runs=5 output=%t/verify.json" -o /dev/null
// RUN: evo-opt %s -split-input-file --evo-pipeline="output-dir=%t/n256 chip=sm_90a tile-sizes=128,256,64 wgmma=1 stages=3" \
// RUN:   --evo-verify="runs=5" -o /dev/null
// RUN: evo-opt %s -split-input-file --evo-pipeline="output-dir=%t/m64 chip=sm_90a tile-sizes=64,64,64 wgmma=1 stages=2" \
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

// Convolutions as implicit GEMMs (4-d image boxes per filter tap): output rows and columns that
// are not multiples of the pixel rectangle, an FHWC filter (K-major B).

func.func @conv_fhwc_f16(%x: tensor<2x30x20x64xf16>, %w: tensor<96x3x3x64xf16>) -> tensor<2x28x18x96xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<2x28x18x96xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%e : tensor<2x28x18x96xf16>) -> tensor<2x28x18x96xf16>
  %r = linalg.conv_2d_nhwc_fhwc ins(%x, %w : tensor<2x30x20x64xf16>, tensor<96x3x3x64xf16>) outs(%acc : tensor<2x28x18x96xf16>) -> tensor<2x28x18x96xf16>
  return %r : tensor<2x28x18x96xf16>
}

// -----

// An HWCF filter (MN-major B), 72 input channels (the second channel tile is mostly zeros from
// TMA, never the next tap's), fewer output channels than the N tile, a 5x3 window, f32 result.

func.func @conv_hwcf_bf16(%x: tensor<3x17x19x72xbf16>, %w: tensor<5x3x72x40xbf16>) -> tensor<3x13x17x40xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x13x17x40xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<3x13x17x40xf32>) -> tensor<3x13x17x40xf32>
  %r = linalg.conv_2d_nhwc_hwcf ins(%x, %w : tensor<3x17x19x72xbf16>, tensor<5x3x72x40xbf16>) outs(%acc : tensor<3x13x17x40xf32>) -> tensor<3x13x17x40xf32>
  return %r : tensor<3x13x17x40xf32>
}

// -----

// A 1x1 convolution with 8 input channels, then bias + ReLU fused into its epilogue.

func.func @conv1x1_bias_relu_f16(%x: tensor<4x9x33x8xf16>, %w: tensor<136x1x1x8xf16>, %bias: tensor<136xf16>) -> tensor<4x9x33x136xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<4x9x33x136xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%e : tensor<4x9x33x136xf16>) -> tensor<4x9x33x136xf16>
  %c = linalg.conv_2d_nhwc_fhwc ins(%x, %w : tensor<4x9x33x8xf16>, tensor<136x1x1x8xf16>) outs(%acc : tensor<4x9x33x136xf16>) -> tensor<4x9x33x136xf16>
  %y = linalg.generic {indexing_maps = [affine_map<(n, p, q, f) -> (n, p, q, f)>, affine_map<(n, p, q, f) -> (f)>, affine_map<(n, p, q, f) -> (n, p, q, f)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c, %bias : tensor<4x9x33x136xf16>, tensor<136xf16>) outs(%e : tensor<4x9x33x136xf16>) {
    ^bb0(%v: f16, %bv: f16, %o: f16):
      %s = arith.addf %v, %bv : f16
      %z = arith.constant 0.0 : f16
      %m = arith.maximumf %s, %z : f16
      linalg.yield %m : f16
  } -> tensor<4x9x33x136xf16>
  return %y : tensor<4x9x33x136xf16>
}

// -----

// Persistent grids: 5 blocks over 2 x 4 x 3 tiles (the blocks take different numbers of tiles;
// the ring's stages and phases continue across them), and a convolution's 24 pixel tiles on 7
// blocks.

func.func @bmm_persistent(%a: tensor<3x500x256xf16>, %b: tensor<3x256x520xf16>) -> tensor<3x500x520xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x500x520xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<3x500x520xf32>) -> tensor<3x500x520xf32>
  %c = linalg.batch_matmul {evo.knobs = {persistent = 5}} ins(%a, %b : tensor<3x500x256xf16>, tensor<3x256x520xf16>) outs(%acc : tensor<3x500x520xf32>) -> tensor<3x500x520xf32>
  return %c : tensor<3x500x520xf32>
}

// -----

func.func @conv_persistent(%x: tensor<2x30x20x64xf16>, %w: tensor<96x3x3x64xf16>) -> tensor<2x28x18x96xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<2x28x18x96xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%e : tensor<2x28x18x96xf16>) -> tensor<2x28x18x96xf16>
  %r = linalg.conv_2d_nhwc_fhwc {evo.knobs = {persistent = 7}} ins(%x, %w : tensor<2x30x20x64xf16>, tensor<96x3x3x64xf16>) outs(%acc : tensor<2x28x18x96xf16>) -> tensor<2x28x18x96xf16>
  return %r : tensor<2x28x18x96xf16>
}
