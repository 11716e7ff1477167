// Knobs the wgmma schedule of evo-lower-to-gpu refuses, each with a diagnostic at the op.

// RUN: evo-opt %s -split-input-file -verify-diagnostics -evo-lower-to-gpu="tile-sizes=128,128,64 wgmma=1 stages=4"

// f32 operands have no wgmma schedule by default (TF32 would change the numbers): only with
// f32-matmul=tf32 or 3xtf32 (lower-to-gpu-f32-matmul.mlir).

func.func @matmul_f32(%a: tensor<256x512xf32>, %b: tensor<512x384xf32>) -> tensor<256x384xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x384xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<256x384xf32>) -> tensor<256x384xf32>
  // expected-error @+1 {{wgmma with tile_sizes=128,128,64: f32 operands reach tensor cores only as TF32: pass f32-matmul=tf32 or f32-matmul=3xtf32}}
  %c = linalg.matmul ins(%a, %b : tensor<256x512xf32>, tensor<512x384xf32>) outs(%acc : tensor<256x384xf32>) -> tensor<256x384xf32>
  return %c : tensor<256x384xf32>
}

// -----
// TMA needs 16-byte row strides.

func.func @odd_k(%a: tensor<256x100xf16>, %b: tensor<100x384xf16>) -> tensor<256x384xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<256x384xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%e : tensor<256x384xf16>) -> tensor<256x384xf16>
  // expected-error @+1 {{TMA needs rows of a multiple of 16 bytes (K and N a multiple of 8), got M=256 N=384 K=100}}
  %c = linalg.matmul ins(%a, %b : tensor<256x100xf16>, tensor<100x384xf16>) outs(%acc : tensor<256x384xf16>) -> tensor<256x384xf16>
  return %c : tensor<256x384xf16>
}

// -----
// A K tile other than 64, and a transposed A, are refused.

func.func @bad_tile(%a: tensor<256x512xf16>, %b: tensor<512x384xf16>) -> tensor<256x384xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<256x384xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%e : tensor<256x384xf16>) -> tensor<256x384xf16>
  // expected-error @+1 {{wgmma with tile_sizes=128,128,32: the K tile must be 64 (one 128-byte swizzled row of 'f16')}}
  %c = linalg.matmul {evo.knobs = {tile_sizes = [128, 128, 32]}} ins(%a, %b : tensor<256x512xf16>, tensor<512x384xf16>) outs(%acc : tensor<256x384xf16>) -> tensor<256x384xf16>
  return %c : tensor<256x384xf16>
}

// -----
func.func @a_transposed(%a: tensor<512x256xf16>, %b: tensor<512x384xf16>) -> tensor<256x384xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<256x384xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%e : tensor<256x384xf16>) -> tensor<256x384xf16>
  // expected-error @+1 {{needs A laid out [batch][m][k] (K contiguous)}}
  %c = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>] ins(%a, %b : tensor<512x256xf16>, tensor<512x384xf16>) outs(%acc : tensor<256x384xf16>) -> tensor<256x384xf16>
  return %c : tensor<256x384xf16>
}

// -----
// Convolutions: NCHW images and channel counts TMA cannot stride are refused.

func.func @conv_nchw(%x: tensor<1x64x34x34xf16>, %w: tensor<64x64x3x3xf16>) -> tensor<1x64x32x32xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<1x64x32x32xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%e : tensor<1x64x32x32xf16>) -> tensor<1x64x32x32xf16>
  // expected-error @+1 {{needs a matmul-like contraction, or a 2-d convolution with an NHWC image}}
  %r = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x64x34x34xf16>, tensor<64x64x3x3xf16>) outs(%acc : tensor<1x64x32x32xf16>) -> tensor<1x64x32x32xf16>
  return %r : tensor<1x64x32x32xf16>
}

// -----
func.func @conv_three_channels(%x: tensor<1x34x34x3xf16>, %w: tensor<64x3x3x3xf16>) -> tensor<1x32x32x64xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<1x32x32x64xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%e : tensor<1x32x32x64xf16>) -> tensor<1x32x32x64xf16>
  // expected-error @+1 {{TMA needs rows of a multiple of 16 bytes (input channels a multiple of 8), got C=3 F=64}}
  %r = linalg.conv_2d_nhwc_fhwc ins(%x, %w : tensor<1x34x34x3xf16>, tensor<64x3x3x3xf16>) outs(%acc : tensor<1x32x32x64xf16>) -> tensor<1x32x32x64xf16>
  return %r : tensor<1x32x32x64xf16>
}
