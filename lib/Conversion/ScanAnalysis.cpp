//===- ScanAnalysis.cpp - recognizing scans written as triangular sums -------===//
//
// matchScan (evo/Conversion/ScanForm.h): the payload is read backwards from the yield, the
// combiner first, then the mask around the element, then the element's own dependencies.
//
//===----------------------------------------------------------------------===//

#include "evo/Conversion/ScanForm.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace evo {

/// Whether `v` is a constant equal to `combiner`'s neutral element. For an addition any zero
/// counts: users write +0.0, the neutral element is -0.0, and x + (+0.0) differs from x only in
/// the sign of a zero.
static bool isNeutral(Value v, Operation *combiner) {
  std::optional<TypedAttr> neutral = arith::getNeutralElement(combiner);
  Attribute cst;
  if (!neutral || !matchPattern(v, m_Constant(&cst)))
    return false;
  if (auto f = dyn_cast<FloatAttr>(cst)) {
    auto n = dyn_cast<FloatAttr>(*neutral);
    if (!n)
      return false;
    if (isa<arith::AddFOp>(combiner) && f.getValue().isZero())
      return true;
    return f.getValue().bitwiseIsEqual(n.getValue());
  }
  if (auto i = dyn_cast<IntegerAttr>(cst)) {
    auto n = dyn_cast<IntegerAttr>(*neutral);
    return n && i.getValue() == n.getValue();
  }
  return false;
}

/// The loop whose `linalg.index` `v` is, looking through index casts to integers wide enough to
/// hold every index of a loop of `maxExtent` points.
static std::optional<unsigned> indexLoop(Value v, Block &body, int64_t maxExtent) {
  if (auto cast = v.getDefiningOp<arith::IndexCastOp>()) {
    unsigned bits = cast.getType().getIntOrFloatBitWidth();
    if (bits < 64 && maxExtent > (int64_t(1) << (bits - 1)))
      return std::nullopt;
    v = cast.getIn();
  } else if (auto cast = v.getDefiningOp<arith::IndexCastUIOp>()) {
    unsigned bits = cast.getType().getIntOrFloatBitWidth();
    if (bits < 64 && maxExtent > (int64_t(1) << (bits - 1)))
      return std::nullopt;
    v = cast.getIn();
  }
  auto index = v.getDefiningOp<linalg::IndexOp>();
  if (!index || index->getBlock() != &body)
    return std::nullopt;
  return index.getDim();
}

/// `a P b` as `b P' a`.
static arith::CmpIPredicate swapped(arith::CmpIPredicate p) {
  using P = arith::CmpIPredicate;
  switch (p) {
  case P::ult:
    return P::ugt;
  case P::ule:
    return P::uge;
  case P::ugt:
    return P::ult;
  case P::uge:
    return P::ule;
  case P::slt:
    return P::sgt;
  case P::sle:
    return P::sge;
  case P::sgt:
    return P::slt;
  case P::sge:
    return P::sle;
  default:
    return p;
  }
}

namespace {
/// The mask around the element: `cmp` decides, `element` is combined where it says so.
struct Mask {
  arith::CmpIOp cmp;
  Value element;
  bool includeWhenTrue = true;
};
} // namespace

static std::optional<Mask> matchMask(Value v, Operation *combiner, Block &body) {
  Operation *def = v.getDefiningOp();
  if (!def || def->getBlock() != &body)
    return std::nullopt;
  if (auto select = dyn_cast<arith::SelectOp>(def)) {
    auto cmp = select.getCondition().getDefiningOp<arith::CmpIOp>();
    if (!cmp)
      return std::nullopt;
    if (isNeutral(select.getFalseValue(), combiner))
      return Mask{cmp, select.getTrueValue(), true};
    if (isNeutral(select.getTrueValue(), combiner))
      return Mask{cmp, select.getFalseValue(), false};
    return std::nullopt;
  }
  // f * (0 or 1): only an addition ignores the zeros.
  bool floatMask = isa<arith::AddFOp>(combiner) && isa<arith::MulFOp>(def);
  bool intMask = isa<arith::AddIOp>(combiner) && isa<arith::MulIOp>(def);
  if (!floatMask && !intMask)
    return std::nullopt;
  for (unsigned m = 0; m < 2; ++m) {
    Value mask = def->getOperand(m);
    Value in;
    if (auto c = mask.getDefiningOp<arith::UIToFPOp>(); c && floatMask)
      in = c.getIn();
    else if (auto c = mask.getDefiningOp<arith::ExtUIOp>(); c && intMask)
      in = c.getIn();
    if (!in || !in.getType().isInteger(1))
      continue;
    if (auto cmp = in.getDefiningOp<arith::CmpIOp>())
      return Mask{cmp, def->getOperand(1 - m), true};
  }
  return std::nullopt;
}

