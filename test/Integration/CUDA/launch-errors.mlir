// REQUIRES: cuda
// RUN: evo-opt %s -gpu-lower-to-nvvm-pipeline="cubin-chip=sm_90 cubin-features=+ptx80 cubin-format=isa" \
// RUN: | %mlir_runner --shared-libs=%evo_cuda_runtime --shared-libs=%evo_runner_utils \
// RUN:     --entry-point-result=void 2>&1 \
// RUN: | FileCheck %s

// Failing driver calls are reported on stderr and the program goes on: more dynamic shared memory
// than any device allows (the runtime does not launch), then more threads per block than CUDA
// allows (cuLaunchKernel fails). Stdout is flushed at exit, so "done" comes after the errors.

func.func @main() {
  %c1 = arith.constant 1 : index
  %c2048 = arith.constant 2048 : index
  %c32 = arith.constant 32 : index
  %huge = arith.constant 262144 : i32
  %out = gpu.alloc host_shared () : memref<1xf32>

  // CHECK: evo_cuda_runtime: cuFuncSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) failed: CUDA_ERROR_INVALID_VALUE (invalid argument)
  // CHECK-NEXT: evo_cuda_runtime: mgpuLaunchKernel: 262144 bytes of dynamic shared memory requested, device 0 allows at most {{[0-9]+}} per block (static shared memory included); kernel not launched
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
             dynamic_shared_memory_size %huge {
    %c0 = arith.constant 0 : index
    %v = arith.constant 1.0 : f32
    memref.store %v, %out[%c0] : memref<1xf32>
    gpu.terminator
  }

  // CHECK-NEXT: evo_cuda_runtime: cuLaunchKernel failed: CUDA_ERROR_INVALID_VALUE (invalid argument)
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c2048, %sy = %c1, %sz = %c1) {
    %c0 = arith.constant 0 : index
    %v = arith.constant 2.0 : f32
    memref.store %v, %out[%c0] : memref<1xf32>
    gpu.terminator
  }

  // CHECK-NEXT: done
  // CHECK-NOT: evo_cuda_runtime
  vector.print str "done\n"
  return
}
