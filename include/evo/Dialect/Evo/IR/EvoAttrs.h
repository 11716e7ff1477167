//===- EvoAttrs.h - attributes of the evo dialect ------------------*- C++ -*-===//
//
// #evo.knobs (a knob set) and #evo.plan with its parts (#evo.buffer, #evo.task, #evo.launch).
// Knobs.h has the C++ value type of a knob set; LaunchPlan.h the mutable form of a plan.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_DIALECT_EVO_IR_EVOATTRS_H
#define EVO_DIALECT_EVO_IR_EVOATTRS_H

#include "evo/Dialect/Evo/IR/EvoDialect.h"
#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/Support/JSON.h"

namespace evo {
struct ScheduleKnobs;

namespace detail {
/// `[1, 2, 3]` (may be empty).
void printI64List(mlir::AsmPrinter &printer, llvm::ArrayRef<int64_t> values);
/// `[#evo.x<...>, ...]` (may be empty).
template <typename AttrT>
void printAttrList(mlir::AsmPrinter &printer, llvm::ArrayRef<AttrT> values) {
  printer << '[';
  llvm::interleaveComma(values, printer, [&](AttrT a) { printer.printAttribute(a); });
  printer << ']';
}
} // namespace detail
} // namespace evo

#include "evo/Dialect/Evo/IR/EvoAttrInterfaces.h.inc"

#define GET_ATTRDEF_CLASSES
#include "evo/Dialect/Evo/IR/EvoAttrs.h.inc"

#endif // EVO_DIALECT_EVO_IR_EVOATTRS_H
