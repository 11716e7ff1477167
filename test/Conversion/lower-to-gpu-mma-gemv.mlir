// The few-row form of mma_sync (tile_sizes = [8 or 16, 16, BK]): y = x W^T with at most a
// tile of x's rows; 4 warps on 16 rows of W, each lane loading 16 contiguous bytes of W (streamed,
// nontemporal) and of x straight into mma.sync.m16n8k16 fragments, the warps' partial fragments
// added in shared memory. docs/lowering.md, "Few rows on tensor cores".
//
// RUN: evo-opt %s -split-input-file -verify-diagnostics -evo-lower-to-gpu="tile-sizes=8,16,128 mma-sync=1 stages=2" | FileCheck %s
// RUN: rm -rf %t && mkdir -p %t
// RUN: %if ptxas %{ evo-opt %s -split-input-file -verify-diagnostics -evo-lower-to-gpu="tile-sizes=16,16,64 mma-sync=1 stages=2" -evo-emit-ptx="output-dir=%t chip=sm_80" -o /dev/null; FileCheck %s --input-file=%t/linear_b8.ptx --check-prefix=PTX %}
// RUN: not evo-opt %s -split-input-file -evo-lower-to-gpu="tile-sizes=8,32,128 mma-sync=1 stages=2" 2>&1 | FileCheck %s --check-prefix=BN
// RUN: not evo-opt %s -split-input-file -evo-lower-to-gpu="tile-sizes=8,16,48 mma-sync=1 stages=2" 2>&1 | FileCheck %s --check-prefix=BK
// RUN: not evo-opt %s -split-input-file -evo-lower-to-gpu="tile-sizes=4,16,64 mma-sync=1 stages=2" 2>&1 | FileCheck %s --check-prefix=BM
// BN: error: mma_sync with tile_sizes=8,32,128: the tensor-core GEMV takes 16 rows of W per block (tile_sizes = [8, 16, BK])
// BK: error: mma_sync with tile_sizes=8,16,48: the tensor-core GEMV's K step per warp must be 32, 64, 128 or 256
// BM: error: mma_sync with tile_sizes=4,16,64: a few-row tile (the tensor-core GEMV) covers 8 or 16 rows of x

// CHECK-LABEL: func.func @linear_b8(
// CHECK:         gpu.launch_func @linear_b8_kernels::@linear_b8_k0 blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%{{.*}}, %{{.*}}, %{{.*}}) dynamic_shared_memory_size
// CHECK:       #evo.launch<kernel = "linear_b8_k0", task = 0, grid = [63, 1, 1], block = [128, 1, 1], dynamic_shared_memory = 2064
// CHECK:       gpu.func @linear_b8_k0
// CHECK:         scf.for
// CHECK-COUNT-2: vector.load %{{.*}} {alignment = 16 : i64, nontemporal = true} : memref<1000x520xf16>, vector<8xf16>
// CHECK:         vector.load %{{.*}} {alignment = 16 : i64} : memref<8x520xf16>, vector<8xf16>
// CHECK:         nvvm.mma.sync
// CHECK:         nvvm.mma.sync
// CHECK:         gpu.barrier
// PTX: ld.global.nc.L1::no_allocate.v4.b32
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
func.func @linear_b8(%x: tensor<8x520xf16>, %w: tensor<1000x520xf16>) -> tensor<8x1000xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<8x1000xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%e : tensor<8x1000xf16>) -> tensor<8x1000xf16>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
         ins(%x, %w : tensor<8x520xf16>, tensor<1000x520xf16>) outs(%acc : tensor<8x1000xf16>) -> tensor<8x1000xf16>
  return %y : tensor<8x1000xf16>
}

// -----

// W given [k][n] (x @ W): the few-row form needs W's rows along K.
func.func @x_at_w(%x: tensor<8x512xf16>, %w: tensor<512x1024xf16>) -> tensor<8x1024xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x1024xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8x1024xf32>) -> tensor<8x1024xf32>
  // expected-error @+1 {{the tensor-core GEMV needs W K-contiguous (y = x W^T, nn.Linear's [out, in]); W [k][n] takes the tiled tensor-core schedule (M and N tiles of 32+)}}
  %y = linalg.matmul ins(%x, %w : tensor<8x512xf16>, tensor<512x1024xf16>) outs(%acc : tensor<8x1024xf32>) -> tensor<8x1024xf32>
  return %y : tensor<8x1024xf32>
}
