func.func @row_max(%x: tensor<513x1000xf32>) -> tensor<513xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<513xf32>
  %acc = linalg.fill ins(%ninf : f32) outs(%e : tensor<513xf32>) -> tensor<513xf32>
  %r = linalg.reduce ins(%x : tensor<513x1000xf32>) outs(%acc : tensor<513xf32>) dimensions = [1]
    (%in: f32, %init: f32) {
      %s = arith.maximumf %in, %init : f32
      linalg.yield %s : f32
    }
  return %r : tensor<513xf32>
}
