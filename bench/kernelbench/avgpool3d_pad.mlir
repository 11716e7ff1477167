// avgpool3d_pad: 3-D average pooling, kernel 3, stride 2, padding 1 (zeros counted, PyTorch's
// count_include_pad default), on NCDHW: tensor.pad with 0, a generic window sum, a division by 27.
// PyTorch: F.avg_pool3d(x, kernel_size=3, stride=2, padding=1)
// Shape: x 16x32x64x64x64 f32 -> 16x32x32x32x32 (KernelBench level 1 #46 Average Pooling 3D: batch
// 16, 32 channels, 64^3, kernel 3, stride 2, padding 1).
// cpu-check: 64=6 66=8 32=3
#map = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2 * 2 + d5, d3 * 2 + d6, d4 * 2 + d7)>
#map1 = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d5, d6, d7)>
#map2 = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>
#map3 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
func.func @avgpool3d_pad(%arg0: tensor<16x32x64x64x64xf32>) -> tensor<16x32x32x32x32xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %cst_0 = arith.constant 2.700000e+01 : f32
  %padded = tensor.pad %arg0 low[0, 0, 1, 1, 1] high[0, 0, 1, 1, 1] {
  ^bb0(%arg1: index, %arg2: index, %arg3: index, %arg4: index, %arg5: index):
    tensor.yield %cst : f32
  } : tensor<16x32x64x64x64xf32> to tensor<16x32x66x66x66xf32>
  %0 = tensor.empty() : tensor<16x32x32x32x32xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<16x32x32x32x32xf32>) -> tensor<16x32x32x32x32xf32>
  %2 = tensor.empty() : tensor<3x3x3xf32>
  %3 = linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%padded, %2 : tensor<16x32x66x66x66xf32>, tensor<3x3x3xf32>) outs(%1 : tensor<16x32x32x32x32xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %5 = arith.addf %in, %out : f32
    linalg.yield %5 : f32
  } -> tensor<16x32x32x32x32xf32>
  %4 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%3 : tensor<16x32x32x32x32xf32>) outs(%0 : tensor<16x32x32x32x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %5 = arith.divf %in, %cst_0 : f32
    linalg.yield %5 : f32
  } -> tensor<16x32x32x32x32xf32>
  return %4 : tensor<16x32x32x32x32xf32>
}
