//===- TaskSearch.h - the evolutionary search over one task's variants -*- C++ -*-===//
//
// Why this exists: the search is a library, not a pass. For one task (a compute op of the
// input, as a func on tensors): the naive baseline seeds the population and is validated against
// the oracle; proposers (Proposer.h) make candidates, compiled on CPU threads while an
// evo-eval-worker session measures the previous ones on the GPU (the GPU does not wait for the
// compiler while work is queued); every candidate and outcome goes to the run store as it
// happens; the best few are re-measured interleaved (Finalists.h) before the winner is chosen.
// A search resumes from the store when it already holds candidates of the task.
//
// The state of a search is this object's members; the proposers read and extend it through the
// "for proposers" part of the interface. docs/evolution.md.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_EVOLUTION_TASKSEARCH_H
#define EVO_EVOLUTION_TASKSEARCH_H

#include "evo/Evolution/Engine.h"
#include "evo/Evolution/Population.h"
#include "evo/Evolution/Proposer.h"
#include "llvm/Support/ThreadPool.h"
#include <chrono>
#include <deque>
#include <future>
#include <map>
#include <random>
#include <set>

namespace evo {

class BuiltinProposer;
class LLMProposer;
class ReplayProposer;

class TaskSearch {
public:
  TaskSearch(const TaskInput &task, mlir::MLIRContext *ctx, RunStore &store,
             const EvolveOptions &options, const Ceilings *ceilings, ProgressLine &progress);
  ~TaskSearch();

  /// Runs the search to its end (budget, time, exhaustion) and chooses the winner; a
  /// PausedError when LLM prompts were left in a mailbox.
  llvm::Expected<TaskResult> run();

  // ---- For proposers ---------------------------------------------------------------------
  const TaskInput &task() const { return taskIn; }
  const EvolveOptions &options() const { return opts; }
  RunStore &store() { return runStore; }
  mlir::MLIRContext *context() { return ctx; }
  /// The task's func, parsed once for the whole search.
  mlir::func::FuncOp taskFunc() { return func; }
  const LaunchPlan &taskPlan() const { return plan; }
  const TaskCost &cost() const;
  const Ceilings *deviceCeilings() const { return ceilings; }
  std::mt19937_64 &rng() { return random; }
  std::vector<Population> &islands() { return pops; }
  int64_t baselineId() const { return baseline->id; }
  double baselineMs() const { return baselineTime; }
  const Genome &baselineGenome() const { return baseGenome; }
  const CompiledVariant &baselineVariant() const { return baseCompiled; }
  /// Genomes of the built-in (and replayed built-in) candidates, by id.
  const std::map<int64_t, Genome> &genomes() const { return genomeOf; }
  bool seen(const Genome &g) const;
  /// Records `g` as candidate `id`'s genome (proposed: never proposed again).
  void addGenome(int64_t id, const Genome &g);
  /// An error of this task ("task 'NAME': msg").
  llvm::Error error(const llvm::Twine &msg) const;
  /// Compiles stored candidate `id` from `g` on the pool; its result goes to the GPU.
  void compileGenome(int64_t id, const Genome &g);
  /// Compiles LLM `code` on top of `parent` as candidate `id`; if it does not compile, `owner`
  /// gets `state` back (compileFailed).
  void compileCode(int64_t id, std::string code, VariantInfo parent, Proposer *owner,
                   std::unique_ptr<ProposalState> state);
  /// A variant's kernels and launches (compiled again when it is from an earlier session); an
  /// LLM child keeps its first parent's launches.
  std::optional<VariantInfo> infoFor(int64_t id);
  /// Whether candidate `id` is compiling or waiting on a proposer.
  bool inFlight(int64_t id) const;
  /// The last three failures (verdict: reason), for prompts.
  const std::deque<std::string> &recentFailures() const { return failures; }
  /// Remembers `c`'s failure, if it is one, in recentFailures().
  void noteFailure(const CandidateRecord &c);

private:
  /// A candidate being compiled on the pool.
  struct Pending {
    int64_t id;
    std::shared_future<CompiledVariant> compiled;
    Proposer *owner = nullptr;            // told if it does not compile (with `state`)
    std::unique_ptr<ProposalState> state; // null: a compile error is simply recorded
  };

