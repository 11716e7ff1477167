//===- Compile.h - kernels to PTX, shared by evo-emit-ptx and the evolution -*- C++ -*-===//

#ifndef EVO_TARGET_COMPILE_H
#define EVO_TARGET_COMPILE_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include <string>

namespace evo {

struct PTXOptions {
  std::string chip = "sm_90";
  std::string features = "+ptx80";
  int optLevel = 3;
  /// CUDA toolkit root for libdevice; empty: defaultCudaPath().
  std::string cudaPath;
};

/// Checks what NVPTX would otherwise abort the process on (LLVM ERROR), with a diagnostic at the
/// op: every symbol of the module and the module's own name must be plain identifiers
/// (InputChecks.h: they become PTX symbols and file names), and no f80/f128 type may appear.
/// compileToPTX and evo-emit-ptx call it on every gpu.module, hand-written or LLM-written.
mlir::LogicalResult checkKernelModule(mlir::gpu::GPUModuleOp module);

/// The NVVM target attribute for `options`, or a diagnostic through `emitError` for a bad chip,
/// feature string or level.
mlir::FailureOr<mlir::Attribute>
nvvmTarget(mlir::MLIRContext *ctx, const PTXOptions &options,
           llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

/// Adds to `pm` (on builtin.module) the lowering of every gpu.module to NVVM with the
/// bare-pointer ABI and its serialization to PTX text in a gpu.binary. The gpu.modules must
/// already carry their NVVM target.
void buildKernelsToPTXPipeline(mlir::OpPassManager &pm, const PTXOptions &options);

/// Compiles the single gpu.module of `module` (which it consumes) and returns its PTX.
mlir::FailureOr<std::string> compileToPTX(mlir::ModuleOp module, const PTXOptions &options);

} // namespace evo

#endif
