// The Hopper tensor-core schedule of evo-lower-to-gpu (wgmma=1): a warp-specialized kernel whose
// producer streams A and B with TMA through tensor maps in the plan, and whose consumer
// warpgroups multiply them with wgmma (lib/Conversion/EmitWgmma.cpp).

// RUN: evo-opt %s -split-input-file -verify-diagnostics -evo-lower-to-gpu="tile-sizes=128,128,64 wgmma=1 stages=4" | FileCheck %s
// RUN: rm -rf %t && mkdir -p %t
// RUN: %if ptxas %{ evo-opt %s -split-input-file -evo-lower-to-gpu="tile-sizes=128,128,64 wgmma=1 stages=4" -evo-emit-ptx="output-dir=%t chip=sm_90a" -o /dev/null 2>/dev/null; FileCheck %s --input-file=%t/matmul_f16.ptx --check-prefix=PTX %}
// RUN: %if ptxas %{ FileCheck %s --input-file=%t/bmm_nt_bf16.ptx --check-prefix=PTX-NT %}
// RUN: %if ptxas %{ FileCheck %s --input-file=%t/conv_fhwc.ptx --check-prefix=PTX-CONV %}
// The schedule needs the `a` target: other chips are refused with the op that needs it.
// RUN: evo-opt %s -split-input-file -evo-lower-to-gpu="tile-sizes=128,128,64 wgmma=1 stages=4" 2>/dev/null | not evo-opt -split-input-file -evo-emit-ptx="output-dir=%t/sm90 chip=sm_90 ptxas=none" 2>&1 | FileCheck %s --check-prefix=CHIP
// CHIP: error: evo-emit-ptx: kernel 'matmul_f16_k0' cannot run on sm_90: 'nvvm.wgmma.fence.aligned' needs sm_90a

// f16 operands, B[k][n] (N contiguous: wgmma transposes it), f16 result.

// CHECK-LABEL: func.func @matmul_f16
// CHECK:       gpu.module @matmul_f16_kernels attributes {evo.plan = #evo.plan<
// CHECK-SAME:    #evo.buffer<name = "tmap1", role = tensor_map, type = memref<128xi8>, tensor_map = <source = 0, dims = [512, 256], strides = [1024], box = [64, 128], swizzle = 128>>
// CHECK-SAME:    #evo.buffer<name = "tmap2", role = tensor_map, type = memref<128xi8>, tensor_map = <source = 1, dims = [384, 512], strides = [768], box = [64, 64], swizzle = 128>>
// CHECK-SAME:    knobs = <tile_sizes = [128, 128, 64], wgmma = true, stages = 4>
// CHECK-SAME:    launches = [#evo.launch<kernel = "matmul_f16_k0", task = 0, grid = [3, 2, 1], block = [384, 1, 1], dynamic_shared_memory = 132160, args = [0, 1, 2, 3, 4]>]
// CHECK:         gpu.func @matmul_f16_k0(%{{.*}}: memref<256x512xf16>, %{{.*}}: memref<512x384xf16>, %{{.*}}: memref<256x384xf16>, %{{.*}}: memref<128xi8>, %{{.*}}: memref<128xi8>) kernel
// CHECK:           gpu.dynamic_shared_memory
// CHECK-COUNT-8:   nvvm.mbarrier.init
// CHECK:           nvvm.mbarrier.try_wait.parity
// CHECK:           nvvm.mbarrier.arrive.expect_tx
// CHECK-COUNT-3:   nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}} box[
// CHECK:           nvvm.mbarrier.try_wait.parity
// CHECK:           nvvm.wgmma.fence.aligned
// CHECK-COUNT-4:   nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <row>]
// CHECK:           nvvm.wgmma.commit.group.sync.aligned
// CHECK:           nvvm.wgmma.wait.group.sync.aligned 1
// CHECK:           nvvm.mbarrier.arrive
// CHECK:           nvvm.wgmma.wait.group.sync.aligned 0
// CHECK:           vector.store {{.*}} {alignment = 4 : i64} : memref<256x384xf16>, vector<2xf16>
// PTX: .target sm_90a
// PTX: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
func.func @matmul_f16(%a: tensor<256x512xf16>, %b: tensor<512x384xf16>) -> tensor<256x384xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<256x384xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%e : tensor<256x384xf16>) -> tensor<256x384xf16>
  %c = linalg.matmul ins(%a, %b : tensor<256x512xf16>, tensor<512x384xf16>) outs(%acc : tensor<256x384xf16>) -> tensor<256x384xf16>
  return %c : tensor<256x384xf16>
}

