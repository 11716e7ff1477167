func.func @col_sum(%x: tensor<4096x2048xf32>) -> tensor<2048xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2048xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2048xf32>) -> tensor<2048xf32>
  %r = linalg.reduce ins(%x : tensor<4096x2048xf32>) outs(%acc : tensor<2048xf32>) dimensions = [0]
    (%in: f32, %init: f32) {
      %s = arith.addf %in, %init : f32
      linalg.yield %s : f32
    }
  return %r : tensor<2048xf32>
}
