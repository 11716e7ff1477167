// LayerNorm (weight, bias, eps 1e-5) returning the normalized rows and the row means: a row
// program (one kernel) with full and row outputs and column-vector inputs; 999 rows leave a
// partial last block.
func.func @layernorm_mean(%x: tensor<999x1024xf32>, %w: tensor<1024xf32>, %b: tensor<1024xf32>) -> (tensor<999x1024xf32>, tensor<999xf32>) {
  %zero = arith.constant 0.0 : f32
  %inv_n = arith.constant 9.765625e-04 : f32
  %eps = arith.constant 1.0e-05 : f32
  %er = tensor.empty() : tensor<999xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%er : tensor<999xf32>) -> tensor<999xf32>
  %sum = linalg.reduce ins(%x : tensor<999x1024xf32>) outs(%acc : tensor<999xf32>) dimensions = [1]
    (%in: f32, %a: f32) {
      %s = arith.addf %in, %a : f32
      linalg.yield %s : f32
    }
  %mean = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%sum : tensor<999xf32>) outs(%er : tensor<999xf32>) {
  ^bb0(%s: f32, %o: f32):
    %m = arith.mulf %s, %inv_n : f32
    linalg.yield %m : f32
  } -> tensor<999xf32>
  %e = tensor.empty() : tensor<999x1024xf32>
  %centered = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>],
                              iterator_types = ["parallel", "parallel"]}
      ins(%x, %mean : tensor<999x1024xf32>, tensor<999xf32>) outs(%e : tensor<999x1024xf32>) {
  ^bb0(%v: f32, %m: f32, %o: f32):
    %c = arith.subf %v, %m : f32
    linalg.yield %c : f32
  } -> tensor<999x1024xf32>
  %sq = linalg.reduce ins(%centered : tensor<999x1024xf32>) outs(%acc : tensor<999xf32>) dimensions = [1]
    (%in: f32, %a: f32) {
      %p = arith.mulf %in, %in : f32
      %s = arith.addf %p, %a : f32
      linalg.yield %s : f32
    }
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%centered, %sq, %w, %b : tensor<999x1024xf32>, tensor<999xf32>, tensor<1024xf32>, tensor<1024xf32>) outs(%e : tensor<999x1024xf32>) {
  ^bb0(%c: f32, %q: f32, %wv: f32, %bv: f32, %o: f32):
    %var = arith.mulf %q, %inv_n : f32
    %ve = arith.addf %var, %eps : f32
    %r = math.rsqrt %ve : f32
    %n = arith.mulf %c, %r : f32
    %sc = arith.mulf %n, %wv : f32
    %out = arith.addf %sc, %bv : f32
    linalg.yield %out : f32
  } -> tensor<999x1024xf32>
  return %y, %mean : tensor<999x1024xf32>, tensor<999xf32>
}
