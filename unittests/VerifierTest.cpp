//===- VerifierTest.cpp - what the verifier asks the GPU worker, without a GPU ===//
//
// The request the verifier builds (buffers, ranges, seeds, the oracle's values, sampling,
// tolerances, the naive baseline) and the oracle's arbitration of elements off the reference.
// The trials' input distributions are in VerifierInputsTest.cpp, the checked timed launches in
// LaunchSelectionTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "VerifierFixture.h"
#include "evo/Evaluation/Oracle.h"
#include "evo/Evaluation/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
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

TEST(VerifierTest, TheRequestCarriesBuffersRangesSeedsAndTheOraclesValues) {
  MLIRContext ctx;
  load(ctx);
  OwningOpRef<ModuleOp> m;
  LaunchPlan plan = lower(ctx, R"mlir(
    func.func @f(%x: tensor<16x8xf32> {evo.range = [0.5, 2.0]}, %b: tensor<8xf16>) -> tensor<16x8xf32> {
      %e = tensor.empty() : tensor<16x8xf32>
      %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                           iterator_types = ["parallel", "parallel"]}
          ins(%x, %b : tensor<16x8xf32>, tensor<8xf16>) outs(%e : tensor<16x8xf32>) {
      ^bb0(%u: f32, %v: f16, %o: f32):
        %w = arith.extf %v : f16 to f32
        %l = math.log %u : f32
        %s = arith.addf %l, %w : f32
        linalg.yield %s : f32
      } -> tensor<16x8xf32>
      return %r : tensor<16x8xf32>
    })mlir", m);
  VerifyOptions opts;
  opts.trials = 3;
  opts.seed = 40;
  FailureOr<std::unique_ptr<FunctionVerifier>> v =
      FunctionVerifier::create(plan, &ctx, UnknownLoc::get(&ctx), opts);
  ASSERT_TRUE(succeeded(v));
  const json::Object &req = (*v)->getRequestTemplate();
  EXPECT_EQ(req.getString("mode"), llvm::StringRef("evaluate"));

  const json::Array &buffers = *req.getArray("buffers");
  ASSERT_EQ(buffers.size(), 3u);
  const json::Object &x = *buffers[0].getAsObject();
  EXPECT_EQ(x.getString("kind"), llvm::StringRef("f32"));
  EXPECT_EQ(x.getInteger("elements"), 128);
  EXPECT_EQ(*(*x.getArray("range"))[0].getAsNumber(), 0.5);
  const json::Object &b = *buffers[1].getAsObject();
  EXPECT_EQ(b.getString("kind"), llvm::StringRef("f16"));
  EXPECT_EQ(*(*b.getArray("range"))[1].getAsNumber(), 1.0);
  EXPECT_EQ(buffers[2].getAsObject()->getString("role"), llvm::StringRef("output"));

  EXPECT_EQ(req.getString("format"), llvm::StringRef(protocol::kRequestFormat));
  EXPECT_EQ((*v)->getSeed(), 40u);

  // The tolerance table travels with the request (the worker has none of its own).
  const json::Object &rtol = *req.getObject("rtol");
  for (const auto &[kind, x] : defaultTolerances())
    EXPECT_EQ(rtol.getNumber(kind), x) << kind;

  // 128 elements are cheap: every one is checked, in every trial, with the oracle's value
  // computed from the generator's inputs for that trial - rebuilt here from the request alone,
  // as the worker fills them.
  EXPECT_EQ((*v)->getNumChecked(), 128u);
  EXPECT_TRUE((*v)->checksAllElements());
  const json::Array &trials = *req.getArray("trials");
  ASSERT_EQ(trials.size(), 3u);
  const char *dists[] = {"uniform", "normal", "wide"};
  for (unsigned t = 0; t < 3; ++t) {
    const json::Object &trial = *trials[t].getAsObject();
    uint64_t seed = *trial.getInteger("seed");
    EXPECT_EQ(seed, 40u + t);
    std::vector<contract::FillParams> fills = fillsFromJson(trial, req);
    EXPECT_EQ((*(*trial.getArray("inputs"))[0].getAsObject()).getString("dist"),
              llvm::StringRef(dists[t]));
    const json::Object &s = *(*trial.getArray("samples"))[0].getAsObject();
    EXPECT_EQ(s.getInteger("buffer"), 2);
    EXPECT_EQ(s.getBoolean("all"), true); // every element: no index list
    EXPECT_EQ(s.getArray("indices"), nullptr);
    DecodedSample d = decodeSample(s, 128);
    const std::vector<int64_t> &idx = d.idx;
    const std::vector<double> &exp = d.exp;
    ASSERT_EQ(idx.size(), 128u);
    ASSERT_EQ(exp.size(), 128u);
    for (size_t k = 0; k < idx.size(); k += 17) {
      int64_t i = idx[k];
      double xv = generatedValue(fills[0], i);
      double bv = generatedValue(fills[1], i % 8);
      // x keeps its declared range in every distribution.
      EXPECT_GE(xv, 0.5);
      EXPECT_LE(xv, 2.0);
      EXPECT_DOUBLE_EQ(exp[k], std::log(xv) + bv) << "trial " << t << " index " << i;
    }
  }

  // The timed launches run on inputs of their own: another seed, uniform, with the oracle's
  // values for them; and their outputs are checked.
  const json::Object &timing = *req.getObject("timing");
  EXPECT_EQ(timing.getBoolean("check_launches"), true);
  EXPECT_GT(*timing.getNumber("check_fraction"), 0.0);
  EXPECT_GE(*timing.getInteger("min_checked"), 1);
  const json::Object &ti = *timing.getObject("inputs");
  uint64_t tseed = *ti.getInteger("seed");
  for (unsigned t = 0; t < 3; ++t)
    EXPECT_NE(tseed, 40u + t);
  EXPECT_EQ(tseed, (*v)->getTimingInputs().seed);
  std::vector<contract::FillParams> tf = fillsFromJson(ti, req);
  const json::Object &ts = *(*ti.getArray("samples"))[0].getAsObject();
  DecodedSample td = decodeSample(ts, 128);
  ASSERT_EQ(td.idx.size(), 128u);
  ASSERT_EQ(td.exp.size(), 128u);
  for (size_t k = 0; k < td.idx.size(); k += 13) {
    int64_t i = td.idx[k];
    EXPECT_DOUBLE_EQ(td.exp[k],
                     std::log(generatedValue(tf[0], i)) + generatedValue(tf[1], i % 8));
  }
}

