// Fused epilogues (evo-lower-to-gpu): elementwise ops on a contraction's result, where the result
// has no other use and each op reads it at the output point, are one task and one kernel with
// the contraction; the kernel applies them to each output element before its store, and no
// scratch buffer holds the contraction's result. The naive schedule runs the epilogue in the
// declared types (exactly the unfused ops), the tiled and wgmma schedules in f32 on the
// accumulator for f16/bf16.

// RUN: evo-opt %s -split-input-file -verify-diagnostics -evo-lower-to-gpu | FileCheck %s
// RUN: rm -rf %t && mkdir -p %t
// RUN: %if ptxas %{ evo-opt %s -split-input-file -evo-lower-to-gpu -evo-emit-ptx="output-dir=%t chip=sm_90a" -o /dev/null %}
// RUN: %if ptxas %{ FileCheck %s --input-file=%t/mm_bias_gelu_wgmma.ptx --check-prefix=PTX %}
// PTX: .target sm_90a
// PTX: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
// PTX: ex2.approx
// PTX: st.global.b32

// matmul + bias + relu, the naive schedule: one task (the matmul and one generic, the bias and
// the relu fused into it), one launch over the inputs and the result, no scratch.

// CHECK-LABEL: func.func @mm_bias_relu
// CHECK-SAME:    (%[[A:.*]]: memref<128x64xf32>, %[[B:.*]]: memref<64x96xf32>, %[[BIAS:.*]]: memref<96xf32>, %[[Y:.*]]: memref<128x96xf32>)
// CHECK-NOT:     gpu.alloc
// CHECK:         gpu.launch_func @mm_bias_relu_kernels::@mm_bias_relu_k0 {{.*}} args(%[[A]] : memref<128x64xf32>, %[[B]] : memref<64x96xf32>, %[[BIAS]] : memref<96xf32>, %[[Y]] : memref<128x96xf32>)
// CHECK-NEXT:    return
// CHECK:       gpu.module @mm_bias_relu_kernels attributes {evo.plan = #evo.plan<
// CHECK-SAME:    buffers = [#evo.buffer<name = "arg0", role = input, type = memref<128x64xf32>>, #evo.buffer<name = "arg1", role = input, type = memref<64x96xf32>>, #evo.buffer<name = "arg2", role = input, type = memref<96xf32>>, #evo.buffer<name = "result0", role = output, type = memref<128x96xf32>>]
// CHECK-SAME:    tasks = [#evo.task<name = "mm_bias_relu_t0", family = matmul, source = "func.func @mm_bias_relu_t0(%arg0: tensor<128x64xf32>, %arg1: tensor<64x96xf32>, %arg2: tensor<96xf32>) -> tensor<128x96xf32> {{.*}}linalg.matmul{{.*}}linalg.generic{{.*}}arith.maximumf{{.*}}", {{.*}}buffers = [0, 1, 2, 3]>]
// CHECK-SAME:    launches = [#evo.launch<kernel = "mm_bias_relu_k0", task = 0, grid = [48, 1, 1], block = [256, 1, 1], args = [0, 1, 2, 3]>]>}
// CHECK:         gpu.func @mm_bias_relu_k0
// CHECK-SAME:      evo.family = #evo.family<matmul>
// CHECK:           %[[COL:.*]] = arith.remui
// CHECK:           %[[ROW:.*]] = arith.divui
// CHECK:           %[[DOT:.*]] = scf.for
// CHECK:           %[[INIT:.*]] = arith.addf %[[DOT]], %{{.*}} : f32
// CHECK:           %[[BV:.*]] = memref.load %{{.*}}[%[[COL]]] : memref<96xf32>
// CHECK:           %[[S:.*]] = arith.addf %[[INIT]], %[[BV]] : f32
// CHECK:           %[[R:.*]] = arith.maximumf %[[S]], %{{.*}} : f32
// CHECK:           memref.store %[[R]], %{{.*}}[%[[ROW]], %[[COL]]] : memref<128x96xf32>
// CHECK-NEXT:      gpu.return
// CHECK-NOT:     gpu.func
func.func @mm_bias_relu(%a: tensor<128x64xf32>, %b: tensor<64x96xf32>, %bias: tensor<96xf32>) -> tensor<128x96xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x96xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<128x96xf32>) -> tensor<128x96xf32>
  %c = linalg.matmul ins(%a, %b : tensor<128x64xf32>, tensor<64x96xf32>) outs(%acc : tensor<128x96xf32>) -> tensor<128x96xf32>
  %bb = linalg.broadcast ins(%bias : tensor<96xf32>) outs(%e : tensor<128x96xf32>) dimensions = [0]
  %s = linalg.add ins(%c, %bb : tensor<128x96xf32>, tensor<128x96xf32>) outs(%e : tensor<128x96xf32>) -> tensor<128x96xf32>
  %r = linalg.max ins(%s, %acc : tensor<128x96xf32>, tensor<128x96xf32>) outs(%e : tensor<128x96xf32>) -> tensor<128x96xf32>
  return %r : tensor<128x96xf32>
}

