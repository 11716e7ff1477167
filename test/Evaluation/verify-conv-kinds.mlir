// evo-verify on the convolutions that are implicit GEMMs beyond the plain NCHW/NHWC stride-1 ones
// (docs/lowering.md, "Convolutions"; ConvGemm.cpp): strided, dilated, grouped, depthwise, 3-d,
// 1-d, pointwise and transposed. Each function computes its convolution with the naive schedule
// and with the tiled implicit GEMM (explicit knobs), both proven equal to the oracle on 5 seeds.
//
// REQUIRES: cuda
// RUN: evo-opt %s -split-input-file -verify-diagnostics --evo-pipeline="output-dir=-" \
// RUN:   --evo-verify="runs=20 warmup=3" -o /dev/null

// Stride 2, NCHW: M = 32, N = 2*16*16, K = 16*3*3; the tiled one with 128-bit shared-memory
// fragments and prefetch.
// expected-remark @below {{evo-verify: 'strided' is valid (5 trials, }}
func.func @strided(%x: tensor<2x16x33x33xf32>, %w: tensor<32x16x3x3xf32>) -> (tensor<2x32x16x16xf32>, tensor<2x32x16x16xf32>) {
  %z = arith.constant 0.0 : f32
  %i = tensor.empty() : tensor<2x32x16x16xf32>
  %f = linalg.fill ins(%z : f32) outs(%i : tensor<2x32x16x16xf32>) -> tensor<2x32x16x16xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
    ins(%x, %w : tensor<2x16x33x33xf32>, tensor<32x16x3x3xf32>) outs(%f : tensor<2x32x16x16xf32>) -> tensor<2x32x16x16xf32>
  %t = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>,
                                 evo.knobs = {tile_sizes = [32, 64, 16], thread_tile = [4, 4], vector_width = 4, prefetch = true}}
    ins(%x, %w : tensor<2x16x33x33xf32>, tensor<32x16x3x3xf32>) outs(%f : tensor<2x32x16x16xf32>) -> tensor<2x32x16x16xf32>
  return %r, %t : tensor<2x32x16x16xf32>, tensor<2x32x16x16xf32>
}

// -----

// Dilation 2, NCHW.
// expected-remark @below {{evo-verify: 'dilated' is valid (5 trials, }}
func.func @dilated(%x: tensor<2x16x36x36xf32>, %w: tensor<32x16x3x3xf32>) -> (tensor<2x32x32x32xf32>, tensor<2x32x32x32xf32>) {
  %z = arith.constant 0.0 : f32
  %i = tensor.empty() : tensor<2x32x32x32xf32>
  %f = linalg.fill ins(%z : f32) outs(%i : tensor<2x32x32x32xf32>) -> tensor<2x32x32x32xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<2> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : tensor<2x16x36x36xf32>, tensor<32x16x3x3xf32>) outs(%f : tensor<2x32x32x32xf32>) -> tensor<2x32x32x32xf32>
  %t = linalg.conv_2d_nchw_fchw {dilations = dense<2> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>,
                                 evo.knobs = {tile_sizes = [32, 64, 16], thread_tile = [4, 4], vector_width = 4}}
    ins(%x, %w : tensor<2x16x36x36xf32>, tensor<32x16x3x3xf32>) outs(%f : tensor<2x32x32x32xf32>) -> tensor<2x32x32x32xf32>
  return %r, %t : tensor<2x32x32x32xf32>, tensor<2x32x32x32xf32>
}

// -----

