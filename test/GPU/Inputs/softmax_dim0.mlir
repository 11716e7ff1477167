func.func @softmax_dim0(%x: tensor<512x64xf32>) -> tensor<512x64xf32> {
  %e = tensor.empty() : tensor<512x64xf32>
  %r = linalg.softmax dimension(0) ins(%x : tensor<512x64xf32>) outs(%e : tensor<512x64xf32>) -> tensor<512x64xf32>
  return %r : tensor<512x64xf32>
}
