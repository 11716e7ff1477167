// max_dim2_keepdim_expand: maximum over the last dimension keeping it, written as a reduction
// followed by a tensor.expand_shape to [16, 4096, 1] (the other spelling of keepdim: a reduction
// to [16, 4096], then unsqueeze).
// PyTorch: torch.amax(x, dim=2, keepdim=True)
// Shape: x 16x4096x4095 f32 (KernelBench level 1 #49 Max reduction over a dimension, here over dim 2 with keepdim: batch 128, dim1 4096, dim2 4095 in the
// current release (16x256x256 in the first); batch shrunk to 16: 1 GiB, ~0.25 ms to read).
// cpu-check: 4096=5 4095=3
#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @max_dim2_keepdim_expand(%arg0: tensor<16x4096x4095xf32>) -> tensor<16x4096x1xf32> {
  %cst = arith.constant 0xFF800000 : f32
  %0 = tensor.empty() : tensor<16x4096xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<16x4096xf32>) -> tensor<16x4096xf32>
  %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0 : tensor<16x4096x4095xf32>) outs(%1 : tensor<16x4096xf32>) {
  ^bb0(%in: f32, %out: f32):
    %3 = arith.maximumf %in, %out : f32
    linalg.yield %3 : f32
  } -> tensor<16x4096xf32>
  %expanded = tensor.expand_shape %2 [[0], [1, 2]] output_shape [16, 4096, 1] : tensor<16x4096xf32> into tensor<16x4096x1xf32>
  return %expanded : tensor<16x4096x1xf32>
}
