//===- EvolveSteps.h - the steps of the evo-evolve pass (private) ----*- C++ -*-===//
//
// Why this exists: the pass (EvolvePass.cpp) is a thin driver; each of its steps lives in its
// own file and takes plain settings, not the pass:
//
//   RunSetup.cpp    the run directory and store: lock, new run or resume, replay-run's old
//                   store, the verifier's seed (docs/evolution.md, "Resume and replay");
//   LLMSetup.cpp    the LLM client shared by every task of the run (docs/llm.md);
//   Splice.cpp      a task's winner into the function's gpu.module and plan ("The splice");
//   FinalCheck.cpp  the emitted module verified once more as a whole ("Final re-verification");
//   Shard.cpp       a shard's share of the tasks ("Many hosts: shards and Slurm");
//   Devices.cpp     the run's GPUs: devices=, their ceilings, which task runs where ("Several
//                   GPUs: devices=").
//
// Private to lib/Evolution: the library's API is Engine.h / TaskSearch.h.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_LIB_EVOLUTION_EVOLVESTEPS_H
#define EVO_LIB_EVOLUTION_EVOLVESTEPS_H

#include "evo/Evolution/Engine.h"
#include "evo/Evolution/LLMMutator.h"
#include "evo/Evolution/RunDirLock.h"
#include "evo/Evolution/RunStore.h"
#include "evo/Evolution/Shard.h"
#include "evo/LLM/Backend.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include <functional>

