// relu6: clamp(x, 0, 6)
// PyTorch: F.relu6(x)
// Shape: x 4096x65536 f32, the size of the activations of KernelBench level 1 (#19-#32:
// 4096x393216, shrunk to 1 GiB per tensor); not in level 1; ReLU6, the hardtanh family.
// cpu-check: 4096=4 65536=8
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @relu6(%arg0: tensor<4096x65536xf32>) -> tensor<4096x65536xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %six = arith.constant 6.000000e+00 : f32
  %0 = tensor.empty() : tensor<4096x65536xf32>
  %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<4096x65536xf32>) outs(%0 : tensor<4096x65536xf32>) {
  ^bb0(%in: f32, %out: f32):
    %2 = arith.maximumf %in, %zero : f32
    %3 = arith.minimumf %2, %six : f32
    linalg.yield %3 : f32
  } -> tensor<4096x65536xf32>
  return %1 : tensor<4096x65536xf32>
}
