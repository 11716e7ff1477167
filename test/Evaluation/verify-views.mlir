// evo-verify on views (docs/lowering.md "Views"): kernels that read through tensor.pad,
// reshapes and slices, proven equal to the oracle (which reads the same ops with code of its
// own) on 5 seeds and timed.
//
// REQUIRES: cuda
// RUN: evo-opt %s -split-input-file -verify-diagnostics --evo-pipeline="output-dir=-" \
// RUN:   --evo-verify="runs=20 warmup=3" -o /dev/null

// expected-remark @below {{evo-verify: 'padded_maxpool' is valid (5 trials, }}
func.func @padded_maxpool(%x: tensor<4x32x64x64xf32>) -> tensor<4x32x32x32xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %ninf : f32
  } : tensor<4x32x64x64xf32> to tensor<4x32x66x66xf32>
  %w = tensor.empty() : tensor<3x3xf32>
  %i = tensor.empty() : tensor<4x32x32x32xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%i : tensor<4x32x32x32xf32>) -> tensor<4x32x32x32xf32>
  %r = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
    ins(%p, %w : tensor<4x32x66x66xf32>, tensor<3x3xf32>) outs(%f : tensor<4x32x32x32xf32>) -> tensor<4x32x32x32xf32>
  return %r : tensor<4x32x32x32xf32>
}

// -----

// The same padded convolution, naive and tiled as an implicit GEMM.
// expected-remark @below {{evo-verify: 'padded_conv' is valid (5 trials, }}
func.func @padded_conv(%x: tensor<2x16x32x32xf32>, %w: tensor<32x16x3x3xf32>) -> (tensor<2x32x32x32xf32>, tensor<2x32x32x32xf32>) {
  %z = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %z : f32
  } : tensor<2x16x32x32xf32> to tensor<2x16x34x34xf32>
  %i = tensor.empty() : tensor<2x32x32x32xf32>
  %f = linalg.fill ins(%z : f32) outs(%i : tensor<2x32x32x32xf32>) -> tensor<2x32x32x32xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%p, %w : tensor<2x16x34x34xf32>, tensor<32x16x3x3xf32>) outs(%f : tensor<2x32x32x32xf32>) -> tensor<2x32x32x32xf32>
  %t = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>, evo.knobs = {tile_sizes = [32, 64, 16], thread_tile = [4, 4], vector_width = 4}}
    ins(%p, %w : tensor<2x16x34x34xf32>, tensor<32x16x3x3xf32>) outs(%f : tensor<2x32x32x32xf32>) -> tensor<2x32x32x32xf32>
  return %r, %t : tensor<2x32x32x32xf32>, tensor<2x32x32x32xf32>
}

// -----

// Group norm as torch-mlir writes it: the channels expanded into groups, the statistics over
// (channels of a group, H, W), the result collapsed back.
// expected-remark @below {{evo-verify: 'groupnorm' is valid (5 trials, }}
func.func @groupnorm(%x: tensor<4x32x16x16xf32>) -> tensor<4x32x16x16xf32> {
  %z = arith.constant 0.0 : f32
  %n = arith.constant 2048.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %g = tensor.expand_shape %x [[0], [1, 2], [3], [4]] output_shape [4, 4, 8, 16, 16] : tensor<4x32x16x16xf32> into tensor<4x4x8x16x16xf32>
  %e = tensor.empty() : tensor<4x4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(n, g, c, h, w) -> (n, g, c, h, w)>, affine_map<(n, g, c, h, w) -> (n, g)>],
                         iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%g : tensor<4x4x8x16x16xf32>) outs(%f : tensor<4x4xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
  } -> tensor<4x4xf32>
  %sq = linalg.generic {indexing_maps = [affine_map<(n, g, c, h, w) -> (n, g, c, h, w)>, affine_map<(n, g, c, h, w) -> (n, g)>],
                        iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%g : tensor<4x4x8x16x16xf32>) outs(%f : tensor<4x4xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %m = arith.mulf %in, %in : f32
      %s = arith.addf %m, %acc : f32
      linalg.yield %s : f32
  } -> tensor<4x4xf32>
  %e5 = tensor.empty() : tensor<4x4x8x16x16xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(n, g, c, h, w) -> (n, g, c, h, w)>, affine_map<(n, g, c, h, w) -> (n, g)>, affine_map<(n, g, c, h, w) -> (n, g)>, affine_map<(n, g, c, h, w) -> (n, g, c, h, w)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%g, %sum, %sq : tensor<4x4x8x16x16xf32>, tensor<4x4xf32>, tensor<4x4xf32>) outs(%e5 : tensor<4x4x8x16x16xf32>) {
    ^bb0(%in: f32, %s: f32, %q: f32, %o: f32):
      %mean = arith.divf %s, %n : f32
      %ex2 = arith.divf %q, %n : f32
      %m2 = arith.mulf %mean, %mean : f32
      %var = arith.subf %ex2, %m2 : f32
      %ve = arith.addf %var, %eps : f32
      %r = math.rsqrt %ve : f32
      %d = arith.subf %in, %mean : f32
      %v = arith.mulf %d, %r : f32
      linalg.yield %v : f32
  } -> tensor<4x4x8x16x16xf32>
  %out = tensor.collapse_shape %y [[0], [1, 2], [3], [4]] : tensor<4x4x8x16x16xf32> into tensor<4x32x16x16xf32>
  return %out : tensor<4x32x16x16xf32>
}

