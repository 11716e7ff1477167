// UNSUPPORTED: cuda
// RUN: evo-opt %s -gpu-lower-to-nvvm-pipeline="cubin-chip=sm_90 cubin-features=+ptx80 cubin-format=isa" -o %t.mlir
// RUN: not %mlir_runner %t.mlir --shared-libs=%evo_cuda_runtime --shared-libs=%evo_runner_utils \
// RUN:     --entry-point-result=void > %t.out 2>&1
// RUN: FileCheck %s < %t.out
// RUN: not evo-runner %t.mlir --shared-libs=%evo_cuda_runtime --shared-libs=%evo_runner_utils \
// RUN:     --entry-point-result=void > %t.evo-runner.out 2>&1
// RUN: FileCheck %s < %t.evo-runner.out

// Without a driver or a GPU (this machine), the first runtime call (here loading the kernel module,
// from a global constructor, before @main) says so on one line and ends the process with exit
// code 1 instead of handing null handles to the program.

// CHECK: evo_cuda_runtime: no CUDA driver: {{.+}} (first call: mgpuModuleLoadJIT)
// CHECK-NOT: never printed

func.func @main() {
  %c1 = arith.constant 1 : index
  %out = gpu.alloc host_shared () : memref<1xf32>
  vector.print str "never printed\n"
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %c0 = arith.constant 0 : index
    %v = arith.constant 1.0 : f32
    memref.store %v, %out[%c0] : memref<1xf32>
    gpu.terminator
  }
  return
}
