// RUN: evo-opt %s -split-input-file -verify-diagnostics -evo-lower-to-gpu | FileCheck %s --implicit-check-not=tosa.
// End to end to PTX (and through ptxas where it is installed).
// RUN: rm -rf %t && mkdir -p %t
// RUN: evo-opt %s -split-input-file -verify-diagnostics --evo-pipeline="output-dir=%t/ptx ptxas=none" -o /dev/null
// RUN: ls %t/ptx | FileCheck %s --check-prefix=FILES
// RUN: %if ptxas %{ evo-opt %s -split-input-file -verify-diagnostics --evo-pipeline="output-dir=%t/asm" -o /dev/null %}
// RUN: %if ptxas %{ FileCheck %s --input-file=%t/asm/conv2d.json --check-prefix=ASM %}

// TOSA input: evo-lower-to-gpu converts each function that holds TOSA ops with upstream's
// conversions (tosa-to-scf, --tosa-to-linalg-pipeline, tosa-to-tensor, tosa-to-arith) before
// lowering it, so the plan's sources, the tasks and the kernels only see linalg (no `tosa.` in the
// output). Diagnostics point at the TOSA op they came from.

// FILES: add_bcast.json
// FILES: argmax.json
// FILES: avg_pool.json
// FILES: avg_pool_pad.json
// FILES: conv2d.json
// FILES: conv2d_pad.json
// FILES: depthwise.json
// FILES: f16_matmul.json
// FILES: matmul.json
// FILES: max_pool.json
// FILES: max_pool_pad.json
// FILES: mlp.json
// FILES: mul.json
// FILES: reduce_max.json
// FILES: reduce_sum.json
// FILES: rescale.json
// FILES: reshape_add.json
// FILES: slice_exp.json
// FILES: softmax.json
// FILES: transpose.json
// FILES: unary.json

// ASM:   "name": "conv2d_k1",
// ASM:   "resources": {
// ASM:   "ptxas": {

// Elementwise with a broadcast row: one elementwise kernel, the row read through (0, d1).

// CHECK-LABEL: func.func @add_bcast
// CHECK-SAME:    (%{{.*}}: memref<64x128xf32>, %{{.*}}: memref<1x128xf32>, %{{.*}}: memref<64x128xf32>)
// CHECK:         gpu.launch_func @add_bcast_kernels::@add_bcast_k0
// CHECK:       gpu.module @add_bcast_kernels attributes {evo.plan = #evo.plan<func = "add_bcast", source = "func.func @add_bcast(
// CHECK-SAME:    linalg.generic
// CHECK-SAME:    affine_map<(d0, d1) -> (0, d1)>
// CHECK-SAME:    arith.addf
// CHECK-SAME:    family = elementwise
func.func @add_bcast(%a: tensor<64x128xf32>, %b: tensor<1x128xf32>) -> tensor<64x128xf32> {
  %0 = tosa.add %a, %b : (tensor<64x128xf32>, tensor<1x128xf32>) -> tensor<64x128xf32>
  return %0 : tensor<64x128xf32>
}

// -----

// tosa.mul's shift operand is a constant the conversion drops.

// CHECK-LABEL: func.func @mul
// CHECK:         gpu.launch_func @mul_kernels::@mul_k0
// CHECK:       gpu.module @mul_kernels
// CHECK-SAME:    arith.mulf
func.func @mul(%a: tensor<64x128xf32>, %b: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %0 = tosa.mul %a, %b, %shift : (tensor<64x128xf32>, tensor<64x128xf32>, tensor<1xi8>) -> tensor<64x128xf32>
  return %0 : tensor<64x128xf32>
}

// -----

// A chain of unary ops (relu as clamp, sigmoid, tanh, exp, rsqrt, erf) fuses into one kernel.

