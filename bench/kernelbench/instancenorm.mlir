// instancenorm: InstanceNorm2d without affine parameters, eps 1e-5: each (sample, channel) plane
// normalised by its own mean and biased variance.
// PyTorch: F.instance_norm(x, eps=1e-5)
// Shape: x 16x64x256x256 f32 (KernelBench level 1 #34 InstanceNorm: batch 16, 64 features,
// 256x256).
// cpu-check: 64=3 256=4 65536=16
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
#map2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @instancenorm(%arg0: tensor<16x64x256x256xf32>) -> tensor<16x64x256x256xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %cst_0 = arith.constant 65536.0 : f32
  %cst_1 = arith.constant 9.99999974E-6 : f32
  %0 = tensor.empty() : tensor<16x64xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<16x64xf32>) -> tensor<16x64xf32>
  %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%arg0 : tensor<16x64x256x256xf32>) outs(%1 : tensor<16x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %7 = arith.addf %in, %out : f32
    linalg.yield %7 : f32
  } -> tensor<16x64xf32>
  %3 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel"]} ins(%2 : tensor<16x64xf32>) outs(%0 : tensor<16x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %7 = arith.divf %in, %cst_0 : f32
    linalg.yield %7 : f32
  } -> tensor<16x64xf32>
  %4 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%arg0, %3 : tensor<16x64x256x256xf32>, tensor<16x64xf32>) outs(%1 : tensor<16x64xf32>) {
  ^bb0(%in: f32, %in_2: f32, %out: f32):
    %7 = arith.subf %in, %in_2 : f32
    %8 = arith.mulf %7, %7 : f32
    %9 = arith.addf %8, %out : f32
    linalg.yield %9 : f32
  } -> tensor<16x64xf32>
  %5 = tensor.empty() : tensor<16x64x256x256xf32>
  %6 = linalg.generic {indexing_maps = [#map, #map1, #map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0, %3, %4 : tensor<16x64x256x256xf32>, tensor<16x64xf32>, tensor<16x64xf32>) outs(%5 : tensor<16x64x256x256xf32>) {
  ^bb0(%in: f32, %in_2: f32, %in_3: f32, %out: f32):
    %7 = arith.subf %in, %in_2 : f32
    %8 = arith.divf %in_3, %cst_0 : f32
    %9 = arith.addf %8, %cst_1 : f32
    %10 = math.rsqrt %9 : f32
    %11 = arith.mulf %7, %10 : f32
    linalg.yield %11 : f32
  } -> tensor<16x64x256x256xf32>
  return %6 : tensor<16x64x256x256xf32>
}
