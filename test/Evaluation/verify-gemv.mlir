// evo-verify on the GEMV / skinny-contraction schedules (contractions without tiles, with the
// reduction knobs): a warp per row with vector loads and several accumulators, a block per
// output with split-K, f32, f16 and bf16, K not a multiple of the lanes' stride, proven equal to
// the oracle and the naive baseline on the GPU.
//
// REQUIRES: cuda
// RUN: rm -rf %t && mkdir -p %t
// RUN: evo-opt %s -split-input-file --evo-pipeline="output-dir=%t" --evo-verify="runs=5" -o /dev/null

func.func @matvec_warp_f32(%a: tensor<1000x4100xf32>, %x: tensor<4100xf32>) -> tensor<1000xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1000xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1000xf32>) -> tensor<1000xf32>
  %y = linalg.matvec {evo.knobs = {reduction = "warp", vector_width = 4, accumulators = 4}}
         ins(%a, %x : tensor<1000x4100xf32>, tensor<4100xf32>) outs(%acc : tensor<1000xf32>) -> tensor<1000xf32>
  return %y : tensor<1000xf32>
}

// -----

func.func @matvec_block_bf16(%a: tensor<300x8192xbf16>, %x: tensor<8192xbf16>) -> tensor<300xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<300xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<300xf32>) -> tensor<300xf32>
  %y = linalg.matvec {evo.knobs = {reduction = "block", vector_width = 8, accumulators = 2, block_size = 128}}
         ins(%a, %x : tensor<300x8192xbf16>, tensor<8192xbf16>) outs(%acc : tensor<300xf32>) -> tensor<300xf32>
  return %y : tensor<300xf32>
}

// -----

func.func @skinny_split_f16(%a: tensor<16x65536xf16>, %b: tensor<65536x1xf16>) -> tensor<16x1xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x1xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<16x1xf32>) -> tensor<16x1xf32>
  %c = linalg.matmul {evo.knobs = {reduction = "block", vector_width = 8, split = 8}}
         ins(%a, %b : tensor<16x65536xf16>, tensor<65536x1xf16>) outs(%acc : tensor<16x1xf32>) -> tensor<16x1xf32>
  return %c : tensor<16x1xf32>
}

// -----

// x @ W^T for a batch of 4 rows (nn.Linear at batch 4): a warp per output, split-K 4.

func.func @linear_b4_warp_split(%x: tensor<4x4096xf16>, %w: tensor<2048x4096xf16>) -> tensor<4x2048xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<4x2048xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%e : tensor<4x2048xf16>) -> tensor<4x2048xf16>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
         {evo.knobs = {reduction = "warp", vector_width = 8, accumulators = 2, split = 4}}
         ins(%x, %w : tensor<4x4096xf16>, tensor<2048x4096xf16>) outs(%acc : tensor<4x2048xf16>) -> tensor<4x2048xf16>
  return %y : tensor<4x2048xf16>
}