// A scalar argument (docs/lowering.md, "Scalar arguments") is a one-element input the worker
// fills like any other and passes by value: the request says so, and the oracle's expected
// values use the value the fill writes at element 0 of that buffer, in every trial.
TEST(VerifierTest, ScalarArgumentsAreByValueInputsTheOracleReads) {
  MLIRContext ctx;
  load(ctx);
  OwningOpRef<ModuleOp> m;
  LaunchPlan plan = lower(ctx, R"mlir(
    func.func @f(%x: tensor<64xf32>, %alpha: f32 {evo.range = [0.25, 0.5]}) -> tensor<64xf32> {
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<64xf32>
      %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                           iterator_types = ["parallel"]}
          ins(%x : tensor<64xf32>) outs(%e : tensor<64xf32>) {
      ^bb0(%u: f32, %o: f32):
        %n = arith.mulf %u, %alpha : f32
        %p = arith.cmpf ogt, %u, %zero : f32
        %y = arith.select %p, %u, %n : f32
        linalg.yield %y : f32
      } -> tensor<64xf32>
      return %r : tensor<64xf32>
    })mlir", m);
  ASSERT_EQ(plan.buffers.size(), 3u);
  EXPECT_TRUE(plan.buffers[1].byValue);
  VerifyOptions opts;
  opts.trials = 3;
  opts.seed = 7;
  FailureOr<std::unique_ptr<FunctionVerifier>> v =
      FunctionVerifier::create(plan, &ctx, UnknownLoc::get(&ctx), opts);
  ASSERT_TRUE(succeeded(v));
  const json::Object &req = (*v)->getRequestTemplate();
  const json::Array &buffers = *req.getArray("buffers");
  ASSERT_EQ(buffers.size(), 3u);
  const json::Object &alpha = *buffers[1].getAsObject();
  EXPECT_EQ(alpha.getString("role"), llvm::StringRef("input"));
  EXPECT_EQ(alpha.getInteger("elements"), 1);
  EXPECT_EQ(alpha.getBoolean(protocol::kByValue), true);
  EXPECT_EQ(*(*alpha.getArray("range"))[0].getAsNumber(), 0.25);
  EXPECT_EQ(buffers[0].getAsObject()->get(protocol::kByValue), nullptr);
  const json::Array &trials = *req.getArray("trials");
  ASSERT_EQ(trials.size(), 3u);
  for (unsigned t = 0; t < 3; ++t) {
    const json::Object &trial = *trials[t].getAsObject();
    std::vector<contract::FillParams> fills = fillsFromJson(trial, req);
    double a = generatedValue(fills[1], 0);
    EXPECT_GE(a, 0.25);
    EXPECT_LE(a, 0.5);
    DecodedSample d = decodeSample(*(*trial.getArray("samples"))[0].getAsObject(), 64);
    ASSERT_EQ(d.exp.size(), 64u);
    for (size_t k = 0; k < 64; ++k) {
      double x = generatedValue(fills[0], d.idx[k]);
      EXPECT_DOUBLE_EQ(d.exp[k], x > 0 ? x : x * a) << "trial " << t << " index " << k;
    }
  }
}

