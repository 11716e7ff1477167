// conv2d_strided: 3x3 convolution with stride 2, NCHW (linalg.conv_2d_nchw_fchw, strides 2).
// PyTorch: F.conv2d(x, w, stride=2)
// Shape: x 16x64x256x256, w 128x64x3x3 f32 -> 16x128x127x127 (KernelBench level 1 #55-#62, the
// strided standard 2-D convolutions, at 64 -> 128 channels: 38 GFLOP)
// cpu-check: 256=9 127=4 128=5
func.func @conv2d_strided(%arg0: tensor<16x64x256x256xf32>, %arg1: tensor<128x64x3x3xf32>) -> tensor<16x128x127x127xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<16x128x127x127xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<16x128x127x127xf32>) -> tensor<16x128x127x127xf32>
  %2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%arg0, %arg1 : tensor<16x64x256x256xf32>, tensor<128x64x3x3xf32>) outs(%1 : tensor<16x128x127x127xf32>) -> tensor<16x128x127x127xf32>
  return %2 : tensor<16x128x127x127xf32>
}
