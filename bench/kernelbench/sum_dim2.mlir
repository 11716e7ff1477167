// sum_dim2: sum over the last dimension (rows of odd length 4095)
// PyTorch: torch.sum(x, dim=2)
// Shape: x 16x4096x4095 f32 (KernelBench level 1 #47 Sum reduction over a dimension, here over dim 2: batch 128, dim1 4096, dim2 4095 in the
// current release (16x256x256 in the first); batch shrunk to 16: 1 GiB, ~0.25 ms to read).
// cpu-check: 4096=5 4095=3
#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @sum_dim2(%arg0: tensor<16x4096x4095xf32>) -> tensor<16x4096xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<16x4096xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<16x4096xf32>) -> tensor<16x4096xf32>
  %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0 : tensor<16x4096x4095xf32>) outs(%1 : tensor<16x4096xf32>) {
  ^bb0(%in: f32, %out: f32):
    %3 = arith.addf %in, %out : f32
    linalg.yield %3 : f32
  } -> tensor<16x4096xf32>
  return %2 : tensor<16x4096xf32>
}
