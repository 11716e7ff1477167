// batchnorm: BatchNorm2d in inference form, with the running mean and variance given:
// (x - mean[c]) / sqrt(var[c] + eps) * w[c] + b[c], eps 1e-5.
// PyTorch: F.batch_norm(x, mean, var, w, b, training=False, eps=1e-5)
// Shape: x 16x64x256x256, mean, var (positive), w, b 64 f32 (KernelBench level 1 #33 BatchNorm:
// batch 16, 64 features, 256x256; KernelBench runs it in training mode, this is the inference
// form a compiler sees).
// cpu-check: 64=3 256=4
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d1)>
func.func @batchnorm(%arg0: tensor<16x64x256x256xf32>, %arg1: tensor<64xf32>, %arg2: tensor<64xf32> {evo.range = [5.000000e-01, 2.000000e+00]}, %arg3: tensor<64xf32>, %arg4: tensor<64xf32>) -> tensor<16x64x256x256xf32> {
  %cst = arith.constant 9.99999974E-6 : f32
  %0 = tensor.empty() : tensor<16x64x256x256xf32>
  %1 = linalg.generic {indexing_maps = [#map, #map1, #map1, #map1, #map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0, %arg1, %arg2, %arg3, %arg4 : tensor<16x64x256x256xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) outs(%0 : tensor<16x64x256x256xf32>) {
  ^bb0(%in: f32, %in_0: f32, %in_1: f32, %in_2: f32, %in_3: f32, %out: f32):
    %2 = arith.subf %in, %in_0 : f32
    %3 = arith.addf %in_1, %cst : f32
    %4 = math.rsqrt %3 : f32
    %5 = arith.mulf %2, %4 : f32
    %6 = arith.mulf %5, %in_2 : f32
    %7 = arith.addf %6, %in_3 : f32
    linalg.yield %7 : f32
  } -> tensor<16x64x256x256xf32>
  return %1 : tensor<16x64x256x256xf32>
}
