//===- Passes.td - evo-opt conversion passes ---------------*- tablegen -*-===//

#ifndef EVO_CONVERSION_PASSES
#define EVO_CONVERSION_PASSES

include "mlir/Pass/PassBase.td"
include "evo/Dialect/Evo/IR/EvoKnobs.td"

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

    Front-ends (docs/lowering.md): a function holding TOSA ops is first converted to linalg with
    upstream's TOSA conversions (tosa-to-scf, those of `--tosa-to-linalg-pipeline`, then
    tosa-to-tensor and tosa-to-arith); every `func.call` of a lowered function is rewritten to
    its buffer signature (`bufferization.to_buffer` of the arguments, `memref.alloc` of the
    results, the call, `bufferization.to_tensor restrict writable`); a module with no function
    to lower and no kernels is a warning that names what it holds.
  }];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::gpu::GPUDialect", "mlir::math::MathDialect",
    "mlir::memref::MemRefDialect", "mlir::scf::SCFDialect", "mlir::vector::VectorDialect",
    "mlir::linalg::LinalgDialect", "mlir::func::FuncDialect", "mlir::LLVM::LLVMDialect",
    "mlir::NVVM::NVVMDialect", "evo::EvoDialect",
    // Callers of lowered functions are rewritten with to_buffer / to_tensor, TOSA is converted
    // to linalg, tensor, index and scf ops (FrontEnds.h).
    "mlir::bufferization::BufferizationDialect", "mlir::tosa::TosaDialect",
    "mlir::tensor::TensorDialect", "mlir::index::IndexDialect"
  ];
  // The knobs' options come from the knob list (EvoKnobs.td); only the pass's own follow.
  let options = !listconcat(Evo_KnobPassOptions, [
    Option<"fuseElementwise", "fuse-elementwise", "bool", /*default=*/"true",
           "Fuse elementwise producers into their consumers, and whole row programs (softmax, "
           "norms) into one kernel, before lowering">,
    Option<"inlineConstantBytes", "inline-constant-bytes", "int64_t", /*default=*/"1048576",
           "Constants (dense or dense_resource, not splats) of at most this many bytes are "
           "compiled into the kernels; larger ones become constant buffers: a memref.global "
           "the host function copies to the device, and a <name>.constants.bin file beside "
           "the PTX for evo-emit-ptx (0 to 1048576)">,
    Option<"requireKernels", "require-kernels", "bool", /*default=*/"false",
           "A module with nothing to lower (and no kernels) is an error instead of a warning "
           "(--evo-pipeline sets it: it would emit nothing)">,
    Option<"tuningDb", "tuning-db", "std::string", /*default=*/"\"\"",
           "A tuning database (JSON, written by evo-evolve as RUN_DIR/tuning.json): each task "
           "whose signature (its source after the task split, names normalized) has a record "
           "for tuning-chip is lowered with the record's knobs; the task split is unchanged">,
    Option<"tuningChip", "tuning-chip", "std::string", /*default=*/"\"sm_90\"",
           "The chip whose tuning records apply (evo-evolve's chip= of the run that made them)">,
  ]);
}

#endif // EVO_CONVERSION_PASSES
