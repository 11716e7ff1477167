// matmul_transposed_a: C = A^T @ B with A stored K x M, as torch-mlir exports it (aten.t is a
// linalg.transpose, then a linalg.matmul).
// PyTorch: torch.matmul(A.T, B)
// Shape: A 8192x2048, B 8192x4096 f32 (KernelBench level 1 #16 Matmul with transposed A:
// M 2048, K 8192, N 4096).
// cpu-check: 8192=6 2048=4 4096=5
func.func @matmul_transposed_a(%arg0: tensor<8192x2048xf32>, %arg1: tensor<8192x4096xf32>) -> tensor<2048x4096xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<2048x8192xf32>
  %transposed = linalg.transpose ins(%arg0 : tensor<8192x2048xf32>) outs(%0 : tensor<2048x8192xf32>) permutation = [1, 0]
  %1 = tensor.empty() : tensor<2048x4096xf32>
  %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<2048x4096xf32>) -> tensor<2048x4096xf32>
  %3 = linalg.matmul ins(%transposed, %arg1 : tensor<2048x8192xf32>, tensor<8192x4096xf32>) outs(%2 : tensor<2048x4096xf32>) -> tensor<2048x4096xf32>
  return %3 : tensor<2048x4096xf32>
}
