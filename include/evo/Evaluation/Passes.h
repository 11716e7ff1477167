//===- Passes.h - evo-opt evaluation passes ----------------------*- C++ -*-===//

#ifndef EVO_EVALUATION_PASSES_H
#define EVO_EVALUATION_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace evo {

#define GEN_PASS_DECL
#include "evo/Evaluation/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "evo/Evaluation/Passes.h.inc"

} // namespace evo

#endif
