// RUN: evo-opt %s -split-input-file -verify-diagnostics -evo-lower-to-gpu | FileCheck %s
// End to end to PTX, and through ptxas where it is installed (sm_90a).
// RUN: rm -rf %t && mkdir -p %t
// RUN: evo-opt %s -split-input-file -verify-diagnostics --evo-pipeline="output-dir=%t/ptx ptxas=none" -o /dev/null
// RUN: ls %t/ptx | FileCheck %s --check-prefix=FILES
// RUN: %if ptxas %{ evo-opt %s -split-input-file -verify-diagnostics --evo-pipeline="output-dir=%t/asm chip=sm_90a" -o /dev/null %}
// RUN: %if ptxas %{ FileCheck %s --input-file=%t/asm/conv_strided.json --check-prefix=ASM %}

// Convolutions of every common kind are implicit GEMMs (convolutionGemmView, ConvGemm.cpp) and
// take the tiled SIMT schedule with tile sizes: the loop dimensions are classified by the
// operands they index (filter and image: batch of the GEMM, grid z; filter only: M; image only:
// N; reduction: K), whatever the affine form of the image's accesses. The image is read element
// by element through its indexing map (never with 128-bit loads: its accesses are sums of
// dimensions), so strides and dilations need nothing else.

// FILES: conv1d.json
// FILES: conv3d.json
// FILES: conv_dilated.json
// FILES: conv_grouped.json
// FILES: conv_nhwc.json
// FILES: conv_pointwise.json
// FILES: conv_strided.json
// FILES: conv_transposed.json
// FILES: depthwise_naive.json
// FILES: depthwise_tiled.json
// FILES: pool_sum.json

// ASM:   "name": "conv_strided_k0",
// ASM:   "ptxas": {

// Stride 2: M = 16 output channels, N = 2*8*8, K = 4*3*3. The image is read at (2*oh + kh,
// 2*ow + kw); C (8 columns a row) is still written 4 columns at a time.

// CHECK-LABEL: func.func @conv_strided
// CHECK:         gpu.launch_func @conv_strided_kernels::@conv_strided_k0 blocks in (%c2, %c1, %c1) threads in (%c64, %c1, %c1)
// CHECK:         gpu.func @conv_strided_k0(%[[X:.*]]: memref<2x4x17x17xf32>, %[[W:.*]]: memref<16x4x3x3xf32>, %[[Y:.*]]: memref<2x16x8x8xf32>) workgroup(
// CHECK-SAME:      evo.family = #evo.family<matmul>, evo.knobs = #evo.knobs<vector_width = 4, tile_sizes = [16, 64, 4], thread_tile = [4, 4]>
// CHECK-NOT:       vector.load %[[X]]
// CHECK:           scf.for
// CHECK:             memref.load %[[W]]
// CHECK:             %[[R2:.*]] = arith.muli %{{.*}}, %c2 overflow<nsw> : index
// CHECK-NEXT:        %[[R:.*]] = arith.addi %[[R2]], %{{.*}} : index
// CHECK-NEXT:        %[[C2:.*]] = arith.muli %{{.*}}, %c2 overflow<nsw> : index
// CHECK-NEXT:        %[[C:.*]] = arith.addi %[[C2]], %{{.*}} : index
// CHECK-NEXT:        memref.load %[[X]][%{{.*}}, %{{.*}}, %[[R]], %[[C]]]
// CHECK-NOT:       vector.load %[[X]]
// CHECK:           vector.store %{{.*}}, %[[Y]]
func.func @conv_strided(%x: tensor<2x4x17x17xf32>, %w: tensor<16x4x3x3xf32>) -> tensor<2x16x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x16x8x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x16x8x8xf32>) -> tensor<2x16x8x8xf32>
  %r = linalg.conv_2d_nchw_fchw {strides = dense<2> : vector<2xi64>, dilations = dense<1> : vector<2xi64>,
                                 evo.knobs = {tile_sizes = [16, 64, 4], thread_tile = [4, 4], vector_width = 4}}
         ins(%x, %w : tensor<2x4x17x17xf32>, tensor<16x4x3x3xf32>)
         outs(%acc : tensor<2x16x8x8xf32>) -> tensor<2x16x8x8xf32>
  return %r : tensor<2x16x8x8xf32>
}

// -----

// Dilation 2: the image is read at (oh + 2*kh, ow + 2*kw).

