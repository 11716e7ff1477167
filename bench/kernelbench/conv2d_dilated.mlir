// conv2d_dilated: 3x3 convolution with dilation 2, NCHW (linalg.conv_2d_nchw_fchw, dilations 2).
// PyTorch: F.conv2d(x, w, dilation=2)
// Shape: x 16x64x128x128, w 128x64x3x3 f32 -> 16x128x124x124 (KernelBench level 1 #76-#80, the
// dilated 2-D convolutions, at 64 -> 128 channels: 36 GFLOP)
// cpu-check: 128=8 124=4
func.func @conv2d_dilated(%arg0: tensor<16x64x128x128xf32>, %arg1: tensor<128x64x3x3xf32>) -> tensor<16x128x124x124xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<16x128x124x124xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<16x128x124x124xf32>) -> tensor<16x128x124x124xf32>
  %2 = linalg.conv_2d_nchw_fchw {dilations = dense<2> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%arg0, %arg1 : tensor<16x64x128x128xf32>, tensor<128x64x3x3xf32>) outs(%1 : tensor<16x128x124x124xf32>) -> tensor<16x128x124x124xf32>
  return %2 : tensor<16x128x124x124xf32>
}
