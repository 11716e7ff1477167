// REQUIRES: cuda
// RUN: evo-opt %s -gpu-lower-to-nvvm-pipeline="cubin-chip=sm_90 cubin-features=+ptx80 cubin-format=isa" \
// RUN: | %mlir_runner --shared-libs=%evo_cuda_runtime --shared-libs=%evo_runner_utils \
// RUN:     --entry-point-result=void 2>&1 \
// RUN: | FileCheck %s --implicit-check-not=evo_cuda_runtime

// gpu.launch reads and writes host memory in place after gpu.host_register (mgpuMemHostRegisterMemRef):
// a whole buffer, and a strided 2-D subview in the middle of another one, which is registered from
// its offset for the bytes it spans.

func.func @print_rows(%m: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %row = vector.load %m[%i, %c0] : memref<4x8xf32>, vector<8xf32>
    vector.print %row : vector<8xf32>
  }
  return
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %minus1 = arith.constant -1.0 : f32

  // x[i] = i, y = 0; on the GPU y[i] = 2 * x[i] + 1.
  %x = memref.alloc() : memref<8xf32>
  %y = memref.alloc() : memref<8xf32>
  scf.for %i = %c0 to %c8 step %c1 {
    %ii = arith.index_cast %i : index to i32
    %f = arith.sitofp %ii : i32 to f32
    memref.store %f, %x[%i] : memref<8xf32>
    memref.store %zero, %y[%i] : memref<8xf32>
  }
  %xu = memref.cast %x : memref<8xf32> to memref<*xf32>
  %yu = memref.cast %y : memref<8xf32> to memref<*xf32>
  gpu.host_register %xu : memref<*xf32>
  gpu.host_register %yu : memref<*xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c8, %sy = %c1, %sz = %c1) {
    %one = arith.constant 1.0 : f32
    %two = arith.constant 2.0 : f32
    %v = memref.load %x[%tx] : memref<8xf32>
    %m = arith.mulf %v, %two : f32
    %r = arith.addf %m, %one : f32
    memref.store %r, %y[%tx] : memref<8xf32>
    gpu.terminator
  }
  %vy = vector.load %y[%c0] : memref<8xf32>, vector<8xf32>
  // CHECK: ( 1, 3, 5, 7, 9, 11, 13, 15 )
  vector.print %vy : vector<8xf32>
  gpu.host_unregister %xu : memref<*xf32>
  gpu.host_unregister %yu : memref<*xf32>

  // m = -1 everywhere; the GPU writes sub[i][j] = 10 * i + j into rows 1-2, columns 2-5.
  %m = memref.alloc() : memref<4x8xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c8 step %c1 {
      memref.store %minus1, %m[%i, %j] : memref<4x8xf32>
    }
  }
  %sub = memref.subview %m[1, 2] [2, 4] [1, 1]
      : memref<4x8xf32> to memref<2x4xf32, strided<[8, 1], offset: 10>>
  %subu = memref.cast %sub : memref<2x4xf32, strided<[8, 1], offset: 10>> to memref<*xf32>
  gpu.host_register %subu : memref<*xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c2, %sz = %c1) {
    %ten = arith.constant 10 : index
    %t = arith.muli %ty, %ten : index
    %v = arith.addi %t, %tx : index
    %vi = arith.index_cast %v : index to i32
    %vf = arith.sitofp %vi : i32 to f32
    memref.store %vf, %sub[%ty, %tx] : memref<2x4xf32, strided<[8, 1], offset: 10>>
    gpu.terminator
  }
  gpu.host_unregister %subu : memref<*xf32>
  // CHECK-NEXT: ( -1, -1, -1, -1, -1, -1, -1, -1 )
  // CHECK-NEXT: ( -1, -1, 0, 1, 2, 3, -1, -1 )
  // CHECK-NEXT: ( -1, -1, 10, 11, 12, 13, -1, -1 )
  // CHECK-NEXT: ( -1, -1, -1, -1, -1, -1, -1, -1 )
  call @print_rows(%m) : (memref<4x8xf32>) -> ()

  memref.dealloc %x : memref<8xf32>
  memref.dealloc %y : memref<8xf32>
  memref.dealloc %m : memref<4x8xf32>
  return
}
