//===- Verifier.cpp - differential execution of a function's kernels ----------===//
//
// FunctionVerifier: the trials (their seeds and rungs; what each trial writes into each input is
// TrialInputs.cpp's), the float64 oracle's expected values at the sampled elements, the request
// to evo-eval-worker and the verdicts from its results, including the arbitration of a candidate
// that disagrees with the reference. The tolerances are Tolerances.cpp's, the naive baseline
// NaiveBaseline.cpp's. docs/verification.md.
//
//===----------------------------------------------------------------------===//

#include "evo/Evaluation/Verifier.h"
#include "TrialInputs.h"
#include "evo/Evaluation/InputGenerator.h"
#include "evo/Evaluation/LaunchSelection.h"
#include "evo/Evaluation/PackedValues.h"
#include "evo/Evaluation/WorkerProtocol.h"
#include "evo/Runtime/TensorMap.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/raw_ostream.h"
#include <cmath>
#include <random>

using namespace mlir;
namespace json = llvm::json;
namespace P = evo::protocol;

namespace evo {

using contract::FillParams;
using trials::Want;
using trials::fillFor;
using trials::fillJson;
using trials::scheduled;

//===----------------------------------------------------------------------===//
// Samples and reports
//===----------------------------------------------------------------------===//

std::vector<uint64_t> chooseSamples(uint64_t n, uint64_t count, uint64_t seed) {
  std::vector<uint64_t> out;
  if (count >= n) {
    out.resize(n);
    for (uint64_t i = 0; i < n; ++i)
      out[i] = i;
    return out;
  }
  uint64_t edge = std::min<uint64_t>(32, count / 4);
  for (uint64_t i = 0; i < edge; ++i) {
    out.push_back(i);
    out.push_back(n - 1 - i);
  }
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + n);
  std::uniform_int_distribution<uint64_t> pick(0, n - 1);
  while (out.size() < count)
    out.push_back(pick(rng));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

/// A tensor map's entry of the request (buffers[] and candidates[].scratch alike).
static json::Object tensorMapEntry(StringRef name, const TensorMapDesc &map,
                                   StringRef elementType) {
  return json::Object{{P::kName, name},
                      {P::kRole, P::kRoleTensorMap},
                      {P::kBytes, static_cast<int64_t>(tensormap::kDescriptorBytes)},
                      {P::kTensorMap, toJSON(map, elementType)}};
}

json::Value toJSON(const VariantScratch &s) {
  if (s.tensorMap)
    return tensorMapEntry(s.name, *s.tensorMap, s.tensorMapElementType);
  return json::Object{{P::kName, s.name},
                      {P::kKind, s.kind},
                      {P::kElements, static_cast<int64_t>(s.elements)},
                      {P::kZeroInit, s.zeroInit}};
}

bool fromJSON(const json::Value &value, VariantScratch &s, json::Path path) {
  json::ObjectMapper mapper(value, path);
  if (!mapper || !mapper.mapOptional(P::kName, s.name))
    return false;
  const json::Object &o = *value.getAsObject();
  std::optional<StringRef> role = o.getString(P::kRole);
  if (role && *role == P::kRoleTensorMap) {
    const json::Value *m = o.get(P::kTensorMap);
    if (!m) {
      path.field(P::kTensorMap).report("missing value");
      return false;
    }
    TensorMapDesc map;
    if (!fromJSON(*m, map, s.tensorMapElementType, path.field(P::kTensorMap)))
      return false;
    tensormap::ElementInfo info;
    if (!tensormap::elementInfo(s.tensorMapElementType, info)) {
      path.field(P::kTensorMap).field(tensormap::key::kElementType).report(
          "expected an element type TMA supports (f16, bf16, f32, f64, i8, i16, i32, i64)");
      return false;
    }
    std::string err = tensormap::checkShape({map.dims.begin(), map.dims.end()},
                                            {map.strides.begin(), map.strides.end()},
                                            {map.box.begin(), map.box.end()}, map.swizzle);
    if (!err.empty()) {
      path.field(P::kTensorMap).report("not a tensor map cuTensorMapEncodeTiled accepts");
      return false;
    }
    s.tensorMap = std::move(map);
    s.kind.clear();
    s.elements = 0;
    s.zeroInit = false;
    return true;
  }
  if (role && *role != P::kRoleScratch) {
    path.field(P::kRole).report("expected \"scratch\" or \"tensor_map\"");
    return false;
  }
  if (!mapper.map(P::kKind, s.kind) || !mapper.map(P::kElements, s.elements) ||
      !mapper.mapOptional(P::kZeroInit, s.zeroInit))
    return false;
  if (!symbolizeElementKind(s.kind)) {
    path.field(P::kKind).report("expected an element kind (f64, f32, f16, bf16, i64, i32, i16, i8)");
    return false;
  }
  return true;
}

json::Object VariantReport::toJson() const {
  json::Object o{{"id", id}, {"verdict", stringifyVerdict(verdict)}, {"reason", reason}};
  if (const json::Array *t = result.getArray("trials"))
    o["trials"] = json::Array(*t);
  if (const json::Object *t = result.getObject("timing_inputs"))
    o["timing_inputs"] = json::Object(*t);
  if (const json::Object *t = result.getObject("timing"))
    o["timing"] = json::Object(*t);
  if (roofline)
    o["roofline"] = roofline->toJson();
  for (const char *k : {P::kEvalMs, P::kTimingWallMs})
    if (std::optional<double> ms = result.getNumber(k))
      o[k] = *ms;
  if (seed)
    o["seed"] = static_cast<int64_t>(seed);
  if (checkedPerTrial)
    o["checked_elements_per_trial"] = static_cast<int64_t>(checkedPerTrial);
  if (!trialInputs.empty()) {
    json::Array inputs;
    for (const std::string &s : trialInputs)
      inputs.push_back(s);
    o["trial_inputs"] = std::move(inputs);
    o["reference"] = baselineReference ? "naive baseline (every element) and oracle samples"
                                       : "oracle";
  }
  return o;
}


//===----------------------------------------------------------------------===//
// FunctionVerifier
//===----------------------------------------------------------------------===//

namespace {

/// The plan's buffers as the request lists them, and which are inputs and outputs.
struct BufferLayout {
  json::Array buffers;
  SmallVector<unsigned> inputBuffers, outputBuffers;
  SmallVector<ElementKind> kinds;
  SmallVector<InputRange> bufferRanges;
};

/// Buffers: inputs carry their ranges; the generator's stream index is the buffer index.
FailureOr<BufferLayout> layOutBuffers(const LaunchPlan &plan, ArrayRef<InputRange> ranges,
                                      const VerifyOptions &options, Location loc) {
  BufferLayout l;
  json::Array &buffers = l.buffers;
  SmallVector<unsigned> &inputBuffers = l.inputBuffers, &outputBuffers = l.outputBuffers;
  SmallVector<ElementKind> &kinds = l.kinds;
  l.bufferRanges.assign(plan.buffers.size(), InputRange());
  SmallVector<InputRange> &bufferRanges = l.bufferRanges;
  for (auto [i, b] : llvm::enumerate(plan.buffers)) {
    if (b.tensorMap) {
      // Encoded by the worker over the buffer its source is bound to (docs/verification.md).
      kinds.push_back(ElementKind::I8);
      buffers.push_back(tensorMapEntry(
          b.name, *b.tensorMap,
          elementTypeName(plan.buffers[b.tensorMap->source].type.getElementType())));
      continue;
    }
    ElementKind kind = elementKindOf(b.type.getElementType());
    if (kind == ElementKind::Unsupported)
      return emitError(loc) << "evo-verify: buffer '" << b.name << "' has element type "
                            << b.type.getElementType() << ", which the verifier cannot fill";
    kinds.push_back(kind);
    json::Object o{{P::kName, b.name},
                   // A constant is drawn like any input: kernels are checked for every value.
                   {P::kRole, stringifyBufferRole(b.isReadOnly() ? BufferRole::Input : b.role)},
                   {P::kKind, elementKindName(kind)},
                   {P::kElements, b.type.getNumElements()},
                   {P::kZeroInit, b.zeroInit}};
    if (b.byValue)
      o[P::kByValue] = true;
    if (b.isReadOnly()) {
      InputRange r = ranges[inputBuffers.size()];
      o[P::kRange] = json::Array{r.lo, r.hi};
      bufferRanges[i] = r;
      inputBuffers.push_back(i);
    } else if (b.role == BufferRole::Output) {
      outputBuffers.push_back(i);
      if (!options.rtol.count(elementKindName(kind).str()))
        return emitError(loc) << "evo-verify: no tolerance for output kind '"
                              << elementKindName(kind) << "' (option tolerances)";
    }
    buffers.push_back(std::move(o));
  }
  return l;
}

/// Which elements to check, per output: all when cheap, else a budgeted sample; and a few of
/// them (evenly spread) that decide quickly whether a distribution is admissible.
struct Checked {
  SmallVector<std::vector<uint64_t>> indices, probe;
  bool allElements = true;
  uint64_t numChecked = 0;
};

Checked chooseChecked(const Oracle &o, unsigned numOutputs, const VerifyOptions &options,
                      uint64_t seed) {
  Checked c;
  for (unsigned r = 0; r < numOutputs; ++r) {
    uint64_t n = o.getResultNumElements(r);
    uint64_t count = n;
    if (o.costOfAllElements(r) > options.fullCheckLimit) {
      double per = std::max(1.0, o.costPerElement(r));
      count = std::clamp<uint64_t>(static_cast<uint64_t>(options.oracleBudget / per), 64,
                                   options.maxSamples);
    }
    c.indices.push_back(chooseSamples(n, count, seed + r));
    c.allElements &= c.indices.back().size() == n;
    c.numChecked += c.indices.back().size();
  }
  for (const std::vector<uint64_t> &idx : c.indices) {
    std::vector<uint64_t> p;
    size_t step = std::max<size_t>(1, idx.size() / 256);
    for (size_t k = 0; k < idx.size(); k += step)
      p.push_back(idx[k]);
    c.probe.push_back(std::move(p));
  }
  return c;
}

using Values = std::vector<std::vector<double>>; // per output, per checked index

/// Draws the trials' inputs and computes the oracle's expected values on them.
class TrialMaker {
public:
  TrialMaker(const LaunchPlan &plan, const VerifyOptions &options, const Oracle &o,
             const BufferLayout &l, const Checked &c)
      : plan(plan), options(options), o(o), inputBuffers(l.inputBuffers),
        outputBuffers(l.outputBuffers), kinds(l.kinds), bufferRanges(l.bufferRanges),
        indices(c.indices), probe(c.probe) {}

