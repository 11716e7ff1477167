// Mean of squares of f16 rows (accumulated in f32), written as f16.
func.func @rms_f16(%x: tensor<300x4096xf16>) -> tensor<300xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<300xf16>
  %inv = arith.constant 2.44140625e-04 : f16
  %acc = linalg.fill ins(%zero : f16) outs(%e : tensor<300xf16>) -> tensor<300xf16>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<300x4096xf16>) outs(%acc : tensor<300xf16>) {
  ^bb0(%in: f16, %out: f16):
    %sq = arith.mulf %in, %in : f16
    %scaled = arith.mulf %sq, %inv : f16
    %s = arith.addf %scaled, %out : f16
    linalg.yield %s : f16
  } -> tensor<300xf16>
  return %r : tensor<300xf16>
}
