// conv2d_grouped: 3x3 convolution in 4 groups, NCHW, as torch-mlir exports it: the image and
// the filter tensor.expand_shape'd into groups, linalg.conv_2d_ngchw_gfchw, the result
// tensor.collapse_shape'd back.
// PyTorch: F.conv2d(x, w, groups=4)
// Shape: x 16x64x132x132, w 128x16x3x3 f32 -> 16x128x130x130 (KernelBench level 1 #65-#66
// style grouped convolution, 64 -> 128 channels in 4 groups: 10 GFLOP).
// cpu-check: 132=6 130=4
func.func @conv2d_grouped(%arg0: tensor<16x64x132x132xf32>, %arg1: tensor<128x16x3x3xf32>) -> tensor<16x128x130x130xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %expanded = tensor.expand_shape %arg0 [[0], [1, 2], [3], [4]] output_shape [16, 4, 16, 132, 132] : tensor<16x64x132x132xf32> into tensor<16x4x16x132x132xf32>
  %expanded_0 = tensor.expand_shape %arg1 [[0, 1], [2], [3], [4]] output_shape [4, 32, 16, 3, 3] : tensor<128x16x3x3xf32> into tensor<4x32x16x3x3xf32>
  %0 = tensor.empty() : tensor<16x4x32x130x130xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<16x4x32x130x130xf32>) -> tensor<16x4x32x130x130xf32>
  %2 = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%expanded, %expanded_0 : tensor<16x4x16x132x132xf32>, tensor<4x32x16x3x3xf32>) outs(%1 : tensor<16x4x32x130x130xf32>) -> tensor<16x4x32x130x130xf32>
  %collapsed = tensor.collapse_shape %2 [[0], [1, 2], [3], [4]] : tensor<16x4x32x130x130xf32> into tensor<16x128x130x130xf32>
  return %collapsed : tensor<16x128x130x130xf32>
}
