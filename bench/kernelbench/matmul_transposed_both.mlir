// matmul_transposed_both: C = A^T @ B^T with A stored K x M and B stored N x K, a linalg.matmul
// whose indexing maps read both transposed.
// PyTorch: torch.matmul(A.T, B.T)
// Shape: A 8192x2048, B 4096x8192 f32 (KernelBench level 1 #18 Matmul with transposed both:
// M 2048, K 8192, N 4096).
// cpu-check: 8192=6 2048=4 4096=5
func.func @matmul_transposed_both(%arg0: tensor<8192x2048xf32>, %arg1: tensor<4096x8192xf32>) -> tensor<2048x4096xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<2048x4096xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<2048x4096xf32>) -> tensor<2048x4096xf32>
  %2 = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%arg0, %arg1 : tensor<8192x2048xf32>, tensor<4096x8192xf32>) outs(%1 : tensor<2048x4096xf32>) -> tensor<2048x4096xf32>
  return %2 : tensor<2048x4096xf32>
}
