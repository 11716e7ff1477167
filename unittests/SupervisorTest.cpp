//===- SupervisorTest.cpp - worker isolation, with a stand-in worker ---------===//

#include "evo/Evaluation/Supervisor.h"
#include "evo/Runtime/ParentWatch.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"
#include <chrono>
#include <cstdlib>
#include <optional>

using namespace evo;
namespace json = llvm::json;

#ifndef EVO_FAKE_WORKER
#error "EVO_FAKE_WORKER must name the stand-in worker"
#endif

namespace {
json::Object request(std::initializer_list<const char *> ids, const char *reference = nullptr,
                     const char *standIn = "") {
  json::Array cands;
  for (const char *id : ids)
    cands.push_back(json::Object{{"id", id},
                                 {"reference", reference && std::string(id) == reference},
                                 {"launches", json::Array()}});
  return json::Object{{"format", "evo-eval-request/1"},
                      {"mode", "evaluate"},
                      {"stand_in", standIn},
                      {"candidates", std::move(cands)}};
}

WorkerOptions options() {
  WorkerOptions o;
  o.workerPath = EVO_FAKE_WORKER;
  o.candidateTimeoutSeconds = 1.5;
  o.startupTimeoutSeconds = 10;
  return o;
}
} // namespace

TEST(SupervisorTest, ValidAndInvalidResultsComeBackInOrder) {
  llvm::Expected<EvaluationRun> run = evaluateCandidates(request({"ok1", "bad1", "ok2"}), options());
  ASSERT_TRUE(static_cast<bool>(run)) << llvm::toString(run.takeError());
  ASSERT_EQ(run->outcomes.size(), 3u);
  EXPECT_EQ(run->outcomes[0].verdict, Verdict::Valid);
  EXPECT_EQ(run->outcomes[1].verdict, Verdict::Invalid);
  EXPECT_NE(run->outcomes[1].reason.find("never written"), std::string::npos);
  EXPECT_EQ(run->outcomes[2].verdict, Verdict::Valid);
  EXPECT_EQ(run->outcomes[2].result.getObject("timing")->getNumber("median_ms"), 1.5);
  EXPECT_EQ(run->workersStarted, 1u);
  EXPECT_EQ(run->device.getString("name"), llvm::StringRef("Stand-in GPU"));
}

TEST(SupervisorTest, CrashesAreBlamedOnTheRunningCandidateAndTheRestContinue) {
  llvm::Expected<EvaluationRun> run =
      evaluateCandidates(request({"ok1", "segv", "ok2", "abort", "fatal", "ok3"}), options());
  ASSERT_TRUE(static_cast<bool>(run)) << llvm::toString(run.takeError());
  const auto &o = run->outcomes;
  EXPECT_EQ(o[0].verdict, Verdict::Valid);
  EXPECT_EQ(o[1].verdict, Verdict::Crashed);
  EXPECT_NE(o[1].reason.find("SIGSEGV"), std::string::npos) << o[1].reason;
  EXPECT_EQ(o[2].verdict, Verdict::Valid);
  EXPECT_EQ(o[3].verdict, Verdict::Crashed);
  EXPECT_NE(o[3].reason.find("SIGABRT"), std::string::npos) << o[3].reason;
  EXPECT_EQ(o[4].verdict, Verdict::Crashed);
  EXPECT_NE(o[4].reason.find("CUDA_ERROR_ILLEGAL_ADDRESS"), std::string::npos) << o[4].reason;
  EXPECT_EQ(o[5].verdict, Verdict::Valid);
  // One fresh worker (a fresh context) after each crash.
  EXPECT_EQ(run->workersStarted, 4u);
}

TEST(SupervisorTest, AHangIsKilledAtTheTimeoutAndTheParentSurvives) {
  auto start = std::chrono::steady_clock::now();
  llvm::Expected<EvaluationRun> run = evaluateCandidates(request({"hang", "ok1"}), options());
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(static_cast<bool>(run)) << llvm::toString(run.takeError());
  EXPECT_EQ(run->outcomes[0].verdict, Verdict::Timeout);
  EXPECT_NE(run->outcomes[0].reason.find("killed"), std::string::npos);
  EXPECT_EQ(run->outcomes[1].verdict, Verdict::Valid);
  EXPECT_LT(seconds, 10.0);
}

TEST(SupervisorTest, GarbageOutputIsACrashWithWhatWasWritten) {
  llvm::Expected<EvaluationRun> run = evaluateCandidates(request({"garbage", "ok1"}), options());
  ASSERT_TRUE(static_cast<bool>(run)) << llvm::toString(run.takeError());
  EXPECT_EQ(run->outcomes[0].verdict, Verdict::Crashed);
  EXPECT_NE(run->outcomes[0].reason.find("this is not json"), std::string::npos)
      << run->outcomes[0].reason;
  EXPECT_EQ(run->outcomes[1].verdict, Verdict::Valid);
}

