// sigmoid(x) = 1 / (1 + exp(-x)) (anchor: sigmoid).
func.func @sigmoid(%x: tensor<16384x16384xf32>) -> tensor<16384x16384xf32> {
  %one = arith.constant dense<1.0> : tensor<16384x16384xf32>
  %n = arith.negf %x : tensor<16384x16384xf32>
  %e = math.exp %n : tensor<16384x16384xf32>
  %d = arith.addf %one, %e : tensor<16384x16384xf32>
  %r = arith.divf %one, %d : tensor<16384x16384xf32>
  return %r : tensor<16384x16384xf32>
}
