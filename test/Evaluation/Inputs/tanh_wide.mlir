// The adversarial LLM's task (scripts/adversarial-llm): tanh over 4M elements, where wide-range
// inputs (|x| > 1) tell an honest tanh from one fitted to [-1, 1).
func.func @tanh_wide(%x: tensor<4194304xf32>) -> tensor<4194304xf32> {
  %e = tensor.empty() : tensor<4194304xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%x : tensor<4194304xf32>) outs(%e : tensor<4194304xf32>) {
    ^bb0(%a: f32, %o: f32):
      %t = math.tanh %a : f32
      linalg.yield %t : f32
  } -> tensor<4194304xf32>
  return %y : tensor<4194304xf32>
}
