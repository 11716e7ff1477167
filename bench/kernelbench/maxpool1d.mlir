// maxpool1d: 1-D max pooling, kernel 4, stride 2, dilation 3, no padding (linalg.pooling_ncw_max).
// PyTorch: F.max_pool1d(x, kernel_size=4, stride=2, dilation=3)
// Shape: x 16x64x131072 f32 -> 16x64x65532 (KernelBench level 1 #41 Max Pooling 1D: kernel 4,
// stride 2, dilation 3; its 16x64x128 input grown along the sequence to 512 MiB, and its padding
// 2 dropped: padded pooling is maxpool2d_pad's).
// cpu-check: 131072=18 65532=5
func.func @maxpool1d(%arg0: tensor<16x64x131072xf32>) -> tensor<16x64x65532xf32> {
  %cst = arith.constant 0xFF800000 : f32
  %0 = tensor.empty() : tensor<16x64x65532xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<16x64x65532xf32>) -> tensor<16x64x65532xf32>
  %2 = tensor.empty() : tensor<4xf32>
  %3 = linalg.pooling_ncw_max {dilations = dense<3> : vector<1xi64>, strides = dense<2> : vector<1xi64>} ins(%arg0, %2 : tensor<16x64x131072xf32>, tensor<4xf32>) outs(%1 : tensor<16x64x65532xf32>) -> tensor<16x64x65532xf32>
  return %3 : tensor<16x64x65532xf32>
}
