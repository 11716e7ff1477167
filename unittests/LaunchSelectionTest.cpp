//===- LaunchSelectionTest.cpp - which timed launches the worker checks -----===//
//
// LaunchSelection.h: the worker and the stand-in worker call the same function with OS entropy.
//
//===----------------------------------------------------------------------===//

#include "VerifierFixture.h"
#include "evo/Evaluation/LaunchSelection.h"
#include "evo/Evaluation/Verifier.h"
#include "gtest/gtest.h"
#include <algorithm>
#include <set>

using namespace mlir;
using namespace evo;
namespace json = llvm::json;
using evo::unittest::decodeSample;
using evo::unittest::DecodedSample;
using evo::unittest::fillsFromJson;
using evo::unittest::load;
using evo::unittest::lower;
using evo::unittest::unary;

namespace {
unsigned numChecked(const std::vector<bool> &v) { return std::count(v.begin(), v.end(), true); }
} // namespace

TEST(LaunchSelectionTest, TheLastTwoLaunchesAreAlwaysChecked) {
  // One launch of each input set when timing alternates two: a kernel that stops working after
  // N launches keeps one set's answer, wrong only on the other set's launches (H200, 2026-12-02:
  // with the last launch alone and 4 random ones, verify-timing-adversarial's "late stale
  // outputs" once passed as valid).
  for (uint64_t e = 0; e < 500; ++e)
    for (unsigned runs : {1u, 2u, 5u, 100u}) {
      std::vector<bool> s = chooseCheckedLaunches(runs, 0.0, 0, e * 0x9E3779B97F4A7C15ull);
      ASSERT_EQ(s.size(), runs);
      ASSERT_TRUE(s.back()) << "entropy " << e << ", " << runs << " runs";
      if (runs >= 2) {
        ASSERT_TRUE(s[runs - 2]) << "entropy " << e << ", " << runs << " runs";
        ASSERT_EQ(numChecked(s), 2u);
      }
    }
  EXPECT_TRUE(chooseCheckedLaunches(0, 0.5, 4, 1).empty());
}

TEST(LaunchSelectionTest, AtLeastMinCheckedAndEveryLaunchWhenFewer) {
  for (uint64_t e = 1; e < 300; ++e) {
    EXPECT_EQ(numChecked(chooseCheckedLaunches(100, 0.0, 4, e)), 4u);
    EXPECT_GE(numChecked(chooseCheckedLaunches(100, 0.25, 4, e)), 4u);
    EXPECT_EQ(numChecked(chooseCheckedLaunches(3, 0.0, 4, e)), 3u);
    EXPECT_EQ(numChecked(chooseCheckedLaunches(50, 1.0, 0, e)), 50u);
  }
  // Out-of-range fractions are clamped.
  EXPECT_EQ(numChecked(chooseCheckedLaunches(40, 7.0, 0, 9)), 40u);
  EXPECT_EQ(numChecked(chooseCheckedLaunches(40, -1.0, 0, 9)), 2u);
  EXPECT_EQ(numChecked(chooseCheckedLaunches(40, std::nan(""), 2, 9)), 2u);
}

TEST(LaunchSelectionTest, EachEarlierLaunchIsCheckedWithTheGivenProbability) {
  // Over many draws, every launch before the last two is checked about `fraction` of the time
  // (nothing a kernel could count on), and the draws depend on the entropy only.
  const unsigned runs = 20, draws = 4000;
  std::vector<unsigned> hits(runs, 0);
  std::set<std::vector<bool>> distinct;
  for (uint64_t e = 0; e < draws; ++e) {
    std::vector<bool> s = chooseCheckedLaunches(runs, 0.25, 1, SplitMix64(e).next());
    ASSERT_EQ(s, chooseCheckedLaunches(runs, 0.25, 1, SplitMix64(e).next()));
    distinct.insert(s);
    for (unsigned r = 0; r < runs; ++r)
      hits[r] += s[r];
  }
  for (unsigned r = 0; r + 2 < runs; ++r)
    EXPECT_NEAR(hits[r] / double(draws), 0.25, 0.03) << "launch " << r;
  EXPECT_EQ(hits[runs - 2], draws);
  EXPECT_EQ(hits[runs - 1], draws);
  EXPECT_GT(distinct.size(), draws / 2);
}

TEST(LaunchSelectionTest, EntropyComesFromTheOperatingSystem) {
  std::set<uint64_t> seen;
  for (int i = 0; i < 8; ++i) {
    uint64_t v = 0;
    ASSERT_TRUE(osEntropy(v));
    seen.insert(v);
    uint64_t s = freshSeed();
    EXPECT_NE(s, 0u);
    EXPECT_LT(s, 1ull << 53);
  }
  EXPECT_EQ(seen.size(), 8u);
}

#ifdef EVO_FAKE_WORKER
TEST(LaunchSelectionTest, TheStandInWorkerChecksFreshRandomLaunchesOnEveryRun) {
  // The request as the Verifier builds it, through the Supervisor, to the stand-in worker,
  // which draws the checked launches as evo-eval-worker does.
  MLIRContext ctx;
  load(ctx);
  OwningOpRef<ModuleOp> m;
  LaunchPlan plan = unary(ctx, m, "math.tanh", "f32");
  VerifyOptions opts;
  opts.trials = 1;
  opts.runs = 64;
  opts.checkFraction = 0.1;
  opts.minChecked = 5;
  auto v = FunctionVerifier::create(plan, &ctx, UnknownLoc::get(&ctx), opts);
  ASSERT_TRUE(succeeded(v));
  WorkerOptions w;
  w.workerPath = EVO_FAKE_WORKER;
  w.candidateTimeoutSeconds = 10;
  auto runOnce = [&](bool checks) {
    json::Object req = (*v)->getRequestTemplate();
    (*req.getObject("timing"))["check_launches"] = checks;
    req["candidates"] = json::Array{json::Object{{"id", "ok1"}, {"launches", json::Array()}}};
    llvm::Expected<EvaluationRun> run = evaluateCandidates(req, w);
    EXPECT_TRUE(static_cast<bool>(run)) << llvm::toString(run.takeError());
    return run ? json::Object(*run->outcomes[0].result.getObject("timing")) : json::Object();
  };
  std::set<std::vector<int64_t>> selections;
  for (int i = 0; i < 4; ++i) {
    json::Object t = runOnce(true);
    EXPECT_EQ(t.getBoolean("check_launches"), true);
    EXPECT_EQ(t.getInteger("launches"), 64);
    std::vector<int64_t> runs;
    for (const json::Value &x : *t.getArray("checked_runs"))
      runs.push_back(*x.getAsInteger());
    EXPECT_EQ(t.getInteger("checked_launches"), static_cast<int64_t>(runs.size()));
    EXPECT_GE(runs.size(), 5u);
    ASSERT_FALSE(runs.empty());
    EXPECT_EQ(runs.back(), 63);
    selections.insert(runs);
  }
  EXPECT_GT(selections.size(), 1u); // not predictable from the (identical) requests
  json::Object off = runOnce(false);
  EXPECT_EQ(off.getBoolean("check_launches"), false);
  EXPECT_EQ(off.getInteger("checked_launches"), 0);
}
#endif