// CHECK-LABEL: func.func @unary
// CHECK-SAME:    (%{{.*}}: memref<64x128xf32>, %{{.*}}: memref<64x128xf32>)
// CHECK:         gpu.launch_func @unary_kernels::@unary_k0
// CHECK-NOT:     gpu.launch_func
// CHECK:       gpu.module @unary_kernels
// CHECK-SAME:    tasks = [#evo.task<name = "unary_t0", family = elementwise
// CHECK-NOT:     #evo.task
// CHECK:         gpu.func @unary_k0
// CHECK-DAG:       arith.maximumf
// CHECK-DAG:       math.exp
// CHECK-DAG:       math.tanh
// CHECK-DAG:       math.rsqrt
// CHECK-DAG:       math.erf
func.func @unary(%a: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %0 = tosa.clamp %a {min_val = 0.0 : f32, max_val = 3.4028235e38 : f32} : (tensor<64x128xf32>) -> tensor<64x128xf32>
  %1 = tosa.sigmoid %0 : (tensor<64x128xf32>) -> tensor<64x128xf32>
  %2 = tosa.tanh %1 : (tensor<64x128xf32>) -> tensor<64x128xf32>
  %3 = tosa.exp %2 : (tensor<64x128xf32>) -> tensor<64x128xf32>
  %4 = tosa.rsqrt %3 : (tensor<64x128xf32>) -> tensor<64x128xf32>
  %5 = tosa.erf %4 : (tensor<64x128xf32>) -> tensor<64x128xf32>
  return %5 : tensor<64x128xf32>
}

// -----

// tosa.matmul (3-D, batched) becomes linalg.batch_matmul: the matmul family.

// CHECK-LABEL: func.func @matmul
// CHECK-SAME:    (%{{.*}}: memref<4x64x32xf32>, %{{.*}}: memref<4x32x128xf32>, %{{.*}}: memref<4x64x128xf32>)
// CHECK:       gpu.module @matmul_kernels
// CHECK-SAME:    linalg.batch_matmul
// CHECK-SAME:    family = matmul
func.func @matmul(%a: tensor<4x64x32xf32>, %b: tensor<4x32x128xf32>) -> tensor<4x64x128xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %0 = tosa.matmul %a, %b, %zp, %zp : (tensor<4x64x32xf32>, tensor<4x32x128xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x64x128xf32>
  return %0 : tensor<4x64x128xf32>
}

// -----

// f16 operands accumulated into an f32 result.

// CHECK-LABEL: func.func @f16_matmul
// CHECK-SAME:    (%{{.*}}: memref<2x64x32xf16>, %{{.*}}: memref<2x32x128xf16>, %{{.*}}: memref<2x64x128xf32>)
// CHECK:       gpu.module @f16_matmul_kernels
// CHECK-SAME:    family = matmul
func.func @f16_matmul(%a: tensor<2x64x32xf16>, %b: tensor<2x32x128xf16>) -> tensor<2x64x128xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf16>}> : () -> tensor<1xf16>
  %0 = tosa.matmul %a, %b, %zp, %zp : (tensor<2x64x32xf16>, tensor<2x32x128xf16>, tensor<1xf16>, tensor<1xf16>) -> tensor<2x64x128xf32>
  return %0 : tensor<2x64x128xf32>
}

// -----

// A matmul, a bias and a relu: the bias and relu become the matmul's epilogue.

// CHECK-LABEL: func.func @mlp
// CHECK:         gpu.launch_func @mlp_kernels::@mlp_k0
// CHECK-NOT:     gpu.launch_func
// CHECK:       gpu.module @mlp_kernels
// CHECK-SAME:    family = matmul
func.func @mlp(%x: tensor<1x32x64xf32>, %w: tensor<1x64x128xf32>, %b: tensor<1x1x128xf32>) -> tensor<1x32x128xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %0 = tosa.matmul %x, %w, %zp, %zp : (tensor<1x32x64xf32>, tensor<1x64x128xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x32x128xf32>
  %1 = tosa.add %0, %b : (tensor<1x32x128xf32>, tensor<1x1x128xf32>) -> tensor<1x32x128xf32>
  %2 = tosa.clamp %1 {min_val = 0.0 : f32, max_val = 3.4028235e38 : f32} : (tensor<1x32x128xf32>) -> tensor<1x32x128xf32>
  return %2 : tensor<1x32x128xf32>
}

