// Two tasks with a device scratch buffer between them: the relu carries its own knobs, so it
// keeps its own kernel (without them it would be the matmul kernel's epilogue, one task).
func.func @mm_relu(%a: tensor<256x64xf32>, %b: tensor<64x128xf32>) -> tensor<256x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x128xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<256x128xf32>) -> tensor<256x128xf32>
  %c = linalg.matmul ins(%a, %b : tensor<256x64xf32>, tensor<64x128xf32>) outs(%acc : tensor<256x128xf32>) -> tensor<256x128xf32>
  %r = linalg.max {evo.knobs = {block_size = 256}} ins(%c, %acc : tensor<256x128xf32>, tensor<256x128xf32>) outs(%e : tensor<256x128xf32>) -> tensor<256x128xf32>
  return %r : tensor<256x128xf32>
}