TEST(SupervisorTest, AReferenceThatFailsStopsTheOthers) {
  llvm::Expected<EvaluationRun> run =
      evaluateCandidates(request({"bad-ref", "ok1", "ok2"}, "bad-ref"), options());
  ASSERT_TRUE(static_cast<bool>(run)) << llvm::toString(run.takeError());
  EXPECT_EQ(run->outcomes[0].verdict, Verdict::Invalid);
  EXPECT_EQ(run->outcomes[1].verdict, Verdict::NotRun);
  EXPECT_NE(run->outcomes[1].reason.find("the reference 'bad-ref' is invalid"), std::string::npos);
}

// The worker writes the failed reference's result and exits between two looks of the parent, so
// one step both reads the result and sees the exit, resolving the other tickets as NotRun at once.
// Those outcomes used to be left unread (default verdict, empty reason); a long poll interval
// makes that interleaving certain.
TEST(SupervisorTest, OutcomesResolvedWithTheReferencesFailureAreReturned) {
  WorkerOptions o = options();
  o.pollIntervalSeconds = 1.0;
  llvm::Expected<EvaluationRun> run =
      evaluateCandidates(request({"bad-ref", "ok1", "ok2"}, "bad-ref"), o);
  ASSERT_TRUE(static_cast<bool>(run)) << llvm::toString(run.takeError());
  EXPECT_EQ(run->outcomes[0].verdict, Verdict::Invalid);
  for (size_t i : {1u, 2u}) {
    EXPECT_EQ(run->outcomes[i].verdict, Verdict::NotRun) << i;
    EXPECT_NE(run->outcomes[i].reason.find("the reference 'bad-ref' is invalid"),
              std::string::npos)
        << i << ": '" << run->outcomes[i].reason << "'";
  }
}

TEST(SupervisorTest, TheReferenceIsRerunByEveryNewWorker) {
  llvm::Expected<EvaluationRun> run =
      evaluateCandidates(request({"ok-ref", "segv", "ok2"}, "ok-ref"), options());
  ASSERT_TRUE(static_cast<bool>(run)) << llvm::toString(run.takeError());
  EXPECT_EQ(run->outcomes[0].verdict, Verdict::Valid);
  EXPECT_EQ(run->outcomes[1].verdict, Verdict::Crashed);
  EXPECT_EQ(run->outcomes[2].verdict, Verdict::Valid);
  EXPECT_EQ(run->workersStarted, 2u);
}

TEST(SupervisorTest, NoGpuIsAnErrorNotAVerdict) {
  llvm::Expected<EvaluationRun> run = evaluateCandidates(request({"ok1"}, nullptr, "nogpu"), options());
  ASSERT_FALSE(static_cast<bool>(run));
  EXPECT_NE(llvm::toString(run.takeError()).find("no CUDA driver"), std::string::npos);
}

TEST(SupervisorTest, AMissingWorkerIsAnError) {
  llvm::Expected<std::string> w = findWorker("/nonexistent/evo-eval-worker");
  ASSERT_FALSE(static_cast<bool>(w));
  EXPECT_NE(llvm::toString(w.takeError()).find("not executable"), std::string::npos);
  WorkerOptions o = options();
  o.workerPath = "/nonexistent/evo-eval-worker";
  llvm::Expected<EvaluationRun> run = evaluateCandidates(request({"ok1"}), o);
  ASSERT_FALSE(static_cast<bool>(run));
  llvm::consumeError(run.takeError());
}

TEST(SupervisorTest, OneShotModesReturnTheirEvents) {
  json::Object probe{{"format", "evo-eval-request/1"}, {"mode", "probe"}};
  llvm::Expected<std::vector<json::Object>> events = runWorkerOnce(probe, options(), 10);
  ASSERT_TRUE(static_cast<bool>(events)) << llvm::toString(events.takeError());
  ASSERT_EQ(events->size(), 2u);
  EXPECT_EQ((*events)[0].getString("event"), llvm::StringRef("device"));
}

