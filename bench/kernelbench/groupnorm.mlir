// groupnorm: GroupNorm with 8 groups of 8 channels, weight and bias, eps 1e-5, as torch-mlir
// exports it: tensor.expand_shape into [N, G, C/G, H, W], statistics over each group, normalise,
// tensor.collapse_shape back, then the per-channel affine.
// PyTorch: F.group_norm(x, 8, w, b, eps=1e-5)
// Shape: x 16x64x256x256, w, b 64 f32 (KernelBench level 1 #35 GroupNorm: batch 16, 64 features,
// 8 groups, 256x256).
// cpu-check: 256=3 524288=72
#map = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#map1 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1)>
#map2 = affine_map<(d0, d1) -> (d0, d1)>
#map3 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map4 = affine_map<(d0, d1, d2, d3) -> (d1)>
func.func @groupnorm(%arg0: tensor<16x64x256x256xf32>, %arg1: tensor<64xf32>, %arg2: tensor<64xf32>) -> tensor<16x64x256x256xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %cst_0 = arith.constant 524288.0 : f32
  %cst_1 = arith.constant 9.99999974E-6 : f32
  %expanded = tensor.expand_shape %arg0 [[0], [1, 2], [3], [4]] output_shape [16, 8, 8, 256, 256] : tensor<16x64x256x256xf32> into tensor<16x8x8x256x256xf32>
  %0 = tensor.empty() : tensor<16x8xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<16x8xf32>) -> tensor<16x8xf32>
  %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%expanded : tensor<16x8x8x256x256xf32>) outs(%1 : tensor<16x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %9 = arith.addf %in, %out : f32
    linalg.yield %9 : f32
  } -> tensor<16x8xf32>
  %3 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel"]} ins(%2 : tensor<16x8xf32>) outs(%0 : tensor<16x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %9 = arith.divf %in, %cst_0 : f32
    linalg.yield %9 : f32
  } -> tensor<16x8xf32>
  %4 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%expanded, %3 : tensor<16x8x8x256x256xf32>, tensor<16x8xf32>) outs(%1 : tensor<16x8xf32>) {
  ^bb0(%in: f32, %in_2: f32, %out: f32):
    %9 = arith.subf %in, %in_2 : f32
    %10 = arith.mulf %9, %9 : f32
    %11 = arith.addf %10, %out : f32
    linalg.yield %11 : f32
  } -> tensor<16x8xf32>
  %5 = tensor.empty() : tensor<16x8x8x256x256xf32>
  %6 = linalg.generic {indexing_maps = [#map, #map1, #map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%expanded, %3, %4 : tensor<16x8x8x256x256xf32>, tensor<16x8xf32>, tensor<16x8xf32>) outs(%5 : tensor<16x8x8x256x256xf32>) {
  ^bb0(%in: f32, %in_2: f32, %in_3: f32, %out: f32):
    %9 = arith.subf %in, %in_2 : f32
    %10 = arith.divf %in_3, %cst_0 : f32
    %11 = arith.addf %10, %cst_1 : f32
    %12 = math.rsqrt %11 : f32
    %13 = arith.mulf %9, %12 : f32
    linalg.yield %13 : f32
  } -> tensor<16x8x8x256x256xf32>
  %collapsed = tensor.collapse_shape %6 [[0], [1, 2], [3], [4]] : tensor<16x8x8x256x256xf32> into tensor<16x64x256x256xf32>
  %7 = tensor.empty() : tensor<16x64x256x256xf32>
  %8 = linalg.generic {indexing_maps = [#map3, #map4, #map4, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%collapsed, %arg1, %arg2 : tensor<16x64x256x256xf32>, tensor<64xf32>, tensor<64xf32>) outs(%7 : tensor<16x64x256x256xf32>) {
  ^bb0(%in: f32, %in_2: f32, %in_3: f32, %out: f32):
    %9 = arith.mulf %in, %in_2 : f32
    %10 = arith.addf %9, %in_3 : f32
    linalg.yield %10 : f32
  } -> tensor<16x64x256x256xf32>
  return %8 : tensor<16x64x256x256xf32>
}