// -----

// A keep-dim sum both ways: a reduction then expand_shape, and torch-mlir's output map with 0.
// expected-remark @below {{evo-verify: 'keepdim_sums' is valid (5 trials, }}
func.func @keepdim_sums(%x: tensor<64x512x8xf32>) -> (tensor<64x1x8xf32>, tensor<64x1x8xf32>) {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<64x8xf32>) -> tensor<64x8xf32>
  %s = linalg.reduce ins(%x : tensor<64x512x8xf32>) outs(%f : tensor<64x8xf32>) dimensions = [1]
    (%a: f32, %b: f32) { %t = arith.addf %a, %b : f32
      linalg.yield %t : f32 }
  %k = tensor.expand_shape %s [[0, 1], [2]] output_shape [64, 1, 8] : tensor<64x8xf32> into tensor<64x1x8xf32>
  %e3 = tensor.empty() : tensor<64x1x8xf32>
  %f3 = linalg.fill ins(%z : f32) outs(%e3 : tensor<64x1x8xf32>) -> tensor<64x1x8xf32>
  %k2 = linalg.generic {indexing_maps = [affine_map<(a, b, c) -> (a, b, c)>, affine_map<(a, b, c) -> (a, 0, c)>],
                        iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x : tensor<64x512x8xf32>) outs(%f3 : tensor<64x1x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %t = arith.addf %in, %out : f32
      linalg.yield %t : f32
  } -> tensor<64x1x8xf32>
  return %k, %k2 : tensor<64x1x8xf32>, tensor<64x1x8xf32>
}

// -----

// A strided rank-reducing slice, then a pad of a pad, read by an elementwise op.
// expected-remark @below {{evo-verify: 'slice_and_pads' is valid (5 trials, }}
func.func @slice_and_pads(%x: tensor<256x4x512xf32>) -> tensor<136x262xf32> {
  %s = tensor.extract_slice %x[1, 2, 1] [128, 1, 256] [2, 1, 2] : tensor<256x4x512xf32> to tensor<128x256xf32>
  %one = arith.constant 1.0 : f32
  %two = arith.constant 2.0 : f32
  %p = tensor.pad %s low[1, 2] high[3, 1] {
  ^bb0(%a: index, %b: index):
    tensor.yield %one : f32
  } : tensor<128x256xf32> to tensor<132x259xf32>
  %pp = tensor.pad %p low[2, 1] high[2, 2] {
  ^bb0(%a: index, %b: index):
    tensor.yield %two : f32
  } : tensor<132x259xf32> to tensor<136x262xf32>
  %e = tensor.empty() : tensor<136x262xf32>
  %r = linalg.exp ins(%pp : tensor<136x262xf32>) outs(%e : tensor<136x262xf32>) -> tensor<136x262xf32>
  return %r : tensor<136x262xf32>
}
