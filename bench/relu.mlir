// relu over 16384x16384 f32 (anchor: relu).
func.func @relu(%x: tensor<16384x16384xf32>) -> tensor<16384x16384xf32> {
  %zero = arith.constant dense<0.0> : tensor<16384x16384xf32>
  %r = arith.maximumf %x, %zero : tensor<16384x16384xf32>
  return %r : tensor<16384x16384xf32>
}
