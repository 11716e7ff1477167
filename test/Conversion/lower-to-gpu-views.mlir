// Views — tensor.expand_shape, collapse_shape, extract_slice, cast and tensor.pad with a constant
// padding value — become no task and no buffer: the kernels of the ops that read them index the
// view's source (reshapes and slices through an affine map, pads with a bounds check selecting
// the padding value). A softmax's input or a returned view is copied by an elementwise task,
// except a returned reshape of an op's result used only there: that op's kernel writes the
// output buffer itself (its parameter has the buffer's type, viewed in the op's shape by a
// memref.reinterpret_cast).
//
// RUN: evo-opt %s -split-input-file -verify-diagnostics -evo-lower-to-gpu | FileCheck %s

// A collapsed argument read by an elementwise op: one kernel reading the 4x8 argument at
// (i floordiv 8, i mod 8); the plan has no buffer for the view.
// CHECK-LABEL: func.func @collapse_exp(
// CHECK-SAME:    %{{.*}}: memref<4x8xf32>, %{{.*}}: memref<32xf32>)
// CHECK:       gpu.module @collapse_exp_kernels
// CHECK-SAME:    buffers = [#evo.buffer<name = "arg0", role = input, type = memref<4x8xf32>>, #evo.buffer<name = "result0", role = output, type = memref<32xf32>>]
// CHECK:       gpu.func @collapse_exp_k0(%[[X:.*]]: memref<4x8xf32>, %{{.*}}: memref<32xf32>)
// CHECK-SAME:    evo.family = #evo.family<elementwise>
// CHECK:         arith.divsi %{{.*}}, %c8
// CHECK:         arith.remsi %{{.*}}, %c8
// CHECK:         memref.load %[[X]][%{{.*}}, %{{.*}}] : memref<4x8xf32>
// CHECK:         math.exp
func.func @collapse_exp(%x: tensor<4x8xf32>) -> tensor<32xf32> {
  %c = tensor.collapse_shape %x [[0, 1]] : tensor<4x8xf32> into tensor<32xf32>
  %e = tensor.empty() : tensor<32xf32>
  %r = linalg.exp ins(%c : tensor<32xf32>) outs(%e : tensor<32xf32>) -> tensor<32xf32>
  return %r : tensor<32xf32>
}

// -----

// Max pooling over a padded image (padding -FLT_MAX): the reduction kernel reads the 8x8
// argument with clamped indices and selects the padding value outside it.
// CHECK-LABEL: func.func @padded_pool(
// CHECK-SAME:    memref<1x2x8x8xf32>, %{{.*}}: memref<1x2x4x4xf32>)
// CHECK:       gpu.func @padded_pool_k0(%[[X:.*]]: memref<1x2x8x8xf32>, %{{.*}}: memref<1x2x4x4xf32>)
// CHECK-SAME:    evo.family = #evo.family<reduction>
// CHECK:         arith.cmpi sge
// CHECK:         arith.maxsi
// CHECK:         arith.minsi %{{.*}}, %c7
// CHECK:         %[[V:.*]] = memref.load %[[X]]
// CHECK:         arith.select %{{.*}}, %[[V]], %{{.*}} : f32
// CHECK:         arith.maximumf
func.func @padded_pool(%x: tensor<1x2x8x8xf32>) -> tensor<1x2x4x4xf32> {
  %ninf = arith.constant -3.40282347E+38 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %ninf : f32
  } : tensor<1x2x8x8xf32> to tensor<1x2x10x10xf32>
  %w = tensor.empty() : tensor<3x3xf32>
  %i = tensor.empty() : tensor<1x2x4x4xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%i : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %r = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
    ins(%p, %w : tensor<1x2x10x10xf32>, tensor<3x3xf32>) outs(%f : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %r : tensor<1x2x4x4xf32>
}

// -----

