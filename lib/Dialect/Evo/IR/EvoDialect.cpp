//===- EvoDialect.cpp - the evo dialect and its attribute verifier -------------===//

#include "evo/Dialect/Evo/IR/EvoDialect.h"
#include "evo/Dialect/Evo/IR/LaunchPlan.h"

using namespace mlir;

#include "evo/Dialect/Evo/IR/EvoDialect.cpp.inc"
#include "evo/Dialect/Evo/IR/EvoEnums.cpp.inc"

namespace evo {

void EvoDialect::initialize() { registerAttributes(); }

/// `evo.plan` must be a plan, `evo.knobs` a knob set, `evo.family` a family, `evo.task` a task
/// index.
LogicalResult EvoDialect::verifyOperationAttribute(Operation *op, NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == kPlanAttrName) {
    auto plan = dyn_cast<PlanAttr>(attr.getValue());
    if (!plan)
      return op->emitError() << "'" << kPlanAttrName << "' must be a #evo.plan attribute";
    // The plan itself was checked when it was built or parsed (PlanAttr::verify). Whether its
    // launches match the kernels is checked where a module must be complete
    // (LaunchPlan::verifyAgainst: emission, verification, splicing): a gpu.module being built,
    // or a variant holding one task's kernels, carries a plan ahead of its kernels.
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
  // Other `evo.` attributes (evo.range on arguments, evo.evolved, evo.verify, ...) belong to
  // the passes that read them.
  return success();
}

} // namespace evo
