//===- LaunchPlan.h - the contract between kernels and their host --------*- C++ -*-===//
//
// A lowered function is a gpu.module of kernels plus a launch plan: the function's buffers
// (inputs and outputs in signature order, then scratch), its tasks (the compute ops it was split
// into, with their source text and knobs) and the ordered kernel launches. The plan is stored on
// the gpu.module as `evo.plan`; the host function, the manifest and the evaluator are all derived
// from it, so LLM- or mutator-written variants only ever replace device code. The attribute form is
// #evo.plan (EvoAttrs.td, checked when built or parsed); this is its mutable C++ form.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_DIALECT_EVO_IR_LAUNCHPLAN_H
#define EVO_DIALECT_EVO_IR_LAUNCHPLAN_H

#include "evo/Dialect/Evo/IR/Knobs.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/JSON.h"
#include <array>
#include <optional>
#include <string>

namespace evo {

/// Name of the gpu.module attribute holding the plan.
inline constexpr llvm::StringLiteral kPlanAttrName = "evo.plan";
/// Names of the attributes put on each kernel.
inline constexpr llvm::StringLiteral kKnobsAttrName = "evo.knobs";
inline constexpr llvm::StringLiteral kFamilyAttrName = "evo.family";
inline constexpr llvm::StringLiteral kTaskAttrName = "evo.task";

/// A TMA tensor map (#evo.tensor_map): the arguments of cuTensorMapEncodeTiled over the plan
/// buffer `source`, whose element type is the map's. Element strides 1, interleave none, L2
/// promotion 256 B and out-of-bounds fill none (TMA loads zeros outside `dims`) are fixed.
/// The rules are evo/Runtime/TensorMap.h's; PlanAttr's verifier applies them.
struct TensorMapDesc {
  /// A plan buffer index (in a LoweredTask: a task-local one, like KernelLaunch::args).
  unsigned source = 0;
  /// Elements, innermost first (cuTensorMapEncodeTiled's globalDim).
  llvm::SmallVector<int64_t, 5> dims;
  /// Bytes, for dims[1..]: rank - 1 entries (globalStrides).
  llvm::SmallVector<int64_t, 5> strides;
  /// Elements, innermost first (boxDim).
  llvm::SmallVector<int64_t, 5> box;
  /// Bytes: 0, 32, 64 or 128.
  int64_t swizzle = 0;
};

struct BufferDesc {
  std::string name;
  BufferRole role;
  /// memref<128xi8> for a tensor map.
  mlir::MemRefType type;
  /// Scratch buffers a kernel accumulates into atomically must start at zero.
  bool zeroInit = false;
  /// Set exactly when `role` is TensorMap.
  std::optional<TensorMapDesc> tensorMap;
  /// A scalar argument of the function (role Input, `type` 0-d, e.g. memref<f32>): the host
  /// and the kernels pass its value (the element type) instead of a pointer. Everywhere else
  /// (the oracle, the inputs the verifier draws) it is a 0-d input.
  bool byValue = false;
  /// Set exactly when `role` is Constant: the symbol of the `memref.global` (in the module of
  /// the host function) holding the constant's value. The verifier and the oracle treat a
  /// constant as an input (drawn like any other): kernels are checked for every value of it.
  std::string global;
  int64_t sizeInBytes() const;
  /// Whether the kernels read this buffer as an input: an input or a constant.
  bool isReadOnly() const { return role == BufferRole::Input || role == BufferRole::Constant; }
  /// What a kernel parameter and the host function's argument for this buffer is: the element
  /// type when byValue, else `type`.
  mlir::Type abiType() const;
};

struct TaskDesc {
  std::string name;
  TaskFamily family;
  /// The task as a self-contained func.func on tensors (printed IR), re-loweable with other knobs.
  std::string source;
  KnobsAttr knobs;
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
  llvm::SmallVector<BufferDesc, 2> buffers;
  llvm::SmallVector<TaskDesc> tasks;
  llvm::SmallVector<KernelLaunch> launches;

  /// The #evo.plan of this plan; the checked form diagnoses through `emitError` and returns
  /// null when the plan is not valid (names, indices, launch limits).
  PlanAttr toAttr(mlir::MLIRContext *ctx) const;
  PlanAttr toAttr(mlir::MLIRContext *ctx,
                  llvm::function_ref<mlir::InFlightDiagnostic()> emitError) const;
  static LaunchPlan fromAttr(PlanAttr attr);

  /// Reads `evo.plan` from a gpu.module, with diagnostics at the module.
  static mlir::FailureOr<LaunchPlan> fromModule(mlir::gpu::GPUModuleOp module);

  /// Checks that every launch names a kernel of `module` whose parameters match its buffers.
  mlir::LogicalResult verifyAgainst(mlir::gpu::GPUModuleOp module) const;
};

/// The element type name used in manifests ("f32", "f16", "bf16", "i32", ...).
std::string elementTypeName(mlir::Type type);

/// The plan buffer of a function argument (or result) of type `t`: a ranked tensor is a memref of
/// its shape and element type; a scalar of a type the kernels take by value
/// (isScalarArgumentType, InputChecks.h) is a by-value input of type memref<t> (0-d). Roles are
/// `role` (a scalar only as an input). nullopt for any other type.
std::optional<BufferDesc> argumentBuffer(mlir::Type t, std::string name, BufferRole role);

/// The type of every tensor-map buffer: memref<128xi8> (the CUtensorMap's bytes).
mlir::MemRefType tensorMapBufferType(mlir::MLIRContext *ctx);

/// A tensor-map buffer with the given map (role TensorMap, type memref<128xi8>).
BufferDesc tensorMapBuffer(mlir::MLIRContext *ctx, std::string name, TensorMapDesc map);

/// Checks `map` against its source buffer type (element type supported by TMA, the shape rules
/// of evo/Runtime/TensorMap.h, every byte it addresses within the source); `emitError` gives the
/// diagnostic the message is appended to.
mlir::LogicalResult verifyTensorMap(const TensorMapDesc &map, mlir::MemRefType source,
                                    llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

/// The JSON form of a tensor map, alike in the manifest and the worker request:
/// {"source", "element_type", "dims", "strides", "box", "swizzle"}; `elementType` is the
/// source's (elementTypeName).
llvm::json::Object toJSON(const TensorMapDesc &map, llvm::StringRef elementType);
/// Reads that form (element_type is returned separately); every number must fit its field.
bool fromJSON(const llvm::json::Value &value, TensorMapDesc &map, std::string &elementType,
              llvm::json::Path path);

/// The JSON form of a launch, spelled alike in the manifest, the worker request and the run
/// store: {"kernel", "task", "grid": [x, y, z], "block": [x, y, z], "dynamic_shared_memory",
/// "args": [buffer indices]}. fromJSON needs "kernel", "grid", "block" and "args"; "task" and
/// "dynamic_shared_memory" default to 0 (worker requests and older run stores leave "task" out).
/// Every number must fit its field: grid and block dimensions and the shared memory as unsigned
/// 32-bit values (dimensions at least 1), task and args as non-negative 32-bit indices.
llvm::json::Value toJSON(const KernelLaunch &launch);
bool fromJSON(const llvm::json::Value &value, KernelLaunch &launch, llvm::json::Path path);

} // namespace evo

#endif // EVO_DIALECT_EVO_IR_LAUNCHPLAN_H
