// conv2d_depthwise: 3x3 depthwise convolution, NCHW, the filter given as [C, 3, 3]
// (linalg.depthwise_conv_2d_nchw_chw; PyTorch's [C, 1, 3, 3] weight without its unit dimension).
// PyTorch: F.conv2d(x, w.unsqueeze(1), groups=64)
// Shape: x 16x64x512x512, w 64x3x3 f32 -> 16x64x510x510 (KernelBench level 1 #82 conv depthwise 2D,
// square input and kernel: 16 images, 3 channels, 256x256 in the first release; here 64 channels
// at 512x512: 1 GiB in, memory-bound)
// cpu-check: 512=7 510=5
func.func @conv2d_depthwise(%arg0: tensor<16x64x512x512xf32>, %arg1: tensor<64x3x3xf32>) -> tensor<16x64x510x510xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<16x64x510x510xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<16x64x510x510xf32>) -> tensor<16x64x510x510xf32>
  %2 = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%arg0, %arg1 : tensor<16x64x512x512xf32>, tensor<64x3x3xf32>) outs(%1 : tensor<16x64x510x510xf32>) -> tensor<16x64x510x510xf32>
  return %2 : tensor<16x64x510x510xf32>
}