// -----

// The same with the tiled SIMT schedule (the matmul's knobs are the task's): the bias is read
// 4 columns at a time and C written with one 128-bit store per 4 columns.

// CHECK-LABEL: func.func @mm_bias_relu_tiled
// CHECK-NOT:     gpu.alloc
// CHECK:         gpu.launch_func @mm_bias_relu_tiled_kernels::@mm_bias_relu_tiled_k0
// CHECK-NEXT:    return
// CHECK:       gpu.module @mm_bias_relu_tiled_kernels attributes {evo.plan = #evo.plan<
// CHECK-NOT:     role = scratch
// CHECK-SAME:    knobs = <vector_width = 4, tile_sizes = [64, 64, 16], thread_tile = [4, 4]>
// CHECK-SAME:    launches = [#evo.launch<kernel = "mm_bias_relu_tiled_k0", task = 0, grid = [2, 2, 1], block = [256, 1, 1], args = [0, 1, 2, 3]>]>}
// CHECK:         gpu.func @mm_bias_relu_tiled_k0(%{{.*}}: memref<128x64xf32>, %{{.*}}: memref<64x128xf32>, %[[BIAS:.*]]: memref<128xf32>, %[[Y:.*]]: memref<128x128xf32>) workgroup
// CHECK:           scf.for
// CHECK:             gpu.barrier
// CHECK:           %[[BV:.*]] = vector.load %[[BIAS]][%{{.*}}] {alignment = 16 : i64} : memref<128xf32>, vector<4xf32>
// CHECK:           vector.extract %[[BV]][0]
// CHECK:           arith.addf {{.*}} fastmath<contract> : f32
// CHECK:           arith.maximumf {{.*}} fastmath<contract> : f32
// CHECK:           vector.store %{{.*}}, %[[Y]][%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<128x128xf32>, vector<4xf32>
// CHECK-COUNT-3:   vector.store %{{.*}}, %[[Y]]
// CHECK-NOT:       vector.store
// CHECK:           gpu.return
func.func @mm_bias_relu_tiled(%a: tensor<128x64xf32>, %b: tensor<64x128xf32>, %bias: tensor<128xf32>) -> tensor<128x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x128xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<128x128xf32>) -> tensor<128x128xf32>
  %c = linalg.matmul {evo.knobs = {tile_sizes = [64, 64, 16], thread_tile = [4, 4], vector_width = 4}}
      ins(%a, %b : tensor<128x64xf32>, tensor<64x128xf32>) outs(%acc : tensor<128x128xf32>) -> tensor<128x128xf32>
  %bb = linalg.broadcast ins(%bias : tensor<128xf32>) outs(%e : tensor<128x128xf32>) dimensions = [0]
  %s = linalg.add ins(%c, %bb : tensor<128x128xf32>, tensor<128x128xf32>) outs(%e : tensor<128x128xf32>) -> tensor<128x128xf32>
  %r = linalg.max ins(%s, %acc : tensor<128x128xf32>, tensor<128x128xf32>) outs(%e : tensor<128x128xf32>) -> tensor<128x128xf32>
  return %r : tensor<128x128xf32>
}

