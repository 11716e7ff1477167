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
#include <atomic>
#include <deque>
#include <unistd.h>
#include <thread>

using namespace llvm;
namespace json = llvm::json;

namespace evo {

json::Value toJSON(Verdict v) { return stringifyVerdict(v); }

bool fromJSON(const json::Value &value, Verdict &v, json::Path path) {
  std::optional<StringRef> name = value.getAsString();
  std::optional<Verdict> parsed = name ? symbolizeVerdict(*name) : std::nullopt;
  if (!parsed) {
    path.report("expected a verdict (valid, invalid, crashed, timeout, not-run)");
    return false;
  }
  v = *parsed;
  return true;
}

bool fromJSON(const json::Value &value, CandidateOutcome &outcome, json::Path path) {
  json::ObjectMapper mapper(value, path);
  if (!mapper || !mapper.map(protocol::kId, outcome.id) ||
      !mapper.map(protocol::kVerdict, outcome.verdict) ||
      !mapper.mapOptional(protocol::kReason, outcome.reason))
    return false;
  if (outcome.verdict != Verdict::Valid && outcome.verdict != Verdict::Invalid) {
    path.field(protocol::kVerdict).report("a worker's verdict is valid or invalid");
    return false;
  }
  outcome.result = *value.getAsObject();
  return true;
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
  Error start(const WorkerOptions &opts, const json::Object &request, StringRef dir, unsigned) {
    // Names never reused within a process (sessions and one-shot runs share work directories):
    // a stale results file must never be read as this worker's.
    static std::atomic<unsigned> serial{0};
    std::string n = std::to_string(::getpid()) + "-" + std::to_string(serial++);
    SmallString<256> req(dir), res(dir), log(dir);
    sys::path::append(req, "request-" + n + ".json");
    sys::path::append(res, "results-" + n + ".jsonl");
    sys::path::append(log, "worker-" + n + ".log");
    sys::fs::remove(res);
    resultsPath = res.str().str();
    logPath = log.str().str();
    {
      std::error_code ec;
      raw_fd_ostream os(req, ec);
      if (ec)
        return errorCodeToError(ec);
      json::Object withParent(request);
      withParent[protocol::kParentPid] = static_cast<int64_t>(::getpid()); // ParentWatch.h
      os << json::Value(std::move(withParent));
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

/// Where a session's or a one-shot run's request, queue, results and log files go: the caller's
/// work directory, or a fresh temporary one that is removed with this object (on every return
/// path; only a killed evo-opt leaves one behind).
struct WorkDir {
  std::string path;
  bool owned = false;
  WorkDir() = default;
  WorkDir(const WorkDir &) = delete;
  WorkDir &operator=(WorkDir &&o) {
    std::swap(path, o.path);
    std::swap(owned, o.owned);
    return *this;
  }
  ~WorkDir() {
    if (owned && !path.empty())
      sys::fs::remove_directories(path, /*IgnoreErrors=*/true);
  }
};

Error makeWorkDir(const WorkerOptions &opts, WorkDir &out) {
  if (!opts.workDir.empty()) {
    if (std::error_code ec = sys::fs::create_directories(opts.workDir))
      return errorCodeToError(ec);
    out.path = opts.workDir;
    out.owned = false;
    return Error::success();
  }
  SmallString<128> dir;
  if (std::error_code ec = sys::fs::createUniqueDirectory("evo-eval", dir))
    return errorCodeToError(ec);
  out.path = dir.str().str();
  out.owned = true;
  return Error::success();
}

Error fatalError(const json::Object &event) {
  std::string reason = event.getString(protocol::kReason).value_or("").str();
  return createStringError(inconvertibleErrorCode(), "evo-eval-worker: " + reason);
}

void sleepBetweenLooks(const WorkerOptions &opts) {
  std::this_thread::sleep_for(std::chrono::microseconds(
      static_cast<int64_t>(std::max(0.0005, opts.pollIntervalSeconds) * 1e6)));
}

/// A malformed result is the candidate's failure (invalid, with the mapping's complaint as the
/// reason), never a valid verdict.
CandidateOutcome outcomeFromResult(const json::Object &ev) {
  CandidateOutcome o;
  json::Value value = json::Object(ev);
  json::Path::Root root("result");
  if (!fromJSON(value, o, root)) {
    o.id = ev.getString(protocol::kId).value_or("").str();
    o.verdict = Verdict::Invalid;
    o.reason = "malformed result from evo-eval-worker: " + llvm::toString(root.getError());
    o.result = ev;
  }
  return o;
}

} // namespace

struct EvaluationSession::Impl {
  WorkerOptions options;
  WorkDir workDir; // declared first: removed after the worker below is gone
  std::string dir;
  json::Object request;
  std::optional<json::Object> reference;
  std::optional<CandidateOutcome> referenceResult;
  std::vector<json::Object> tickets;
  std::vector<std::optional<CandidateOutcome>> outcomes;
  std::vector<std::pair<size_t, CandidateOutcome>> ready;

  // The current worker: its queue file and how its candidate numbers map to tickets (-1 is the
  // reference).
  std::unique_ptr<WorkerProcess> worker;
  std::string queuePath;
  std::vector<long> ticketOf;
  std::optional<size_t> running;
  Clock::time_point runningSince, workerStart;
  bool sawDevice = false;
  bool progress = false;
  unsigned idleStarts = 0;
  std::optional<std::string> fatalReason;

  void append(const json::Value &line) {
    std::error_code ec;
    raw_fd_ostream os(queuePath, ec, sys::fs::OF_Append);
    os << line << "\n";
  }
  void resolve(size_t ticket, CandidateOutcome o) {
    if (outcomes[ticket])
      return;
    if (o.id.empty())
      o.id = tickets[ticket].getString(protocol::kId).value_or("").str();
    outcomes[ticket] = o;
    ready.push_back({ticket, std::move(o)});
  }
  void failPending(Verdict v, const std::string &reason) {
    for (size_t t = 0; t < tickets.size(); ++t)
      if (!outcomes[t]) {
        CandidateOutcome o;
        o.verdict = v;
        o.reason = reason;
        resolve(t, std::move(o));
      }
  }
  bool referenceFailed() const {
    return referenceResult && referenceResult->verdict != Verdict::Valid;
  }
};

Expected<std::unique_ptr<EvaluationSession>>
EvaluationSession::start(const json::Object &request, std::optional<json::Object> reference,
                         const WorkerOptions &options) {
  std::unique_ptr<EvaluationSession> s(new EvaluationSession());
  s->impl = std::make_unique<Impl>();
  Impl &m = *s->impl;
  m.options = options;
  if (Error e = makeWorkDir(options, m.workDir))
    return std::move(e);
  m.dir = m.workDir.path;
  m.request = request;
  m.reference = std::move(reference);
  if (Error e = s->startWorker())
    return std::move(e);
  return s;
}

Error EvaluationSession::startWorker() {
  Impl &m = *impl;
  static std::atomic<unsigned> serial{0};
  SmallString<256> q(m.dir);
  sys::path::append(q, "queue-" + std::to_string(::getpid()) + "-" + std::to_string(serial++) +
                           ".jsonl");
  m.queuePath = q.str().str();
  {
    std::error_code ec;
    raw_fd_ostream os(m.queuePath, ec); // an empty queue
    if (ec)
      return errorCodeToError(ec);
  }
  json::Object req = m.request;
  json::Array cands;
  m.ticketOf.clear();
  if (m.reference) {
    cands.push_back(json::Object(*m.reference));
    m.ticketOf.push_back(-1);
  }
  req[protocol::kCandidates] = std::move(cands);
  req[protocol::kQueue] = m.queuePath;
  m.worker = std::make_unique<WorkerProcess>();
  if (Error e = m.worker->start(m.options, req, m.dir, starts++))
    return e;
  m.workerStart = Clock::now();
  m.sawDevice = false;
  m.progress = false;
  m.running.reset();
  m.fatalReason.reset();
  // Whatever is still unfinished goes to the new worker, in submission order.
  for (size_t t = 0; t < m.tickets.size(); ++t)
    if (!m.outcomes[t]) {
      m.append(json::Object(m.tickets[t]));
      m.ticketOf.push_back(static_cast<long>(t));
    }
  return Error::success();
}

size_t EvaluationSession::submit(json::Object candidate) {
  Impl &m = *impl;
  size_t ticket = m.tickets.size();
  m.tickets.push_back(candidate);
  m.outcomes.emplace_back();
  if (m.referenceFailed()) {
    m.failPending(Verdict::NotRun, "not run: the reference '" + m.referenceResult->id + "' is " +
                                       stringifyVerdict(m.referenceResult->verdict).str() + ": " +
                                       m.referenceResult->reason);
    return ticket;
  }
  m.append(json::Value(std::move(candidate)));
  m.ticketOf.push_back(static_cast<long>(ticket));
  return ticket;
}

size_t EvaluationSession::pending() const {
  size_t n = 0;
  for (const auto &o : impl->outcomes)
    n += !o;
  return n;
}

Error EvaluationSession::step(std::vector<std::pair<size_t, CandidateOutcome>> &done) {
  Impl &m = *impl;
  WorkerProcess &w = *m.worker;
  auto handle = [&](json::Object &ev) -> Error {
    StringRef kind = ev.getString(protocol::kEvent).value_or("");
    std::optional<int64_t> c = ev.getInteger(protocol::kCandidate);
    bool known = c && *c >= 0 && size_t(*c) < m.ticketOf.size();
    if (kind == protocol::kEventDevice) {
      m.sawDevice = true;
      deviceInfo = ev;
    } else if (kind == protocol::kEventBegin && known) {
      m.running = *c;
      m.runningSince = Clock::now();
    } else if (kind == protocol::kEventResult && known) {
      long ticket = m.ticketOf[*c];
      CandidateOutcome o = outcomeFromResult(ev);
      if (ticket < 0) {
        if (!m.referenceResult || o.verdict != Verdict::Valid)
          m.referenceResult = o;
      } else {
        m.resolve(ticket, std::move(o));
      }
      m.running.reset();
      m.progress = true;
    } else if (kind == protocol::kEventFatal) {
      if (!c || *c < 0)
        return fatalError(ev);
      m.fatalReason = ev.getString(protocol::kReason).value_or("").str();
    }
    return Error::success();
  };
  for (json::Object &ev : w.poll())
    if (Error e = handle(ev))
      return e;

  bool died = false, timedOut = false;
  if (w.exited()) {
    for (json::Object &ev : w.poll())
      if (Error e = handle(ev))
        return e;
    died = true;
  } else if (!m.sawDevice && std::chrono::duration<double>(Clock::now() - m.workerStart).count() >
                                 m.options.startupTimeoutSeconds) {
    w.kill();
    return createStringError(inconvertibleErrorCode(),
                             "evo-eval-worker did not report its device within " +
                                 std::to_string(int(m.options.startupTimeoutSeconds)) + " s");
  } else if (m.running && std::chrono::duration<double>(Clock::now() - m.runningSince).count() >
                              m.options.candidateTimeoutSeconds) {
    w.kill();
    died = timedOut = true;
  }

  if (died) {
    if (w.exitCode == kWorkerNoGpu || w.exitCode == kWorkerBadRequest)
      return createStringError(inconvertibleErrorCode(), "evo-eval-worker: " + w.howItEnded() +
                                                             ": " + w.tailOfLog());
    if (m.running) {
      // The worker stopped in the middle of this candidate: it is the one to blame.
      CandidateOutcome o;
      if (timedOut) {
        o.verdict = Verdict::Timeout;
        o.reason = "no result within " + std::to_string(int(m.options.candidateTimeoutSeconds)) +
                   " s (an infinite loop or a hang); the worker was killed";
      } else {
        o.verdict = Verdict::Crashed;
        o.reason = m.fatalReason ? *m.fatalReason : w.howItEnded();
        if (!m.fatalReason && !w.garbage.empty())
          o.reason += "; last output: " + w.garbage;
      }
      long ticket = m.ticketOf[*m.running];
      if (ticket < 0) {
        o.id = m.reference->getString(protocol::kId).value_or("").str();
        m.referenceResult = o;
      } else {
        m.resolve(ticket, std::move(o));
      }
      m.idleStarts = 0;
    } else if (!m.progress && pending() > 0 && !m.referenceFailed()) {
      // Nobody to blame and nothing done: do not restart forever.
      if (++m.idleStarts >= 2) {
        std::string why = w.howItEnded();
        if (!w.garbage.empty())
          why += "; it wrote '" + w.garbage + "'";
        m.failPending(Verdict::Crashed, "evo-eval-worker made no progress: " + why);
      }
    } else {
      m.idleStarts = 0;
    }
    if (m.referenceFailed())
      m.failPending(Verdict::NotRun, "not run: the reference '" + m.referenceResult->id +
                                         "' is " +
                                         stringifyVerdict(m.referenceResult->verdict).str() +
                                         ": " + m.referenceResult->reason);
    if (pending() > 0)
      if (Error e = startWorker())
        return e;
  }
  done.insert(done.end(), std::make_move_iterator(m.ready.begin()),
              std::make_move_iterator(m.ready.end()));
  m.ready.clear();
  return Error::success();
}

Expected<CandidateOutcome> EvaluationSession::referenceOutcome() {
  Impl &m = *impl;
  if (!m.reference)
    return createStringError(inconvertibleErrorCode(), "the session has no reference");
  std::vector<std::pair<size_t, CandidateOutcome>> done;
  while (!m.referenceResult) {
    if (Error e = step(done))
      return std::move(e);
    sleepBetweenLooks(m.options);
  }
  m.ready.insert(m.ready.begin(), std::make_move_iterator(done.begin()),
                 std::make_move_iterator(done.end()));
  return *m.referenceResult;
}

Expected<std::vector<std::pair<size_t, CandidateOutcome>>>
EvaluationSession::poll(double seconds) {
  std::vector<std::pair<size_t, CandidateOutcome>> done;
  Clock::time_point deadline =
      Clock::now() + std::chrono::microseconds(static_cast<int64_t>(seconds * 1e6));
  while (true) {
    if (Error e = step(done))
      return std::move(e);
    if (!done.empty() || pending() == 0 || Clock::now() >= deadline)
      return done;
    sleepBetweenLooks(impl->options);
  }
}

EvaluationSession::~EvaluationSession() {
  if (!impl || !impl->worker)
    return;
  impl->append(json::Object{{protocol::kEnd, true}});
  Clock::time_point until = Clock::now() + std::chrono::seconds(3);
  while (!impl->worker->exited() && Clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  impl->worker->kill();
}

Expected<EvaluationRun> evaluateCandidates(const json::Object &request,
                                           const WorkerOptions &options) {
  const json::Array *cands = request.getArray(protocol::kCandidates);
  if (!cands || cands->empty())
    return createStringError(inconvertibleErrorCode(), "evaluation request without candidates");
  std::optional<size_t> refIndex;
  for (size_t i = 0; i < cands->size(); ++i) {
    const json::Object *c = (*cands)[i].getAsObject();
    if (!c)
      return createStringError(inconvertibleErrorCode(), "candidates must be objects");
    if (c->getBoolean(protocol::kReference).value_or(false) && !refIndex)
      refIndex = i;
  }
  json::Object base = request;
  base.erase(protocol::kCandidates);
  std::optional<json::Object> reference;
  if (refIndex)
    reference = *(*cands)[*refIndex].getAsObject();
  Expected<std::unique_ptr<EvaluationSession>> session =
      EvaluationSession::start(base, reference, options);
  if (!session)
    return session.takeError();
  EvaluationRun run;
  run.outcomes.resize(cands->size());
  std::vector<size_t> original; // ticket -> request index
  for (size_t i = 0; i < cands->size(); ++i) {
    run.outcomes[i].id = (*cands)[i].getAsObject()->getString(protocol::kId).value_or("").str();
    if (refIndex && i == *refIndex)
      continue;
    (*session)->submit(*(*cands)[i].getAsObject());
    original.push_back(i);
  }
  if (refIndex) {
    Expected<CandidateOutcome> ref = (*session)->referenceOutcome();
    if (!ref)
      return ref.takeError();
    run.outcomes[*refIndex] = *ref;
  }
  // Count outcomes received, not outcomes pending: one step can resolve tickets (e.g. NotRun after
  // a failed reference) that are then waiting in the session, no longer pending but not yet read.
  size_t received = 0;
  while (received < original.size()) {
    auto done = (*session)->poll(1.0);
    if (!done)
      return done.takeError();
    for (auto &[ticket, outcome] : *done) {
      run.outcomes[original[ticket]] = std::move(outcome);
      ++received;
    }
  }
  run.device = (*session)->device();
  run.workersStarted = (*session)->workersStarted();
  return run;
}

Expected<std::vector<json::Object>> runWorkerOnce(const json::Object &request,
                                                  const WorkerOptions &options,
                                                  double timeoutSeconds) {
  WorkDir dir; // outlives `worker`, which is killed first when it is still running
  if (Error e = makeWorkDir(options, dir))
    return std::move(e);
  WorkerProcess worker;
  if (Error e = worker.start(options, request, dir.path, 0))
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
    if (ev.getString(protocol::kEvent) == StringRef(protocol::kEventFatal))
      return fatalError(ev);
  if (worker.exitCode != kWorkerOk)
    return createStringError(inconvertibleErrorCode(),
                             "evo-eval-worker: " + worker.howItEnded() + ": " + worker.tailOfLog());
  return events;
}

} // namespace evo
