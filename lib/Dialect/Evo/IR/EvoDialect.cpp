//===- EvoDialect.cpp - the evo dialect and its attribute verifier -------------===//

#include "evo/Dialect/Evo/IR/EvoDialect.h"
#include "evo/Dialect/Evo/IR/LaunchPlan.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

using namespace mlir;

#include "evo/Dialect/Evo/IR/EvoDialect.cpp.inc"
#include "evo/Dialect/Evo/IR/EvoEnums.cpp.inc"

namespace evo {

void EvoDialect::initialize() { registerAttributes(); }

/// `evo.plan` on a gpu.module is checked against its kernels; on anything else (a gpu.binary
/// after emission) it must still be a plan. `evo.knobs` is a knob set, `evo.family` a family,
/// `evo.task` a task index.
LogicalResult EvoDialect::verifyOperationAttribute(Operation *op, NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == kPlanAttrName) {
    auto plan = dyn_cast<PlanAttr>(attr.getValue());
    if (!plan)
      return op->emitError() << "'" << kPlanAttrName << "' must be a #evo.plan attribute";
    if (auto module = dyn_cast<gpu::GPUModuleOp>(op))
      return LaunchPlan::fromAttr(plan).verifyAgainst(module);
    return success();
  }
  if (name == kKnobsAttrName) {
    if (!isa<KnobSetAttrInterface>(attr.getValue()))
      return op->emitError() << "'" << kKnobsAttrName
                             << "' must be a dictionary or an #evo.knobs attribute";
    return success();
  }
  if (name == kFamilyAttrName) {
    if (!isa<TaskFamilyAttr>(attr.getValue()))
      return op->emitError() << "'" << kFamilyAttrName << "' must be an #evo.family attribute";
    return success();
  }
  if (name == kTaskAttrName) {
    auto i = dyn_cast<IntegerAttr>(attr.getValue());
    if (!i || i.getInt() < 0)
      return op->emitError() << "'" << kTaskAttrName << "' must be a task index";
    return success();
  }
  return op->emitError() << "unknown evo attribute '" << name << "'";
}

} // namespace evo