// CHECK-LABEL: func.func @conv_dilated
// CHECK:         gpu.launch_func @conv_dilated_kernels::@conv_dilated_k0 blocks in (%c2, %c1, %c1) threads in (%c64, %c1, %c1)
// CHECK:         gpu.func @conv_dilated_k0(%[[X:.*]]: memref<2x4x12x12xf32>, %[[W:.*]]: memref<16x4x3x3xf32>, %{{.*}}: memref<2x16x8x8xf32>) workgroup(
// CHECK-SAME:      evo.family = #evo.family<matmul>
// CHECK:           scf.for
// CHECK:             %[[R2:.*]] = arith.muli %{{.*}}, %c2 overflow<nsw> : index
// CHECK-NEXT:        %[[R:.*]] = arith.addi %{{.*}}, %[[R2]] : index
// CHECK-NEXT:        %[[C2:.*]] = arith.muli %{{.*}}, %c2 overflow<nsw> : index
// CHECK-NEXT:        %[[C:.*]] = arith.addi %{{.*}}, %[[C2]] : index
// CHECK-NEXT:        memref.load %[[X]][%{{.*}}, %{{.*}}, %[[R]], %[[C]]]
func.func @conv_dilated(%x: tensor<2x4x12x12xf32>, %w: tensor<16x4x3x3xf32>) -> tensor<2x16x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x16x8x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x16x8x8xf32>) -> tensor<2x16x8x8xf32>
  %r = linalg.conv_2d_nchw_fchw {strides = dense<1> : vector<2xi64>, dilations = dense<2> : vector<2xi64>,
                                 evo.knobs = {tile_sizes = [16, 64, 4], thread_tile = [4, 4], vector_width = 4}}
         ins(%x, %w : tensor<2x4x12x12xf32>, tensor<16x4x3x3xf32>)
         outs(%acc : tensor<2x16x8x8xf32>) -> tensor<2x16x8x8xf32>
  return %r : tensor<2x16x8x8xf32>
}

// -----

// NHWC image, HWCF filter: K is taken in the image's layout order, (kh, kw, c), so the channel
// is K's fastest dimension: consecutive threads copy consecutive channels of one image pixel
// (coalesced), and the filter is copied along its output channels (M, its fastest).

// CHECK-LABEL: func.func @conv_nhwc
// CHECK:         gpu.func @conv_nhwc_k0(%[[X:.*]]: memref<2x10x10x16xf32>, %[[W:.*]]: memref<3x3x16x32xf32>, %{{.*}}: memref<2x8x8x32xf32>) workgroup(
// CHECK:           scf.for %[[K0:.*]] = %c0 to %c144 step %c8
// CHECK:             %[[MM:.*]] = arith.remui %thread_id_x, %c32 : index
// CHECK:             %[[F:.*]] = arith.addi %{{.*}}, %[[MM]] : index
// CHECK:             memref.load %[[W]][%{{.*}}, %{{.*}}, %{{.*}}, %[[F]]]
// CHECK:             %[[KK:.*]] = arith.remui %thread_id_x, %c8 : index
// CHECK-NEXT:        %[[K:.*]] = arith.addi %[[K0]], %[[KK]] : index
// CHECK:             %[[C:.*]] = arith.remui %[[K]], %c16 : index
// CHECK:             memref.load %[[X]][%{{.*}}, %{{.*}}, %{{.*}}, %[[C]]]
func.func @conv_nhwc(%x: tensor<2x10x10x16xf32>, %w: tensor<3x3x16x32xf32>) -> tensor<2x8x8x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x8x8x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x8x8x32xf32>) -> tensor<2x8x8x32xf32>
  %r = linalg.conv_2d_nhwc_hwcf {strides = dense<1> : vector<2xi64>, dilations = dense<1> : vector<2xi64>,
                                 evo.knobs = {tile_sizes = [32, 64, 8], thread_tile = [4, 4], vector_width = 4}}
         ins(%x, %w : tensor<2x10x10x16xf32>, tensor<3x3x16x32xf32>)
         outs(%acc : tensor<2x8x8x32xf32>) -> tensor<2x8x8x32xf32>
  return %r : tensor<2x8x8x32xf32>
}

// -----

// Grouped (torch-mlir's form: the image and filter expanded into groups, the result collapsed
// back): the group indexes the filter, the image and the result and is reduced by none, so it is
// the GEMM's batch (grid z = 2 groups); per group M = 16 output channels, N = 2*8*8, K = 4*3*3.
// The expanded image is read through its view; the kernel writes the result through the returned
// collapse_shape (its parameter is the output buffer, viewed as [N, G, F/G, H, W]): no copy.

