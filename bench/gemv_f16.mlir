// GEMV at batch 1 in f16 (the anchor's gemv_float16_b1_8192): y = A x, A 8192 x 8192 f16,
// f16 result (accumulated in f32). Bound by reading A once (128 MiB).
func.func @gemv_f16(%a: tensor<8192x8192xf16>, %x: tensor<8192xf16>) -> tensor<8192xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<8192xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%e : tensor<8192xf16>) -> tensor<8192xf16>
  %y = linalg.matvec ins(%a, %x : tensor<8192x8192xf16>, tensor<8192xf16>) outs(%acc : tensor<8192xf16>) -> tensor<8192xf16>
  return %y : tensor<8192xf16>
}
