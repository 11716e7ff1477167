//===- Supervisor.cpp - running GPU work in isolated worker processes ----------===//

#include "evo/Evaluation/Supervisor.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <csignal>
#include <cstring>
#include <sys/wait.h>
#include <thread>

using namespace llvm;
namespace json = llvm::json;

namespace evo {

StringRef stringifyVerdict(Verdict v) {
  switch (v) {
  case Verdict::Valid:
    return "valid";
  case Verdict::Invalid:
    return "invalid";
  case Verdict::Crashed:
    return "crashed";
  case Verdict::Timeout:
    return "timeout";
  case Verdict::NotRun:
    return "not-run";
  }
  llvm_unreachable("unknown verdict");
}

Expected<std::string> findWorker(StringRef explicitPath) {
  auto usable = [](StringRef p) { return sys::fs::can_execute(p) && !sys::fs::is_directory(p); };
  if (!explicitPath.empty()) {
    if (usable(explicitPath))
      return explicitPath.str();
    return createStringError(inconvertibleErrorCode(),
                             "evo-eval-worker '" + explicitPath + "' is not executable");
  }
  if (std::optional<std::string> env = sys::Process::GetEnv("EVO_EVAL_WORKER")) {
    if (usable(*env))
      return *env;
    return createStringError(inconvertibleErrorCode(),
                             "EVO_EVAL_WORKER='" + *env + "' is not executable");
  }
  static int anchor;
  std::string self = sys::fs::getMainExecutable(nullptr, &anchor);
  if (!self.empty()) {
    SmallString<256> p(sys::path::parent_path(self));
    sys::path::append(p, "evo-eval-worker");
    if (usable(p))
      return p.str().str();
  }
  if (ErrorOr<std::string> p = sys::findProgramByName("evo-eval-worker"))
    return *p;
  return createStringError(inconvertibleErrorCode(),
                           "evo-eval-worker not found (next to evo-opt, on PATH, or "
                           "$EVO_EVAL_WORKER); it is built when nvcc is available");
}

namespace {

using Clock = std::chrono::steady_clock;

std::string signalName(int sig) {
  const char *name = sigabbrev_np(sig);
  std::string s = name ? std::string("SIG") + name : "signal " + std::to_string(sig);
  if (const char *d = strsignal(sig))
    s += std::string(" (") + d + ")";
  return s;
}

/// A started worker and the JSON lines it has written so far.
class WorkerProcess {
public:
  Error start(const WorkerOptions &opts, const json::Object &request, StringRef dir, unsigned n) {
    SmallString<256> req(dir), res(dir), log(dir);
    sys::path::append(req, "request" + std::to_string(n) + ".json");
    sys::path::append(res, "results" + std::to_string(n) + ".jsonl");
    sys::path::append(log, "worker" + std::to_string(n) + ".log");
    resultsPath = res.str().str();
    logPath = log.str().str();
    {
      std::error_code ec;
      raw_fd_ostream os(req, ec);
      if (ec)
        return errorCodeToError(ec);
      os << json::Value(json::Object(request));
    }
    std::vector<StringRef> args = {opts.workerPath};
    for (const std::string &a : opts.extraArgs)
      args.push_back(a);
    args.push_back(req);
    args.push_back(res);
    std::optional<StringRef> redirects[] = {StringRef("/dev/null"), StringRef(logPath),
                                            StringRef(logPath)};
    std::string err;
    bool failedToExec = false;
    sys::ProcessInfo pi = sys::ExecuteNoWait(opts.workerPath, args, std::nullopt, redirects, 0,
                                             &err, &failedToExec);
    if (failedToExec || pi.Pid <= 0)
      return createStringError(inconvertibleErrorCode(),
                               "cannot start '" + opts.workerPath + "': " + err);
    pid = pi.Pid;
    return Error::success();
  }

  /// New complete lines since the last call.
  std::vector<json::Object> poll() {
    std::vector<json::Object> events;
    ErrorOr<std::unique_ptr<MemoryBuffer>> buf = MemoryBuffer::getFile(resultsPath);
    if (!buf)
      return events;
    StringRef text = (*buf)->getBuffer();
    if (text.size() <= consumed)
      return events;
    StringRef rest = text.drop_front(consumed);
    while (true) {
      size_t nl = rest.find('\n');
      if (nl == StringRef::npos)
        break;
      StringRef line = rest.take_front(nl);
      consumed += nl + 1;
      rest = rest.drop_front(nl + 1);
      Expected<json::Value> v = json::parse(line);
      if (!v) {
        consumeError(v.takeError());
        garbage = line.take_front(200).str();
        continue;
      }
      if (json::Object *o = v->getAsObject())
        events.push_back(std::move(*o));
    }
    return events;
  }

