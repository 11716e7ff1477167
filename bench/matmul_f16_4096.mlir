// 4096^3 matmul in f16 (f32 accumulation, f16 result).
func.func @matmul_f16_4096(%a: tensor<4096x4096xf16>, %b: tensor<4096x4096xf16>) -> tensor<4096x4096xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<4096x4096xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%e : tensor<4096x4096xf16>) -> tensor<4096x4096xf16>
  %c = linalg.matmul ins(%a, %b : tensor<4096x4096xf16>, tensor<4096x4096xf16>) outs(%acc : tensor<4096x4096xf16>) -> tensor<4096x4096xf16>
  return %c : tensor<4096x4096xf16>
}
