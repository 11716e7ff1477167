//===- Verifier.cpp - differential execution of a function's kernels ----------===//

#include "evo/Evaluation/Verifier.h"
#include "evo/Evaluation/InputGenerator.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/raw_ostream.h"
#include <cmath>
#include <random>

using namespace mlir;
namespace json = llvm::json;

namespace evo {

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

static json::Value numberOrString(double v) {
  if (std::isnan(v))
    return "nan";
  if (std::isinf(v))
    return v > 0 ? "inf" : "-inf";
  return v;
}

json::Object VariantReport::toJson() const {
  json::Object o{{"id", id}, {"verdict", stringifyVerdict(verdict)}, {"reason", reason}};
  if (const json::Array *t = result.getArray("trials"))
    o["trials"] = json::Array(*t);
  if (const json::Object *t = result.getObject("timing"))
    o["timing"] = json::Object(*t);
  if (roofline)
    o["roofline"] = roofline->toJson();
  return o;
}

FailureOr<std::unique_ptr<FunctionVerifier>>
FunctionVerifier::create(const LaunchPlan &plan, MLIRContext *ctx, Location loc,
                         const VerifyOptions &options) {
  std::unique_ptr<FunctionVerifier> v(new FunctionVerifier());
  v->plan = plan;
  v->options = options;
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

  // Buffers: inputs carry their ranges; the generator's stream index is the buffer index.
  json::Array buffers;
  SmallVector<unsigned> inputBuffers, outputBuffers;
  SmallVector<ElementKind> kinds;
  SmallVector<InputRange> bufferRanges(plan.buffers.size());
  for (auto [i, b] : llvm::enumerate(plan.buffers)) {
    ElementKind kind = elementKindOf(b.type.getElementType());
    if (kind == ElementKind::Unsupported)
      return emitError(loc) << "evo-verify: buffer '" << b.name << "' has element type "
                            << b.type.getElementType() << ", which the verifier cannot fill";
    kinds.push_back(kind);
    json::Object o{{"name", b.name},
                   {"role", stringifyBufferRole(b.role)},
                   {"kind", elementKindName(kind)},
                   {"elements", b.type.getNumElements()},
                   {"zero_init", b.zeroInit}};
    if (b.role == BufferRole::Input) {
      InputRange r = (*ranges)[inputBuffers.size()];
      o["range"] = json::Array{r.lo, r.hi};
      bufferRanges[i] = r;
      inputBuffers.push_back(i);
    } else if (b.role == BufferRole::Output) {
      outputBuffers.push_back(i);
    }
    buffers.push_back(std::move(o));
  }
  if (outputBuffers.size() != (*oracle)->getNumResults())
    return emitError(loc) << "evo-verify: the plan of '" << plan.funcName << "' has "
                          << outputBuffers.size() << " outputs but its source returns "
                          << (*oracle)->getNumResults();

  // Which elements to check, per output: all when cheap, else a budgeted sample.
  SmallVector<std::vector<uint64_t>> indices;
  for (unsigned r = 0; r < outputBuffers.size(); ++r) {
    uint64_t n = (*oracle)->getResultNumElements(r);
    uint64_t count = n;
    if ((*oracle)->costOfAllElements(r) > options.fullCheckLimit) {
      double per = std::max(1.0, (*oracle)->costPerElement(r));
      count = std::clamp<uint64_t>(static_cast<uint64_t>(options.oracleBudget / per), 64,
                                   options.maxSamples);
    }
    indices.push_back(chooseSamples(n, count, options.seed + r));
    v->numChecked += indices.back().size();
  }

  // The oracle's values per trial, computed in parallel (sessions are independent).
  std::vector<std::vector<std::vector<double>>> expected(options.trials);
  llvm::DefaultThreadPool pool(llvm::hardware_concurrency());
  const Oracle &o = **oracle;
  for (unsigned t = 0; t < options.trials; ++t)
    pool.async([&, t] {
      uint64_t seed = options.seed + t;
      Oracle::Session s = o.session([&](unsigned arg, uint64_t index) {
        unsigned buf = inputBuffers[arg];
        return generatedValue(seed, buf, index, kinds[buf], bufferRanges[buf]);
      });
      expected[t].resize(outputBuffers.size());
      for (unsigned r = 0; r < outputBuffers.size(); ++r)
        for (uint64_t i : indices[r])
          expected[t][r].push_back(s.valueAt(r, i));
    });
  pool.wait();

  json::Array trials;
  for (unsigned t = 0; t < options.trials; ++t) {
    json::Array samples;
    for (unsigned r = 0; r < outputBuffers.size(); ++r) {
      json::Array idx, vals;
      for (uint64_t i : indices[r])
        idx.push_back(static_cast<int64_t>(i));
      for (double x : expected[t][r])
        vals.push_back(numberOrString(x));
      samples.push_back(json::Object{{"buffer", static_cast<int64_t>(outputBuffers[r])},
                                     {"indices", std::move(idx)},
                                     {"expected", std::move(vals)}});
    }
    trials.push_back(json::Object{{"seed", static_cast<int64_t>(options.seed + t)},
                                  {"samples", std::move(samples)}});
  }
  json::Object rtol;
  for (auto &[k, x] : options.rtol)
    rtol[k] = x;
  v->requestTemplate = json::Object{
      {"format", "evo-eval-request/1"},
      {"mode", "evaluate"},
      {"device", options.device},
      {"buffers", std::move(buffers)},
      {"trials", std::move(trials)},
      {"rtol", std::move(rtol)},
      {"timing", json::Object{{"enabled", options.timing},
                              {"warmup", options.warmup},
                              {"runs", options.runs},
                              {"repeats", options.repeats},
                              {"flush_bytes", static_cast<int64_t>(options.flushBytes)}}}};
  return v;
}

uint64_t FunctionVerifier::getNumChecked() const { return numChecked; }

llvm::Expected<std::vector<VariantReport>>
FunctionVerifier::evaluate(ArrayRef<Variant> variants, const Ceilings *ceilings) const {
  llvm::SmallString<128> dir;
  if (std::error_code ec = llvm::sys::fs::createUniqueDirectory("evo-verify", dir))
    return llvm::errorCodeToError(ec);
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
    json::Array launches;
    for (const KernelLaunch &l : var.launches) {
      json::Array args;
      for (unsigned a : l.args)
        args.push_back(static_cast<int64_t>(a));
      launches.push_back(json::Object{{"kernel", l.kernel},
                                      {"grid", json::Array{l.grid[0], l.grid[1], l.grid[2]}},
                                      {"block", json::Array{l.block[0], l.block[1], l.block[2]}},
                                      {"dynamic_shared_memory", l.dynamicSharedMemory},
                                      {"args", std::move(args)}});
    }
    candidates.push_back(json::Object{{"id", var.id},
                                      {"ptx_file", ptx.str().str()},
                                      {"reference", var.reference},
                                      {"launches", std::move(launches)}});
  }
  json::Object request = requestTemplate;
  request["candidates"] = std::move(candidates);
  WorkerOptions worker = options.worker;
  if (worker.workDir.empty())
    worker.workDir = dir.str().str();
  llvm::Expected<EvaluationRun> run = evaluateCandidates(request, worker);
  if (!run)
    return run.takeError();
  std::vector<VariantReport> reports;
  for (CandidateOutcome &o : run->outcomes) {
    VariantReport r;
    r.id = o.id;
    r.verdict = o.verdict;
    r.reason = o.reason;
    r.result = std::move(o.result);
    if (const json::Object *timing = r.result.getObject("timing")) {
      r.medianMs = timing->getNumber("median_ms").value_or(0);
      if (ceilings && r.verdict == Verdict::Valid) {
        r.roofline = judge(cost, *ceilings, r.medianMs, options.floorSlack);
        if (r.roofline->belowFloor) {
          r.verdict = Verdict::Invalid;
          r.reason = llvm::formatv("measured {0:f4} ms is below the roofline floor of {1:f4} ms "
                                   "({2:f0} bytes at {3:f0} GB/s, {4:f0} flop): a measurement or "
                                   "correctness bug, not a speedup",
                                   r.medianMs, r.roofline->floorMs, cost.bytes,
                                   ceilings->copyGBps, cost.flops)
                         .str();
        }
      }
    }
    reports.push_back(std::move(r));
  }
  llvm::sys::fs::remove_directories(dir);
  return reports;
}

} // namespace evo
