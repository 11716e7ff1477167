// mean_dim1: mean over dim 1: a sum generic, then a division by the count (torch-mlir's form).
// PyTorch: torch.mean(x, dim=1)
// Shape: x 16x4096x4095 f32 (KernelBench level 1 #48 Mean reduction over a dimension: batch 128, dim1 4096, dim2 4095 in the
// current release (16x256x256 in the first); batch shrunk to 16: 1 GiB, ~0.25 ms to read).
// cpu-check: 4096=5 4095=3
#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d2)>
#map2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @mean_dim1(%arg0: tensor<16x4096x4095xf32>) -> tensor<16x4095xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %cst_0 = arith.constant 4096.0 : f32
  %0 = tensor.empty() : tensor<16x4095xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<16x4095xf32>) -> tensor<16x4095xf32>
  %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction", "parallel"]} ins(%arg0 : tensor<16x4096x4095xf32>) outs(%1 : tensor<16x4095xf32>) {
  ^bb0(%in: f32, %out: f32):
    %4 = arith.addf %in, %out : f32
    linalg.yield %4 : f32
  } -> tensor<16x4095xf32>
  %3 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel"]} ins(%2 : tensor<16x4095xf32>) outs(%0 : tensor<16x4095xf32>) {
  ^bb0(%in: f32, %out: f32):
    %4 = arith.divf %in, %cst_0 : f32
    linalg.yield %4 : f32
  } -> tensor<16x4095xf32>
  return %3 : tensor<16x4095xf32>
}
