// argmin_dim1: index of the minimum over dim 1: one generic with two results (the running minimum and its
// index from linalg.index), strict comparison so the first minimum wins, as torch.argmin does.
// PyTorch: torch.argmin(x, dim=1)
// Shape: x 16x4096x4095 f32 (KernelBench level 1 #52 Argmin over a dimension: batch 128, dim1 4096, dim2 4095 in the
// current release (16x256x256 in the first); batch shrunk to 16: 1 GiB, ~0.25 ms to read).
// cpu-check: 4096=5 4095=3
#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @argmin_dim1(%arg0: tensor<16x4096x4095xf32>) -> tensor<16x4095xi64> {
  %cst = arith.constant 0x7F800000 : f32
  %c0_i64 = arith.constant 0 : i64
  %0 = tensor.empty() : tensor<16x4095xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<16x4095xf32>) -> tensor<16x4095xf32>
  %2 = tensor.empty() : tensor<16x4095xi64>
  %3 = linalg.fill ins(%c0_i64 : i64) outs(%2 : tensor<16x4095xi64>) -> tensor<16x4095xi64>
  %4:2 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "reduction", "parallel"]} ins(%arg0 : tensor<16x4096x4095xf32>) outs(%1, %3 : tensor<16x4095xf32>, tensor<16x4095xi64>) {
  ^bb0(%in: f32, %out: f32, %out_0: i64):
    %5 = linalg.index 1 : index
    %6 = arith.index_cast %5 : index to i64
    %7 = arith.cmpf olt, %in, %out : f32
    %8 = arith.select %7, %in, %out : f32
    %9 = arith.select %7, %6, %out_0 : i64
    linalg.yield %8, %9 : f32, i64
  } -> (tensor<16x4095xf32>, tensor<16x4095xi64>)
  return %4#1 : tensor<16x4095xi64>
}