// -----

// bf16, batched, B[batch][n][k] (K contiguous, as in x @ W^T): 3-d tensor maps, B not
// transposed by wgmma, f32 result; odd M and N (TMA fills the edges with zeros, stores are
// guarded).

// CHECK-LABEL: func.func @bmm_nt_bf16
// CHECK:       gpu.module @bmm_nt_bf16_kernels
// CHECK-SAME:    tensor_map = <source = 0, dims = [512, 250, 2], strides = [1024, 256000], box = [64, 128, 1], swizzle = 128>
// CHECK-SAME:    tensor_map = <source = 1, dims = [512, 300, 2], strides = [1024, 307200], box = [64, 128, 1], swizzle = 128>
// CHECK-SAME:    grid = [3, 2, 2], block = [384, 1, 1]
// CHECK:         gpu.func @bmm_nt_bf16_k0
// CHECK:           nvvm.wgmma.mma_async {{.*}} A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK:           scf.if
// CHECK:             vector.store {{.*}} : memref<2x250x300xf32>, vector<2xf32>
// PTX-NT: cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX-NT: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
func.func @bmm_nt_bf16(%a: tensor<2x250x512xbf16>, %b: tensor<2x300x512xbf16>) -> tensor<2x250x300xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x250x300xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x250x300xf32>) -> tensor<2x250x300xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%a, %b : tensor<2x250x512xbf16>, tensor<2x300x512xbf16>) outs(%acc : tensor<2x250x300xf32>) {
  ^bb0(%x: bf16, %y: bf16, %o: f32):
    %xe = arith.extf %x : bf16 to f32
    %ye = arith.extf %y : bf16 to f32
    %p = arith.mulf %xe, %ye : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x250x300xf32>
  return %c : tensor<2x250x300xf32>
}

// -----

// A convolution as an implicit GEMM: NHWC image, FHWC filter (K-major B), output rows 28 and
// columns 18 (pixel rectangles of 16 x 8 here, the edges guarded). The image's map is 4-d (a box
// of 64 channels x 8 columns x 16 rows of one image per filter tap), the filter's 3-d (taps as
// one dimension); 2 images x 2 x 3 rectangles = 12 M tiles.

// CHECK-LABEL: func.func @conv_fhwc
// CHECK:       gpu.module @conv_fhwc_kernels
// CHECK-SAME:    tensor_map = <source = 0, dims = [64, 20, 30, 2], strides = [128, 2560, 76800], box = [64, 8, 16, 1], swizzle = 128>
// CHECK-SAME:    tensor_map = <source = 1, dims = [64, 9, 96], strides = [128, 1152], box = [64, 1, 128], swizzle = 128>
// CHECK-SAME:    grid = [1, 12, 1], block = [384, 1, 1]
// CHECK:         gpu.func @conv_fhwc_k0
// CHECK:           nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}} box[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}]
// CHECK:           nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}} box[%{{.*}}, %{{.*}}, %{{.*}}] :
// CHECK-COUNT-4:   nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>]
// CHECK:           scf.if
// CHECK:             vector.store {{.*}} : memref<2x28x18x96xf16>, vector<2xf16>
// PTX-CONV-DAG: cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX-CONV-DAG: cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX-CONV-DAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
func.func @conv_fhwc(%x: tensor<2x30x20x64xf16>, %w: tensor<96x3x3x64xf16>) -> tensor<2x28x18x96xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<2x28x18x96xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%e : tensor<2x28x18x96xf16>) -> tensor<2x28x18x96xf16>
  %r = linalg.conv_2d_nhwc_fhwc ins(%x, %w : tensor<2x30x20x64xf16>, tensor<96x3x3x64xf16>) outs(%acc : tensor<2x28x18x96xf16>) -> tensor<2x28x18x96xf16>
  return %r : tensor<2x28x18x96xf16>
}

