func.func @bmm_f16(%a: tensor<8x128x256xf16>, %b: tensor<8x256x256xf16>) -> tensor<8x128x256xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x128x256xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8x128x256xf32>) -> tensor<8x128x256xf32>
  %c = linalg.batch_matmul ins(%a, %b : tensor<8x128x256xf16>, tensor<8x256x256xf16>)
                           outs(%acc : tensor<8x128x256xf32>) -> tensor<8x128x256xf32>
  return %c : tensor<8x128x256xf32>
}
