//===- EvolvePass.cpp - the evo-evolve pass ------------------------------------===//
//
// A thin pass around the search library: it validates its options and translates them into
// the library's settings, opens the run (RunSetup.cpp), sets up the LLM (LLMSetup.cpp), runs a
// TaskSearch per task not finished yet (or rebuilds a finished task's winner on the CPU),
// splices the winners (Splice.cpp), verifies the emitted module once more (FinalCheck.cpp) and
// writes the reports. A pause (LLM prompts waiting in a mailbox) is the pass's result, not an
// error: the module is marked with kEvolvePausedAttrName before the pass fails, and a driver
// tells the two apart with createPausedObserver (Passes.h). docs/evolution.md.
//
//===----------------------------------------------------------------------===//

#include "EvolveSteps.h"
#include "evo/Evaluation/LaunchSelection.h"
#include "evo/Evaluation/Roofline.h"
#include "evo/Evolution/Finalists.h"
#include "evo/Evolution/Passes.h"
#include "evo/Runtime/CudaDriver.h"
#include "evo/Target/Chips.h"
#include "evo/Target/Manifest.h"
#include "evo/Target/PTXAssembler.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace evo {
#define GEN_PASS_DEF_EVOEVOLVEPASS
#include "evo/Evolution/Passes.h.inc"
} // namespace evo

#define DEBUG_TYPE "evo-evolve"

using namespace mlir;
namespace json = llvm::json;

namespace evo {
namespace {
/// Reads evo-evolve's result after a failed pass: a module marked paused is a checkpoint.
struct PausedObserver final : PassInstrumentation {
  explicit PausedObserver(bool &paused) : paused(paused) {}
  void runAfterPassFailed(Pass *, Operation *op) override {
    if (op && op->hasAttr(kEvolvePausedAttrName))
      paused = true;
  }
  bool &paused;
};
} // namespace

std::unique_ptr<PassInstrumentation> createPausedObserver(bool &paused) {
  return std::make_unique<PausedObserver>(paused);
}
} // namespace evo

namespace {
/// Tests only: whether `worker` is the test suite's stand-in worker (unittests' evo-fake-worker:
/// it needs no GPU, so there is no driver check and no roofline; its verdicts and times are
/// whatever it reports). Honoured only by a build with the tests (EVO_TEST_HOOKS), and only for
/// the executable EVO_TEST_STAND_IN_WORKER names, which the lit configuration sets: a
/// production evo-opt never trusts a worker this way.
bool isStandInWorker(StringRef worker) {
#ifdef EVO_TEST_HOOKS
  const char *standIn = std::getenv("EVO_TEST_STAND_IN_WORKER");
  return standIn && *standIn && !worker.empty() && llvm::sys::fs::equivalent(standIn, worker);
#else
  (void)worker;
  return false;
#endif
}

class EvolveDriver;

struct EvoEvolvePass final : evo::impl::EvoEvolvePassBase<EvoEvolvePass> {
  using Base::Base;
  void runOnOperation() override;
  friend class EvolveDriver; // reads the options

