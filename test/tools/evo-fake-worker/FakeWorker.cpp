//===- FakeWorker.cpp - a stand-in for evo-eval-worker in CI -----------------===//
//
// Speaks the worker's protocol without a GPU, and misbehaves on purpose according to each
// candidate's id, so the Supervisor's crash and timeout handling is tested where CI runs:
//   ok        a valid result          segv     dies from SIGSEGV     abort   abort()
//   bad       an invalid result       hang     never answers         fatal   a sticky CUDA error
//   garbage   writes a non-JSON line and exits 1
//   nogpu     (as the first id) exits like a worker on a machine without a GPU
// Mode "ceilings" reports fixed ceilings, by the request's device ordinal (each with its own
// uuid): 0 a Hopper whose wgmma rates were measured, 1 a compute capability 8.0 device (wgmma
// unavailable), 2 a Hopper whose sm_90a module did not load (wgmma unavailable).
// EVO_FAKE_WORKER_SLOW_DEVICE=N makes every time on device N three times longer.
// Other ids (evo-verify's "naive-baseline" and function names) are valid. A request with by-value
// inputs (scalar arguments) makes a candidate whose PTX disagrees with them (a pointer parameter
// for a by-value input, or the reverse) invalid, as its launch by the real worker would be. Markers in a
// candidate's code file (e.g. the name of a `memref.global constant` its kernels read) drive the
// evolution tests' cheats: `evo_stand_in_fast` times at 0.5 ms (it wins), `evo_stand_in_invalid_time`
// is invalid in "time" mode (a finalist-only cheat), `evo_stand_in_invalid_final` is invalid
// under any id but the engine's "#<id>" (it passes the search, then fails the final check).
//
//===----------------------------------------------------------------------===//

#include "evo/Evaluation/LaunchSelection.h"
#include "evo/Evaluation/WorkerProtocol.h"
#include "evo/Runtime/ParentWatch.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <unistd.h>

using namespace llvm;

static FILE *out;

static void emitObject(json::Object o) {
  std::string s;
  raw_string_ostream os(s);
  os << json::Value(std::move(o));
  std::fprintf(out, "%s\n", s.c_str());
  std::fflush(out);
}

/// A timing result as the real worker reports it: which timed launches were checked is drawn
/// from OS entropy with the worker's own selection (LaunchSelection.h), from the request's
/// timing options; "checked_runs" lists them (the real worker reports only their number).
static json::Object fakeTiming(const json::Object &request, double ms) {
  namespace P = evo::protocol;
  const json::Object *t = request.getObject(P::kTiming);
  json::Object none;
  if (!t)
    t = &none;
  unsigned runs = static_cast<unsigned>(t->getInteger(P::kRuns).value_or(100));
  bool checks = t->getBoolean(P::kCheckLaunches).value_or(true);
  uint64_t entropy = 0;
  if (!evo::osEntropy(entropy))
    std::abort();
  std::vector<bool> sel(runs, false);
  if (checks)
    sel = evo::chooseCheckedLaunches(runs, t->getNumber(P::kCheckFraction).value_or(0.25),
                                     t->getInteger(P::kMinChecked).value_or(4), entropy);
  json::Array checked;
  for (unsigned r = 0; r < runs; ++r)
    if (sel[r])
      checked.push_back(int64_t(r));
  int64_t n = static_cast<int64_t>(checked.size());
  return json::Object{{P::kMedianMs, ms},
                      {P::kCheckLaunches, checks},
                      {P::kCheckedLaunches, n},
                      {P::kTimedLaunches, int64_t(runs)},
                      {"checked_runs", std::move(checked)}};
}

/// Exit status when the request must be refused as the real worker would (no GPU, a tolerance
/// table without an output's kind), after reporting why; 0 otherwise.
static int refusal(const json::Object &r) {
  if (r.getString("stand_in") == StringRef("nogpu")) {
    emitObject(json::Object{{"event", "fatal"}, {"candidate", -1}, {"reason", "no CUDA driver: stand-in"}});
    return 4;
  }
  // Like the real worker: the tolerance table comes with the request, for every output kind.
  if (const json::Array *bufs = r.getArray(evo::protocol::kBuffers))
    for (const json::Value &b : *bufs) {
      const json::Object *o = b.getAsObject();
      const json::Object *rtol = r.getObject(evo::protocol::kRtol);
      std::optional<StringRef> kind = o ? o->getString(evo::protocol::kKind) : std::nullopt;
      if (o && o->getString(evo::protocol::kRole) == StringRef(evo::protocol::kRoleOutput) &&
          (!kind || !rtol || !rtol->getNumber(*kind))) {
        emitObject(json::Object{{"event", "fatal"}, {"candidate", -1},
                                {"reason", "bad request: the request's rtol has no tolerance for "
                                           "output kind '" + kind.value_or("?").str() + "'"}});
        return 2;
      }
    }
  return 0;
}