TEST(VerifierTest, ExpensiveOutputsAreSampledWithinTheBudget) {
  MLIRContext ctx;
  load(ctx);
  OwningOpRef<ModuleOp> m;
  LaunchPlan plan = lower(ctx, R"mlir(
    func.func @mm(%a: tensor<512x512xf32>, %b: tensor<512x512xf32>) -> tensor<512x512xf32> {
      %z = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<512x512xf32>
      %f = linalg.fill ins(%z : f32) outs(%e : tensor<512x512xf32>) -> tensor<512x512xf32>
      %r = linalg.matmul ins(%a, %b : tensor<512x512xf32>, tensor<512x512xf32>) outs(%f : tensor<512x512xf32>) -> tensor<512x512xf32>
      return %r : tensor<512x512xf32>
    })mlir", m);
  VerifyOptions opts;
  opts.trials = 1;
  opts.maxSamples = 1000;
  FailureOr<std::unique_ptr<FunctionVerifier>> v =
      FunctionVerifier::create(plan, &ctx, UnknownLoc::get(&ctx), opts);
  ASSERT_TRUE(succeeded(v));
  EXPECT_LE((*v)->getNumChecked(), 1000u);
  EXPECT_GT((*v)->getNumChecked(), 900u);
  const json::Object &s = *(*(*(*v)->getRequestTemplate().getArray("trials"))[0]
                                  .getAsObject()
                                  ->getArray("samples"))[0]
                               .getAsObject();
  EXPECT_FALSE(s.getBoolean("all").has_value()); // sampled: the indices are listed
  DecodedSample d = decodeSample(s, 512 * 512);
  ASSERT_FALSE(d.idx.empty());
  EXPECT_EQ(d.idx.size(), d.exp.size());
  EXPECT_EQ(d.idx.front(), 0);
  EXPECT_EQ(d.idx.back(), 512 * 512 - 1);
  EXPECT_DOUBLE_EQ((*v)->getCost().flops, 2.0 * 512 * 512 * 512);
  EXPECT_DOUBLE_EQ((*v)->getCost().bytes, 3.0 * 512 * 512 * 4);
}

TEST(VerifierTest, ASourceTheOracleCannotReadIsADiagnostic) {
  MLIRContext ctx;
  load(ctx);
  LaunchPlan plan;
  plan.funcName = "f";
  plan.source = "func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> ";
  std::string msg;
  ScopedDiagnosticHandler h(&ctx, [&](Diagnostic &d) {
    msg += d.str() + "\n";
    return success();
  });
  EXPECT_TRUE(failed(FunctionVerifier::create(plan, &ctx, UnknownLoc::get(&ctx), VerifyOptions())));
  EXPECT_NE(msg.find("has no parseable source function"), std::string::npos) << msg;
}

