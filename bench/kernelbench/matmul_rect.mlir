// matmul_rect: C = A @ B, rectangular f32 matrices.
// PyTorch: torch.matmul(A, B)
// Shape: A 2048x8192, B 8192x4096 f32 (KernelBench level 1 #2 Standard matrix multiplication:
// M = 2048, K = 8192, N = 4096).
// cpu-check: 2048=4 8192=6 4096=5
func.func @matmul_rect(%arg0: tensor<2048x8192xf32>, %arg1: tensor<8192x4096xf32>) -> tensor<2048x4096xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<2048x4096xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<2048x4096xf32>) -> tensor<2048x4096xf32>
  %2 = linalg.matmul ins(%arg0, %arg1 : tensor<2048x8192xf32>, tensor<8192x4096xf32>) outs(%1 : tensor<2048x4096xf32>) -> tensor<2048x4096xf32>
  return %2 : tensor<2048x4096xf32>
}
