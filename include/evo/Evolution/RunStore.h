//===- RunStore.h - the single source of truth of an evolution run -*- C++ -*-===//
//
// One SQLite file per run directory (DIR/run.sqlite). Every candidate is recorded when it is
// created (verdict "pending") and updated when its evaluation finishes, each in its own
// transaction, so a run killed at any moment (SIGKILL included) loses only evaluations that were
// in flight; `resume` reads everything back. Reports are drawn from the store alone, without a
// GPU. Schema: docs/evolution.md.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_EVOLUTION_RUNSTORE_H
#define EVO_EVOLUTION_RUNSTORE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"
#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

struct sqlite3;

namespace evo {

/// A task of the run: one compute op (or fused chain) of the input module being evolved.
struct TaskRecord {
  std::string name;               // e.g. "softmax_t0"
  std::string function;           // the function it belongs to
  std::string family;             // elementwise | reduction | softmax | matmul | ...
  std::string source;             // the task as a func.func on tensors (printed IR)
  std::string status = "running"; // running | done
  int64_t baselineId = -1;
  int64_t bestId = -1;
  int generationsDone = 0;
};

struct CandidateRecord {
  int64_t id = -1; // assigned by the store
  std::string task;
  int generation = 0;
  int island = 0;
  std::vector<int64_t> parents;
  /// The operator that produced it: "baseline", "knob-mutate", "knob-crossover", "ir-unroll",
  /// "llm-init", "llm-mutate", ... (the LLM issue adds its own).
  std::string op;
  std::string knobs = "{}";    // JSON object
  std::string rewrites = "[]"; // JSON array of IR rewrites applied after lowering
  std::string ir;              // the variant's gpu.module (printed IR)
  std::string ptxHash;         // sha256 of its PTX; the PTX of an older candidate is not run again
  std::string compileDiagnostics;
  /// pending | valid | invalid | crashed | timeout | compile-error | not-run
  std::string verdict = "pending";
  std::string reason;
  double medianMs = NAN;
  std::string timing = "{}";   // JSON: the worker's timing object
  std::string roofline = "{}"; // JSON: RooflineVerdict
  int registers = -1;
  int spills = -1;
  /// Finalist re-measurement (interleaved, more repetitions); NaN if not a finalist.
  double finalMedianMs = NAN;
  /// LLM accounting (zero for built-in mutators). Never holds secrets.
  int64_t promptTokens = 0;
  int64_t completionTokens = 0;
  double costUsd = 0;
  std::string thought;   // the "thought" of an LLM reply, when any
  /// LLM candidates: the cache key binding the reply to its prompt, the request (system and
  /// user prompt, sampling parameters; JSON) so that a resumed run can ask again, and the number
  /// of replies it took (1 + repairs).
  std::string llmKey;
  std::string llmRequest = "{}";
  int64_t llmCalls = 0;
  std::string createdAt; // ISO 8601, set by the store
  /// Set by the store when a result is recorded: ISO 8601 time and the 1-based position in the
  /// run's evaluation order (evaluations may finish in another order than candidates were made).
  std::string evaluatedAt;
  int64_t evalOrder = -1;

  /// The evaluation finished (any verdict but "pending" and "not-run").
  bool isEvaluated() const { return verdict != "pending" && verdict != "not-run"; }
};

/// Thread-safe: every member takes the store's lock, so evaluation callbacks on several threads
/// may record results concurrently.
class RunStore {
public:
  /// Stored in meta.schema_version; a store with another version is refused, not migrated.
  static constexpr int schemaVersion = 2;

  /// Opens DIR/run.sqlite, creating DIR and the store when `create` is true and there is none.
  /// Opening a run that does not exist without `create`, or a file that is not an evo run store,
  /// is an error. A new store is made whole under a temporary name, with `initialMeta` in the
  /// same transaction as the schema, and renamed into place: a process killed while creating it
  /// leaves no run.sqlite at all (a later run starts afresh), never a store without its meta.
  static llvm::Expected<std::unique_ptr<RunStore>>
  open(llvm::StringRef dir, bool create,
       llvm::ArrayRef<std::pair<std::string, std::string>> initialMeta = {});
  ~RunStore();

  llvm::StringRef getPath() const { return path; }

  /// Run metadata (configuration JSON, input hash, device, status...). "schema_version" belongs
  /// to the store and cannot be set.
  llvm::Error setMeta(llvm::StringRef key, llvm::StringRef value);
  std::optional<std::string> getMeta(llvm::StringRef key) const;
  /// Every meta entry, by key.
  std::vector<std::pair<std::string, std::string>> getAllMeta() const;

  llvm::Error upsertTask(const TaskRecord &task);
  std::vector<TaskRecord> getTasks() const;
  std::optional<TaskRecord> getTask(llvm::StringRef name) const;

