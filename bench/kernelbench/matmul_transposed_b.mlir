// matmul_transposed_b: C = A @ B^T with B stored N x K (nn.Linear's weight layout), a
// linalg.matmul whose indexing maps read B transposed.
// PyTorch: torch.matmul(A, B.T)
// Shape: A 2048x8192, B 4096x8192 f32 (KernelBench level 1 #17 Matmul with transposed B:
// M 2048, K 8192, N 4096).
// cpu-check: 8192=6 2048=4 4096=5
func.func @matmul_transposed_b(%arg0: tensor<2048x8192xf32>, %arg1: tensor<4096x8192xf32>) -> tensor<2048x4096xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<2048x4096xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<2048x4096xf32>) -> tensor<2048x4096xf32>
  %2 = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%arg0, %arg1 : tensor<2048x8192xf32>, tensor<4096x8192xf32>) outs(%1 : tensor<2048x4096xf32>) -> tensor<2048x4096xf32>
  return %2 : tensor<2048x4096xf32>
}
