// A linear layer's matmul in f16, x @ W^T with W stored [out, in] as nn.Linear does:
// 8192 x 8192 @ (8192 x 8192)^T, f32 accumulation, f16 result.
func.func @linear_f16(%x: tensor<8192x8192xf16>, %w: tensor<8192x8192xf16>) -> tensor<8192x8192xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<8192x8192xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%e : tensor<8192x8192xf16>) -> tensor<8192x8192xf16>
  %c = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] ins(%x, %w : tensor<8192x8192xf16>, tensor<8192x8192xf16>) outs(%acc : tensor<8192x8192xf16>) -> tensor<8192x8192xf16>
  return %c : tensor<8192x8192xf16>
}
