// 8192^3 matmul in f16 (f32 accumulation, f16 result, as torch does) (anchor: matmul_f16_8192).
func.func @matmul_f16(%a: tensor<8192x8192xf16>, %b: tensor<8192x8192xf16>) -> tensor<8192x8192xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<8192x8192xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%e : tensor<8192x8192xf16>) -> tensor<8192x8192xf16>
  %c = linalg.matmul ins(%a, %b : tensor<8192x8192xf16>, tensor<8192x8192xf16>) outs(%acc : tensor<8192x8192xf16>) -> tensor<8192x8192xf16>
  return %c : tensor<8192x8192xf16>
}
