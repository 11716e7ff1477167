//===- EvoDialect.h - the evo dialect and its enums ---------------*- C++ -*-===//
//
// The evo dialect: the schedule knobs and launch plans every stage of evo-opt shares
// (EvoBase.td). Lower layers (Target, Evaluation, Evolution) depend on this, not on Conversion.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_DIALECT_EVO_IR_EVODIALECT_H
#define EVO_DIALECT_EVO_IR_EVODIALECT_H

#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectImplementation.h"
#include <optional>

#include "evo/Dialect/Evo/IR/EvoDialect.h.inc"
#include "evo/Dialect/Evo/IR/EvoEnums.h.inc"

#endif // EVO_DIALECT_EVO_IR_EVODIALECT_H
