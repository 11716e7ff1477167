// evo-verify on the few-row form of mma_sync (tile_sizes = [8 or 16, 16, BK]: y = x W^T with W
// streamed into mma.sync fragments, the K order permuted inside each 32-element chunk the same
// way for W and x): odd N (a partial 16-row block), fewer rows than the tile (3 of 8), 16 rows
// over two 8-row tiles, K not a multiple of 32 (zero chunks past K) and K of one 8-element chunk,
// bf16, a batch dimension, and fused epilogues (bias + ReLU into f32; a residual in f16). Four
// tilings: 8 and 16 rows, K steps of 32 to 256 per warp.
//
// REQUIRES: cuda-sm80
// RUN: evo-opt %s -split-input-file --evo-pipeline="output-dir=- chip=sm_80 tile-sizes=8,16,128 mma-sync=1 stages=2" \
// RUN:   --evo-verify="runs=5" -o /dev/null
// RUN: evo-opt %s -split-input-file --evo-pipeline="output-dir=- chip=sm_80 tile-sizes=16,16,64 mma-sync=1 stages=2" \
// RUN:   --evo-verify="runs=5" -o /dev/null
// RUN: evo-opt %s -split-input-file --evo-pipeline="output-dir=- chip=sm_80 tile-sizes=8,16,32 mma-sync=1 stages=2" \
// RUN:   --evo-verify="runs=5" -o /dev/null
// RUN: evo-opt %s -split-input-file --evo-pipeline="output-dir=- chip=sm_80 tile-sizes=16,16,256 mma-sync=1 stages=2" \
// RUN:   --evo-verify="runs=5" -o /dev/null

func.func @linear_b8(%x: tensor<8x4096xf16>, %w: tensor<1000x4096xf16>) -> tensor<8x1000xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<8x1000xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%e : tensor<8x1000xf16>) -> tensor<8x1000xf16>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
         ins(%x, %w : tensor<8x4096xf16>, tensor<1000x4096xf16>) outs(%acc : tensor<8x1000xf16>) -> tensor<8x1000xf16>
  return %y : tensor<8x1000xf16>
}

// -----

func.func @linear_b3_bias_relu(%x: tensor<3x520xf16>, %w: tensor<777x520xf16>, %bias: tensor<777xf32>) -> tensor<3x777xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x777xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<3x777xf32>) -> tensor<3x777xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
         ins(%x, %w : tensor<3x520xf16>, tensor<777x520xf16>) outs(%acc : tensor<3x777xf32>) -> tensor<3x777xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
    ins(%y, %bias : tensor<3x777xf32>, tensor<777xf32>) outs(%e : tensor<3x777xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    %m = arith.maximumf %s, %zero : f32
    linalg.yield %m : f32
  } -> tensor<3x777xf32>
  return %r : tensor<3x777xf32>
}

// -----

func.func @linear_b16_bf16(%x: tensor<16x200xbf16>, %w: tensor<4096x200xbf16>) -> tensor<16x4096xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x4096xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<16x4096xf32>) -> tensor<16x4096xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
         ins(%x, %w : tensor<16x200xbf16>, tensor<4096x200xbf16>) outs(%acc : tensor<16x4096xf32>) -> tensor<16x4096xf32>
  return %y : tensor<16x4096xf32>
}

// -----

func.func @short_k(%x: tensor<5x8xf16>, %w: tensor<300x8xf16>) -> tensor<5x300xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<5x300xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<5x300xf32>) -> tensor<5x300xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
         ins(%x, %w : tensor<5x8xf16>, tensor<300x8xf16>) outs(%acc : tensor<5x300xf32>) -> tensor<5x300xf32>
  return %y : tensor<5x300xf32>
}

// -----

func.func @batched(%x: tensor<4x6x264xf16>, %w: tensor<4x300x264xf16>) -> tensor<4x6x300xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x6x300xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x6x300xf32>) -> tensor<4x6x300xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
    ins(%x, %w : tensor<4x6x264xf16>, tensor<4x300x264xf16>) outs(%acc : tensor<4x6x300xf32>) {
  ^bb0(%a: f16, %b: f16, %o: f32):
    %ae = arith.extf %a : f16 to f32
    %be = arith.extf %b : f16 to f32
    %p = arith.mulf %ae, %be : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x6x300xf32>
  return %y : tensor<4x6x300xf32>
}

// -----

func.func @residual_f16(%x: tensor<4x1024xf16>, %w: tensor<2048x1024xf16>, %r: tensor<4x2048xf16>) -> tensor<4x2048xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<4x2048xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%e : tensor<4x2048xf16>) -> tensor<4x2048xf16>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
         ins(%x, %w : tensor<4x1024xf16>, tensor<2048x1024xf16>) outs(%acc : tensor<4x2048xf16>) -> tensor<4x2048xf16>
  %out = linalg.add ins(%y, %r : tensor<4x2048xf16>, tensor<4x2048xf16>) outs(%e : tensor<4x2048xf16>) -> tensor<4x2048xf16>
  return %out : tensor<4x2048xf16>
}
