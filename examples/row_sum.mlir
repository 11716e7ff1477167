// Sum of every row.
func.func @row_sum(%x: tensor<8192x2048xf32>) -> tensor<8192xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<8192xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<8192xf32>) -> tensor<8192xf32>
  %sum = linalg.reduce ins(%x : tensor<8192x2048xf32>) outs(%acc : tensor<8192xf32>) dimensions = [1]
    (%in: f32, %init: f32) {
      %s = arith.addf %in, %init : f32
      linalg.yield %s : f32
    }
  return %sum : tensor<8192xf32>
}
