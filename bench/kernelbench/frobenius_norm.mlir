// frobenius_norm: the whole tensor divided by its Frobenius norm: a reduction to a 0-d tensor,
// its square root, and an elementwise division.
// PyTorch: x / torch.norm(x, p='fro')
// Shape: x 16x64x256x256 f32 (KernelBench level 1 #37 FrobeniusNorm: batch 16, 64 features,
// 256x256).
// cpu-check: 64=3 256=4
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> ()>
#map2 = affine_map<() -> ()>
func.func @frobenius_norm(%arg0: tensor<16x64x256x256xf32>) -> tensor<16x64x256x256xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<f32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<f32>) -> tensor<f32>
  %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["reduction", "reduction", "reduction", "reduction"]} ins(%arg0 : tensor<16x64x256x256xf32>) outs(%1 : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %7 = arith.mulf %in, %in : f32
    %8 = arith.addf %7, %out : f32
    linalg.yield %8 : f32
  } -> tensor<f32>
  %3 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = []} ins(%2 : tensor<f32>) outs(%0 : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %7 = math.sqrt %in : f32
    linalg.yield %7 : f32
  } -> tensor<f32>
  %4 = tensor.empty() : tensor<16x64x256x256xf32>
  %5 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0, %3 : tensor<16x64x256x256xf32>, tensor<f32>) outs(%4 : tensor<16x64x256x256xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %7 = arith.divf %in, %in_0 : f32
    linalg.yield %7 : f32
  } -> tensor<16x64x256x256xf32>
  return %5 : tensor<16x64x256x256xf32>
}
