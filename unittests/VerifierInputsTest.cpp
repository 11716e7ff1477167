//===- VerifierInputsTest.cpp - the verifier's trial inputs -------------------===//
//
// How the verifier's trials fill their inputs: distributions that vary per trial, are narrowed
// where they would overflow the result, the documented defaults per op, declared ranges, and a
// kernel that recognises uniform inputs.
//
//===----------------------------------------------------------------------===//

#include "VerifierFixture.h"
#include "evo/Evaluation/Oracle.h"
#include "evo/Evaluation/Verifier.h"
#include "gtest/gtest.h"
#include <cmath>
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

TEST(VerifierTest, TrialsVaryTheirInputDistributions) {
  MLIRContext ctx;
  load(ctx);
  OwningOpRef<ModuleOp> m;
  LaunchPlan plan = unary(ctx, m, "math.tanh", "f32");
  VerifyOptions opts;
  opts.trials = 5;
  opts.seed = 7;
  auto v = FunctionVerifier::create(plan, &ctx, UnknownLoc::get(&ctx), opts);
  ASSERT_TRUE(succeeded(v));
  llvm::ArrayRef<TrialInputs> trials = (*v)->getTrialInputs();
  ASSERT_EQ(trials.size(), 5u);
  auto stats = [](const contract::FillParams &p) {
    double maxAbs = 0, sum = 0, sq = 0;
    std::set<double> values;
    for (uint64_t i = 0; i < 4096; ++i) {
      double x = generatedValue(p, i);
      maxAbs = std::max(maxAbs, std::fabs(x));
      sum += x;
      sq += x * x;
      values.insert(x);
    }
    return std::make_tuple(maxAbs, sum / 4096, std::sqrt(sq / 4096 - sum * sum / 4096 / 4096),
                           values);
  };
  // Trial 0: uniform in the default range [-1, 1).
  EXPECT_EQ(trials[0].fills[0].dist, int(contract::Distribution::Uniform));
  EXPECT_LE(std::get<0>(stats(trials[0].fills[0])), 1.0);
  // Trial 1: normal(0, 1): tails beyond the default range.
  EXPECT_EQ(trials[1].fills[0].dist, int(contract::Distribution::Normal));
  auto [nMax, nMean, nStd, nVals] = stats(trials[1].fills[0]);
  EXPECT_GT(nMax, 2.0);
  EXPECT_NEAR(nMean, 0.0, 0.1);
  EXPECT_NEAR(nStd, 1.0, 0.1);
  // Trial 2: wide magnitudes (tanh saturates, so the full |x| < 128 is kept): a polynomial
  // that is exact on [-1, 1) only is caught here.
  EXPECT_EQ(trials[2].fills[0].dist, int(contract::Distribution::Wide));
  EXPECT_GT(std::get<0>(stats(trials[2].fills[0])), 64.0);
  EXPECT_LT(std::get<0>(stats(trials[2].fills[0])), 128.0);
  EXPECT_EQ(trials[0].descriptions[0], "uniform[-1, 1)");
  EXPECT_EQ(trials[1].descriptions[0], "normal(0, 1)");
  EXPECT_EQ(trials[2].descriptions[0], "wide(2^-12 <= |x| < 128)");
  EXPECT_EQ(trials[3].descriptions[0], "special{0, 1, -1, 0.5, -0.5, 2, 100, -100} + uniform[-1, 1)");
  // Trial 3: exact special values (0, +-1, large magnitudes) among uniform ones.
  EXPECT_EQ(trials[3].fills[0].dist, int(contract::Distribution::Special));
  const std::set<double> &sp = std::get<3>(stats(trials[3].fills[0]));
  for (double x : {0.0, 1.0, -1.0, 100.0, -100.0})
    EXPECT_TRUE(sp.count(x)) << x;
  // Trial 4: every element outside the uniform range: (1 + u) * 2^e, 1 <= |x| < 128.
  EXPECT_EQ(trials[4].descriptions[0], "large(1 <= |x| < 128)");
  EXPECT_EQ(trials[4].fills[0].dist, int(contract::Distribution::Wide));
  bool negative = false, positive = false;
  for (uint64_t i = 0; i < 4096; ++i) {
    double x = generatedValue(trials[4].fills[0], i);
    ASSERT_GE(std::fabs(x), 1.0);
    ASSERT_LT(std::fabs(x), 128.0);
    negative |= x < 0;
    positive |= x > 0;
  }
  EXPECT_TRUE(negative && positive);
  // Every trial its own seed.
  std::set<uint64_t> seeds;
  for (const TrialInputs &t : trials)
    seeds.insert(t.seed);
  seeds.insert((*v)->getTimingInputs().seed);
  EXPECT_EQ(seeds.size(), 6u);
  EXPECT_EQ((*v)->getTimingInputs().fills[0].dist, int(contract::Distribution::Uniform));

  // Uniform only, when asked.
  opts.variedInputs = false;
  auto u = FunctionVerifier::create(plan, &ctx, UnknownLoc::get(&ctx), opts);
  ASSERT_TRUE(succeeded(u));
  for (const TrialInputs &t : (*u)->getTrialInputs())
    EXPECT_EQ(t.fills[0].dist, int(contract::Distribution::Uniform));
}

