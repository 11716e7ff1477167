//===- EmitRows.cpp - whole row-wise functions in one kernel ------------------===//
//
// A "row program" is a function whose ops all work on rows of one shape [R..., C]: elementwise
// ops on full tensors (with row vectors [R...], column vectors [C] and scalars broadcast into
// them), reductions over the last dimension producing row vectors, elementwise ops on row
// vectors, and softmax over the last dimension. Softmax, LayerNorm and RMSNorm are row programs.
// Lowered op by op they take one kernel and one pass over memory per reduction; here the whole
// function is one kernel in which a thread, a warp or a block walks each row:
//   * a reduction folds the payload over the row (vector_width elements per access), then the
//     threads of the row combine their partials (shuffles, shared memory);
//   * full-tensor values are computed on demand from the inputs, the row values known so far and
//     the column vectors;
//   * with cache_row, the values of each thread's part of the row are kept in registers across
//     passes, so the inputs are read once and the outputs written once (the fast form); without
//     it, every pass re-reads the inputs (each pass is an scf.for over the row).
// With row_split S > 1, each row is cut into S slices, one per thread/warp/block (gridDim.y = S),
// and the program runs as one kernel per pass: a reduction is computed by the kernel of its
// level (the number of reductions its inputs depend on, in sequence) as one partial per slice in
// a scratch buffer [S, rows]; every later kernel combines the S partials in slice order (the
// same value in every kernel, no atomics); the last kernel writes each slice of the outputs.
//
//===----------------------------------------------------------------------===//

#include "Emitters.h"
#include "KernelBuilder.h"
#include "evo/Conversion/ScanForm.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace evo {

namespace {
enum class Role { Full, Row, Col, Scalar, None };

/// The role of an operand of an op iterating over the full space (`n` loops, the last `k` the
/// row's) or, with `rowSpace`, over the row space (the first n - k), from its indexing map.
Role roleOf(AffineMap map, unsigned n, unsigned k, bool rowSpace) {
  if (map.getNumResults() == 0)
    return Role::Scalar;
  SmallVector<unsigned> dims;
  for (AffineExpr e : map.getResults()) {
    auto d = dyn_cast<AffineDimExpr>(e);
    if (!d)
      return Role::None;
    dims.push_back(d.getPosition());
  }
  auto isPrefix = [&](unsigned n) {
    if (dims.size() != n)
      return false;
    for (unsigned i = 0; i < n; ++i)
      if (dims[i] != i)
        return false;
    return true;
  };
  if (rowSpace)
    return isPrefix(n - k) ? Role::Row : Role::None;
  if (isPrefix(n))
    return Role::Full;
  if (isPrefix(n - k))
    return Role::Row;
  // A column vector spans the row's dimensions in order: [C], or [C, H, W] for k = 3.
  if (dims.size() == k && llvm::all_of(llvm::seq<unsigned>(0, k),
                                       [&](unsigned i) { return dims[i] == n - k + i; }))
    return Role::Col;
  return Role::None;
}

enum class OpKind { FullParallel, RowReduction, RowParallel };

/// What `g` is in a row program over `full` whose rows span its last `k` dimensions.
std::optional<OpKind> kindOf(linalg::GenericOp g, ArrayRef<int64_t> full, unsigned k) {
  SmallVector<int64_t> loops = g.getStaticLoopRanges();
  SmallVector<utils::IteratorType> its = g.getIteratorTypesArray();
  unsigned n = full.size();
  auto isParallel = [](auto t) { return t == utils::IteratorType::parallel; };
  auto isReduction = [](auto t) { return t == utils::IteratorType::reduction; };
  bool allParallel = llvm::all_of(its, isParallel);
  if (ArrayRef<int64_t>(loops) == full && allParallel)
    return OpKind::FullParallel;
  if (ArrayRef<int64_t>(loops) == full && llvm::all_of(ArrayRef(its).take_back(k), isReduction) &&
      llvm::all_of(ArrayRef(its).drop_back(k), isParallel))
    return OpKind::RowReduction;
  if (n > k && ArrayRef<int64_t>(loops) == full.drop_back(k) && allParallel)
    return OpKind::RowParallel;
  return std::nullopt;
}

/// Whether `v` is a function argument read through views (a GroupNorm's expand_shape of its
/// input into groups): static reshapes, slices and casts, no pads.
bool isArgumentView(Value v, Block &body) {
  Operation *def = v.getDefiningOp();
  if (!def || !isViewOp(def))
    return false;
  for (; def && isViewOp(def); v = def->getOperand(0), def = v.getDefiningOp())
    if (isa<tensor::PadOp>(def) ||
        !cast<RankedTensorType>(def->getOperand(0).getType()).hasStaticShape() ||
        !cast<RankedTensorType>(def->getResult(0).getType()).hasStaticShape())
      return false;
  auto arg = dyn_cast<BlockArgument>(v);
  return arg && arg.getOwner() == &body;
}

/// The number of trailing reduction loops of `g` when all its reduction loops trail its parallel
/// ones (0 otherwise).
unsigned trailingReductions(linalg::GenericOp g) {
  SmallVector<utils::IteratorType> its = g.getIteratorTypesArray();
  unsigned k = 0;
  while (k < its.size() && its[its.size() - 1 - k] == utils::IteratorType::reduction)
    ++k;
  return k == g.getNumReductionLoops() ? k : 0;
}
} // namespace

namespace {
Attribute scalarConstant(Value v);
} // namespace

/// A full-space op whose result the function only returns may write it through a permutation
/// of its loops (a row program whose loops were interchanged: permuteRowLoops).
static bool isPermutedOutput(linalg::GenericOp g, unsigned i, Role r) {
  if (r != Role::None || i < g.getNumDpsInputs() || !g.getIndexingMapsArray()[i].isPermutation())
    return false;
  Value result = g->getResult(i - g.getNumDpsInputs());
  return !result.use_empty() && llvm::all_of(result.getUsers(), [](Operation *u) {
    return isa<func::ReturnOp>(u);
  });
}

