// hinge_loss: hinge loss, mean(max(1 - p t, 0)), t = +-1
// PyTorch: torch.mean(torch.clamp(1 - p * t, min=0))
// Shape: p, t 4096x8192 f32 (KernelBench level 1 #100 HingeLoss (there p is [batch, 1] broadcast against t [batch]; here both full): batch 128 x 4096 in the
// first release, 32768 x 32768 in the current one; here 4096 x 8192, 128 MiB per input: evo's
// oracle keeps every element of the elementwise intermediate, ~90 CPU-s a run at 8192 x 8192)
// cpu-check: 4096=3 8192=4 33554432=12
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> ()>
#map2 = affine_map<() -> ()>
func.func @hinge_loss(%arg0: tensor<4096x8192xf32>, %arg1: tensor<4096x8192xf32> {evo.range = [-1.000000e+00, 1.000000e+00]}) -> tensor<f32> {
  %one = arith.constant 1.000000e+00 : f32
  %zero = arith.constant 0.000000e+00 : f32
  %cst = arith.constant 0.000000e+00 : f32
  %cst_n = arith.constant 33554432.0 : f32
  %0 = tensor.empty() : tensor<4096x8192xf32>
  %1 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1 : tensor<4096x8192xf32>, tensor<4096x8192xf32>) outs(%0 : tensor<4096x8192xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %6 = arith.mulf %in, %in_0 : f32
    %7 = arith.subf %one, %6 : f32
    %8 = arith.maximumf %7, %zero : f32
    linalg.yield %8 : f32
  } -> tensor<4096x8192xf32>
  %2 = tensor.empty() : tensor<f32>
  %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<f32>) -> tensor<f32>
  %4 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["reduction", "reduction"]} ins(%1 : tensor<4096x8192xf32>) outs(%3 : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %6 = arith.addf %in, %out : f32
    linalg.yield %6 : f32
  } -> tensor<f32>
  %5 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = []} ins(%4 : tensor<f32>) outs(%2 : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %6 = arith.divf %in, %cst_n : f32
    linalg.yield %6 : f32
  } -> tensor<f32>
  return %5 : tensor<f32>
}