TEST(VerifierTest, DistributionsThatOverflowTheResultAreNarrowed) {
  MLIRContext ctx;
  load(ctx);
  // exp(x) in f32: |x| < 128 overflows (exp(88.7) is f32's largest), |x| < 16 does not.
  {
    OwningOpRef<ModuleOp> m;
    LaunchPlan plan = unary(ctx, m, "math.exp", "f32");
    VerifyOptions opts;
    opts.trials = 4;
    opts.seed = 3;
    auto v = FunctionVerifier::create(plan, &ctx, UnknownLoc::get(&ctx), opts);
    ASSERT_TRUE(succeeded(v));
    const TrialInputs &wide = (*v)->getTrialInputs()[2];
    EXPECT_EQ(wide.fills[0].dist, int(contract::Distribution::Wide));
    EXPECT_EQ(wide.descriptions[0], "wide(2^-15 <= |x| < 16)");
    // The specials lose +-100 (exp(100) overflows) but keep 0 and +-1.
    const contract::FillParams &sp = (*v)->getTrialInputs()[3].fills[0];
    EXPECT_EQ(sp.dist, int(contract::Distribution::Special));
    std::set<double> specials(sp.special, sp.special + sp.numSpecial);
    EXPECT_FALSE(specials.count(100.0));
    EXPECT_TRUE(specials.count(0.0) && specials.count(1.0) && specials.count(-1.0));
    // Every value the oracle was asked for is finite and far from overflow.
    const json::Object &t2 = *(*(*v)->getRequestTemplate().getArray("trials"))[2].getAsObject();
    DecodedSample d2 = decodeSample(*(*t2.getArray("samples"))[0].getAsObject(), 0);
    ASSERT_FALSE(d2.exp.empty());
    for (double x : d2.exp)
      ASSERT_TRUE(std::isfinite(x) && std::fabs(x) < 3.4e38 / 16);
  }
  // In f16 (largest 65504) only |x| < 4 keeps exp representable with room to spare.
  {
    OwningOpRef<ModuleOp> m;
    LaunchPlan plan = unary(ctx, m, "math.exp", "f16");
    VerifyOptions opts;
    opts.trials = 3;
    opts.seed = 3;
    auto v = FunctionVerifier::create(plan, &ctx, UnknownLoc::get(&ctx), opts);
    ASSERT_TRUE(succeeded(v));
    const TrialInputs &wide = (*v)->getTrialInputs()[2];
    EXPECT_EQ(wide.descriptions[0], "wide(2^-17 <= |x| < 4)");
  }
}

TEST(VerifierTest, DefaultDistributionsPerOpAreTheDocumentedOnes) {
  // docs/verification.md, "Where the op is defined": softmax keeps the full wide range and the
  // large specials; integer inputs get their own rows.
  MLIRContext ctx;
  load(ctx);
  VerifyOptions opts;
  opts.trials = 4;
  opts.seed = 5;
  {
    OwningOpRef<ModuleOp> m;
    LaunchPlan plan = lower(ctx, R"mlir(
      func.func @sm(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
        %e = tensor.empty() : tensor<64x256xf32>
        %r = linalg.softmax dimension(1) ins(%x : tensor<64x256xf32>) outs(%e : tensor<64x256xf32>) -> tensor<64x256xf32>
        return %r : tensor<64x256xf32>
      })mlir", m);
    auto v = FunctionVerifier::create(plan, &ctx, UnknownLoc::get(&ctx), opts);
    ASSERT_TRUE(succeeded(v));
    EXPECT_EQ((*v)->getTrialInputs()[2].descriptions[0], "wide(2^-12 <= |x| < 128)");
    EXPECT_EQ((*v)->getTrialInputs()[3].descriptions[0],
              "special{0, 1, -1, 0.5, -0.5, 2, 100, -100} + uniform[-1, 1)");
  }
  {
    OwningOpRef<ModuleOp> m;
    LaunchPlan plan = lower(ctx, R"mlir(
      func.func @ma(%a: tensor<1000xi32>, %b: tensor<1000xi32>) -> tensor<1000xi32> {
        %m = arith.muli %a, %b : tensor<1000xi32>
        %r = arith.addi %m, %a : tensor<1000xi32>
        return %r : tensor<1000xi32>
      })mlir", m);
    auto v = FunctionVerifier::create(plan, &ctx, UnknownLoc::get(&ctx), opts);
    ASSERT_TRUE(succeeded(v));
    llvm::ArrayRef<TrialInputs> t = (*v)->getTrialInputs();
    EXPECT_EQ(t[0].descriptions[0], "uniform[-8, 8]");
    EXPECT_EQ(t[1].descriptions[0], "normal(0, 4)");
    EXPECT_EQ(t[2].descriptions[0], "uniform[-100, 100] (wide)");
    EXPECT_EQ(t[3].descriptions[0], "special{0, 1, -1, -8, 8, 100, -100} + uniform[-8, 8]");
    for (uint64_t i = 0; i < 1000; ++i) {
      double x = generatedValue(t[2].fills[0], i);
      ASSERT_EQ(x, std::floor(x));
      ASSERT_LE(std::fabs(x), 100.0);
    }
  }
}

