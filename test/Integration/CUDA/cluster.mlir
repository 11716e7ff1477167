// REQUIRES: cuda
// RUN: evo-opt %s -gpu-lower-to-nvvm-pipeline="cubin-chip=sm_90 cubin-features=+ptx80 cubin-format=isa" \
// RUN: | %mlir_runner --shared-libs=%evo_cuda_runtime --shared-libs=%evo_runner_utils \
// RUN:     --entry-point-result=void 2>&1 \
// RUN: | FileCheck %s --implicit-check-not=evo_cuda_runtime

// Thread block clusters (sm_90): gpu.launch with clusters becomes mgpuLaunchClusterKernel
// (cuLaunchKernelEx). A grid of 4 blocks in clusters of 2: each block records its cluster id, its
// rank in the cluster and the cluster size.

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  %out = gpu.alloc host_shared () : memref<4x3xi32>
  gpu.launch clusters(%cx, %cy, %cz) in (%ncx = %c2, %ncy = %c1, %ncz = %c1)
             blocks(%bx, %by, %bz) in (%gx = %c4, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %first = arith.cmpi eq, %tx, %c0 : index
    scf.if %first {
      %cid = gpu.cluster_id x
      %rank = gpu.cluster_block_id x
      %size = gpu.cluster_dim_blocks x
      %a = arith.index_cast %cid : index to i32
      %b = arith.index_cast %rank : index to i32
      %c = arith.index_cast %size : index to i32
      memref.store %a, %out[%bx, %c0] : memref<4x3xi32>
      memref.store %b, %out[%bx, %c1] : memref<4x3xi32>
      memref.store %c, %out[%bx, %c2] : memref<4x3xi32>
    }
    gpu.terminator
  }
  // CHECK:      ( 0, 0, 2 )
  // CHECK-NEXT: ( 0, 1, 2 )
  // CHECK-NEXT: ( 1, 0, 2 )
  // CHECK-NEXT: ( 1, 1, 2 )
  scf.for %b = %c0 to %c4 step %c1 {
    %row = vector.load %out[%b, %c0] : memref<4x3xi32>, vector<3xi32>
    vector.print %row : vector<3xi32>
  }
  return
}
