// The anchor's 3x3 convolution (32x64x128x128 -> 64 channels, padding 1) in f16 on tensor
// cores: the image NHWC, already padded (130x130; linalg expresses padding as a separate
// tensor.pad), the filter FHWC (PyTorch's channels_last weight), f32 accumulation, f16 result.
// Compared with cuDNN on channels_last tensors (scripts/gpu_bench.py).
func.func @conv2d_f16(%x: tensor<32x130x130x64xf16>, %w: tensor<64x3x3x64xf16>) -> tensor<32x128x128x64xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<32x128x128x64xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%e : tensor<32x128x128x64xf16>) -> tensor<32x128x128x64xf16>
  %r = linalg.conv_2d_nhwc_fhwc ins(%x, %w : tensor<32x130x130x64xf16>, tensor<64x3x3x64xf16>)
                                outs(%acc : tensor<32x128x128x64xf16>) -> tensor<32x128x128x64xf16>
  return %r : tensor<32x128x128x64xf16>
}
