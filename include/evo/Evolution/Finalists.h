//===- Finalists.h - re-measuring the best few before choosing the winner -*- C++ -*-===//
//
// Why this exists: exploration times come from few timed runs, so a lucky sample could win. At
// the end of a task's search the best few valid candidates and the baseline are re-measured by a
// fresh worker in interleaved rounds (A B C D base, A B C D base, ...), checked like the search's
// timing and judged against the roofline floor; the winner is the fastest of those that passed.
// docs/evolution.md, "Finalists".
//
//===----------------------------------------------------------------------===//

#ifndef EVO_EVOLUTION_FINALISTS_H
#define EVO_EVOLUTION_FINALISTS_H

#include "evo/Evaluation/Roofline.h"
#include "evo/Evaluation/Supervisor.h"
#include "evo/Evolution/RunStore.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/JSON.h"

namespace evo {

struct EvolveOptions;

/// The finalists: the baseline first, then the `n` fastest valid candidates of `task` by their
/// search median (as `rankMs` says, when given: times measured on several GPUs are made
/// comparable by it).
std::vector<CandidateRecord> pickFinalists(const RunStore &store, const std::string &task,
                                           int64_t baselineId, unsigned n,
                                           llvm::function_ref<double(const CandidateRecord &)>
                                               rankMs = nullptr);

/// A candidate's time for choosing the winner: its re-measurement when it has one, else its
/// search median.
double finalTime(const CandidateRecord &c);

/// The fastest of `finalists` by finalTime (the first of equals); `finalists` is not empty.
const CandidateRecord &chooseWinner(const std::vector<CandidateRecord> &finalists);

struct RemeasureResult {
  /// The finalists whose re-measurement passed (with their finalMedianMs), baseline first.
  std::vector<CandidateRecord> passed;
  /// How many were recorded `invalid` for failing it.
  unsigned failed = 0;
  /// Set when the baseline itself failed it (nothing else is recorded then).
  std::string baselineFailure;
};

/// Re-measures `finalists` (the baseline first) in one fresh worker: `binary` describes each
/// one's compiled kernels for the worker (writing them to the work directory); `requestTemplate`
/// is the search's request (inputs, oracle values, launch checks). Each passing finalist's
/// median is recorded in `store`; a failing one is recorded `invalid` (reason "finalists'
/// re-measurement: ..."). A finalist the worker found off the reference at a few elements of
/// the timing inputs (its result's "disputed" list) passes only if `arbitrate` (the task's
/// FunctionVerifier::arbitrate) makes its outcome valid.
llvm::Expected<RemeasureResult> remeasureFinalists(
    std::vector<CandidateRecord> finalists,
    llvm::function_ref<llvm::Expected<llvm::json::Object>(const CandidateRecord &)> binary,
    const llvm::json::Object &requestTemplate, const WorkerOptions &worker,
    const EvolveOptions &opts, const TaskCost &cost, const Ceilings *ceilings, RunStore &store,
    llvm::function_ref<void(CandidateOutcome &)> arbitrate = nullptr);

} // namespace evo

#endif