// CHECK-LABEL: func.func @conv_grouped
// CHECK:         gpu.launch_func @conv_grouped_kernels::@conv_grouped_k0 blocks in (%c2, %c1, %c2) threads in (%c64, %c1, %c1)
// CHECK-NOT:     gpu.launch_func
// CHECK:         gpu.func @conv_grouped_k0(%{{.*}}: memref<2x8x10x10xf32>, %{{.*}}: memref<32x4x3x3xf32>, %[[OUT:.*]]: memref<2x32x8x8xf32>) workgroup(
// CHECK-SAME:      evo.family = #evo.family<matmul>, evo.knobs = #evo.knobs<vector_width = 4, tile_sizes = [16, 64, 4], thread_tile = [4, 4]>
// CHECK:           memref.reinterpret_cast %[[OUT]] to offset: [0], sizes: [2, 2, 16, 8, 8], strides: [2048, 1024, 64, 8, 1] : memref<2x32x8x8xf32> to memref<2x2x16x8x8xf32>
// CHECK:           gpu.block_id  z
func.func @conv_grouped(%x: tensor<2x8x10x10xf32>, %w: tensor<32x4x3x3xf32>) -> tensor<2x32x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %xg = tensor.expand_shape %x [[0], [1, 2], [3], [4]] output_shape [2, 2, 4, 10, 10] : tensor<2x8x10x10xf32> into tensor<2x2x4x10x10xf32>
  %wg = tensor.expand_shape %w [[0, 1], [2], [3], [4]] output_shape [2, 16, 4, 3, 3] : tensor<32x4x3x3xf32> into tensor<2x16x4x3x3xf32>
  %e = tensor.empty() : tensor<2x2x16x8x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x2x16x8x8xf32>) -> tensor<2x2x16x8x8xf32>
  %r = linalg.conv_2d_ngchw_gfchw {strides = dense<1> : vector<2xi64>, dilations = dense<1> : vector<2xi64>,
                                   evo.knobs = {tile_sizes = [16, 64, 4], thread_tile = [4, 4], vector_width = 4}}
         ins(%xg, %wg : tensor<2x2x4x10x10xf32>, tensor<2x16x4x3x3xf32>)
         outs(%acc : tensor<2x2x16x8x8xf32>) -> tensor<2x2x16x8x8xf32>
  %c = tensor.collapse_shape %r [[0], [1, 2], [3], [4]] : tensor<2x2x16x8x8xf32> into tensor<2x32x8x8xf32>
  return %c : tensor<2x32x8x8xf32>
}

// -----

// 3-d: N = (batch, three output dimensions), K = (channels, three filter dimensions).

// CHECK-LABEL: func.func @conv3d
// CHECK:         gpu.launch_func @conv3d_kernels::@conv3d_k0 blocks in (%c2, %c1, %c1) threads in (%c64, %c1, %c1)
// CHECK:         gpu.func @conv3d_k0(
// CHECK-SAME:      evo.family = #evo.family<matmul>, evo.knobs = #evo.knobs<vector_width = 4, tile_sizes = [16, 64, 4], thread_tile = [4, 4]>
func.func @conv3d(%x: tensor<2x4x6x6x6xf32>, %w: tensor<16x4x3x3x3xf32>) -> tensor<2x16x4x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x16x4x4x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x16x4x4x4xf32>) -> tensor<2x16x4x4x4xf32>
  %r = linalg.conv_3d_ncdhw_fcdhw {strides = dense<1> : vector<3xi64>, dilations = dense<1> : vector<3xi64>,
                                   evo.knobs = {tile_sizes = [16, 64, 4], thread_tile = [4, 4], vector_width = 4}}
         ins(%x, %w : tensor<2x4x6x6x6xf32>, tensor<16x4x3x3x3xf32>)
         outs(%acc : tensor<2x16x4x4x4xf32>) -> tensor<2x16x4x4x4xf32>
  return %r : tensor<2x16x4x4x4xf32>
}

// -----

// CHECK-LABEL: func.func @conv1d
// CHECK:         gpu.launch_func @conv1d_kernels::@conv1d_k0 blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1)
// CHECK:         gpu.func @conv1d_k0(
// CHECK-SAME:      evo.family = #evo.family<matmul>, evo.knobs = #evo.knobs<vector_width = 4, tile_sizes = [16, 64, 4], thread_tile = [4, 4]>
func.func @conv1d(%x: tensor<2x4x34xf32>, %w: tensor<16x4x3xf32>) -> tensor<2x16x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x16x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x16x32xf32>) -> tensor<2x16x32xf32>
  %r = linalg.conv_1d_ncw_fcw {strides = dense<1> : vector<1xi64>, dilations = dense<1> : vector<1xi64>,
                               evo.knobs = {tile_sizes = [16, 64, 4], thread_tile = [4, 4], vector_width = 4}}
         ins(%x, %w : tensor<2x4x34xf32>, tensor<16x4x3xf32>)
         outs(%acc : tensor<2x16x32xf32>) -> tensor<2x16x32xf32>
  return %r : tensor<2x16x32xf32>
}