// Stride 2 and dilation 2 on a padded NHWC image with an HWCF filter: the output's channels are
// its fastest dimension, so C is written element by element along the output columns.
// expected-remark @below {{evo-verify: 'strided_dilated_nhwc_pad' is valid (5 trials, }}
func.func @strided_dilated_nhwc_pad(%x: tensor<2x32x32x16xf32>, %w: tensor<3x3x16x32xf32>) -> (tensor<2x16x16x32xf32>, tensor<2x16x16x32xf32>) {
  %z = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 2, 2, 0] high[0, 2, 2, 0] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %z : f32
  } : tensor<2x32x32x16xf32> to tensor<2x36x36x16xf32>
  %i = tensor.empty() : tensor<2x16x16x32xf32>
  %f = linalg.fill ins(%z : f32) outs(%i : tensor<2x16x16x32xf32>) -> tensor<2x16x16x32xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<2> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
    ins(%p, %w : tensor<2x36x36x16xf32>, tensor<3x3x16x32xf32>) outs(%f : tensor<2x16x16x32xf32>) -> tensor<2x16x16x32xf32>
  %t = linalg.conv_2d_nhwc_hwcf {dilations = dense<2> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>,
                                 evo.knobs = {tile_sizes = [32, 64, 16], thread_tile = [4, 4], vector_width = 4}}
    ins(%p, %w : tensor<2x36x36x16xf32>, tensor<3x3x16x32xf32>) outs(%f : tensor<2x16x16x32xf32>) -> tensor<2x16x16x32xf32>
  return %r, %t : tensor<2x16x16x32xf32>, tensor<2x16x16x32xf32>
}

// -----

// Grouped (torch-mlir's form): 2 groups of 16 -> 32 channels; the group is the GEMM's batch
// (grid z), the expanded image and filter are read through their views.
// expected-remark @below {{evo-verify: 'grouped' is valid (5 trials, }}
func.func @grouped(%x: tensor<2x32x18x18xf32>, %w: tensor<64x16x3x3xf32>) -> (tensor<2x64x16x16xf32>, tensor<2x64x16x16xf32>) {
  %z = arith.constant 0.0 : f32
  %xg = tensor.expand_shape %x [[0], [1, 2], [3], [4]] output_shape [2, 2, 16, 18, 18] : tensor<2x32x18x18xf32> into tensor<2x2x16x18x18xf32>
  %wg = tensor.expand_shape %w [[0, 1], [2], [3], [4]] output_shape [2, 32, 16, 3, 3] : tensor<64x16x3x3xf32> into tensor<2x32x16x3x3xf32>
  %i = tensor.empty() : tensor<2x2x32x16x16xf32>
  %f = linalg.fill ins(%z : f32) outs(%i : tensor<2x2x32x16x16xf32>) -> tensor<2x2x32x16x16xf32>
  %r = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%xg, %wg : tensor<2x2x16x18x18xf32>, tensor<2x32x16x3x3xf32>) outs(%f : tensor<2x2x32x16x16xf32>) -> tensor<2x2x32x16x16xf32>
  %t = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>,
                                   evo.knobs = {tile_sizes = [32, 64, 16], thread_tile = [4, 4], vector_width = 4}}
    ins(%xg, %wg : tensor<2x2x16x18x18xf32>, tensor<2x32x16x3x3xf32>) outs(%f : tensor<2x2x32x16x16xf32>) -> tensor<2x2x32x16x16xf32>
  %rc = tensor.collapse_shape %r [[0], [1, 2], [3], [4]] : tensor<2x2x32x16x16xf32> into tensor<2x64x16x16xf32>
  %tc = tensor.collapse_shape %t [[0], [1, 2], [3], [4]] : tensor<2x2x32x16x16xf32> into tensor<2x64x16x16xf32>
  return %rc, %tc : tensor<2x64x16x16xf32>, tensor<2x64x16x16xf32>
}

// -----

