// maxpool2d: 2-D max pooling, kernel 3, stride 2, dilation 2, no padding (linalg.pooling_nchw_max).
// PyTorch: F.max_pool2d(x, kernel_size=3, stride=2, dilation=2)
// Shape: x 32x64x256x256 f32 -> 32x64x126x126 (KernelBench level 1 #42 Max Pooling 2D: strided and
// dilated; its 16x32x128x128 input grown to 512 MiB, padding left to maxpool2d_pad).
// cpu-check: 256=9 126=3
func.func @maxpool2d(%arg0: tensor<32x64x256x256xf32>) -> tensor<32x64x126x126xf32> {
  %cst = arith.constant 0xFF800000 : f32
  %0 = tensor.empty() : tensor<32x64x126x126xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<32x64x126x126xf32>) -> tensor<32x64x126x126xf32>
  %2 = tensor.empty() : tensor<3x3xf32>
  %3 = linalg.pooling_nchw_max {dilations = dense<2> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%arg0, %2 : tensor<32x64x256x256xf32>, tensor<3x3xf32>) outs(%1 : tensor<32x64x126x126xf32>) -> tensor<32x64x126x126xf32>
  return %3 : tensor<32x64x126x126xf32>
}