/// Mode "ceilings": fixed ceilings by device ordinal (the file comment).
static int reportCeilings(int64_t device) {
  namespace P = evo::protocol;
  json::Object c{{P::kEvent, P::kEventCeilings}, {P::kCopyGBps, 4200.0},
                 {P::kReadGBps, 4400.0}, {P::kWriteGBps, 4500.0},
                 {P::kFp32TFlops, 55.0}, {P::kF16MmaTFlops, 600.0},
                 {P::kL2Bytes, 50331648}};
  if (device == 0) {
    c[P::kF16WgmmaTFlops] = 1000.0;
    c[P::kBf16WgmmaTFlops] = 1010.0;
    c[P::kWgmmaStatus] = "measured";
  } else {
    c[P::kF16WgmmaTFlops] = 0.0;
    c[P::kBf16WgmmaTFlops] = 0.0;
    c[P::kWgmmaStatus] =
        device == 1 ? "unavailable: compute capability 8.0 (wgmma needs 9.0, sm_90a)"
                    : "unavailable: the sm_90a module does not load: "
                      "CUDA_ERROR_INVALID_PTX (stand-in)";
  }
  emitObject(std::move(c));
  emitObject(json::Object{{"event", "done"}});
  return 0;
}

/// Whether a candidate's code file (cubin or PTX) contains `marker`.
static bool hasMarker(const json::Object &c, StringRef marker) {
  for (StringRef key : {"cubin_file", "ptx_file"})
    if (std::optional<StringRef> file = c.getString(key))
      if (auto buf = MemoryBuffer::getFile(*file))
        if ((*buf)->getBuffer().contains(marker))
          return true;
  return false;
}

/// The reason a candidate's kernels would not run as the real worker launches them when the
/// request has by-value inputs (scalar arguments: the value in the parameter): a parameter the
/// PTX declares as a pointer (`.ptr`) where the launch passes a by-value input, or the reverse;
/// "" when they agree (or the code is not PTX text).
static std::string byValueMismatch(const json::Object &r, const json::Object &cand) {
  namespace P = evo::protocol;
  std::vector<bool> byValue;
  if (const json::Array *bufs = r.getArray(P::kBuffers))
    for (const json::Value &b : *bufs)
      byValue.push_back(b.getAsObject() &&
                        b.getAsObject()->getBoolean(P::kByValue).value_or(false));
  if (llvm::none_of(byValue, [](bool b) { return b; }))
    return "";
  std::string ptx = cand.getString(P::kPtx).value_or("").str();
  if (std::optional<StringRef> file = cand.getString(P::kPtxFile))
    if (auto buf = MemoryBuffer::getFile(*file))
      ptx = (*buf)->getBuffer().str();
  const json::Array *launches = cand.getArray(P::kLaunches);
  for (size_t l = 0; launches && l < launches->size(); ++l) {
    const json::Object &launch = *(*launches)[l].getAsObject();
    StringRef kernel = launch.getString(P::kKernel).value_or("");
    size_t at = StringRef(ptx).find((".entry " + kernel + "(").str());
    if (at == StringRef::npos)
      continue;
    StringRef list = StringRef(ptx).substr(at).split('(').second.split(')').first;
    SmallVector<StringRef> params;
    list.split(params, ',');
    const json::Array *args = launch.getArray(P::kArgs);
    for (size_t k = 0; args && k < args->size() && k < params.size(); ++k) {
      int64_t a = (*args)[k].getAsInteger().value_or(-1);
      if (a < 0 || static_cast<size_t>(a) >= byValue.size())
        continue;
      if (byValue[a] == params[k].contains(".ptr"))
        return ("parameter " + Twine(k) + " of '" + kernel + "' is " +
                (byValue[a] ? "a pointer but buffer " : "a value but buffer ") + Twine(a) +
                (byValue[a] ? " is by_value" : " is not") + " (stand-in)")
            .str();
    }
  }
  return "";
}

