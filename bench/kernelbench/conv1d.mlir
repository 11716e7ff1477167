// conv1d: 1-D convolution, kernel 3, NCW (linalg.conv_1d_ncw_fcw).
// PyTorch: F.conv1d(x, w)
// Shape: x 16x64x32768, w 128x64x3 f32 -> 16x128x32766 (KernelBench level 1 #67 conv standard 1D: 16
// sequences, 3 -> 64 channels, length 512 in the first release; here 64 -> 128 channels over
// 32768 steps: 26 GFLOP)
// cpu-check: 32768=7 32766=5
func.func @conv1d(%arg0: tensor<16x64x32768xf32>, %arg1: tensor<128x64x3xf32>) -> tensor<16x128x32766xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<16x128x32766xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<16x128x32766xf32>) -> tensor<16x128x32766xf32>
  %2 = linalg.conv_1d_ncw_fcw {dilations = dense<1> : vector<1xi64>, strides = dense<1> : vector<1xi64>} ins(%arg0, %arg1 : tensor<16x64x32768xf32>, tensor<128x64x3xf32>) outs(%1 : tensor<16x128x32766xf32>) -> tensor<16x128x32766xf32>
  return %2 : tensor<16x128x32766xf32>
}