// A padded convolution keeps the matmul family: naive, and tiled as an implicit GEMM (its global
// loads of the image go element by element through the pad).
// CHECK-LABEL: func.func @conv_pad(
// CHECK:       gpu.func @conv_pad_k0(%{{.*}}: memref<1x4x8x8xf32>, %{{.*}}: memref<8x4x3x3xf32>, %{{.*}}: memref<1x8x8x8xf32>)
// CHECK-SAME:    evo.family = #evo.family<matmul>
// CHECK-SAME:    evo.knobs = #evo.knobs<tile_sizes = [8, 16, 12], thread_tile = [2, 2]
// CHECK:         arith.select {{.*}} : f32
func.func @conv_pad(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<1x8x8x8xf32> {
  %z = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %z : f32
  } : tensor<1x4x8x8xf32> to tensor<1x4x10x10xf32>
  %i = tensor.empty() : tensor<1x8x8x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%i : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>, evo.knobs = {tile_sizes = [8, 16, 12], thread_tile = [2, 2]}}
    ins(%p, %w : tensor<1x4x10x10xf32>, tensor<8x4x3x3xf32>) outs(%f : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  return %r : tensor<1x8x8x8xf32>
}

// -----

// A strided, rank-reducing slice: column 3 of every other row, read at (2 i + 1, 3).
// CHECK-LABEL: func.func @slice(
// CHECK:       gpu.func @slice_k0(%[[X:.*]]: memref<8x16xf32>
// CHECK:         memref.load %[[X]][%{{.*}}, %c3] : memref<8x16xf32>
func.func @slice(%x: tensor<8x16xf32>) -> tensor<4xf32> {
  %s = tensor.extract_slice %x[1, 3] [4, 1] [2, 1] : tensor<8x16xf32> to tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.negf ins(%s : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// A keep-dim sum (the reduction's result expanded to [16, 1] and returned): the reduction
// writes the [16, 1] result itself; no scratch, no copy.
// CHECK-LABEL: func.func @keepdim_sum(
// CHECK:       buffers = [#evo.buffer<name = "arg0", role = input, type = memref<16x32xf32>>, #evo.buffer<name = "result0", role = output, type = memref<16x1xf32>>]
// CHECK-SAME:    launches = [#evo.launch<kernel = "keepdim_sum_k0", task = 0, grid = [1, 1, 1], block = [256, 1, 1], args = [0, 1]>]
// CHECK:       gpu.func @keepdim_sum_k0(%{{.*}}: memref<16x32xf32>, %[[OUT:.*]]: memref<16x1xf32>) kernel attributes {evo.family = #evo.family<reduction>
// CHECK:         %[[V:.*]] = memref.reinterpret_cast %[[OUT]] to offset: [0], sizes: [16], strides: [1] : memref<16x1xf32> to memref<16xf32>
// CHECK:         memref.store %{{.*}}, %[[V]][%{{.*}}] : memref<16xf32>
// CHECK-NOT:   gpu.func
func.func @keepdim_sum(%x: tensor<16x32xf32>) -> tensor<16x1xf32> {
  %z = arith.constant 0.0 : f32
  %i = tensor.empty() : tensor<16xf32>
  %f = linalg.fill ins(%z : f32) outs(%i : tensor<16xf32>) -> tensor<16xf32>
  %s = linalg.reduce ins(%x : tensor<16x32xf32>) outs(%f : tensor<16xf32>) dimensions = [1]
    (%a: f32, %b: f32) { %t = arith.addf %a, %b : f32
      linalg.yield %t : f32 }
  %k = tensor.expand_shape %s [[0, 1]] output_shape [16, 1] : tensor<16xf32> into tensor<16x1xf32>
  return %k : tensor<16x1xf32>
}

// -----

// GroupNorm as torch-mlir writes it: statistics over [N, G, C/G, HW], the normalisation, a
// collapse_shape back to [N, C, HW], then the per-channel affine. The affine is expanded to
// the normalisation's shape (weight and bias reshaped to [G, C/G]) and fused with it; the
// fused op writes the output buffer through the returned collapse_shape: two tasks (statistics,
// normalise + affine) and no [N, G, C/G, HW] scratch.
// CHECK-LABEL: func.func @groupnorm(
// CHECK:       buffers = [#evo.buffer<name = "arg0", role = input, type = memref<2x8x16xf32>>, #evo.buffer<name = "arg1", role = input, type = memref<8xf32>>, #evo.buffer<name = "arg2", role = input, type = memref<8xf32>>, #evo.buffer<name = "result0", role = output, type = memref<2x8x16xf32>>, #evo.buffer<name = "tmp0", role = scratch, type = memref<2x4xf32>>, #evo.buffer<name = "tmp1", role = scratch, type = memref<2x4xf32>>]
// CHECK:       gpu.func @groupnorm_k0(
// CHECK:       gpu.func @groupnorm_k1(%{{.*}}: memref<2x8x16xf32>, %{{.*}}: memref<2x4xf32>, %{{.*}}: memref<2x4xf32>, %{{.*}}: memref<8xf32>, %{{.*}}: memref<8xf32>, %[[OUT:.*]]: memref<2x8x16xf32>) kernel attributes {evo.family = #evo.family<elementwise>
// CHECK:         memref.reinterpret_cast %[[OUT]] to offset: [0], sizes: [2, 4, 2, 16], strides: [128, 32, 16, 1] : memref<2x8x16xf32> to memref<2x4x2x16xf32>
// CHECK:         math.rsqrt
// CHECK:         arith.mulf
// CHECK:         arith.addf
// CHECK-NOT:   gpu.func
#g5 = affine_map<(n, g, c, s) -> (n, g, c, s)>
#g2 = affine_map<(n, g, c, s) -> (n, g)>
#c3 = affine_map<(n, c, s) -> (n, c, s)>
#ch = affine_map<(n, c, s) -> (c)>
func.func @groupnorm(%x: tensor<2x8x16xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<2x8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 32.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %xe = tensor.expand_shape %x [[0], [1, 2], [3]] output_shape [2, 4, 2, 16] : tensor<2x8x16xf32> into tensor<2x4x2x16xf32>
  %e2 = tensor.empty() : tensor<2x4xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %sum = linalg.generic {indexing_maps = [#g5, #g2], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%xe : tensor<2x4x2x16xf32>) outs(%f2 : tensor<2x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  } -> tensor<2x4xf32>
  %sq = linalg.generic {indexing_maps = [#g5, #g2, #g2], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%xe, %sum : tensor<2x4x2x16xf32>, tensor<2x4xf32>) outs(%f2 : tensor<2x4xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %m = arith.divf %s, %n : f32
    %d = arith.subf %a, %m : f32
    %d2 = arith.mulf %d, %d : f32
    %t = arith.addf %d2, %o : f32
    linalg.yield %t : f32
  } -> tensor<2x4xf32>
  %e5 = tensor.empty() : tensor<2x4x2x16xf32>
  %norm = linalg.generic {indexing_maps = [#g5, #g2, #g2, #g5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%xe, %sum, %sq : tensor<2x4x2x16xf32>, tensor<2x4xf32>, tensor<2x4xf32>) outs(%e5 : tensor<2x4x2x16xf32>) {
  ^bb0(%a: f32, %s: f32, %v: f32, %o: f32):
    %m = arith.divf %s, %n : f32
    %d = arith.subf %a, %m : f32
    %var = arith.divf %v, %n : f32
    %ve = arith.addf %var, %eps : f32
    %r = math.rsqrt %ve : f32
    %y = arith.mulf %d, %r : f32
    linalg.yield %y : f32
  } -> tensor<2x4x2x16xf32>
  %c = tensor.collapse_shape %norm [[0], [1, 2], [3]] : tensor<2x4x2x16xf32> into tensor<2x8x16xf32>
  %e3 = tensor.empty() : tensor<2x8x16xf32>
  %out = linalg.generic {indexing_maps = [#c3, #ch, #ch, #c3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%c, %w, %b : tensor<2x8x16xf32>, tensor<8xf32>, tensor<8xf32>) outs(%e3 : tensor<2x8x16xf32>) {
  ^bb0(%a: f32, %wv: f32, %bv: f32, %o: f32):
    %m = arith.mulf %a, %wv : f32
    %y = arith.addf %m, %bv : f32
    linalg.yield %y : f32
  } -> tensor<2x8x16xf32>
  return %out : tensor<2x8x16xf32>
}

// -----

// A returned reshape of an argument, and one of a value used twice: copied (there is no op
// whose kernel could write the output in place).
// CHECK-LABEL: func.func @returned_reshape_copies(
// CHECK:       buffers = [#evo.buffer<name = "arg0", role = input, type = memref<4x8xf32>>, #evo.buffer<name = "result0", role = output, type = memref<32xf32>>, #evo.buffer<name = "result1", role = output, type = memref<4x8xf32>>, #evo.buffer<name = "result2", role = output, type = memref<32xf32>>]
// CHECK-COUNT-3: #evo.family<elementwise>
func.func @returned_reshape_copies(%x: tensor<4x8xf32>) -> (tensor<32xf32>, tensor<4x8xf32>, tensor<32xf32>) {
  %c = tensor.collapse_shape %x [[0, 1]] : tensor<4x8xf32> into tensor<32xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %r = linalg.exp ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %rc = tensor.collapse_shape %r [[0, 1]] : tensor<4x8xf32> into tensor<32xf32>
  return %c, %r, %rc : tensor<32xf32>, tensor<4x8xf32>, tensor<32xf32>
}

// -----

// A lone softmax is a row program, which reads an argument through views (element by element):
// one kernel, no copy of the view.
// CHECK-LABEL: func.func @softmax_view(
// CHECK:       gpu.func @softmax_view_k0(%{{.*}}: memref<4x2x8xf32>, %{{.*}}: memref<8x8xf32>) kernel attributes {evo.family = #evo.family<rows>
// CHECK-NOT:   gpu.func
func.func @softmax_view(%x: tensor<4x2x8xf32>) -> tensor<8x8xf32> {
  %c = tensor.collapse_shape %x [[0, 1], [2]] : tensor<4x2x8xf32> into tensor<8x8xf32>
  %e = tensor.empty() : tensor<8x8xf32>
  %r = linalg.softmax dimension(1) ins(%c : tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}

// -----

func.func @pad_not_constant(%x: tensor<8xf32>, %y: tensor<1xf32>) -> tensor<10xf32> {
  %i = arith.constant 0 : index
  %v = tensor.extract %y[%i] : tensor<1xf32>
  // expected-error @+1 {{evo-lower-to-gpu: 'tensor.pad' needs a constant padding value (the region must yield a constant)}}
  %p = tensor.pad %x low[1] high[1] {
  ^bb0(%a: index):
    tensor.yield %v : f32
  } : tensor<8xf32> to tensor<10xf32>
  %e = tensor.empty() : tensor<10xf32>
  %r = linalg.negf ins(%p : tensor<10xf32>) outs(%e : tensor<10xf32>) -> tensor<10xf32>
  return %r : tensor<10xf32>
}

// -----

func.func @slice_dynamic(%x: tensor<8xf32>, %y: tensor<1xi32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %v = tensor.extract %y[%c0] : tensor<1xi32>
  %o = arith.index_cast %v : i32 to index
  // expected-error @+1 {{evo-lower-to-gpu: 'tensor.extract_slice' needs static offsets, sizes and strides}}
  %s = tensor.extract_slice %x[%o] [4] [1] : tensor<8xf32> to tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.negf ins(%s : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// wgmma reads its operands with TMA: a view is refused with the reason.
func.func @wgmma_view(%a: tensor<64x2x64xf16>, %b: tensor<128x128xf16>) -> tensor<128x128xf32> {
  %c = tensor.collapse_shape %a [[0, 1], [2]] : tensor<64x2x64xf16> into tensor<128x64xf16>
  %p = tensor.pad %c low[0, 0] high[0, 64] {
  ^bb0(%i: index, %j: index):
    %z = arith.constant 0.0 : f16
    tensor.yield %z : f16
  } : tensor<128x64xf16> to tensor<128x128xf16>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<128x128xf32>) -> tensor<128x128xf32>
  // expected-error @+1 {{not read through a view}}
  %r = linalg.matmul {evo.knobs = {tile_sizes = [128, 128, 64], wgmma = 1}} ins(%p, %b : tensor<128x128xf16>, tensor<128x128xf16>) outs(%f : tensor<128x128xf32>) -> tensor<128x128xf32>
  return %r : tensor<128x128xf32>
}
