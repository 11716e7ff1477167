// Two tasks of different sizes for evolve-devices-spread.mlir (three GPUs: the bigger task
// takes two).
func.func @sum_big(%x: tensor<2048x1024xf32>) -> tensor<2048xf32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2048xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<2048xf32>) -> tensor<2048xf32>
  %r = linalg.reduce ins(%x : tensor<2048x1024xf32>) outs(%z : tensor<2048xf32>) dimensions = [1]
    (%a: f32, %b: f32) {
      %s = arith.addf %a, %b : f32
      linalg.yield %s : f32
    }
  return %r : tensor<2048xf32>
}

#id = affine_map<(i, j) -> (i, j)>
func.func @scale_small(%x: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %c = arith.constant 2.0 : f32
  %e = tensor.empty() : tensor<64x128xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<64x128xf32>) outs(%e : tensor<64x128xf32>) {
    ^bb0(%a: f32, %o: f32):
      %m = arith.mulf %a, %c : f32
      linalg.yield %m : f32
  } -> tensor<64x128xf32>
  return %r : tensor<64x128xf32>
}