  /// The search settings that must match for `resume` to continue a run.
  std::string configJson() const {
    json::Object o;
    o["strategy"] = evo::stringifySearchStrategy(strategy);
    o["population"] = static_cast<int64_t>(population);
    o["samples"] = static_cast<int64_t>(samples);
    o["generations"] = static_cast<int64_t>(generations);
    o["islands"] = static_cast<int64_t>(islands);
    o["max_candidates"] = static_cast<int64_t>(maxCandidates);
    o["seed"] = static_cast<int64_t>(seed);
    if (verifySeed) // a chosen one is part of the configuration; a drawn one is in meta
      o["verify_seed"] = std::to_string(verifySeed);
    o["trials"] = static_cast<int64_t>(trials);
    o["runs"] = static_cast<int64_t>(runs);
    o["chip"] = std::string(chip);
    o["features"] = std::string(features);
    if (!std::string(llm).empty()) {
      // A cmd: spec is recorded as its program and a hash of its arguments: arguments are not
      // stored (keys belong in the environment, but a user may still pass one there).
      StringRef spec = llm;
      std::string shown = spec.str();
      if (spec.starts_with("cmd:")) {
        auto [prog, args] = spec.drop_front(4).trim().split(' ');
        shown = "cmd:" + prog.str() + (args.empty() ? "" : " (args sha256 " +
                                                               evo::sha256Hex(args).substr(0, 12) +
                                                               ")");
      }
      o["llm"] = shown;
      o["llm_model"] = std::string(llmModel);
      o["llm_base_url"] = std::string(llmBaseUrl);
      o["llm_temperature"] = static_cast<double>(llmTemperature);
      o["llm_max_tokens"] = static_cast<int64_t>(llmMaxTokens);
      o["llm_mix"] = static_cast<double>(llmMix);
      o["llm_repairs"] = static_cast<int64_t>(llmRepairs);
    }
    return llvm::formatv("{0}", json::Value(std::move(o))).str();
  }
};

/// One run of the pass: its state, and the steps in order.
class EvolveDriver {
public:
  enum class Result { Done, Failed, Paused };
  EvolveDriver(EvoEvolvePass &pass, ModuleOp module)
      : p(pass), module(module), ctx(module.getContext()),
        standIn(isStandInWorker(pass.worker)) {}
  Result run();
  unsigned pausedPrompts() const { return paused; }

private:
  LogicalResult validate();
  LogicalResult gpuAndWorker();
  LogicalResult ensureWorker();
  evo::LLMSetupOptions llmOptions() const;
  LogicalResult searchOptions();
  llvm::Expected<evo::TaskResult> taskResult(gpu::GPUModuleOp gm, const evo::TaskDesc &desc,
                                             const evo::TaskInput &input);
  LogicalResult evolveModule(gpu::GPUModuleOp gm);
  void remarkTask(gpu::GPUModuleOp gm, const evo::TaskDesc &desc, const evo::TaskResult &r);
  LogicalResult finish();

  EvoEvolvePass &p;
  ModuleOp module;
  MLIRContext *ctx;
  bool standIn;
  SmallVector<gpu::GPUModuleOp> targets;
  /// shard=I/N (or a Slurm array element): this run's share of the tasks (Shard.h).
  std::optional<evo::ShardPlan> shard;
  bool mine(StringRef task) const { return !shard || shard->ownsTask(task); }
  std::optional<evo::SearchStrategy> llmStrategy; // set for the LLM strategies
  std::string workerPath;
  evo::OpenedRun opened;
  std::unique_ptr<evo::LLMRun> llmRun;
  evo::EvolveOptions opts;
  std::optional<evo::Ceilings> ceilings;
  bool workerReady = false;
  std::unique_ptr<evo::ProgressLine> progress;
  unsigned paused = 0;
  /// run-time-budget: when the run started, and the tasks still to search.
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  unsigned tasksLeft = 0;
  /// Each task's source, parsed once (the search and the final check use it).
  std::vector<OwningOpRef<ModuleOp>> sources;
  llvm::DenseMap<Operation *, SmallVector<evo::SplicedTask>> spliced;
};
} // namespace

LogicalResult EvolveDriver::validate() {
  Location loc = module.getLoc();
  for (auto gm : module.getOps<gpu::GPUModuleOp>())
    if (gm->hasAttr(evo::kPlanAttrName))
      targets.push_back(gm);
  if (targets.empty())
    return emitError(loc, "evo-evolve: no gpu.module with an evo.plan; run evo-lower-to-gpu first");
  // An enum option: llvm::cl already refused names that are not strategies.
  StringRef strategy = evo::stringifySearchStrategy(p.strategy);
  if (evo::isLLMStrategy(p.strategy))
    llmStrategy = p.strategy;
  if (llmStrategy && p.llm.empty())
    return emitError(loc) << "evo-evolve: strategy=" << strategy
                          << " asks an LLM: set llm=openai, llm=anthropic or llm=cmd:<program>";
  if (!llmStrategy && !p.llm.empty())
    return emitError(loc) << "evo-evolve: llm=" << p.llm << " is used by the LLM strategies "
                          << "(free, insight, full, eoh, funsearch), not strategy=" << strategy;
  if (p.llmMix < 0 || p.llmMix > 1)
    return emitError(loc) << "evo-evolve: llm-mix must be in [0, 1], got " << p.llmMix;
  for (auto [name, v] : {std::pair<StringRef, double>{"time-budget", p.timeBudget},
                         {"run-time-budget", p.runTimeBudget}})
    if (!(v >= 0) || std::isinf(v))
      return emitError(loc) << "evo-evolve: " << name
                            << " must be a number of seconds >= 0 (0: no limit), got " << v;
  if (p.llmMaxTokens <= 0)
    return emitError(loc) << "evo-evolve: llm-max-tokens must be > 0, got " << p.llmMaxTokens;
  // A chip or PTX version NVPTX cannot serve fails here, not at every compile of the search.
  if (llvm::Error e = evo::checkChip(p.chip, p.features))
    return emitError(loc) << "evo-evolve: " << llvm::toString(std::move(e));
  return success();
}

