// matmul_triu: the upper triangle of A @ B, for upper-triangular A and B: a linalg.matmul then a
// generic that keeps C[i][j] where j >= i (torch.triu, as torch-mlir exports it).
// PyTorch: torch.triu(torch.matmul(A, B))
// Shape: A, B 4096x4096 f32, upper triangular (KernelBench level 1 #14 Matmul for upper triangular
// matrices: N = 4096).
// cpu-check: 4096=5
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @matmul_triu(%arg0: tensor<4096x4096xf32>, %arg1: tensor<4096x4096xf32>) -> tensor<4096x4096xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<4096x4096xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  %2 = linalg.matmul ins(%arg0, %arg1 : tensor<4096x4096xf32>, tensor<4096x4096xf32>) outs(%1 : tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  %3 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%2 : tensor<4096x4096xf32>) outs(%0 : tensor<4096x4096xf32>) {
  ^bb0(%in: f32, %out: f32):
    %4 = linalg.index 0 : index
    %5 = linalg.index 1 : index
    %6 = arith.cmpi sge, %5, %4 : index
    %7 = arith.select %6, %in, %cst : f32
    linalg.yield %7 : f32
  } -> tensor<4096x4096xf32>
  return %3 : tensor<4096x4096xf32>
}
