//===- RowPrograms.h - row programs: roles, the emitter's state --*- C++ -*-===//
//
// Private to lib/Conversion: what matching a row program (MatchRows.cpp) and emitting it
// (EmitRows.cpp, the online folds in EmitRowsOnline.cpp) share. docs/lowering.md, "Row programs".
//
//===----------------------------------------------------------------------===//

#ifndef EVO_LIB_CONVERSION_ROWPROGRAMS_H
#define EVO_LIB_CONVERSION_ROWPROGRAMS_H

#include "Emitters.h"
#include "KernelBuilder.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace evo::rows {

using namespace mlir;

enum class Role { Full, Row, Col, Scalar, None };

/// The role of an operand of an op iterating over the full space (`n` loops, the last `k` the
/// row's) or, with `rowSpace`, over the row space (the first n - k), from its indexing map.
Role roleOf(AffineMap map, unsigned n, unsigned k, bool rowSpace);

enum class OpKind { FullParallel, RowReduction, RowParallel };

/// What `g` is in a row program over `full` whose rows span its last `k` dimensions.
std::optional<OpKind> kindOf(linalg::GenericOp g, ArrayRef<int64_t> full, unsigned k);

/// The scalar that a constant, or a fill with a constant, stands for (splats unwrapped); null
/// for anything else.
Attribute scalarConstant(Value v);

/// A contiguous chunk of `vw` columns of the current row.
struct Chunk {
  explicit Chunk(Value col0) : col0(col0) {}
  Value col0;
  DenseMap<Value, SmallVector<Value>> memo;
  /// Arguments read through their own maps (the interchanged maps of a permuted row program),
  /// loaded once per chunk: with cache_row, once per row for every pass that reads them.
  DenseMap<std::pair<Value, AffineMap>, SmallVector<Value>> mapped;
};

class RowEmitter {
public:
  RowEmitter(func::FuncOp task, const RowShape &shape, const ScheduleKnobs &k)
      : task(task), shape(shape), k(k), groups{k.reduction, k.blockSize} {}
  FailureOr<LoweredTask> emit(EmitContext &ctx);

private:
  LogicalResult validate();
  SmallVector<Value> full(Value v, Chunk &c);
  Value rowValue(Value v);
  SmallVector<Value> colLanes(Value v, Chunk &c);
  /// Clones `g`'s payload once per lane of chunk `c`: inputs read by their role (full, column or
  /// row values), outputs bound to zeros the payload never reads, the ops in `skip` left out;
  /// `use(map)` after each lane.
  void clonePerLane(linalg::GenericOp g, Chunk &c, ArrayRef<Operation *> skip,
                    llvm::function_ref<void(IRMapping &)> use);
  /// The full tensor's indices of column `col` (linear over the row's dimensions) of this row.
  SmallVector<Value> ivsAt(Value col);
  /// Column `col`'s indices in the row's dimensions.
  SmallVector<Value> colIdx(Value col);
  /// The rank of the full tensors, and of the row's part of it.
  unsigned fullRank() const { return shape.rowDims.size() + shape.colDims.size(); }
  unsigned colRank() const { return shape.colDims.size(); }
  /// Folds produce(chunk) (vw values each) over this thread's chunks of the row with
  /// `combineFn`, then across the threads of the row; the result is uniform.
  ///
  /// With row_split, `level` is the reduction's pass: the kernel of that pass folds this slice
  /// and writes its partial; later kernels combine the partials; earlier ones skip it (the
  /// identity, never used).
  Value reduceRow(unsigned level, Type acc, Value identity,
                  llvm::function_ref<Value(Value, Value)> combineFn,
                  llvm::function_ref<SmallVector<Value>(Chunk &)> produce);
  /// Whether a softmax's max and sum are folded in one pass over the row (onlineMaxSum): when
  /// the row is re-read from memory for each pass (no cache_row), in one kernel (no row_split),
  /// and each thread's chains are short enough for a plain sum.
  bool onlineSoftmax() const;
  /// The max of produce(chunk) over the row and the sum of exp(x - max), in one pass (online
  /// softmax): each thread folds its elements into (m, s) = (running max, sum of exp(x - m)),
  /// then the threads' pairs are merged. Same special values as the two passes: a NaN makes
  /// both NaN, -inf elements add nothing, and a max of +inf makes the sum NaN.
  std::pair<Value, Value> onlineMaxSum(Type acc,
                                       llvm::function_ref<SmallVector<Value>(Chunk &)> produce);
  /// A row program's max reduction followed by the sum of exp(x - max) over the same x (a
  /// log-softmax written as generics): that sum, or null.
  linalg::GenericOp expSumAfterMax(linalg::GenericOp max);
  /// Whether a sum and the sum of squared distances to its mean are folded in one pass over
  /// the row (onlineMoments): as onlineSoftmax, and every thread folds as many elements.
  bool onlineMomentsFit() const;
  /// A row program's sum of x followed by `mean = sum / cols` and the sum of (x - mean)^2 over
  /// the same x (a variance written as generics: instance, group and layer norms): that second
  /// sum, or null.
  linalg::GenericOp centredSquaresAfterSum(linalg::GenericOp sum);
  /// The mean of produce(chunk) over the row and the sum of squared distances to it, in one pass
  /// (Welford per thread, then Chan's merge of equal-count partials across threads).
  std::pair<Value, Value> onlineMoments(Type acc,
                                        llvm::function_ref<SmallVector<Value>(Chunk &)> produce);
  /// The first chunk of this thread (in its slice) and the end of its slice.
  Value chunkBegin();
  Value chunkEnd();
  /// row_split: each reduction's pass and accumulator type (in the order of reduceRow calls),
  /// and the pass of the kernel that writes the outputs.
  void analyzePasses();
  LogicalResult emitKernel(EmitContext &ctx, StringRef name, unsigned pass,
                           ArrayRef<MemRefType> kernelParams, ArrayRef<MemRefType> workgroup,
                           int64_t numRows);
  void forEachChunk(llvm::function_ref<void(Chunk &)> body);
  LogicalResult visit(Operation &op);

  func::FuncOp task;
  RowShape shape;
  ScheduleKnobs k;
  ReductionGroups groups;
  std::unique_ptr<KernelBuilder> kb;
  Location loc = UnknownLoc();
  int64_t width = 1, vw = 1, numChunks = 0;
  /// The widest element of the task's full-tensor inputs (onlineSoftmax's row size).
  int64_t rowElementBytes = 4;
  /// row_split: slices per row, chunks per slice.
  int64_t split = 1, sliceChunks = 0;
  /// row_split: the reductions' passes and accumulator types, the last pass (the one that
  /// writes), and the kernel being built: its pass, its slice, its slice's first chunk.
  DenseMap<Operation *, unsigned> passOf;
  SmallVector<Type> partialTypes;
  unsigned lastPass = 0, pass = 0, nextPartial = 0;
  Value slice, sliceBase, row;
  Value lane;
  SmallVector<Value> rowIdx;
  DenseMap<Value, Value> rows;
  DenseMap<Operation *, std::pair<Value, Value>> softmaxStats; // max, 1/sum
  llvm::SmallPtrSet<Operation *, 2> foldedEarly; // exp sums folded with their max (online)
  SmallVector<Chunk> cached; // cache_row: this thread's chunks, memoized across passes
  SmallVector<MemRefType> params;
  Operation *preamble = nullptr; // row-invariant values are created before it
  unsigned nextSmem = 0;
  unsigned numSmem = 0;
};

} // namespace evo::rows

#endif // EVO_LIB_CONVERSION_ROWPROGRAMS_H
