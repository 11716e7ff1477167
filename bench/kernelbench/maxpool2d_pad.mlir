// maxpool2d_pad: 2-D max pooling, kernel 3, stride 2, padding 1, as torch-mlir exports it: a
// tensor.pad with -inf, then linalg.pooling_nchw_max.
// PyTorch: F.max_pool2d(x, kernel_size=3, stride=2, padding=1)
// Shape: x 32x64x256x256 f32 -> 32x64x128x128 (KernelBench level 1 #42 Max Pooling 2D with its
// padding; the input grown to 512 MiB).
// cpu-check: 256=8 258=10 128=4
func.func @maxpool2d_pad(%arg0: tensor<32x64x256x256xf32>) -> tensor<32x64x128x128xf32> {
  %cst = arith.constant 0xFF800000 : f32
  %padded = tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%arg1: index, %arg2: index, %arg3: index, %arg4: index):
    tensor.yield %cst : f32
  } : tensor<32x64x256x256xf32> to tensor<32x64x258x258xf32>
  %0 = tensor.empty() : tensor<32x64x128x128xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<32x64x128x128xf32>) -> tensor<32x64x128x128xf32>
  %2 = tensor.empty() : tensor<3x3xf32>
  %3 = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%padded, %2 : tensor<32x64x258x258xf32>, tensor<3x3xf32>) outs(%1 : tensor<32x64x128x128xf32>) -> tensor<32x64x128x128xf32>
  return %3 : tensor<32x64x128x128xf32>
}
