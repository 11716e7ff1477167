//===- TaskAnalysis.h - what a task's compute op reads and writes -*- C++ -*-===//
//
// Private to the lowering. A task func holds one compute op, and after a contraction possibly an
// epilogue (elementwise generics applied to each of its output elements); the analysis resolves
// every operand to a kernel buffer parameter (a task argument or result) or to a constant scalar,
// and for reductions recognizes the combiner so that partial results can be merged in parallel.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_LIB_CONVERSION_TASKANALYSIS_H
#define EVO_LIB_CONVERSION_TASKANALYSIS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/AffineMap.h"
#include "llvm/ADT/SmallVector.h"

namespace evo {

/// One step of a view (isViewOp) between the value an op reads and the buffer behind it: the
/// view's indices go through `map` to its source's indices. A `tensor.pad` step also has a guard:
/// points whose source indices fall outside `sourceShape` read `padValue` instead.
struct ViewStep {
  mlir::AffineMap map;
  llvm::SmallVector<int64_t> sourceShape; // pad steps only
  mlir::TypedAttr padValue;               // pad steps only
};

/// Where a value read by the kernel comes from.
struct ValueSource {
  enum class Kind { Buffer, Scalar, Constant, None } kind = Kind::None;
  unsigned buffer = 0;       // kernel parameter index, for Buffer
  mlir::TypedAttr scalar;    // for Scalar (a splat or scalar constant, or a fill value)
  /// For Constant: a dense tensor constant (weights), embedded in the kernels' module as a
  /// global of at most kMaxKernelConstantBytes.
  mlir::DenseElementsAttr dense;
  /// For Buffer: the views the value is read through, outermost first (empty: the buffer itself).
  /// Only loadLanes reads through views; schedules with their own loads take plain buffers.
  llvm::SmallVector<ViewStep, 0> view;
  bool isPlainBuffer() const { return kind == Kind::Buffer && view.empty(); }
};

/// The largest dense constant a kernel embeds (in PTX as an initialized .global); larger ones
/// must be passed as arguments.
constexpr int64_t kMaxKernelConstantBytes = 1 << 20;

/// A reduction output whose payload is `yield combine(f(...), out)`.
struct Combiner {
  mlir::Operation *op = nullptr; // the binary combining op inside the payload
  unsigned valueOperand = 0;     // which operand of `op` is f(...), the other being `out`
};

/// One op of a contraction's epilogue: an elementwise linalg.generic over the contraction's
/// output space (isEpilogueConsumer) that reads the previous value of the chain (the
/// contraction's result, or the previous step's) at the output point.
struct EpilogueStep {
  mlir::linalg::GenericOp op;
  llvm::SmallVector<ValueSource> inputs; // per DPS input (Kind::None where chained)
  llvm::SmallVector<bool> chained;       // per DPS input: it is the previous value
  ValueSource init;                      // the DPS init, when the payload reads it
  bool initRead = false, initChained = false;
};

/// The elementwise ops a contraction's kernel applies to each output element before storing it.
/// With an epilogue, the contraction's own result is never stored: GenericTask::outputs[0] is
/// the kernel parameter of the last step's result.
struct Epilogue {
  llvm::SmallVector<EpilogueStep> steps;
  bool empty() const { return steps.empty(); }
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
  Epilogue epilogue;                          // applied to output 0 before it is stored

  /// The element type of the op's result `o` (with an epilogue, not the stored buffer's).
  mlir::Type resultElementType(unsigned o) const;
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

/// Ops that only re-index a tensor: `tensor.expand_shape`, `collapse_shape`, `extract_slice`,
/// `cast` and `pad` with a constant padding value, all static. They become no task and no buffer:
/// each task that reads one clones it, and its kernel reads the view's source through it
/// (ValueSource::view). A view that is returned is copied by a generic first.
bool isViewOp(mlir::Operation *op);
/// The buffer (possibly through views), constant or scalar behind a value that a kernel of
/// `task` reads, as loadLanes takes it; Kind::None with buffer ~0u when it is none of them.
ValueSource resolveValueSource(mlir::Value v, mlir::func::FuncOp task);
/// Emits a diagnostic at `op` (one of the view ops' kinds) if it is not a view evo can read
/// through: dynamic shapes, offsets or pads, a padding value that is not a constant.
mlir::LogicalResult checkViewOp(mlir::Operation *op);

/// Whether `consumer` can be an epilogue step after `prev` (a contraction's result or the
/// previous step's): a linalg.generic on tensors with one result, only parallel loops, an
/// identity output map over exactly `prev`'s (static) shape, reading `prev` only at the output
/// point (identity maps: no transposed or shifted read), and `prev` used by nothing else. Its
/// other operands may be anything the kernel can read (buffers through any map, e.g. a bias
/// broadcast along rows; constants; fills of constants).
bool isEpilogueConsumer(mlir::linalg::GenericOp consumer, mlir::Value prev);

/// The ops of a task func besides constants, tensor.empty, fills of constants and the return:
/// one compute op, and where it is followed by elementwise ops on its result, the epilogue
/// chain (each step an isEpilogueConsumer of the previous value; the last one returned).
struct ComputeOps {
  mlir::Operation *compute = nullptr;
  llvm::SmallVector<mlir::linalg::GenericOp> epilogue;
};
/// Emits a diagnostic if the task func is not of that form.
mlir::FailureOr<ComputeOps> findComputeOps(mlir::func::FuncOp task);
/// The compute op of findComputeOps.
mlir::FailureOr<mlir::Operation *> findComputeOp(mlir::func::FuncOp task);

/// Analyses a generic whose operands are values of the task func `task`, followed by the
/// epilogue chain `epilogue` (findComputeOps).
mlir::FailureOr<GenericTask>
analyzeGeneric(mlir::linalg::GenericOp op, mlir::func::FuncOp task,
               llvm::ArrayRef<mlir::linalg::GenericOp> epilogue = {});
mlir::FailureOr<SoftmaxTask> analyzeSoftmax(mlir::linalg::SoftmaxOp op, mlir::func::FuncOp task);

/// Kernel parameter types for a task func: its arguments then its results, as memrefs.
mlir::FailureOr<llvm::SmallVector<mlir::MemRefType>> taskParamTypes(mlir::func::FuncOp task);

} // namespace evo

#endif