  /// Non-blocking: true once the process has ended.
  bool exited() {
    if (pid <= 0)
      return true;
    int status = 0;
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) {
      pid = 0;
      if (WIFSIGNALED(status))
        signal = WTERMSIG(status);
      else if (WIFEXITED(status))
        exitCode = WEXITSTATUS(status);
      return true;
    }
    return r < 0; // not our child any more
  }

  void kill() {
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      int status;
      waitpid(pid, &status, 0); // SIGKILL cannot be ignored: this returns promptly
      pid = 0;
      signal = SIGKILL;
    }
  }

  std::string tailOfLog() const {
    ErrorOr<std::unique_ptr<MemoryBuffer>> buf = MemoryBuffer::getFile(logPath);
    if (!buf)
      return "";
    StringRef t = (*buf)->getBuffer().rtrim();
    return t.take_back(600).str();
  }

  std::string howItEnded() const {
    if (signal)
      return "the worker died from " + signalName(signal);
    return "the worker exited with status " + std::to_string(exitCode);
  }

  ~WorkerProcess() { kill(); }

  pid_t pid = 0;
  int signal = 0;
  int exitCode = -1;
  std::string garbage;

private:
  std::string resultsPath, logPath;
  size_t consumed = 0;
};

Expected<std::string> workDirFor(const WorkerOptions &opts) {
  if (!opts.workDir.empty()) {
    if (std::error_code ec = sys::fs::create_directories(opts.workDir))
      return errorCodeToError(ec);
    return opts.workDir;
  }
  SmallString<128> dir;
  if (std::error_code ec = sys::fs::createUniqueDirectory("evo-eval", dir))
    return errorCodeToError(ec);
  return dir.str().str();
}

Error fatalError(const json::Object &event, const WorkerProcess &w) {
  std::string reason = event.getString("reason").value_or("").str();
  return createStringError(inconvertibleErrorCode(), "evo-eval-worker: " + reason);
}

} // namespace

