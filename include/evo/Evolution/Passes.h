//===- Passes.h - evo-opt evolution passes -----------------------*- C++ -*-===//

#ifndef EVO_EVOLUTION_PASSES_H
#define EVO_EVOLUTION_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace evo {

#define GEN_PASS_DECL
#include "evo/Evolution/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "evo/Evolution/Passes.h.inc"

} // namespace evo

#endif
