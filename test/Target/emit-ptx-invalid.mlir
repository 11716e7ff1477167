// Failures of evo-emit-ptx: a diagnostic, a non-zero exit, and no file left behind.

// RUN: rm -rf %t && mkdir -p %t
// RUN: not evo-opt %s -evo-emit-ptx="output-dir=%t chip=gfx90a ptxas=none" 2>&1 | FileCheck %s --check-prefix=CHIP
// CHIP: error: evo-emit-ptx: {{.*}}
// RUN: not evo-opt %s -evo-emit-ptx="output-dir=%t ptxas=/nonexistent/ptxas" 2>&1 | FileCheck %s --check-prefix=NOPTXAS
// NOPTXAS: error: evo-emit-ptx: ptxas '/nonexistent/ptxas' does not exist or is not executable
// RUN: not evo-opt %s -evo-emit-ptx="output-dir=%t opt-level=7 ptxas=none" 2>&1 | FileCheck %s --check-prefix=OPT
// OPT: error: evo-emit-ptx: opt-level must be 0-3, got 7
// 64 KiB of static shared memory is more than a block may have: ptxas refuses it.
// RUN: %if ptxas %{ not evo-opt %s -evo-emit-ptx="output-dir=%t" 2>&1 | FileCheck %s --check-prefix=PTXAS %}
// PTXAS: error: evo-emit-ptx: ptxas rejected the PTX of 'too_much_smem': ptxas failed (exit {{[0-9]+}})
// PTXAS: too much shared data
// RUN: not ls %t/too_much_smem.ptx %t/too_much_smem.json
module attributes {gpu.container_module} {
  gpu.module @too_much_smem {
    gpu.func @k(%x: memref<16384xf32>) workgroup(%buf : memref<16384xf32, #gpu.address_space<workgroup>>) kernel {
      %i = gpu.thread_id x
      %v = memref.load %x[%i] : memref<16384xf32>
      memref.store %v, %buf[%i] : memref<16384xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %c1 = arith.constant 1 : index
      %j = arith.addi %i, %c1 : index
      %w = memref.load %buf[%j] : memref<16384xf32, #gpu.address_space<workgroup>>
      memref.store %w, %x[%i] : memref<16384xf32>
      gpu.return
    }
  }
}
