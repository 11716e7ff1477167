// matmul_large_k: C = A @ B with a long reduction dimension.
// PyTorch: torch.matmul(A, B)
// Shape: A 256x131072, B 131072x256 f32 (KernelBench level 1 #6 Matmul with large K: K 524288;
// shrunk to the first KernelBench's K = 131072: 17 GFLOP, ~0.4 ms).
// cpu-check: 256=3 131072=9
func.func @matmul_large_k(%arg0: tensor<256x131072xf32>, %arg1: tensor<131072x256xf32>) -> tensor<256x256xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<256x256xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<256x256xf32>) -> tensor<256x256xf32>
  %2 = linalg.matmul ins(%arg0, %arg1 : tensor<256x131072xf32>, tensor<131072x256xf32>) outs(%1 : tensor<256x256xf32>) -> tensor<256x256xf32>
  return %2 : tensor<256x256xf32>
}
