// Two tasks (a row reduction and a softmax) for the kill and lock tests.
func.func @row_sum(%x: tensor<1024x512xf32>) -> tensor<1024xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1024xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1024xf32>) -> tensor<1024xf32>
  %r = linalg.reduce ins(%x : tensor<1024x512xf32>) outs(%acc : tensor<1024xf32>) dimensions = [1]
    (%in: f32, %init: f32) {
      %s = arith.addf %in, %init : f32
      linalg.yield %s : f32
    }
  return %r : tensor<1024xf32>
}

func.func @softmax(%x: tensor<512x1024xf32>) -> tensor<512x1024xf32> {
  %e = tensor.empty() : tensor<512x1024xf32>
  %s = linalg.softmax dimension(1) ins(%x : tensor<512x1024xf32>) outs(%e : tensor<512x1024xf32>) -> tensor<512x1024xf32>
  return %s : tensor<512x1024xf32>
}