TEST(VerifierTest, SeedsAreFreshFromOSEntropyUnlessGiven) {
  MLIRContext ctx;
  load(ctx);
  OwningOpRef<ModuleOp> m;
  LaunchPlan plan = unary(ctx, m, "math.tanh", "f32");
  std::set<uint64_t> seeds;
  for (int i = 0; i < 3; ++i) {
    VerifyOptions opts; // seed 0: fresh
    opts.trials = 2;
    auto v = FunctionVerifier::create(plan, &ctx, UnknownLoc::get(&ctx), opts);
    ASSERT_TRUE(succeeded(v));
    uint64_t s = (*v)->getSeed();
    EXPECT_NE(s, 0u);
    EXPECT_LT(s, 1ull << 53);
    EXPECT_EQ(*(*(*v)->getRequestTemplate().getArray("trials"))[0].getAsObject()->getInteger("seed"),
              static_cast<int64_t>(s));
    seeds.insert(s);
  }
  EXPECT_EQ(seeds.size(), 3u);
  // A given seed reproduces the run: the same inputs, samples and oracle values.
  VerifyOptions opts;
  opts.trials = 4;
  opts.seed = *seeds.begin();
  auto a = FunctionVerifier::create(plan, &ctx, UnknownLoc::get(&ctx), opts);
  auto b = FunctionVerifier::create(plan, &ctx, UnknownLoc::get(&ctx), opts);
  ASSERT_TRUE(succeeded(a) && succeeded(b));
  EXPECT_EQ(json::Value(json::Object((*a)->getRequestTemplate())),
            json::Value(json::Object((*b)->getRequestTemplate())));
}

TEST(VerifierTest, TheToleranceTableIsTheSharedFile) {
  // The embedded table is share/evo-opt/tolerances.json, which scripts/gpu_check.py reads.
  llvm::SmallString<256> path(__FILE__);
  llvm::sys::path::remove_filename(path);
  llvm::sys::path::append(path, "..", "share", "evo-opt", "tolerances.json");
  auto buf = llvm::MemoryBuffer::getFile(path);
  ASSERT_TRUE(static_cast<bool>(buf)) << path.str().str();
  llvm::Expected<json::Value> doc = json::parse((*buf)->getBuffer());
  ASSERT_TRUE(static_cast<bool>(doc)) << llvm::toString(doc.takeError());
  const json::Object &rtol = *doc->getAsObject()->getObject("rtol");
  EXPECT_EQ(rtol.size(), defaultTolerances().size());
  for (const auto &[kind, x] : defaultTolerances())
    EXPECT_EQ(rtol.getNumber(kind), x) << kind;
  for (const char *kind : {"f64", "f32", "f16", "bf16", "i64", "i32", "i16", "i8"})
    EXPECT_TRUE(defaultTolerances().count(kind)) << kind;
  EXPECT_EQ(defaultTolerances().at("f32"), 1e-4);
  EXPECT_EQ(defaultTolerances().at("i32"), 0.0);
}

