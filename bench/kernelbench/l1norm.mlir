// l1norm: each row divided by its L1 norm (sum of absolute values).
// PyTorch: x / torch.sum(torch.abs(x), dim=1, keepdim=True)
// Shape: x 2048x65535 f32 (KernelBench level 1 #38 L1Norm: batch 32768, dim 65535 in the current
// release; batch shrunk to 2048: 512 MiB per tensor. The odd row length stays.)
// cpu-check: 2048=3 65535=7
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0)>
func.func @l1norm(%arg0: tensor<2048x65535xf32>) -> tensor<2048x65535xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<2048xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<2048xf32>) -> tensor<2048xf32>
  %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<2048x65535xf32>) outs(%1 : tensor<2048xf32>) {
  ^bb0(%in: f32, %out: f32):
    %5 = math.absf %in : f32
    %6 = arith.addf %5, %out : f32
    linalg.yield %6 : f32
  } -> tensor<2048xf32>
  %3 = tensor.empty() : tensor<2048x65535xf32>
  %4 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0, %2 : tensor<2048x65535xf32>, tensor<2048xf32>) outs(%3 : tensor<2048x65535xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %5 = arith.divf %in, %in_0 : f32
    linalg.yield %5 : f32
  } -> tensor<2048x65535xf32>
  return %4 : tensor<2048x65535xf32>
}