// -----

// tosa.conv2d without padding: the bias broadcast, then linalg.conv_2d_nhwc_fhwc on it.

// CHECK-LABEL: func.func @conv2d
// CHECK-SAME:    (%{{.*}}: memref<1x32x32x16xf32>, %{{.*}}: memref<8x3x3x16xf32>, %{{.*}}: memref<8xf32>, %{{.*}}: memref<1x30x30x8xf32>)
// CHECK:       gpu.module @conv2d_kernels
// CHECK-SAME:    linalg.conv_2d_nhwc_fhwc
// CHECK-SAME:    family = matmul
func.func @conv2d(%x: tensor<1x32x32x16xf32>, %w: tensor<8x3x3x16xf32>, %b: tensor<8xf32>) -> tensor<1x30x30x8xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %0 = tosa.conv2d %x, %w, %b, %zp, %zp {acc_type = f32, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>} : (tensor<1x32x32x16xf32>, tensor<8x3x3x16xf32>, tensor<8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x30x30x8xf32>
  return %0 : tensor<1x30x30x8xf32>
}

// -----

// Pooling without padding: linalg.pooling_nhwc_max / _sum, reductions (strided windows).

// CHECK-LABEL: func.func @max_pool
// CHECK:       gpu.module @max_pool_kernels
// CHECK-SAME:    linalg.pooling_nhwc_max
// CHECK-SAME:    family = reduction
func.func @max_pool(%x: tensor<1x32x32x16xf32>) -> tensor<1x16x16x16xf32> {
  %0 = tosa.max_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>} : (tensor<1x32x32x16xf32>) -> tensor<1x16x16x16xf32>
  return %0 : tensor<1x16x16x16xf32>
}

// -----

// The window sum and the division by the window are one task (the division is the sum's
// epilogue).
// CHECK-LABEL: func.func @avg_pool
// CHECK:       gpu.module @avg_pool_kernels
// CHECK-SAME:    tasks = [#evo.task<name = "avg_pool_t0", family = reduction, source = "{{.*}}linalg.pooling_nhwc_sum{{.*}}arith.divf
// CHECK-NOT:     family = elementwise
func.func @avg_pool(%x: tensor<1x32x32x16xf32>) -> tensor<1x16x16x16xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %0 = tosa.avg_pool2d %x, %zp, %zp {acc_type = f32, kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>} : (tensor<1x32x32x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x16x16x16xf32>
  return %0 : tensor<1x16x16x16xf32>
}

// -----

// CHECK-LABEL: func.func @transpose
// CHECK-SAME:    (%{{.*}}: memref<64x128xf32>, %{{.*}}: memref<128x64xf32>)
// CHECK:       gpu.module @transpose_kernels
// CHECK-SAME:    linalg.transpose
func.func @transpose(%x: tensor<64x128xf32>) -> tensor<128x64xf32> {
  %0 = tosa.transpose %x {perms = array<i32: 1, 0>} : (tensor<64x128xf32>) -> tensor<128x64xf32>
  return %0 : tensor<128x64xf32>
}

// -----

// TOSA reductions keep the reduced dimension: a linalg.reduce, then a tensor.expand_shape of its
// result (a view; returned, so copied by an elementwise task).

