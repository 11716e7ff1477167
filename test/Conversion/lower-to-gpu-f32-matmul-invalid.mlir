// f32 contractions on tensor cores are an opt-in (f32-matmul=tf32 or 3xtf32): what the wgmma
// schedule refuses for f32 operands, each with a diagnostic at the op (lib/Conversion/EmitWgmma.cpp).

// RUN: evo-opt %s -split-input-file -verify-diagnostics -evo-lower-to-gpu="f32-matmul=tf32 tile-sizes=128,128,32 wgmma=1 stages=4"

// Without the option f32 stays f32: wgmma on f32 operands is refused, naming the option.

func.func @ieee_by_knobs(%a: tensor<256x512xf32>, %w: tensor<384x512xf32>) -> tensor<256x384xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x384xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<256x384xf32>) -> tensor<256x384xf32>
  // expected-error @+1 {{wgmma with tile_sizes=128,128,32: f32 operands reach tensor cores only as TF32: pass f32-matmul=tf32 or f32-matmul=3xtf32}}
  %c = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"], evo.knobs = {f32_matmul = "ieee"}} ins(%a, %w : tensor<256x512xf32>, tensor<384x512xf32>) outs(%acc : tensor<256x384xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<256x384xf32>
  return %c : tensor<256x384xf32>
}

// -----
// TF32 wgmma reads both operands K-major: B[k][n] (linalg.matmul's own layout) is refused.

func.func @b_mn_major(%a: tensor<256x512xf32>, %b: tensor<512x384xf32>) -> tensor<256x384xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x384xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<256x384xf32>) -> tensor<256x384xf32>
  // expected-error @+1 {{wgmma with tile_sizes=128,128,32: f32-matmul=tf32 needs B K-contiguous ([batch][n][k], x @ W^T as nn.Linear stores W; a convolution's filter FHWC): TF32 wgmma reads both operands K-major and cannot transpose B [k][n]}}
  %c = linalg.matmul ins(%a, %b : tensor<256x512xf32>, tensor<512x384xf32>) outs(%acc : tensor<256x384xf32>) -> tensor<256x384xf32>
  return %c : tensor<256x384xf32>
}

// -----
// The same for 3xTF32, and for a convolution's HWCF filter (B [k][n]).

func.func @conv_hwcf(%x: tensor<1x18x18x64xf32>, %w: tensor<3x3x64x128xf32>) -> tensor<1x16x16x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x16x16x128xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x16x16x128xf32>) -> tensor<1x16x16x128xf32>
  // expected-error @+1 {{f32-matmul=3xtf32 needs B K-contiguous}}
  %c = linalg.conv_2d_nhwc_hwcf {evo.knobs = {f32_matmul = "3xtf32", stages = 2 : i64}, dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x18x18x64xf32>, tensor<3x3x64x128xf32>) outs(%acc : tensor<1x16x16x128xf32>) -> tensor<1x16x16x128xf32>
  return %c : tensor<1x16x16x128xf32>
}

// -----
// The K tile is one 128-byte row: 32 f32 elements.

func.func @k_tile_64(%a: tensor<256x512xf32>, %w: tensor<384x512xf32>) -> tensor<256x384xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x384xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<256x384xf32>) -> tensor<256x384xf32>
  // expected-error @+1 {{wgmma with tile_sizes=128,128,64: the K tile must be 32 (one 128-byte swizzled row of 'f32')}}
  %c = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"], evo.knobs = {tile_sizes = [128, 128, 64]}} ins(%a, %w : tensor<256x512xf32>, tensor<384x512xf32>) outs(%acc : tensor<256x384xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<256x384xf32>
  return %c : tensor<256x384xf32>
}

// -----
// TMA rows are multiples of 16 bytes: K a multiple of 4 f32.

func.func @odd_k(%a: tensor<256x510xf32>, %w: tensor<384x510xf32>) -> tensor<256x384xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x384xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<256x384xf32>) -> tensor<256x384xf32>
  // expected-error @+1 {{TMA needs rows of a multiple of 16 bytes (K a multiple of 4), got M=256 N=384 K=510}}
  %c = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %w : tensor<256x510xf32>, tensor<384x510xf32>) outs(%acc : tensor<256x384xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<256x384xf32>
  return %c : tensor<256x384xf32>
}

// -----
// A 3xTF32 stage holds the operands and their remainders: 4 stages of 128x128 pass 227 KiB.

func.func @x3_stages(%a: tensor<256x512xf32>, %w: tensor<384x512xf32>) -> tensor<256x384xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x384xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<256x384xf32>) -> tensor<256x384xf32>
  // expected-error @+1 {{wgmma with tile_sizes=128,128,32: stages=4 needs 263232 bytes of shared memory (limit 232448)}}
  %c = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"], evo.knobs = {f32_matmul = "3xtf32"}} ins(%a, %w : tensor<256x512xf32>, tensor<384x512xf32>) outs(%acc : tensor<256x384xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<256x384xf32>
  return %c : tensor<256x384xf32>
}

// -----
// An unknown mode is an error of the knob, never a silent default.

func.func @bad_mode(%a: tensor<256x512xf32>, %w: tensor<384x512xf32>) -> tensor<256x384xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x384xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<256x384xf32>) -> tensor<256x384xf32>
  // expected-error @+1 {{knob 'f32_matmul' must be "ieee", "tf32" or "3xtf32"}}
  %c = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"], evo.knobs = {f32_matmul = "tf16"}} ins(%a, %w : tensor<256x512xf32>, tensor<384x512xf32>) outs(%acc : tensor<256x384xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<256x384xf32>
  return %c : tensor<256x384xf32>
}
