// avgpool2d: 2-D average pooling, kernel 3, stride 3 (PyTorch's default stride = kernel), no
// padding: linalg.pooling_nchw_sum, then a division by 9.
// PyTorch: F.avg_pool2d(x, kernel_size=3)
// Shape: x 16x64x256x256 f32 -> 16x64x85x85 (KernelBench level 1 #45 Average Pooling 2D: batch 16,
// 64 channels, 256x256, kernel 3).
// cpu-check: 256=9 85=3
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @avgpool2d(%arg0: tensor<16x64x256x256xf32>) -> tensor<16x64x85x85xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %cst_0 = arith.constant 9.000000e+00 : f32
  %0 = tensor.empty() : tensor<16x64x85x85xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<16x64x85x85xf32>) -> tensor<16x64x85x85xf32>
  %2 = tensor.empty() : tensor<3x3xf32>
  %3 = linalg.pooling_nchw_sum {dilations = dense<1> : vector<2xi64>, strides = dense<3> : vector<2xi64>} ins(%arg0, %2 : tensor<16x64x256x256xf32>, tensor<3x3xf32>) outs(%1 : tensor<16x64x85x85xf32>) -> tensor<16x64x85x85xf32>
  %4 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%3 : tensor<16x64x85x85xf32>) outs(%0 : tensor<16x64x85x85xf32>) {
  ^bb0(%in: f32, %out: f32):
    %5 = arith.divf %in, %cst_0 : f32
    linalg.yield %5 : f32
  } -> tensor<16x64x85x85xf32>
  return %4 : tensor<16x64x85x85xf32>
}