// CHECK-LABEL: func.func @reduce_sum
// CHECK-SAME:    (%{{.*}}: memref<64x128xf32>, %{{.*}}: memref<64x1xf32>)
// CHECK:       gpu.module @reduce_sum_kernels
// CHECK-SAME:    linalg.reduce
// CHECK-SAME:    tensor.expand_shape
// CHECK-SAME:    family = reduction
func.func @reduce_sum(%a: tensor<64x128xf32>) -> tensor<64x1xf32> {
  %0 = tosa.reduce_sum %a {axis = 1 : i32} : (tensor<64x128xf32>) -> tensor<64x1xf32>
  return %0 : tensor<64x1xf32>
}

// -----

// CHECK-LABEL: func.func @reduce_max
// CHECK-SAME:    (%{{.*}}: memref<64x128xf32>, %{{.*}}: memref<1x128xf32>)
// CHECK:       gpu.module @reduce_max_kernels
// CHECK-SAME:    arith.maximumf
// CHECK-SAME:    family = reduction
func.func @reduce_max(%a: tensor<64x128xf32>) -> tensor<1x128xf32> {
  %0 = tosa.reduce_max %a {axis = 0 : i32} : (tensor<64x128xf32>) -> tensor<1x128xf32>
  return %0 : tensor<1x128xf32>
}

// -----

// Softmax as TOSA writes it: max, subtract, exp, sum, reciprocal, multiply. Three kernels today
// (the two row reductions and the rest): the row-program fusion does not see through the
// keep-dim reshapes.

// CHECK-LABEL: func.func @softmax
// CHECK-SAME:    (%{{.*}}: memref<64x128xf32>, %{{.*}}: memref<64x128xf32>)
// CHECK:       gpu.module @softmax_kernels
// CHECK-SAME:    family = reduction
// CHECK-SAME:    family = reduction
// CHECK-SAME:    family = elementwise
func.func @softmax(%x: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %m = tosa.reduce_max %x {axis = 1 : i32} : (tensor<64x128xf32>) -> tensor<64x1xf32>
  %d = tosa.sub %x, %m : (tensor<64x128xf32>, tensor<64x1xf32>) -> tensor<64x128xf32>
  %e = tosa.exp %d : (tensor<64x128xf32>) -> tensor<64x128xf32>
  %s = tosa.reduce_sum %e {axis = 1 : i32} : (tensor<64x128xf32>) -> tensor<64x1xf32>
  %r = tosa.reciprocal %s : (tensor<64x1xf32>) -> tensor<64x1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %y = tosa.mul %e, %r, %shift : (tensor<64x128xf32>, tensor<64x1xf32>, tensor<1xi8>) -> tensor<64x128xf32>
  return %y : tensor<64x128xf32>
}

// -----

// Padding becomes a tensor.pad that the convolution and the pooling read through.

// CHECK-LABEL: func.func @conv2d_pad
// CHECK-SAME:    (%{{.*}}: memref<1x32x32x16xf32>, %{{.*}}: memref<8x3x3x16xf32>, %{{.*}}: memref<8xf32>, %{{.*}}: memref<1x32x32x8xf32>)
// CHECK:       gpu.module @conv2d_pad_kernels
// CHECK-SAME:    tensor.pad
// CHECK-SAME:    linalg.conv_2d_nhwc_fhwc
func.func @conv2d_pad(%x: tensor<1x32x32x16xf32>, %w: tensor<8x3x3x16xf32>, %b: tensor<8xf32>) -> tensor<1x32x32x8xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %0 = tosa.conv2d %x, %w, %b, %zp, %zp {acc_type = f32, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>} : (tensor<1x32x32x16xf32>, tensor<8x3x3x16xf32>, tensor<8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x32x32x8xf32>
  return %0 : tensor<1x32x32x8xf32>
}

// -----

// CHECK-LABEL: func.func @max_pool_pad
// CHECK:       gpu.module @max_pool_pad_kernels
// CHECK-SAME:    tensor.pad
// CHECK-SAME:    linalg.pooling_nhwc_max
func.func @max_pool_pad(%x: tensor<1x32x32x16xf32>) -> tensor<1x16x16x16xf32> {
  %0 = tosa.max_pool2d %x {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>, pad = array<i64: 1, 0, 1, 0>} : (tensor<1x32x32x16xf32>) -> tensor<1x16x16x16xf32>
  return %0 : tensor<1x16x16x16xf32>
}