TEST(VerifierTest, DeclaredRangesBoundEveryDistribution) {
  MLIRContext ctx;
  load(ctx);
  OwningOpRef<ModuleOp> m;
  LaunchPlan plan = unary(ctx, m, "math.log", "f32", "{evo.range = [0.1, 4.0]}");
  VerifyOptions opts;
  opts.trials = 6;
  opts.seed = 11;
  auto v = FunctionVerifier::create(plan, &ctx, UnknownLoc::get(&ctx), opts);
  ASSERT_TRUE(succeeded(v));
  std::set<int> dists;
  for (const TrialInputs &t : (*v)->getTrialInputs()) {
    dists.insert(t.fills[0].dist);
    for (uint64_t i = 0; i < 4096; ++i) {
      double x = generatedValue(t.fills[0], i);
      ASSERT_GE(x, static_cast<double>(0.1f)) << t.descriptions[0];
      ASSERT_LE(x, 4.0) << t.descriptions[0];
    }
  }
  EXPECT_EQ(dists.size(), 4u); // all four distributions, within [0.1, 4]
  // The large trial: the top binade of the declared range.
  const TrialInputs &large = (*v)->getTrialInputs()[4];
  EXPECT_EQ(large.descriptions[0], "large(2^1 <= |x| < 2^2) within [0.1, 4)");
  for (uint64_t i = 0; i < 4096; ++i)
    ASSERT_GE(generatedValue(large.fills[0], i), 2.0);
  // The range's ends are among the special values.
  const contract::FillParams &sp = (*v)->getTrialInputs()[3].fills[0];
  std::set<double> specials(sp.special, sp.special + sp.numSpecial);
  EXPECT_TRUE(specials.count(0.1) && specials.count(4.0));
  EXPECT_FALSE(specials.count(0.0) || specials.count(-1.0));
}

TEST(VerifierTest, AKernelThatRecognisesUniformInputsIsAlwaysCaught) {
  // A hostile kernel is honest only while the few inputs it looks at lie in the uniform trial's
  // range (scripts/adversarial-llm, input_recognition). Whatever elements it looks at, and for
  // every seed, some trial puts all of them outside that range; the normal, wide and special
  // trials alone let a two-element recogniser through about one time in eight.
  MLIRContext ctx;
  load(ctx);
  auto caught = [](llvm::ArrayRef<TrialInputs> trials, double bound,
                   llvm::ArrayRef<uint64_t> looked) {
    for (const TrialInputs &t : trials) {
      bool allOutside = true;
      for (uint64_t i : looked)
        allOutside &= std::fabs(generatedValue(t.fills[0], i)) > bound;
      if (allOutside)
        return true;
    }
    return false;
  };
  for (const char *ty : {"f32", "f16", "bf16"}) {
    OwningOpRef<ModuleOp> m;
    LaunchPlan plan = unary(ctx, m, "math.tanh", ty);
    for (uint64_t seed = 1; seed <= 40; ++seed) {
      VerifyOptions opts;
      opts.seed = seed * 7919;
      auto v = FunctionVerifier::create(plan, &ctx, UnknownLoc::get(&ctx), opts);
      ASSERT_TRUE(succeeded(v));
      // |x| >= 1 is outside uniform[-1, 1).
      EXPECT_TRUE(caught((*v)->getTrialInputs(), 0.99, {0, 1})) << ty << " seed " << seed;
      EXPECT_TRUE(caught((*v)->getTrialInputs(), 0.99, {0, 1, 2, 3, 1000, 4095}))
          << ty << " seed " << seed;
    }
  }
  // Integers: |x| > 8 is outside uniform[-8, 8].
  OwningOpRef<ModuleOp> m;
  LaunchPlan plan = lower(ctx, R"mlir(
    func.func @neg(%a: tensor<4096xi32>) -> tensor<4096xi32> {
      %z = arith.constant dense<0> : tensor<4096xi32>
      %r = arith.subi %z, %a : tensor<4096xi32>
      return %r : tensor<4096xi32>
    })mlir", m);
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    VerifyOptions opts;
    opts.seed = seed;
    auto v = FunctionVerifier::create(plan, &ctx, UnknownLoc::get(&ctx), opts);
    ASSERT_TRUE(succeeded(v));
    const TrialInputs &large = (*v)->getTrialInputs()[4];
    EXPECT_EQ(large.descriptions[0], "large(16 <= |x| < 128)");
    for (uint64_t i = 0; i < 4096; ++i) {
      double x = generatedValue(large.fills[0], i);
      ASSERT_EQ(x, std::floor(x));
      ASSERT_GE(std::fabs(x), 16.0);
      ASSERT_LT(std::fabs(x), 128.0);
    }
  }
}
