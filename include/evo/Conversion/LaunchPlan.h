//===- LaunchPlan.h - the contract between kernels and their host --------*- C++ -*-===//
//
// A lowered function is a gpu.module of kernels plus a launch plan: the function's buffers
// (inputs and outputs in signature order, then scratch), its tasks (the compute ops it was split
// into, with their source text and knobs) and the ordered kernel launches. The plan is stored on
// the gpu.module as `evo.plan`; the host function, the manifest and the evaluator are all derived
// from it, so LLM- or mutator-written variants only ever replace device code.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_CONVERSION_LAUNCHPLAN_H
#define EVO_CONVERSION_LAUNCHPLAN_H

#include "evo/Conversion/Knobs.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include <array>
#include <string>

namespace evo {

/// Name of the gpu.module attribute holding the plan.
inline constexpr llvm::StringLiteral kPlanAttrName = "evo.plan";
/// Names of the attributes put on each kernel.
inline constexpr llvm::StringLiteral kKnobsAttrName = "evo.knobs";
inline constexpr llvm::StringLiteral kFamilyAttrName = "evo.family";
inline constexpr llvm::StringLiteral kTaskAttrName = "evo.task";

enum class BufferRole { Input, Output, Scratch };
llvm::StringRef stringifyBufferRole(BufferRole role);
std::optional<BufferRole> symbolizeBufferRole(llvm::StringRef name);

struct BufferDesc {
  std::string name;
  BufferRole role;
  mlir::MemRefType type;
  /// Scratch buffers a kernel accumulates into atomically must start at zero.
  bool zeroInit = false;
  int64_t sizeInBytes() const;
};

struct TaskDesc {
  std::string name;
  TaskFamily family;
  /// The task as a self-contained func.func on tensors (printed IR), re-loweable with other knobs.
  std::string source;
  mlir::DictionaryAttr knobs;
  /// Plan buffers bound to the task's arguments then its results (then its own scratch).
  llvm::SmallVector<unsigned> buffers;
};

struct KernelLaunch {
  std::string kernel;
  unsigned task = 0;
  std::array<int64_t, 3> grid = {1, 1, 1};
  std::array<int64_t, 3> block = {1, 1, 1};
  int64_t dynamicSharedMemory = 0;
  /// Plan buffer indices, in the kernel's parameter order.
  llvm::SmallVector<unsigned> args;
};

struct LaunchPlan {
  std::string funcName;
  /// The original function (printed IR), for the oracle and for reports.
  std::string source;
  llvm::SmallVector<BufferDesc> buffers;
  llvm::SmallVector<TaskDesc> tasks;
  llvm::SmallVector<KernelLaunch> launches;

  mlir::DictionaryAttr toAttr(mlir::MLIRContext *ctx) const;
  static mlir::FailureOr<LaunchPlan>
  fromAttr(mlir::DictionaryAttr attr, llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

  /// Reads `evo.plan` from a gpu.module, with diagnostics at the module.
  static mlir::FailureOr<LaunchPlan> fromModule(mlir::gpu::GPUModuleOp module);

  /// Checks that every launch names a kernel of `module` whose parameters match its buffers.
  mlir::LogicalResult verifyAgainst(mlir::gpu::GPUModuleOp module) const;
};

/// Builds `func.func @<plan.funcName>(inputs..., outputs...)` that allocates the scratch buffers,
/// launches the plan's kernels in order and frees the scratch.
mlir::func::FuncOp buildHostFunction(mlir::OpBuilder &builder, mlir::Location loc,
                                     const LaunchPlan &plan, mlir::gpu::GPUModuleOp module);

/// The element type name used in manifests ("f32", "f16", "bf16", "i32", ...).
std::string elementTypeName(mlir::Type type);

} // namespace evo

#endif // EVO_CONVERSION_LAUNCHPLAN_H
