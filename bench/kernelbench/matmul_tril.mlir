// matmul_tril: the lower triangle of A @ B, for lower-triangular A and B, written as one masked
// generic contraction: C[i][j] = sum_k (j <= i ? A[i][k] B[k][j] : 0).
// PyTorch: torch.tril(torch.matmul(A, B))
// Shape: A, B 4096x4096 f32, lower triangular (KernelBench level 1 #15 Matmul for lower triangular
// matrices: N = 4096).
// cpu-check: 4096=5
#map = affine_map<(d0, d1, d2) -> (d0, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d2, d1)>
#map2 = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @matmul_tril(%arg0: tensor<4096x4096xf32>, %arg1: tensor<4096x4096xf32>) -> tensor<4096x4096xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<4096x4096xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  %2 = linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0, %arg1 : tensor<4096x4096xf32>, tensor<4096x4096xf32>) outs(%1 : tensor<4096x4096xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %3 = linalg.index 0 : index
    %4 = linalg.index 1 : index
    %5 = arith.cmpi sle, %4, %3 : index
    %6 = arith.mulf %in, %in_0 : f32
    %7 = arith.select %5, %6, %cst : f32
    %8 = arith.addf %out, %7 : f32
    linalg.yield %8 : f32
  } -> tensor<4096x4096xf32>
  return %2 : tensor<4096x4096xf32>
}
