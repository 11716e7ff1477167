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
#define EVO_KNOB_FROM_OPTION(name, cpp, kind, arg, doc)                                           \
  evo::detail::knobFromOption(options.knobs.cpp, cpp);
  EVO_KNOB_LIST(EVO_KNOB_FROM_OPTION)
#undef EVO_KNOB_FROM_OPTION
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
