// cumprod: prefix product along dim 1: out[i][j] = prod_k (k <= j ? x[i][k] : 1); inputs in
// [0.998, 1.002] keep the 4000-term products finite
// PyTorch: torch.cumprod(x, dim=1)
// Shape: x 128x4000 f32 (KernelBench level 1 #90 cumprod: batch 128, 4000 per row, dim 1;
// kept at that size: the masked triangular form costs O(L^2) per row, so larger rows or batches
// only make the naive baseline slower. PyTorch's time here is below 0.05 ms.)
// cpu-check: 128=3 4000=9
#map = affine_map<(d0, d1, d2) -> (d0, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @cumprod(%arg0: tensor<128x4000xf32> {evo.range = [9.980000e-01, 1.002000e+00]}) -> tensor<128x4000xf32> {
  %cst = arith.constant 1.000000e+00 : f32
  %0 = tensor.empty() : tensor<128x4000xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<128x4000xf32>) -> tensor<128x4000xf32>
  %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0 : tensor<128x4000xf32>) outs(%1 : tensor<128x4000xf32>) {
  ^bb0(%in: f32, %out: f32):
    %3 = linalg.index 1 : index
    %4 = linalg.index 2 : index
    %5 = arith.cmpi ule, %4, %3 : index
    %6 = arith.select %5, %in, %cst : f32
    %7 = arith.mulf %6, %out : f32
    linalg.yield %7 : f32
  } -> tensor<128x4000xf32>
  return %2 : tensor<128x4000xf32>
}