// -----

// f16 matmul + bias + tanh-GELU on Hopper tensor cores (tile_sizes = 128,128,64, wgmma): after
// the last wgmma group, each accumulator pair gets the bias (read as f16 pairs, extended) and the
// GELU in f32, then one rounding to f16 and a paired store. One task, one launch, no scratch (the host allocates
// only the two tensor maps).

// CHECK-LABEL: func.func @mm_bias_gelu_wgmma
// CHECK-NOT:     gpu.alloc {{.*}} memref<256x384xf16>
// CHECK:         gpu.launch_func @mm_bias_gelu_wgmma_kernels::@mm_bias_gelu_wgmma_k0
// CHECK-NOT:     gpu.launch_func
// CHECK:       gpu.module @mm_bias_gelu_wgmma_kernels attributes {evo.plan = #evo.plan<
// CHECK-NOT:     role = scratch
// CHECK-SAME:    tasks = [#evo.task<name = "mm_bias_gelu_wgmma_t0", family = matmul, {{.*}}knobs = <tile_sizes = [128, 128, 64], wgmma = true, stages = 4>, buffers = [0, 1, 2, 3, 4, 5]>]
// CHECK-SAME:    launches = [#evo.launch<kernel = "mm_bias_gelu_wgmma_k0", task = 0, grid = [3, 2, 1], block = [384, 1, 1], dynamic_shared_memory = {{[0-9]+}}, args = [0, 1, 2, 3, 4, 5]>]>}
// CHECK:         gpu.func @mm_bias_gelu_wgmma_k0(%{{.*}}: memref<256x512xf16>, %{{.*}}: memref<512x384xf16>, %[[BIAS:.*]]: memref<384xf16>, %[[Y:.*]]: memref<256x384xf16>, %{{.*}}: memref<128xi8>, %{{.*}}: memref<128xi8>) kernel
// CHECK:           nvvm.wgmma.mma_async
// CHECK:           nvvm.wgmma.wait.group.sync.aligned 0
// CHECK:           %[[BV:.*]] = vector.load %[[BIAS]][%{{.*}}] {alignment = 4 : i64} : memref<384xf16>, vector<2xf16>
// CHECK:           %[[B0:.*]] = vector.extract %[[BV]][0] : f16 from vector<2xf16>
// CHECK:           %[[B0W:.*]] = arith.extf %[[B0]] : f16 to f32
// CHECK:           %[[X:.*]] = arith.addf %{{.*}}, %[[B0W]] : f32
// CHECK:           math.tanh %{{.*}} : f32
// CHECK-NOT:       {{arith.(add|mul)f|math.tanh}} {{.*}} : f16
// CHECK:           arith.truncf %{{.*}} : f32 to f16
// CHECK:           arith.truncf %{{.*}} : f32 to f16
// CHECK:           vector.store %{{.*}}, %[[Y]][%{{.*}}, %{{.*}}] {alignment = 4 : i64} : memref<256x384xf16>, vector<2xf16>
func.func @mm_bias_gelu_wgmma(%a: tensor<256x512xf16>, %b: tensor<512x384xf16>, %bias: tensor<384xf16>) -> tensor<256x384xf16> {
  %zero = arith.constant 0.0 : f16
  %half = arith.constant dense<0.5> : tensor<256x384xf16>
  %one = arith.constant dense<1.0> : tensor<256x384xf16>
  %k0 = arith.constant dense<0.7978845608> : tensor<256x384xf16>
  %k1 = arith.constant dense<0.044715> : tensor<256x384xf16>
  %e = tensor.empty() : tensor<256x384xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%e : tensor<256x384xf16>) -> tensor<256x384xf16>
  %c = linalg.matmul {evo.knobs = {tile_sizes = [128, 128, 64], wgmma = true}}
      ins(%a, %b : tensor<256x512xf16>, tensor<512x384xf16>) outs(%acc : tensor<256x384xf16>) -> tensor<256x384xf16>
  %bb = linalg.broadcast ins(%bias : tensor<384xf16>) outs(%e : tensor<256x384xf16>) dimensions = [0]
  %x = arith.addf %c, %bb : tensor<256x384xf16>
  %x2 = arith.mulf %x, %x : tensor<256x384xf16>
  %x3 = arith.mulf %x2, %x : tensor<256x384xf16>
  %t0 = arith.mulf %x3, %k1 : tensor<256x384xf16>
  %t1 = arith.addf %x, %t0 : tensor<256x384xf16>
  %t2 = arith.mulf %t1, %k0 : tensor<256x384xf16>
  %t3 = math.tanh %t2 : tensor<256x384xf16>
  %t4 = arith.addf %t3, %one : tensor<256x384xf16>
  %h = arith.mulf %x, %half : tensor<256x384xf16>
  %y = arith.mulf %h, %t4 : tensor<256x384xf16>
  return %y : tensor<256x384xf16>
}

