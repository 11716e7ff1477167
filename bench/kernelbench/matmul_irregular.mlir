// matmul_irregular: C = A @ B with sizes that are no multiple of any tile.
// PyTorch: torch.matmul(A, B)
// Shape: A 4101x2949, B 2949x5921 f32 (KernelBench level 1 #8 Matmul with irregular shapes:
// M 8205, K 2949, N 5921; M shrunk to 4101 (still odd): the full problem is 286 GFLOP, ~5.5 ms).
// cpu-check: 4101=5 2949=7 5921=3
func.func @matmul_irregular(%arg0: tensor<4101x2949xf32>, %arg1: tensor<2949x5921xf32>) -> tensor<4101x5921xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<4101x5921xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<4101x5921xf32>) -> tensor<4101x5921xf32>
  %2 = linalg.matmul ins(%arg0, %arg1 : tensor<4101x2949xf32>, tensor<2949x5921xf32>) outs(%1 : tensor<4101x5921xf32>) -> tensor<4101x5921xf32>
  return %2 : tensor<4101x5921xf32>
}
