// evo-verify on the tiled SIMT matmul schedule over the shapes of KernelBench-style inputs
// (lower-to-gpu-matmul-shapes.mlir): contractions with several M, N and K loop dimensions,
// tiles that do not divide the problem (clamped loads, a partial K tile, guarded stores, with
// and without 128-bit accesses, with an epilogue), and split-K (with a K tail, a batch, an
// epilogue, f16 operands), and torch.tril(A @ B) as a masked contraction, each proven equal to
// the oracle on the GPU.
//
// REQUIRES: cuda
// RUN: evo-opt %s -split-input-file -verify-diagnostics --evo-pipeline="output-dir=-" \
// RUN:   --evo-verify="runs=20 warmup=3" -o /dev/null

// torch.matmul of a 3-d tensor by a matrix: M = (d0, d1); N = 136 and K = 200 not multiples of
// the 64x64x16 tiles.
// expected-remark @below {{evo-verify: 'matmul_3d' is valid (5 trials, }}
func.func @matmul_3d(%a: tensor<4x96x200xf32>, %b: tensor<200x136xf32>) -> tensor<4x96x136xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x96x136xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<4x96x136xf32>) -> tensor<4x96x136xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"], evo.knobs = {tile_sizes = [64, 64, 16], thread_tile = [4, 4], vector_width = 4, prefetch = 1}} ins(%a, %b : tensor<4x96x200xf32>, tensor<200x136xf32>) outs(%f : tensor<4x96x136xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x96x136xf32>
  return %c : tensor<4x96x136xf32>
}

// -----

// einsum bijl,lk->bijk: M = (b, i, j) = 256, N = 96 (guarded with 64-wide tiles), K = 64.
// expected-remark @below {{evo-verify: 'einsum_4d' is valid (5 trials, }}
func.func @einsum_4d(%a: tensor<2x8x16x64xf32>, %b: tensor<64x96xf32>) -> tensor<2x8x16x96xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x8x16x96xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<2x8x16x96xf32>) -> tensor<2x8x16x96xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d4, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"], evo.knobs = {tile_sizes = [64, 64, 16], thread_tile = [4, 4], vector_width = 4}} ins(%a, %b : tensor<2x8x16x64xf32>, tensor<64x96xf32>) outs(%f : tensor<2x8x16x96xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x8x16x96xf32>
  return %c : tensor<2x8x16x96xf32>
}

// -----

// Two N and two K dimensions (N = 5*24 = 120, K = 3*20 = 60), M = 100: element loads, every
// GEMM index guarded.
// expected-remark @below {{evo-verify: 'multi_nk' is valid (5 trials, }}
func.func @multi_nk(%a: tensor<100x3x20xf32>, %b: tensor<3x20x5x24xf32>) -> tensor<100x5x24xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<100x5x24xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<100x5x24xf32>) -> tensor<100x5x24xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(m, n1, n2, k1, k2) -> (m, k1, k2)>, affine_map<(m, n1, n2, k1, k2) -> (k1, k2, n1, n2)>, affine_map<(m, n1, n2, k1, k2) -> (m, n1, n2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"], evo.knobs = {tile_sizes = [32, 32, 8], thread_tile = [2, 2]}} ins(%a, %b : tensor<100x3x20xf32>, tensor<3x20x5x24xf32>) outs(%f : tensor<100x5x24xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<100x5x24xf32>
  return %c : tensor<100x5x24xf32>
}

// -----

// Odd sizes (KernelBench's irregular matmul, shrunk): no tile divides M, N or K.
// expected-remark @below {{evo-verify: 'irregular' is valid (5 trials, }}
func.func @irregular(%a: tensor<259x131xf32>, %b: tensor<131x197xf32>) -> tensor<259x197xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<259x197xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<259x197xf32>) -> tensor<259x197xf32>
  %c = linalg.matmul {evo.knobs = {tile_sizes = [128, 128, 8], thread_tile = [8, 8], vector_width = 4, prefetch = 1}} ins(%a, %b : tensor<259x131xf32>, tensor<131x197xf32>) outs(%f : tensor<259x197xf32>) -> tensor<259x197xf32>
  return %c : tensor<259x197xf32>
}

// -----