static std::optional<RowShape> matchRowProgramAsIs(func::FuncOp f) {
  if (f.isExternal())
    return std::nullopt;
  Block &body = f.getBody().front();
  // The full shape: the input of the first reduction or softmax.
  std::optional<SmallVector<int64_t>> full;
  unsigned k = 1; // the row spans the last k dimensions of `full`
  unsigned compute = 0, rowOps = 0, softmaxes = 0;
  for (Operation &op : body.without_terminator()) {
    if (isCheapProducer(&op))
      continue;
    // Views of arguments are read through (as full tensors); views of computed values are not.
    if (isViewOp(&op)) {
      if (!isArgumentView(op.getResult(0), body))
        return std::nullopt;
      continue;
    }
    ++compute;
    if (auto s = dyn_cast<linalg::SoftmaxOp>(op)) {
      auto t = cast<RankedTensorType>(s.getInput().getType());
      if (!full)
        full = llvm::to_vector(t.getShape());
      ++rowOps;
      ++softmaxes;
      continue;
    }
    auto g = dyn_cast<linalg::GenericOp>(op);
    if (!g || !g.hasPureTensorSemantics())
      return std::nullopt;
    if (!full && g.getNumReductionLoops() >= 1 && trailingReductions(g) > 0) {
      full = g.getStaticLoopRanges();
      k = trailingReductions(g);
      ++rowOps;
    } else if (g.getNumReductionLoops() > 0) {
      ++rowOps;
    }
  }
  // A lone reduction keeps its own family (EmitReduction.cpp: more schedules for it); a lone
  // softmax over the last dimension is a row program (cache_row reads it once).
  bool loneSoftmax = compute == 1 && softmaxes == 1;
  if (!full || full->empty() || (compute < 2 && !loneSoftmax) || rowOps == 0 ||
      llvm::any_of(*full, ShapedType::isDynamic))
    return std::nullopt;
  unsigned n = full->size();
  // A whole-tensor reduction over several dimensions is no row program (one row: one block).
  if (k > 1 && k >= n)
    return std::nullopt;
  for (Operation &op : body.without_terminator()) {
    if (isCheapProducer(&op) || isViewOp(&op))
      continue;
    if (auto s = dyn_cast<linalg::SoftmaxOp>(op)) {
      auto t = cast<RankedTensorType>(s.getInput().getType());
      if (k != 1 || t.getShape() != ArrayRef<int64_t>(*full) || s.getDimension() != n - 1 ||
          !isa<FloatType>(t.getElementType()))
        return std::nullopt;
      continue;
    }
    auto g = cast<linalg::GenericOp>(op);
    std::optional<OpKind> kind = kindOf(g, *full, k);
    if (!kind)
      return std::nullopt;
    // A scan (a masked triangular reduction) keeps the scan family: O(C) per line, not O(C^2).
    if (g.getNumReductionLoops() > 0 && matchScan(g))
      return std::nullopt;
    // A payload may capture constants and gather from the function's arguments (the kernel's
    // parameters), nothing else (a gather from a value computed in the function).
    llvm::SetVector<Value> captured;
    getUsedValuesDefinedAbove(g.getRegion(), captured);
    for (Value v : captured)
      if (!matchPattern(v, m_Constant()) &&
          !(isa<BlockArgument>(v) && cast<BlockArgument>(v).getOwner() == &body))
        return std::nullopt;
    bool rowSpace = *kind == OpKind::RowParallel;
    for (auto [i, map] : llvm::enumerate(g.getIndexingMapsArray())) {
      Role r = roleOf(map, n, k, rowSpace);
      bool isInit = i >= g.getNumDpsInputs();
      // An argument read through views is a full tensor, read element by element.
      if (isArgumentView(g->getOperand(i), body)) {
        if (r != Role::Full || isInit)
          return std::nullopt;
        continue;
      }
      // A function argument read by a full-space op through any other map (a per-channel
      // weight [C] at c of [N, C] rows of [H, W]) is loaded per element through that map.
      if (r == Role::None && !isInit && !rowSpace && isa<BlockArgument>(g->getOperand(i)))
        continue;
      if (*kind == OpKind::FullParallel && isPermutedOutput(g, i, r)) {
        if (g.payloadUsesValueFromOperand(&g->getOpOperand(i)))
          return std::nullopt;
        continue;
      }
      if (r == Role::None)
        return std::nullopt;
      if (isInit) {
        Role want = *kind == OpKind::FullParallel ? Role::Full : Role::Row;
        if (r != want)
          return std::nullopt;
        // A read init must hold values: a constant fill or a row computed earlier (the
        // per-op lowering diagnoses reads of uninitialized tensors).
        Value init = g->getOperand(i);
        if (g.payloadUsesValueFromOperand(&g->getOpOperand(i)) &&
            init.getDefiningOp<tensor::EmptyOp>())
          return std::nullopt;
        // Full-tensor outputs are written, never read, in a row program.
        if (*kind == OpKind::FullParallel && g.payloadUsesValueFromOperand(&g->getOpOperand(i)))
          return std::nullopt;
      }
      // Column vectors and row vectors must be available per element: function arguments or
      // constants (columns), or row values computed earlier (rows).
      Value v = g->getOperand(i);
      if (r == Role::Col && !isa<BlockArgument>(v) &&
          !(v.getDefiningOp() && isCheapProducer(v.getDefiningOp())))
        return std::nullopt;
      // A dense (not splat) constant is read per element: only as a column vector, and only
      // one a kernel may embed (the per-op lowering diagnoses larger ones).
      if (v.getDefiningOp() && isCheapProducer(v.getDefiningOp())) {
        auto dense = dyn_cast_or_null<DenseElementsAttr>(scalarConstant(v));
        if (dense && (r != Role::Col || dense.getRawData().size() > kMaxKernelConstantBytes))
          return std::nullopt;
      }
    }
  }
  for (Value r : body.getTerminator()->getOperands()) {
    if (r.getDefiningOp() && isViewOp(r.getDefiningOp()))
      return std::nullopt;
    auto t = cast<RankedTensorType>(r.getType());
    // Written through a permutation of the loops: the full shape, permuted.
    if (auto g = r.getDefiningOp<linalg::GenericOp>()) {
      AffineMap m = g.getIndexingMapMatchingResult(cast<OpResult>(r));
      if (m.isPermutation() && !m.isIdentity()) {
        if (t.getShape() != ArrayRef<int64_t>(applyPermutationMap(m, ArrayRef<int64_t>(*full))))
          return std::nullopt;
        continue;
      }
    }
    if (t.getShape() != ArrayRef<int64_t>(*full) &&
        t.getShape() != ArrayRef<int64_t>(*full).drop_back(k))
      return std::nullopt;
  }
  RowShape shape;
  shape.rowDims.assign(full->begin(), full->end() - k);
  shape.colDims.assign(full->end() - k, full->end());
  shape.cols = 1;
  for (int64_t d : shape.colDims)
    shape.cols *= d;
  return shape;
}

/// The fewest rows a row program must have to be formed by interchanging loops.
constexpr int64_t kMinPermutedRows = 4096;

/// The loop order that puts the reduction loops of `f`'s first reduction last (their order
/// kept), when they are not last already: RMSNorm over the channels of NCHW reduces loop 1 of
/// (n, c, h, w); as (n, h, w, c) it is a row program whose rows are strided (a thread per row
/// reads a row's elements from lines the neighbouring threads read too).
static std::optional<SmallVector<unsigned>> rowLoopOrder(func::FuncOp f) {
  for (Operation &op : f.getBody().front().without_terminator()) {
    auto g = dyn_cast<linalg::GenericOp>(op);
    if (!g || g.getNumReductionLoops() == 0)
      continue;
    if (trailingReductions(g) > 0 || g.getNumParallelLoops() == 0)
      return std::nullopt;
    SmallVector<unsigned> order, reduced;
    for (auto [i, t] : llvm::enumerate(g.getIteratorTypesArray()))
      (t == utils::IteratorType::reduction ? reduced : order).push_back(i);
    order.append(reduced);
    return order;
  }
  return std::nullopt;
}

bool permuteRowLoops(func::FuncOp f) {
  if (matchRowProgramAsIs(f))
    return false;
  std::optional<SmallVector<unsigned>> order = rowLoopOrder(f);
  if (!order)
    return false;
  // Every generic over the first reduction's loop ranges takes the new order.
  SmallVector<int64_t> ranges;
  SmallVector<linalg::GenericOp> full;
  f.walk([&](linalg::GenericOp g) {
    if (ranges.empty() && g.getNumReductionLoops() > 0)
      ranges = g.getStaticLoopRanges();
  });
  f.walk([&](linalg::GenericOp g) {
    if (g.getStaticLoopRanges() == ranges)
      full.push_back(g);
  });
  IRRewriter rewriter(f.getContext());
  for (linalg::GenericOp g : full) {
    rewriter.setInsertionPoint(g);
    if (failed(linalg::interchangeGenericOp(rewriter, g, *order)))
      return false;
  }
  return true;
}

std::optional<RowShape> matchRowProgram(func::FuncOp f) {
  if (std::optional<RowShape> shape = matchRowProgramAsIs(f))
    return shape;
  // With its loops interchanged so that the reductions trail (on a copy: matching never changes
  // the function; lowerTask interchanges its own copy before emitting).
  if (f.isExternal() || !rowLoopOrder(f))
    return std::nullopt;
  OwningOpRef<func::FuncOp> copy(f.clone());
  if (!permuteRowLoops(*copy))
    return std::nullopt;
  std::optional<RowShape> shape = matchRowProgramAsIs(*copy);
  if (!shape)
    return std::nullopt;
  // Strided rows pay when there are many of them (a thread or a warp per row, neighbouring rows
  // neighbours in memory); a few long ones (a BatchNorm's statistics per channel) stay with the
  // per-op lowering, whose split reductions fill the GPU.
  int64_t rows = 1;
  for (int64_t d : shape->rowDims)
    rows *= d;
  if (rows < kMinPermutedRows)
    return std::nullopt;
  // And only to write full tensors (a normalisation: one pass over memory instead of two); a
  // reduction with row-wise epilogues only (a mean over dim 1) is the reduction family's.
  unsigned rank = shape->rowDims.size() + shape->colDims.size();
  if (llvm::none_of(f.getBody().front().getTerminator()->getOperands(), [&](Value v) {
        return cast<ShapedType>(v.getType()).getRank() == rank;
      }))
    return std::nullopt;
  shape->permuted = true;
  return shape;
}

