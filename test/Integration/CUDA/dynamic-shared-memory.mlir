// REQUIRES: cuda
// RUN: evo-opt %s -gpu-lower-to-nvvm-pipeline="cubin-chip=sm_90 cubin-features=+ptx80 cubin-format=isa" \
// RUN: | %mlir_runner --shared-libs=%evo_cuda_runtime --shared-libs=%evo_runner_utils \
// RUN:     --entry-point-result=void 2>&1 \
// RUN: | FileCheck %s --implicit-check-not=evo_cuda_runtime

// A block reverses n floats through dynamic shared memory (gpu.dynamic_shared_memory): with 4 KiB,
// and with 96 KiB, which is over the 48 KiB default, so the runtime opts the kernel in
// (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) before the launch.

// y[i] = x[n - 1 - i] for i < n, through shared memory; prints how many elements are wrong, then
// y[0] and y[n - 1].
func.func @reverse(%x: memref<24576xf32>, %y: memref<24576xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c1024 = arith.constant 1024 : index
  %c4 = arith.constant 4 : index
  %nbytes = arith.muli %n, %c4 : index
  %bytes = arith.index_cast %nbytes : index to i32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1024, %sy = %c1, %sz = %c1)
             dynamic_shared_memory_size %bytes {
    %raw = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
    %buf = memref.view %raw[%c0][%n]
        : memref<?xi8, #gpu.address_space<workgroup>> to memref<?xf32, #gpu.address_space<workgroup>>
    scf.for %i = %tx to %n step %c1024 {
      %v = memref.load %x[%i] : memref<24576xf32>
      memref.store %v, %buf[%i] : memref<?xf32, #gpu.address_space<workgroup>>
    }
    gpu.barrier
    %last = arith.subi %n, %c1 : index
    scf.for %i = %tx to %n step %c1024 {
      %j = arith.subi %last, %i : index
      %v = memref.load %buf[%j] : memref<?xf32, #gpu.address_space<workgroup>>
      memref.store %v, %y[%i] : memref<24576xf32>
    }
    gpu.terminator
  }

  %zero = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %last = arith.subi %n, %c1 : index
  %wrong = scf.for %i = %c0 to %n step %c1 iter_args(%count = %zero) -> (i64) {
    %j = arith.subi %last, %i : index
    %expected = memref.load %x[%j] : memref<24576xf32>
    %got = memref.load %y[%i] : memref<24576xf32>
    %ne = arith.cmpf une, %got, %expected : f32
    %plus = arith.addi %count, %one : i64
    %next = arith.select %ne, %plus, %count : i64
    scf.yield %next : i64
  }
  vector.print %wrong : i64
  %first = memref.load %y[%c0] : memref<24576xf32>
  %final = memref.load %y[%last] : memref<24576xf32>
  vector.print %first : f32
  vector.print %final : f32
  return
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 24576 : index
  %x = gpu.alloc host_shared () : memref<24576xf32>
  %y = gpu.alloc host_shared () : memref<24576xf32>
  %minus1 = arith.constant -1.0 : f32
  scf.for %i = %c0 to %n step %c1 {
    %ii = arith.index_cast %i : index to i32
    %f = arith.sitofp %ii : i32 to f32
    memref.store %f, %x[%i] : memref<24576xf32>
    memref.store %minus1, %y[%i] : memref<24576xf32>
  }

  // 1024 floats: 4 KiB.
  // CHECK: 0
  // CHECK-NEXT: 1023
  // CHECK-NEXT: 0
  %small = arith.constant 1024 : index
  call @reverse(%x, %y, %small) : (memref<24576xf32>, memref<24576xf32>, index) -> ()

  // 24576 floats: 96 KiB.
  // CHECK-NEXT: 0
  // CHECK-NEXT: 24575
  // CHECK-NEXT: 0
  call @reverse(%x, %y, %n) : (memref<24576xf32>, memref<24576xf32>, index) -> ()
  return
}
