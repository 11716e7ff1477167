//===- LowerToGPU.h - linalg tasks to GPU kernels ---------------*- C++ -*-===//
//
// The entry points of the lowering, shared by the evo-lower-to-gpu pass and by the evolution,
// which re-lowers single tasks with other knobs.
//
//   func (linalg on tensors) --preprocessFunction--> generalized, fused func
//        --partitionFunction--> tasks (one compute op each, as standalone funcs)
//        --lowerTask--> kernels + launches over the task's buffers
//        --lowerFunction--> gpu.module with evo.plan + host function
//
//===----------------------------------------------------------------------===//

#ifndef EVO_CONVERSION_LOWERTOGPU_H
#define EVO_CONVERSION_LOWERTOGPU_H

#include "evo/Dialect/Evo/IR/Knobs.h"
#include "evo/Dialect/Evo/IR/LaunchPlan.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace evo {

/// Name of the attribute through which an input op overrides the pass's knobs.
inline constexpr llvm::StringLiteral kOpKnobsAttrName = "evo.knobs";

/// Generalizes named elementwise/reduction ops, turns elementwise arith/math on tensors into
/// linalg, and (when `fuse`) fuses elementwise producers into consumers. Contractions,
/// convolutions and softmax stay named.
mlir::LogicalResult preprocessFunction(mlir::func::FuncOp func, bool fuse);

/// One compute op of a function, extracted as a standalone func on tensors.
struct Task {
  /// The task function, owned by the caller's module (or a temporary one).
  mlir::func::FuncOp func;
  /// The op of the original function this task came from (for diagnostics and knobs).
  mlir::Operation *origin = nullptr;
};

/// What lowering one task produced. Launch arguments index the task's buffers: its arguments,
/// then its results, then `scratch`. Tensor maps are among `scratch` (role TensorMap, type
/// memref<128xi8>, tensorMap set): their `source` indexes the task's buffers the same way, and
/// lowerFunction remaps it to the plan buffer like launch arguments.
struct LoweredTask {
  TaskFamily family;
  KnobsAttr knobs;
  llvm::SmallVector<KernelLaunch> launches;
  llvm::SmallVector<BufferDesc, 2> scratch;
};

/// The family a task func's compute op belongs to, or a diagnostic if it is not supported.
mlir::FailureOr<TaskFamily> classifyTask(mlir::func::FuncOp task);

/// For a task func of the rows family (a row program): its number of rows and their length in
/// elements, e.g. for seeding row_split; nullopt for other tasks.
std::optional<std::pair<int64_t, int64_t>> rowProgramExtent(mlir::func::FuncOp task);
/// Whether `task` is a row program only with its loops interchanged (strided rows: a reduction
/// over a non-trailing dimension, as RMSNorm over the channels of NCHW).
bool rowProgramIsStrided(mlir::func::FuncOp task);

/// Lowers a task func (exactly one compute op plus constants/empties/fills feeding it) into
/// kernels appended to `module` and named `<kernelPrefix><n>`. Diagnostics go to the compute op.
mlir::FailureOr<LoweredTask> lowerTask(mlir::func::FuncOp task, const ScheduleKnobs &knobs,
                                       mlir::gpu::GPUModuleOp module,
                                       llvm::StringRef kernelPrefix);

class TuningDb;

/// What applying a tuning database did, over the functions of one pass run (its summary).
struct TuningApplyStats {
  unsigned tasks = 0, applied = 0, otherChip = 0, otherFamily = 0;
};

struct LowerOptions {
  ScheduleKnobs knobs;
  bool fuseElementwise = true;
  /// inline-constant-bytes=: non-splat constants larger than this become constant buffers
  /// (role Constant, a memref.global each); at most 1 MiB, the kernels' own cap.
  int64_t inlineConstantBytes = 1 << 20;
  /// tuning-db=: a task whose signature has a record for `tuningChip` is lowered with the
  /// record's knobs instead of `knobs` and its ops' `evo.knobs`; the task split is unchanged
  /// (TuningDB.h). `tuningDbName` names the file in remarks; `tuningStats` counts.
  const TuningDb *tuningDb = nullptr;
  std::string tuningChip, tuningDbName;
  TuningApplyStats *tuningStats = nullptr;
};

struct TuningRecord;
/// The tuning record of `options.tuningDb` that applies to the task func `task` (its signature,
/// `options.tuningChip` and the family the lowering gives it), with a remark saying so, or a
/// remark or warning saying why none does; null without a database (TuningDB.cpp).
const TuningRecord *tuningRecordFor(mlir::func::FuncOp task, const LowerOptions &options);

/// Lowers `func` in place: on success the module holds a `gpu.module @<name>_kernels` carrying the
/// plan and `func` is replaced by the host function. On failure the module is left unchanged.
mlir::LogicalResult lowerFunction(mlir::func::FuncOp func, const LowerOptions &options);

/// Gives each parameter of `kernel` (launched with plan buffers `args`) that is a reshape of its
/// buffer (the same elements in the same order: a task result written straight into a returned
/// reshape's output buffer) the buffer's type, viewed in the kernel's own shape by a
/// memref.reinterpret_cast at entry; so the plan, the manifest and every runtime see one type per
/// buffer. Other parameters are left alone.
void viewReshapedParams(mlir::gpu::GPUFuncOp kernel, llvm::ArrayRef<unsigned> args,
                        const LaunchPlan &plan);

/// Loads the dialects the lowering creates ops of (for contexts outside the pass manager, e.g.
/// the evolution's compile threads). A no-op when they are loaded already.
void loadLoweringDialects(mlir::MLIRContext *ctx);

/// Prints an op in a form that parses back on its own (used for task and function sources).
std::string printSource(mlir::Operation *op);

/// Builds `func.func @<plan.funcName>(inputs..., outputs...)` that allocates the scratch buffers,
/// launches the plan's kernels in order and frees the scratch (HostFunction.cpp).
mlir::func::FuncOp buildHostFunction(mlir::OpBuilder &builder, mlir::Location loc,
                                     const LaunchPlan &plan, mlir::gpu::GPUModuleOp module);

} // namespace evo

#endif // EVO_CONVERSION_LOWERTOGPU_H