// M = 100 with 64-row tiles, 128-bit loads and stores, bias + relu fused: the guarded rows
// never run the epilogue past M.
// expected-remark @below {{evo-verify: 'irregular_vec_bias_relu' is valid (5 trials, }}
func.func @irregular_vec_bias_relu(%a: tensor<100x64xf32>, %b: tensor<64x128xf32>, %bias: tensor<128xf32>) -> tensor<100x128xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<100x128xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<100x128xf32>) -> tensor<100x128xf32>
  %c = linalg.matmul {evo.knobs = {tile_sizes = [64, 64, 16], thread_tile = [4, 4], vector_width = 4}} ins(%a, %b : tensor<100x64xf32>, tensor<64x128xf32>) outs(%f : tensor<100x128xf32>) -> tensor<100x128xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%c, %bias : tensor<100x128xf32>, tensor<128xf32>) outs(%e : tensor<100x128xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    %z = arith.maximumf %s, %cst : f32
    linalg.yield %z : f32
  } -> tensor<100x128xf32>
  return %r : tensor<100x128xf32>
}

// -----

// Split-K over a long K (KernelBench's large-K matmul, shrunk): 16 slices of 64 K tiles each.
// expected-remark @below {{evo-verify: 'split_large_k' is valid (5 trials, }}
func.func @split_large_k(%a: tensor<64x16384xf32>, %b: tensor<16384x96xf32>) -> tensor<64x96xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x96xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<64x96xf32>) -> tensor<64x96xf32>
  %c = linalg.matmul {evo.knobs = {tile_sizes = [64, 64, 16], thread_tile = [4, 4], vector_width = 4, prefetch = 1, split = 16}} ins(%a, %b : tensor<64x16384xf32>, tensor<16384x96xf32>) outs(%f : tensor<64x96xf32>) -> tensor<64x96xf32>
  return %c : tensor<64x96xf32>
}

// -----

// Split-K 4 of a batched matmul with guarded rows and columns, a K tail (1000 = 62 tiles of 16
// + 8) taken by the last slice, and a bias + relu epilogue run by the combine kernel.
// expected-remark @below {{evo-verify: 'split_batch_tail' is valid (5 trials, }}
func.func @split_batch_tail(%a: tensor<3x40x1000xf32>, %b: tensor<3x1000x72xf32>, %bias: tensor<72xf32>) -> tensor<3x40x72xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x40x72xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<3x40x72xf32>) -> tensor<3x40x72xf32>
  %c = linalg.batch_matmul {evo.knobs = {tile_sizes = [32, 32, 16], thread_tile = [4, 4], vector_width = 4, split = 4}} ins(%a, %b : tensor<3x40x1000xf32>, tensor<3x1000x72xf32>) outs(%f : tensor<3x40x72xf32>) -> tensor<3x40x72xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%c, %bias : tensor<3x40x72xf32>, tensor<72xf32>) outs(%e : tensor<3x40x72xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    %z = arith.maximumf %s, %cst : f32
    linalg.yield %z : f32
  } -> tensor<3x40x72xf32>
  return %r : tensor<3x40x72xf32>
}

// -----

// f16 operands, f32 result, irregular M and N, split-K 2 with a K tail.
// expected-remark @below {{evo-verify: 'split_f16_irregular' is valid (5 trials, }}
func.func @split_f16_irregular(%a: tensor<130x520xf16>, %b: tensor<520x70xf16>) -> tensor<130x70xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<130x70xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<130x70xf32>) -> tensor<130x70xf32>
  %c = linalg.matmul {evo.knobs = {tile_sizes = [64, 64, 16], thread_tile = [4, 4], vector_width = 4, split = 2}} ins(%a, %b : tensor<130x520xf16>, tensor<520x70xf16>) outs(%f : tensor<130x70xf32>) -> tensor<130x70xf32>
  return %c : tensor<130x70xf32>
}

// -----

// torch.tril(A @ B) as one masked generic, irregular (M = 100, N = 90 with 64x64 tiles), split
// 2: the mask applied per output in the combine kernel.
// expected-remark @below {{evo-verify: 'tril_split' is valid (5 trials, }}
func.func @tril_split(%a: tensor<100x256xf32>, %b: tensor<256x90xf32>) -> tensor<100x90xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<100x90xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<100x90xf32>) -> tensor<100x90xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"], evo.knobs = {tile_sizes = [64, 64, 16], thread_tile = [4, 4], vector_width = 4, split = 2}} ins(%a, %b : tensor<100x256xf32>, tensor<256x90xf32>) outs(%f : tensor<100x90xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %le = arith.cmpi sle, %j, %i : index
    %m = arith.mulf %x, %y : f32
    %s = arith.select %le, %m, %cst : f32
    %r = arith.addf %o, %s : f32
    linalg.yield %r : f32
  } -> tensor<100x90xf32>
  return %c : tensor<100x90xf32>
}

