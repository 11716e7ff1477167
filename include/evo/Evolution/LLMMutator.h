//===- LLMMutator.h - LLM-proposed kernel variants ------------------*- C++ -*-===//
//
// The LLM operators of EvoEngineer's strategies (free, insight, full, eoh, funsearch) share the
// engine's population, store and evaluation with the built-in mutators. What an LLM writes only
// ever becomes device code: the reply's gpu.module or gpu.func(s) must keep the parent's kernels
// (names, signatures, `kernel`, known_block_size: the launch configuration is fixed), may add
// device helper functions, and may contain no host code; it is then compiled to PTX and run by
// the isolated worker like any other candidate. docs/llm.md.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_EVOLUTION_LLMMUTATOR_H
#define EVO_EVOLUTION_LLMMUTATOR_H

#include "evo/Evolution/Engine.h"
#include "evo/LLM/Client.h"
#include "evo/LLM/Prompt.h"

namespace evo {

struct LLMSettings {
  llm::Strategy strategy = llm::Strategy::Full;
  llm::Client *client = nullptr; // shared by every task of the run
  const llm::Templates *templates = nullptr;
  double temperature = 1.0;
  int64_t maxTokens = 4096;
  /// Extra replies asked for when a reply does not parse, breaks the contract or does not
  /// compile (the diagnostics are sent back).
  unsigned repairs = 1;
  /// Share of children made by the built-in mutators instead (0: LLM only).
  double mix = 0;
  std::string gpuName, chip;
};

/// Where a variant's kernels come from and how they are launched.
struct VariantInfo {
  std::string ir; // the gpu.module
  llvm::SmallVector<KernelLaunch> launches;
  llvm::SmallVector<ScratchSpec> scratch;
};

/// Checks an LLM's code against the parent's kernels and compiles it. Thread-safe (its own
/// MLIR context). On failure `ok` is false and `diagnostics` says why, in words fit to send
/// back to the LLM.
CompiledVariant compileLLMVariant(const mlir::DialectRegistry &registry, llvm::StringRef code,
                                  const VariantInfo &parent, const PTXOptions &ptx,
                                  llvm::StringRef ptxasPath);

/// The template an operator uses for a strategy: "free", "insight", "full_init",
/// "full_mutation", "full_crossover", "eoh_e1", "eoh_e2", "eoh_m1", "eoh_m2", "funsearch".
struct LLMOperator {
  std::string templateName;
  unsigned numParents = 1;
};
LLMOperator chooseLLMOperator(llm::Strategy s, unsigned numValid, unsigned sequence);

} // namespace evo

#endif
