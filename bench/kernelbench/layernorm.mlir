// layernorm: LayerNorm over the last three dimensions with weight and bias, eps 1e-5, decomposed
// as torch-mlir does (sum, mean, sum of squared deviations, rsqrt, affine).
// PyTorch: F.layer_norm(x, x.shape[1:], w, b, eps=1e-5)
// Shape: x 16x64x256x256, w and b 64x256x256 f32 (KernelBench level 1 #40 LayerNorm: batch 16,
// normalized shape (64, 256, 256)).
// cpu-check: 64=2 256=3 4194304=18
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d0)>
#map2 = affine_map<(d0) -> (d0)>
#map3 = affine_map<(d0, d1, d2, d3) -> (d1, d2, d3)>
func.func @layernorm(%arg0: tensor<16x64x256x256xf32>, %arg1: tensor<64x256x256xf32>, %arg2: tensor<64x256x256xf32>) -> tensor<16x64x256x256xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %cst_0 = arith.constant 4194304.0 : f32
  %cst_1 = arith.constant 9.99999974E-6 : f32
  %0 = tensor.empty() : tensor<16xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<16xf32>) -> tensor<16xf32>
  %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction", "reduction", "reduction"]} ins(%arg0 : tensor<16x64x256x256xf32>) outs(%1 : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %9 = arith.addf %in, %out : f32
    linalg.yield %9 : f32
  } -> tensor<16xf32>
  %3 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel"]} ins(%2 : tensor<16xf32>) outs(%0 : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %9 = arith.divf %in, %cst_0 : f32
    linalg.yield %9 : f32
  } -> tensor<16xf32>
  %4 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "reduction", "reduction", "reduction"]} ins(%arg0, %3 : tensor<16x64x256x256xf32>, tensor<16xf32>) outs(%1 : tensor<16xf32>) {
  ^bb0(%in: f32, %in_2: f32, %out: f32):
    %9 = arith.subf %in, %in_2 : f32
    %10 = arith.mulf %9, %9 : f32
    %11 = arith.addf %10, %out : f32
    linalg.yield %11 : f32
  } -> tensor<16xf32>
  %5 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel"]} ins(%4 : tensor<16xf32>) outs(%0 : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %9 = arith.divf %in, %cst_0 : f32
    %10 = arith.addf %9, %cst_1 : f32
    %11 = math.rsqrt %10 : f32
    linalg.yield %11 : f32
  } -> tensor<16xf32>
  %6 = tensor.empty() : tensor<16x64x256x256xf32>
  %7 = linalg.generic {indexing_maps = [#map, #map1, #map1, #map3, #map3, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0, %3, %5, %arg1, %arg2 : tensor<16x64x256x256xf32>, tensor<16xf32>, tensor<16xf32>, tensor<64x256x256xf32>, tensor<64x256x256xf32>) outs(%6 : tensor<16x64x256x256xf32>) {
  ^bb0(%in: f32, %in_2: f32, %in_3: f32, %in_4: f32, %in_5: f32, %out: f32):
    %9 = arith.subf %in, %in_2 : f32
    %10 = arith.mulf %9, %in_3 : f32
    %11 = arith.mulf %10, %in_4 : f32
    %12 = arith.addf %11, %in_5 : f32
    linalg.yield %12 : f32
  } -> tensor<16x64x256x256xf32>
  return %7 : tensor<16x64x256x256xf32>
}
