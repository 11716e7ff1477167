// Knobs and operands the mma.sync schedule of evo-lower-to-gpu refuses, each with a diagnostic at
// the op.

// RUN: evo-opt %s -split-input-file -verify-diagnostics -evo-lower-to-gpu="tile-sizes=128,128,32 mma-sync=1 stages=4"
// RUN: not evo-opt %s -split-input-file -evo-lower-to-gpu="tile-sizes=256,256,32 mma-sync=1 stages=3" 2>&1 | FileCheck %s --check-prefix=WARPS
// RUN: not evo-opt %s -split-input-file -evo-lower-to-gpu="tile-sizes=128,128,16 mma-sync=1" 2>&1 | FileCheck %s --check-prefix=KTILE
// RUN: not evo-opt %s -split-input-file -evo-lower-to-gpu="tile-sizes=128,128,64 mma-sync=1 wgmma=1" 2>&1 | FileCheck %s --check-prefix=BOTH
// RUN: not evo-opt %s -split-input-file -evo-lower-to-gpu="tile-sizes=256,128,64 mma-sync=1 stages=8" 2>&1 | FileCheck %s --check-prefix=SMEM
// WARPS: needs 16 warps of 64 x 64 (at most 8
// KTILE: mma_sync with tile_sizes=128,128,16: the K tile must be 32 or 64
// BOTH: wgmma and mma_sync are two tensor-core schedules: set one
// SMEM: mma_sync with tile_sizes=256,128,64: stages=8 needs 393344 bytes of shared memory (limit 232448)

// f32 operands: mma.sync here multiplies f16 or bf16 only (f32 stays f32).

func.func @matmul_f32(%a: tensor<256x512xf32>, %b: tensor<512x384xf32>) -> tensor<256x384xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x384xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<256x384xf32>) -> tensor<256x384xf32>
  // expected-error @+1 {{mma_sync with tile_sizes=128,128,32: needs f16 or bf16 operands of one type, got 'f32' and 'f32'}}
  %c = linalg.matmul ins(%a, %b : tensor<256x512xf32>, tensor<512x384xf32>) outs(%acc : tensor<256x384xf32>) -> tensor<256x384xf32>
  return %c : tensor<256x384xf32>
}

// -----
// cp.async copies 16-byte chunks: K (and N where B is N-contiguous) a multiple of 8.

func.func @odd_k(%a: tensor<256x100xf16>, %b: tensor<100x384xf16>) -> tensor<256x384xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<256x384xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%e : tensor<256x384xf16>) -> tensor<256x384xf16>
  // expected-error @+1 {{cp.async needs rows of a multiple of 16 bytes (K and N a multiple of 8), got M=256 N=384 K=100}}
  %c = linalg.matmul ins(%a, %b : tensor<256x100xf16>, tensor<100x384xf16>) outs(%acc : tensor<256x384xf16>) -> tensor<256x384xf16>
  return %c : tensor<256x384xf16>
}

// -----
// A transposed A ([k][m]) is refused: ldmatrix reads A's rows along K.

func.func @a_transposed(%a: tensor<512x256xf16>, %b: tensor<512x384xf16>) -> tensor<256x384xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x384xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<256x384xf32>) -> tensor<256x384xf32>
  // expected-error @+1 {{mma_sync with tile_sizes=128,128,32: needs A laid out [batch][m][k] (K contiguous)}}
  %c = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : tensor<512x256xf16>, tensor<512x384xf16>) outs(%acc : tensor<256x384xf32>) {
  ^bb0(%x: f16, %y: f16, %o: f32):
    %xe = arith.extf %x : f16 to f32
    %ye = arith.extf %y : f16 to f32
    %p = arith.mulf %xe, %ye : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<256x384xf32>
  return %c : tensor<256x384xf32>
}

// -----
// Convolutions have no mma.sync schedule (wgmma on sm_90a, or the SIMT implicit GEMM).

func.func @conv(%x: tensor<1x18x18x64xf16>, %w: tensor<3x3x64x64xf16>) -> tensor<1x16x16x64xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<1x16x16x64xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%e : tensor<1x16x16x64xf16>) -> tensor<1x16x16x64xf16>
  // expected-error @+1 {{needs a contraction with one M, N and K dimension and at most one batch dimension (convolutions: wgmma on sm_90a, or the SIMT schedule)}}
  %c = linalg.conv_2d_nhwc_hwcf ins(%x, %w : tensor<1x18x18x64xf16>, tensor<3x3x64x64xf16>) outs(%acc : tensor<1x16x16x64xf16>) -> tensor<1x16x16x64xf16>
  return %c : tensor<1x16x16x64xf16>
}
