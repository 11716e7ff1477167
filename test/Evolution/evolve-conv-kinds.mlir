// evo-evolve on convolutions that became implicit GEMMs (ConvGemm.cpp: strided, grouped,
// depthwise) with
// the stand-in worker: the tasks are of the matmul family, and the built-in proposer's seeds
// include tiled implicit-GEMM schedules that lower, compile and are evaluated (here with 32
// output channels, per group for the grouped one: the BM = 32 seeds fit where the larger tiles
// do not divide M).
//
// REQUIRES: stand-in-worker
// RUN: rm -rf %t && mkdir -p %t
// RUN: evo-opt %s --evo-lower-to-gpu --evo-evolve="worker=%evo_fake_worker run-dir=%t/run max-candidates=8 quiet=true seed=4" -o %t/out.mlir 2>%t/err
// RUN: FileCheck %s --input-file=%t/out.mlir
// RUN: %python %S/Inputs/list_candidates.py %t/run | FileCheck %s --check-prefix=CANDIDATES

// CHECK-LABEL: func.func @strided
// CHECK:         gpu.func @strided_k0(
// CHECK-SAME:      evo.family = #evo.family<matmul>
// CHECK-LABEL: func.func @grouped
// CHECK:         gpu.func @grouped_k0(
// CHECK-SAME:      evo.family = #evo.family<matmul>
// CHECK-LABEL: func.func @depthwise
// CHECK:         gpu.func @depthwise_k0(
// CHECK-SAME:      evo.family = #evo.family<matmul>

// CANDIDATES:     strided_t0 matmul baseline valid
// CANDIDATES:     strided_t0 matmul knob-seed valid {"prefetch": 1, "thread_tile": [4, 8], "tile_sizes": [32, 128, 8], "vector_width": 4}
// CANDIDATES:     strided_t0 matmul knob-seed valid {"prefetch": 1, "thread_tile": [4, 4], "tile_sizes": [32, 64, 8], "vector_width": 4}
// CANDIDATES:     grouped_t0 matmul baseline valid
// CANDIDATES:     grouped_t0 matmul knob-seed valid {"prefetch": 1, "thread_tile": [4, 8], "tile_sizes": [32, 128, 8], "vector_width": 4}
// CANDIDATES:     grouped_t0 matmul knob-seed valid {"prefetch": 1, "thread_tile": [4, 4], "tile_sizes": [32, 64, 8], "vector_width": 4}
// A depthwise convolution (M = 1) is seeded with tiles of one row and its whole 3x3 window as
// the K tile, and with no tile of more rows.
// CANDIDATES:     depthwise_t0 matmul baseline valid
// CANDIDATES-NEXT: depthwise_t0 matmul knob-seed valid {"thread_tile": [1, 4], "tile_sizes": [1, 128, 9]}
// CANDIDATES-NEXT: depthwise_t0 matmul knob-seed valid {"thread_tile": [1, 4], "tile_sizes": [1, 256, 9]}
// CANDIDATES-NEXT: depthwise_t0 matmul knob-seed valid {"thread_tile": [1, 2], "tile_sizes": [1, 64, 9]}
// CANDIDATES-NEXT: depthwise_t0 matmul knob-seed valid {"thread_tile": [1, 2], "tile_sizes": [1, 256, 9]}
// CANDIDATES-NEXT: depthwise_t0 matmul knob-seed valid {"thread_tile": [1, 4], "tile_sizes": [1, 512, 9]}
// CANDIDATES-NOT: knob-seed
// CANDIDATES-NOT: invalid

func.func @strided(%x: tensor<4x16x65x65xf32>, %w: tensor<32x16x3x3xf32>) -> tensor<4x32x32x32xf32> {
  %z = arith.constant 0.0 : f32
  %i = tensor.empty() : tensor<4x32x32x32xf32>
  %f = linalg.fill ins(%z : f32) outs(%i : tensor<4x32x32x32xf32>) -> tensor<4x32x32x32xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
    ins(%x, %w : tensor<4x16x65x65xf32>, tensor<32x16x3x3xf32>) outs(%f : tensor<4x32x32x32xf32>) -> tensor<4x32x32x32xf32>
  return %r : tensor<4x32x32x32xf32>
}

func.func @grouped(%x: tensor<4x32x34x34xf32>, %w: tensor<64x16x3x3xf32>) -> tensor<4x2x32x32x32xf32> {
  %z = arith.constant 0.0 : f32
  %xg = tensor.expand_shape %x [[0], [1, 2], [3], [4]] output_shape [4, 2, 16, 34, 34] : tensor<4x32x34x34xf32> into tensor<4x2x16x34x34xf32>
  %wg = tensor.expand_shape %w [[0, 1], [2], [3], [4]] output_shape [2, 32, 16, 3, 3] : tensor<64x16x3x3xf32> into tensor<2x32x16x3x3xf32>
  %i = tensor.empty() : tensor<4x2x32x32x32xf32>
  %f = linalg.fill ins(%z : f32) outs(%i : tensor<4x2x32x32x32xf32>) -> tensor<4x2x32x32x32xf32>
  %r = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%xg, %wg : tensor<4x2x16x34x34xf32>, tensor<2x32x16x3x3xf32>) outs(%f : tensor<4x2x32x32x32xf32>) -> tensor<4x2x32x32x32xf32>
  return %r : tensor<4x2x32x32x32xf32>
}

func.func @depthwise(%x: tensor<4x16x66x66xf32>, %w: tensor<16x3x3xf32>) -> tensor<4x16x64x64xf32> {
  %z = arith.constant 0.0 : f32
  %i = tensor.empty() : tensor<4x16x64x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%i : tensor<4x16x64x64xf32>) -> tensor<4x16x64x64xf32>
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : tensor<4x16x66x66xf32>, tensor<16x3x3xf32>) outs(%f : tensor<4x16x64x64xf32>) -> tensor<4x16x64x64xf32>
  return %r : tensor<4x16x64x64xf32>
}
