// f32 contractions on Hopper tensor cores, only on request (evo-lower-to-gpu f32-matmul=ieee|tf32|
// 3xtf32, or the op's evo.knobs): f32 stays f32 by default; tf32 runs the wgmma schedule with
// `.tf32` operands straight from the f32 tiles (K tile 32 = one 128-byte row of f32, wgmma k8,
// both operands K-major); 3xtf32 splits each operand in shared memory into a TF32 part and its
// remainder and issues three wgmma per K step (lib/Conversion/EmitWgmma.cpp, docs/lowering.md).
// Refusals: lower-to-gpu-f32-matmul-invalid.mlir; on the GPU: test/Evaluation/verify-f32-matmul.mlir.

// The default: no tensor cores, and no f32_matmul recorded.
// RUN: evo-opt %s -split-input-file -evo-lower-to-gpu | FileCheck %s --check-prefix=IEEE
// The naive baseline records the opt-in (evo-evolve's genomes inherit it, evo-verify reads it).
// RUN: evo-opt %s -split-input-file -evo-lower-to-gpu="f32-matmul=tf32" | FileCheck %s --check-prefix=NAIVE
// RUN: evo-opt %s -split-input-file -evo-lower-to-gpu="f32-matmul=tf32 tile-sizes=128,128,32 wgmma=1 stages=4" | FileCheck %s --check-prefix=TF32
// 3xtf32 is refused (its kernel gave wrong elements on the H200, cause not found yet).
// RUN: not evo-opt %s -split-input-file -evo-lower-to-gpu="f32-matmul=3xtf32 tile-sizes=128,128,32 wgmma=1 stages=3" 2>&1 | FileCheck %s --check-prefix=X3
// ptxas accepts tf32 for sm_90a.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %if ptxas %{ evo-opt %s -split-input-file -evo-lower-to-gpu="f32-matmul=tf32 tile-sizes=128,128,32 wgmma=1 stages=4" -evo-emit-ptx="output-dir=%t/tf32 chip=sm_90a" -o /dev/null %}
// RUN: %if ptxas %{ FileCheck %s --input-file=%t/tf32/linear_f32.ptx --check-prefix=PTX-TF32 %}
// RUN: %if ptxas %{ FileCheck %s --input-file=%t/tf32/bmm_nt_f32.ptx --check-prefix=PTX-BMM %}
// RUN: %if ptxas %{ FileCheck %s --input-file=%t/tf32/conv_fhwc_f32.ptx --check-prefix=PTX-CONV %}
// wgmma needs the `a` target: other chips are refused with the op that needs it.
// RUN: evo-opt %s -split-input-file -evo-lower-to-gpu="f32-matmul=tf32 tile-sizes=128,128,32 wgmma=1 stages=4" 2>/dev/null | not evo-opt -split-input-file -evo-emit-ptx="output-dir=%t/sm90 chip=sm_90 ptxas=none" 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: evo-opt %s -split-input-file -evo-lower-to-gpu="f32-matmul=tf32 tile-sizes=128,128,32 wgmma=1 stages=3" 2>/dev/null | not evo-opt -split-input-file -evo-emit-ptx="output-dir=%t/sm80 chip=sm_80 ptxas=none" 2>&1 | FileCheck %s --check-prefix=CHIP80
// CHIP: error: evo-emit-ptx: kernel 'linear_f32_k0' cannot run on sm_90: 'nvvm.wgmma.fence.aligned' needs sm_90a
// CHIP80: error: evo-emit-ptx: kernel 'linear_f32_k0' cannot run on sm_80: {{.*}} needs sm_90

// x @ W^T (W as [n][k], as nn.Linear stores it): both operands K-major, odd M and N (TMA fills
// the edges with zeros, the stores are guarded).

// IEEE-LABEL: func.func @linear_f32
// IEEE-NOT:     wgmma
// IEEE-NOT:     f32_matmul
// IEEE:         gpu.func @linear_f32_k0
// IEEE-NOT:     wgmma
// IEEE:         gpu.return

// NAIVE-LABEL: func.func @linear_f32
// NAIVE:         knobs = <block_size = 256, accumulators = 1, f32_matmul = tf32>
// NAIVE-NOT:     wgmma
// NAIVE:         gpu.return

// TF32-LABEL: func.func @linear_f32
// TF32:         tensor_map = <source = 0, dims = [256, 200], strides = [1024], box = [32, 128], swizzle = 128>
// TF32-SAME:    tensor_map = <source = 1, dims = [256, 300], strides = [1024], box = [32, 128], swizzle = 128>
// TF32-SAME:    knobs = <tile_sizes = [128, 128, 32], wgmma = true, stages = 4, f32_matmul = tf32>
// TF32-SAME:    grid = [3, 2, 1], block = [384, 1, 1], dynamic_shared_memory = 132160
// TF32:         gpu.func @linear_f32_k0
// TF32:           nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c32768_i32
// TF32-NOT:       nvvm.fence.proxy
// TF32-COUNT-4:   nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 8>, D[<f32>, <one>], A[<tf32>, <one>, <row>], B[<tf32>, <one>, <col>]
// TF32:           nvvm.wgmma.commit.group.sync.aligned