// 3-d: N = (batch, three output dimensions), K = (channels, three filter dimensions).
// expected-remark @below {{evo-verify: 'conv3d' is valid (5 trials, }}
func.func @conv3d(%x: tensor<2x8x10x10x10xf32>, %w: tensor<32x8x3x3x3xf32>) -> (tensor<2x32x8x8x8xf32>, tensor<2x32x8x8x8xf32>) {
  %z = arith.constant 0.0 : f32
  %i = tensor.empty() : tensor<2x32x8x8x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%i : tensor<2x32x8x8x8xf32>) -> tensor<2x32x8x8x8xf32>
  %r = linalg.conv_3d_ncdhw_fcdhw {dilations = dense<1> : tensor<3xi64>, strides = dense<1> : tensor<3xi64>}
    ins(%x, %w : tensor<2x8x10x10x10xf32>, tensor<32x8x3x3x3xf32>) outs(%f : tensor<2x32x8x8x8xf32>) -> tensor<2x32x8x8x8xf32>
  %t = linalg.conv_3d_ncdhw_fcdhw {dilations = dense<1> : tensor<3xi64>, strides = dense<1> : tensor<3xi64>,
                                   evo.knobs = {tile_sizes = [32, 64, 8], thread_tile = [4, 4], vector_width = 4}}
    ins(%x, %w : tensor<2x8x10x10x10xf32>, tensor<32x8x3x3x3xf32>) outs(%f : tensor<2x32x8x8x8xf32>) -> tensor<2x32x8x8x8xf32>
  return %r, %t : tensor<2x32x8x8x8xf32>, tensor<2x32x8x8x8xf32>
}

// -----

// 1-d, stride 2.
// expected-remark @below {{evo-verify: 'conv1d' is valid (5 trials, }}
func.func @conv1d(%x: tensor<4x16x129xf32>, %w: tensor<32x16x3xf32>) -> (tensor<4x32x64xf32>, tensor<4x32x64xf32>) {
  %z = arith.constant 0.0 : f32
  %i = tensor.empty() : tensor<4x32x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%i : tensor<4x32x64xf32>) -> tensor<4x32x64xf32>
  %r = linalg.conv_1d_ncw_fcw {dilations = dense<1> : tensor<1xi64>, strides = dense<2> : tensor<1xi64>}
    ins(%x, %w : tensor<4x16x129xf32>, tensor<32x16x3xf32>) outs(%f : tensor<4x32x64xf32>) -> tensor<4x32x64xf32>
  %t = linalg.conv_1d_ncw_fcw {dilations = dense<1> : tensor<1xi64>, strides = dense<2> : tensor<1xi64>,
                               evo.knobs = {tile_sizes = [32, 64, 16], thread_tile = [4, 4], vector_width = 4}}
    ins(%x, %w : tensor<4x16x129xf32>, tensor<32x16x3xf32>) outs(%f : tensor<4x32x64xf32>) -> tensor<4x32x64xf32>
  return %r, %t : tensor<4x32x64xf32>, tensor<4x32x64xf32>
}

// -----

// 1x1 (pointwise).
// expected-remark @below {{evo-verify: 'pointwise' is valid (5 trials, }}
func.func @pointwise(%x: tensor<2x32x16x16xf32>, %w: tensor<64x32x1x1xf32>) -> (tensor<2x64x16x16xf32>, tensor<2x64x16x16xf32>) {
  %z = arith.constant 0.0 : f32
  %i = tensor.empty() : tensor<2x64x16x16xf32>
  %f = linalg.fill ins(%z : f32) outs(%i : tensor<2x64x16x16xf32>) -> tensor<2x64x16x16xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : tensor<2x32x16x16xf32>, tensor<64x32x1x1xf32>) outs(%f : tensor<2x64x16x16xf32>) -> tensor<2x64x16x16xf32>
  %t = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>,
                                 evo.knobs = {tile_sizes = [64, 64, 16], thread_tile = [4, 4], vector_width = 4}}
    ins(%x, %w : tensor<2x32x16x16xf32>, tensor<64x32x1x1xf32>) outs(%f : tensor<2x64x16x16xf32>) -> tensor<2x64x16x16xf32>
  return %r, %t : tensor<2x64x16x16xf32>, tensor<2x64x16x16xf32>
}

