// Sum of each row of 16384x16384 f32 (anchor: row_sum).
func.func @row_sum(%x: tensor<16384x16384xf32>) -> tensor<16384xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16384xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<16384xf32>) -> tensor<16384xf32>
  %r = linalg.reduce ins(%x : tensor<16384x16384xf32>) outs(%acc : tensor<16384xf32>) dimensions = [1]
    (%in: f32, %a: f32) {
      %s = arith.addf %in, %a : f32
      linalg.yield %s : f32
    }
  return %r : tensor<16384xf32>
}
