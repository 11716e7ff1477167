// triplet_margin_loss: mean over rows of max(|a - p + eps| - |a - n + eps| + 1, 0) (L2 distances,
// eps 1e-6 added to the differences as F.pairwise_distance does, margin 1).
// PyTorch: F.triplet_margin_loss(a, p, n, margin=1.0)
// Shape: a, p, n 8192x8192 f32 (KernelBench level 1 #99 TripletMarginLoss: batch 128 x 4096 in the
// first release, 32768 x 32768 in the current one; here 8192 x 8192, 256 MiB per input)
// cpu-check: 8192=4
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0)>
#mapv = affine_map<(d0) -> (d0)>
#mapv0 = affine_map<(d0) -> ()>
#map2 = affine_map<() -> ()>
func.func @triplet_margin_loss(%arg0: tensor<8192x8192xf32>, %arg1: tensor<8192x8192xf32>, %arg2: tensor<8192x8192xf32>) -> tensor<f32> {
  %cst = arith.constant 0.000000e+00 : f32
  %eps = arith.constant 9.99999997E-7 : f32
  %margin = arith.constant 1.000000e+00 : f32
  %cst_n = arith.constant 8192.0 : f32
  %0 = tensor.empty() : tensor<8192xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<8192xf32>) -> tensor<8192xf32>
  %2:2 = linalg.generic {indexing_maps = [#map, #map, #map, #map1, #map1], iterator_types = ["parallel", "reduction"]} ins(%arg0, %arg1, %arg2 : tensor<8192x8192xf32>, tensor<8192x8192xf32>, tensor<8192x8192xf32>) outs(%1, %1 : tensor<8192xf32>, tensor<8192xf32>) {
  ^bb0(%in: f32, %in_0: f32, %in_1: f32, %out: f32, %out_2: f32):
    %s0 = arith.subf %in, %in_0 : f32
    %s1 = arith.addf %s0, %eps : f32
    %s2 = arith.mulf %s1, %s1 : f32
    %s3 = arith.addf %s2, %out : f32
    %s4 = arith.subf %in, %in_1 : f32
    %s5 = arith.addf %s4, %eps : f32
    %s6 = arith.mulf %s5, %s5 : f32
    %s7 = arith.addf %s6, %out_2 : f32
    linalg.yield %s3, %s7 : f32, f32
  } -> (tensor<8192xf32>, tensor<8192xf32>)
  %3 = linalg.generic {indexing_maps = [#mapv, #mapv, #mapv], iterator_types = ["parallel"]} ins(%2#0, %2#1 : tensor<8192xf32>, tensor<8192xf32>) outs(%0 : tensor<8192xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %s0 = math.sqrt %in : f32
    %s1 = math.sqrt %in_0 : f32
    %s2 = arith.subf %s0, %s1 : f32
    %s3 = arith.addf %s2, %margin : f32
    %s4 = arith.maximumf %s3, %cst : f32
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
