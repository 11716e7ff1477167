// leaky_relu: x > 0 ? x : 0.01 x
// PyTorch: F.leaky_relu(x, negative_slope=0.01)
// Shape: x 4096x65536 f32 (KernelBench level 1 #20 LeakyReLU: 4096x393216, shrunk to 1 GiB per
// tensor: the full shape is 6 GiB a tensor, of which the verifier and the search keep several).
// cpu-check: 4096=4 65536=8
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @leaky_relu(%arg0: tensor<4096x65536xf32>) -> tensor<4096x65536xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %slope = arith.constant 0.00999999977 : f32
  %0 = tensor.empty() : tensor<4096x65536xf32>
  %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<4096x65536xf32>) outs(%0 : tensor<4096x65536xf32>) {
  ^bb0(%in: f32, %out: f32):
    %2 = arith.cmpf ugt, %in, %zero : f32
    %3 = arith.mulf %in, %slope : f32
    %4 = arith.select %2, %in, %3 : f32
    linalg.yield %4 : f32
  } -> tensor<4096x65536xf32>
  return %1 : tensor<4096x65536xf32>
}
