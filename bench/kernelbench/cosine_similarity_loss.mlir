// cosine_similarity_loss: mean over rows of 1 - cos(p_i, t_i), cos = p.t / sqrt(max(|p|^2 |t|^2,
// eps^2)), eps 1e-8: three row reductions, a per-row epilogue, a mean.
// PyTorch: torch.mean(1 - F.cosine_similarity(p, t, dim=1))
// Shape: p, t 8192x8192 f32 (KernelBench level 1 #97 CosineSimilarityLoss: batch 128 x 4096 in the
// first release, 32768 x 32768 in the current one; here 8192 x 8192, 256 MiB per input)
// cpu-check: 8192=4
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0)>
#mapv = affine_map<(d0) -> (d0)>
#mapv0 = affine_map<(d0) -> ()>
#map2 = affine_map<() -> ()>
func.func @cosine_similarity_loss(%arg0: tensor<8192x8192xf32>, %arg1: tensor<8192x8192xf32>) -> tensor<f32> {
  %cst = arith.constant 0.000000e+00 : f32
  %one = arith.constant 1.000000e+00 : f32
  %eps2 = arith.constant 1.000000e-16 : f32
  %cst_n = arith.constant 8192.0 : f32
  %0 = tensor.empty() : tensor<8192xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<8192xf32>) -> tensor<8192xf32>
  %2:3 = linalg.generic {indexing_maps = [#map, #map, #map1, #map1, #map1], iterator_types = ["parallel", "reduction"]} ins(%arg0, %arg1 : tensor<8192x8192xf32>, tensor<8192x8192xf32>) outs(%1, %1, %1 : tensor<8192xf32>, tensor<8192xf32>, tensor<8192xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32, %out_1: f32, %out_2: f32):
    %s0 = arith.mulf %in, %in_0 : f32
    %s1 = arith.addf %s0, %out : f32
    %s2 = arith.mulf %in, %in : f32
    %s3 = arith.addf %s2, %out_1 : f32
    %s4 = arith.mulf %in_0, %in_0 : f32
    %s5 = arith.addf %s4, %out_2 : f32
    linalg.yield %s1, %s3, %s5 : f32, f32, f32
  } -> (tensor<8192xf32>, tensor<8192xf32>, tensor<8192xf32>)
  %3 = linalg.generic {indexing_maps = [#mapv, #mapv, #mapv, #mapv], iterator_types = ["parallel"]} ins(%2#0, %2#1, %2#2 : tensor<8192xf32>, tensor<8192xf32>, tensor<8192xf32>) outs(%0 : tensor<8192xf32>) {
  ^bb0(%in: f32, %in_0: f32, %in_1: f32, %out: f32):
    %s0 = arith.mulf %in_0, %in_1 : f32
    %s1 = arith.maximumf %s0, %eps2 : f32
    %s2 = math.sqrt %s1 : f32
    %s3 = arith.divf %in, %s2 : f32
    %s4 = arith.subf %one, %s3 : f32
    linalg.yield %s4 : f32
  } -> tensor<8192xf32>
  %4 = tensor.empty() : tensor<f32>
  %5 = linalg.fill ins(%cst : f32) outs(%4 : tensor<f32>) -> tensor<f32>
  %6 = linalg.generic {indexing_maps = [#mapv, #mapv0], iterator_types = ["reduction"]} ins(%3 : tensor<8192xf32>) outs(%5 : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %7 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = []} ins(%6 : tensor<f32>) outs(%4 : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.divf %in, %cst_n : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %7 : tensor<f32>
}