// -----

// The same f16 chain with the naive schedule (the baseline every variant is checked against):
// the dot product is rounded to f16, the matmul's result type, and the bias and the GELU run in
// f16, exactly as the unfused ops would.

// CHECK-LABEL: func.func @mm_bias_gelu_naive_f16
// CHECK:         gpu.func @mm_bias_gelu_naive_f16_k0
// CHECK:           %[[DOT:.*]] = scf.for {{.*}} -> (f32)
// CHECK:           %[[C:.*]] = arith.truncf %{{.*}} : f32 to f16
// CHECK:           %[[BV:.*]] = memref.load %{{.*}} : memref<384xf16>
// CHECK:           arith.addf %[[C]], %[[BV]] : f16
// CHECK:           math.tanh %{{.*}} : f16
// CHECK:           memref.store %{{.*}} : memref<256x384xf16>
func.func @mm_bias_gelu_naive_f16(%a: tensor<256x512xf16>, %b: tensor<512x384xf16>, %bias: tensor<384xf16>) -> tensor<256x384xf16> {
  %zero = arith.constant 0.0 : f16
  %half = arith.constant dense<0.5> : tensor<256x384xf16>
  %one = arith.constant dense<1.0> : tensor<256x384xf16>
  %k0 = arith.constant dense<0.7978845608> : tensor<256x384xf16>
  %e = tensor.empty() : tensor<256x384xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%e : tensor<256x384xf16>) -> tensor<256x384xf16>
  %c = linalg.matmul ins(%a, %b : tensor<256x512xf16>, tensor<512x384xf16>) outs(%acc : tensor<256x384xf16>) -> tensor<256x384xf16>
  %bb = linalg.broadcast ins(%bias : tensor<384xf16>) outs(%e : tensor<256x384xf16>) dimensions = [0]
  %x = arith.addf %c, %bb : tensor<256x384xf16>
  %t2 = arith.mulf %x, %k0 : tensor<256x384xf16>
  %t3 = math.tanh %t2 : tensor<256x384xf16>
  %t4 = arith.addf %t3, %one : tensor<256x384xf16>
  %h = arith.mulf %x, %half : tensor<256x384xf16>
  %y = arith.mulf %h, %t4 : tensor<256x384xf16>
  return %y : tensor<256x384xf16>
}

// -----

// bias + erf-GELU + cast: f16 operands accumulated into an f32 result, the GELU in f32, the task's
// result (and the only stored buffer) f16. Tiled: the cast is the store's.