namespace {
/// The scalar that a constant, or a fill with a constant, stands for (splats unwrapped); null
/// for anything else.
Attribute scalarConstant(Value v) {
  Attribute cst;
  if (auto fill = v.getDefiningOp<linalg::FillOp>())
    matchPattern(fill.value(), m_Constant(&cst));
  else
    matchPattern(v, m_Constant(&cst));
  if (auto splat = dyn_cast_or_null<SplatElementsAttr>(cst))
    return splat.getSplatValue<Attribute>();
  return cst;
}

/// A contiguous chunk of `vw` columns of the current row.
struct Chunk {
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
} // namespace

LogicalResult RowEmitter::validate() {
  Operation *anchor = task;
  vw = k.vectorWidth;
  // Vector accesses run along the last dimension; a chunk of vw columns stays inside it.
  // Only buffers read or written along the row may take vector accesses (full tensors, column
  // vectors, arguments read through other maps), not row vectors (a cross-entropy's i64 class
  // indices, read once per row).
  SmallVector<MemRefType> alongRow;
  for (MemRefType t : params)
    if (t.getShape() != ArrayRef<int64_t>(shape.rowDims) ||
        t.getShape() == ArrayRef<int64_t>(shape.colDims))
      alongRow.push_back(t);
  if (failed(checkVectorWidth(anchor, vw, shape.colDims.back(), alongRow,
                              shape.colDims.size() == 1 ? "row length" : "row's last dimension")))
    return failure();
  width = groups.width();
  numChunks = shape.cols / vw;
  int64_t widest = 0;
  for (MemRefType t : params)
    if (t.getRank() == fullRank() && t.getElementType().isIntOrFloat())
      widest = std::max<int64_t>(widest, t.getElementType().getIntOrFloatBitWidth() / 8);
  if (widest)
    rowElementBytes = widest;
  split = k.rowSplit;
  if (numChunks % split)
    return task.emitError() << "row_split=" << split << " does not divide the " << numChunks
                            << " chunks of vector_width=" << vw << " elements of the row ("
                            << shape.cols << ")";
  sliceChunks = numChunks / split;
  if (k.cacheRow) {
    if (sliceChunks % width)
      return task.emitError() << "cache_row needs the row (" << shape.cols
                              << (split > 1 ? ", per slice of row_split" : "")
                              << (split > 1 ? "=" + std::to_string(split) : "")
                              << ") to be a multiple of vector_width x threads per row (" << vw
                              << " x " << width << ")";
    if (sliceChunks / width * vw > 64)
      return task.emitError() << "cache_row would keep " << sliceChunks / width * vw
                              << " elements per thread in registers (at most 64)";
  }
  return success();
}

SmallVector<Value> RowEmitter::ivsAt(Value col) {
  SmallVector<Value> ivs(rowIdx.begin(), rowIdx.end());
  ivs.append(colIdx(col));
  return ivs;
}

SmallVector<Value> RowEmitter::colIdx(Value col) {
  if (shape.colDims.size() == 1)
    return {col};
  return kb->delinearize(col, shape.colDims);
}

SmallVector<Value> RowEmitter::colLanes(Value v, Chunk &c) {
  Type elt = getElementTypeOrSelf(v.getType());
  AffineMap id = AffineMap::getMultiDimIdentityMap(colRank(), task.getContext());
  if (v.getDefiningOp()) {
    Attribute cst = scalarConstant(v);
    if (auto dense = dyn_cast<DenseElementsAttr>(cst)) { // weights: read per column
      ValueSource src;
      src.kind = ValueSource::Kind::Constant;
      src.dense = dense;
      return loadLanes(*kb, src, id, elt, colIdx(c.col0), colRank() - 1, vw);
    }
    // A splat constant or a fill: the same in every lane.
    return SmallVector<Value>(vw, kb->constant(cast<TypedAttr>(cst)));
  }
  ValueSource src{ValueSource::Kind::Buffer, cast<BlockArgument>(v).getArgNumber(), {}};
  return loadLanes(*kb, src, id, elt, colIdx(c.col0), colRank() - 1, vw);
}

Value RowEmitter::rowValue(Value v) {
  auto it = rows.find(v);
  if (it != rows.end())
    return it->second;
  // Arguments and constants are materialized once, before the first pass over the row, so
  // that every pass (each in its own loop without cache_row) can use them.
  OpBuilder::InsertionGuard guard(kb->b);
  kb->b.setInsertionPoint(preamble);
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    bool scalar = cast<ShapedType>(v.getType()).getRank() == 0;
    Value x = memref::LoadOp::create(kb->b, kb->param(arg.getArgNumber()),
                                     scalar ? ValueRange() : ValueRange(rowIdx));
    rows[v] = x;
    return x;
  }
  auto typed = dyn_cast_or_null<TypedAttr>(scalarConstant(v));
  assert(typed && "row value used before it was computed");
  return rows[v] = kb->constant(typed);
}

SmallVector<Value> RowEmitter::full(Value v, Chunk &c) {
  auto it = c.memo.find(v);
  if (it != c.memo.end())
    return it->second;
  SmallVector<Value> lanes;
  Type elt = getElementTypeOrSelf(v.getType());
  unsigned n = fullRank();
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    ValueSource src{ValueSource::Kind::Buffer, arg.getArgNumber(), {}};
    lanes = loadLanes(*kb, src, AffineMap::getMultiDimIdentityMap(n, task.getContext()), elt,
                      ivsAt(c.col0), n - 1, vw);
  } else if (v.getDefiningOp() && isViewOp(v.getDefiningOp())) {
    // An argument through views (isArgumentView): one load per lane, through the views' maps.
    lanes = loadLanes(*kb, resolveValueSource(v, task),
                      AffineMap::getMultiDimIdentityMap(n, task.getContext()), elt, ivsAt(c.col0),
                      n - 1, vw);
  } else if (auto s = v.getDefiningOp<linalg::SoftmaxOp>()) {
    auto [max, inv] = softmaxStats.lookup(s);
    Type ct = max.getType();
    for (Value x : full(s.getInput(), c)) {
      Value e = math::ExpOp::create(kb->b, arith::SubFOp::create(kb->b, castTo(kb->b, loc, x, ct), max));
      lanes.push_back(castTo(kb->b, loc, arith::MulFOp::create(kb->b, e, inv), elt));
    }
  } else if (auto g = v.getDefiningOp<linalg::GenericOp>()) {
    SmallVector<SmallVector<Value>> results(g.getNumResults());
    clonePerLane(g, c, {}, [&](IRMapping &map) {
      for (auto [r, y] : llvm::enumerate(payloadResults(g, map)))
        results[r].push_back(y);
    });
    for (auto [r, res] : llvm::enumerate(g.getResults()))
      c.memo[res] = results[r];
    return c.memo[v];
  } else {
    lanes.assign(vw, kb->constant(cast<TypedAttr>(scalarConstant(v))));
  }
  c.memo[v] = lanes;
  return lanes;
}

