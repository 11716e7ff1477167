//===- Passes.h - evo-opt evolution passes -----------------------*- C++ -*-===//

#ifndef EVO_EVOLUTION_PASSES_H
#define EVO_EVOLUTION_PASSES_H

#include "evo/Dialect/Evo/IR/EvoDialect.h"
#include "evo/LLM/Backend.h" // llm::kDefaultMaxTokens, an option default
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"

namespace evo {

/// evo-evolve's result when it paused (LLM prompts wait in a mailbox, llm-wait=0): the module
/// carries this attribute (the number of prompts waiting) and the pass fails, so that nothing is
/// written. It is a checkpoint, not an error: `resume=true` continues.
inline constexpr llvm::StringLiteral kEvolvePausedAttrName = "evo.evolve_paused";

/// For drivers: a pass instrumentation that sets `paused` when a pass fails on an operation
/// marked with kEvolvePausedAttrName (evo-opt then exits with llm::kPausedExitCode, 75).
std::unique_ptr<mlir::PassInstrumentation> createPausedObserver(bool &paused);

#define GEN_PASS_DECL
#include "evo/Evolution/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "evo/Evolution/Passes.h.inc"

} // namespace evo

#endif
