// cross_entropy_probs: cross-entropy of logits against class probabilities (soft targets), mean
// over samples: mean_i(sum_j t_ij (logsumexp(x_i) - x_ij)).
// PyTorch: F.cross_entropy(x, t)
// Shape: x 8192x4096 f32, t 8192x4096 f32 rows of probabilities (KernelBench level 1 #95 CrossEntropyLoss: 4096
// samples of 10 classes in the first release; here 8192 samples of 4096 classes, 128 MiB of logits)
// cpu-check: 8192=5 4096=7
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0)>
#mapv = affine_map<(d0) -> (d0)>
#mapv0 = affine_map<(d0) -> ()>
#map2 = affine_map<() -> ()>
func.func @cross_entropy_probs(%arg0: tensor<8192x4096xf32>, %arg1: tensor<8192x4096xf32> {evo.range = [0.000000e+00, 1.000000e+00]}) -> tensor<f32> {
  %cst = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %cst_n = arith.constant 8192.0 : f32
  %0 = tensor.empty() : tensor<8192xf32>
  %1 = linalg.fill ins(%ninf : f32) outs(%0 : tensor<8192xf32>) -> tensor<8192xf32>
  %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<8192x4096xf32>) outs(%1 : tensor<8192xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.maximumf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<8192xf32>
  %z = linalg.fill ins(%cst : f32) outs(%0 : tensor<8192xf32>) -> tensor<8192xf32>
  %3 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "reduction"]} ins(%arg0, %2 : tensor<8192x4096xf32>, tensor<8192xf32>) outs(%z : tensor<8192xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %s0 = arith.subf %in, %in_0 : f32
    %s1 = math.exp %s0 : f32
    %s2 = arith.addf %s1, %out : f32
    linalg.yield %s2 : f32
  } -> tensor<8192xf32>
  %4 = linalg.generic {indexing_maps = [#map, #map, #map1, #map1, #map1], iterator_types = ["parallel", "reduction"]} ins(%arg0, %arg1, %2, %3 : tensor<8192x4096xf32>, tensor<8192x4096xf32>, tensor<8192xf32>, tensor<8192xf32>) outs(%z : tensor<8192xf32>) {
  ^bb0(%in: f32, %in_0: f32, %in_1: f32, %in_2: f32, %out: f32):
    %s0 = math.log %in_2 : f32
    %s1 = arith.addf %in_1, %s0 : f32
    %s2 = arith.subf %s1, %in : f32
    %s3 = arith.mulf %in_0, %s2 : f32
    %s4 = arith.addf %s3, %out : f32
    linalg.yield %s4 : f32
  } -> tensor<8192xf32>
  %6 = tensor.empty() : tensor<f32>
  %7 = linalg.fill ins(%cst : f32) outs(%6 : tensor<f32>) -> tensor<f32>
  %8 = linalg.generic {indexing_maps = [#mapv, #mapv0], iterator_types = ["reduction"]} ins(%4 : tensor<8192xf32>) outs(%7 : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %9 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = []} ins(%8 : tensor<f32>) outs(%6 : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.divf %in, %cst_n : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %9 : tensor<f32>
}