void RowEmitter::clonePerLane(linalg::GenericOp g, Chunk &c, ArrayRef<Operation *> skip,
                              llvm::function_ref<void(IRMapping &)> use) {
  unsigned n = fullRank();
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  SmallVector<SmallVector<Value>> operands;
  for (auto [i, in] : llvm::enumerate(g.getDpsInputs())) {
    Role r = roleOf(maps[i], n, colRank(), false);
    if (r == Role::None) { // a function argument through its own map (matchRowProgram)
      SmallVector<Value> &lanes = c.mapped[{in, maps[i]}];
      if (lanes.empty()) {
        ValueSource src{ValueSource::Kind::Buffer, cast<BlockArgument>(in).getArgNumber(), {}};
        lanes = loadLanes(*kb, src, maps[i], getElementTypeOrSelf(in.getType()), ivsAt(c.col0),
                          n - 1, vw);
      }
      operands.push_back(lanes);
    } else if (r == Role::Full)
      operands.push_back(full(in, c));
    else if (r == Role::Col)
      operands.push_back(colLanes(in, c));
    else
      operands.push_back(SmallVector<Value>(vw, rowValue(in)));
  }
  // linalg.index reads the full tensor's indices of the lane (the one-hot pick of a
  // cross-entropy's target class).
  SmallVector<Value> ivs;
  if (g.hasIndexSemantics())
    ivs = ivsAt(c.col0);
  for (int64_t l = 0; l < vw; ++l) {
    SmallVector<Value> args;
    for (auto &o : operands)
      args.push_back(o[l]);
    for (Value init : g.getDpsInits())
      args.push_back(kb->constant(cast<TypedAttr>(
          kb->b.getZeroAttr(getElementTypeOrSelf(init.getType()))))); // never read
    IRMapping map;
    clonePayload(kb->b, g, args, ivs.empty() ? SmallVector<Value>() : laneIndices(*kb, ivs, n - 1, l),
                 skip, map);
    use(map);
  }
}

void RowEmitter::forEachChunk(llvm::function_ref<void(Chunk &)> body) {
  if (k.cacheRow) {
    for (Chunk &c : cached)
      body(c);
    return;
  }
  kb->forLoop(chunkBegin(), chunkEnd(), width, {}, [&](Value chunk, ValueRange) {
    Chunk c{kb->mul(chunk, vw), {}};
    body(c);
    return SmallVector<Value>{};
  });
}

Value RowEmitter::chunkBegin() { return split == 1 ? lane : kb->add(lane, sliceBase); }

Value RowEmitter::chunkEnd() {
  return split == 1 ? kb->idx(numChunks) : kb->add(sliceBase, sliceChunks);
}

Value RowEmitter::reduceRow(unsigned level, Type acc, Value identity,
                            function_ref<Value(Value, Value)> combineFn,
                            function_ref<SmallVector<Value>(Chunk &)> produce) {
  unsigned id = nextPartial++;
  Value partials = split > 1 ? kb->param(params.size() + id) : Value();
  if (split > 1 && level > pass)
    return identity; // a later kernel's reduction: nothing this kernel computes uses it
  if (split > 1 && level < pass) {
    // An earlier kernel's partials, combined in slice order: the same value in every kernel.
    return kb
        ->forLoop(kb->idx(0), kb->idx(split), 1, {identity},
                  [&](Value s, ValueRange total) {
                    Value x = memref::LoadOp::create(kb->b, partials, ValueRange{s, row});
                    return SmallVector<Value>{combineFn(total[0], x)};
                  })
        .front();
  }
  Value partial;
  if (k.cacheRow) {
    // vw independent chains over the cached chunks, then folded.
    SmallVector<Value> chains(vw, identity);
    for (Chunk &c : cached) {
      SmallVector<Value> xs = produce(c);
      for (int64_t l = 0; l < vw; ++l)
        chains[l] = combineFn(chains[l], castTo(kb->b, loc, xs[l], acc));
    }
    partial = chains[0];
    for (int64_t l = 1; l < vw; ++l)
      partial = combineFn(partial, chains[l]);
  } else {
    SmallVector<Value> init(vw, identity);
    // A long row walked by one thread (the naive l2norm: 65535 columns) accumulates in blocks:
    // a two-level sum (blockedForLoop).
    SmallVector<Value> chains = blockedForLoop(
        *kb, chunkBegin(), chunkEnd(), width, ceilDiv(sliceChunks, width), init,
        [&](unsigned, Value a, Value b) { return combineFn(a, b); },
        [&](Value chunk, ValueRange carried) {
          Chunk c{kb->mul(chunk, vw), {}};
          SmallVector<Value> xs = produce(c);
          SmallVector<Value> next;
          for (int64_t l = 0; l < vw; ++l)
            next.push_back(combineFn(carried[l], castTo(kb->b, loc, xs[l], acc)));
          return next;
        });
    partial = chains[0];
    for (int64_t l = 1; l < vw; ++l)
      partial = combineFn(partial, chains[l]);
  }
  // Each block reduction gets its own shared buffer: no reuse hazards between passes.
  Value total = groups.reduce(
      *kb, partial, [&] { return kb->workgroup(nextSmem++); }, [&] { return identity; },
      combineFn);
  if (split == 1)
    return total;
  // This kernel's reduction: the slice's partial, for the later kernels.
  auto store = [&] {
    memref::StoreOp::create(kb->b, total, partials, ValueRange{slice, row});
  };
  if (groups.strategy == ReductionStrategy::Thread)
    store();
  else
    kb->ifThen(kb->eq(lane, 0), store);
  return identity;
}

