// rmsnorm: RMS normalisation over the feature dimension (dim 1), no weight, eps 1e-5:
// x / sqrt(mean(x^2 over dim 1) + eps).
// PyTorch: x / torch.sqrt(torch.mean(x * x, dim=1, keepdim=True) + 1e-5)
// Shape: x 16x64x256x256 f32 (KernelBench level 1 #36 RMSNorm: batch 16, 64 features, 256x256).
// cpu-check: 64=4 256=3
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
func.func @rmsnorm(%arg0: tensor<16x64x256x256xf32>) -> tensor<16x64x256x256xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %cst_0 = arith.constant 64.0 : f32
  %cst_1 = arith.constant 9.99999974E-6 : f32
  %0 = tensor.empty() : tensor<16x256x256xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<16x256x256xf32>) -> tensor<16x256x256xf32>
  %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction", "parallel", "parallel"]} ins(%arg0 : tensor<16x64x256x256xf32>) outs(%1 : tensor<16x256x256xf32>) {
  ^bb0(%in: f32, %out: f32):
    %5 = arith.mulf %in, %in : f32
    %6 = arith.addf %5, %out : f32
    linalg.yield %6 : f32
  } -> tensor<16x256x256xf32>
  %3 = tensor.empty() : tensor<16x64x256x256xf32>
  %4 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0, %2 : tensor<16x64x256x256xf32>, tensor<16x256x256xf32>) outs(%3 : tensor<16x64x256x256xf32>) {
  ^bb0(%in: f32, %in_2: f32, %out: f32):
    %5 = arith.divf %in_2, %cst_0 : f32
    %6 = arith.addf %5, %cst_1 : f32
    %7 = math.sqrt %6 : f32
    %8 = arith.divf %in, %7 : f32
    linalg.yield %8 : f32
  } -> tensor<16x64x256x256xf32>
  return %4 : tensor<16x64x256x256xf32>
}