/// Without a store there is work for the GPU: checked before anything is created on disk.
LogicalResult EvolveDriver::gpuAndWorker() {
  std::string why;
  if (!evo::cuda::Driver::get(&why))
    return emitError(module.getLoc()) << "evo-evolve: no GPU to run on: " << why;
  llvm::Expected<std::string> w = evo::findWorker(p.worker);
  if (!w)
    return emitError(module.getLoc()) << "evo-evolve: " << llvm::toString(w.takeError());
  workerPath = *w;
  return success();
}

/// The worker (and the device's ceilings): for the search, and for the final check of a module
/// not verified yet.
LogicalResult EvolveDriver::ensureWorker() {
  if (workerReady)
    return success();
  if (standIn) {
    opts.verify.worker.workerPath = p.worker;
  } else {
    if (workerPath.empty() && failed(gpuAndWorker()))
      return failure();
    opts.verify.worker.workerPath = workerPath;
    llvm::Expected<evo::Ceilings> c = evo::deviceCeilings(opts.verify.worker, p.device);
    if (!c)
      return emitError(module.getLoc()) << "evo-evolve: " << llvm::toString(c.takeError());
    ceilings = *c;
    if (llmRun)
      llmRun->settings.gpuName = c->device;
    if (llvm::Error e = opened.store->setMeta("device", c->device))
      return emitError(module.getLoc()) << llvm::toString(std::move(e));
  }
  workerReady = true;
  return success();
}

evo::LLMSetupOptions EvolveDriver::llmOptions() const {
  evo::LLMSetupOptions o;
  o.settings.strategy = *llmStrategy;
  o.backend.spec = p.llm;
  o.backend.model = p.llmModel;
  o.backend.baseUrl = p.llmBaseUrl;
  o.backend.keyEnv = p.llmKeyEnv;
  o.backend.waitSeconds = p.llmWait;
  o.prices = p.llmPrices;
  o.prompts = p.llmPrompts;
  o.client.timeoutSeconds = p.llmTimeout;
  o.client.maxRetries = p.llmRetries;
  o.client.parallel = std::max(1u, static_cast<unsigned>(p.llmParallel));
  o.client.maxCalls = p.llmMaxCalls;
  o.client.maxTokens = p.llmMaxTotalTokens;
  o.client.maxCost = p.llmMaxCost;
  // A replay answers from the replayed run's cache and never calls the backend.
  o.client.cacheDir = !p.llmCache.empty() ? std::string(p.llmCache)
                      : opened.replay     ? p.replayRun + "/llm-cache"
                                          : p.runDir + "/llm-cache";
  o.client.replay = p.llmReplay || opened.replay;
  o.client.seed = p.seed;
  o.settings.temperature = p.llmTemperature;
  o.settings.maxTokens = p.llmMaxTokens;
  o.settings.repairs = p.llmRepairs;
  o.settings.mix = p.llmMix;
  o.settings.chip = p.chip;
  return o;
}

