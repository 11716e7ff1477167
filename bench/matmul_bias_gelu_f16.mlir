// A transformer MLP's first half in f16: (x @ W + bias) then tanh-GELU, as
// F.gelu(a @ b + bias, approximate="tanh"). One task and one kernel: the bias and the GELU are the
// matmul kernel's epilogue (f32 on the accumulator where tiled or on tensor cores).
func.func @matmul_bias_gelu_f16(%a: tensor<4096x4096xf16>, %b: tensor<4096x4096xf16>, %bias: tensor<4096xf16>) -> tensor<4096x4096xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<4096x4096xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%e : tensor<4096x4096xf16>) -> tensor<4096x4096xf16>
  %c = linalg.matmul ins(%a, %b : tensor<4096x4096xf16>, tensor<4096x4096xf16>) outs(%acc : tensor<4096x4096xf16>) -> tensor<4096x4096xf16>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%c, %bias : tensor<4096x4096xf16>, tensor<4096xf16>) outs(%e : tensor<4096x4096xf16>) {
  ^bb0(%v: f16, %bv: f16, %o: f16):
    // 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))), x = v + bias
    %half = arith.constant 0.5 : f16
    %one = arith.constant 1.0 : f16
    %k0 = arith.constant 0.7978845608028654 : f16
    %k1 = arith.constant 0.044715 : f16
    %x = arith.addf %v, %bv : f16
    %x2 = arith.mulf %x, %x : f16
    %x3 = arith.mulf %x2, %x : f16
    %t0 = arith.mulf %x3, %k1 : f16
    %t1 = arith.addf %x, %t0 : f16
    %t2 = arith.mulf %t1, %k0 : f16
    %t3 = math.tanh %t2 : f16
    %t4 = arith.addf %t3, %one : f16
    %h = arith.mulf %x, %half : f16
    %r = arith.mulf %h, %t4 : f16
    linalg.yield %r : f16
  } -> tensor<4096x4096xf16>
  return %y : tensor<4096x4096xf16>
}
