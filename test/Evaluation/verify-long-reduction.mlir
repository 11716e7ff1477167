// evo-verify on the naive schedules of long reductions (over 65536 points: a block per output,
// its threads' partial sums meeting in a tree): a whole-tensor sum of squares to a 0-d result,
// a sum over 20M elements (one sequential f32 accumulator would stop growing at 2^24 on
// integer-valued data and drift on the rest), and a 64 x 2^20 x 1 matmul, each proven equal to
// the oracle on the GPU with the default knobs; then split schedules (below).
//
// REQUIRES: cuda
// RUN: rm -rf %t && mkdir -p %t
// RUN: evo-opt %s -split-input-file --evo-pipeline="output-dir=%t" --evo-verify="runs=3" -o /dev/null

func.func @frobenius_squared(%x: tensor<2048x2048xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%x : tensor<2048x2048xf32>) outs(%acc : tensor<f32>) {
    ^bb0(%a: f32, %o: f32):
      %sq = arith.mulf %a, %a : f32
      %r = arith.addf %o, %sq : f32
      linalg.yield %r : f32
  } -> tensor<f32>
  return %s : tensor<f32>
}

// -----

func.func @long_row_sum(%x: tensor<2x10485760xf32>) -> tensor<2xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2xf32>) -> tensor<2xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<2x10485760xf32>) outs(%acc : tensor<2xf32>) {
    ^bb0(%a: f32, %o: f32):
      %r = arith.addf %o, %a : f32
      linalg.yield %r : f32
  } -> tensor<2xf32>
  return %s : tensor<2xf32>
}

// -----

func.func @matmul_k1m(%a: tensor<64x1048576xf32>, %b: tensor<1048576x1xf32>) -> tensor<64x1xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x1xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<64x1xf32>) -> tensor<64x1xf32>
  %c = linalg.matmul ins(%a, %b : tensor<64x1048576xf32>, tensor<1048576x1xf32>) outs(%acc : tensor<64x1xf32>) -> tensor<64x1xf32>
  return %c : tensor<64x1xf32>
}

// -----

// The split schedules the search seeds for few outputs: a 0-d mean squared error over 2^24
// points in 256 blocks whose partials one warp combines (then the fused division), two long
// rows in 128 slices each, and a 0-d max (a combiner that is not a sum) in 64 slices.

func.func @mse_split(%p: tensor<4096x4096xf32>, %t: tensor<4096x4096xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 16777216.0 : f32
  %e = tensor.empty() : tensor<f32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%p, %t : tensor<4096x4096xf32>, tensor<4096x4096xf32>) outs(%acc : tensor<f32>)
      attrs = {evo.knobs = {reduction = "block", vector_width = 4, accumulators = 4, split = 256}} {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %d = arith.subf %a, %b : f32
      %sq = arith.mulf %d, %d : f32
      %r = arith.addf %sq, %o : f32
      linalg.yield %r : f32
  } -> tensor<f32>
  %m = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []}
      ins(%s : tensor<f32>) outs(%e : tensor<f32>) {
    ^bb0(%a: f32, %o: f32):
      %q = arith.divf %a, %n : f32
      linalg.yield %q : f32
  } -> tensor<f32>
  return %m : tensor<f32>
}

// -----

func.func @two_rows_split(%x: tensor<2x4194304xf32>) -> tensor<2xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2xf32>) -> tensor<2xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<2x4194304xf32>) outs(%acc : tensor<2xf32>)
      attrs = {evo.knobs = {reduction = "block", block_size = 512, vector_width = 4, accumulators = 2, split = 128}} {
    ^bb0(%a: f32, %o: f32):
      %r = arith.addf %o, %a : f32
      linalg.yield %r : f32
  } -> tensor<2xf32>
  return %s : tensor<2xf32>
}

// -----

func.func @max_split(%x: tensor<8192x1024xf32>) -> tensor<f32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<f32>
  %acc = linalg.fill ins(%ninf : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%x : tensor<8192x1024xf32>) outs(%acc : tensor<f32>)
      attrs = {evo.knobs = {reduction = "warp", vector_width = 4, accumulators = 2, split = 64}} {
    ^bb0(%a: f32, %o: f32):
      %r = arith.maximumf %o, %a : f32
      linalg.yield %r : f32
  } -> tensor<f32>
  return %s : tensor<f32>
}