  /// Inserts the candidate (its id and createdAt are set on success). Its task must have been
  /// stored with upsertTask first.
  llvm::Error addCandidate(CandidateRecord &c);
  /// Stores the outcome of an evaluation of candidate `c.id`: verdict, reason, medianMs, timing,
  /// roofline, registers, spills, compileDiagnostics, and ir and ptxHash when not empty (they may
  /// only be known once compiled). With verdict "pending" it records what compiling found before
  /// the evaluation; any other verdict also sets evaluatedAt and the next evalOrder. The
  /// candidate's identity (task, parents, op, knobs, rewrites) and LLM accounting stay as added.
  llvm::Error recordResult(const CandidateRecord &c);
  /// Stores a finalist's re-measured median.
  llvm::Error recordFinal(int64_t id, double finalMedianMs);
  /// Records an LLM candidate's request and accounting (tokens and cost add up over repairs).
  llvm::Error recordLLM(const CandidateRecord &c);
  /// Inserts candidates exactly as given (ids, times, evaluation order, LLM fields included),
  /// all in one transaction: for building a store from others (`evo-opt runs-merge`,
  /// RunMerge.h). Their tasks must be stored first; an id already taken is an error.
  llvm::Error importCandidates(llvm::ArrayRef<CandidateRecord> candidates);
  /// All candidates of a task (all tasks when empty), by id.
  std::vector<CandidateRecord> getCandidates(llvm::StringRef task = "") const;
  std::optional<CandidateRecord> getCandidate(int64_t id) const;
  /// A candidate of `task` with this PTX hash whose evaluation finished (isEvaluated()), the
  /// earliest if several; never one for an empty hash.
  std::optional<CandidateRecord> findEvaluated(llvm::StringRef task, llvm::StringRef ptxHash) const;
  /// The oldest candidate of `task` whose PTX is that of candidate `winner` (whatever its
  /// verdict: a younger twin may have been the one evaluated), else `winner`. Outputs name the
  /// winner by it, so a replay names the same one whichever twin ran (docs/evolution.md).
  int64_t oldestWithSamePtx(llvm::StringRef task, const CandidateRecord &winner) const;

private:
  RunStore() = default;
  llvm::Error exec(llvm::StringRef sql);
  llvm::Error initialize(bool create,
                         llvm::ArrayRef<std::pair<std::string, std::string>> initialMeta = {});
  llvm::Error createSchema(llvm::ArrayRef<std::pair<std::string, std::string>> initialMeta);
  sqlite3 *db = nullptr;
  std::string path;
  /// SQLite serializes single calls, but a write is several calls (BEGIN, statements, COMMIT)
  /// that must not interleave with another thread's.
  mutable std::mutex mutex;
};

/// Groups failure reasons that differ only in their numbers: every number becomes "N", so
/// "512 of 1024 elements" and "3 of 1024 elements" read "N of N elements".
std::string normalizeReason(llvm::StringRef reason);

/// JSON summary of a run (per task: baseline and best times, speedup, roofline fraction, counts
/// by verdict, invalid reasons, the winner's lineage; totals), drawn from the store alone.
llvm::json::Value summarizeRun(const RunStore &store);

/// A self-contained HTML report (inline CSS and SVG, no scripts from the network): best-so-far vs
/// evaluated candidates per task, speedup per op, fraction of roofline, the winner's lineage,
/// invalid reasons.
std::string renderHtmlReport(const RunStore &store);

/// Writes DIR/report.json and DIR/report.html (atomically).
llvm::Error writeReports(const RunStore &store, llvm::StringRef dir);

/// A one-line live progress display on stderr, redrawn in place; silent when `quiet` or when
/// stderr is not a terminal.
class ProgressLine {
public:
  /// Terminal: one line redrawn in place. Lines: one plain line per generation of each task
  /// and one when it ends (logs, pipes, batch jobs). Off: nothing.
  enum class Mode { Off, Terminal, Lines };
  /// Terminal when stderr is one, else Lines; Off when `quiet`.
  explicit ProgressLine(bool quiet);
  ProgressLine(Mode mode, llvm::raw_ostream &os);
  ~ProgressLine();
  /// e.g. "softmax_t0 | gen 3/10 | 45 evaluated | 78% valid | best 3.42x | ETA 1m20s".
  void update(llvm::StringRef task, int generation, int generations, int evaluated, int valid,
              double bestSpeedup, double etaSeconds);
  /// Ends the line (a newline) if anything was drawn; Lines: prints the newest state of `task`
  /// (of every task when empty), followed by `state` ("done", "paused"). Thread-safe, like
  /// update(): tasks searched on several GPUs at once share one ProgressLine.
  void finish(llvm::StringRef state = "", llvm::StringRef task = "");
  bool enabled() const { return on; }

  /// The text of a line (without the redraw control sequences); parts without data are left out.
  static std::string format(llvm::StringRef task, int generation, int generations, int evaluated,
                            int valid, double bestSpeedup, double etaSeconds);
  /// "45s", "1m20s", "2h05m"; empty when unknown (negative, NaN or infinite).
  static std::string formatEta(double seconds);

private:
  void draw(llvm::StringRef text);
  Mode mode = Mode::Off;
  llvm::raw_ostream *os = nullptr;
  bool on = false;
  std::mutex mutex;
  /// Lines: per task, the generation of its last line printed and its newest state.
  struct TaskLine {
    int printedGeneration = -1;
    std::string newest;
  };
  std::map<std::string, TaskLine> lines;
  bool drawn = false;
  /// Redraws are throttled; the newest line not yet drawn is kept for finish().
  std::chrono::steady_clock::time_point lastDraw;
  std::string pending;
};

} // namespace evo

#endif