// -----

// 1x1 (pointwise): K = (channels, 1, 1).

// CHECK-LABEL: func.func @conv_pointwise
// CHECK:         gpu.launch_func @conv_pointwise_kernels::@conv_pointwise_k0 blocks in (%c2, %c1, %c1) threads in (%c64, %c1, %c1)
// CHECK:         gpu.func @conv_pointwise_k0(
// CHECK-SAME:      evo.family = #evo.family<matmul>, evo.knobs = #evo.knobs<vector_width = 4, tile_sizes = [16, 64, 4], thread_tile = [4, 4]>
func.func @conv_pointwise(%x: tensor<2x8x8x8xf32>, %w: tensor<16x8x1x1xf32>) -> tensor<2x16x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x16x8x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x16x8x8xf32>) -> tensor<2x16x8x8xf32>
  %r = linalg.conv_2d_nchw_fchw {strides = dense<1> : vector<2xi64>, dilations = dense<1> : vector<2xi64>,
                                 evo.knobs = {tile_sizes = [16, 64, 4], thread_tile = [4, 4], vector_width = 4}}
         ins(%x, %w : tensor<2x8x8x8xf32>, tensor<16x8x1x1xf32>)
         outs(%acc : tensor<2x16x8x8xf32>) -> tensor<2x16x8x8xf32>
  return %r : tensor<2x16x8x8xf32>
}

// -----

// Transposed (as bench/kernelbench/conv_transpose2d.mlir writes it): the image padded by
// kernel - 1, read at (i + 2 - kh, j + 2 - kw) through the pad (element loads, clamped and
// selected); the filter is [in, out, kh, kw]: M = out (16), N = 1*8*8, K = 4*3*3.

// CHECK-LABEL: func.func @conv_transposed
// CHECK:         gpu.launch_func @conv_transposed_kernels::@conv_transposed_k0 blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1)
// CHECK:         gpu.func @conv_transposed_k0(%[[X:.*]]: memref<1x4x6x6xf32>, %{{.*}}: memref<4x16x3x3xf32>, %{{.*}}: memref<1x16x8x8xf32>) workgroup(
// CHECK-SAME:      evo.family = #evo.family<matmul>, evo.knobs = #evo.knobs<vector_width = 4, tile_sizes = [16, 64, 4], thread_tile = [4, 4]>
// CHECK:           memref.load %[[X]]
// CHECK:           arith.select
#img = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 - d5 + 2, d3 - d6 + 2)>
#flt = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d1, d5, d6)>
#out = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
func.func @conv_transposed(%x: tensor<1x4x6x6xf32>, %w: tensor<4x16x3x3xf32>) -> tensor<1x16x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 2, 2] high[0, 0, 2, 2] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<1x4x6x6xf32> to tensor<1x4x10x10xf32>
  %e = tensor.empty() : tensor<1x16x8x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32>
  %r = linalg.generic {indexing_maps = [#img, #flt, #out],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
         ins(%p, %w : tensor<1x4x10x10xf32>, tensor<4x16x3x3xf32>) outs(%acc : tensor<1x16x8x8xf32>)
         attrs = {evo.knobs = {tile_sizes = [16, 64, 4], thread_tile = [4, 4], vector_width = 4}} {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x16x8x8xf32>
  return %r : tensor<1x16x8x8xf32>
}

// -----

// Depthwise: the channel indexes filter, image and result (the GEMM's batch: grid z), and no
// dimension is the filter's alone: M = 1. The naive schedule is the matmul family's.

// CHECK-LABEL: func.func @depthwise_naive
// CHECK:         gpu.func @depthwise_naive_k0(
// CHECK-SAME:      evo.family = #evo.family<matmul>
func.func @depthwise_naive(%x: tensor<2x8x10x10xf32>, %w: tensor<8x3x3xf32>) -> tensor<2x8x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x8x8x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x8x8x8xf32>) -> tensor<2x8x8x8xf32>
  %r = linalg.depthwise_conv_2d_nchw_chw {strides = dense<1> : vector<2xi64>, dilations = dense<1> : vector<2xi64>}
         ins(%x, %w : tensor<2x8x10x10xf32>, tensor<8x3x3xf32>)
         outs(%acc : tensor<2x8x8x8xf32>) -> tensor<2x8x8x8xf32>
  return %r : tensor<2x8x8x8xf32>
}

