// conv2d_pointwise: 1x1 (pointwise) convolution, NCHW (linalg.conv_2d_nchw_fchw with a 1x1 filter).
// PyTorch: F.conv2d(x, w)
// Shape: x 16x64x256x256, w 128x64x1x1 f32 -> 16x128x256x256 (KernelBench level 1 #87 conv pointwise
// 2D: 16 images, 3 -> 64 channels, 256x256 in the first release; here 64 -> 128 channels)
// cpu-check: 256=4
func.func @conv2d_pointwise(%arg0: tensor<16x64x256x256xf32>, %arg1: tensor<128x64x1x1xf32>) -> tensor<16x128x256x256xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<16x128x256x256xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<16x128x256x256xf32>) -> tensor<16x128x256x256xf32>
  %2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%arg0, %arg1 : tensor<16x64x256x256xf32>, tensor<128x64x1x1xf32>) outs(%1 : tensor<16x128x256x256xf32>) -> tensor<16x128x256x256xf32>
  return %2 : tensor<16x128x256x256xf32>
}
