// C = A * B in f32.
func.func @matmul(%a: tensor<1024x512xf32>, %b: tensor<512x768xf32>) -> tensor<1024x768xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1024x768xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<1024x768xf32>) -> tensor<1024x768xf32>
  %c = linalg.matmul ins(%a, %b : tensor<1024x512xf32>, tensor<512x768xf32>)
                     outs(%acc : tensor<1024x768xf32>) -> tensor<1024x768xf32>
  return %c : tensor<1024x768xf32>
}