TEST(SupervisorTest, ASessionStreamsCandidatesToOneWorker) {
  json::Object base{{"format", "evo-eval-request/1"}, {"mode", "evaluate"}};
  json::Object ref{{"id", "ok-ref"}, {"reference", true}, {"launches", json::Array()}};
  auto session = EvaluationSession::start(base, ref, options());
  ASSERT_TRUE(static_cast<bool>(session)) << llvm::toString(session.takeError());
  auto r = (*session)->referenceOutcome();
  ASSERT_TRUE(static_cast<bool>(r)) << llvm::toString(r.takeError());
  EXPECT_EQ(r->verdict, Verdict::Valid);
  std::vector<std::optional<CandidateOutcome>> got(6);
  const char *ids[] = {"ok1", "bad1", "ok2", "segv", "ok3", "ok4"};
  for (int round = 0; round < 2; ++round) {
    for (int k = 0; k < 3; ++k)
      (*session)->submit(json::Object{{"id", ids[round * 3 + k]}, {"launches", json::Array()}});
    while ((*session)->pending() > 0) {
      auto done = (*session)->poll(5);
      ASSERT_TRUE(static_cast<bool>(done)) << llvm::toString(done.takeError());
      for (auto &[ticket, o] : *done)
        got[ticket] = o;
    }
  }
  EXPECT_EQ(got[0]->verdict, Verdict::Valid);
  EXPECT_EQ(got[1]->verdict, Verdict::Invalid);
  EXPECT_EQ(got[3]->verdict, Verdict::Crashed);
  EXPECT_EQ(got[3]->id, "segv");
  EXPECT_EQ(got[5]->verdict, Verdict::Valid);
  // One worker for everything before the crash, one after it.
  EXPECT_EQ((*session)->workersStarted(), 2u);
}

// Sessions and one-shot runs without a work directory make a temporary one and remove it on
// every return path (before, ~100 /tmp/evo-eval-* were left per test run). The test points
// TMPDIR at a directory of its own, so other processes' temporary directories never count.
TEST(SupervisorTest, TemporaryWorkDirectoriesAreRemoved) {
  llvm::SmallString<128> tmp;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("evo-tmpdir", tmp));
  std::optional<std::string> oldTmp = llvm::sys::Process::GetEnv("TMPDIR");
  ::setenv("TMPDIR", tmp.c_str(), 1);
  auto entries = [&] {
    std::error_code ec;
    std::vector<std::string> names;
    for (llvm::sys::fs::directory_iterator it(tmp, ec), end; it != end && !ec; it.increment(ec))
      names.push_back(llvm::sys::path::filename(it->path()).str());
    return names;
  };
  {
    llvm::Expected<EvaluationRun> run =
        evaluateCandidates(request({"ok1", "segv", "bad1"}), options());
    ASSERT_TRUE(static_cast<bool>(run)) << llvm::toString(run.takeError());
  }
  EXPECT_EQ(entries(), std::vector<std::string>());
  {
    json::Object probe{{"format", "evo-eval-request/1"}, {"mode", "probe"}};
    llvm::Expected<std::vector<json::Object>> events = runWorkerOnce(probe, options(), 10);
    ASSERT_TRUE(static_cast<bool>(events)) << llvm::toString(events.takeError());
  }
  EXPECT_EQ(entries(), std::vector<std::string>());
  {
    // An error return (no GPU) cleans up as well.
    llvm::Expected<EvaluationRun> run = evaluateCandidates(request({"ok1"}, nullptr, "nogpu"), options());
    ASSERT_FALSE(static_cast<bool>(run));
    llvm::consumeError(run.takeError());
  }
  EXPECT_EQ(entries(), std::vector<std::string>());
  if (oldTmp)
    ::setenv("TMPDIR", oldTmp->c_str(), 1);
  else
    ::unsetenv("TMPDIR");
  llvm::sys::fs::remove_directories(tmp);
}

// A worker whose parent is gone ends itself (ParentWatch.h): the stand-in worker is started with
// the pid of a process that is not its parent.
TEST(SupervisorTest, AWorkerWhoseParentIsGoneEndsItself) {
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("evo-parent", dir));
  llvm::SmallString<128> req(dir), res(dir);
  llvm::sys::path::append(req, "request.json");
  llvm::sys::path::append(res, "results.jsonl");
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(req, ec);
    ASSERT_FALSE(ec);
    json::Object r = request({"hang"});
    r["parent_pid"] = int64_t(1); // never our parent (init, or the container's first process)
    os << json::Value(std::move(r));
  }
  std::string err;
  llvm::StringRef args[] = {EVO_FAKE_WORKER, req, res};
  auto start = std::chrono::steady_clock::now();
  int rc = llvm::sys::ExecuteAndWait(EVO_FAKE_WORKER, args, std::nullopt, {}, /*SecondsToWait=*/20,
                                     0, &err);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(rc, kWorkerParentGone) << err;
  EXPECT_LT(seconds, 10.0);
  llvm::sys::fs::remove_directories(dir);
}
