//===- Passes.td - evo-opt target passes -------------------*- tablegen -*-===//

#ifndef EVO_TARGET_PASSES
#define EVO_TARGET_PASSES

include "mlir/Pass/PassBase.td"

def EvoEmitPTXPass : Pass<"evo-emit-ptx", "mlir::ModuleOp"> {
  let summary = "Compile gpu.modules to PTX and write <name>.ptx plus a <name>.json manifest";
  let description = [{
    Lowers every `gpu.module` of the module through NVVM (bare-pointer kernel ABI) to PTX for
    `chip`, replaces it with a `gpu.binary` holding the PTX (the `evo.plan` of evo-lower-to-gpu
    moves onto the binary), and writes for each one `<output-dir>/<name>.ptx` and
    `<output-dir>/<name>.json`, where `<name>` is the lowered function's name (or the
    gpu.module's). The manifest lists the kernels with their parameters (buffer order, dtypes,
    shapes), grid/block dimensions, dynamic shared memory and schedule knobs.

    When ptxas is available the PTX is assembled for `chip` and the manifest records each
    kernel's registers, spills, stack frame and shared memory; an assembler error is a
    diagnostic and nothing is written. `output-dir` is created if missing. Files are written to
    temporary names and renamed into place only when evo-opt's whole invocation succeeds (or,
    outside evo-opt, when the pass does), so a failure leaves no file, partial or complete; a
    name two modules or two input chunks would both write is a diagnostic. Every name that
    becomes a file name or a PTX symbol must be a plain identifier (docs/reliability.md).
  }];
  let dependentDialects = [
    "mlir::gpu::GPUDialect", "mlir::NVVM::NVVMDialect", "mlir::LLVM::LLVMDialect"
  ];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90\"", "Target SM (sm_XY or sm_XYa)">,
    Option<"features", "features", "std::string", /*default=*/"\"+ptx80\"",
           "PTX ISA version, as an LLVM feature string">,
    Option<"optLevel", "opt-level", "int", /*default=*/"3", "LLVM optimization level (0-3)">,
    Option<"outputDir", "output-dir", "std::string", /*default=*/"\".\"",
           "Directory for <name>.ptx and <name>.json, created if missing ('-' writes nothing)">,
    Option<"ptxas", "ptxas", "std::string", /*default=*/"\"\"",
           "ptxas to assemble with: empty finds one (EVO_PTXAS, the CUDA toolkit, PATH) and "
           "skips assembly if none; 'none' skips it; a path must exist">,
    Option<"cudaPath", "cuda-path", "std::string", /*default=*/"\"\"",
           "CUDA toolkit root, for libdevice (default: CUDA_HOME, then the build's toolkit)">,
  ];
}

#endif // EVO_TARGET_PASSES