/// Candidates of the evolution engine ("#<id>") get a time that depends on their code only, so
/// identical kernels time alike and the search has something to optimize: the PTX's hash when
/// given (cubins may embed temporary file names), else the file's bytes; times `factor`.
static double fakeMs(const json::Object &c, double factor) {
  if (hasMarker(c, "evo_stand_in_fast"))
    return 0.5 * factor;
  std::string text = c.getString("ptx_sha256").value_or("").str();
  if (text.empty()) {
    StringRef file = c.getString("cubin_file").value_or(c.getString("ptx_file").value_or(""));
    if (auto buf = MemoryBuffer::getFile(file))
      text = (*buf)->getBuffer().str();
  }
  uint64_t h = 1469598103934665603ull;
  for (char ch : text)
    h = (h ^ static_cast<unsigned char>(ch)) * 1099511628211ull;
  return (1.0 + double(h % 1000) / 1000.0) * factor;
}

/// Mode "time": every candidate valid with its fake time, but the time-mode cheat.
static int timeCandidates(const json::Object &r, const json::Array *cands, double factor) {
  for (size_t i = 0; cands && i < cands->size(); ++i) {
    const json::Object &c = *(*cands)[i].getAsObject();
    if (hasMarker(c, "evo_stand_in_invalid_time")) {
      emitObject(json::Object{{"event", "result"}, {"candidate", int64_t(i)},
                              {"id", *c.getString("id")}, {"verdict", "invalid"},
                              {"reason", "'result0': 8 of 8 elements wrong on timed launch 37 of 100 (stand-in)"}});
      continue;
    }
    emitObject(json::Object{{"event", "result"}, {"candidate", int64_t(i)},
                            {"id", *c.getString("id")}, {"verdict", "valid"}, {"reason", ""},
                            {"timing", fakeTiming(r, fakeMs(c, factor))}});
  }
  emitObject(json::Object{{"event", "done"}});
  return 0;
}

/// Appends the queue file's candidates past byte `consumed` to `all`; whether {"end": true} came.
static bool readQueue(const std::string &queue, size_t &consumed, std::vector<json::Object> &all) {
  auto q = MemoryBuffer::getFile(queue);
  StringRef text = q ? (*q)->getBuffer() : StringRef();
  bool ended = false;
  while (text.size() > consumed) {
    size_t nl = text.find('\n', consumed);
    if (nl == StringRef::npos)
      break;
    StringRef line = text.slice(consumed, nl);
    consumed = nl + 1;
    Expected<json::Value> v = json::parse(line);
    if (!v) {
      consumeError(v.takeError());
      continue;
    }
    if (v->getAsObject()->getBoolean("end").value_or(false))
      ended = true;
    else
      all.push_back(*v->getAsObject());
  }
  return ended;
}

