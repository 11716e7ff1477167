//===- LowerToGPUPass.cpp - the evo-lower-to-gpu pass -------------------------===//

#include "evo/Conversion/LowerToGPU.h"
#include "evo/Conversion/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"

namespace evo {
#define GEN_PASS_DEF_EVOLOWERTOGPUPASS
#include "evo/Conversion/Passes.h.inc"
} // namespace evo

#define DEBUG_TYPE "evo-lower-to-gpu"

using namespace mlir;

namespace {
struct EvoLowerToGPUPass final : evo::impl::EvoLowerToGPUPassBase<EvoLowerToGPUPass> {
  using Base::Base;
  void runOnOperation() override;
};
} // namespace

/// A function is a target when its body computes on tensors with linalg ops or with elementwise
/// arith/math ops; others (host code the user already wrote, declarations) are left alone.
static bool isTarget(func::FuncOp func) {
  if (func.isExternal())
    return false;
  bool found = false;
  func.walk([&](Operation *op) {
    if (isa<linalg::LinalgOp, linalg::SoftmaxOp>(op) ||
        (isa<arith::ArithDialect, math::MathDialect>(op->getDialect()) &&
         !isa<arith::ConstantOp>(op) && op->getNumResults() == 1 &&
         isa<RankedTensorType>(op->getResult(0).getType())))
      found = true;
  });
  return found;
}

void EvoLowerToGPUPass::runOnOperation() {
  ModuleOp module = getOperation();
  evo::LowerOptions options;
  options.knobs.blockSize = blockSize;
  options.knobs.elementsPerThread = elementsPerThread;
  options.knobs.vectorWidth = vectorWidth;
  options.knobs.accumulators = accumulators;
  options.knobs.cacheRow = cacheRow;
  options.knobs.prefetch = prefetch;
  options.knobs.split = split;
  options.knobs.transposeTile = transposeTile;
  std::optional<evo::ReductionStrategy> strategy =
      evo::symbolizeReductionStrategy(reductionStrategy);
  if (!strategy) {
    emitError(module.getLoc()) << "evo-lower-to-gpu: reduction-strategy must be thread, warp or block, "
                          "got '"
                       << reductionStrategy << "'";
    return signalPassFailure();
  }
  options.knobs.reduction = *strategy;
  options.knobs.tileSizes.assign(tileSizes.begin(), tileSizes.end());
  if (!threadTile.empty())
    options.knobs.threadTile.assign(threadTile.begin(), threadTile.end());
  options.fuseElementwise = fuseElementwise;
  if (failed(options.knobs.verify([&] {
        return emitError(module.getLoc()) << "evo-lower-to-gpu: invalid option: ";
      })))
    return signalPassFailure();

  SmallVector<func::FuncOp> targets;
  for (auto func : module.getOps<func::FuncOp>())
    if (isTarget(func))
      targets.push_back(func);
  bool failedAny = false;
  for (func::FuncOp func : targets)
    if (failed(evo::lowerFunction(func, options)))
      failedAny = true;
  if (failedAny)
    signalPassFailure();
}
