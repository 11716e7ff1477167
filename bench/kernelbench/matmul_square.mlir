// matmul_square: C = A @ B, square f32 matrices (cuBLAS without TF32 on the PyTorch side).
// PyTorch: torch.matmul(A, B)
// Shape: A, B 4096x4096 f32 (KernelBench level 1 #1 Square matrix multiplication: N = 4096).
// cpu-check: 4096=5
func.func @matmul_square(%arg0: tensor<4096x4096xf32>, %arg1: tensor<4096x4096xf32>) -> tensor<4096x4096xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<4096x4096xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  %2 = linalg.matmul ins(%arg0, %arg1 : tensor<4096x4096xf32>, tensor<4096x4096xf32>) outs(%1 : tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  return %2 : tensor<4096x4096xf32>
}