// -----

// Depthwise, tiled: BM = TM = 1, K = the 3x3 window in one tile (BK = 9), N = (batch, output
// pixels) over the block's 32 threads, 2 pixels each; grid z = the 16 channels. The 9 filter taps
// are fewer than the threads: thread t copies tap min(t, 8).

// CHECK-LABEL: func.func @depthwise_tiled
// CHECK:         gpu.launch_func @depthwise_tiled_kernels::@depthwise_tiled_k0 blocks in (%c32, %c1, %c16) threads in (%c32, %c1, %c1)
// CHECK:         gpu.func @depthwise_tiled_k0(%[[X:.*]]: memref<2x16x34x34xf32>, %[[W:.*]]: memref<16x3x3xf32>, %{{.*}}: memref<2x16x32x32xf32>) workgroup(%{{.*}} : memref<9xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<576xf32, #gpu.address_space<workgroup>>)
// CHECK-SAME:      evo.family = #evo.family<matmul>, evo.knobs = #evo.knobs<tile_sizes = [1, 64, 9], thread_tile = [1, 2]>
// CHECK:           %[[Z:.*]] = gpu.block_id  z
// CHECK:           %[[T:.*]] = arith.minui %{{.*}}, %c8 : index
// CHECK:           memref.load %[[W]][%[[Z]], %{{.*}}, %{{.*}}]
// CHECK:           memref.load %[[X]][%{{.*}}, %[[Z]], %{{.*}}, %{{.*}}]
func.func @depthwise_tiled(%x: tensor<2x16x34x34xf32>, %w: tensor<16x3x3xf32>) -> tensor<2x16x32x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x16x32x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x16x32x32xf32>) -> tensor<2x16x32x32xf32>
  %r = linalg.depthwise_conv_2d_nchw_chw {strides = dense<1> : vector<2xi64>, dilations = dense<1> : vector<2xi64>,
                                          evo.knobs = {tile_sizes = [1, 64, 9], thread_tile = [1, 2]}}
         ins(%x, %w : tensor<2x16x34x34xf32>, tensor<16x3x3xf32>)
         outs(%acc : tensor<2x16x32x32xf32>) -> tensor<2x16x32x32xf32>
  return %r : tensor<2x16x32x32xf32>
}

// -----

// M = 1 leaves no room for the 4x4 sub-tiles of vector_width=4.

func.func @depthwise_vector(%x: tensor<2x16x34x34xf32>, %w: tensor<16x3x3xf32>) -> tensor<2x16x32x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x16x32x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x16x32x32xf32>) -> tensor<2x16x32x32xf32>
  // expected-error @+1 {{tile_sizes=1,128,9 thread_tile=1,4 for M=1 N=2048 K=9: vector_width=4 needs thread_tile entries that are multiples of 4}}
  %r = linalg.depthwise_conv_2d_nchw_chw {strides = dense<1> : vector<2xi64>, dilations = dense<1> : vector<2xi64>,
                                          evo.knobs = {tile_sizes = [1, 128, 9], thread_tile = [1, 4], vector_width = 4}}
         ins(%x, %w : tensor<2x16x34x34xf32>, tensor<16x3x3xf32>)
         outs(%acc : tensor<2x16x32x32xf32>) -> tensor<2x16x32x32xf32>
  return %r : tensor<2x16x32x32xf32>
}

// -----

// A pooling's window operand is only a shape (the payload never reads it): not a GEMM, it keeps
// the reduction family.

// CHECK-LABEL: func.func @pool_sum
// CHECK:         gpu.func @pool_sum_k0(
// CHECK-SAME:      evo.family = #evo.family<reduction>
func.func @pool_sum(%x: tensor<2x8x32x32xf32>) -> tensor<2x8x16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x8x16x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x8x16x16xf32>) -> tensor<2x8x16x16xf32>
  %win = tensor.empty() : tensor<2x2xf32>
  %r = linalg.pooling_nchw_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
     ins(%x, %win : tensor<2x8x32x32xf32>, tensor<2x2xf32>) outs(%acc : tensor<2x8x16x16xf32>) -> tensor<2x8x16x16xf32>
  return %r : tensor<2x8x16x16xf32>
}
