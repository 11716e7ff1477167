func.func @conv2d(%x: tensor<2x8x18x18xf32>, %w: tensor<16x8x3x3xf32>) -> tensor<2x16x16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x16x16x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x16x16x16xf32>) -> tensor<2x16x16x16xf32>
  %r = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<2x8x18x18xf32>, tensor<16x8x3x3xf32>) outs(%acc : tensor<2x16x16x16xf32>) -> tensor<2x16x16x16xf32>
  return %r : tensor<2x16x16x16xf32>
}