LogicalResult RowEmitter::visit(Operation &op) {
  if (auto s = dyn_cast<linalg::SoftmaxOp>(op)) {
    Type ct = accumulatorType(getElementTypeOrSelf(s.getInput().getType()));
    Value negInf = kb->constant(FloatAttr::get(
        ct, APFloat::getInf(cast<FloatType>(ct).getFloatSemantics(), /*Negative=*/true)));
    Value zero = kb->constant(FloatAttr::get(ct, 0.0));
    auto maxFn = [&](Value a, Value b) -> Value { return arith::MaximumFOp::create(kb->b, a, b); };
    auto addFn = [&](Value a, Value b) -> Value { return arith::AddFOp::create(kb->b, a, b); };
    unsigned level = passOf.lookup(s);
    if (onlineSoftmax()) {
      auto [max, sum] = onlineMaxSum(ct, [&](Chunk &c) { return full(s.getInput(), c); });
      softmaxStats[s] = {max, arith::DivFOp::create(kb->b, kb->constant(FloatAttr::get(ct, 1.0)), sum)};
      return success();
    }
    Value max =
        reduceRow(level, ct, negInf, maxFn, [&](Chunk &c) { return full(s.getInput(), c); });
    Value sum = reduceRow(level + 1, ct, zero, addFn, [&](Chunk &c) {
      SmallVector<Value> es;
      for (Value x : full(s.getInput(), c))
        es.push_back(math::ExpOp::create(kb->b, arith::SubFOp::create(kb->b, castTo(kb->b, loc, x, ct), max)));
      return es;
    });
    Value inv = arith::DivFOp::create(kb->b, kb->constant(FloatAttr::get(ct, 1.0)), sum);
    softmaxStats[s] = {max, inv};
    return success();
  }
  auto g = dyn_cast<linalg::GenericOp>(op);
  if (!g)
    return success(); // cheap producers are materialized where they are used
  std::optional<OpKind> kind = kindOf(g, [&] {
    SmallVector<int64_t> f(shape.rowDims.begin(), shape.rowDims.end());
    f.append(shape.colDims.begin(), shape.colDims.end());
    return f;
  }(), colRank());
  if (*kind == OpKind::FullParallel)
    return success(); // computed on demand
  if (*kind == OpKind::RowParallel) {
    SmallVector<Value> args;
    for (Value in : g.getDpsInputs())
      args.push_back(rowValue(in));
    for (OpOperand &init : g.getDpsInitsMutable())
      args.push_back(g.payloadUsesValueFromOperand(&init)
                         ? rowValue(init.get())
                         : kb->constant(cast<TypedAttr>(
                               kb->b.getZeroAttr(getElementTypeOrSelf(init.get().getType())))));
    IRMapping map;
    clonePayload(kb->b, g, args, rowIdx, {}, map);
    for (auto [r, y] : llvm::enumerate(payloadResults(g, map)))
      rows[g.getResult(r)] = y;
    return success();
  }
  if (foldedEarly.contains(g))
    return success();
  if (linalg::GenericOp var = onlineMomentsFit() ? centredSquaresAfterSum(g) : linalg::GenericOp()) {
    // A sum and the sum of squared distances to its mean: both in one pass over the row; the
    // sum is given back as mean * cols for the mean's own op.
    Type acc = getElementTypeOrSelf(g.getResult(0).getType());
    auto [mean, m2] =
        onlineMoments(acc, [&](Chunk &c) { return full(g.getDpsInputs()[0], c); });
    rows[g.getResult(0)] = arith::MulFOp::create(
        kb->b, loc, mean, kb->constant(FloatAttr::get(acc, double(shape.cols))));
    rows[var.getResult(0)] = m2;
    foldedEarly.insert(var);
    return success();
  }
  if (linalg::GenericOp sum = onlineSoftmax() ? expSumAfterMax(g) : linalg::GenericOp()) {
    // A max and the sum of exp(x - max) after it: both in one pass over the row.
    Type acc = accumulatorType(getElementTypeOrSelf(g.getResult(0).getType()));
    auto [max, total] = onlineMaxSum(acc, [&](Chunk &c) { return full(g.getDpsInputs()[0], c); });
    rows[g.getResult(0)] = max;
    rows[sum.getResult(0)] = total;
    foldedEarly.insert(sum);
    return success();
  }
  // A reduction over the row: `yield combine(f(ins), out)` per result.
  unsigned numIn = g.getNumDpsInputs();
  Block &body = g.getRegion().front();
  for (unsigned o = 0; o < g.getNumResults(); ++o) {
    BlockArgument out = body.getArgument(numIn + o);
    Operation *comb = out.hasOneUse() ? *out.getUsers().begin() : nullptr;
    if (!comb || comb->getNumOperands() != 2 || !arith::getNeutralElement(comb))
      return g.emitError("a row program's reduction needs a payload `yield combine(f(ins), out)` "
                         "with an associative arith combiner");
    unsigned valueOperand = comb->getOperand(0) == out ? 1 : 0;
    Type elt = getElementTypeOrSelf(g.getResult(o).getType());
    Type acc = accumulatorType(elt);
    Value identity = combinerIdentity(kb->b, loc, comb, acc);
    auto fn = [&](Value a, Value b) { return combine(kb->b, loc, comb, a, b); };
    Value total = reduceRow(passOf.lookup(g), acc, identity, fn, [&](Chunk &c) {
      SmallVector<Value> xs;
      clonePerLane(g, c, {comb}, [&](IRMapping &map) {
        xs.push_back(map.lookupOrDefault(comb->getOperand(valueOperand)));
      });
      return xs;
    });
    Value init = castTo(kb->b, loc, rowValue(g.getDpsInits()[o]), acc);
    rows[g.getResult(o)] = castTo(kb->b, loc, fn(init, total), elt);
  }
  return success();
}

bool RowEmitter::onlineSoftmax() const {
  // Measured on the H200 (docs/bench.md): rows of 65536 f32 took 0.97 ms online against 1.03 in
  // two passes; rows of 4096 (16 KiB, whose second read mostly hits the caches) 0.072 against
  // 0.052, the online step's dependent chain (exp of the distance to the running max, then the
  // rescale) costing more than the read it saves. So: rows of 64 KiB or more.
  int64_t bytes = shape.cols * rowElementBytes;
  return !k.cacheRow && split == 1 && bytes >= 65536 && ceilDiv(numChunks, width) <= 1024;
}

std::pair<Value, Value>
RowEmitter::onlineMaxSum(Type acc, function_ref<SmallVector<Value>(Chunk &)> produce) {
  auto &b = kb->b;
  auto fty = cast<FloatType>(acc);
  Value negInf = kb->constant(FloatAttr::get(acc, APFloat::getInf(fty.getFloatSemantics(), true)));
  Value posInf = kb->constant(FloatAttr::get(acc, APFloat::getInf(fty.getFloatSemantics())));
  Value zero = kb->constant(FloatAttr::get(acc, 0.0));
  Value one = kb->constant(FloatAttr::get(acc, 1.0));
  auto cmp = [&](arith::CmpFPredicate p, Value a, Value c) {
    return arith::CmpFOp::create(b, loc, p, a, c);
  };
  // One element x into (m, s): one exp, of minus the distance to the running max.
  auto step = [&](Value m, Value s, Value x) -> std::pair<Value, Value> {
    Value d = arith::SubFOp::create(b, loc, x, m);
    Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, math::AbsFOp::create(b, loc, d)));
    e = arith::SelectOp::create(b, loc, cmp(arith::CmpFPredicate::OEQ, x, negInf), zero, e);
    Value above = cmp(arith::CmpFPredicate::OGT, d, zero); // false for NaN
    Value rescaled = arith::AddFOp::create(b, loc, arith::MulFOp::create(b, loc, s, e), one);
    Value added = arith::AddFOp::create(b, loc, s, e);
    return {arith::MaximumFOp::create(b, loc, m, x),
            arith::SelectOp::create(b, loc, above, rescaled, added)};
  };
  // Two pairs into one.
  auto merge = [&](Value m1, Value s1, Value m2, Value s2) -> std::pair<Value, Value> {
    Value m = arith::MaximumFOp::create(b, loc, m1, m2);
    auto scaled = [&](Value mi, Value si) -> Value {
      Value f = arith::MulFOp::create(
          b, loc, si, math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, mi, m)));
      return arith::SelectOp::create(b, loc, cmp(arith::CmpFPredicate::OEQ, mi, negInf), zero, f);
    };
    return {m, arith::AddFOp::create(b, loc, scaled(m1, s1), scaled(m2, s2))};
  };
  // vw independent chains over this thread's chunks, then merged.
  SmallVector<Value> init;
  for (int64_t l = 0; l < vw; ++l)
    init.append({negInf, zero});
  SmallVector<Value> chains =
      kb->forLoop(chunkBegin(), chunkEnd(), width, init, [&](Value chunk, ValueRange carried) {
        Chunk c{kb->mul(chunk, vw), {}};
        SmallVector<Value> xs = produce(c);
        SmallVector<Value> next;
        for (int64_t l = 0; l < vw; ++l) {
          auto [m, s] = step(carried[2 * l], carried[2 * l + 1], castTo(b, loc, xs[l], acc));
          next.append({m, s});
        }
        return next;
      });
  Value m = chains[0], s = chains[1];
  for (int64_t l = 1; l < vw; ++l)
    std::tie(m, s) = merge(m, s, chains[2 * l], chains[2 * l + 1]);
  // Across the threads of the row: a butterfly over the warp, then (block) the warps' pairs
  // through shared memory, folded by every thread in warp order.
  auto warpMerge = [&] {
    for (int32_t offset = 16; offset >= 1; offset /= 2) {
      Value m2 = gpu::ShuffleOp::create(b, m, offset, 32, gpu::ShuffleMode::XOR).getShuffleResult();
      Value s2 = gpu::ShuffleOp::create(b, s, offset, 32, gpu::ShuffleMode::XOR).getShuffleResult();
      std::tie(m, s) = merge(m, s, m2, s2);
    }
  };
  if (groups.strategy != ReductionStrategy::Thread) {
    if (groups.strategy == ReductionStrategy::Block && groups.needsWorkgroupBuffer()) {
      Value smemM = kb->workgroup(nextSmem++), smemS = kb->workgroup(nextSmem++);
      Value tid = kb->threadId();
      gpu::BarrierOp::create(b);
      warpMerge();
      kb->ifThen(kb->eq(kb->rem(tid, 32), 0), [&] {
        memref::StoreOp::create(b, m, smemM, ValueRange{kb->div(tid, 32)});
        memref::StoreOp::create(b, s, smemS, ValueRange{kb->div(tid, 32)});
      });
      gpu::BarrierOp::create(b);
      Value tm = negInf, ts = zero;
      for (int64_t w = 0; w < k.blockSize / 32; ++w)
        std::tie(tm, ts) = merge(tm, ts, memref::LoadOp::create(b, smemM, ValueRange{kb->idx(w)}),
                                 memref::LoadOp::create(b, smemS, ValueRange{kb->idx(w)}));
      m = tm;
      s = ts;
    } else {
      warpMerge();
    }
  }
  // The two passes' sum holds exp(inf - inf) = NaN when the max is +inf.
  Value nan = kb->constant(FloatAttr::get(acc, APFloat::getNaN(fty.getFloatSemantics())));
  s = arith::SelectOp::create(b, loc, cmp(arith::CmpFPredicate::OEQ, m, posInf), nan, s);
  return {m, s};
}

