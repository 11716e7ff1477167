// avgpool1d: 1-D average pooling, kernel 4, stride 2, no padding: linalg.pooling_ncw_sum, then a
// division by the window size (torch-mlir's form).
// PyTorch: F.avg_pool1d(x, kernel_size=4, stride=2)
// Shape: x 16x32x262144 f32 -> 16x32x131071 (KernelBench level 1 #44 Average Pooling 1D: kernel 4,
// stride 2; its 16x32x128 input grown along the sequence to 512 MiB, padding 1 dropped).
// cpu-check: 262144=12 131071=5
#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @avgpool1d(%arg0: tensor<16x32x262144xf32>) -> tensor<16x32x131071xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %cst_0 = arith.constant 4.000000e+00 : f32
  %0 = tensor.empty() : tensor<16x32x131071xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<16x32x131071xf32>) -> tensor<16x32x131071xf32>
  %2 = tensor.empty() : tensor<4xf32>
  %3 = linalg.pooling_ncw_sum {dilations = dense<1> : vector<1xi64>, strides = dense<2> : vector<1xi64>} ins(%arg0, %2 : tensor<16x32x262144xf32>, tensor<4xf32>) outs(%1 : tensor<16x32x131071xf32>) -> tensor<16x32x131071xf32>
  %4 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%3 : tensor<16x32x131071xf32>) outs(%0 : tensor<16x32x131071xf32>) {
  ^bb0(%in: f32, %out: f32):
    %5 = arith.divf %in, %cst_0 : f32
    linalg.yield %5 : f32
  } -> tensor<16x32x131071xf32>
  return %4 : tensor<16x32x131071xf32>
}
