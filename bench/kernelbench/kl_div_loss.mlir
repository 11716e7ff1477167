// kl_div_loss: KL divergence of the distribution rows of t from those of p, reduction 'batchmean':
// sum(t * (log t - log p)) / batch, with log p computed in the function as KernelBench does.
// PyTorch: F.kl_div(torch.log(p), t, reduction='batchmean')
// Shape: p, t 4096x8192 f32 (KernelBench level 1 #98 KLDivLoss: batch 128 x 4096 in the
// first release, 32768 x 32768 in the current one; here 4096 x 8192, 128 MiB per input: evo's
// oracle keeps every element of the elementwise intermediate, ~90 CPU-s a run at 8192 x 8192)
// p and t are rows of probabilities, none near 0.
// cpu-check: 4096=3 8192=4
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> ()>
#map2 = affine_map<() -> ()>
func.func @kl_div_loss(%arg0: tensor<4096x8192xf32> {evo.range = [1.000000e-06, 1.000000e+00]}, %arg1: tensor<4096x8192xf32> {evo.range = [1.000000e-06, 1.000000e+00]}) -> tensor<f32> {
  %cst = arith.constant 0.000000e+00 : f32
  %cst_n = arith.constant 4096.0 : f32
  %0 = tensor.empty() : tensor<4096x8192xf32>
  %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<4096x8192xf32>) outs(%0 : tensor<4096x8192xf32>) {
  ^bb0(%in: f32, %out: f32):
    %7 = math.log %in : f32
    linalg.yield %7 : f32
  } -> tensor<4096x8192xf32>
  %2 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg1, %1 : tensor<4096x8192xf32>, tensor<4096x8192xf32>) outs(%0 : tensor<4096x8192xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %7 = math.log %in : f32
    %8 = arith.subf %7, %in_0 : f32
    %9 = arith.mulf %in, %8 : f32
    linalg.yield %9 : f32
  } -> tensor<4096x8192xf32>
  %3 = tensor.empty() : tensor<f32>
  %4 = linalg.fill ins(%cst : f32) outs(%3 : tensor<f32>) -> tensor<f32>
  %5 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["reduction", "reduction"]} ins(%2 : tensor<4096x8192xf32>) outs(%4 : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %7 = arith.addf %in, %out : f32
    linalg.yield %7 : f32
  } -> tensor<f32>
  %6 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = []} ins(%5 : tensor<f32>) outs(%3 : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %7 = arith.divf %in, %cst_n : f32
    linalg.yield %7 : f32
  } -> tensor<f32>
  return %6 : tensor<f32>
}
