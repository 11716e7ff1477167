// Transpose of 16384x16384 f32 (anchor: transpose, a.t().contiguous()).
func.func @transpose(%x: tensor<16384x16384xf32>) -> tensor<16384x16384xf32> {
  %e = tensor.empty() : tensor<16384x16384xf32>
  %t = linalg.transpose ins(%x : tensor<16384x16384xf32>) outs(%e : tensor<16384x16384xf32>) permutation = [1, 0]
  return %t : tensor<16384x16384xf32>
}
