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
mlir::FailureOr<llvm::SmallVector<int64_t>> parseI64List(mlir::AsmParser &parser);
void printI64List(mlir::AsmPrinter &printer, llvm::ArrayRef<int64_t> values);
/// `[#evo.x<...>, ...]` (may be empty).
template <typename AttrT>
mlir::FailureOr<llvm::SmallVector<AttrT>> parseAttrList(mlir::AsmParser &parser) {
  llvm::SmallVector<AttrT> out;
  if (parser.parseCommaSeparatedList(mlir::AsmParser::Delimiter::Square, [&] {
        AttrT a;
        if (parser.parseAttribute(a))
          return mlir::failure();
        out.push_back(a);
        return mlir::success();
      }))
    return mlir::failure();
  return out;
}
template <typename AttrT>
void printAttrList(mlir::AsmPrinter &printer, llvm::ArrayRef<AttrT> values) {
  printer << '[';
  llvm::interleaveComma(values, printer, [&](AttrT a) { printer.printAttribute(a); });
  printer << ']';
}
/// Knob parameters that are not lists (Knobs.h defines them).
template <typename T>
mlir::FailureOr<T> parseKnobParameter(mlir::AsmParser &parser);
} // namespace detail
} // namespace evo

#include "evo/Dialect/Evo/IR/EvoAttrInterfaces.h.inc"

#define GET_ATTRDEF_CLASSES
#include "evo/Dialect/Evo/IR/EvoAttrs.h.inc"

#endif // EVO_DIALECT_EVO_IR_EVOATTRS_H