// -----

// avg_pool2d with padding divides each window by the number of elements it covers inside the
// image.

// CHECK-LABEL: func.func @avg_pool_pad
// CHECK:       gpu.module @avg_pool_pad_kernels
// CHECK-SAME:    tensor.pad
// CHECK-SAME:    linalg.pooling_nhwc_sum
func.func @avg_pool_pad(%x: tensor<1x32x32x16xf32>) -> tensor<1x32x32x16xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %0 = tosa.avg_pool2d %x, %zp, %zp {acc_type = f32, kernel = array<i64: 3, 3>, stride = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>} : (tensor<1x32x32x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x32x32x16xf32>
  return %0 : tensor<1x32x32x16xf32>
}

// -----

// argmax: a reduction whose payload selects (index, value) pairs; the serial thread schedule.

// CHECK-LABEL: func.func @argmax
// CHECK-SAME:    (%{{.*}}: memref<64x128xf32>, %{{.*}}: memref<64xi32>)
// CHECK:       gpu.module @argmax_kernels
// CHECK-SAME:    family = reduction
func.func @argmax(%x: tensor<64x128xf32>) -> tensor<64xi32> {
  %0 = tosa.argmax %x {axis = 1 : i32} : (tensor<64x128xf32>) -> tensor<64xi32>
  return %0 : tensor<64xi32>
}

// -----

// A depthwise convolution becomes a linalg.depthwise_conv_2d_nhwc_hwcm (a reduction) and a
// reshape of its result.

// CHECK-LABEL: func.func @depthwise
// CHECK:       gpu.module @depthwise_kernels
// CHECK-SAME:    linalg.depthwise_conv_2d_nhwc_hwcm
func.func @depthwise(%x: tensor<1x16x16x8xf32>, %w: tensor<3x3x8x1xf32>, %b: tensor<8xf32>) -> tensor<1x14x14x8xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %0 = tosa.depthwise_conv2d %x, %w, %b, %zp, %zp {acc_type = f32, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>} : (tensor<1x16x16x8xf32>, tensor<3x3x8x1xf32>, tensor<8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x14x14x8xf32>
  return %0 : tensor<1x14x14x8xf32>
}

// -----

// tosa.reshape (with its shape operand) becomes tensor.collapse_shape, read through by the add.

// CHECK-LABEL: func.func @reshape_add
// CHECK-SAME:    (%{{.*}}: memref<64x128xf32>, %{{.*}}: memref<8192xf32>, %{{.*}}: memref<8192xf32>)
// CHECK:       gpu.module @reshape_add_kernels
// CHECK-SAME:    tensor.collapse_shape
// CHECK-SAME:    family = elementwise
func.func @reshape_add(%x: tensor<64x128xf32>, %y: tensor<8192xf32>) -> tensor<8192xf32> {
  %s = tosa.const_shape {values = dense<[8192]> : tensor<1xindex>} : () -> !tosa.shape<1>
  %0 = tosa.reshape %x, %s : (tensor<64x128xf32>, !tosa.shape<1>) -> tensor<8192xf32>
  %1 = tosa.add %0, %y : (tensor<8192xf32>, tensor<8192xf32>) -> tensor<8192xf32>
  return %1 : tensor<8192xf32>
}

// -----

// tosa.slice becomes tensor.extract_slice, a view too.

