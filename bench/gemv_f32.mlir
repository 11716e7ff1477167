// GEMV at batch 1 (the anchor's gemv_float32_b1_8192): y = A x, A 8192 x 8192 f32. Bound by
// reading A once (256 MiB).
func.func @gemv_f32(%a: tensor<8192x8192xf32>, %x: tensor<8192xf32>) -> tensor<8192xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8192xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8192xf32>) -> tensor<8192xf32>
  %y = linalg.matvec ins(%a, %x : tensor<8192x8192xf32>, tensor<8192xf32>) outs(%acc : tensor<8192xf32>) -> tensor<8192xf32>
  return %y : tensor<8192xf32>
}
