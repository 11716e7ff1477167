// maxpool3d: 3-D max pooling, kernel 3, stride 2, dilation 3, no padding, on NCDHW: a generic
// (linalg has no NCDHW pooling op) with strided, dilated window maps.
// PyTorch: F.max_pool3d(x, kernel_size=3, stride=2, dilation=3)
// Shape: x 16x32x64x64x64 f32 -> 16x32x29x29x29 (KernelBench level 1 #43 Max Pooling 3D: batch 16,
// 32 channels, 64^3, kernel 3, stride 2, dilation 3; its padding 1 dropped).
// cpu-check: 64=9 29=2
#map = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2 * 2 + d5 * 3, d3 * 2 + d6 * 3, d4 * 2 + d7 * 3)>
#map1 = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>
func.func @maxpool3d(%arg0: tensor<16x32x64x64x64xf32>) -> tensor<16x32x29x29x29xf32> {
  %cst = arith.constant 0xFF800000 : f32
  %0 = tensor.empty() : tensor<16x32x29x29x29xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<16x32x29x29x29xf32>) -> tensor<16x32x29x29x29xf32>
  %2 = tensor.empty() : tensor<3x3x3xf32>
  %3 = linalg.generic {indexing_maps = [#map, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d5, d6, d7)>, #map1], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%arg0, %2 : tensor<16x32x64x64x64xf32>, tensor<3x3x3xf32>) outs(%1 : tensor<16x32x29x29x29xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %4 = arith.maximumf %in, %out : f32
    linalg.yield %4 : f32
  } -> tensor<16x32x29x29x29xf32>
  return %3 : tensor<16x32x29x29x29xf32>
}