TEST(VerifierTest, TolerancesOptionOverridesEntries) {
  std::map<std::string, double> t = defaultTolerances();
  ASSERT_FALSE(static_cast<bool>(parseTolerances("f32=2e-4, bf16=0.02", t)));
  EXPECT_EQ(t["f32"], 2e-4);
  EXPECT_EQ(t["bf16"], 0.02);
  EXPECT_EQ(t["f16"], defaultTolerances().at("f16"));
  ASSERT_FALSE(static_cast<bool>(parseTolerances("", t)));
  for (const char *bad : {"f33=1", "f32=-1", "f32", "f32=abc", "f32=inf", "=1e-4"}) {
    std::map<std::string, double> u = defaultTolerances();
    llvm::Error e = parseTolerances(bad, u);
    EXPECT_TRUE(static_cast<bool>(e)) << bad;
    llvm::consumeError(std::move(e));
    EXPECT_EQ(u, defaultTolerances()) << bad;
  }
  // The verifier sends what the options say.
  MLIRContext ctx;
  load(ctx);
  OwningOpRef<ModuleOp> m;
  LaunchPlan plan = unary(ctx, m, "math.tanh", "f32");
  VerifyOptions opts;
  opts.trials = 1;
  opts.rtol = t;
  auto v = FunctionVerifier::create(plan, &ctx, UnknownLoc::get(&ctx), opts);
  ASSERT_TRUE(succeeded(v));
  EXPECT_EQ((*v)->getRequestTemplate().getObject("rtol")->getNumber("f32"), 2e-4);
  // An output kind without a tolerance is a diagnostic, never a worker default.
  opts.rtol.erase("f32");
  std::string msg;
  ScopedDiagnosticHandler h(&ctx, [&](Diagnostic &d) {
    msg += d.str() + "\n";
    return success();
  });
  EXPECT_TRUE(failed(FunctionVerifier::create(plan, &ctx, UnknownLoc::get(&ctx), opts)));
  EXPECT_NE(msg.find("no tolerance for output kind 'f32'"), std::string::npos) << msg;
}

TEST(VerifierTest, TheNaiveBaselineIsTheReferenceOverTheSamePlanBuffers) {
  // evo-verify compares every output element of the kernels under test with the naive baseline
  // of their source, run on the same inputs. Its inputs and outputs are the plan's buffers; its
  // own scratch comes after them.
  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  MLIRContext ctx(registry);
  load(ctx);
  LaunchPlan plan;
  plan.funcName = "f";
  // matmul then a row max: two tasks, the matmul's result lives in a scratch buffer.
  plan.source = R"mlir(func.func @f(%a: tensor<64x32xf32>, %b: tensor<32x48xf32>) -> tensor<64xf32> {
      %z = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<64x48xf32>
      %f = linalg.fill ins(%z : f32) outs(%e : tensor<64x48xf32>) -> tensor<64x48xf32>
      %m = linalg.matmul {evo.knobs = {tile_sizes = [16, 16, 8], thread_tile = [2, 2]}} ins(%a, %b : tensor<64x32xf32>, tensor<32x48xf32>) outs(%f : tensor<64x48xf32>) -> tensor<64x48xf32>
      %ninf = arith.constant -3.0e38 : f32
      %e2 = tensor.empty() : tensor<64xf32>
      %f2 = linalg.fill ins(%ninf : f32) outs(%e2 : tensor<64xf32>) -> tensor<64xf32>
      %r = linalg.reduce ins(%m : tensor<64x48xf32>) outs(%f2 : tensor<64xf32>) dimensions = [1]
        (%in: f32, %acc: f32) { %x = arith.maximumf %in, %acc : f32  linalg.yield %x : f32 }
      return %r : tensor<64xf32>
    })mlir";
  Builder b(&ctx);
  // The plan of hand-written kernels: its own scratch buffer first among the non-I/O ones.
  plan.buffers = {{"arg0", BufferRole::Input, MemRefType::get({64, 32}, b.getF32Type())},
                  {"arg1", BufferRole::Input, MemRefType::get({32, 48}, b.getF32Type())},
                  {"result0", BufferRole::Output, MemRefType::get({64}, b.getF32Type())},
                  {"mine", BufferRole::Scratch, MemRefType::get({7}, b.getF32Type())}};
  llvm::Expected<Variant> v = naiveBaseline(plan, registry, PTXOptions());
  ASSERT_TRUE(static_cast<bool>(v)) << llvm::toString(v.takeError());
  EXPECT_TRUE(v->reference);
  EXPECT_FALSE(v->timeIt);
  EXPECT_NE(v->ptx.find(".entry"), std::string::npos);
  ASSERT_GE(v->launches.size(), 2u);
  ASSERT_EQ(v->scratch.size(), 1u);
  EXPECT_EQ(v->scratch[0].kind, "f32");
  EXPECT_EQ(v->scratch[0].elements, 64u * 48u);
  std::set<unsigned> used;
  for (const KernelLaunch &l : v->launches) {
    EXPECT_NE(v->ptx.find(l.kernel), std::string::npos) << l.kernel;
    for (unsigned a : l.args) {
      EXPECT_NE(a, 3u) << "the kernels' own scratch is not the baseline's";
      used.insert(a);
    }
  }
  EXPECT_EQ(used, (std::set<unsigned>{0, 1, 2, 4})); // inputs, output, its scratch after the plan's
  // The source's knobs (a tiled matmul) are not the baseline's: the naive schedule has no
  // shared-memory tiles.
  EXPECT_EQ(v->ptx.find(".shared"), std::string::npos);

  // A plan whose outputs are not the source's is refused, not silently mismatched.
  LaunchPlan wrong = plan;
  wrong.buffers[2].type = MemRefType::get({65}, b.getF32Type());
  llvm::Expected<Variant> w = naiveBaseline(wrong, registry, PTXOptions());
  ASSERT_FALSE(static_cast<bool>(w));
  EXPECT_NE(llvm::toString(w.takeError()).find("differs from 'result0'"), std::string::npos);
}