linalg::GenericOp RowEmitter::expSumAfterMax(linalg::GenericOp max) {
  // max: one full input x, `yield maximumf(in, out)`, init -inf.
  auto isNegInf = [](Value v) {
    auto f = dyn_cast_or_null<FloatAttr>(scalarConstant(v));
    return f && f.getValue().isInfinity() && f.getValue().isNegative();
  };
  auto isZero = [](Value v) {
    auto f = dyn_cast_or_null<FloatAttr>(scalarConstant(v));
    return f && f.getValue().isPosZero();
  };
  unsigned n = fullRank();
  if (max.getNumDpsInputs() != 1 || max.getNumResults() != 1 || !isNegInf(max.getDpsInits()[0]))
    return {};
  Type elt = getElementTypeOrSelf(max.getResult(0).getType());
  if (!isa<FloatType>(elt) || accumulatorType(elt) != elt ||
      getElementTypeOrSelf(max.getDpsInputs()[0].getType()) != elt ||
      roleOf(max.getIndexingMapsArray()[0], n, colRank(), false) != Role::Full)
    return {};
  Block &mb = max.getRegion().front();
  auto myield = cast<linalg::YieldOp>(mb.getTerminator());
  auto mop = myield.getOperand(0).getDefiningOp<arith::MaximumFOp>();
  if (!mop || &mb.front() != mop.getOperation() ||
      !((mop.getLhs() == mb.getArgument(0) && mop.getRhs() == mb.getArgument(1)) ||
        (mop.getLhs() == mb.getArgument(1) && mop.getRhs() == mb.getArgument(0))))
    return {};
  // The sum: the only other user of max's result among the later reductions, reading the same x
  // at the same point: `yield addf(exp(subf(x, max)), out)`, init 0.
  Value x = max.getDpsInputs()[0], r = max.getResult(0);
  for (Operation *user : r.getUsers()) {
    auto sum = dyn_cast<linalg::GenericOp>(user);
    if (!sum || sum.getNumDpsInputs() != 2 || sum.getNumResults() != 1 ||
        sum.getNumReductionLoops() != max.getNumReductionLoops() || sum.getDpsInputs()[0] != x ||
        sum.getDpsInputs()[1] != r || !isZero(sum.getDpsInits()[0]) ||
        getElementTypeOrSelf(sum.getResult(0).getType()) != elt ||
        sum.getIndexingMapsArray()[0] != max.getIndexingMapsArray()[0] ||
        roleOf(sum.getIndexingMapsArray()[1], n, colRank(), false) != Role::Row)
      continue;
    Block &sb = sum.getRegion().front();
    auto syield = cast<linalg::YieldOp>(sb.getTerminator());
    auto add = syield.getOperand(0).getDefiningOp<arith::AddFOp>();
    if (!add || std::distance(sb.begin(), sb.end()) != 4)
      continue;
    Value other = add.getLhs() == sb.getArgument(2) ? add.getRhs() : add.getLhs();
    if (add.getLhs() != sb.getArgument(2) && add.getRhs() != sb.getArgument(2))
      continue;
    auto e = other.getDefiningOp<math::ExpOp>();
    auto d = e ? e.getOperand().getDefiningOp<arith::SubFOp>() : arith::SubFOp();
    if (!d || d.getLhs() != sb.getArgument(0) || d.getRhs() != sb.getArgument(1))
      continue;
    // No reduction in between: the two take the shared buffers emit() made for them in order.
    if (sum->getBlock() != max->getBlock() || !max->isBeforeInBlock(sum))
      continue;
    bool between = false;
    for (Operation *op = max->getNextNode(); op != sum.getOperation(); op = op->getNextNode())
      if (isa<linalg::SoftmaxOp>(op) ||
          (isa<linalg::GenericOp>(op) && cast<linalg::GenericOp>(op).getNumReductionLoops()))
        between = true;
    if (between)
      continue;
    return sum;
  }
  return {};
}

bool RowEmitter::onlineMomentsFit() const {
  // Equal counts per thread make every merge's weights compile-time constants. Rows under
  // 64 KiB are re-read from the caches, where the two passes are cheaper than Welford's
  // division per step (as for onlineSoftmax); a thread's chain stays short (a long one keeps
  // the two passes' two-level sums).
  int64_t bytes = shape.cols * rowElementBytes;
  return !k.cacheRow && split == 1 && bytes >= 65536 && numChunks % width == 0 &&
         numChunks / width <= 1024;
}

