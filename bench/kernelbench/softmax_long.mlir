// softmax_long: softmax over rows of KernelBench's length (linalg.softmax).
// PyTorch: torch.softmax(x, dim=1)
// Shape: x 640x393216 f32 (KernelBench level 1 #23 Softmax: 4096x393216 in the current release;
// its rows kept whole, the batch shrunk to under 1 GiB per tensor; issue 14's long rows).
// cpu-check: 640=3 393216=7
func.func @softmax_long(%arg0: tensor<640x393216xf32>) -> tensor<640x393216xf32> {
  %0 = tensor.empty() : tensor<640x393216xf32>
  %1 = linalg.softmax dimension(1) ins(%arg0 : tensor<640x393216xf32>) outs(%0 : tensor<640x393216xf32>) -> tensor<640x393216xf32>
  return %1 : tensor<640x393216xf32>
}
