// matmul_diag: diag(a) @ B as torch-mlir exports it: torch.diag builds the N x N diagonal
// matrix (a generic selecting a[i] where i == j), then a full linalg.matmul (PyTorch does the same
// work: torch.diag materializes the matrix and cuBLAS multiplies it).
// PyTorch: torch.diag(a) @ B
// Shape: a 4096, B 4096x4096 f32 (KernelBench level 1 #12 Matmul with diagonal matrices:
// N = M = 4096).
// cpu-check: 4096=5
#map = affine_map<(d0, d1) -> (d0)>
#map1 = affine_map<(d0, d1) -> (d0, d1)>
func.func @matmul_diag(%arg0: tensor<4096xf32>, %arg1: tensor<4096x4096xf32>) -> tensor<4096x4096xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<4096x4096xf32>
  %1 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<4096xf32>) outs(%0 : tensor<4096x4096xf32>) {
  ^bb0(%in: f32, %out: f32):
    %4 = linalg.index 0 : index
    %5 = linalg.index 1 : index
    %6 = arith.cmpi eq, %4, %5 : index
    %7 = arith.select %6, %in, %cst : f32
    linalg.yield %7 : f32
  } -> tensor<4096x4096xf32>
  %2 = linalg.fill ins(%cst : f32) outs(%0 : tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  %3 = linalg.matmul ins(%1, %arg1 : tensor<4096x4096xf32>, tensor<4096x4096xf32>) outs(%2 : tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  return %3 : tensor<4096x4096xf32>
}
