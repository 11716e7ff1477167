// selu: scale * (x > 0 ? x : alpha * expm1(x))
// PyTorch: torch.selu(x)
// Shape: x 4096x65536 f32 (KernelBench level 1 #27 SELU: 4096x393216, shrunk to 1 GiB per
// tensor: the full shape is 6 GiB a tensor, of which the verifier and the search keep several).
// cpu-check: 4096=4 65536=8
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @selu(%arg0: tensor<4096x65536xf32>) -> tensor<4096x65536xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %alpha = arith.constant 1.67326319 : f32
  %scale = arith.constant 1.05070102 : f32
  %0 = tensor.empty() : tensor<4096x65536xf32>
  %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<4096x65536xf32>) outs(%0 : tensor<4096x65536xf32>) {
  ^bb0(%in: f32, %out: f32):
    %2 = arith.cmpf ugt, %in, %zero : f32
    %3 = math.expm1 %in : f32
    %4 = arith.mulf %3, %alpha : f32
    %5 = arith.select %2, %in, %4 : f32
    %6 = arith.mulf %5, %scale : f32
    linalg.yield %6 : f32
  } -> tensor<4096x65536xf32>
  return %1 : tensor<4096x65536xf32>
}