// -----

// Transposed (as bench/kernelbench/conv_transpose2d.mlir writes it): the image padded by
// kernel - 1 and read at (i + 2 - kh, j + 2 - kw), the filter [in, out, kh, kw].
#img = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 - d5 + 2, d3 - d6 + 2)>
#flt = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d1, d5, d6)>
#out = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
// expected-remark @below {{evo-verify: 'transposed' is valid (5 trials, }}
func.func @transposed(%x: tensor<2x16x14x14xf32>, %w: tensor<16x32x3x3xf32>) -> (tensor<2x32x16x16xf32>, tensor<2x32x16x16xf32>) {
  %z = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 2, 2] high[0, 0, 2, 2] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %z : f32
  } : tensor<2x16x14x14xf32> to tensor<2x16x18x18xf32>
  %i = tensor.empty() : tensor<2x32x16x16xf32>
  %f = linalg.fill ins(%z : f32) outs(%i : tensor<2x32x16x16xf32>) -> tensor<2x32x16x16xf32>
  %r = linalg.generic {indexing_maps = [#img, #flt, #out],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
         ins(%p, %w : tensor<2x16x18x18xf32>, tensor<16x32x3x3xf32>) outs(%f : tensor<2x32x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x32x16x16xf32>
  %t = linalg.generic {indexing_maps = [#img, #flt, #out],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
         ins(%p, %w : tensor<2x16x18x18xf32>, tensor<16x32x3x3xf32>) outs(%f : tensor<2x32x16x16xf32>)
         attrs = {evo.knobs = {tile_sizes = [32, 64, 16], thread_tile = [4, 4], vector_width = 4}} {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x32x16x16xf32>
  return %r, %t : tensor<2x32x16x16xf32>, tensor<2x32x16x16xf32>
}

// -----

// Depthwise (3x3, NCHW image, [C, 3, 3] filter): the channel is the GEMM's batch and M = 1;
// tiled with one row, the window as the K tile (9 taps copied by 32 threads), and again with
// stride 2 and 64 threads.
// expected-remark @below {{evo-verify: 'depthwise' is valid (5 trials, }}
func.func @depthwise(%x: tensor<2x16x34x34xf32>, %w: tensor<16x3x3xf32>) -> (tensor<2x16x32x32xf32>, tensor<2x16x32x32xf32>, tensor<2x16x16x16xf32>) {
  %z = arith.constant 0.0 : f32
  %i = tensor.empty() : tensor<2x16x32x32xf32>
  %f = linalg.fill ins(%z : f32) outs(%i : tensor<2x16x32x32xf32>) -> tensor<2x16x32x32xf32>
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : tensor<2x16x34x34xf32>, tensor<16x3x3xf32>) outs(%f : tensor<2x16x32x32xf32>) -> tensor<2x16x32x32xf32>
  %t = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>,
                                          evo.knobs = {tile_sizes = [1, 64, 9], thread_tile = [1, 2]}}
    ins(%x, %w : tensor<2x16x34x34xf32>, tensor<16x3x3xf32>) outs(%f : tensor<2x16x32x32xf32>) -> tensor<2x16x32x32xf32>
  %i2 = tensor.empty() : tensor<2x16x16x16xf32>
  %f2 = linalg.fill ins(%z : f32) outs(%i2 : tensor<2x16x16x16xf32>) -> tensor<2x16x16x16xf32>
  %s = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>,
                                          evo.knobs = {tile_sizes = [1, 128, 9], thread_tile = [1, 2]}}
    ins(%x, %w : tensor<2x16x34x34xf32>, tensor<16x3x3xf32>) outs(%f2 : tensor<2x16x16x16xf32>) -> tensor<2x16x16x16xf32>
  return %r, %t, %s : tensor<2x16x32x32xf32>, tensor<2x16x32x32xf32>, tensor<2x16x16x16xf32>
}