  Values compute(const std::vector<FillParams> &fills,
                 const SmallVector<std::vector<uint64_t>> &at) const {
    Oracle::Session s = o.session([&](unsigned arg, uint64_t index) {
      return generatedValue(fills[inputBuffers[arg]], index);
    });
    Values out(outputBuffers.size());
    for (unsigned r = 0; r < outputBuffers.size(); ++r)
      for (uint64_t i : at[r])
        out[r].push_back(s.valueAt(r, i));
    return out;
  }
  std::vector<FillParams> uniformFills(uint64_t s) const {
    std::vector<FillParams> fills(plan.buffers.size());
    for (unsigned b : inputBuffers)
      fills[b] = contract::uniformFill(s, b, kinds[b], bufferRanges[b].lo, bufferRanges[b].hi);
    return fills;
  }
  void describeUniform(TrialInputs &ti) const {
    for (unsigned b : inputBuffers) {
      std::string d;
      fillFor(Want::Uniform, 0, ti.seed, b, kinds[b], bufferRanges[b], d);
      ti.descriptions.push_back(d);
    }
  }
  /// Records which outputs trial 0 (uniform in the declared ranges) leaves non-finite.
  void setUniformResults(const Values &trial0) {
    uniformNonFinite.assign(outputBuffers.size(), false);
    for (unsigned r = 0; r < outputBuffers.size(); ++r)
      for (double x : trial0[r])
        uniformNonFinite[r] = uniformNonFinite[r] || !std::isfinite(x);
  }
  /// Finite and representable, or no less finite than trial 0's results.
  bool admissible(const Values &vals) const {
    for (unsigned r = 0; r < outputBuffers.size(); ++r) {
      ElementKind k = kinds[outputBuffers[r]];
      // Room below the largest value: an f16 sum whose result fits can still overflow halfway.
      double limit = contract::isFloat(k) ? maxFinite(k) / 16 : INFINITY;
      for (double x : vals[r])
        if (std::isfinite(x) ? std::fabs(x) > limit : !uniformNonFinite[r])
          return false;
    }
    return true;
  }
  /// Trial t > 0: its scheduled distributions, narrowed rung by rung until admissible.
  void varied(unsigned t, uint64_t seed, TrialInputs &ti, Values &expected) const {
    ti.seed = seed + t;
    const unsigned kRungs = 3;
    for (unsigned rung = 0; rung <= kRungs; ++rung) {
      std::vector<FillParams> fills(plan.buffers.size());
      std::vector<std::string> descs;
      for (auto [k, b] : llvm::enumerate(inputBuffers)) {
        Want want = options.variedInputs && rung < kRungs ? scheduled(t, k) : Want::Uniform;
        std::string d;
        fills[b] = fillFor(want, rung, ti.seed, b, kinds[b], bufferRanges[b], d);
        if (rung == kRungs && options.variedInputs)
          d += " (the other distributions made results non-finite or unrepresentable)";
        descs.push_back(d);
      }
      bool last = rung == kRungs || !options.variedInputs;
      if (!last && !admissible(compute(fills, probe)))
        continue;
      Values full = compute(fills, indices);
      if (!last && !admissible(full))
        continue;
      ti.fills = std::move(fills);
      ti.descriptions = std::move(descs);
      expected = std::move(full);
      return;
    }
  }
  json::Object trialJson(const TrialInputs &ti, const Values &vals) const {
    json::Array samples, inputs;
    for (unsigned r = 0; r < outputBuffers.size(); ++r) {
      // Packed: a full check of a large output would otherwise be millions of JSON values.
      json::Object s{{P::kBuffer, static_cast<int64_t>(outputBuffers[r])},
                     {P::kExpectedF64, packed::packF64(vals[r])}};
      if (allElements(r)) {
        s[P::kAll] = true;
      } else {
        json::Array idx;
        for (uint64_t i : indices[r])
          idx.push_back(static_cast<int64_t>(i));
        s[P::kIndices] = std::move(idx);
      }
      samples.push_back(std::move(s));
    }
    for (unsigned b : inputBuffers)
      inputs.push_back(fillJson(ti.fills[b], b));
    return json::Object{{P::kSeed, static_cast<int64_t>(ti.seed)},
                        {P::kInputs, std::move(inputs)},
                        {P::kSamples, std::move(samples)}};
  }

private:
  const LaunchPlan &plan;
  const VerifyOptions &options;
  const Oracle &o;
  const SmallVector<unsigned> &inputBuffers, &outputBuffers;
  const SmallVector<ElementKind> &kinds;
  const SmallVector<InputRange> &bufferRanges;
  const SmallVector<std::vector<uint64_t>> &indices, &probe;
  std::vector<bool> uniformNonFinite;