linalg::GenericOp RowEmitter::centredSquaresAfterSum(linalg::GenericOp sum) {
  auto isZero = [](Value v) {
    auto f = dyn_cast_or_null<FloatAttr>(scalarConstant(v));
    return f && f.getValue().isZero();
  };
  // `yield op(a, b)` (either order) as the block's only op before the yield, or null.
  auto onlyOp = [](Block &b, unsigned numOps) -> Operation * {
    if (static_cast<unsigned>(std::distance(b.begin(), b.end())) != numOps + 1)
      return nullptr;
    return cast<linalg::YieldOp>(b.getTerminator()).getOperand(0).getDefiningOp();
  };
  auto isPair = [](Operation *op, Value a, Value b) {
    return op && ((op->getOperand(0) == a && op->getOperand(1) == b) ||
                  (op->getOperand(0) == b && op->getOperand(1) == a));
  };
  unsigned n = fullRank();
  if (sum.getNumDpsInputs() != 1 || sum.getNumResults() != 1 || !isZero(sum.getDpsInits()[0]))
    return {};
  Type elt = getElementTypeOrSelf(sum.getResult(0).getType());
  Value x = sum.getDpsInputs()[0];
  if (!isa<FloatType>(elt) || accumulatorType(elt) != elt ||
      getElementTypeOrSelf(x.getType()) != elt ||
      roleOf(sum.getIndexingMapsArray()[0], n, colRank(), false) != Role::Full)
    return {};
  Block &sb = sum.getRegion().front();
  if (!isPair(onlyOp(sb, 1), sb.getArgument(0), sb.getArgument(1)) ||
      !isa<arith::AddFOp>(onlyOp(sb, 1)))
    return {};
  // `in / cols` or `in * (1 / cols)` (exactly), the constant from outside the payload.
  auto isMeanOf = [&](Operation *op, Value in) {
    auto cst = [&](Value v) -> std::optional<double> {
      if (v.getParentBlock() == op->getBlock())
        return std::nullopt;
      auto f = dyn_cast_or_null<FloatAttr>(scalarConstant(v));
      return f ? std::optional<double>(f.getValueAsDouble()) : std::nullopt;
    };
    if (auto div = dyn_cast_or_null<arith::DivFOp>(op))
      return div.getLhs() == in && cst(div.getRhs()) == double(shape.cols);
    if (auto mul = dyn_cast_or_null<arith::MulFOp>(op)) {
      Value other = mul.getLhs() == in ? mul.getRhs() : mul.getLhs();
      std::optional<double> c = cst(other);
      return (mul.getLhs() == in || mul.getRhs() == in) && c && *c * double(shape.cols) == 1.0;
    }
    return false;
  };
  // The mean: its own row-wise op (`mean = sum / cols`), or computed inside the variance's
  // payload from the sum (as elementwise fusion leaves it).
  SmallVector<Value> means{sum.getResult(0)};
  for (Operation *user : sum.getResult(0).getUsers())
    if (auto mean = dyn_cast<linalg::GenericOp>(user);
        mean && !mean.getNumReductionLoops() && mean.getNumDpsInputs() == 1 &&
        mean.getNumResults() == 1 && mean->getBlock() == sum->getBlock()) {
      Block &mb = mean.getRegion().front();
      if (isMeanOf(onlyOp(mb, 1), mb.getArgument(0)))
        means.push_back(mean.getResult(0));
    }
  for (Value meanOrSum : means) {
    bool inPayload = meanOrSum == sum.getResult(0);
    // var = sum over the row of (x - mean)^2, the same x at the same point.
    for (Operation *user : meanOrSum.getUsers()) {
      auto var = dyn_cast<linalg::GenericOp>(user);
      if (!var || var.getNumDpsInputs() != 2 || var.getNumResults() != 1 ||
          var.getNumReductionLoops() != sum.getNumReductionLoops() ||
          var.getDpsInputs()[0] != x || var.getDpsInputs()[1] != meanOrSum ||
          !isZero(var.getDpsInits()[0]) ||
          getElementTypeOrSelf(var.getResult(0).getType()) != elt ||
          var.getIndexingMapsArray()[0] != sum.getIndexingMapsArray()[0] ||
          roleOf(var.getIndexingMapsArray()[1], n, colRank(), false) != Role::Row ||
          var->getBlock() != sum->getBlock() || !sum->isBeforeInBlock(var))
        continue;
      Block &vb = var.getRegion().front();
      Operation *add = onlyOp(vb, inPayload ? 4 : 3);
      if (!isa_and_nonnull<arith::AddFOp>(add))
        continue;
      Value sq = add->getOperand(0) == vb.getArgument(2) ? add->getOperand(1) : add->getOperand(0);
      auto mul = sq.getDefiningOp<arith::MulFOp>();
      auto d = mul ? mul.getLhs().getDefiningOp<arith::SubFOp>() : arith::SubFOp();
      if (!isPair(add, sq, vb.getArgument(2)) || !mul || mul.getLhs() != mul.getRhs() || !d ||
          d.getLhs() != vb.getArgument(0))
        continue;
      if (inPayload ? !isMeanOf(d.getRhs().getDefiningOp(), vb.getArgument(1))
                    : d.getRhs() != vb.getArgument(1))
        continue;
      // No reduction in between: the two take the shared buffers emit() made for them in order.
      bool between = false;
      for (Operation *op = sum->getNextNode(); op != var.getOperation(); op = op->getNextNode())
        if (isa<linalg::SoftmaxOp>(op) ||
            (isa<linalg::GenericOp>(op) && cast<linalg::GenericOp>(op).getNumReductionLoops()))
          between = true;
      if (!between)
        return var;
    }
  }
  return {};
}

std::pair<Value, Value>
RowEmitter::onlineMoments(Type acc, function_ref<SmallVector<Value>(Chunk &)> produce) {
  auto &b = kb->b;
  auto c = [&](double v) { return kb->constant(FloatAttr::get(acc, v)); };
  auto add = [&](Value x, Value y) -> Value { return arith::AddFOp::create(b, loc, x, y); };
  auto sub = [&](Value x, Value y) -> Value { return arith::SubFOp::create(b, loc, x, y); };
  auto mul = [&](Value x, Value y) -> Value { return arith::MulFOp::create(b, loc, x, y); };
  // Two partials of na and nb elements into one (Chan et al.): the weights are constants, since
  // every thread folds numChunks / width chunks.
  auto merge = [&](Value ma, Value qa, Value mb, Value qb, double na, double nb) {
    Value d = sub(mb, ma);
    Value m = add(ma, mul(d, c(nb / (na + nb))));
    Value q = add(add(qa, qb), mul(mul(d, d), c(na * nb / (na + nb))));
    return std::pair<Value, Value>{m, q};
  };
  // Welford per chain: vw chains (one per lane of a chunk), the step's 1 / count shared.
  SmallVector<Value> init{c(0)};
  for (int64_t l = 0; l < vw; ++l)
    init.append({c(0), c(0)});
  SmallVector<Value> chains =
      kb->forLoop(chunkBegin(), chunkEnd(), width, init, [&](Value chunk, ValueRange carried) {
        Chunk ch{kb->mul(chunk, vw), {}};
        SmallVector<Value> xs = produce(ch);
        Value count = add(carried[0], c(1));
        Value r = arith::DivFOp::create(b, loc, c(1), count);
        SmallVector<Value> next{count};
        for (int64_t l = 0; l < vw; ++l) {
          Value x = castTo(b, loc, xs[l], acc), m = carried[1 + 2 * l], q = carried[2 + 2 * l];
          Value d = sub(x, m);
          Value m2 = add(m, mul(d, r));
          next.append({m2, add(q, mul(d, sub(x, m2)))});
        }
        return next;
      });
  double perChain = double(numChunks / width);
  Value m = chains[1], q = chains[2];
  for (int64_t l = 1; l < vw; ++l)
    std::tie(m, q) = merge(m, q, chains[1 + 2 * l], chains[2 + 2 * l], perChain * l, perChain);
  double perThread = perChain * vw;
  // Across the threads of the row: a butterfly over the warp (partners of equal counts: the same
  // result in both), then (block) the warps' partials through shared memory, folded in order.
  auto warpMerge = [&] {
    double n = perThread;
    for (int32_t offset = 16; offset >= 1; offset /= 2, n *= 2) {
      Value m2 = gpu::ShuffleOp::create(b, m, offset, 32, gpu::ShuffleMode::XOR).getShuffleResult();
      Value q2 = gpu::ShuffleOp::create(b, q, offset, 32, gpu::ShuffleMode::XOR).getShuffleResult();
      Value d = sub(m2, m);
      Value mm = mul(add(m, m2), c(0.5));
      q = add(add(q, q2), mul(mul(d, d), c(n / 2)));
      m = mm;
    }
  };
  if (groups.strategy != ReductionStrategy::Thread) {
    warpMerge();
    if (groups.strategy == ReductionStrategy::Block && groups.needsWorkgroupBuffer()) {
      Value smemM = kb->workgroup(nextSmem++), smemQ = kb->workgroup(nextSmem++);
      Value tid = kb->threadId();
      gpu::BarrierOp::create(b);
      kb->ifThen(kb->eq(kb->rem(tid, 32), 0), [&] {
        memref::StoreOp::create(b, m, smemM, ValueRange{kb->div(tid, 32)});
        memref::StoreOp::create(b, q, smemQ, ValueRange{kb->div(tid, 32)});
      });
      gpu::BarrierOp::create(b);
      double perWarp = perThread * 32;
      Value tm = memref::LoadOp::create(b, smemM, ValueRange{kb->idx(0)});
      Value tq = memref::LoadOp::create(b, smemQ, ValueRange{kb->idx(0)});
      for (int64_t w = 1; w < k.blockSize / 32; ++w)
        std::tie(tm, tq) = merge(tm, tq, memref::LoadOp::create(b, smemM, ValueRange{kb->idx(w)}),
                                 memref::LoadOp::create(b, smemQ, ValueRange{kb->idx(w)}),
                                 perWarp * w, perWarp);
      m = tm;
      q = tq;
    }
  }
  return {m, q};
}

