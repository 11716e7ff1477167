// log_softmax_long: log-softmax over rows of KernelBench's length, decomposed as torch-mlir
// does: row max, x - max, sum of exp, x - max - log(sum).
// PyTorch: torch.log_softmax(x, dim=1)
// Shape: x 640x393216 f32 (KernelBench level 1 #24 LogSoftmax: 4096x393216 in the current
// release; its rows kept whole, the batch shrunk to under 1 GiB per tensor; issue 14's long rows).
// cpu-check: 640=3 393216=7
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0)>
func.func @log_softmax_long(%arg0: tensor<640x393216xf32>) -> tensor<640x393216xf32> {
  %cst = arith.constant 0xFF800000 : f32
  %cst_0 = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<640xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<640xf32>) -> tensor<640xf32>
  %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<640x393216xf32>) outs(%1 : tensor<640xf32>) {
  ^bb0(%in: f32, %out: f32):
    %7 = arith.maximumf %in, %out : f32
    linalg.yield %7 : f32
  } -> tensor<640xf32>
  %3 = linalg.fill ins(%cst_0 : f32) outs(%0 : tensor<640xf32>) -> tensor<640xf32>
  %4 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "reduction"]} ins(%arg0, %2 : tensor<640x393216xf32>, tensor<640xf32>) outs(%3 : tensor<640xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %7 = arith.subf %in, %in_1 : f32
    %8 = math.exp %7 : f32
    %9 = arith.addf %8, %out : f32
    linalg.yield %9 : f32
  } -> tensor<640xf32>
  %5 = tensor.empty() : tensor<640x393216xf32>
  %6 = linalg.generic {indexing_maps = [#map, #map1, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0, %2, %4 : tensor<640x393216xf32>, tensor<640xf32>, tensor<640xf32>) outs(%5 : tensor<640x393216xf32>) {
  ^bb0(%in: f32, %in_1: f32, %in_2: f32, %out: f32):
    %7 = arith.subf %in, %in_1 : f32
    %8 = math.log %in_2 : f32
    %9 = arith.subf %7, %8 : f32
    linalg.yield %9 : f32
  } -> tensor<640x393216xf32>
  return %6 : tensor<640x393216xf32>
}
