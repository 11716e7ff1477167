// l2norm: each row divided by its L2 norm.
// PyTorch: x / torch.norm(x, p=2, dim=1, keepdim=True)
// Shape: x 2048x65535 f32 (KernelBench level 1 #39 L2Norm: batch 32768, dim 65535 in the current
// release; batch shrunk to 2048: 512 MiB per tensor. The odd row length stays.)
// cpu-check: 2048=3 65535=7
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0)>
func.func @l2norm(%arg0: tensor<2048x65535xf32>) -> tensor<2048x65535xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<2048xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<2048xf32>) -> tensor<2048xf32>
  %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<2048x65535xf32>) outs(%1 : tensor<2048xf32>) {
  ^bb0(%in: f32, %out: f32):
    %5 = arith.mulf %in, %in : f32
    %6 = arith.addf %5, %out : f32
    linalg.yield %6 : f32
  } -> tensor<2048xf32>
  %3 = tensor.empty() : tensor<2048x65535xf32>
  %4 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0, %2 : tensor<2048x65535xf32>, tensor<2048xf32>) outs(%3 : tensor<2048x65535xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %5 = math.sqrt %in_0 : f32
    %6 = arith.divf %in, %5 : f32
    linalg.yield %6 : f32
  } -> tensor<2048x65535xf32>
  return %4 : tensor<2048x65535xf32>
}