// 3xTF32 is refused at every function that would use it (the kernel gave wrong elements on the
// H200 at K = 16384, not in every run; docs/lowering.md "f32 on tensor cores").

// X3: error: f32-matmul=3xtf32 is disabled: on an H200 its kernel gave wrong elements

// PTX-TF32: .target sm_90a
// PTX-TF32: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX-TF32: wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32

func.func @linear_f32(%a: tensor<200x256xf32>, %w: tensor<300x256xf32>) -> tensor<200x300xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<200x300xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<200x300xf32>) -> tensor<200x300xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %w : tensor<200x256xf32>, tensor<300x256xf32>) outs(%acc : tensor<200x300xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<200x300xf32>
  return %c : tensor<200x300xf32>
}

// -----

// Batched, B[batch][n][k]: 3-d tensor maps of 32 x 128 x 1 f32 boxes; K = 96 is three K tiles.

// IEEE-LABEL: func.func @bmm_nt_f32
// IEEE-NOT:     wgmma
// IEEE:         gpu.return

// TF32-LABEL: func.func @bmm_nt_f32
// TF32:         tensor_map = <source = 0, dims = [96, 130, 2], strides = [384, 49920], box = [32, 128, 1], swizzle = 128>
// TF32-SAME:    tensor_map = <source = 1, dims = [96, 72, 2], strides = [384, 27648], box = [32, 128, 1], swizzle = 128>
// TF32-SAME:    grid = [1, 2, 2], block = [384, 1, 1]
// TF32:         nvvm.wgmma.mma_async {{.*}} A[<tf32>, <one>, <row>], B[<tf32>, <one>, <col>]

// PTX-BMM: cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX-BMM: wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32
func.func @bmm_nt_f32(%a: tensor<2x130x96xf32>, %b: tensor<2x72x96xf32>) -> tensor<2x130x72xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x130x72xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x130x72xf32>) -> tensor<2x130x72xf32>
  %c = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>] ins(%a, %b : tensor<2x130x96xf32>, tensor<2x72x96xf32>) outs(%acc : tensor<2x130x72xf32>) -> tensor<2x130x72xf32>
  return %c : tensor<2x130x72xf32>
}

// -----

// An implicit-GEMM convolution with an FHWC filter (K-major): 32 channels per K tile, the image
// read as 4-d boxes of 32 channels x 16 columns x 8 rows.

// IEEE-LABEL: func.func @conv_fhwc_f32
// IEEE-NOT:     wgmma
// IEEE:         gpu.return

// TF32-LABEL: func.func @conv_fhwc_f32
// TF32:         tensor_map = <source = 0, dims = [32, 18, 18, 2], strides = [128, 2304, 41472], box = [32, 16, 8, 1], swizzle = 128>
// TF32-SAME:    tensor_map = <source = 1, dims = [32, 9, 64], strides = [128, 1152], box = [32, 1, 128], swizzle = 128>
// TF32:         nvvm.wgmma.mma_async {{.*}} A[<tf32>, <one>, <row>], B[<tf32>, <one>, <col>]

// PTX-CONV: cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX-CONV: wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32
func.func @conv_fhwc_f32(%x: tensor<2x18x18x32xf32>, %w: tensor<64x3x3x32xf32>) -> tensor<2x16x16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x16x16x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x16x16x64xf32>) -> tensor<2x16x16x64xf32>
  %c = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<2x18x18x32xf32>, tensor<64x3x3x32xf32>) outs(%acc : tensor<2x16x16x64xf32>) -> tensor<2x16x16x64xf32>
  return %c : tensor<2x16x16x64xf32>
}

// -----

// f32-matmul concerns f32 operands only: an f16 matmul (f32 result) keeps its f16 wgmma and
// records no f32_matmul, so its function keeps the f32 tolerance.

// NAIVE-LABEL: func.func @matmul_f16
// NAIVE-NOT:     f32_matmul
// NAIVE:         gpu.return

// TF32-LABEL: func.func @matmul_f16
// TF32-NOT:     f32_matmul
// TF32:         knobs = <tile_sizes = [128, 128, 64], wgmma = true, stages = 4>
// TF32-NOT:     f32_matmul
// TF32:         nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <row>]
func.func @matmul_f16(%a: tensor<256x512xf16>, %b: tensor<512x384xf16>) -> tensor<256x384xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x384xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<256x384xf32>) -> tensor<256x384xf32>
  %c = linalg.matmul {evo.knobs = {tile_sizes = [128, 128, 64], wgmma = 1}} ins(%a, %b : tensor<256x512xf16>, tensor<512x384xf16>) outs(%acc : tensor<256x384xf32>) -> tensor<256x384xf32>
  return %c : tensor<256x384xf32>
}
