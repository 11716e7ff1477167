//===- EvolvePass.cpp - the evo-evolve pass ------------------------------------===//
//
// A thin pass around the search library: it validates its options and translates them into
// the library's settings, opens the run (RunSetup.cpp), sets up the LLM (LLMSetup.cpp), runs a
// TaskSearch per task not finished yet on the run's GPUs (Devices.cpp) or rebuilds a finished
// task's winner on the CPU, splices the winners (Splice.cpp), verifies the emitted module once
// more (FinalCheck.cpp) and writes the reports. A pause (LLM prompts waiting in a mailbox) is
// the pass's result, not an error: the module is marked with kEvolvePausedAttrName before the
// pass fails, and a driver tells the two apart with createPausedObserver (Passes.h).
// docs/evolution.md.
//
//===----------------------------------------------------------------------===//

#include "EvolveSteps.h"
#include "evo/Evaluation/LaunchSelection.h"
#include "evo/Evaluation/Roofline.h"
#include "evo/Evolution/Finalists.h"
#include "evo/Evolution/Passes.h"
#include "evo/Evolution/TuningExport.h"
#include "evo/Target/Chips.h"
#include "evo/Target/Manifest.h"
#include "evo/Target/PTXAssembler.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <unistd.h>
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
  /// One task of a target module: what its search needs, and its outcome.
  struct Job {
    gpu::GPUModuleOp gm;
    unsigned index; // in gm's plan
    evo::TaskDesc desc;
    evo::TaskInput input;
    unsigned numTaskBuffers;
    std::optional<llvm::Expected<evo::TaskResult>> result;
    int device = -1; // the GPU it was searched on (-1: rebuilt, or not run)
    SmallVector<int> alsoOn; // GPUs its candidates were spread over besides `device`
  };
  llvm::Expected<evo::TaskResult> taskResult(const evo::TaskDesc &desc,
                                             const evo::TaskInput &input, unsigned slot,
                                             ArrayRef<unsigned> spread = {});
  LogicalResult collectJobs(gpu::GPUModuleOp gm);
  void runJobs();
  LogicalResult evolveModule(gpu::GPUModuleOp gm);
  void remarkTask(gpu::GPUModuleOp gm, const evo::TaskDesc &desc, const evo::TaskResult &r,
                  int device, ArrayRef<int> alsoOn);
  LogicalResult finish();
  LogicalResult exportTuning();

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
  std::mutex budgetMutex; // tasksLeft, when tasks run on several GPUs at once
  /// The GPUs the tasks are spread over (devices=; else `device` alone) and their ceilings.
  SmallVector<int> devices;
  std::vector<std::optional<evo::Ceilings>> slotCeilings;
  /// Wall seconds of this invocation's phases (meta "phases": where a run's
  /// time goes).
  json::Object phases;
  static double secondsSince(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t)
        .count();
  }
  std::vector<Job> jobs;
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
  // devices=: 'all' is counted once the driver is loaded (gpuAndWorker).
  FailureOr<SmallVector<int>> ds = evo::parseDevices(loc, p.devices, p.device, standIn);
  if (failed(ds))
    return failure();
  devices = std::move(*ds);
  return success();
}