void RowEmitter::analyzePasses() {
  // The pass of a value: how many reductions must be complete before it can be computed (0 for
  // arguments and constants). A reduction is folded in the pass of its inputs and its result
  // belongs to the next; softmax's max and sum are two reductions in sequence.
  DenseMap<Value, unsigned> level;
  auto levelOf = [&](ValueRange vs) {
    unsigned l = 0;
    for (Value v : vs)
      l = std::max(l, level.lookup(v));
    return l;
  };
  for (Operation &op : task.getBody().front().without_terminator()) {
    if (auto s = dyn_cast<linalg::SoftmaxOp>(op)) {
      unsigned l = levelOf(s.getInput());
      passOf[s] = l;
      Type ct = accumulatorType(getElementTypeOrSelf(s.getInput().getType()));
      partialTypes.append({ct, ct});
      level[s->getResult(0)] = l + 2;
      lastPass = std::max(lastPass, l + 2);
      continue;
    }
    auto g = dyn_cast<linalg::GenericOp>(op);
    if (!g || g.getNumReductionLoops() == 0) {
      unsigned l = levelOf(op.getOperands());
      for (Value r : op.getResults())
        level[r] = l;
      continue;
    }
    unsigned l = levelOf(g.getDpsInputs());
    passOf[g] = l;
    unsigned inits = levelOf(g.getDpsInits());
    for (Value r : g.getResults()) {
      partialTypes.push_back(accumulatorType(getElementTypeOrSelf(r.getType())));
      level[r] = std::max(l + 1, inits);
    }
    lastPass = std::max(lastPass, l + 1);
  }
}

FailureOr<LoweredTask> RowEmitter::emit(EmitContext &ctx) {
  FailureOr<SmallVector<MemRefType>> p = taskParamTypes(task);
  if (failed(p))
    return failure();
  params = *p;
  loc = task.getLoc();
  if (failed(validate()))
    return failure();
  const int64_t bs = k.blockSize;
  int64_t numRows = 1;
  for (int64_t d : shape.rowDims)
    numRows *= d;
  int64_t rowsPerBlock = groups.pointsPerBlock();
  int64_t grid = ceilDiv(numRows, rowsPerBlock);

  // One shared buffer per block-wide reduction (reductions of all kinds use f32/f64/i32/i64).
  SmallVector<MemRefType> workgroup;
  if (groups.needsWorkgroupBuffer())
    for (Operation &op : task.getBody().front()) {
      unsigned count = 0;
      Type acc;
      if (auto s = dyn_cast<linalg::SoftmaxOp>(op)) {
        count = 2;
        acc = accumulatorType(getElementTypeOrSelf(s.getInput().getType()));
      } else if (auto g = dyn_cast<linalg::GenericOp>(op); g && g.getNumReductionLoops()) {
        count = g.getNumResults();
        acc = accumulatorType(getElementTypeOrSelf(g.getResult(0).getType()));
      }
      for (unsigned i = 0; i < count; ++i)
        workgroup.push_back(workgroupBuffer(task.getContext(), bs / 32, acc));
    }
  numSmem = workgroup.size();

  // row_split: one scratch buffer of partials [S, rows] per reduction, after the task's buffers.
  SmallVector<MemRefType> kernelParams(params.begin(), params.end());
  SmallVector<BufferDesc> scratch;
  if (split > 1) {
    analyzePasses();
    int64_t bytes = 0;
    for (Type t : partialTypes) {
      kernelParams.push_back(MemRefType::get({split, numRows}, t));
      scratch.push_back({"", BufferRole::Scratch, kernelParams.back()});
      bytes += split * numRows * (t.getIntOrFloatBitWidth() / 8);
    }
    if (bytes > (int64_t(256) << 20))
      return task.emitError() << "row_split=" << split << " would need " << bytes
                              << " bytes of partials (at most 256 MiB)";
  }
  SmallVector<std::string> names;
  for (unsigned kp = 0; kp <= (split > 1 ? lastPass : 0); ++kp) {
    names.push_back(kp == 0 ? ctx.kernelName : ctx.kernelName + "_s" + std::to_string(kp));
    if (failed(emitKernel(ctx, names.back(), kp, kernelParams, workgroup, numRows)))
      return failure();
  }
  LoweredTask lowered =
      singleKernel(TaskFamily::Rows, ctx, {grid, split, 1}, {bs, 1, 1}, kernelParams.size());
  lowered.scratch = scratch;
  for (StringRef name : ArrayRef(names).drop_front()) {
    KernelLaunch launch = lowered.launches.front();
    launch.kernel = name.str();
    lowered.launches.push_back(launch);
  }
  return lowered;
}

LogicalResult RowEmitter::emitKernel(EmitContext &ctx, StringRef name, unsigned kernelPass,
                                     ArrayRef<MemRefType> kernelParams,
                                     ArrayRef<MemRefType> workgroup, int64_t numRows) {
  // Fresh per-kernel state: nothing computed in one kernel is visible in the next.
  pass = kernelPass;
  rows.clear();
  softmaxStats.clear();
  foldedEarly.clear();
  cached.clear();
  nextSmem = 0;
  nextPartial = 0;
  const int64_t bs = k.blockSize;
  int64_t rowsPerBlock = groups.pointsPerBlock();
  kb = std::make_unique<KernelBuilder>(ctx.module, name, kernelParams, workgroup,
                                       std::array<int64_t, 3>{bs, 1, 1}, loc);
  Value tid = kb->threadId(), bid = kb->blockId();
  std::tie(row, lane) = groups.pointAndLane(*kb, tid, bid);
  if (split > 1) {
    slice = kb->blockId(gpu::Dimension::y);
    sliceBase = kb->mul(slice, sliceChunks);
  }
  // Only the last kernel writes the outputs (row_split: the others fold their pass's partials).
  bool writes = split == 1 || pass == lastPass;
  LogicalResult status = success();
  auto body = [&] {
    rowIdx = kb->delinearize(row, shape.rowDims);
    preamble = kb->idx(0).getDefiningOp();
    if (k.cacheRow)
      for (int64_t c = 0; c < sliceChunks / width; ++c)
        cached.push_back({kb->mul(kb->add(chunkBegin(), c * width), vw), {}});
    for (Operation &op : task.getBody().front().without_terminator())
      if (failed(visit(op)))
        status = failure();
    if (failed(status) || !writes)
      return;
    auto ret = cast<func::ReturnOp>(task.getBody().front().getTerminator());
    unsigned numArgs = task.getNumArguments();
    unsigned n = fullRank();
    for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
      unsigned param = numArgs + i;
      if (cast<ShapedType>(v.getType()).getRank() == n) {
        // Through the op's own output map: the identity, or a permutation of interchanged loops.
        AffineMap map = AffineMap::getMultiDimIdentityMap(n, task.getContext());
        if (auto g = v.getDefiningOp<linalg::GenericOp>())
          map = g.getIndexingMapMatchingResult(cast<OpResult>(v));
        forEachChunk([&](Chunk &c) {
          storeLanes(*kb, param, map, ivsAt(c.col0), n - 1, full(v, c));
        });
      } else {
        Value y = rowValue(v);
        // One thread per row writes it: lane 0 (of slice 0).
        Value first = kb->eq(lane, 0);
        if (split > 1)
          first = arith::AndIOp::create(kb->b, first, kb->eq(slice, 0));
        kb->ifThen(first, [&] {
          memref::StoreOp::create(kb->b, y, kb->param(param),
                                  shape.rowDims.empty() ? ValueRange() : ValueRange(rowIdx));
        });
      }
    }
  };
  // The guard is uniform per warp (warp strategy) and absent for the block strategy.
  if (numRows % rowsPerBlock == 0)
    body();
  else
    kb->ifThen(kb->lt(row, numRows), body);
  kb->finish();
  return status;
}

FailureOr<LoweredTask> emitRows(func::FuncOp task, const RowShape &shape,
                                const ScheduleKnobs &knobs, EmitContext &ctx) {
  return RowEmitter(task, shape, knobs).emit(ctx);
}

} // namespace evo
