// conv3d: 3x3x3 convolution, NCDHW (linalg.conv_3d_ncdhw_fcdhw).
// PyTorch: F.conv3d(x, w)
// Shape: x 8x16x64x64x64, w 32x16x3x3x3 f32 -> 8x32x62x62x62 (KernelBench level 1 #54 conv standard 3D:
// 16 volumes, 3 -> 64 channels, 64^3 in the first release; here 8 volumes, 16 -> 32 channels:
// 53 GFLOP)
// cpu-check: 64=5 62=3
func.func @conv3d(%arg0: tensor<8x16x64x64x64xf32>, %arg1: tensor<32x16x3x3x3xf32>) -> tensor<8x32x62x62x62xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<8x32x62x62x62xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<8x32x62x62x62xf32>) -> tensor<8x32x62x62x62xf32>
  %2 = linalg.conv_3d_ncdhw_fcdhw {dilations = dense<1> : vector<3xi64>, strides = dense<1> : vector<3xi64>} ins(%arg0, %arg1 : tensor<8x16x64x64x64xf32>, tensor<32x16x3x3x3xf32>) outs(%1 : tensor<8x32x62x62x62xf32>) -> tensor<8x32x62x62x62xf32>
  return %2 : tensor<8x32x62x62x62xf32>
}
