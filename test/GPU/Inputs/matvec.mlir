func.func @matvec(%a: tensor<64x128xf32>, %x: tensor<128xf32>) -> tensor<64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %r = linalg.matvec ins(%a, %x : tensor<64x128xf32>, tensor<128xf32>) outs(%acc : tensor<64xf32>) -> tensor<64xf32>
  return %r : tensor<64xf32>
}