std::optional<ScanForm> matchScan(linalg::GenericOp op) {
  if (op.getNumDpsInits() != 1 || op->getNumResults() != 1 || op.getNumReductionLoops() != 1 ||
      op.getNumParallelLoops() == 0)
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return std::nullopt;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  const unsigned k =
      std::distance(iterators.begin(), llvm::find(iterators, utils::IteratorType::reduction));
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  // Every parallel loop exactly once, the reduction loop not at all: each output element is
  // written by one line of the reduction.
  if (!outMap.isProjectedPermutation() || outMap.isFunctionOfDim(k) ||
      outMap.getNumResults() != op.getNumLoops() - 1)
    return std::nullopt;

  Block &body = op.getRegion().front();
  BlockArgument out = body.getArgument(op.getNumDpsInputs());
  if (!out.hasOneUse())
    return std::nullopt;
  Operation *combiner = *out.getUsers().begin();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  if (combiner->getBlock() != &body || combiner->getNumOperands() != 2 ||
      combiner->getNumResults() != 1 || combiner->getOperand(0) == combiner->getOperand(1) ||
      !arith::getNeutralElement(combiner) || yield.getNumOperands() != 1 ||
      yield.getOperand(0) != combiner->getResult(0) || !combiner->getResult(0).hasOneUse())
    return std::nullopt;
  Value masked = combiner->getOperand(combiner->getOperand(0) == out ? 1 : 0);

  std::optional<Mask> mask = matchMask(masked, combiner, body);
  if (!mask)
    return std::nullopt;
  const int64_t maxExtent = ranges[k];
  std::optional<unsigned> lhs = indexLoop(mask->cmp.getLhs(), body, maxExtent);
  std::optional<unsigned> rhs = indexLoop(mask->cmp.getRhs(), body, maxExtent);
  if (!lhs || !rhs)
    return std::nullopt;
  arith::CmpIPredicate pred = mask->cmp.getPredicate();
  unsigned j;
  if (*lhs == k && *rhs != k) {
    j = *rhs;
  } else if (*rhs == k && *lhs != k) {
    j = *lhs;
    pred = swapped(pred);
  } else {
    return std::nullopt;
  }
  if (!mask->includeWhenTrue)
    pred = arith::invertPredicate(pred);
  if (iterators[j] != utils::IteratorType::parallel || ranges[j] != ranges[k])
    return std::nullopt;

  ScanForm form;
  form.scanLoop = k;
  form.outLoop = j;
  form.combiner = combiner;
  form.element = mask->element;
  using P = arith::CmpIPredicate;
  switch (pred) {
  case P::ule:
  case P::sle:
    break;
  case P::ult:
  case P::slt:
    form.exclusive = true;
    break;
  case P::uge:
  case P::sge:
    form.reverse = true;
    break;
  case P::ugt:
  case P::sgt:
    form.reverse = form.exclusive = true;
    break;
  default:
    return std::nullopt;
  }

  // What an element reads must not move with j: no input indexed by it.
  for (OpOperand *in : op.getDpsInputOperands())
    if (op.getMatchingIndexingMap(in).isFunctionOfDim(j))
      return std::nullopt;
  // The element's dependencies in the payload: neither `out` nor j's index.
  llvm::SmallPtrSet<Operation *, 16> slice;
  SmallVector<Value> work{form.element};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (arg == out)
        return std::nullopt;
      continue;
    }
    Operation *def = v.getDefiningOp();
    if (def->getBlock() != &body || !slice.insert(def).second)
      continue; // a constant captured from above, or seen
    if (auto index = dyn_cast<linalg::IndexOp>(def)) {
      if (index.getDim() == j)
        return std::nullopt;
      continue;
    }
    work.append(def->operand_begin(), def->operand_end());
    llvm::SetVector<Value> captured;
    getUsedValuesDefinedAbove(def->getRegions(), captured);
    work.append(captured.begin(), captured.end());
  }
  for (Operation &inner : body.without_terminator())
    if (!slice.contains(&inner))
      form.notElement.push_back(&inner);
  return form;
}

} // namespace evo