/// The search's settings from the pass's options.
LogicalResult EvolveDriver::searchOptions() {
  opts.strategy = p.strategy;
  if (llmStrategy) {
    // The population mechanics of each method: Free and Insight improve the single best, Full
    // and EoH keep an elitist population, FunSearch runs islands (5 unless set).
    opts.strategy = *llmStrategy == evo::SearchStrategy::FunSearch ? evo::SearchStrategy::Islands
                    : (*llmStrategy == evo::SearchStrategy::Free ||
                       *llmStrategy == evo::SearchStrategy::Insight)
                        ? evo::SearchStrategy::SingleBest
                        : evo::SearchStrategy::Evo;
    opts.llm = &llmRun->settings;
  }
  opts.population = p.population;
  opts.samples = p.samples;
  opts.generations = p.generations;
  opts.islands =
      llmStrategy == evo::SearchStrategy::FunSearch && p.islands.getNumOccurrences() == 0
          ? 5u
          : static_cast<unsigned>(p.islands);
  opts.migrateEvery = p.migrateEvery;
  opts.maxCandidates = p.maxCandidates;
  opts.timeBudgetSeconds = p.timeBudget;
  opts.keepWork = p.keepWork;
  opts.seed = p.seed;
  opts.finalists = p.finalists;
  opts.finalRounds = p.finalRounds;
  opts.finalRuns = p.finalRuns;
  opts.compileThreads = p.compileThreads;
  opts.quiet = p.quiet;
  opts.replay = opened.replay.get();
  opts.ptx.chip = p.chip;
  opts.ptx.features = p.features;
  opts.verify.trials = p.trials;
  // The verifier's inputs: the user's seed, else one drawn from OS entropy for this run, stored
  // so that a resumed run draws the same ones.
  FailureOr<uint64_t> vs = evo::verifierSeed(module.getLoc(), *opened.store, p.verifySeed);
  if (failed(vs))
    return failure();
  opts.verify.seed = *vs;
  opts.verify.runs = p.runs;
  opts.verify.warmup = p.warmup;
  opts.verify.repeats = 1;
  opts.verify.device = p.device;
  opts.verify.worker.candidateTimeoutSeconds = p.timeout;
  if (llvm::Expected<std::optional<std::string>> x = evo::findPtxas(p.ptxas); x && *x)
    opts.ptxasPath = **x;
  else if (!x)
    return emitError(module.getLoc()) << "evo-evolve: " << llvm::toString(x.takeError());
  return success();
}

/// The task's winner: rebuilt on the CPU when an earlier run finished the task, else searched.
llvm::Expected<evo::TaskResult> EvolveDriver::taskResult(gpu::GPUModuleOp gm,
                                                         const evo::TaskDesc &desc,
                                                         const evo::TaskInput &input) {
  evo::RunStore &store = *opened.store;
  std::optional<evo::TaskRecord> done = store.getTask(desc.name);
  if (!done || done->status != "done") {
    // run-time-budget: this task's share of what is left, within time-budget. A task whose
    // share is spent still measures its baseline and keeps it (the search proposes nothing).
    evo::EvolveOptions o = opts;
    if (p.runTimeBudget > 0 && !opened.replay) {
      double left = p.runTimeBudget - std::chrono::duration<double>(
                                          std::chrono::steady_clock::now() - started)
                                          .count();
      double share = std::max(left, 0.0) / std::max(1u, tasksLeft);
      share = std::max(share, 1e-9); // 0 would mean "no limit"
      o.timeBudgetSeconds = o.timeBudgetSeconds > 0 ? std::min(o.timeBudgetSeconds, share) : share;
    }
    tasksLeft -= tasksLeft > 0;
    return evo::evolveTask(input, ctx, store, o, ceilings ? &*ceilings : nullptr, *progress);
  }
  std::optional<evo::CandidateRecord> best = store.getCandidate(done->bestId);
  std::optional<evo::CandidateRecord> base = store.getCandidate(done->baselineId);
  llvm::Expected<evo::CompiledVariant> v =
      best ? evo::rebuildCandidate(store, best->id, ctx->getDialectRegistry(), desc.source,
                                   desc.family, opts.ptx, "")
           : llvm::createStringError(llvm::inconvertibleErrorCode(), "it is not stored");
  if (!v)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the stored winner of '" + desc.name +
                                       "' cannot be rebuilt: " + llvm::toString(v.takeError()));
  evo::TaskResult r;
  r.task = desc.name;
  r.bestId = best->id;
  r.firstBestId = store.oldestWithSamePtx(desc.name, *best);
  r.baselineId = done->baselineId;
  r.bestMs = evo::finalTime(*best);
  r.baselineMs = base ? evo::finalTime(*base) : NAN;
  r.bestIr = v->ir;
  r.bestLaunches = v->launches;
  r.bestScratch = v->scratch;
  r.bestKnobs = best->knobs;
  return r;
}