  llvm::Error prepare();
  llvm::Error startBaseline();
  llvm::Error restore();
  llvm::Error resumePending();
  llvm::Error generate();
  llvm::Error generateGeneration();
  bool generational() const;
  void migrateIfDue();
  llvm::Error takeCompiled();
  /// A worker session on one GPU: the search's own (lane 0, verify.device) and one per
  /// spreadDevices entry. Times are compared across lanes only relative to each lane's
  /// baseline.
  struct Lane {
    int device = 0;
    const Ceilings *ceilings = nullptr;
    std::unique_ptr<EvaluationSession> session;
    double baselineMs = 0;
  };
  struct Outcome {
    unsigned lane;
    size_t ticket;
    CandidateOutcome outcome;
  };
  llvm::Error startLanes(const llvm::json::Object &reference);
  size_t inFlight() const;
  /// Lane i's worker session (lane 0's is `session`).
  EvaluationSession &laneSession(unsigned i) { return i ? *lanes[i].session : *session; }
  std::string progressName() const;
  double rankTime(const CandidateRecord &c) const;
  llvm::Expected<std::vector<Outcome>> pollLanes(double seconds);
  llvm::Error takeOutcomes(std::vector<Outcome> &done);
  llvm::Error recordOutcome(CandidateRecord &c, const CandidateOutcome &o, unsigned lane = 0);
  llvm::Expected<llvm::json::Object> writeBinary(int64_t id, const CompiledVariant &v);
  std::shared_future<CompiledVariant> startCompile(const Genome &g);
  llvm::Expected<TaskResult> finish();
  bool timeUp() const;
  double elapsed() const;
  void report();

  const TaskInput &taskIn;
  mlir::MLIRContext *ctx;
  RunStore &runStore;
  const EvolveOptions &opts;
  const Ceilings *ceilings;
  ProgressLine &progress;

  mlir::OwningOpRef<mlir::ModuleOp> parsed; // the task's source, parsed once
  mlir::func::FuncOp func;
  LaunchPlan plan;
  std::unique_ptr<FunctionVerifier> verifier;
  TaskRecord record;
  llvm::SmallString<256> workDir;
  unsigned threads = 1;
  std::unique_ptr<llvm::DefaultThreadPool> pool;

  std::optional<CandidateRecord> baseline;
  Genome baseGenome;
  CompiledVariant baseCompiled;
  double baselineTime = 0;
  llvm::json::Object request; // the worker's request template
  WorkerOptions worker;
  std::unique_ptr<EvaluationSession> session; // lane 0's
  std::vector<Lane> lanes;                    // lanes[0].session is null: it is `session`
  unsigned lastLane = 0;                      // the lane the last candidate went to

  unsigned numIslands = 1;
  std::vector<Population> pops;
  std::map<int64_t, Genome> genomeOf;
  std::set<std::string> seenKeys;
  std::map<std::string, int64_t> seenHashes;
  std::map<int64_t, VariantInfo> infos;
  std::map<int64_t, CompiledVariant> compiledById;
  std::deque<std::string> failures;
  int64_t order = 0;
  unsigned evaluated = 0, valid = 0, created = 0;
  std::vector<CandidateRecord> resubmit, reask; // found pending when resuming

  std::mt19937_64 random;
  unsigned budget = 0, depth = 0;
  std::chrono::steady_clock::time_point started;
  bool exhausted = false;
  bool builtinDone = false; // the built-in mutators have nothing new (LLM generations go on)
  int generationNo = 0;     // LLM runs: the generation last proposed (from the store on resume)
  std::vector<Pending> compiling;
  /// (lane, ticket) -> candidate
  std::map<std::pair<unsigned, size_t>, std::pair<int64_t, CompiledVariant>> submitted;

  std::unique_ptr<BuiltinProposer> builtin;
  std::unique_ptr<LLMProposer> llm;
  std::unique_ptr<ReplayProposer> replay;
};

} // namespace evo

#endif
