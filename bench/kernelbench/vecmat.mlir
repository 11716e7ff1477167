// vecmat: vector times matrix, y = x @ A (linalg.vecmat).
// PyTorch: torch.matmul(x, A)
// Shape: x 16384, A 16384x16384 f32 (not in KernelBench level 1, the transpose of #4's
// matrix-vector product; A is 1 GiB, ~0.25 ms to read).
// cpu-check: 16384=6
func.func @vecmat(%arg0: tensor<16384xf32>, %arg1: tensor<16384x16384xf32>) -> tensor<16384xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<16384xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<16384xf32>) -> tensor<16384xf32>
  %2 = linalg.vecmat ins(%arg0, %arg1 : tensor<16384xf32>, tensor<16384x16384xf32>) outs(%1 : tensor<16384xf32>) -> tensor<16384xf32>
  return %2 : tensor<16384xf32>
}