// Expected values travel packed (base64 of little-endian doubles): bit-exact for every double,
// NaN and infinities included, and anything that is not a whole number of doubles is refused.
TEST(PackedValues, RoundTripsEveryDoubleAndRefusesMalformedText) {
  std::vector<double> v = {0.0, -0.0, 1.5, -3.25e-310, 1e308, std::nan(""),
                           INFINITY, -INFINITY, 0.1, 123456789.125};
  for (size_t n = 0; n <= v.size(); ++n) {
    std::vector<double> part(v.begin(), v.begin() + n);
    std::string text = evo::packed::packF64(part);
    EXPECT_EQ(text.size() % 4, 0u);
    std::optional<std::vector<double>> back = evo::packed::unpackF64(text);
    ASSERT_TRUE(back.has_value()) << text;
    ASSERT_EQ(back->size(), n);
    for (size_t i = 0; i < n; ++i)
      EXPECT_EQ(std::memcmp(&(*back)[i], &part[i], 8), 0) << i;
  }
  EXPECT_EQ(evo::packed::packF64({1.0}), "AAAAAAAA8D8=");
  for (const char *bad : {"A", "AAAA", "AAAAAAAA8D8", "AAAAAAAA8D8*", "AAAAAAAA8D=8", "AA=A"})
    EXPECT_FALSE(evo::packed::unpackF64(bad).has_value()) << bad;
}