  /// Output r is checked at every element (chooseSamples gives them in order then).
  bool allElements(unsigned r) const {
    return indices[r].size() == o.getResultNumElements(r);
  }
};

} // namespace

FailureOr<std::unique_ptr<FunctionVerifier>>
FunctionVerifier::create(const LaunchPlan &plan, MLIRContext *ctx, Location loc,
                         const VerifyOptions &options) {
  std::unique_ptr<FunctionVerifier> v(new FunctionVerifier());
  v->plan = plan;
  v->options = options;
  // f32 contractions lowered with f32-matmul=tf32 or 3xtf32 (recorded in the plan's task knobs)
  // loosen the f32 outputs of this function only; every other function keeps rtol.f32.
  applyF32MatmulTolerance(plan, v->options.rtol);
  ParserConfig config(ctx);
  OwningOpRef<ModuleOp> source = parseSourceString<ModuleOp>(plan.source, config);
  func::FuncOp func = source ? source->lookupSymbol<func::FuncOp>(plan.funcName) : nullptr;
  if (!func)
    return emitError(loc) << "evo-verify: the plan of '" << plan.funcName
                          << "' has no parseable source function";
  FailureOr<std::unique_ptr<Oracle>> oracle = Oracle::create(func);
  if (failed(oracle))
    return emitError(loc) << "evo-verify: the oracle cannot evaluate '" << plan.funcName << "'";
  FailureOr<SmallVector<InputRange>> ranges = argumentRanges(func);
  if (failed(ranges))
    return failure();
  v->cost = estimateCost(func, plan);
  for (const auto &[k, x] : options.rtol)
    if (!symbolizeElementKind(k) || !(x >= 0) || !std::isfinite(x))
      return emitError(loc) << "evo-verify: bad tolerance '" << k << "=" << x << "'";
  v->seed = options.seed ? options.seed : freshSeed();
  if (!v->seed)
    return emitError(loc) << "evo-verify: no OS entropy to draw a seed from (getrandom and "
                             "/dev/urandom failed); give seed=N";
  const uint64_t seed = v->seed;

  FailureOr<BufferLayout> layout = layOutBuffers(plan, *ranges, options, loc);
  if (failed(layout))
    return failure();
  const SmallVector<unsigned> &outputBuffers = layout->outputBuffers;
  if (outputBuffers.size() != (*oracle)->getNumResults())
    return emitError(loc) << "evo-verify: the plan of '" << plan.funcName << "' has "
                          << outputBuffers.size() << " outputs but its source returns "
                          << (*oracle)->getNumResults();
  Checked checked = chooseChecked(**oracle, outputBuffers.size(), options, seed);
  v->allElements = checked.allElements;
  v->numChecked += checked.numChecked;
  TrialMaker maker(plan, options, **oracle, *layout, checked);

  // Trial 0 (uniform in the declared ranges) and the timing inputs (uniform, their own seed)
  // first: a distribution of a later trial is admissible only if its results are finite and
  // representable, or no less finite than trial 0's.
  const unsigned numTrials = options.trials;
  std::vector<Values> expected(numTrials);
  v->trialInputs.assign(numTrials, {});
  Values timingExpected;
  v->timingInputs.seed = ((seed * 0x9E3779B97F4A7C15ull) ^ 0x7157ull) & ((1ull << 53) - 1);
  v->timingInputs.seed |= 1;
  v->timingInputs.fills = maker.uniformFills(v->timingInputs.seed);
  maker.describeUniform(v->timingInputs);
  llvm::DefaultThreadPool pool(llvm::hardware_concurrency());
  if (numTrials > 0) {
    TrialInputs &t0 = v->trialInputs[0];
    t0.seed = seed;
    t0.fills = maker.uniformFills(seed);
    maker.describeUniform(t0);
    pool.async([&] { expected[0] = maker.compute(v->trialInputs[0].fills, checked.indices); });
  }
  pool.async([&] { timingExpected = maker.compute(v->timingInputs.fills, checked.indices); });
  pool.wait();
  maker.setUniformResults(numTrials > 0 ? expected[0] : Values(outputBuffers.size()));
  for (unsigned t = 1; t < numTrials; ++t)
    pool.async([&, t] { maker.varied(t, seed, v->trialInputs[t], expected[t]); });
  pool.wait();

  json::Array trials;
  for (unsigned t = 0; t < numTrials; ++t)
    trials.push_back(maker.trialJson(v->trialInputs[t], expected[t]));
  // What arbitrate() needs later.
  v->inputBuffers = layout->inputBuffers;
  for (unsigned r = 0; r < outputBuffers.size(); ++r) {
    v->outputNames.push_back(plan.buffers[outputBuffers[r]].name);
    // v->options: with the f32-matmul mode's tolerance (the worker's, too).
    auto rt = v->options.rtol.find(elementKindName(layout->kinds[outputBuffers[r]]).str());
    v->outputRtol.push_back(rt == v->options.rtol.end() ? 0 : rt->second);
    v->outputQuantum.push_back(contract::outputQuantum(layout->kinds[outputBuffers[r]]));
  }
  auto rmsOf = [](const Values &e) {
    std::vector<double> rms;
    for (const std::vector<double> &out : e) {
      double sum = 0;
      size_t finite = 0;
      for (double x : out)
        if (std::isfinite(x)) {
          sum += x * x;
          ++finite;
        }
      rms.push_back(finite ? std::sqrt(sum / finite) : 0);
    }
    return rms;
  };
  for (const Values &e : expected)
    v->sampleRms.push_back(rmsOf(e));
  v->timingSampleRms = rmsOf(timingExpected);
  v->timingSampleRms.resize(outputBuffers.size(), 0);
  json::Object rtol;
  for (auto &[k, x] : v->options.rtol)
    rtol[k] = x;
  v->requestTemplate = json::Object{
      {P::kFormat, P::kRequestFormat},
      {P::kMode, P::kModeEvaluate},
      {P::kDevice, options.device},
      {P::kBuffers, std::move(layout->buffers)},
      {P::kTrials, std::move(trials)},
      {P::kRtol, std::move(rtol)},
      {P::kTiming, json::Object{{P::kEnabled, options.timing},
                                {P::kWarmup, options.warmup},
                                {P::kRuns, options.runs},
                                {P::kRepeats, options.repeats},
                                {P::kFlushBytes, static_cast<int64_t>(options.flushBytes)},
                                {P::kCheckLaunches, options.checkLaunches},
                                {P::kCheckFraction, options.checkFraction},
                                {P::kMinChecked, options.minChecked},
                                {P::kInputs, maker.trialJson(v->timingInputs, timingExpected)}}}};
  v->oracle = std::move(*oracle);
  return v;
}

void FunctionVerifier::arbitrate(CandidateOutcome &outcome) const {
  const json::Array *list = outcome.result.getArray(P::kDisputed);
  if (outcome.verdict != Verdict::Invalid || !list || list->empty() || !oracle)
    return;
  // Where an element was found: a trial (its index), or a timing input set (set A: -1, set B
  // with its seed: -2). Items are arbitrated on those inputs, regenerated from their seeds.
  struct Item {
    int64_t source;
    unsigned output;
    uint64_t index;
    double got, ref;
  };
  std::vector<Item> items;
  std::optional<uint64_t> seedB;
  const size_t sources = trialInputs.size() + 2;
  for (const json::Value &e : *list) {
    const json::Object *o = e.getAsObject();
    std::optional<int64_t> t = o ? o->getInteger(P::kTrial) : std::nullopt;
    std::optional<int64_t> set = o ? o->getInteger(P::kTimingSet) : std::nullopt;
    std::optional<int64_t> r = o ? o->getInteger(P::kOutput) : std::nullopt;
    std::optional<int64_t> i = o ? o->getInteger(P::kIndex) : std::nullopt;
    std::optional<double> got = o ? o->getNumber(P::kGot) : std::nullopt;
    std::optional<double> ref = o ? o->getNumber(P::kRef) : std::nullopt;
    // Exactly one of trial and timing_set; a timing set's seed is the verifier's own (set A) or
    // one seed for every item (set B).
    std::optional<int64_t> source;
    if (t && !set && *t >= 0 && size_t(*t) < trialInputs.size()) {
      source = *t;
    } else if (set && !t && (*set == 0 || *set == 1)) {
      const json::Value *sv = o->get(P::kSeed);
      std::optional<uint64_t> seed = sv ? sv->getAsUINT64() : std::nullopt;
      if (seed && *set == 0 && *seed == timingInputs.seed)
        source = -1;
      if (seed && *set == 1 && *seed != timingInputs.seed && (!seedB || *seedB == *seed)) {
        seedB = *seed;
        source = -2;
      }
    }
    if (!source || !r || !i || !got || !ref || *r < 0 || size_t(*r) >= outputNames.size() ||
        *i < 0 || uint64_t(*i) >= oracle->getResultNumElements(*r) || !std::isfinite(*got) ||
        !std::isfinite(*ref) || items.size() >= P::kMaxDisputed * sources * outputNames.size())
      return; // not a list this verifier's worker makes: the verdict stands
    items.push_back({*source, unsigned(*r), uint64_t(*i), *got, *ref});
  }
  llvm::stable_sort(items, [](const Item &a, const Item &b) { return a.source < b.source; });
  // Set B: the timing inputs' distributions with B's seed (as the worker fills it).
  TrialInputs timingB;
  if (seedB) {
    timingB = timingInputs;
    timingB.seed = *seedB;
    for (contract::FillParams &f : timingB.fills)
      f.seed = *seedB;
  }
  double worstCandidate = 0, worstReference = 0;
  for (size_t k = 0; k < items.size();) {
    const int64_t src = items[k].source;
    const TrialInputs &inputs = src >= 0 ? trialInputs[src] : src == -1 ? timingInputs : timingB;
    const std::vector<double> &rms = src >= 0 ? sampleRms[src] : timingSampleRms;
    std::string where = src >= 0 ? "trial " + std::to_string(src)
                        : src == -1 ? std::string("timing inputs")
                                    : std::string("timing inputs B");
    Oracle::Session s = oracle->session([&](unsigned arg, uint64_t index) {
      return generatedValue(inputs.fills[inputBuffers[arg]], index);
    });
    for (; k < items.size() && items[k].source == src; ++k) {
      const Item &it = items[k];
      double want = s.valueAt(it.output, it.index);
      double errCandidate = std::fabs(it.got - want), errReference = std::fabs(it.ref - want);
      double tol = outputRtol[it.output] * (std::fabs(want) + rms[it.output]) +
                   outputQuantum[it.output];
      if (!std::isfinite(want) || !(errCandidate <= std::max(errReference, tol))) {
        outcome.reason = llvm::formatv("'{0}'[{1}] = {2} but the oracle says {3} (the reference "
                                       "gives {4}: the candidate is further from it; {5})",
                                       outputNames[it.output], it.index, it.got, want, it.ref, where)
                             .str();
        outcome.result[P::kReason] = outcome.reason;
        return;
      }
      worstCandidate = std::max(worstCandidate, errCandidate);
      worstReference = std::max(worstReference, errReference);
    }
  }
  // Every disputed element: the candidate is at least as close to the oracle as the reference.
  outcome.verdict = Verdict::Valid;
  outcome.result[P::kArbitrated] =
      json::Object{{"elements", static_cast<int64_t>(items.size())},
                   {"why", outcome.reason},
                   {"max_candidate_err", worstCandidate},
                   {"max_reference_err", worstReference}};
  outcome.reason.clear();
  outcome.result[P::kVerdict] = P::kVerdictValid;
  outcome.result[P::kReason] = "";
}

uint64_t FunctionVerifier::getNumChecked() const { return numChecked; }

llvm::Expected<std::vector<VariantReport>>
FunctionVerifier::evaluate(ArrayRef<Variant> variants, const Ceilings *ceilings) const {
  llvm::SmallString<128> dir;
  if (std::error_code ec = llvm::sys::fs::createUniqueDirectory("evo-verify", dir))
    return llvm::errorCodeToError(ec);
  struct RemoveDir {
    std::string path;
    ~RemoveDir() { llvm::sys::fs::remove_directories(path, /*IgnoreErrors=*/true); }
  } cleanup{dir.str().str()};
  json::Array candidates;
  for (auto [i, var] : llvm::enumerate(variants)) {
    llvm::SmallString<128> ptx(dir);
    llvm::sys::path::append(ptx, "variant" + std::to_string(i) + ".ptx");
    {
      std::error_code ec;
      llvm::raw_fd_ostream os(ptx, ec);
      if (ec)
        return llvm::errorCodeToError(ec);
      os << var.ptx;
    }
    candidates.push_back(json::Object{{P::kId, var.id},
                                      {P::kPtxFile, ptx.str().str()},
                                      {P::kReference, var.reference},
                                      {P::kTimeIt, var.timeIt},
                                      {P::kScratch, var.scratch},
                                      {P::kLaunches, json::Array(var.launches)}});
  }
  json::Object request = requestTemplate;
  request[P::kCandidates] = std::move(candidates);
  WorkerOptions worker = options.worker;
  if (worker.workDir.empty())
    worker.workDir = dir.str().str();
  llvm::Expected<EvaluationRun> run = evaluateCandidates(request, worker);
  if (!run)
    return run.takeError();
  std::vector<VariantReport> reports;
  for (CandidateOutcome &o : run->outcomes) {
    arbitrate(o);
    VariantReport r;
    r.id = o.id;
    r.verdict = o.verdict;
    r.reason = o.reason;
    r.result = std::move(o.result);
    r.seed = seed;
    r.cost = cost;
    if (const json::Object *timing = r.result.getObject(P::kTiming)) {
      r.medianMs = timing->getNumber(P::kMedianMs).value_or(0);
      if (ceilings && r.verdict == Verdict::Valid) {
        r.roofline = judge(cost, *ceilings, r.medianMs, options.floorSlack);
        if (r.roofline->belowFloor) {
          r.verdict = Verdict::Invalid;
          r.reason = llvm::formatv("measured {0:f4} ms is below the roofline floor of {1:f4} ms "
                                   "({2:f0} bytes read at {3:f0} GB/s, {4:f0} written at {5:f0} "
                                   "GB/s, {6:f0} flop): a measurement or correctness bug, not a "
                                   "speedup",
                                   r.medianMs, r.roofline->floorMs, cost.readBytes,
                                   ceilings->readGBps, cost.writeBytes, ceilings->writeGBps,
                                   cost.flops)
                         .str();
        }
      }
    }
    reports.push_back(std::move(r));
  }
  // Every timed variant was compared with the reference's run on the timing inputs: each report
  // says which inputs those were (the worker reports them once, with the reference).
  const json::Object *timingInputs = nullptr;
  for (const VariantReport &r : reports)
    if (const json::Object *t = r.result.getObject("timing_inputs"))
      timingInputs = t;
  if (timingInputs) {
    json::Object shared = *timingInputs;
    for (VariantReport &r : reports)
      if (r.result.getObject(P::kTiming) && !r.result.getObject("timing_inputs"))
        r.result["timing_inputs"] = json::Object(shared);
  }
  return reports;
}

//===----------------------------------------------------------------------===//
// verifyFunction
//===----------------------------------------------------------------------===//

llvm::Expected<VariantReport> verifyFunction(const LaunchPlan &plan, StringRef kernelPtx,
                                             MLIRContext *ctx, Location loc,
                                             const VerifyOptions &opts, const PTXOptions &ptx,
                                             const Ceilings *ceilings) {
  FailureOr<std::unique_ptr<FunctionVerifier>> verifier =
      FunctionVerifier::create(plan, ctx, loc, opts);
  if (failed(verifier))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the verifier of '" + plan.funcName +
                                       "' cannot be prepared (see the diagnostics)");
  Variant kernels{plan.funcName, kernelPtx.str(), plan.launches, /*reference=*/false};
  std::vector<Variant> variants;
  llvm::Expected<Variant> baseline = naiveBaseline(plan, ctx->getDialectRegistry(), ptx);
  bool withBaseline = static_cast<bool>(baseline);
  if (baseline) {
    variants.push_back(std::move(*baseline));
  } else if ((*verifier)->checksAllElements()) {
    // The oracle checks every element: the kernels can stand on their own.
    llvm::consumeError(baseline.takeError());
    kernels.reference = true;
  } else {
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "cannot build the naive baseline that every output element of '" + plan.funcName +
            "' is compared with: " + llvm::toString(baseline.takeError()));
  }
  variants.push_back(std::move(kernels));
  llvm::Expected<std::vector<VariantReport>> reports = (*verifier)->evaluate(variants, ceilings);
  if (!reports)
    return reports.takeError();
  VariantReport r = std::move(reports->back());
  r.checkedPerTrial = (*verifier)->getNumChecked();
  r.baselineReference = withBaseline;
  for (const TrialInputs &t : (*verifier)->getTrialInputs())
    r.trialInputs.push_back(llvm::join(t.descriptions, "; "));
  return r;
}

} // namespace evo
