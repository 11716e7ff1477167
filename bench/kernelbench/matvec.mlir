// matvec: matrix times a K x 1 matrix, as KernelBench writes it (torch-mlir exports a
// linalg.matmul with N = 1).
// PyTorch: torch.matmul(A, B)
// Shape: A 2048x262144, B 262144x1 f32 (KernelBench level 1 #4 Matrix vector multiplication:
// M 2048, K 1048576; K shrunk to 262144: A is 8 GiB at full size, 2 GiB here, ~0.5 ms to read).
// cpu-check: 2048=4 262144=8
func.func @matvec(%arg0: tensor<2048x262144xf32>, %arg1: tensor<262144x1xf32>) -> tensor<2048x1xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<2048x1xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<2048x1xf32>) -> tensor<2048x1xf32>
  %2 = linalg.matmul ins(%arg0, %arg1 : tensor<2048x262144xf32>, tensor<262144x1xf32>) outs(%1 : tensor<2048x1xf32>) -> tensor<2048x1xf32>
  return %2 : tensor<2048x1xf32>
}