// CHECK-LABEL: func.func @mm_bias_gelu_erf_cast
// CHECK-SAME:    %{{.*}}: memref<64x128xf16>)
// CHECK:       gpu.module @mm_bias_gelu_erf_cast_kernels attributes {evo.plan = #evo.plan<
// CHECK-SAME:    buffers = [#evo.buffer<name = "arg0", role = input, type = memref<64x32xf16>>, #evo.buffer<name = "arg1", role = input, type = memref<32x128xf16>>, #evo.buffer<name = "arg2", role = input, type = memref<128xf32>>, #evo.buffer<name = "result0", role = output, type = memref<64x128xf16>>]
// CHECK-SAME:    source = "func.func @mm_bias_gelu_erf_cast_t0(%arg0: tensor<64x32xf16>, %arg1: tensor<32x128xf16>, %arg2: tensor<128xf32>) -> tensor<64x128xf16>
// CHECK-SAME:    launches = [#evo.launch<kernel = "mm_bias_gelu_erf_cast_k0", task = 0, {{.*}}args = [0, 1, 2, 3]>]>}
// CHECK:         gpu.func @mm_bias_gelu_erf_cast_k0
// CHECK:           scf.for
// CHECK:           math.erf %{{.*}} : f32
// CHECK:           %[[H:.*]] = arith.truncf %{{.*}} : f32 to f16
// CHECK:           memref.store %[[H]], %{{.*}} : memref<64x128xf16>
func.func @mm_bias_gelu_erf_cast(%a: tensor<64x32xf16>, %b: tensor<32x128xf16>, %bias: tensor<128xf32>) -> tensor<64x128xf16> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x128xf32>
  %e16 = tensor.empty() : tensor<64x128xf16>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  %c = linalg.matmul {evo.knobs = {tile_sizes = [32, 32, 8], thread_tile = [2, 2]}}
      ins(%a, %b : tensor<64x32xf16>, tensor<32x128xf16>) outs(%acc : tensor<64x128xf32>) -> tensor<64x128xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%c, %bias : tensor<64x128xf32>, tensor<128xf32>) outs(%e16 : tensor<64x128xf16>) {
  ^bb0(%v: f32, %bv: f32, %o: f16):
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %rsqrt2 = arith.constant 0.70710678118654752 : f32
    %x = arith.addf %v, %bv : f32
    %s = arith.mulf %x, %rsqrt2 : f32
    %erf = math.erf %s : f32
    %t = arith.addf %one, %erf : f32
    %hx = arith.mulf %x, %half : f32
    %g = arith.mulf %hx, %t : f32
    %r = arith.truncf %g : f32 to f16
    linalg.yield %r : f16
  } -> tensor<64x128xf16>
  return %y : tensor<64x128xf16>
}

// -----

// A batched matmul with a residual [B, M, N] and a scale: the residual is read at the output
// point (batch, row, column) of each element.

// CHECK-LABEL: func.func @bmm_residual_scale
// CHECK:         gpu.launch_func @bmm_residual_scale_kernels::@bmm_residual_scale_k0 blocks in (%{{.*}}, %{{.*}}, %c2)
// CHECK-NEXT:    return
// CHECK:         gpu.func @bmm_residual_scale_k0(%{{.*}}: memref<2x64x32xf32>, %{{.*}}: memref<2x32x64xf32>, %[[RES:.*]]: memref<2x64x64xf32>, %[[Y:.*]]: memref<2x64x64xf32>)
// CHECK:           %[[BZ:.*]] = gpu.block_id  z
// CHECK:           memref.load %[[RES]][%[[BZ]], %[[M:.*]], %[[N:.*]]] : memref<2x64x64xf32>
// CHECK:           arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK:           memref.store %{{.*}}, %[[Y]][%[[BZ]], %[[M]], %[[N]]] : memref<2x64x64xf32>
func.func @bmm_residual_scale(%a: tensor<2x64x32xf32>, %b: tensor<2x32x64xf32>, %res: tensor<2x64x64xf32>) -> tensor<2x64x64xf32> {
  %zero = arith.constant 0.0 : f32
  %scale = arith.constant dense<0.125> : tensor<2x64x64xf32>
  %e = tensor.empty() : tensor<2x64x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x64x64xf32>) -> tensor<2x64x64xf32>
  %c = linalg.batch_matmul {evo.knobs = {tile_sizes = [32, 32, 8], thread_tile = [2, 2]}}
      ins(%a, %b : tensor<2x64x32xf32>, tensor<2x32x64xf32>) outs(%acc : tensor<2x64x64xf32>) -> tensor<2x64x64xf32>
  %s = arith.addf %c, %res : tensor<2x64x64xf32>
  %y = arith.mulf %s, %scale : tensor<2x64x64xf32>
  return %y : tensor<2x64x64xf32>
}

