// Softmax over the last dimension of a batch of logits.
func.func @softmax(%logits: tensor<4096x1024xf32>) -> tensor<4096x1024xf32> {
  %init = tensor.empty() : tensor<4096x1024xf32>
  %probs = linalg.softmax dimension(1) ins(%logits : tensor<4096x1024xf32>)
                                       outs(%init : tensor<4096x1024xf32>) -> tensor<4096x1024xf32>
  return %probs : tensor<4096x1024xf32>
}