Expected<EvaluationRun> evaluateCandidates(const json::Object &request,
                                           const WorkerOptions &options) {
  const json::Array *cands = request.getArray("candidates");
  if (!cands || cands->empty())
    return createStringError(inconvertibleErrorCode(), "evaluation request without candidates");
  Expected<std::string> dir = workDirFor(options);
  if (!dir)
    return dir.takeError();

  EvaluationRun run;
  std::optional<size_t> reference;
  for (size_t i = 0; i < cands->size(); ++i) {
    const json::Object *c = (*cands)[i].getAsObject();
    if (!c)
      return createStringError(inconvertibleErrorCode(), "candidates must be objects");
    CandidateOutcome o;
    o.id = c->getString("id").value_or("").str();
    run.outcomes.push_back(std::move(o));
    if (c->getBoolean("reference").value_or(false))
      reference = i;
  }
  std::vector<size_t> pending;
  for (size_t i = 0; i < cands->size(); ++i)
    pending.push_back(i);

  unsigned idleStarts = 0;
  while (!pending.empty()) {
    if (reference && run.outcomes[*reference].verdict != Verdict::NotRun &&
        run.outcomes[*reference].verdict != Verdict::Valid)
      break;
    // This worker's candidates: the reference (again, for its outputs) and the pending ones.
    std::vector<size_t> batch;
    if (reference && !llvm::is_contained(pending, *reference))
      batch.push_back(*reference);
    batch.insert(batch.end(), pending.begin(), pending.end());
    json::Object sub = request;
    json::Array subCands;
    for (size_t i : batch)
      subCands.push_back((*cands)[i]);
    sub["candidates"] = std::move(subCands);

    WorkerProcess worker;
    if (Error e = worker.start(options, sub, *dir, run.workersStarted++))
      return std::move(e);
    Clock::time_point started = Clock::now(), candidateStart;
    std::optional<size_t> current; // index into `batch`
    bool sawDevice = false;
    size_t completedBefore = pending.size();
    std::optional<std::string> fatalReason;
    bool timedOut = false;

    auto handle = [&](json::Object &ev) -> Error {
      StringRef kind = ev.getString("event").value_or("");
      std::optional<int64_t> c = ev.getInteger("candidate");
      if (kind == "device") {
        sawDevice = true;
        run.device = ev;
      } else if (kind == "begin" && c && *c >= 0 && size_t(*c) < batch.size()) {
        current = *c;
        candidateStart = Clock::now();
      } else if (kind == "result" && c && *c >= 0 && size_t(*c) < batch.size()) {
        size_t orig = batch[*c];
        bool rerunOfReference = reference && orig == *reference &&
                                run.outcomes[orig].verdict != Verdict::NotRun;
        if (!rerunOfReference) {
          CandidateOutcome &o = run.outcomes[orig];
          StringRef v = ev.getString("verdict").value_or("invalid");
          o.verdict = v == "valid" ? Verdict::Valid : Verdict::Invalid;
          o.reason = ev.getString("reason").value_or("").str();
          o.result = ev;
        }
        llvm::erase(pending, orig);
        current.reset();
      } else if (kind == "fatal") {
        if (!c || *c < 0)
          return fatalError(ev, worker);
        fatalReason = ev.getString("reason").value_or("").str();
      }
      return Error::success();
    };

    while (true) {
      for (json::Object &ev : worker.poll())
        if (Error e = handle(ev))
          return std::move(e);
      if (worker.exited()) {
        for (json::Object &ev : worker.poll())
          if (Error e = handle(ev))
            return std::move(e);
        break;
      }
      double sinceStart = std::chrono::duration<double>(Clock::now() - started).count();
      if (!sawDevice && sinceStart > options.startupTimeoutSeconds) {
        worker.kill();
        return createStringError(inconvertibleErrorCode(),
                                 "evo-eval-worker did not report its device within " +
                                     std::to_string(int(options.startupTimeoutSeconds)) + " s");
      }
      if (current && std::chrono::duration<double>(Clock::now() - candidateStart).count() >
                         options.candidateTimeoutSeconds) {
        worker.kill();
        timedOut = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }

    if (worker.exitCode == kWorkerNoGpu || worker.exitCode == kWorkerBadRequest)
      return createStringError(inconvertibleErrorCode(),
                               "evo-eval-worker: " + worker.howItEnded() + ": " +
                                   worker.tailOfLog());
    if (current) {
      // The worker stopped in the middle of this candidate: it is the one to blame.
      size_t orig = batch[*current];
      CandidateOutcome &o = run.outcomes[orig];
      if (timedOut) {
        o.verdict = Verdict::Timeout;
        o.reason = "no result within " + std::to_string(int(options.candidateTimeoutSeconds)) +
                   " s (an infinite loop or a hang); the worker was killed";
      } else {
        o.verdict = Verdict::Crashed;
        o.reason = fatalReason ? *fatalReason : worker.howItEnded();
        if (!fatalReason && !worker.garbage.empty())
          o.reason += "; last output: " + worker.garbage;
      }
      llvm::erase(pending, orig);
    } else if (!pending.empty() && pending.size() == completedBefore) {
      // No progress and nobody to blame: do not loop forever.
      if (++idleStarts >= 2) {
        std::string why = worker.howItEnded();
        if (!worker.garbage.empty())
          why += "; it wrote '" + worker.garbage + "'";
        for (size_t i : pending) {
          run.outcomes[i].verdict = Verdict::Crashed;
          run.outcomes[i].reason = "evo-eval-worker made no progress: " + why;
        }
        break;
      }
      continue;
    }
    idleStarts = 0;
  }
  // Nothing is trusted after a reference that is not valid: later candidates were compared with
  // nothing (or were not run at all).
  if (reference && run.outcomes[*reference].verdict != Verdict::Valid)
    for (size_t i = 0; i < run.outcomes.size(); ++i)
      if (i != *reference) {
        run.outcomes[i].verdict = Verdict::NotRun;
        run.outcomes[i].reason = "not run: the reference '" + run.outcomes[*reference].id +
                                 "' is " +
                                 stringifyVerdict(run.outcomes[*reference].verdict).str() + ": " +
                                 run.outcomes[*reference].reason;
        run.outcomes[i].result = json::Object();
      }
  return run;
}

Expected<std::vector<json::Object>> runWorkerOnce(const json::Object &request,
                                                  const WorkerOptions &options,
                                                  double timeoutSeconds) {
  Expected<std::string> dir = workDirFor(options);
  if (!dir)
    return dir.takeError();
  WorkerProcess worker;
  if (Error e = worker.start(options, request, *dir, 0))
    return std::move(e);
  std::vector<json::Object> events;
  Clock::time_point started = Clock::now();
  while (!worker.exited()) {
    for (json::Object &ev : worker.poll())
      events.push_back(std::move(ev));
    if (std::chrono::duration<double>(Clock::now() - started).count() > timeoutSeconds) {
      worker.kill();
      return createStringError(inconvertibleErrorCode(),
                               "evo-eval-worker did not finish within " +
                                   std::to_string(int(timeoutSeconds)) + " s");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  for (json::Object &ev : worker.poll())
    events.push_back(std::move(ev));
  for (json::Object &ev : events)
    if (ev.getString("event") == StringRef("fatal"))
      return fatalError(ev, worker);
  if (worker.exitCode != kWorkerOk)
    return createStringError(inconvertibleErrorCode(),
                             "evo-eval-worker: " + worker.howItEnded() + ": " + worker.tailOfLog());
  return events;
}

} // namespace evo