// -----

// A convolution (an implicit GEMM) + per-channel bias + relu: one task of the matmul family.

// CHECK-LABEL: func.func @conv_bias_relu
// CHECK:         gpu.launch_func @conv_bias_relu_kernels::@conv_bias_relu_k0
// CHECK-NEXT:    return
// CHECK:         gpu.func @conv_bias_relu_k0(%{{.*}}: memref<1x4x10x10xf32>, %{{.*}}: memref<8x4x3x3xf32>, %[[BIAS:.*]]: memref<8xf32>, %{{.*}}: memref<1x8x8x8xf32>)
// CHECK-SAME:      evo.family = #evo.family<matmul>
// CHECK:           memref.load %[[BIAS]]
// CHECK:           arith.maximumf
func.func @conv_bias_relu(%x: tensor<1x4x10x10xf32>, %w: tensor<8x4x3x3xf32>, %bias: tensor<8xf32>) -> tensor<1x8x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x8x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  %c = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x4x10x10xf32>, tensor<8x4x3x3xf32>) outs(%acc : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  %bb = linalg.broadcast ins(%bias : tensor<8xf32>) outs(%e : tensor<1x8x8x8xf32>) dimensions = [0, 2, 3]
  %s = linalg.add ins(%c, %bb : tensor<1x8x8x8xf32>, tensor<1x8x8x8xf32>) outs(%e : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  %r = linalg.max ins(%s, %acc : tensor<1x8x8x8xf32>, tensor<1x8x8x8xf32>) outs(%e : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  return %r : tensor<1x8x8x8xf32>
}

// -----

// Not fused: the matmul's result has two consumers. Three tasks; the result lives in a device
// scratch buffer that the host allocates before the launches and frees after them.

// CHECK-LABEL: func.func @mm_two_uses
// CHECK-SAME:    (%[[A:.*]]: memref<64x32xf32>, %[[B:.*]]: memref<32x64xf32>, %[[Y0:.*]]: memref<64x64xf32>, %[[Y1:.*]]: memref<64x64xf32>)
// CHECK:         %[[T0:.*]] = gpu.wait async
// CHECK:         %[[TMP:.*]], %[[T1:.*]] = gpu.alloc async [%[[T0]]] () : memref<64x64xf32>
// CHECK:         gpu.wait [%[[T1]]]
// CHECK:         gpu.launch_func @mm_two_uses_kernels::@mm_two_uses_k0 {{.*}} args(%[[A]] : memref<64x32xf32>, %[[B]] : memref<32x64xf32>, %[[TMP]] : memref<64x64xf32>)
// CHECK:         gpu.launch_func @mm_two_uses_kernels::@mm_two_uses_k1 {{.*}} args(%[[TMP]] : memref<64x64xf32>, %[[Y0]] : memref<64x64xf32>)
// CHECK:         gpu.launch_func @mm_two_uses_kernels::@mm_two_uses_k2 {{.*}} args(%[[TMP]] : memref<64x64xf32>, %[[Y1]] : memref<64x64xf32>)
// CHECK:         %[[T2:.*]] = gpu.wait async
// CHECK:         %[[T3:.*]] = gpu.dealloc async [%[[T2]]] %[[TMP]] : memref<64x64xf32>
// CHECK:         gpu.wait [%[[T3]]]
// CHECK:       gpu.module @mm_two_uses_kernels attributes {evo.plan = #evo.plan<{{.*}}#evo.buffer<name = "tmp0", role = scratch, type = memref<64x64xf32>>]
// CHECK:         gpu.func @mm_two_uses_k0
// CHECK-SAME:      evo.family = #evo.family<matmul>
// CHECK-SAME:      evo.task = 0
// CHECK:         gpu.func @mm_two_uses_k1
// CHECK-SAME:      evo.family = #evo.family<elementwise>
// CHECK-SAME:      evo.task = 1
// CHECK:         gpu.func @mm_two_uses_k2
// CHECK-SAME:      evo.family = #evo.family<elementwise>
// CHECK-SAME:      evo.task = 2
func.func @mm_two_uses(%a: tensor<64x32xf32>, %b: tensor<32x64xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %c = linalg.matmul ins(%a, %b : tensor<64x32xf32>, tensor<32x64xf32>) outs(%acc : tensor<64x64xf32>) -> tensor<64x64xf32>
  %r = linalg.max ins(%c, %acc : tensor<64x64xf32>, tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %x = linalg.exp ins(%c : tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %r, %x : tensor<64x64xf32>, tensor<64x64xf32>
}

// -----

// Not fused: the consumer reads the matmul's result transposed (not at the output point).

// CHECK-LABEL: func.func @mm_transposed_read
// CHECK:         gpu.alloc
// CHECK:         gpu.launch_func @mm_transposed_read_kernels::@mm_transposed_read_k0
// CHECK:         gpu.launch_func @mm_transposed_read_kernels::@mm_transposed_read_k1
// CHECK:         gpu.dealloc
// CHECK:       gpu.module @mm_transposed_read_kernels attributes {evo.plan = #evo.plan<{{.*}}role = scratch
func.func @mm_transposed_read(%a: tensor<64x32xf32>, %b: tensor<32x64xf32>, %bias: tensor<64xf32>) -> tensor<64x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %c = linalg.matmul ins(%a, %b : tensor<64x32xf32>, tensor<32x64xf32>) outs(%acc : tensor<64x64xf32>) -> tensor<64x64xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (j, i)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%c, %bias : tensor<64x64xf32>, tensor<64xf32>) outs(%e : tensor<64x64xf32>) {
  ^bb0(%v: f32, %bv: f32, %o: f32):
    %s = arith.addf %v, %bv : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  return %y : tensor<64x64xf32>
}

// -----

// Not fused: the consumer carries its own knobs (they would be ambiguous in a fused task).

// CHECK-LABEL: func.func @mm_relu_own_knobs
// CHECK:         gpu.alloc
// CHECK:         gpu.launch_func @mm_relu_own_knobs_kernels::@mm_relu_own_knobs_k0
// CHECK:         gpu.launch_func @mm_relu_own_knobs_kernels::@mm_relu_own_knobs_k1
// CHECK:         gpu.func @mm_relu_own_knobs_k1
// CHECK-SAME:      evo.family = #evo.family<elementwise>, evo.knobs = #evo.knobs<block_size = 128,
func.func @mm_relu_own_knobs(%a: tensor<64x32xf32>, %b: tensor<32x64xf32>) -> tensor<64x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %c = linalg.matmul ins(%a, %b : tensor<64x32xf32>, tensor<32x64xf32>) outs(%acc : tensor<64x64xf32>) -> tensor<64x64xf32>
  %r = linalg.max {evo.knobs = {block_size = 128}} ins(%c, %acc : tensor<64x64xf32>, tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}