void EvolveDriver::remarkTask(gpu::GPUModuleOp gm, const evo::TaskDesc &desc,
                              const evo::TaskResult &r) {
  double speedup = r.bestMs > 0 ? r.baselineMs / r.bestMs : 1.0;
  emitRemark(gm.getLoc()) << llvm::formatv("evo-evolve: {0}: {1:f4} ms -> {2:f4} ms ({3:f2}x), "
                                           "{4} candidates evaluated, {5} valid",
                                           desc.name, r.baselineMs, r.bestMs, speedup,
                                           r.evaluated, r.valid)
                                 .str();
  if (!opened.replay)
    return;
  unsigned same = r.replayed - r.replayDiffer.size();
  emitRemark(gm.getLoc()) << llvm::formatv(
      "evo-evolve: replay of {0}: {1}: {2} candidates re-created, {3} identical to the "
      "replayed run's (same PTX, or the same verdict without PTX)",
      p.replayRun, desc.name, r.replayed, same);
  if (!r.replayDiffer.empty()) {
    std::string ids;
    for (int64_t id : r.replayDiffer)
      ids += (ids.empty() ? "" : ", ") + std::to_string(id);
    emitWarning(gm.getLoc()) << "evo-evolve: replay of " << p.replayRun << ": " << desc.name
                             << ": these candidates came out differently: " << ids;
  }
}

/// Every task of one function: searched (or rebuilt), spliced; then the plan and the host side
/// follow.
LogicalResult EvolveDriver::evolveModule(gpu::GPUModuleOp gm) {
  FailureOr<evo::LaunchPlan> plan = evo::LaunchPlan::fromModule(gm);
  if (failed(plan))
    return failure();
  Builder b(ctx);
  SmallVector<Attribute> summary;
  for (unsigned t = 0; t < plan->tasks.size(); ++t) {
    evo::TaskDesc &desc = plan->tasks[t];
    if (!mine(desc.name))
      continue; // another shard's
    OwningOpRef<ModuleOp> src = parseSourceString<ModuleOp>(desc.source, ParserConfig(ctx));
    if (!src || src->getOps<func::FuncOp>().empty())
      return gm.emitError() << "evo-evolve: task '" << desc.name << "' has no source";
    func::FuncOp f = *src->getOps<func::FuncOp>().begin();
    sources.push_back(std::move(src));
    unsigned numTaskBuffers = f.getNumArguments() + f.getNumResults();
    // The plan's knobs (verified with the plan) over the defaults.
    evo::TaskInput input{desc.name, plan->funcName, desc.family, desc.source,
                         desc.knobs ? desc.knobs.getKnobs() : evo::ScheduleKnobs(), f};
    llvm::Expected<evo::TaskResult> result = taskResult(gm, desc, input);
    if (!result) {
      llvm::Error rest = llvm::handleErrors(
          result.takeError(), [&](const evo::PausedError &e) { paused += e.pending; });
      if (rest)
        return gm.emitError() << "evo-evolve: " << llvm::toString(std::move(rest));
      continue; // paused: the other tasks may still post their prompts
    }
    if (failed(evo::spliceWinner(gm, *plan, t, *result, numTaskBuffers)))
      return failure();
    spliced[gm.getOperation()].push_back(
        {t, desc.name, desc.source, f, numTaskBuffers, result->bestId, result->baselineId});
    double speedup = result->bestMs > 0 ? result->baselineMs / result->bestMs : 1.0;
    summary.push_back(b.getDictionaryAttr(
        {b.getNamedAttr("task", b.getStringAttr(desc.name)),
         b.getNamedAttr("baseline_ms", b.getF64FloatAttr(result->baselineMs)),
         b.getNamedAttr("best_ms", b.getF64FloatAttr(result->bestMs)),
         b.getNamedAttr("speedup", b.getF64FloatAttr(speedup)),
         b.getNamedAttr("best_candidate", b.getI64IntegerAttr(result->firstBestId))}));
    remarkTask(gm, desc, *result);
  }
  gm->setAttr(evo::kPlanAttrName, plan->toAttr(ctx));
  gm->setAttr("evo.evolved", b.getArrayAttr(summary));
  if (failed(plan->verifyAgainst(gm)))
    return failure();
  // The host side follows the plan.
  if (auto host = module.lookupSymbol<func::FuncOp>(plan->funcName)) {
    OpBuilder ob(host);
    func::FuncOp fresh = evo::buildHostFunction(ob, host.getLoc(), *plan, gm);
    fresh.setVisibility(host.getVisibility());
    host.erase();
  }
  return success();
}

