//===- Knobs.h - schedule knobs of the evo lowering -------------*- C++ -*-===//
//
// The schedule knobs are the search space the evolution explores without an LLM: every knob is
// a pass option of evo-lower-to-gpu, an `evo.knobs` entry an input op may carry, and an
// attribute on each produced kernel. Which knobs a task uses depends on its family.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_CONVERSION_KNOBS_H
#define EVO_CONVERSION_KNOBS_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/JSON.h"
#include <optional>
#include <string>

namespace evo {

/// What kind of kernel a task lowers to; each family has its own emitter and knobs.
/// Rows: a whole function of row-wise reductions and elementwise ops (softmax, layernorm, ...)
/// fused into one kernel that walks each row.
enum class TaskFamily { Elementwise, Reduction, Softmax, Matmul, Rows };
llvm::StringRef stringifyTaskFamily(TaskFamily family);
std::optional<TaskFamily> symbolizeTaskFamily(llvm::StringRef name);

/// How the threads of a reduction (or softmax row) share the reduced elements.
enum class ReductionStrategy { Thread, Warp, Block };
llvm::StringRef stringifyReductionStrategy(ReductionStrategy strategy);
std::optional<ReductionStrategy> symbolizeReductionStrategy(llvm::StringRef name);

struct ScheduleKnobs {
  int64_t blockSize = 256;
  int64_t elementsPerThread = 1;
  /// Elementwise: stage inputs read across the innermost dimension (transposes) through shared
  /// memory in tiles of this size, so that reads and writes are both coalesced; 0 = off.
  int64_t transposeTile = 0;
  int64_t vectorWidth = 1;
  ReductionStrategy reduction = ReductionStrategy::Thread;
  int64_t accumulators = 1;
  /// Reductions: the reduced points are split into this many slices, reduced in parallel into
  /// a scratch buffer of partials by one kernel and combined by a second (for few outputs with
  /// long reductions, e.g. column sums).
  int64_t split = 1;
  /// Rows: keep each thread's part of the row in registers (one read of the inputs) instead of
  /// re-reading it for every pass.
  bool cacheRow = false;
  /// Matmul block tile {M, N, K}; empty means one thread per output element.
  llvm::SmallVector<int64_t, 3> tileSizes;
  /// Matmul per-thread register tile {M, N}; used with tileSizes.
  llvm::SmallVector<int64_t, 2> threadTile = {1, 1};
  /// Tiled matmul: read the next K tile from global memory into registers while computing on
  /// the current one (its latency hides behind the FMAs), then store it to shared memory.
  bool prefetch = false;

  /// Checks the values that do not depend on a task's shapes.
  mlir::LogicalResult verify(llvm::function_ref<mlir::InFlightDiagnostic()> emitError) const;

  /// Overlays the entries of an `evo.knobs` dictionary. Unknown keys and ill-typed values are
  /// errors: a typo in a knob must never silently fall back to a default.
  mlir::LogicalResult merge(mlir::DictionaryAttr dict,
                            llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

  /// The knobs `family` uses, as recorded on kernels and in manifests.
  mlir::DictionaryAttr toAttr(mlir::MLIRContext *ctx, TaskFamily family) const;
  /// The same entries as JSON (run store, reports); mergeJson reads them back.
  llvm::json::Object toJson(TaskFamily family) const;
  mlir::LogicalResult mergeJson(const llvm::json::Object &o, std::string *error);

  bool operator==(const ScheduleKnobs &other) const;
};

/// Names of the keys accepted in `evo.knobs` dictionaries.
llvm::ArrayRef<llvm::StringRef> knownKnobNames();

} // namespace evo

#endif // EVO_CONVERSION_KNOBS_H
