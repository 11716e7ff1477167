// Exact (erf) GELU, as torch.nn.functional.gelu computes it by default (anchor: gelu).
func.func @gelu(%x: tensor<16384x16384xf32>) -> tensor<16384x16384xf32> {
  %e = tensor.empty() : tensor<16384x16384xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<16384x16384xf32>) outs(%e : tensor<16384x16384xf32>) {
  ^bb0(%v: f32, %o: f32):
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %rsqrt2 = arith.constant 0.70710678118654752 : f32
    %s = arith.mulf %v, %rsqrt2 : f32
    %erf = math.erf %s : f32
    %t = arith.addf %one, %erf : f32
    %h = arith.mulf %v, %half : f32
    %y = arith.mulf %h, %t : f32
    linalg.yield %y : f32
  } -> tensor<16384x16384xf32>
  return %r : tensor<16384x16384xf32>
}
