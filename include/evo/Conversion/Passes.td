//===- Passes.td - evo-opt conversion passes ---------------*- tablegen -*-===//

#ifndef EVO_CONVERSION_PASSES
#define EVO_CONVERSION_PASSES

include "mlir/Pass/PassBase.td"

def EvoLowerToGPUPass : Pass<"evo-lower-to-gpu", "mlir::ModuleOp"> {
  let summary = "Lower linalg target ops on static tensors to gpu.module kernels and a host launcher";
  let description = [{
    Every `func.func` whose body is made of linalg ops on static-shaped tensors is rewritten into
    a host function with a bare-buffer signature (inputs, then one buffer per result) that launches
    kernels of a `gpu.module @<func>_kernels`:

    ```mlir
    func.func @relu(%x: tensor<1024xf32>) -> tensor<1024xf32> { ... linalg ... }
    // becomes
    func.func @relu(%arg0: memref<1024xf32>, %arg1: memref<1024xf32>) {
      gpu.launch_func @relu_kernels::@relu_k0 blocks in (...) threads in (...) args(...)
      return
    }
    gpu.module @relu_kernels attributes {evo.plan = ...} {
      gpu.func @relu_k0(%arg0: memref<1024xf32>, %arg1: memref<1024xf32>) kernel attributes {evo.knobs = ...}
    }
    ```

    Named elementwise and reduction ops are generalized and chains of elementwise producers are
    fused into their consumers first; every remaining compute op (a "task") becomes one or more
    kernels built by the family's emitter (elementwise, reduction, softmax, matmul). The schedule
    knobs below apply to every task; a linalg op may override them with an `evo.knobs`
    dictionary attribute (e.g. `{evo.knobs = {block_size = 128 : i64}}`). The knobs a kernel was
    built with are recorded on it as `evo.knobs`, and each task's source as text in the module's
    `evo.plan`, so later passes can re-lower a task with other knobs.

    With the defaults the result is the naive baseline: one thread per output element, scalar
    accesses, serial reduction loops.
  }];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::gpu::GPUDialect", "mlir::math::MathDialect",
    "mlir::memref::MemRefDialect", "mlir::scf::SCFDialect", "mlir::vector::VectorDialect",
    "mlir::linalg::LinalgDialect", "mlir::func::FuncDialect"
  ];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block (a multiple of 32, at most 1024)">,
    Option<"elementsPerThread", "elements-per-thread", "int64_t", /*default=*/"1",
           "Elementwise: vector groups each thread computes (1-16)">,
    Option<"vectorWidth", "vector-width", "int64_t", /*default=*/"1",
           "Elements per memory access along the innermost dimension (1, 2, 4 or 8; at most 16 bytes)">,
    Option<"reductionStrategy", "reduction-strategy", "std::string", /*default=*/"\"thread\"",
           "Reductions and softmax: 'thread' (one thread per output), 'warp' (one warp per output, "
           "shuffles) or 'block' (one block per output, shuffles + shared memory)">,
    Option<"accumulators", "accumulators", "int64_t", /*default=*/"1",
           "Reductions: independent partial accumulators per thread (1, 2, 4 or 8)">,
    ListOption<"tileSizes", "tile-sizes", "int64_t",
               "Matmul: block tile M,N,K staged in shared memory (empty: one thread per output)">,
    ListOption<"threadTile", "thread-tile", "int64_t",
               "Matmul: register tile M,N computed by each thread (with tile-sizes; default 1,1)">,
    Option<"transposeTile", "transpose-tile", "int64_t", /*default=*/"0",
           "Elementwise: stage transposed inputs through shared memory in tiles of 16, 32 or 64 "
           "(0: off)">,
    Option<"split", "split", "int64_t", /*default=*/"1",
           "Reductions: slices of the reduction reduced in parallel, then combined by a second "
           "kernel (power of 2, at most 256)">,
    Option<"cacheRow", "cache-row", "bool", /*default=*/"false",
           "Row programs: keep each thread's part of the row in registers across passes">,
    Option<"prefetch", "prefetch", "bool", /*default=*/"false",
           "Tiled matmul: load the next K tile into registers while computing the current one">,
    Option<"fuseElementwise", "fuse-elementwise", "bool", /*default=*/"true",
           "Fuse elementwise producers into their consumers, and whole row programs (softmax, "
           "norms) into one kernel, before lowering">,
  ];
}

#endif // EVO_CONVERSION_PASSES
