//===- GemmView.cpp - contractions seen as C[m, n] += A[m, k] * B[k, n] -------===//
//
// Which loop dimensions of a contraction make up its GEMM indices (gemmView; convolutions:
// ConvGemm.cpp), and the masks on output indices that keep a contraction one (matchOutputMask:
// torch.tril(A @ B) as one generic). The tiled, mma.sync and wgmma schedules build their kernels
// from these.
//
//===----------------------------------------------------------------------===//

#include "Emitters.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

namespace evo {

std::optional<OutputMask> matchOutputMask(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 || op.getNumReductionLoops() == 0)
    return std::nullopt;
  Block &body = op.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  if (yield.getNumOperands() != 1)
    return std::nullopt;
  Operation *add = yield.getOperand(0).getDefiningOp();
  if (!add || !isa<arith::AddFOp, arith::AddIOp>(add) || add->getBlock() != &body)
    return std::nullopt;
  Value out = body.getArgument(2), other;
  if (add->getOperand(0) == out)
    other = add->getOperand(1);
  else if (add->getOperand(1) == out)
    other = add->getOperand(0);
  else
    return std::nullopt;
  auto select = other.getDefiningOp<arith::SelectOp>();
  if (!select || select->getBlock() != &body)
    return std::nullopt;
  auto isZero = [](Value v) {
    return matchPattern(v, m_AnyZeroFloat()) || matchPattern(v, m_Zero());
  };
  OutputMask mask;
  mask.select = select;
  if (isZero(select.getFalseValue())) {
    mask.product = select.getTrueValue();
  } else if (isZero(select.getTrueValue())) {
    mask.product = select.getFalseValue();
    mask.keepWhenTrue = false;
  } else {
    return std::nullopt;
  }
  Operation *mul = mask.product.getDefiningOp();
  if (!mul || !isa<arith::MulFOp, arith::MulIOp>(mul) || mul->getBlock() != &body)
    return std::nullopt;
  Value a = body.getArgument(0), b = body.getArgument(1);
  if (!((mul->getOperand(0) == a && mul->getOperand(1) == b) ||
        (mul->getOperand(0) == b && mul->getOperand(1) == a)))
    return std::nullopt;
  // The condition's slice: index ops of parallel dimensions, constants and arith ops on them.
  llvm::SmallPtrSet<Operation *, 8> slice;
  SmallVector<Value> work{select.getCondition()};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    Operation *d = v.getDefiningOp();
    if (!d)
      return std::nullopt; // a block argument: the mask reads the data
    if (d->getBlock() != &body) {
      if (!matchPattern(v, m_Constant()))
        return std::nullopt;
      continue;
    }
    if (!slice.insert(d).second)
      continue;
    if (auto index = dyn_cast<linalg::IndexOp>(d)) {
      if (op.getIteratorTypesArray()[index.getDim()] != utils::IteratorType::parallel)
        return std::nullopt;
      continue;
    }
    if (d->getDialect()->getNamespace() != "arith" || d->getNumRegions() != 0)
      return std::nullopt;
    llvm::append_range(work, d->getOperands());
  }
  // Nothing else in the payload.
  for (Operation &inner : body.without_terminator()) {
    if (slice.contains(&inner)) {
      mask.condOps.push_back(&inner);
      continue;
    }
    if (&inner != mul && &inner != select.getOperation() && &inner != add)
      return std::nullopt;
  }
  return mask;
}

std::optional<GemmView> gemmView(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1)
    return std::nullopt;
  GemmView v;
  // (inferContractionDims alone also "finds" dimensions in a convolution: ask first whether the
  // op is a contraction.)
  // Several loop dimensions may make up one GEMM index (torch.matmul of a 3-d tensor by a
  // matrix: M = (batch, rows); einsum bijl,lk->bijk: M = (b, i, j)). The kernels split a GEMM
  // index back into its dimensions (MatmulKernel::indices) and read every element through the
  // operand's indexing map, so any layout is correct; the order only decides which dimension is
  // the fastest one (nDim, kDim: coalescing and 128-bit accesses). M and N dimensions follow
  // their order in C (the tile's rows and columns run along C's layout), K dimensions their order
  // in A (A's tile is read along K).
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  bool contraction = linalg::isaContractionOpInterface(op) || (generic && matchOutputMask(generic));
  if (FailureOr<linalg::ContractionDimensions> d = linalg::inferContractionDims(op);
      contraction && succeeded(d) && !d->m.empty() && !d->n.empty() &&
      !d->k.empty()) {
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    auto positionIn = [](AffineMap map, unsigned dim) {
      for (auto [i, e] : llvm::enumerate(map.getResults()))
        if (auto de = dyn_cast<AffineDimExpr>(e); de && de.getPosition() == dim)
          return unsigned(i);
      return map.getNumResults();
    };
    auto ordered = [&](const auto &dims, AffineMap map) {
      SmallVector<unsigned> out(dims.begin(), dims.end());
      llvm::stable_sort(out, [&](unsigned x, unsigned y) {
        return positionIn(map, x) < positionIn(map, y);
      });
      return out;
    };
    v.m = ordered(d->m, maps[2]);
    v.n = ordered(d->n, maps[2]);
    v.k = ordered(d->k, maps[0]);
    v.batch.assign(d->batch.begin(), d->batch.end());
    return v;
  }
  return convolutionGemmView(op);
}


} // namespace evo
