// 8192^3 matmul in bf16 (f32 accumulation, bf16 result, as torch does).
func.func @matmul_bf16(%a: tensor<8192x8192xbf16>, %b: tensor<8192x8192xbf16>) -> tensor<8192x8192xbf16> {
  %zero = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<8192x8192xbf16>
  %acc = linalg.fill ins(%zero : bf16) outs(%e : tensor<8192x8192xbf16>) -> tensor<8192x8192xbf16>
  %c = linalg.matmul ins(%a, %b : tensor<8192x8192xbf16>, tensor<8192x8192xbf16>) outs(%acc : tensor<8192x8192xbf16>) -> tensor<8192x8192xbf16>
  return %c : tensor<8192x8192xbf16>
}
