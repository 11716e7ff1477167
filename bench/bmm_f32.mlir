// Batched 128 x (512x512 @ 512x512) in f32 (anchor: bmm_f32).
func.func @bmm_f32(%a: tensor<128x512x512xf32>, %b: tensor<128x512x512xf32>) -> tensor<128x512x512xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x512x512xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<128x512x512xf32>) -> tensor<128x512x512xf32>
  %c = linalg.batch_matmul ins(%a, %b : tensor<128x512x512xf32>, tensor<128x512x512xf32>) outs(%acc : tensor<128x512x512xf32>) -> tensor<128x512x512xf32>
  return %c : tensor<128x512x512xf32>
}
