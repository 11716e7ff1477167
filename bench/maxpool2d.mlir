// 2x2 max pooling with stride 2, 32x64x256x256 -> 128x128 (anchor: maxpool2d).
func.func @maxpool2d(%x: tensor<32x64x256x256xf32>) -> tensor<32x64x128x128xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<32x64x128x128xf32>
  %acc = linalg.fill ins(%ninf : f32) outs(%e : tensor<32x64x128x128xf32>) -> tensor<32x64x128x128xf32>
  %win = tensor.empty() : tensor<2x2xf32>
  %r = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
     ins(%x, %win : tensor<32x64x256x256xf32>, tensor<2x2xf32>) outs(%acc : tensor<32x64x128x128xf32>) -> tensor<32x64x128x128xf32>
  return %r : tensor<32x64x128x128xf32>
}
