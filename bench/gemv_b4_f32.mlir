// nn.Linear at batch 4 in f32 (issue 14: GEMV at batch 1, 4, 8): y = x W^T, x 4 x 8192,
// W 8192 x 8192 stored [out, in], f32 result. Bound by reading W once (256 MiB); each of W's
// elements serves 4 outputs, so a schedule that reads W once per output row re-reads it 4 times.
func.func @gemv_b4_f32(%x: tensor<4x8192xf32>, %w: tensor<8192x8192xf32>) -> tensor<4x8192xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8192xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8192xf32>) -> tensor<4x8192xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] ins(%x, %w : tensor<4x8192xf32>, tensor<8192x8192xf32>) outs(%acc : tensor<4x8192xf32>) -> tensor<4x8192xf32>
  return %y : tensor<4x8192xf32>
}
