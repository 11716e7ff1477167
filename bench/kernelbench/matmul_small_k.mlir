// matmul_small_k: C = A @ B with a short reduction dimension (bound by writing C).
// PyTorch: torch.matmul(A, B)
// Shape: A 16384x64, B 64x16384 f32 (KernelBench level 1 #7 Matmul with small K: M = N = 32768,
// K 64; M and N shrunk to 16384: C is 4 GiB at full size, 1 GiB here).
// cpu-check: 16384=6 64=3
func.func @matmul_small_k(%arg0: tensor<16384x64xf32>, %arg1: tensor<64x16384xf32>) -> tensor<16384x16384xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<16384x16384xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<16384x16384xf32>) -> tensor<16384x16384xf32>
  %2 = linalg.matmul ins(%arg0, %arg1 : tensor<16384x64xf32>, tensor<64x16384xf32>) outs(%1 : tensor<16384x16384xf32>) -> tensor<16384x16384xf32>
  return %2 : tensor<16384x16384xf32>
}