TEST(VerifierTest, TheOracleArbitratesElementsOffTheReference) {
  // tanh over 4096 x f32. The worker lists a few elements where a candidate is off the
  // reference (WorkerProtocol.h, "disputed"); the oracle recomputes them on that trial's inputs.
  MLIRContext ctx;
  load(ctx);
  OwningOpRef<ModuleOp> m;
  LaunchPlan plan = unary(ctx, m, "math.tanh", "f32");
  VerifyOptions opts;
  opts.trials = 3;
  opts.seed = 11;
  auto v = FunctionVerifier::create(plan, &ctx, UnknownLoc::get(&ctx), opts);
  ASSERT_TRUE(succeeded(v));
  auto truth = [&](unsigned trial, uint64_t i) {
    return std::tanh(generatedValue((*v)->getTrialInputs()[trial].fills[0], i));
  };
  auto disputed = [&](std::vector<std::tuple<int64_t, int64_t, double, double>> items) {
    CandidateOutcome o;
    o.id = "#1";
    o.verdict = Verdict::Invalid;
    o.reason = "2 of 4096 elements of 'result0' differ from the validated reference";
    json::Array list;
    for (auto [t, i, got, ref] : items)
      list.push_back(json::Object{{"trial", t}, {"output", 0}, {"index", i}, {"got", got}, {"ref", ref}});
    o.result = json::Object{{"verdict", "invalid"}, {"reason", o.reason}, {"disputed", std::move(list)}};
    return o;
  };
  const double off = 1e-2;

  // The candidate is right and the reference is off at both elements (trials 1 and 2): valid,
  // with what was arbitrated on record.
  CandidateOutcome right = disputed({{1, 17, truth(1, 17), truth(1, 17) + off},
                                     {2, 4000, truth(2, 4000), truth(2, 4000) - off}});
  (*v)->arbitrate(right);
  EXPECT_EQ(right.verdict, Verdict::Valid) << right.reason;
  EXPECT_EQ(right.reason, "");
  EXPECT_EQ(right.result.getString("verdict"), llvm::StringRef("valid"));
  ASSERT_TRUE(right.result.getObject("arbitrated"));
  EXPECT_EQ(right.result.getObject("arbitrated")->getInteger("elements"), 2);

  // Both off the oracle, the candidate no further than the reference: valid (the reference is
  // the less accurate of two evaluations of an ill-conditioned point).
  CandidateOutcome noWorse = disputed({{1, 5, truth(1, 5) - off / 2, truth(1, 5) + off}});
  (*v)->arbitrate(noWorse);
  EXPECT_EQ(noWorse.verdict, Verdict::Valid) << noWorse.reason;

  // Wrong at one of them (the reference is right there): invalid, and the reason gives the
  // oracle's value.
  CandidateOutcome wrong = disputed({{1, 17, truth(1, 17), truth(1, 17) + off},
                                     {1, 18, truth(1, 18) + off, truth(1, 18)}});
  (*v)->arbitrate(wrong);
  EXPECT_EQ(wrong.verdict, Verdict::Invalid);
  EXPECT_NE(wrong.reason.find("'result0'[18]"), std::string::npos) << wrong.reason;
  EXPECT_NE(wrong.reason.find("the oracle says"), std::string::npos) << wrong.reason;
  EXPECT_EQ(wrong.result.getString("verdict"), llvm::StringRef("invalid"));

  // Lists the worker never makes leave the verdict as it is: an index or trial out of range, a
  // non-finite value, a missing field, an outcome that was not invalid.
  for (auto bad : {disputed({{1, 4096, 0.0, 1.0}}), disputed({{3, 1, truth(1, 1), 0.0}}),
                   disputed({{-1, 1, 0.0, 0.0}}), disputed({{1, 1, NAN, 0.0}})}) {
    std::string before = bad.reason;
    (*v)->arbitrate(bad);
    EXPECT_EQ(bad.verdict, Verdict::Invalid);
    EXPECT_EQ(bad.reason, before);
  }
  CandidateOutcome missing = disputed({{1, 1, truth(1, 1), 0.0}});
  (*missing.result.getArray("disputed"))[0].getAsObject()->erase("ref");
  (*v)->arbitrate(missing);
  EXPECT_EQ(missing.verdict, Verdict::Invalid);
  CandidateOutcome crashed = disputed({{1, 1, truth(1, 1), 0.0}});
  crashed.verdict = Verdict::Crashed;
  (*v)->arbitrate(crashed);
  EXPECT_EQ(crashed.verdict, Verdict::Crashed);
  // Without a list, nothing happens.
  CandidateOutcome plain;
  plain.verdict = Verdict::Invalid;
  plain.reason = "wrong";
  (*v)->arbitrate(plain);
  EXPECT_EQ(plain.verdict, Verdict::Invalid);
  EXPECT_EQ(plain.reason, "wrong");
}

