// Batched matmul in f16: 64 x (1024 x 1024 @ 1024 x 1024), f32 accumulation, f16 result.
func.func @bmm_f16(%a: tensor<64x1024x1024xf16>, %b: tensor<64x1024x1024xf16>) -> tensor<64x1024x1024xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<64x1024x1024xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%e : tensor<64x1024x1024xf16>) -> tensor<64x1024x1024xf16>
  %c = linalg.batch_matmul ins(%a, %b : tensor<64x1024x1024xf16>, tensor<64x1024x1024xf16>) outs(%acc : tensor<64x1024x1024xf16>) -> tensor<64x1024x1024xf16>
  return %c : tensor<64x1024x1024xf16>
}
