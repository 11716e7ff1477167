// matmul_3d: 3-D tensor times matrix, C[n,m,l] = sum_k A[n,m,k] B[k,l], as a generic contraction
// (the matrix broadcast over the batch).
// PyTorch: torch.matmul(A, B)
// Shape: A 16x1024x2048, B 2048x768 f32 (KernelBench level 1 #10 3D tensor matrix
// multiplication: N 16, M 1024, K 2048, L 768).
// cpu-check: 1024=3 2048=4 768=5
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
#map2 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
func.func @matmul_3d(%arg0: tensor<16x1024x2048xf32>, %arg1: tensor<2048x768xf32>) -> tensor<16x1024x768xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<16x1024x768xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<16x1024x768xf32>) -> tensor<16x1024x768xf32>
  %2 = linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%arg0, %arg1 : tensor<16x1024x2048xf32>, tensor<2048x768xf32>) outs(%1 : tensor<16x1024x768xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %3 = arith.mulf %in, %in_0 : f32
    %4 = arith.addf %out, %3 : f32
    linalg.yield %4 : f32
  } -> tensor<16x1024x768xf32>
  return %2 : tensor<16x1024x768xf32>
}
