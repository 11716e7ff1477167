// x + bias, the bias broadcast over rows (anchor: add_bias).
func.func @add_bias(%x: tensor<16384x16384xf32>, %b: tensor<16384xf32>) -> tensor<16384x16384xf32> {
  %e = tensor.empty() : tensor<16384x16384xf32>
  %bb = linalg.broadcast ins(%b : tensor<16384xf32>) outs(%e : tensor<16384x16384xf32>) dimensions = [0]
  %r = linalg.add ins(%x, %bb : tensor<16384x16384xf32>, tensor<16384x16384xf32>) outs(%e : tensor<16384x16384xf32>) -> tensor<16384x16384xf32>
  return %r : tensor<16384x16384xf32>
}
