// Softmax over the rows of 16384x8192 f32 (anchor: softmax).
func.func @softmax(%x: tensor<16384x8192xf32>) -> tensor<16384x8192xf32> {
  %e = tensor.empty() : tensor<16384x8192xf32>
  %r = linalg.softmax dimension(1) ins(%x : tensor<16384x8192xf32>) outs(%e : tensor<16384x8192xf32>) -> tensor<16384x8192xf32>
  return %r : tensor<16384x8192xf32>
}
