// REQUIRES: cuda
// RUN: evo-opt %s -gpu-lower-to-nvvm-pipeline="cubin-chip=sm_90 cubin-features=+ptx80 cubin-format=isa" \
// RUN: | %mlir_runner --shared-libs=%evo_cuda_runtime --shared-libs=%evo_runner_utils \
// RUN:     --entry-point-result=void 2>&1 \
// RUN: | FileCheck %s --implicit-check-not=evo_cuda_runtime

// Device memory on async tokens: gpu.alloc / gpu.memcpy (both directions) / gpu.memset (32 and
// 16 bit) / gpu.dealloc on two streams joined by events (gpu.wait async [a, b]), then managed
// memory (gpu.alloc host_shared) that the host writes and reads directly.

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %minus1 = arith.constant -1.0 : f32
  %fill = arith.constant 2.5 : f32
  %seven = arith.constant 7 : i16

  // h[i] = i.
  %h = memref.alloc() : memref<16xf32>
  %out = memref.alloc() : memref<16xf32>
  scf.for %i = %c0 to %c16 step %c1 {
    %ii = arith.index_cast %i : index to i32
    %f = arith.sitofp %ii : i32 to f32
    memref.store %f, %h[%i] : memref<16xf32>
    memref.store %minus1, %out[%i] : memref<16xf32>
  }
  %out16 = memref.alloc() : memref<8xi16>

  // Stream A uploads h; stream B fills e with 2.5 and s with 7.
  %a0 = gpu.wait async
  %d, %a1 = gpu.alloc async [%a0] () : memref<16xf32>
  %a2 = gpu.memcpy async [%a1] %d, %h : memref<16xf32>, memref<16xf32>
  %b0 = gpu.wait async
  %e, %b1 = gpu.alloc async [%b0] () : memref<16xf32>
  %b2 = gpu.memset async [%b1] %e, %fill : memref<16xf32>, f32
  %s, %b3 = gpu.alloc async [%b2] () : memref<8xi16>
  %b4 = gpu.memset async [%b3] %s, %seven : memref<8xi16>, i16

  // Once both are done: d[i] = 3 * d[i] + e[i], s[i] = s[i] + i.
  %j0 = gpu.wait async [%a2, %b4]
  %j1 = gpu.launch async [%j0] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
                               threads(%tx, %ty, %tz) in (%sx = %c16, %sy = %c1, %sz = %c1) {
    %three = arith.constant 3.0 : f32
    %dv = memref.load %d[%tx] : memref<16xf32>
    %ev = memref.load %e[%tx] : memref<16xf32>
    %m = arith.mulf %dv, %three : f32
    %r = arith.addf %m, %ev : f32
    memref.store %r, %d[%tx] : memref<16xf32>
    %eight = arith.constant 8 : index
    %in16 = arith.cmpi ult, %tx, %eight : index
    scf.if %in16 {
      %sv = memref.load %s[%tx] : memref<8xi16>
      %ti = arith.index_cast %tx : index to i16
      %sum = arith.addi %sv, %ti : i16
      memref.store %sum, %s[%tx] : memref<8xi16>
    }
    gpu.terminator
  }
  %j2 = gpu.memcpy async [%j1] %out, %d : memref<16xf32>, memref<16xf32>
  %j3 = gpu.memcpy async [%j2] %out16, %s : memref<8xi16>, memref<8xi16>
  %j4 = gpu.dealloc async [%j3] %d : memref<16xf32>
  %j5 = gpu.dealloc async [%j4] %e : memref<16xf32>
  %j6 = gpu.dealloc async [%j5] %s : memref<8xi16>
  gpu.wait [%j6]

  %vo = vector.load %out[%c0] : memref<16xf32>, vector<16xf32>
  // CHECK: ( 2.5, 5.5, 8.5, 11.5, 14.5, 17.5, 20.5, 23.5, 26.5, 29.5, 32.5, 35.5, 38.5, 41.5, 44.5, 47.5 )
  vector.print %vo : vector<16xf32>
  %vs = vector.load %out16[%c0] : memref<8xi16>, vector<8xi16>
  // CHECK-NEXT: ( 7, 8, 9, 10, 11, 12, 13, 14 )
  vector.print %vs : vector<8xi16>

  // Managed memory: the host writes m[i] = i + 0.5, the GPU doubles it, the host reads it back.
  %managed = gpu.alloc host_shared () : memref<4xf32>
  %half = arith.constant 0.5 : f32
  scf.for %i = %c0 to %c4 step %c1 {
    %ii = arith.index_cast %i : index to i32
    %f = arith.sitofp %ii : i32 to f32
    %v = arith.addf %f, %half : f32
    memref.store %v, %managed[%i] : memref<4xf32>
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
    %v = memref.load %managed[%tx] : memref<4xf32>
    %r = arith.addf %v, %v : f32
    memref.store %r, %managed[%tx] : memref<4xf32>
    gpu.terminator
  }
  %vm = vector.load %managed[%c0] : memref<4xf32>, vector<4xf32>
  // CHECK-NEXT: ( 1, 3, 5, 7 )
  vector.print %vm : vector<4xf32>
  %f0 = gpu.wait async
  %f1 = gpu.dealloc async [%f0] %managed : memref<4xf32>
  gpu.wait [%f1]

  memref.dealloc %h : memref<16xf32>
  memref.dealloc %out : memref<16xf32>
  memref.dealloc %out16 : memref<8xi16>
  return
}
