// mish: x * tanh(softplus(x)), softplus(x) = log1p(exp(x))
// PyTorch: F.mish(x)
// Shape: x 4096x65536 f32, the size of the activations of KernelBench level 1 (#19-#32:
// 4096x393216, shrunk to 1 GiB per tensor); not in level 1; Mish of level 2.
// cpu-check: 4096=4 65536=8
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @mish(%arg0: tensor<4096x65536xf32>) -> tensor<4096x65536xf32> {
  %0 = tensor.empty() : tensor<4096x65536xf32>
  %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<4096x65536xf32>) outs(%0 : tensor<4096x65536xf32>) {
  ^bb0(%in: f32, %out: f32):
    %2 = math.exp %in : f32
    %3 = math.log1p %2 : f32
    %4 = math.tanh %3 : f32
    %5 = arith.mulf %in, %4 : f32
    linalg.yield %5 : f32
  } -> tensor<4096x65536xf32>
  return %1 : tensor<4096x65536xf32>
}
