// softmax: softmax over the rows (linalg.softmax).
// PyTorch: torch.softmax(x, dim=1)
// Shape: x 4096x65536 f32 (KernelBench level 1 #23 Softmax: 4096x393216 in the current release,
// shrunk to 1 GiB per tensor).
// cpu-check: 4096=3 65536=7
func.func @softmax(%arg0: tensor<4096x65536xf32>) -> tensor<4096x65536xf32> {
  %0 = tensor.empty() : tensor<4096x65536xf32>
  %1 = linalg.softmax dimension(1) ins(%arg0 : tensor<4096x65536xf32>) outs(%0 : tensor<4096x65536xf32>) -> tensor<4096x65536xf32>
  return %1 : tensor<4096x65536xf32>
}
