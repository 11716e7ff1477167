// RMSNorm of f16 rows with an f16 weight: a row program whose reduction accumulates in f32.
func.func @rmsnorm_f16(%x: tensor<257x2048xf16>, %w: tensor<2048xf16>) -> tensor<257x2048xf16> {
  %zero = arith.constant 0.0 : f16
  %inv_n = arith.constant 4.8828125e-04 : f32
  %eps = arith.constant 1.0e-06 : f32
  %er = tensor.empty() : tensor<257xf32>
  %zf = arith.constant 0.0 : f32
  %acc = linalg.fill ins(%zf : f32) outs(%er : tensor<257xf32>) -> tensor<257xf32>
  %sq = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                        iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<257x2048xf16>) outs(%acc : tensor<257xf32>) {
  ^bb0(%v: f16, %a: f32):
    %vf = arith.extf %v : f16 to f32
    %p = arith.mulf %vf, %vf : f32
    %s = arith.addf %p, %a : f32
    linalg.yield %s : f32
  } -> tensor<257xf32>
  %e = tensor.empty() : tensor<257x2048xf16>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x, %sq, %w : tensor<257x2048xf16>, tensor<257xf32>, tensor<2048xf16>) outs(%e : tensor<257x2048xf16>) {
  ^bb0(%v: f16, %q: f32, %wv: f16, %o: f16):
    %ms = arith.mulf %q, %inv_n : f32
    %me = arith.addf %ms, %eps : f32
    %r = math.rsqrt %me : f32
    %vf = arith.extf %v : f16 to f32
    %wf = arith.extf %wv : f16 to f32
    %n = arith.mulf %vf, %r : f32
    %m = arith.mulf %n, %wf : f32
    %out = arith.truncf %m : f32 to f16
    linalg.yield %out : f16
  } -> tensor<257x2048xf16>
  return %y : tensor<257x2048xf16>
}
