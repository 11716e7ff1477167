// matmul_scalar: matrix-scalar multiplication, C = A * 3.14 (the scalar a constant of the module,
// as torch-mlir folds a Python float).
// PyTorch: A * 3.14
// Shape: A 16384x16384 f32 (KernelBench level 1 #5 Matrix scalar multiplication: 65536x16384,
// shrunk to 1 GiB per tensor).
// cpu-check: 16384=6
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @matmul_scalar(%arg0: tensor<16384x16384xf32>) -> tensor<16384x16384xf32> {
  %cst = arith.constant 3.140000e+00 : f32
  %0 = tensor.empty() : tensor<16384x16384xf32>
  %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<16384x16384xf32>) outs(%0 : tensor<16384x16384xf32>) {
  ^bb0(%in: f32, %out: f32):
    %2 = arith.mulf %in, %cst : f32
    linalg.yield %2 : f32
  } -> tensor<16384x16384xf32>
  return %1 : tensor<16384x16384xf32>
}