// CHECK-LABEL: func.func @slice_exp
// CHECK-SAME:    (%{{.*}}: memref<64x128xf32>, %{{.*}}: memref<32x128xf32>)
// CHECK:       gpu.module @slice_exp_kernels
// CHECK-SAME:    tensor.extract_slice
func.func @slice_exp(%x: tensor<64x128xf32>) -> tensor<32x128xf32> {
  %st = tosa.const_shape {values = dense<[16, 0]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %sz = tosa.const_shape {values = dense<[32, 128]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %0 = tosa.slice %x, %st, %sz : (tensor<64x128xf32>, !tosa.shape<2>, !tosa.shape<2>) -> tensor<32x128xf32>
  %1 = tosa.exp %0 : (tensor<32x128xf32>) -> tensor<32x128xf32>
  return %1 : tensor<32x128xf32>
}

// -----

// A quantized rescale (i32 to i8): tosa-to-linalg gives a generic around tosa.apply_scale, which
// tosa-to-arith (with its apply_scale patterns) expands into i64 arithmetic.

// CHECK-LABEL: func.func @rescale
// CHECK-SAME:    (%{{.*}}: memref<64xi32>, %{{.*}}: memref<64xi8>)
// CHECK:       gpu.module @rescale_kernels
// CHECK-SAME:    family = elementwise
func.func @rescale(%x: tensor<64xi32>) -> tensor<64xi8> {
  %m = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
  %s = "tosa.const"() <{values = dense<30> : tensor<1xi8>}> : () -> tensor<1xi8>
  %izp = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %ozp = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %0 = tosa.rescale %x, %m, %s, %izp, %ozp {scale32 = true, rounding_mode = SINGLE_ROUND, per_channel = false, input_unsigned = false, output_unsigned = false} : (tensor<64xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<64xi8>
  return %0 : tensor<64xi8>
}

// -----

// A concatenation becomes tensor.insert_slice into an empty tensor, which the lowering does not
// take.

func.func @concat_add(%x: tensor<64x128xf32>, %y: tensor<128x128xf32>) -> tensor<128x128xf32> {
  // expected-error @+1 {{'tensor.insert_slice' is not supported by evo-lower-to-gpu}}
  %0 = tosa.concat %x, %x {axis = 0 : i32} : (tensor<64x128xf32>, tensor<64x128xf32>) -> tensor<128x128xf32>
  %1 = tosa.add %0, %y : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  return %1 : tensor<128x128xf32>
}

// -----

// An op upstream's conversions do not take is an error at the op, with a note saying where the
// conversion came from. (cond_if and while_loop convert to scf.if/scf.while, which the lowering
// then refuses.)

func.func @custom(%a: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @+2 {{failed to legalize operation 'tosa.custom'}}
  // expected-note @+1 {{evo-lower-to-gpu converts TOSA to linalg with upstream's passes (tosa-to-scf, --tosa-to-linalg-pipeline, tosa-to-tensor, tosa-to-arith): they do not take this op}}
  %0 = tosa.custom %a {operator_name = "foo", domain_name = "bar", implementation_attrs = ""} : (tensor<64xf32>) -> tensor<64xf32>
  return %0 : tensor<64xf32>
}

// -----

// tosa.gather converts to a generic whose payload reads the values with tensor.extract: a gather
// (docs/lowering.md "Gathers"), its index clamped into the table.

// CHECK-LABEL: func.func @gather(
// CHECK:       gpu.func @gather_k0
// CHECK:         arith.minsi %{{.*}}, %c15
// CHECK:         memref.load
func.func @gather(%v: tensor<1x16x8xf32>, %i: tensor<1x4xi32>) -> tensor<1x4x8xf32> {
  %0 = tosa.gather %v, %i : (tensor<1x16x8xf32>, tensor<1x4xi32>) -> tensor<1x4x8xf32>
  return %0 : tensor<1x4x8xf32>
}

// -----

// Dynamic shapes convert, and are refused by the lowering as any dynamic shape is.

// expected-error @+1 {{evo-lower-to-gpu needs static shapes, got 'tensor<?x64xf32>'}}
func.func @dynamic(%a: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %0 = tosa.exp %a : (tensor<?x64xf32>) -> tensor<?x64xf32>
  return %0 : tensor<?x64xf32>
}
