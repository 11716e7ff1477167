// conv2d_nchw: 3x3 convolution, NCHW image, FCHW filter, stride 1, no padding (linalg.conv_2d_nchw_fchw).
// PyTorch: F.conv2d(x, w)
// Shape: x 16x64x128x128, w 128x64x3x3 f32 -> 16x128x126x126 (KernelBench level 1 #63 conv standard 2D, square input and kernel: 16 images, 3 -> 64
// channels, 256x256 in the first release; here 64 -> 128 channels at 128x128, a network's
// compute-bound convolution, 37 GFLOP)
// cpu-check: 128=6 126=4
func.func @conv2d_nchw(%arg0: tensor<16x64x128x128xf32>, %arg1: tensor<128x64x3x3xf32>) -> tensor<16x128x126x126xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<16x128x126x126xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<16x128x126x126xf32>) -> tensor<16x128x126x126xf32>
  %2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%arg0, %arg1 : tensor<16x64x128x128xf32>, tensor<128x64x3x3xf32>) outs(%1 : tensor<16x128x126x126xf32>) -> tensor<16x128x126x126xf32>
  return %2 : tensor<16x128x126x126xf32>
}
