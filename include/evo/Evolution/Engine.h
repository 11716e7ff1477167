//===- Engine.h - the evolutionary search's settings, inputs and results -*- C++ -*-===//
//
// What a caller of the search (the evo-evolve pass, tests) needs: the search settings
// (EvolveOptions), one task to evolve (TaskInput), what comes out (TaskResult, PausedError) and
// evolveTask, which runs a TaskSearch (TaskSearch.h) for one task. Compiling variants is in
// VariantCompiler.h (included here for callers), the proposers in Proposers.h.
// docs/evolution.md.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_EVOLUTION_ENGINE_H
#define EVO_EVOLUTION_ENGINE_H

#include "evo/Dialect/Evo/IR/LaunchPlan.h"
#include "evo/Evaluation/Roofline.h"
#include "evo/Evaluation/Verifier.h"
#include "evo/Evolution/Genome.h"
#include "evo/Evolution/RunStore.h"
#include "evo/Evolution/VariantCompiler.h"
#include "evo/Target/Compile.h"
#include "mlir/IR/BuiltinOps.h"

namespace evo {

struct LLMSettings;

struct EvolveOptions {
  /// "evo": elitist population with rank selection; "single-best": always mutate the best;
  /// "islands": `islands` populations with migration of their best every `migrateEvery`
  /// generations.
  SearchStrategy strategy = SearchStrategy::Evo;
  unsigned population = 5;
  unsigned samples = 4;      // offspring per generation
  unsigned generations = 10;
  unsigned islands = 4;
  unsigned migrateEvery = 3;
  unsigned maxCandidates = 0;  // per task, 0: generations * samples
  double timeBudgetSeconds = 0; // per task, 0: none
  bool keepWork = false;         // keep RUN_DIR/work/<task> after the task is done
  uint64_t seed = 1;
  unsigned finalists = 4;
  unsigned finalRounds = 5;
  unsigned finalRuns = 100;
  unsigned compileThreads = 0; // 0: one per core
  bool quiet = false;
  VerifyOptions verify;
  /// More GPUs for this task's candidates besides verify.device, with their ceilings (null: a
  /// stand-in worker): devices= with fewer tasks than GPUs. Each runs a worker of its own with
  /// the baseline as its reference; a candidate is ranked by its time relative to the baseline
  /// measured on the same GPU, and the finalists are re-measured on verify.device.
  std::vector<std::pair<int, const Ceilings *>> spreadDevices;
  /// The progress line names the GPU(s) of the task (runs over several GPUs).
  bool showDevice = false;
  PTXOptions ptx;
  std::string ptxasPath; // empty: found like evo-emit-ptx does
  /// LLM strategies (free, insight, full, eoh, funsearch): the client, templates and operator
  /// settings; null for the built-in mutators alone.
  const LLMSettings *llm = nullptr;
  /// replay-run: the finished run whose candidates are re-created, in their order, instead of
  /// new ones (built-in ones from their genomes, LLM ones from their stored requests, answered
  /// by a replaying client); null for a search.
  const RunStore *replay = nullptr;
};

/// One task to evolve, as the lowering recorded it.
struct TaskInput {
  std::string name;     // e.g. "softmax_t0"
  std::string function; // the function it belongs to
  TaskFamily family;
  std::string source;   // func.func on tensors
  ScheduleKnobs baselineKnobs;
  /// `source`, already parsed in the search's context (its module must outlive the search);
  /// null: the search parses it. Either way the source is parsed once per task.
  mlir::func::FuncOp func = nullptr;
};

struct TaskResult {
  std::string task;
  int64_t baselineId = -1, bestId = -1;
  /// The oldest candidate whose PTX is the winner's: what the output names. Of two candidates
  /// with identical PTX the one evaluated is the one whose compile finished first (the other is
  /// `not-run`, never given a second chance), so `bestId` can differ between a run and its
  /// replay; this cannot.
  int64_t firstBestId = -1;
  double baselineMs = 0, bestMs = 0;
  std::string bestIr;
  llvm::SmallVector<KernelLaunch> bestLaunches;
  llvm::SmallVector<ScratchSpec> bestScratch;
  std::string bestKnobs; // JSON
  unsigned evaluated = 0, valid = 0;
  /// replay-run: candidates re-created, and the old ids of those whose PTX (or, without PTX,
  /// whose verdict) differs from the old run's.
  unsigned replayed = 0;
  std::vector<int64_t> replayDiffer;
};

/// evolveTask's error when LLM prompts were left in a mailbox to be answered later: the store
/// holds everything done so far, and `resume=true` continues.
class PausedError : public llvm::ErrorInfo<PausedError> {
public:
  static char ID;
  explicit PausedError(unsigned pending) : pending(pending) {}
  void log(llvm::raw_ostream &os) const override;
  std::error_code convertToErrorCode() const override { return llvm::inconvertibleErrorCode(); }
  unsigned pending;
};

/// The work of the task's function as written (Roofline's count: bytes moved, flops); zero when
/// `task.func` is not set. The run starts the biggest tasks first when several GPUs share them.
TaskCost estimateTaskCost(const TaskInput &task);

/// Evolves one task; resumes from the store when it already holds candidates of this task.
/// A thin wrapper of TaskSearch::run.
llvm::Expected<TaskResult> evolveTask(const TaskInput &task, mlir::MLIRContext *ctx,
                                      RunStore &store, const EvolveOptions &options,
                                      const Ceilings *ceilings, ProgressLine &progress);

} // namespace evo

#endif
