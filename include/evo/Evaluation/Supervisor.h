//===- Supervisor.h - running GPU work in isolated worker processes -*- C++ -*-===//
//
// Every candidate kernel runs inside evo-eval-worker, never inside evo-opt. The Supervisor writes
// a request, starts a worker, follows the JSON lines it writes, and enforces a wall-clock limit
// per candidate. When a worker dies (a kernel faulted, trapped or hung and was killed, or the
// worker aborted), the candidate it was running gets the reason, and a fresh worker - a fresh
// CUDA context - continues with the candidates not yet evaluated. The parent never waits without
// a bound.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_EVALUATION_SUPERVISOR_H
#define EVO_EVALUATION_SUPERVISOR_H

#include "evo/Dialect/Evo/IR/EvoDialect.h"
#include "evo/Evaluation/WorkerProtocol.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"
#include <string>
#include <vector>

namespace evo {

/// Exit codes of evo-eval-worker (WorkerProtocol.h).
enum WorkerExit {
  kWorkerOk = protocol::kExitOk,
  kWorkerBadRequest = protocol::kExitBadRequest,
  kWorkerFatalCuda = protocol::kExitFatalCuda,
  kWorkerNoGpu = protocol::kExitNoGpu,
};

struct WorkerOptions {
  /// The worker executable (see findWorker).
  std::string workerPath;
  /// Wall-clock limit for one candidate, from its "begin" to its "result".
  double candidateTimeoutSeconds = 60;
  /// Limit for a worker to report its device.
  double startupTimeoutSeconds = 60;
  /// Where request, result and log files go; a fresh temporary directory when empty.
  std::string workDir;
  /// Extra arguments to the worker (tests use them to drive stand-in workers).
  std::vector<std::string> extraArgs;
  /// How long the parent sleeps between looks at the worker's output (tests lengthen it to make
  /// a worker's write-and-exit land within one look).
  double pollIntervalSeconds = 0.002;
};

/// Verdict ("valid", "invalid", "crashed", "timeout", "not-run") and its stringify/symbolize are
/// the evo dialect's (EvoEnums.td).
llvm::json::Value toJSON(Verdict v);
bool fromJSON(const llvm::json::Value &value, Verdict &v, llvm::json::Path path);

struct CandidateOutcome {
  std::string id;
  Verdict verdict = Verdict::NotRun;
  std::string reason;
  /// The worker's "result" object (trials, timing), when there is one.
  llvm::json::Object result;
};

/// Reads a worker's "result" event (WorkerProtocol.h): "id" and "verdict" (only "valid" or
/// "invalid": a worker never reports the parent's verdicts) are required, "reason" is optional;
/// `result` keeps the whole event.
bool fromJSON(const llvm::json::Value &value, CandidateOutcome &outcome, llvm::json::Path path);

struct EvaluationRun {
  /// The worker's "device" event.
  llvm::json::Object device;
  /// One per candidate of the request, in request order.
  std::vector<CandidateOutcome> outcomes;
  unsigned workersStarted = 0;
};

/// A long-lived evaluation: an optional reference candidate and a stream of candidates, evaluated
/// by a worker that keeps running between submissions (no start-up cost per candidate; the GPU
/// works while the caller compiles the next ones). When the worker dies or a candidate runs past
/// its limit, the running candidate is blamed and a fresh worker (a fresh CUDA context) reruns
/// the reference and continues with the candidates still queued.
class EvaluationSession {
public:
  /// `request` is an evo-eval-request (WorkerProtocol.h) in "evaluate" mode without candidates; `reference` is a
  /// candidate object (or null) that every worker evaluates first.
  static llvm::Expected<std::unique_ptr<EvaluationSession>>
  start(const llvm::json::Object &request, std::optional<llvm::json::Object> reference,
        const WorkerOptions &options);
  ~EvaluationSession();

  /// The reference's outcome; waits for it (bounded by the timeouts).
  llvm::Expected<CandidateOutcome> referenceOutcome();
  /// Queues a candidate object; returns its ticket (0, 1, ... in submission order).
  size_t submit(llvm::json::Object candidate);
  /// Outcomes finished since the last call, as (ticket, outcome); waits at most `seconds` for
  /// the first one. Errors are for failures to run workers at all.
  llvm::Expected<std::vector<std::pair<size_t, CandidateOutcome>>> poll(double seconds);
  /// Submitted candidates without an outcome yet.
  size_t pending() const;
  const llvm::json::Object &device() const { return deviceInfo; }
  unsigned workersStarted() const { return starts; }

private:
  EvaluationSession() = default;
  llvm::Error startWorker();
  llvm::Error step(std::vector<std::pair<size_t, CandidateOutcome>> &done);

  struct Impl;
  std::unique_ptr<Impl> impl;
  llvm::json::Object deviceInfo;
  unsigned starts = 0;
};

/// Finds evo-eval-worker: $EVO_EVAL_WORKER, then next to the running executable, then PATH.
llvm::Expected<std::string> findWorker(llvm::StringRef explicitPath = "");

/// Evaluates the request's "candidates" (an evo-eval-request in "evaluate" mode), restarting
/// workers after crashes. A reference candidate ("reference": true) is rerun by every new worker
/// (later candidates are compared with its outputs); if it is itself not valid, the others are
/// NotRun. Errors are for failures to run workers at all (no GPU, bad request, no progress).
llvm::Expected<EvaluationRun> evaluateCandidates(const llvm::json::Object &request,
                                                 const WorkerOptions &options);

/// Runs a one-shot request ("probe", "ceilings") and returns its events.
llvm::Expected<std::vector<llvm::json::Object>> runWorkerOnce(const llvm::json::Object &request,
                                                              const WorkerOptions &options,
                                                              double timeoutSeconds);

} // namespace evo

#endif
