// The portable tensor-core schedule of evo-lower-to-gpu (mma-sync=1): cp.async copies the K tiles
// of A and B into a ring of swizzled shared-memory buffers, ldmatrix loads the fragments and
// mma.sync.m16n8k16 multiplies them, one 64 x 64 tile per warp (lib/Conversion/EmitMmaSync.cpp).
// No tensor maps: the kernel takes the task's buffers only, and PTX for sm_80 runs on any newer
// GPU.

// RUN: evo-opt %s -split-input-file -evo-lower-to-gpu="tile-sizes=128,128,32 mma-sync=1 stages=4" | FileCheck %s
// RUN: rm -rf %t && mkdir -p %t
// RUN: %if ptxas %{ evo-opt %s -split-input-file -evo-lower-to-gpu="tile-sizes=128,128,32 mma-sync=1 stages=4" -evo-emit-ptx="output-dir=%t chip=sm_80" -o /dev/null; FileCheck %s --input-file=%t/matmul_f16.ptx --check-prefix=PTX %}
// RUN: %if ptxas %{ FileCheck %s --input-file=%t/bmm_nt_bf16.ptx --check-prefix=PTX-NT %}
// Chips older than sm_80 have no m16n8k16 f16 mma.sync nor cp.async: refused with the op.
// RUN: evo-opt %s -split-input-file -evo-lower-to-gpu="tile-sizes=128,128,32 mma-sync=1 stages=4" | not evo-opt -split-input-file -evo-emit-ptx="output-dir=%t/sm75 chip=sm_75 ptxas=none" 2>&1 | FileCheck %s --check-prefix=CHIP
// CHIP: error: evo-emit-ptx: kernel 'matmul_f16_k0' cannot run on sm_75: 'nvvm.{{.*}}' needs sm_80

// f16 operands, B[k][n] (N contiguous: ldmatrix .trans), f16 result; 2 x 2 warps of 64 x 64.
// Shared memory: 4 stages of (128 + 128) rows x 64 bytes, plus 128 bytes of alignment slack.

// CHECK-LABEL: func.func @matmul_f16
// CHECK:       gpu.module @matmul_f16_kernels attributes {evo.plan = #evo.plan<
// CHECK-SAME:    knobs = <tile_sizes = [128, 128, 32], mma_sync = true, stages = 4>
// CHECK-SAME:    launches = [#evo.launch<kernel = "matmul_f16_k0", task = 0, grid = [6, 1, 1], block = [128, 1, 1], dynamic_shared_memory = 65664, args = [0, 1, 2]>]
// CHECK:         gpu.func @matmul_f16_k0(%{{.*}}: memref<256x512xf16>, %{{.*}}: memref<512x384xf16>, %{{.*}}: memref<256x384xf16>) kernel
// CHECK:           gpu.dynamic_shared_memory
// CHECK-COUNT-3:   nvvm.cp.async.commit.group
// CHECK:           scf.for
// CHECK:             nvvm.cp.async.wait.group 2
// CHECK:             gpu.barrier
// CHECK:             scf.if
// CHECK:               nvvm.cp.async.shared.global {{.*}}, 16, cache = cg, %{{.*}}
// CHECK:             nvvm.cp.async.commit.group
// CHECK:             nvvm.ldmatrix {{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, num = 4 : i32, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>}
// CHECK:             nvvm.ldmatrix {{.*}} layout = #nvvm.mma_layout<col>
// CHECK:             nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (vector<2xf16>, vector<2xf16>, f32)
// CHECK:           nvvm.cp.async.wait.group 0
// CHECK:           vector.store {{.*}} {alignment = 4 : i64} : memref<256x384xf16>, vector<2xf16>
// PTX: .target sm_80
// PTX: cp.async.cg.shared.global [%rd{{[0-9]+}}], [%rd{{[0-9]+}}], 16, %r{{[0-9]+}};
// PTX: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
func.func @matmul_f16(%a: tensor<256x512xf16>, %b: tensor<512x384xf16>) -> tensor<256x384xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<256x384xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%e : tensor<256x384xf16>) -> tensor<256x384xf16>
  %c = linalg.matmul ins(%a, %b : tensor<256x512xf16>, tensor<512x384xf16>) outs(%acc : tensor<256x384xf16>) -> tensor<256x384xf16>
  return %c : tensor<256x384xf16>
}

// -----

// bf16 (i32 fragments), batched, B[batch][n][k] (K contiguous: ldmatrix without .trans), f32
// result; odd M and N (zero-filled copies, guarded stores): 2 x 3 x 2 blocks.

// CHECK-LABEL: func.func @bmm_nt_bf16
// CHECK:       gpu.module @bmm_nt_bf16_kernels
// CHECK-SAME:    grid = [6, 1, 2], block = [128, 1, 1]
// CHECK:         gpu.func @bmm_nt_bf16_k0
// CHECK-NOT:       mma_layout<col>, num
// CHECK:           nvvm.mma.sync {{.*}} multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>
// CHECK:           scf.if
// CHECK:             vector.store {{.*}} : memref<2x250x300xf32>, vector<2xf32>
// PTX-NT: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
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

// A bias + ReLU after the matmul runs in its epilogue: one kernel.

// CHECK-LABEL: func.func @matmul_bias_relu
// CHECK:       gpu.module @matmul_bias_relu_kernels
// CHECK-SAME:    launches = [#evo.launch<kernel = "matmul_bias_relu_k0"
// CHECK-NOT:     #evo.launch
// CHECK:           nvvm.mma.sync
// CHECK:           arith.maximumf
func.func @matmul_bias_relu(%a: tensor<256x512xf16>, %b: tensor<512x384xf16>, %bias: tensor<384xf16>) -> tensor<256x384xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<256x384xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%e : tensor<256x384xf16>) -> tensor<256x384xf16>
  %c = linalg.matmul ins(%a, %b : tensor<256x512xf16>, tensor<512x384xf16>) outs(%acc : tensor<256x384xf16>) -> tensor<256x384xf16>
  %y = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (n)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]} ins(%c, %bias : tensor<256x384xf16>, tensor<384xf16>) outs(%e : tensor<256x384xf16>) {
  ^bb0(%x: f16, %bb: f16, %o: f16):
    %s = arith.addf %x, %bb : f16
    %r = arith.maximumf %s, %zero : f16
    linalg.yield %r : f16
  } -> tensor<256x384xf16>
  return %y : tensor<256x384xf16>
}
