// gelu_tanh: tanh GELU (MinGPT's NewGELU), 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
// PyTorch: F.gelu(x, approximate='tanh')
// Shape: x 4096x65536 f32 (KernelBench level 1 #88 MinGPTNewGelu: 4096x393216, shrunk to 1 GiB per
// tensor: the full shape is 6 GiB a tensor, of which the verifier and the search keep several).
// cpu-check: 4096=4 65536=8
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @gelu_tanh(%arg0: tensor<4096x65536xf32>) -> tensor<4096x65536xf32> {
  %half = arith.constant 5.000000e-01 : f32
  %one = arith.constant 1.000000e+00 : f32
  %k0 = arith.constant 0.797884583 : f32
  %k1 = arith.constant 4.471500e-02 : f32
  %0 = tensor.empty() : tensor<4096x65536xf32>
  %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<4096x65536xf32>) outs(%0 : tensor<4096x65536xf32>) {
  ^bb0(%in: f32, %out: f32):
    %2 = arith.mulf %in, %in : f32
    %3 = arith.mulf %2, %in : f32
    %4 = arith.mulf %3, %k1 : f32
    %5 = arith.addf %in, %4 : f32
    %6 = arith.mulf %5, %k0 : f32
    %7 = math.tanh %6 : f32
    %8 = arith.addf %7, %one : f32
    %9 = arith.mulf %in, %half : f32
    %10 = arith.mulf %9, %8 : f32
    linalg.yield %10 : f32
  } -> tensor<4096x65536xf32>
  return %1 : tensor<4096x65536xf32>
}