/// Without a store there is work for the GPU: checked before anything is created on disk.
LogicalResult EvolveDriver::gpuAndWorker() {
  if (failed(evo::checkDevices(module.getLoc(), p.devices, devices, p.chip, p.ptxas)))
    return failure();
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
    slotCeilings.assign(devices.size(), std::nullopt);
  } else {
    if (workerPath.empty() && failed(gpuAndWorker()))
      return failure();
    opts.verify.worker.workerPath = workerPath;
    // Each GPU's own ceilings: a task is judged against the GPU it ran on.
    auto t0 = std::chrono::steady_clock::now();
    slotCeilings.clear();
    FailureOr<std::vector<evo::Ceilings>> measured =
        evo::measureCeilings(module.getLoc(), opts.verify.worker, devices);
    if (failed(measured))
      return failure();
    json::Array names;
    for (auto [d, c] : llvm::zip_equal(devices, *measured)) {
      names.push_back(json::Object{{"device", d}, {"name", c.device}});
      slotCeilings.push_back(c);
    }
    phases["ceilings_s"] = secondsSince(t0);
    // The final re-verification runs on `device`: its ceilings, else the first GPU's.
    ceilings = slotCeilings.front();
    for (auto [i, d] : llvm::enumerate(devices))
      if (d == p.device)
        ceilings = slotCeilings[i];
    if (llmRun)
      llmRun->settings.gpuName = ceilings->device;
    if (llvm::Error e = opened.store->setMeta("device", ceilings->device))
      return emitError(module.getLoc()) << llvm::toString(std::move(e));
    if (devices.size() > 1)
      if (llvm::Error e = opened.store->setMeta(
              "devices", llvm::formatv("{0}", json::Value(std::move(names))).str()))
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

/// The task's winner: rebuilt on the CPU when an earlier run finished the task, else searched
/// on GPU `devices[slot]` (thread-safe: tasks on different GPUs run at once).
llvm::Expected<evo::TaskResult> EvolveDriver::taskResult(const evo::TaskDesc &desc,
                                                         const evo::TaskInput &input,
                                                         unsigned slot,
                                                         ArrayRef<unsigned> spread) {
  evo::RunStore &store = *opened.store;
  std::optional<evo::TaskRecord> done = store.getTask(desc.name);
  if (!done || done->status != "done") {
    evo::EvolveOptions o = opts;
    o.verify.device = devices[slot];
    for (unsigned s : spread)
      o.spreadDevices.push_back({devices[s], slotCeilings[s] ? &*slotCeilings[s] : nullptr});
    unsigned slots = devices.size();
    o.showDevice = slots > 1;
    // The compile threads shared among the searches running at once.
    unsigned searches = std::max(1u, slots / static_cast<unsigned>(1 + spread.size()));
    if (slots > 1 && !o.compileThreads)
      o.compileThreads =
          std::max(1u, llvm::hardware_concurrency().compute_thread_count() / searches);
    {
      // run-time-budget: this task's share of what is left, within time-budget: what is left
      // over the rounds of `slots` tasks still to come. A task whose share is spent still
      // measures its baseline and keeps it (the search proposes nothing).
      std::lock_guard<std::mutex> lock(budgetMutex);
      if (p.runTimeBudget > 0 && !opened.replay) {
        double left = p.runTimeBudget - std::chrono::duration<double>(
                                            std::chrono::steady_clock::now() - started)
                                            .count();
        unsigned rounds = (std::max(1u, tasksLeft) + slots - 1) / slots;
        double share = std::max(std::max(left, 0.0) / rounds, 1e-9); // 0: "no limit"
        o.timeBudgetSeconds =
            o.timeBudgetSeconds > 0 ? std::min(o.timeBudgetSeconds, share) : share;
      }
      tasksLeft -= tasksLeft > 0;
    }
    // Which GPU and host evaluated the task (reports; merged shards keep it).
    char host[256] = {0};
    if (gethostname(host, sizeof(host) - 1) != 0)
      host[0] = 0;
    const std::optional<evo::Ceilings> &c = slotCeilings[slot];
    json::Object on{{"device", devices[slot]},
                    {"gpu", c ? c->device : std::string("stand-in worker")},
                    {"host", std::string(host)}};
    if (!spread.empty()) {
      // Its candidates spread over these GPUs; the finalists re-measured on "device".
      json::Array all{devices[slot]};
      for (unsigned s : spread)
        all.push_back(devices[s]);
      on["devices"] = std::move(all);
    }
    auto record = [&](const json::Object &x) {
      return store.setMeta(
          "evaluated_on:" + desc.name,
          llvm::formatv("{0}", json::Value(json::Object(x))).str());
    };
    if (llvm::Error e = record(on))
      return std::move(e);
    auto t0 = std::chrono::steady_clock::now();
    llvm::Expected<evo::TaskResult> r =
        evo::evolveTask(input, ctx, store, o, c ? &*c : nullptr, *progress);
    on["seconds"] = secondsSince(t0); // this search's wall time, on that GPU
    if (llvm::Error e = record(on)) {
      if (!r)
        llvm::consumeError(r.takeError());
      return std::move(e);
    }
    return r;
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
                              const evo::TaskResult &r, int device,
                              ArrayRef<int> alsoOn) {
  double speedup = r.bestMs > 0 ? r.baselineMs / r.bestMs : 1.0;
  // With several GPUs, which one searched the task (the run store has it too).
  std::string on = devices.size() > 1 && device >= 0 && r.evaluated > 0
                       ? " on GPU " + std::to_string(device)
                       : "";
  if (!on.empty() && !alsoOn.empty()) {
    on = " on GPUs " + std::to_string(device);
    for (int d : alsoOn)
      on += ", " + std::to_string(d);
    on += " (finalists re-measured on GPU " + std::to_string(device) + ")";
  }
  emitRemark(gm.getLoc()) << llvm::formatv("evo-evolve: {0}: {1:f4} ms -> {2:f4} ms ({3:f2}x), "
                                           "{4} candidates evaluated, {5} valid{6}",
                                           desc.name, r.baselineMs, r.bestMs, speedup,
                                           r.evaluated, r.valid, on)
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

/// The tasks of one function, each with its source parsed once (the search and the final
/// check use it), in the order of its plan.
LogicalResult EvolveDriver::collectJobs(gpu::GPUModuleOp gm) {
  FailureOr<evo::LaunchPlan> plan = evo::LaunchPlan::fromModule(gm);
  if (failed(plan))
    return failure();
  for (unsigned t = 0; t < plan->tasks.size(); ++t) {
    evo::TaskDesc &desc = plan->tasks[t];
    if (!mine(desc.name))
      continue; // another shard's
    OwningOpRef<ModuleOp> src = parseSourceString<ModuleOp>(desc.source, ParserConfig(ctx));
    if (!src || src->getOps<func::FuncOp>().empty())
      return gm.emitError() << "evo-evolve: task '" << desc.name << "' has no source";
    func::FuncOp f = *src->getOps<func::FuncOp>().begin();
    sources.push_back(std::move(src));
    // The plan's knobs (verified with the plan) over the defaults.
    evo::TaskInput input{desc.name, plan->funcName, desc.family, desc.source,
                         desc.knobs ? desc.knobs.getKnobs() : evo::ScheduleKnobs(), f};
    jobs.push_back(
        {gm, t, desc, std::move(input), f.getNumArguments() + f.getNumResults(), std::nullopt});
  }
  return success();
}

/// Searches every job (runOnSlots: one GPU a slot); tasks finished by an earlier run are rebuilt.
/// The tasks start biggest first when there are several GPUs, so that no GPU is left alone with
/// a long task at the end. A task that fails (not a pause) stops the tasks not started yet.
void EvolveDriver::runJobs() {
  unsigned slots = devices.size();
  std::vector<double> work;
  if (slots > 1) {
    // The work of each task as a rough time: bytes at HBM speed, flops at a naive kernel's rate
    // (the baseline and the slow candidates dominate a search). Only the order depends on it.
    for (const Job &j : jobs) {
      evo::TaskCost c = evo::estimateTaskCost(j.input);
      work.push_back(c.bytes / 3e12 + c.flops / 5e12);
    }
  }
  if (slots > 1 && !ctx->isMultithreadingEnabled()) {
    emitWarning(module.getLoc())
        << "evo-evolve: devices=" << p.devices
        << ": MLIR multithreading is disabled (--mlir-disable-threading), so the tasks are "
           "searched one at a time, on GPU "
        << devices.front();
    slots = 1;
  }
  auto finished = [&](size_t k) {
    std::optional<evo::TaskRecord> r = opened.store->getTask(jobs[k].desc.name);
    return r && r->status == "done";
  };
  evo::runOnSlots(jobs.size(), work, slots, tasksLeft, finished,
                  [&](size_t k, unsigned slot, ArrayRef<unsigned> spread) {
                    Job &j = jobs[k];
                    j.result.emplace(taskResult(j.desc, j.input, slot, spread));
                    j.device = devices[slot];
                    for (unsigned s : spread)
                      j.alsoOn.push_back(devices[s]);
                    return *j.result || j.result->errorIsA<evo::PausedError>();
                  });
}

/// Every task of one function (searched or rebuilt by runJobs), spliced in order; then the
/// plan and the host side follow.
LogicalResult EvolveDriver::evolveModule(gpu::GPUModuleOp gm) {
  FailureOr<evo::LaunchPlan> plan = evo::LaunchPlan::fromModule(gm);
  if (failed(plan))
    return failure();
  Builder b(ctx);
  SmallVector<Attribute> summary;
  for (Job &job : jobs) {
    if (job.gm != gm)
      continue;
    unsigned t = job.index;
    const evo::TaskDesc &desc = job.desc;
    if (!job.result) // not started: an earlier task failed
      return failure();
    llvm::Expected<evo::TaskResult> &result = *job.result;
    if (!result) {
      llvm::Error rest = llvm::handleErrors(
          result.takeError(), [&](const evo::PausedError &e) { paused += e.pending; });
      if (rest)
        return gm.emitError() << "evo-evolve: " << llvm::toString(std::move(rest));
      continue; // paused: the other tasks may still post their prompts
    }
    if (failed(evo::spliceWinner(gm, *plan, t, *result, job.numTaskBuffers)))
      return failure();
    spliced[gm.getOperation()].push_back({t, desc.name, desc.source, job.input.func,
                                          job.numTaskBuffers, result->bestId,
                                          result->baselineId});
    double speedup = result->bestMs > 0 ? result->baselineMs / result->bestMs : 1.0;
    summary.push_back(b.getDictionaryAttr(
        {b.getNamedAttr("task", b.getStringAttr(desc.name)),
         b.getNamedAttr("baseline_ms", b.getF64FloatAttr(result->baselineMs)),
         b.getNamedAttr("best_ms", b.getF64FloatAttr(result->bestMs)),
         b.getNamedAttr("speedup", b.getF64FloatAttr(speedup)),
         b.getNamedAttr("best_candidate", b.getI64IntegerAttr(result->firstBestId))}));
    remarkTask(gm, desc, *result, job.device, job.alsoOn);
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
    auto t0 = std::chrono::steady_clock::now();
    SmallVector<std::pair<gpu::GPUModuleOp, ArrayRef<evo::SplicedTask>>>
        toCheck;
    for (gpu::GPUModuleOp gm : targets)
      if (auto it = spliced.find(gm.getOperation()); it != spliced.end())
        toCheck.push_back({gm, it->second});
    std::vector<char> failedAt(toCheck.size(), 0);
    // With several GPUs (the worker ready) each GPU checks the next module on
    // its own worker; the diagnostics still come out in the modules' order.
    unsigned slots = workerReady && ctx->isMultithreadingEnabled()
                         ? std::min<unsigned>(devices.size(), toCheck.size())
                         : 1;
    if (slots <= 1) {
      evo::FinalCheckSettings fc{store, opts, [&] { return ensureWorker(); },
                                 [&]() -> const evo::Ceilings * {
                                   return ceilings ? &*ceilings : nullptr;
                                 }};
      for (auto [k, check] : llvm::enumerate(toCheck))
        failedAt[k] = failed(evo::finalCheck(check.first, check.second, fc));
    } else {
      ParallelDiagnosticHandler ordered(ctx);
      std::atomic<size_t> next{0};
      auto work = [&](unsigned slot) {
        evo::EvolveOptions o = opts;
        o.verify.device = devices[slot];
        const std::optional<evo::Ceilings> &c = slotCeilings[slot];
        evo::FinalCheckSettings fc{
            store, o, [] { return success(); },
            [&]() -> const evo::Ceilings * { return c ? &*c : nullptr; }};
        for (size_t k; (k = next++) < toCheck.size();) {
          ordered.setOrderIDForThread(k);
          failedAt[k] =
              failed(evo::finalCheck(toCheck[k].first, toCheck[k].second, fc));
          ordered.eraseOrderIDForThread();
        }
      };
      evo::onGpuThreads(slots, work);
    }
    phases["final_check_s"] = secondsSince(t0);
    if (llvm::Error e = store.setMeta(
            "phases",
            llvm::formatv("{0}", json::Value(json::Object(phases))).str()))
      return emitError(module.getLoc())
             << "evo-evolve: " << llvm::toString(std::move(e));
    if (llvm::is_contained(failedAt, 1)) {
      if (llvm::Error e = evo::writeReports(store, p.runDir))
        emitError(module.getLoc()) << "evo-evolve: " << llvm::toString(std::move(e));
      return failure();
    }
  }
  if (llmRun)
    evo::remarkLLMTotals(module.getLoc(), *llmRun->client);
  if (llvm::Error e = evo::writeReports(store, p.runDir))
    return emitError(module.getLoc()) << "evo-evolve: " << llvm::toString(std::move(e));
  return paused ? success() : exportTuning();
}

/// The run's winners as tuning records: RUN_DIR/tuning.json, and added to tuning-db-out.
LogicalResult EvolveDriver::exportTuning() {
  llvm::Expected<evo::TuningDb> db = evo::exportTuningDb(*opened.store, ctx);
  if (!db)
    return emitError(module.getLoc()) << "evo-evolve: " << llvm::toString(db.takeError());
  std::string own = (llvm::Twine(p.runDir) + "/" + evo::kTuningDbFileName).str();
  if (llvm::Error e = db->write(own))
    return emitError(module.getLoc())
           << "evo-evolve: cannot write '" << own << "': " << llvm::toString(std::move(e));
  if (p.tuningDbOut.empty())
    return success();
  if (llvm::Error e = evo::addToTuningDb(p.tuningDbOut, *db, evo::TuningDb::Prefer::Fastest))
    return emitError(module.getLoc()) << "evo-evolve: tuning-db-out: " << llvm::toString(std::move(e));
  emitRemark(module.getLoc()) << "evo-evolve: " << db->records().size()
                              << " tuning records added to '" << p.tuningDbOut << "'";
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
    if (failed(collectJobs(gm)))
      return Result::Failed;
  auto t0 = std::chrono::steady_clock::now();
  runJobs();
  phases["search_s"] = secondsSince(t0);
  // Every job's outcome is consumed (an llvm::Expected must be), even after a failure.
  auto consumeAll = [&] {
    for (Job &j : jobs)
      if (j.result && !*j.result)
        llvm::consumeError(j.result->takeError());
  };
  for (gpu::GPUModuleOp gm : targets)
    if (failed(evolveModule(gm))) {
      consumeAll();
      return Result::Failed;
    }
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
