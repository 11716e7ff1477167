// conv2d_nhwc: 3x3 convolution, NHWC image, HWCF filter, stride 1, no padding
// (linalg.conv_2d_nhwc_hwcf). PyTorch sees the same memory as channels_last NCHW tensors.
// PyTorch: F.conv2d(x.permute(0, 3, 1, 2), w.permute(3, 2, 0, 1)).permute(0, 2, 3, 1)
// Shape: x 16x128x128x64, w 3x3x64x128 f32 -> 16x126x126x128 (KernelBench level 1 #63 conv standard 2D, square input and kernel: 16 images, 3 -> 64
// channels, 256x256 in the first release; here 64 -> 128 channels at 128x128, a network's
// compute-bound convolution, 37 GFLOP)
// cpu-check: 128=6 126=4
func.func @conv2d_nhwc(%arg0: tensor<16x128x128x64xf32>, %arg1: tensor<3x3x64x128xf32>) -> tensor<16x126x126x128xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<16x126x126x128xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<16x126x126x128xf32>) -> tensor<16x126x126x128xf32>
  %2 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%arg0, %arg1 : tensor<16x128x128x64xf32>, tensor<3x3x64x128xf32>) outs(%1 : tensor<16x126x126x128xf32>) -> tensor<16x126x126x128xf32>
  return %2 : tensor<16x126x126x128xf32>
}
