//===- Proposer.h - what makes a task's next candidates -------------*- C++ -*-===//
//
// Why this exists: the search (TaskSearch) keeps the population, the store, the compile pool and
// the GPU busy; *what* to try next comes from a proposer behind this one interface:
//
//   BuiltinProposer  the built-in mutators over genomes: seeds, knob mutation and crossover,
//                    loop unrolling (Genome.h);
//   LLMProposer      an LLM writes the kernels (EvoEngineer's strategies): prompts, replies,
//                    repairs of unusable replies (LLMMutator.h holds the contract);
//   ReplayProposer   replay-run: an earlier run's candidates, re-created in their order.
//
// A proposer stores each candidate it makes (verdict `pending`) and hands it to the search to be
// compiled (a genome, or code on top of a parent); it may keep work of its own in flight (an LLM
// request) and be told when something it made does not compile (to ask for a repair).
//
//===----------------------------------------------------------------------===//

#ifndef EVO_EVOLUTION_PROPOSER_H
#define EVO_EVOLUTION_PROPOSER_H

#include "llvm/Support/Error.h"
#include <memory>
#include <string>

namespace evo {

struct CandidateRecord;

/// What a proposer keeps with a candidate while the search compiles it (an LLM reply's
/// request, for a repair); handed back to it if the candidate does not compile.
struct ProposalState {
  virtual ~ProposalState() = default;
};

class Proposer {
public:
  enum class Outcome {
    Made,     // a candidate was stored and handed to the search (or settled at once)
    Later,    // nothing now: what it needs is still in flight; ask again after the next poll
    Declined, // nothing from this proposer (no usable parent): another may propose
    Exhausted // it will never propose again in this task
  };
  virtual ~Proposer();
  /// Proposes one candidate for `island` in `generation`.
  virtual llvm::Expected<Outcome> propose(unsigned island, int generation) = 0;
  /// Candidates it waits on outside the compile pool (LLM requests in flight).
  virtual size_t waiting() const { return 0; }
  /// Whether candidate `id` is still in its hands (not yet compiling).
  virtual bool holds(int64_t id) const { return false; }
  /// Takes in what arrived since the last call (LLM replies): handed to the search to compile,
  /// or settled in the store.
  virtual llvm::Error collect() { return llvm::Error::success(); }
  /// A candidate it made with `state` did not compile: repair it, or record why not.
  virtual llvm::Error compileFailed(CandidateRecord &c, const std::string &diagnostics,
                                    std::unique_ptr<ProposalState> state);
};

} // namespace evo

#endif