namespace evo {

//===- RunSetup.cpp ----------------------------------------------------------===//

struct RunSetupOptions {
  std::string runDir;
  bool resume = false, forceResume = false;
  std::string replayRun; // empty: a search, not a replay
  /// What a resumed or replayed run must have been made from.
  std::string inputHash, config;
  /// The run's shard plan (ShardPlan::toMeta; empty: not a shard): stored in a new run's meta,
  /// and a resumed run must be the same shard.
  std::string shard;
};

/// The run's store (and replay-run's old one), each with its run-dir lock held until this is
/// destroyed.
struct OpenedRun {
  std::optional<RunDirLock> lock, replayLock;
  std::unique_ptr<RunStore> store;
  std::unique_ptr<RunStore> replay; // null unless replay-run
};

/// Opens (creates, or resumes) the run in `o.runDir`, and replay-run's finished run. Before a
/// new store is created, `checkGpu` must succeed (without a store there is work for the GPU). A
/// run that fails before its store exists leaves no run-dir behind. Errors are emitted at `loc`.
mlir::FailureOr<OpenedRun> openRun(mlir::Location loc, const RunSetupOptions &o,
                                   llvm::function_ref<mlir::LogicalResult()> checkGpu);

/// The verifier's seed: `chosen`, else the one stored in the run's meta, else one drawn from OS
/// entropy (stored, so that a resumed run draws the same inputs).
mlir::FailureOr<uint64_t> verifierSeed(mlir::Location loc, RunStore &store, uint64_t chosen);

//===- Shard.cpp -------------------------------------------------------------===//

/// The run's shard (evo-evolve's `shard` option, else Slurm's array variables) and the
/// assignment of the `targets`' tasks; none when the run is not a shard. Errors at `loc`.
mlir::FailureOr<std::optional<ShardPlan>> planShard(mlir::Location loc, llvm::StringRef option,
                                                    llvm::ArrayRef<mlir::gpu::GPUModuleOp> targets);

/// Says in a remark which functions and tasks this shard evolves and which it leaves to the
/// others, and drops from `targets` the functions with no task of this shard (they are neither
/// evolved nor verified here).
void selectShard(mlir::Location loc, const ShardPlan &shard,
                 llvm::SmallVectorImpl<mlir::gpu::GPUModuleOp> &targets);

/// A resumed run must be the shard it was made as (`shardMeta`: ShardPlan::toMeta, empty for
/// no shard): the same index, count and assignment.
mlir::LogicalResult checkStoredShard(mlir::Location loc, llvm::StringRef runDir, RunStore &store,
                                     llvm::StringRef shardMeta);

//===- Devices.cpp -----------------------------------------------------------===//

/// devices= as GPU ordinals, each at most once: empty is {`device`}; "all" is none yet
/// (checkDevices counts them), and an error with the stand-in worker. Errors at `loc`.
mlir::FailureOr<llvm::SmallVector<int>> parseDevices(mlir::Location loc, llvm::StringRef option,
                                                     int device, bool standIn);

/// The GPUs exist on this host (devices=all: every one, filled in) and run what the search
/// makes for `chip` (cubins when ptxas is found). Errors at `loc`.
mlir::LogicalResult checkDevices(mlir::Location loc, llvm::StringRef option,
                                 llvm::SmallVectorImpl<int> &devices, llvm::StringRef chip,
                                 llvm::StringRef ptxas);

/// Each GPU's ceilings, measured on all of them at once (a worker each; an uncached measurement
/// takes seconds). Every GPU that fails is an error at `loc`.
mlir::FailureOr<std::vector<Ceilings>> measureCeilings(mlir::Location loc,
                                                       const WorkerOptions &worker,
                                                       llvm::ArrayRef<int> devices);

/// Runs fn(0) ... fn(count - 1) on threads of their own, with the stack the main thread has
/// (tools/evo-opt): they parse and build deep IR in the run's context.
void onGpuThreads(unsigned count, llvm::function_ref<void(unsigned)> fn);

/// Runs `run(task, slot, spread)` for `count` tasks over `slots` GPUs: one at a time on one
/// slot, in order; on several, a thread per slot takes the next task. With `work`, the biggest
/// first. With fewer tasks to search than slots (`searching`, the tasks not `finished` by an
/// earlier run), thread s searches the s-th biggest with slot s and the spare slots s + J,
/// s + 2J, ... (`spread`, for J tasks), and the finished tasks are rebuilt afterwards on slot
/// 0. A `run` that returns false stops the tasks not started yet; those running finish.
void runOnSlots(size_t count, llvm::ArrayRef<double> work, unsigned slots, unsigned searching,
                llvm::function_ref<bool(size_t)> finished,
                llvm::function_ref<bool(size_t, unsigned, llvm::ArrayRef<unsigned>)> run);

//===- LLMSetup.cpp ----------------------------------------------------------===//

struct LLMSetupOptions {
  llm::BackendOptions backend;
  llm::ClientOptions client;
  std::string prices;  // price table JSON; empty: the built-in one
  std::string prompts; // templates overriding the built-in ones; empty: none
  /// The operator settings the search reads (strategy, temperature, ...); setUpLLM fills in
  /// their client and templates.
  LLMSettings settings;
};

/// The LLM side of a run: the client (budgets are per run), its templates, and the settings
/// the search reads (which point into this object: it does not move).
struct LLMRun {
  std::unique_ptr<llm::Client> client;
  std::optional<llm::Templates> templates;
  LLMSettings settings;
};

/// Creates the backend, price table, templates and client; warns about mailbox replies that
/// answer no prompt. Errors are emitted at `loc`.
mlir::FailureOr<std::unique_ptr<LLMRun>> setUpLLM(mlir::Location loc, const LLMSetupOptions &o);

/// A remark with the run's LLM calls, tokens and cost.
void remarkLLMTotals(mlir::Location loc, const llm::Client &client);

//===- Splice.cpp ------------------------------------------------------------===//

/// Replaces task `t`'s kernels and launches in `gm`/`plan` with the winner's, with every symbol
/// the winner's kernels use (renamed where taken); `numTaskBuffers` are the task's arguments
/// and results (its old scratch goes away).
mlir::LogicalResult spliceWinner(mlir::gpu::GPUModuleOp gm, LaunchPlan &plan, unsigned t,
                                 const TaskResult &winner, unsigned numTaskBuffers);

/// What a gpu.module received for one task: for the final check, and to name a failing task.
struct SplicedTask {
  unsigned index; // in the plan's tasks
  std::string name, source;
  mlir::func::FuncOp func; // `source`, parsed (owned by the pass)
  unsigned numTaskBuffers;
  int64_t bestId, baselineId;
};

/// A task's own plan inside the function's `fp`: its buffers (arguments, results, then scratch)
/// and launches, renumbered; its source is the task's.
mlir::FailureOr<LaunchPlan> isolateTaskPlan(const LaunchPlan &fp, const SplicedTask &s);

//===- FinalCheck.cpp --------------------------------------------------------===//

struct FinalCheckSettings {
  RunStore &store;
  const EvolveOptions &opts;
  /// Makes the worker ready (and the ceilings known); called only when the GPU is needed.
  /// (A std::function: the settings are built from a lambda and outlive that expression.)
  std::function<mlir::LogicalResult()> ensureWorker;
  /// The device's ceilings once the worker is ready (null: a stand-in worker).
  std::function<const Ceilings *()> ceilings;
};

/// Verifies the evolved `gm` as a whole against its function, on fresh inputs; on failure
/// names (and records invalid) the tasks whose kernels fail alone. Errors are emitted at `gm`.
mlir::LogicalResult finalCheck(mlir::gpu::GPUModuleOp gm, llvm::ArrayRef<SplicedTask> tasks,
                               const FinalCheckSettings &s);

} // namespace evo

#endif