/// Evaluates candidate `i` as its id says (the file comment); false: nothing more is evaluated.
static bool evaluate(const json::Object &r, const json::Object &cand, size_t i, double factor) {
  StringRef id = *cand.getString("id");
  emitObject(json::Object{{"event", "begin"}, {"candidate", int64_t(i)}, {"id", id}});
  // Kill tests: a per-candidate delay (so a run lasts long enough to be killed mid-way) and a
  // log of what was evaluated, to prove nothing stored is evaluated again after a resume.
  if (const char *ms = std::getenv("EVO_FAKE_WORKER_DELAY_MS"))
    std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(ms)));
  if (const char *log = std::getenv("EVO_FAKE_WORKER_LOG"))
    if (FILE *f = std::fopen(log, "a")) {
      std::string line = (Twine(cand.getBoolean("reference").value_or(false) ? "ref " : "cand ") +
                          cand.getString("ptx_sha256").value_or("-") + " " + id + "\n")
                             .str();
      std::fwrite(line.data(), 1, line.size(), f); // one write: lines never interleave
      std::fclose(f);
    }
  auto result = [&](StringRef verdict, StringRef reason, std::optional<double> ms) {
    json::Object o{{"event", "result"}, {"candidate", int64_t(i)}, {"id", id},
                   {"verdict", verdict}, {"reason", reason}};
    if (ms)
      o["timing"] = fakeTiming(r, *ms);
    emitObject(std::move(o));
  };
  if (std::string why = byValueMismatch(r, cand); !why.empty()) {
    result("invalid", why, std::nullopt);
    if (cand.getBoolean("reference").value_or(false))
      return false;
  } else if (id.starts_with("#")) {
    result("valid", "", fakeMs(cand, factor));
  } else if (id.starts_with("ok")) {
    result("valid", "", 1.5);
  } else if (id.starts_with("bad")) {
    result("invalid", "3 of 8 elements of 'result0' were never written (trial 0)", std::nullopt);
    if (cand.getBoolean("reference").value_or(false))
      return false; // like the real worker: nothing is evaluated after a failed reference
  } else if (id.starts_with("segv")) {
    std::raise(SIGSEGV);
  } else if (id.starts_with("abort")) {
    std::abort();
  } else if (id.starts_with("hang")) {
    while (true)
      std::this_thread::sleep_for(std::chrono::seconds(1));
  } else if (id.starts_with("fatal")) {
    emitObject(json::Object{{"event", "fatal"}, {"candidate", int64_t(i)},
          {"reason", "cuStreamSynchronize failed: CUDA_ERROR_ILLEGAL_ADDRESS: illegal memory access"}});
    _exit(3);
  } else if (id.starts_with("garbage")) {
    std::fprintf(out, "this is not json\n");
    std::fflush(out);
    _exit(1);
  } else if (hasMarker(cand, "evo_stand_in_invalid_final")) {
    result("invalid", "'result0': 5 of 8 elements differ from the reference (stand-in)",
           std::nullopt);
  } else {
    result("valid", "", fakeMs(cand, factor));
  }
  return true;
}

int main(int argc, char **argv) {
  if (argc != 3)
    return 2;
  out = std::fopen(argv[2], "w");
  auto buf = MemoryBuffer::getFile(argv[1]);
  if (!buf || !out)
    return 2;
  Expected<json::Value> req = json::parse((*buf)->getBuffer());
  if (!req)
    return 2;
  json::Object &r = *req->getAsObject();
  evo::exitWhenParentDies(r.getInteger("parent_pid").value_or(0));
  json::Array *cands = r.getArray("candidates");
  if (int status = refusal(r))
    return status;
  int64_t device = r.getInteger("device").value_or(0);
  emitObject(json::Object{{"event", "device"},
                          {"name", "Stand-in GPU"},
                          {"uuid", device == 0 ? std::string("00") : "stand-in-" + std::to_string(device)},
                          {"compute_capability", device == 1 ? "8.0" : "9.0"},
                          {"l2_bytes", 50331648}});
  if (r.getString("mode") == StringRef("ceilings"))
    return reportCeilings(device);
  // EVO_FAKE_WORKER_SLOW_DEVICE=N: every time measured on device N is 3x (GPUs of one host
  // that differ: evo-evolve must compare times only relative to each GPU's baseline).
  double factor = 1;
  if (const char *slow = std::getenv("EVO_FAKE_WORKER_SLOW_DEVICE"))
    if (*slow && device == std::atoll(slow))
      factor = 3;
  if (r.getString("mode") == StringRef("time"))
    return timeCandidates(r, cands, factor);
  if (r.getString("mode") == StringRef("probe")) {
    emitObject(json::Object{{"event", "done"}});
    return 0;
  }
  // The request's candidates, then those appended to the queue file until {"end": true}.
  std::vector<json::Object> all;
  for (size_t i = 0; cands && i < cands->size(); ++i)
    all.push_back(*(*cands)[i].getAsObject());
  std::string queue = r.getString("queue").value_or("").str();
  size_t consumed = 0, next = 0;
  while (true) {
    if (next == all.size()) {
      if (queue.empty())
        break;
      bool ended = readQueue(queue, consumed, all);
      if (ended && next == all.size())
        break;
      if (next == all.size()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        continue;
      }
    }
    size_t i = next++;
    if (!evaluate(r, all[i], i, factor))
      break;
  }
  emitObject(json::Object{{"event", "done"}});
  return 0;
}
