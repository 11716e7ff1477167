//===- VariantCompiler.h - a kernel variant, compiled to PTX/cubin -*- C++ -*-===//
//
// Why this exists: the search (TaskSearch), the LLM proposer, resume (rebuilding a stored
// winner) and the pass's final check all turn a variant into PTX the same way, on compile
// threads that each own an MLIRContext. Keeping that here, below both the search and the LLM
// code, is what lets the search use the LLM contract and the LLM code use the compiler without a
// dependency cycle (VariantCompiler -> LLMMutator's device-code check; nothing here includes
// Engine.h or TaskSearch.h).
//
// Three kinds of input: a genome (the task's source lowered with its knobs, rewritten), an LLM's
// code (checked against its parent's kernels and the device-code contract), and a gpu.module
// given as text (a stored winner, the module the pass emits).
//
//===----------------------------------------------------------------------===//

#ifndef EVO_EVOLUTION_VARIANTCOMPILER_H
#define EVO_EVOLUTION_VARIANTCOMPILER_H

#include "evo/Dialect/Evo/IR/LaunchPlan.h"
#include "evo/Evolution/Genome.h"
#include "evo/Target/Compile.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"
#include <memory>

namespace evo {

class RunStore;

/// A scratch buffer without MLIR types: variants are lowered in other (per-thread) contexts.
struct ScratchSpec {
  std::string name;
  llvm::SmallVector<int64_t> shape;
  std::string elementType; // "f32", "bf16", "i32", ...
  bool zeroInit = false;
  /// A tensor map (shape {128}, element type "i8"): its source indexes the task's buffers then
  /// the variant's scratch, like launch arguments; `tensorMapElementType` is the source's.
  /// (Shared and immutable: ScratchSpec stays small enough for SmallVector.)
  std::shared_ptr<const TensorMapDesc> tensorMap;
  std::string tensorMapElementType;
  int64_t numElements() const;
};

/// A compiled variant.
struct CompiledVariant {
  bool ok = false;
  std::string diagnostics;
  std::string ir;    // the gpu.module
  std::string ptx, cubin, ptxHash;
  llvm::SmallVector<KernelLaunch> launches; // over the task's buffers, then `scratch`
  llvm::SmallVector<ScratchSpec> scratch;
  int registers = -1, spills = -1;
  /// The task's input buffers: launch arguments below this index are read-only (-1: unknown).
  int numInputs = -1;
};

/// Where a variant's kernels come from and how they are launched (what an LLM child builds on).
struct VariantInfo {
  std::string ir; // the gpu.module
  llvm::SmallVector<KernelLaunch> launches;
  llvm::SmallVector<ScratchSpec> scratch;
  /// The task's input buffers (launch arguments below this index are read-only); -1: unknown,
  /// which the contract check refuses.
  int numInputs = -1;
  static VariantInfo of(const CompiledVariant &v) {
    return {v.ir, v.launches, v.scratch, v.numInputs};
  }
};

/// The calling thread's MLIR context for compiling variants (one per thread).
mlir::MLIRContext &compileContext(const mlir::DialectRegistry &registry);
/// Prints `gm` into `out.ir` and compiles `module` (which holds it) to PTX, then to a cubin when
/// `ptxasPath` is given; sets `out.ok` on success.
void compileVariantModule(mlir::ModuleOp module, mlir::gpu::GPUModuleOp gm, const PTXOptions &ptx,
                          llvm::StringRef ptxasPath, CompiledVariant &out);

/// Compiles a gpu.module given as text (with every symbol its kernels use) to PTX, then to a
/// cubin when `ptxasPath` is given, the way evo-emit-ptx does. Thread-safe (its own context).
CompiledVariant compileGpuModule(const mlir::DialectRegistry &registry, llvm::StringRef text,
                                 const PTXOptions &ptx, llvm::StringRef ptxasPath);

/// Lowers `genome` for the task in `source` and compiles it (PTX, then cubin with ptxas when
/// available). Thread-safe: uses its own MLIR context built from `registry`. The source is parsed
/// once per thread and task (a context cannot share IR with another): later calls with the same
/// source on the same thread reuse the parsed task.
CompiledVariant compileVariant(const mlir::DialectRegistry &registry, llvm::StringRef source,
                               TaskFamily family, const Genome &genome, const PTXOptions &ptx,
                               llvm::StringRef ptxasPath);

/// Checks an LLM's code against the parent's kernels and compiles it. Thread-safe (its own
/// MLIR context). On failure `ok` is false and `diagnostics` says why, in words fit to send
/// back to the LLM.
CompiledVariant compileLLMVariant(const mlir::DialectRegistry &registry, llvm::StringRef code,
                                  const VariantInfo &parent, const PTXOptions &ptx,
                                  llvm::StringRef ptxasPath);

/// Compiles a stored candidate again: from its genome, or (LLM candidates) from its stored IR
/// on top of its rebuilt first parent, whose launches it inherits unless its IR says otherwise.
llvm::Expected<CompiledVariant> rebuildCandidate(const RunStore &store, int64_t id,
                                                 const mlir::DialectRegistry &registry,
                                                 llvm::StringRef taskSource, TaskFamily family,
                                                 const PTXOptions &ptx, llvm::StringRef ptxasPath);

/// The worker protocol's description of a variant's launches and scratch buffers.
llvm::json::Array launchesJson(llvm::ArrayRef<KernelLaunch> launches);
llvm::json::Array scratchJson(llvm::ArrayRef<ScratchSpec> scratch);

} // namespace evo

#endif