TEST(VerifierTest, TheOracleArbitratesElementsOffTheReferenceOnTheTimingInputs) {
  // The worker checks a candidate's untimed run on each timing input set against the
  // reference's before its timed launches; a few elements off it are listed with the set
  // (timing_set 0 or 1) and its seed, and the oracle recomputes them on those inputs, set B
  // regenerated from its seed.
  MLIRContext ctx;
  load(ctx);
  OwningOpRef<ModuleOp> m;
  LaunchPlan plan = unary(ctx, m, "math.tanh", "f32");
  VerifyOptions opts;
  opts.trials = 2;
  opts.seed = 12;
  auto v = FunctionVerifier::create(plan, &ctx, UnknownLoc::get(&ctx), opts);
  ASSERT_TRUE(succeeded(v));
  const TrialInputs &timing = (*v)->getTimingInputs();
  const uint64_t seedB = 0xF00DCAFE12345678ull; // the worker's B seeds use all 64 bits
  auto truth = [&](int set, uint64_t i) {
    contract::FillParams f = timing.fills[0];
    if (set == 1)
      f.seed = seedB;
    return std::tanh(generatedValue(f, i));
  };
  ASSERT_NE(truth(0, 7), truth(1, 7)); // B is other inputs
  struct Entry {
    int set;
    uint64_t seed, index;
    double got, ref;
  };
  auto disputed = [&](std::vector<Entry> items) {
    CandidateOutcome o;
    o.verdict = Verdict::Invalid;
    o.reason = "1 of 4096 elements of 'result0' differ from the validated reference (timing inputs)";
    json::Array list;
    for (const Entry &e : items)
      list.push_back(json::Object{{"timing_set", e.set}, {"seed", e.seed}, {"output", 0},
                                  {"index", static_cast<int64_t>(e.index)}, {"got", e.got},
                                  {"ref", e.ref}});
    o.result = json::Object{{"verdict", "invalid"}, {"reason", o.reason}, {"disputed", std::move(list)}};
    return o;
  };
  const double off = 1e-2;

  // Right on both sets where the reference is off: valid.
  CandidateOutcome right = disputed({{0, timing.seed, 7, truth(0, 7), truth(0, 7) + off},
                                     {1, seedB, 7, truth(1, 7), truth(1, 7) - off}});
  (*v)->arbitrate(right);
  EXPECT_EQ(right.verdict, Verdict::Valid) << right.reason;
  ASSERT_TRUE(right.result.getObject("arbitrated"));
  EXPECT_EQ(right.result.getObject("arbitrated")->getInteger("elements"), 2);

  // Set B's value judged on set A's inputs would be wrong: the seed decides the inputs.
  CandidateOutcome wrongB = disputed({{1, seedB, 7, truth(0, 7), truth(1, 7)}});
  (*v)->arbitrate(wrongB);
  EXPECT_EQ(wrongB.verdict, Verdict::Invalid);
  EXPECT_NE(wrongB.reason.find("timing inputs B"), std::string::npos) << wrongB.reason;
  EXPECT_NE(wrongB.reason.find("the oracle says"), std::string::npos) << wrongB.reason;

  // Off the oracle where the reference is right (set A): invalid, named.
  CandidateOutcome wrongA = disputed({{0, timing.seed, 9, truth(0, 9) + off, truth(0, 9)}});
  (*v)->arbitrate(wrongA);
  EXPECT_EQ(wrongA.verdict, Verdict::Invalid);
  EXPECT_NE(wrongA.reason.find("(the reference gives"), std::string::npos) << wrongA.reason;
  EXPECT_NE(wrongA.reason.find("; timing inputs)"), std::string::npos) << wrongA.reason;

  // Lists the worker never makes leave the verdict as it is: set A with another seed, set B
  // with set A's seed or with two seeds, a set that does not exist, trial and set together.
  std::vector<CandidateOutcome> bad = {
      disputed({{0, timing.seed + 2, 7, truth(0, 7), truth(0, 7) + off}}),
      disputed({{1, timing.seed, 7, truth(0, 7), truth(0, 7) + off}}),
      disputed({{1, seedB, 7, truth(1, 7), truth(1, 7) + off},
                {1, seedB + 1, 8, truth(1, 8), truth(1, 8) + off}}),
      disputed({{2, seedB, 7, truth(1, 7), truth(1, 7) + off}})};
  CandidateOutcome both = disputed({{0, timing.seed, 7, truth(0, 7), truth(0, 7) + off}});
  (*both.result.getArray("disputed"))[0].getAsObject()->try_emplace("trial", 0);
  bad.push_back(std::move(both));
  CandidateOutcome noSeed = disputed({{0, timing.seed, 7, truth(0, 7), truth(0, 7) + off}});
  (*noSeed.result.getArray("disputed"))[0].getAsObject()->erase("seed");
  bad.push_back(std::move(noSeed));
  for (CandidateOutcome &o : bad) {
    std::string before = o.reason;
    (*v)->arbitrate(o);
    EXPECT_EQ(o.verdict, Verdict::Invalid);
    EXPECT_EQ(o.reason, before);
  }
}
