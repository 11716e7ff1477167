//===- Engine.h - the evolutionary search over a task's kernel variants -*- C++ -*-===//
//
// For one task (a compute op of the input, as a func on tensors): the naive baseline seeds the
// population and is validated against the oracle; variants made by the mutators are compiled to
// PTX/cubin on CPU threads while an evo-eval-worker session measures the previous ones on the GPU
// (a steady stream: the GPU does not wait for the compiler when work is queued); every
// candidate and outcome goes to the run store as it happens; the best few are re-measured
// interleaved before the winner is chosen. docs/evolution.md.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_EVOLUTION_ENGINE_H
#define EVO_EVOLUTION_ENGINE_H

#include "evo/Conversion/LaunchPlan.h"
#include "evo/Evaluation/Verifier.h"
#include "evo/Evolution/Genome.h"
#include "evo/Evolution/RunStore.h"
#include "evo/Target/Compile.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"

namespace evo {

struct LLMSettings;

struct EvolveOptions {
  /// "evo": elitist population with rank selection; "single-best": always mutate the best;
  /// "islands": `islands` populations with migration of their best every `migrateEvery`
  /// generations.
  std::string strategy = "evo";
  unsigned population = 5;
  unsigned samples = 4;      // offspring per generation
  unsigned generations = 10;
  unsigned islands = 4;
  unsigned migrateEvery = 3;
  unsigned maxCandidates = 0;  // per task, 0: generations * samples
  double timeBudgetSeconds = 0; // per task, 0: none
  uint64_t seed = 1;
  unsigned finalists = 4;
  unsigned finalRounds = 5;
  unsigned finalRuns = 100;
  unsigned compileThreads = 0; // 0: one per core
  bool quiet = false;
  VerifyOptions verify;
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
};

/// A compiled variant.
/// A scratch buffer without MLIR types: variants are lowered in other (per-thread) contexts.
struct ScratchSpec {
  std::string name;
  llvm::SmallVector<int64_t> shape;
  std::string elementType; // "f32", "bf16", "i32", ...
  bool zeroInit = false;
  int64_t numElements() const;
};

struct CompiledVariant {
  bool ok = false;
  std::string diagnostics;
  std::string ir;    // the gpu.module
  std::string ptx, cubin, ptxHash;
  llvm::SmallVector<KernelLaunch> launches; // over the task's buffers, then `scratch`
  llvm::SmallVector<ScratchSpec> scratch;
  int registers = -1, spills = -1;
  /// The task's input buffers: launch arguments below this index are read-only (-1: unknown).
  int numInputs = -1;
};

/// The calling thread's MLIR context for compiling variants (one per thread).
mlir::MLIRContext &compileContext(const mlir::DialectRegistry &registry);
/// Prints `gm` into `out.ir` and compiles `module` (which holds it) to PTX, then to a cubin when
/// `ptxasPath` is given; sets `out.ok` on success.
void compileVariantModule(mlir::ModuleOp module, mlir::gpu::GPUModuleOp gm, const PTXOptions &ptx,
                          llvm::StringRef ptxasPath, CompiledVariant &out);

/// Compiles a gpu.module given as text (with every symbol its kernels use) to PTX, then to a
/// cubin when `ptxasPath` is given, the way evo-emit-ptx does. Thread-safe (its own context).
CompiledVariant compileGpuModule(const mlir::DialectRegistry &registry, llvm::StringRef text,
                                 const PTXOptions &ptx, llvm::StringRef ptxasPath);

/// Lowers `genome` for the task in `source` and compiles it (PTX, then cubin with ptxas when
/// available). Thread-safe: uses its own MLIR context built from `registry`.
CompiledVariant compileVariant(const mlir::DialectRegistry &registry, llvm::StringRef source,
                               TaskFamily family, const Genome &genome, const PTXOptions &ptx,
                               llvm::StringRef ptxasPath);

/// Compiles a stored candidate again: from its genome, or (LLM candidates) from its stored IR
/// on top of its rebuilt first parent, whose launches it inherits unless its IR says otherwise.
llvm::Expected<CompiledVariant> rebuildCandidate(const RunStore &store, int64_t id,
                                                 const mlir::DialectRegistry &registry,
                                                 llvm::StringRef taskSource, TaskFamily family,
                                                 const PTXOptions &ptx, llvm::StringRef ptxasPath);

struct TaskResult {
  std::string task;
  int64_t baselineId = -1, bestId = -1;
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

/// Evolves one task; resumes from the store when it already holds candidates of this task.
llvm::Expected<TaskResult> evolveTask(const TaskInput &task, mlir::MLIRContext *ctx,
                                      RunStore &store, const EvolveOptions &options,
                                      const Ceilings *ceilings, ProgressLine &progress);

} // namespace evo

#endif
