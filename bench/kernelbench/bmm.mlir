// bmm: batched matrix multiplication, C[b] = A[b] @ B[b].
// PyTorch: torch.bmm(A, B)
// Shape: A 32x512x1024, B 32x1024x2048 f32 (KernelBench level 1 #3 Batched matrix
// multiplication: batch 128, m 512, k 1024, n 2048; batch shrunk to 32: 275 GFLOP is ~5.5 ms in
// f32 on an H200, 32 batches ~1.4 ms).
// cpu-check: 512=3 1024=4 2048=5
func.func @bmm(%arg0: tensor<32x512x1024xf32>, %arg1: tensor<32x1024x2048xf32>) -> tensor<32x512x2048xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<32x512x2048xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<32x512x2048xf32>) -> tensor<32x512x2048xf32>
  %2 = linalg.batch_matmul ins(%arg0, %arg1 : tensor<32x512x1024xf32>, tensor<32x1024x2048xf32>) outs(%1 : tensor<32x512x2048xf32>) -> tensor<32x512x2048xf32>
  return %2 : tensor<32x512x2048xf32>
}
