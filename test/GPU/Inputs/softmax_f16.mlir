func.func @softmax_f16(%x: tensor<257x4096xf16>) -> tensor<257x4096xf16> {
  %e = tensor.empty() : tensor<257x4096xf16>
  %r = linalg.softmax dimension(1) ins(%x : tensor<257x4096xf16>) outs(%e : tensor<257x4096xf16>) -> tensor<257x4096xf16>
  return %r : tensor<257x4096xf16>
}
