// conv_transpose2d: 3x3 transposed convolution, stride 1, no padding, NCHW, written as a generic:
// the image zero-padded by kernel - 1 = 2 on each side (tensor.pad), then
// y[n][f][i][j] = sum over c, kh, kw of padded[n][c][i + 2 - kh][j + 2 - kw] * w[c][f][kh][kw]
// (each input pixel scattered through the filter, gathered from the output's side).
// PyTorch: F.conv_transpose2d(x, w)
// Shape: x 16x64x128x128, w 64x32x3x3 (in, out, kh, kw) f32 -> 16x32x130x130 (KernelBench level 1
// #71-#75 style transposed 2-D convolution, 64 -> 32 channels: 10 GFLOP).
// cpu-check: 128=4 130=6 132=8
#map = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 - d5 + 2, d3 - d6 + 2)>
#map1 = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d1, d5, d6)>
#map2 = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
func.func @conv_transpose2d(%arg0: tensor<16x64x128x128xf32>, %arg1: tensor<64x32x3x3xf32>) -> tensor<16x32x130x130xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %padded = tensor.pad %arg0 low[0, 0, 2, 2] high[0, 0, 2, 2] {
  ^bb0(%arg2: index, %arg3: index, %arg4: index, %arg5: index):
    tensor.yield %cst : f32
  } : tensor<16x64x128x128xf32> to tensor<16x64x132x132xf32>
  %0 = tensor.empty() : tensor<16x32x130x130xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<16x32x130x130xf32>) -> tensor<16x32x130x130xf32>
  %2 = linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%padded, %arg1 : tensor<16x64x132x132xf32>, tensor<64x32x3x3xf32>) outs(%1 : tensor<16x32x130x130xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %3 = arith.mulf %in, %in_0 : f32
    %4 = arith.addf %out, %3 : f32
    linalg.yield %4 : f32
  } -> tensor<16x32x130x130xf32>
  return %2 : tensor<16x32x130x130xf32>
}
