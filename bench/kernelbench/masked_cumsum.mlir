// masked_cumsum: prefix sum of the elements a boolean mask keeps:
// out[i][j] = sum_k (k <= j and mask[i][k] ? x[i][k] : 0), the mask an i1 tensor as torch-mlir
// passes a torch.bool
// PyTorch: torch.cumsum(x * mask, dim=1)
// Shape: x 128x4000 f32, mask 128x4000 i1 (KernelBench level 1 #93 masked cumsum: batch 128, 4000 per row, dim 1;
// kept at that size: the masked triangular form costs O(L^2) per row, so larger rows or batches
// only make the naive baseline slower. PyTorch's time here is below 0.05 ms.)
// cpu-check: 128=3 4000=9
#map = affine_map<(d0, d1, d2) -> (d0, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @masked_cumsum(%arg0: tensor<128x4000xf32>, %arg1: tensor<128x4000xi1>) -> tensor<128x4000xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %zero = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<128x4000xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<128x4000xf32>) -> tensor<128x4000xf32>
  %2 = linalg.generic {indexing_maps = [#map, #map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0, %arg1 : tensor<128x4000xf32>, tensor<128x4000xi1>) outs(%1 : tensor<128x4000xf32>) {
  ^bb0(%in: f32, %in_0: i1, %out: f32):
    %3 = linalg.index 1 : index
    %4 = linalg.index 2 : index
    %5 = arith.cmpi ule, %4, %3 : index
    %v = arith.select %in_0, %in, %zero : f32
    %6 = arith.select %5, %v, %cst : f32
    %7 = arith.addf %6, %out : f32
    linalg.yield %7 : f32
  } -> tensor<128x4000xf32>
  return %2 : tensor<128x4000xf32>
}
