// softplus: x > 20 ? x : log1p(exp(x)) (beta 1, threshold 20)
// PyTorch: F.softplus(x)
// Shape: x 4096x65536 f32 (KernelBench level 1 #29 Softplus: 4096x393216, shrunk to 1 GiB per
// tensor: the full shape is 6 GiB a tensor, of which the verifier and the search keep several).
// cpu-check: 4096=4 65536=8
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @softplus(%arg0: tensor<4096x65536xf32>) -> tensor<4096x65536xf32> {
  %threshold = arith.constant 2.000000e+01 : f32
  %0 = tensor.empty() : tensor<4096x65536xf32>
  %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<4096x65536xf32>) outs(%0 : tensor<4096x65536xf32>) {
  ^bb0(%in: f32, %out: f32):
    %2 = arith.cmpf ogt, %in, %threshold : f32
    %3 = math.exp %in : f32
    %4 = math.log1p %3 : f32
    %5 = arith.select %2, %in, %4 : f32
    linalg.yield %5 : f32
  } -> tensor<4096x65536xf32>
  return %1 : tensor<4096x65536xf32>
}