// -----

// The same mask, tiled without split-K, 128-bit stores (N = 128).
// expected-remark @below {{evo-verify: 'tril_vec' is valid (5 trials, }}
func.func @tril_vec(%a: tensor<128x64xf32>, %b: tensor<64x128xf32>) -> tensor<128x128xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x128xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<128x128xf32>) -> tensor<128x128xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"], evo.knobs = {tile_sizes = [64, 64, 16], thread_tile = [4, 4], vector_width = 4, prefetch = 1}} ins(%a, %b : tensor<128x64xf32>, tensor<64x128xf32>) outs(%f : tensor<128x128xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %le = arith.cmpi sle, %j, %i : index
    %m = arith.mulf %x, %y : f32
    %s = arith.select %le, %m, %cst : f32
    %r = arith.addf %o, %s : f32
    linalg.yield %r : f32
  } -> tensor<128x128xf32>
  return %c : tensor<128x128xf32>
}

// -----

// x @ Wᵀ (B contiguous along K only, stored transposed into padded shared-memory rows): 128-bit
// runs of K with guarded columns and a K tail (N = 136, K = 200), the element path with rows
// padded by 1, split-K with a tail, and transposed A and B together (torch.matmul(A.T, B.T)).
// expected-remark @below {{evo-verify: 'linear_tb' is valid (5 trials, }}
func.func @linear_tb(%a: tensor<96x200xf32>, %b: tensor<136x200xf32>) -> tensor<96x136xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<96x136xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<96x136xf32>) -> tensor<96x136xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"], evo.knobs = {tile_sizes = [64, 64, 16], thread_tile = [4, 4], vector_width = 4, prefetch = 1}} ins(%a, %b : tensor<96x200xf32>, tensor<136x200xf32>) outs(%f : tensor<96x136xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<96x136xf32>
  return %c : tensor<96x136xf32>
}
// expected-remark @below {{evo-verify: 'linear_tb_scalar' is valid (5 trials, }}
func.func @linear_tb_scalar(%a: tensor<100x130xf32>, %b: tensor<70x130xf32>) -> tensor<100x70xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<100x70xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<100x70xf32>) -> tensor<100x70xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"], evo.knobs = {tile_sizes = [32, 32, 8], thread_tile = [2, 2]}} ins(%a, %b : tensor<100x130xf32>, tensor<70x130xf32>) outs(%f : tensor<100x70xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<100x70xf32>
  return %c : tensor<100x70xf32>
}
// expected-remark @below {{evo-verify: 'linear_tb_split' is valid (5 trials, }}
func.func @linear_tb_split(%a: tensor<64x4100xf32>, %b: tensor<96x4100xf32>) -> tensor<64x96xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x96xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<64x96xf32>) -> tensor<64x96xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"], evo.knobs = {tile_sizes = [64, 64, 16], thread_tile = [4, 4], vector_width = 4, prefetch = 1, split = 8}} ins(%a, %b : tensor<64x4100xf32>, tensor<96x4100xf32>) outs(%f : tensor<64x96xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x96xf32>
  return %c : tensor<64x96xf32>
}
// expected-remark @below {{evo-verify: 'transposed_both' is valid (5 trials, }}
func.func @transposed_both(%a: tensor<200x96xf32>, %b: tensor<136x200xf32>) -> tensor<96x136xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<96x136xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<96x136xf32>) -> tensor<96x136xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"], evo.knobs = {tile_sizes = [64, 64, 8], thread_tile = [4, 4], vector_width = 4}} ins(%a, %b : tensor<200x96xf32>, tensor<136x200xf32>) outs(%f : tensor<96x136xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<96x136xf32>
  return %c : tensor<96x136xf32>
}
// torch.matmul(A.T, B): A contiguous along M, read in 128-bit runs of M stored whole into its
// tile's rows; N = 136 guarded, K = 200 a partial tile.
// expected-remark @below {{evo-verify: 'transposed_a' is valid (5 trials, }}
func.func @transposed_a(%a: tensor<200x96xf32>, %b: tensor<200x136xf32>) -> tensor<96x136xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<96x136xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<96x136xf32>) -> tensor<96x136xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"], evo.knobs = {tile_sizes = [64, 64, 16], thread_tile = [4, 4], vector_width = 4, prefetch = 1}} ins(%a, %b : tensor<200x96xf32>, tensor<200x136xf32>) outs(%f : tensor<96x136xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<96x136xf32>
  return %c : tensor<96x136xf32>
}
