//===- LLMMutator.h - LLM-proposed kernel variants ------------------*- C++ -*-===//
//
// The LLM operators of EvoEngineer's strategies (free, insight, full, eoh, funsearch) share the
// engine's population, store and evaluation with the built-in mutators. What an LLM writes only
// ever becomes device code: the reply's gpu.module or gpu.func(s) must keep the parent's kernels
// (names, signatures, `kernel`, known_block_size: the launch configuration is fixed), may add
// device helper functions, and may contain no host code; it is then compiled to PTX and run by
// the isolated worker like any other candidate. docs/llm.md.
//
// This header holds the LLM settings, the operators and the device-code contract; it includes
// neither Engine.h nor VariantCompiler.h (compileLLMVariant, in VariantCompiler.h, uses the
// contract), so the search, the compiler and the LLM code do not form a cycle.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_EVOLUTION_LLMMUTATOR_H
#define EVO_EVOLUTION_LLMMUTATOR_H

#include "evo/Dialect/Evo/IR/LaunchPlan.h"
#include "evo/LLM/Client.h"
#include "evo/LLM/Prompt.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace evo {

/// Whether `s` is one of EvoEngineer's LLM strategies (free, insight, full, eoh, funsearch);
/// the others (evo, single-best, islands) use the built-in mutators only.
inline bool isLLMStrategy(SearchStrategy s) {
  switch (s) {
  case SearchStrategy::Free:
  case SearchStrategy::Insight:
  case SearchStrategy::Full:
  case SearchStrategy::EoH:
  case SearchStrategy::FunSearch:
    return true;
  case SearchStrategy::Evo:
  case SearchStrategy::SingleBest:
  case SearchStrategy::Islands:
    return false;
  }
  return false;
}

struct LLMSettings {
  SearchStrategy strategy = SearchStrategy::Full; // one of the LLM strategies (isLLMStrategy)
  llm::Client *client = nullptr; // shared by every task of the run
  const llm::Templates *templates = nullptr;
  double temperature = 1.0;
  int64_t maxTokens = llm::kDefaultMaxTokens;
  /// Extra replies asked for when a reply does not parse, breaks the contract or does not
  /// compile (the diagnostics are sent back).
  unsigned repairs = 1;
  /// Share of children made by the built-in mutators instead (0: LLM only).
  double mix = 0;
  std::string gpuName, chip;
};

/// The device-code part of the kernel contract, for an LLM's kernels (and any other untrusted
/// ones): no state that survives a launch, no clocks, nothing that bypasses the contract.
/// Rejected, each with its own message:
///   * module-level ops other than gpu.func and `memref.global constant` tables with an initial
///     value (a writable global survives from one launch to the next);
///   * every `llvm.*` op (inline asm, which can declare PTX `.global` state or read
///     %globaltimer; llvm globals; raw pointer loads, stores, allocas and calls), `nvvm.inline_ptx`,
///     `builtin.unrealized_conversion_cast`, `func.*`, and dialects other than gpu, arith, math,
///     memref, vector, scf, cf, affine, index, ub and nvvm;
///   * reads of clocks, timers and launch identity (`nvvm.read.ptx.sreg.clock`, `clock64`,
///     `globaltimer`, `globaltimer.lo`, `gridid`, `envreg*`);
///   * host and I/O ops (`gpu.launch_func`, `gpu.alloc`, `gpu.printf`, `vector.print`, ...),
///     device heap allocation (`memref.alloc`, `realloc`, `dealloc`), and reading a buffer's
///     address (`memref.extract_aligned_pointer_as_index`: offsets from it reach other memory);
///   * any write (store, atomic, copy, MMA store, ...) to memory other than the kernel's own
///     output and scratch arguments, its workgroup/private attributions, `memref.alloca` and
///     dynamic shared memory: writes to an input argument, to a global, through a pointer, or
///     through a memref whose buffer cannot be traced back (through view ops) are refused.
/// `launches` bind the kernels' arguments to buffers; buffers below `numInputs` are inputs.
/// Returns the reason, in words fit to send back to the LLM, or "" when the code complies.
std::string checkDeviceCode(mlir::gpu::GPUModuleOp module, llvm::ArrayRef<KernelLaunch> launches,
                            int numInputs);

/// The template an operator uses for a strategy: "free", "insight", "full_init",
/// "full_mutation", "full_crossover", "eoh_e1", "eoh_e2", "eoh_m1", "eoh_m2", "funsearch".
struct LLMOperator {
  std::string templateName;
  unsigned numParents = 1;
};
LLMOperator chooseLLMOperator(SearchStrategy s, unsigned numValid, unsigned sequence);

} // namespace evo

#endif
