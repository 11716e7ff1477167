// A skinny contraction written as linalg.matmul: 64 x 2^20 times 2^20 x 1 in f32 (issue 14's
// "N = 1 and K = 2^20"): 64 outputs, so split-K is what fills the GPU. Bound by reading A
// (256 MiB).
func.func @matmul_k1m(%a: tensor<64x1048576xf32>, %b: tensor<1048576x1xf32>) -> tensor<64x1xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x1xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<64x1xf32>) -> tensor<64x1xf32>
  %c = linalg.matmul ins(%a, %b : tensor<64x1048576xf32>, tensor<1048576x1xf32>) outs(%acc : tensor<64x1xf32>) -> tensor<64x1xf32>
  return %c : tensor<64x1xf32>
}
