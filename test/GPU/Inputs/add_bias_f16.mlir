func.func @add_bias_f16(%x: tensor<1000x1024xf16>, %b: tensor<1024xf16>) -> tensor<1000x1024xf16> {
  %e = tensor.empty() : tensor<1000x1024xf16>
  %bb = linalg.broadcast ins(%b : tensor<1024xf16>) outs(%e : tensor<1000x1024xf16>) dimensions = [0]
  %r = linalg.add ins(%x, %bb : tensor<1000x1024xf16>, tensor<1000x1024xf16>) outs(%e : tensor<1000x1024xf16>) -> tensor<1000x1024xf16>
  return %r : tensor<1000x1024xf16>
}
