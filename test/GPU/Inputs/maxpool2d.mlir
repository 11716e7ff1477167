func.func @maxpool2d(%x: tensor<2x8x32x32xf32>) -> tensor<2x8x16x16xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<2x8x16x16xf32>
  %acc = linalg.fill ins(%ninf : f32) outs(%e : tensor<2x8x16x16xf32>) -> tensor<2x8x16x16xf32>
  %win = tensor.empty() : tensor<2x2xf32>
  %r = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
     ins(%x, %win : tensor<2x8x32x32xf32>, tensor<2x2xf32>) outs(%acc : tensor<2x8x16x16xf32>) -> tensor<2x8x16x16xf32>
  return %r : tensor<2x8x16x16xf32>
}