/// The final check of every evolved module (unless paused), the LLM's totals and the reports.
LogicalResult EvolveDriver::finish() {
  evo::RunStore &store = *opened.store;
  if (!paused) {
    evo::FinalCheckSettings fc{store, opts, [&] { return ensureWorker(); },
                               [&]() -> const evo::Ceilings * {
                                 return ceilings ? &*ceilings : nullptr;
                               }};
    bool failedCheck = false;
    for (gpu::GPUModuleOp gm : targets) {
      auto it = spliced.find(gm.getOperation());
      if (it != spliced.end() && failed(evo::finalCheck(gm, it->second, fc)))
        failedCheck = true;
    }
    if (failedCheck) {
      if (llvm::Error e = evo::writeReports(store, p.runDir))
        emitError(module.getLoc()) << "evo-evolve: " << llvm::toString(std::move(e));
      return failure();
    }
  }
  if (llmRun)
    evo::remarkLLMTotals(module.getLoc(), *llmRun->client);
  if (llvm::Error e = evo::writeReports(store, p.runDir))
    return emitError(module.getLoc()) << "evo-evolve: " << llvm::toString(std::move(e));
  return success();
}

EvolveDriver::Result EvolveDriver::run() {
  if (failed(validate()))
    return Result::Failed;
  // The run store: a new run, or `resume` of one made from the same input and configuration.
  std::string inputHash;
  for (gpu::GPUModuleOp gm : targets)
    if (auto plan = evo::LaunchPlan::fromModule(gm); succeeded(plan))
      inputHash += plan->source;
  evo::RunSetupOptions ro{p.runDir, p.resume, p.forceResume, p.replayRun,
                          evo::sha256Hex(inputHash), p.configJson()};
  FailureOr<std::optional<evo::ShardPlan>> sp = evo::planShard(module.getLoc(), p.shard, targets);
  if (failed(sp))
    return Result::Failed;
  shard = std::move(*sp);
  if (shard)
    ro.shard = shard->toMeta();
  FailureOr<evo::OpenedRun> run = evo::openRun(
      module.getLoc(), ro, [&] { return standIn ? success() : gpuAndWorker(); });
  if (failed(run))
    return Result::Failed;
  opened = std::move(*run);
  if (shard)
    evo::selectShard(module.getLoc(), *shard, targets);
  if (llmStrategy) {
    FailureOr<std::unique_ptr<evo::LLMRun>> l = evo::setUpLLM(module.getLoc(), llmOptions());
    if (failed(l))
      return Result::Failed;
    llmRun = std::move(*l);
  }
  if (failed(searchOptions()))
    return Result::Failed;
  // Tasks already done (resume) need no GPU; the others do.
  bool needGpu = false;
  for (gpu::GPUModuleOp gm : targets)
    if (auto plan = evo::LaunchPlan::fromModule(gm); succeeded(plan))
      for (const evo::TaskDesc &t : plan->tasks) {
        if (!mine(t.name))
          continue;
        std::optional<evo::TaskRecord> r = opened.store->getTask(t.name);
        bool toSearch = !r || r->status != "done";
        needGpu |= toSearch;
        tasksLeft += toSearch;
      }
  if (needGpu && failed(ensureWorker()))
    return Result::Failed;
  progress = std::make_unique<evo::ProgressLine>(p.quiet);
  for (gpu::GPUModuleOp gm : targets)
    if (failed(evolveModule(gm)))
      return Result::Failed;
  if (failed(finish()))
    return Result::Failed;
  if (!paused)
    return Result::Done;
  // Not an error of the input: a checkpoint. No output is written; evo-opt exits with 75.
  StringRef dir = StringRef(p.llm).drop_front(strlen("mailbox:")).trim();
  llvm::errs() << "evo-evolve: paused: " << paused << " LLM prompt(s) wait in " << dir
               << "/pending; answer them (e.g. evo-opt llm-relay " << dir
               << " --llm=...) and run again with resume=true\n";
  return Result::Paused;
}

void EvoEvolvePass::runOnOperation() {
  ModuleOp module = getOperation();
  EvolveDriver driver(*this, module);
  EvolveDriver::Result r = driver.run();
  if (r == EvolveDriver::Result::Done)
    return;
  if (r == EvolveDriver::Result::Paused)
    module->setAttr(evo::kEvolvePausedAttrName,
                    Builder(&getContext()).getI64IntegerAttr(driver.pausedPrompts()));
  signalPassFailure();
}
