//===- TaskAnalysis.h - what a task's compute op reads and writes -*- C++ -*-===//
//
// Private to the lowering. A task func holds one compute op; the analysis resolves every operand
// to a kernel buffer parameter (a task argument or result) or to a constant scalar, and for
// reductions recognizes the combiner so that partial results can be merged in parallel.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_LIB_CONVERSION_TASKANALYSIS_H
#define EVO_LIB_CONVERSION_TASKANALYSIS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/AffineMap.h"
#include "llvm/ADT/SmallVector.h"

namespace evo {

/// Where a value read by the kernel comes from.
struct ValueSource {
  enum class Kind { Buffer, Scalar, None } kind = Kind::None;
  unsigned buffer = 0;       // kernel parameter index, for Buffer
  mlir::TypedAttr scalar;    // for Scalar (a splat or scalar constant, or a fill value)
};

/// A reduction output whose payload is `yield combine(f(...), out)`.
struct Combiner {
  mlir::Operation *op = nullptr; // the binary combining op inside the payload
  unsigned valueOperand = 0;     // which operand of `op` is f(...), the other being `out`
};

/// A linalg.generic (named ops are generalized first) seen from the kernel's side.
struct GenericTask {
  mlir::linalg::GenericOp op;
  llvm::SmallVector<int64_t> loopSizes;
  llvm::SmallVector<unsigned> parallelDims, reductionDims;
  llvm::SmallVector<ValueSource> inputs; // per DPS input
  llvm::SmallVector<ValueSource> inits;  // per DPS init: what the output starts as
  llvm::SmallVector<unsigned> outputs;   // kernel parameter written, per result
  llvm::SmallVector<bool> initRead;      // payload reads the out block argument
  llvm::SmallVector<Combiner> combiners; // per result; op == nullptr if not recognized
  llvm::SmallVector<mlir::MemRefType> params; // kernel parameter types (task args, results)

  bool allCombinersKnown() const {
    return llvm::all_of(combiners, [](const Combiner &c) { return c.op != nullptr; });
  }
  int64_t numOutputPoints() const;
  int64_t numReductionPoints() const;
};

struct SoftmaxTask {
  mlir::linalg::SoftmaxOp op;
  llvm::SmallVector<int64_t> shape;
  int64_t dim = 0;
  unsigned input = 0, output = 0; // kernel parameter indices
  llvm::SmallVector<mlir::MemRefType> params;
};

/// Producers copied into every task that uses them instead of becoming tasks, and the only ops a
/// task func may hold besides its compute op (they become constants inside kernels): constants,
/// tensor.empty and fills of a constant.
bool isCheapProducer(mlir::Operation *op);

/// The compute op of a task func: the single op that is not a constant, tensor.empty, a fill of
/// a constant or the return. Emits a diagnostic if there is not exactly one.
mlir::FailureOr<mlir::Operation *> findComputeOp(mlir::func::FuncOp task);

/// Analyses a generic whose operands are values of the task func `task`.
mlir::FailureOr<GenericTask> analyzeGeneric(mlir::linalg::GenericOp op, mlir::func::FuncOp task);
mlir::FailureOr<SoftmaxTask> analyzeSoftmax(mlir::linalg::SoftmaxOp op, mlir::func::FuncOp task);

/// Kernel parameter types for a task func: its arguments then its results, as memrefs.
mlir::FailureOr<llvm::SmallVector<mlir::MemRefType>> taskParamTypes(mlir::func::FuncOp task);

} // namespace evo

#endif
