// conv2d_pad: 3x3 convolution with padding 1, NCHW, as torch-mlir exports it: a tensor.pad with
// zeros, then linalg.conv_2d_nchw_fchw.
// PyTorch: F.conv2d(x, w, padding=1)
// Shape: x 16x64x128x128, w 128x64x3x3 f32 -> 16x128x128x128 (KernelBench level 1 #63 with
// padding 1, at 64 -> 128 channels: 38 GFLOP).
// cpu-check: 128=5 130=7
func.func @conv2d_pad(%arg0: tensor<16x64x128x128xf32>, %arg1: tensor<128x64x3x3xf32>) -> tensor<16x128x128x128xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %padded = tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%arg2: index, %arg3: index, %arg4: index, %arg5: index):
    tensor.yield %cst : f32
  } : tensor<16x64x128x128xf32> to tensor<16x64x130x130xf32>
  %0 = tensor.empty() : tensor<16x128x128x128xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<16x128x128x128xf32>) -> tensor<16x128x128x128xf32>
  %2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%padded, %arg1 : tensor<16x64x130x130xf32>, tensor<128x64x3x3xf32>) outs(%1 : tensor<16x128x128x128xf32>) -> tensor<16x128x128x128xf32>
  return %2 : tensor<16x128x128x128xf32>
}
