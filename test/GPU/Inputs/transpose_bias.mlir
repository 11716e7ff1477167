// y[i, j] = x[j, i] + b[j] over 3 batches: a batched transpose fused with a bias (elementwise,
// transpose_tile stages x through shared memory; b is read directly).
func.func @transpose_bias(%x: tensor<3x768x512xf32>, %b: tensor<768xf32>) -> tensor<3x512x768xf32> {
  %e = tensor.empty() : tensor<3x512x768xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(n, i, j) -> (n, j, i)>, affine_map<(n, i, j) -> (j)>, affine_map<(n, i, j) -> (n, i, j)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %b : tensor<3x768x512xf32>, tensor<768xf32>) outs(%e : tensor<3x512x768xf32>) {
  ^bb0(%v: f32, %bv: f32, %o: f32):
    %s = arith.addf %v, %bv : f32
    linalg.yield %s : f32
  } -> tensor<3x512x768xf32>
  return %y : tensor<3x512x768xf32>
}