// -----

// An HWCF filter is B[k][n] (MN-major, read transposed by wgmma): its map is [F, C, taps] with
// a box of 64 x 64 x 1 per 64 output channels.

// CHECK-LABEL: func.func @conv_hwcf
// CHECK:       gpu.module @conv_hwcf_kernels
// CHECK-SAME:    tensor_map = <source = 0, dims = [64, 34, 34, 1], strides = [128, 4352, 147968], box = [64, 32, 4, 1], swizzle = 128>
// CHECK-SAME:    tensor_map = <source = 1, dims = [128, 64, 9], strides = [256, 16384], box = [64, 64, 1], swizzle = 128>
// CHECK:           nvvm.wgmma.mma_async {{.*}} A[<bf16>, <one>, <row>], B[<bf16>, <one>, <row>]
func.func @conv_hwcf(%x: tensor<1x34x34x64xbf16>, %w: tensor<3x3x64x128xbf16>) -> tensor<1x32x32x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x32x32x128xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x32x32x128xf32>) -> tensor<1x32x32x128xf32>
  %r = linalg.conv_2d_nhwc_hwcf ins(%x, %w : tensor<1x34x34x64xbf16>, tensor<3x3x64x128xbf16>) outs(%acc : tensor<1x32x32x128xf32>) -> tensor<1x32x32x128xf32>
  return %r : tensor<1x32x32x128xf32>
}

// -----

// A persistent grid (persistent=4): min(4, tiles) blocks, each looping over tiles bx, bx + 4, ...
// (2 x 3 tiles per batch, 2 batches: 12 tiles); the producer and the consumers walk the same
// tiles, and the consumers release the last K tile's buffer after each one.

// CHECK-LABEL: func.func @bmm_persistent
// CHECK:       gpu.module @bmm_persistent_kernels
// CHECK-SAME:    knobs = <tile_sizes = [128, 128, 64], wgmma = true, stages = 4, persistent = 4>
// CHECK-SAME:    grid = [4, 1, 1], block = [384, 1, 1]
// CHECK:         gpu.func @bmm_persistent_k0
// CHECK:           gpu.block_id x
// CHECK:           scf.for %{{.*}} = %{{.*}} to %c12 step %c4
// CHECK:             nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK:           scf.for %{{.*}} = %{{.*}} to %c12 step %c4
// CHECK:             nvvm.wgmma.mma_async
// CHECK:             nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NEXT:        arith.addi
func.func @bmm_persistent(%a: tensor<2x256x512xf16>, %b: tensor<2x512x384xf16>) -> tensor<2x256x384xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x256x384xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x256x384xf32>) -> tensor<2x256x384xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, k, n)>, affine_map<(b, m, n, k) -> (b, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%a, %b : tensor<2x256x512xf16>, tensor<2x512x384xf16>) outs(%acc : tensor<2x256x384xf32>) attrs = {evo.knobs = {persistent = 4}} {
  ^bb0(%x: f16, %y: f16, %o: f32):
    %xe = arith.extf %x : f16 to f32
    %ye = arith.extf %y : f16 to f32
    %p = arith.mulf %xe, %ye : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x256x384xf32>
  return %c : tensor<2x256x384xf32>
}
