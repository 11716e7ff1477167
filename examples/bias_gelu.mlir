// y = gelu(x + bias), the tanh approximation used by GPT-style MLPs; bias broadcast over rows.
func.func @bias_gelu(%x: tensor<2048x4096xf32>, %bias: tensor<4096xf32>) -> tensor<2048x4096xf32> {
  %empty = tensor.empty() : tensor<2048x4096xf32>
  %b = linalg.broadcast ins(%bias : tensor<4096xf32>) outs(%empty : tensor<2048x4096xf32>) dimensions = [0]
  %sum = linalg.add ins(%x, %b : tensor<2048x4096xf32>, tensor<2048x4096xf32>)
                    outs(%empty : tensor<2048x4096xf32>) -> tensor<2048x4096xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%sum : tensor<2048x4096xf32>) outs(%empty : tensor<2048x4096xf32>) {
  ^bb0(%v: f32, %out: f32):
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %c0 = arith.constant 0.7978845608 : f32   // sqrt(2 / pi)
    %c1 = arith.constant 0.044715 : f32
    %v2 = arith.mulf %v, %v : f32
    %v3 = arith.mulf %v2, %v : f32
    %t0 = arith.mulf %c1, %v3 : f32
    %t1 = arith.addf %v, %t0 : f32
    %t2 = arith.mulf %c0, %t1 : f32
    %t3 = math.tanh %t2 : f32
    %t4 = arith.addf %one, %t3 : f32
    %t5 = arith.mulf %half, %v : f32
    %r = arith.mulf %t5, %t4 : f32
    linalg.yield %r : f32
  } -> tensor<2048x4096xf32>
  return %y : tensor<2048x4096xf32>
}
