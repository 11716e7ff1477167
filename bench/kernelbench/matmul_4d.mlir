// matmul_4d: 4-D tensor times matrix, C[b,i,j,k] = sum_l A[b,i,j,l] B[l,k], as a generic
// contraction.
// PyTorch: torch.einsum("bijl,lk->bijk", A, B)
// Shape: A 2x256x512x256, B 256x768 f32 (KernelBench level 1 #11 4D tensor matrix multiplication:
// b 16, i 256, j 512, l 256, k 768; b shrunk to 2: the full problem is 824 GFLOP, ~16 ms).
// cpu-check: 256=3 512=4 768=5
#map = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
#map1 = affine_map<(d0, d1, d2, d3, d4) -> (d4, d3)>
#map2 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
func.func @matmul_4d(%arg0: tensor<2x256x512x256xf32>, %arg1: tensor<256x768xf32>) -> tensor<2x256x512x768xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<2x256x512x768xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<2x256x512x768xf32>) -> tensor<2x256x512x768xf32>
  %2 = linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%arg0, %arg1 : tensor<2x256x512x256xf32>, tensor<256x768xf32>) outs(%1 : tensor<2x256x512x768xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %3 = arith.mulf %in, %in_0 : f32
    %4 = arith.addf %out, %3 : f32
    linalg.yield %4 : f32
  } -> tensor<2x256x512x768xf32>
  return %2 : tensor<2x256x512x768xf32>
}
