// RMSNorm over the rows of 16384x8192 f32 with weight, eps 1e-6 (anchor: rmsnorm).
func.func @rmsnorm(%x: tensor<16384x8192xf32>, %w: tensor<8192xf32>) -> tensor<16384x8192xf32> {
  %zero = arith.constant 0.0 : f32
  %inv_n = arith.constant 1.220703125e-04 : f32
  %eps = arith.constant 1.0e-06 : f32
  %er = tensor.empty() : tensor<16384xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%er : tensor<16384xf32>) -> tensor<16384xf32>
  %sq = linalg.reduce ins(%x : tensor<16384x8192xf32>) outs(%acc : tensor<16384xf32>) dimensions = [1]
    (%in: f32, %a: f32) {
      %p = arith.mulf %in, %in : f32
      %s = arith.addf %p, %a : f32
      linalg.yield %s : f32
    }
  %e = tensor.empty() : tensor<16384x8192xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x, %sq, %w : tensor<16384x8192xf32>, tensor<16384xf32>, tensor<8192xf32>) outs(%e : tensor<16384x8192xf32>) {
  ^bb0(%v: f32, %q: f32, %wv: f32, %o: f32):
    %ms = arith.mulf %q, %inv_n : f32
    %me = arith.addf %ms, %eps : f32
    %r = math.rsqrt %me : f32
    %n = arith.mulf %v, %r : f32
    %out = arith.mulf %n, %wv : f32
    linalg.yield %out : f32
  } -> tensor<16384x8192xf32>
  return %y : tensor<16384x8192xf32>
}
