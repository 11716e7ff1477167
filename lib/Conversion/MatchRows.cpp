//===- MatchRows.cpp - which functions are row programs -------------------===//
//
// matchRowProgram: a function whose ops all work on rows of one shape [R..., C] (elementwise
// ops over full tensors with row vectors, column vectors and scalars broadcast into them,
// reductions over the last dimensions, row-wise ops on their results, softmax), as written or
// once its loops are interchanged so that the reductions trail (strided rows). The roles of
// operands that the emitter (EmitRows.cpp) also reads. docs/lowering.md, "Row programs".
//
//===----------------------------------------------------------------------===//

#include "RowPrograms.h"
#include "evo/Conversion/ScanForm.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace evo {
namespace rows {

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
static bool isArgumentView(Value v, Block &body) {
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
static unsigned trailingReductions(linalg::GenericOp g) {
  SmallVector<utils::IteratorType> its = g.getIteratorTypesArray();
  unsigned k = 0;
  while (k < its.size() && its[its.size() - 1 - k] == utils::IteratorType::reduction)
    ++k;
  return k == g.getNumReductionLoops() ? k : 0;
}

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

} // namespace rows

using namespace rows;

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
      bool isInit = i >= static_cast<size_t>(g.getNumDpsInputs());
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

} // namespace evo
