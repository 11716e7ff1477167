//===- EvolvePass.cpp - the evo-evolve pass ------------------------------------===//

#include "evo/Conversion/LaunchPlan.h"
#include "evo/Evaluation/LaunchSelection.h"
#include "evo/Evaluation/Roofline.h"
#include "evo/Evaluation/Verifier.h"
#include "evo/Evolution/Engine.h"
#include "evo/Evolution/LLMMutator.h"
#include "evo/LLM/Mailbox.h"
#include "evo/Evolution/Passes.h"
#include "evo/Evolution/RunStore.h"
#include "evo/Runtime/CudaDriver.h"
#include "evo/Target/Manifest.h"
#include "evo/Target/PTXAssembler.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"

namespace evo {
#define GEN_PASS_DEF_EVOEVOLVEPASS
#include "evo/Evolution/Passes.h.inc"
} // namespace evo

#define DEBUG_TYPE "evo-evolve"

using namespace mlir;
namespace json = llvm::json;

namespace {
struct EvoEvolvePass final : evo::impl::EvoEvolvePassBase<EvoEvolvePass> {
  using Base::Base;
  void runOnOperation() override;

  /// The search settings that must match for `resume` to continue a run.
  std::string configJson() const {
    json::Object o;
    o["strategy"] = std::string(strategy);
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
} // namespace

/// Replaces task `t`'s kernels and launches in `gm`/`plan` with the winner's.
static LogicalResult splice(gpu::GPUModuleOp gm, evo::LaunchPlan &plan, unsigned t,
                            const evo::TaskResult &winner, unsigned numTaskBuffers) {
  MLIRContext *ctx = gm.getContext();
  Block scratchBlock;
  if (failed(parseSourceString(winner.bestIr, &scratchBlock, ParserConfig(ctx))))
    return gm.emitError("evo-evolve: the winner's IR does not parse");
  auto winnerModule = dyn_cast<gpu::GPUModuleOp>(&scratchBlock.front());
  if (!winnerModule)
    return gm.emitError("evo-evolve: the winner's IR is not a gpu.module");

  // The task's own scratch (the old lowering's, beyond its arguments and results) goes away;
  // the buffers after it move down.
  {
    evo::TaskDesc &old = plan.tasks[t];
    llvm::SmallDenseSet<unsigned> dropped(old.buffers.begin() + numTaskBuffers, old.buffers.end());
    if (!dropped.empty()) {
      SmallVector<unsigned> newIndex(plan.buffers.size());
      SmallVector<evo::BufferDesc> kept;
      for (unsigned i = 0; i < plan.buffers.size(); ++i) {
        newIndex[i] = kept.size();
        if (!dropped.count(i))
          kept.push_back(plan.buffers[i]);
      }
      plan.buffers = std::move(kept);
      old.buffers.resize(numTaskBuffers);
      for (evo::TaskDesc &d : plan.tasks)
        for (unsigned &b : d.buffers)
          b = newIndex[b];
      for (evo::KernelLaunch &l : plan.launches)
        if (l.task != t)
          for (unsigned &a : l.args)
            a = newIndex[a];
    }
  }
  evo::TaskDesc &desc = plan.tasks[t];
  SmallVector<unsigned> bufferOf(desc.buffers.begin(), desc.buffers.begin() + numTaskBuffers);
  for (const evo::ScratchSpec &s : winner.bestScratch) {
    Type elt = parseType(s.elementType, ctx);
    if (!elt)
      return gm.emitError() << "evo-evolve: bad scratch element type '" << s.elementType << "'";
    std::string name = "tmp" + std::to_string(plan.buffers.size());
    while (llvm::any_of(plan.buffers, [&](const evo::BufferDesc &d) { return d.name == name; }))
      name += "_";
    evo::BufferDesc b{name, evo::BufferRole::Scratch, MemRefType::get(s.shape, elt), s.zeroInit};
    plan.buffers.push_back(b);
    bufferOf.push_back(plan.buffers.size() - 1);
    desc.buffers.push_back(plan.buffers.size() - 1);
  }
  // Drop the task's old kernels and launches, remembering where they were and the first name.
  size_t insertAt = plan.launches.size();
  std::string firstName;
  for (size_t i = 0; i < plan.launches.size();) {
    if (plan.launches[i].task != t) {
      ++i;
      continue;
    }
    insertAt = std::min(insertAt, i);
    if (firstName.empty())
      firstName = plan.launches[i].kernel;
    if (auto k = gm.lookupSymbol<gpu::GPUFuncOp>(plan.launches[i].kernel))
      k.erase();
    plan.launches.erase(plan.launches.begin() + i);
  }
  // What an earlier splice of this task carried besides kernels (helpers, constant tables) goes
  // too: everything the task owns is tagged with its index.
  for (Operation &op : llvm::make_early_inc_range(gm.getBody()->getOperations()))
    if (auto tag = op.getAttrOfType<IntegerAttr>(evo::kTaskAttrName);
        tag && tag.getInt() == t && isa<SymbolOpInterface>(op))
      op.erase();
  // Every symbol of the winner's module comes along, not only its kernels: device helpers and
  // constant tables (`memref.global constant`) that the kernels use. Kernels take the task's
  // names (variants name them k0, k0_combine, ...); a name already taken in `gm` gets a fresh
  // one, and the winner's own references follow every rename.
  Builder b(ctx);
  SymbolTable winnerSymbols(winnerModule);
  SmallVector<Operation *> carried;
  llvm::StringSet<> taken;
  for (Operation &op : gm.getBody()->getOperations())
    if (auto s = dyn_cast<SymbolOpInterface>(op))
      taken.insert(s.getName());
  for (Operation &op : winnerModule.getBody()->getOperations())
    if (isa<SymbolOpInterface>(op))
      carried.push_back(&op);
  // First to names no symbol of either module has (so renames never collide), then to the
  // final ones.
  std::vector<std::string> wanted;
  std::string temp = "__evo_splice_";
  for (Operation *op : carried)
    wanted.push_back(cast<SymbolOpInterface>(op).getName().str());
  while (llvm::any_of(wanted, [&](StringRef w) { return w.starts_with(temp); }))
    temp += "_";
  for (auto [i, op] : llvm::enumerate(carried)) {
    if (failed(winnerSymbols.rename(op, b.getStringAttr(temp + std::to_string(i)))))
      return gm.emitError("evo-evolve: the winner's symbols cannot be renamed");
  }
  std::map<std::string, std::string> renamed;
  for (auto [i, op] : llvm::enumerate(carried)) {
    std::string name = wanted[i];
    if (isa<gpu::GPUFuncOp>(op) && !firstName.empty() && StringRef(name).starts_with("k0"))
      name = firstName + name.substr(2);
    std::string unique = name;
    for (unsigned n = 0; taken.contains(unique); ++n)
      unique = name + "_" + std::to_string(n);
    taken.insert(unique);
    if (failed(winnerSymbols.rename(op, b.getStringAttr(unique))))
      return gm.emitError("evo-evolve: the winner's symbols cannot be renamed");
    renamed[wanted[i]] = unique;
  }
  for (Operation *op : carried) {
    op->remove();
    op->setAttr(evo::kTaskAttrName, b.getI64IntegerAttr(t));
    gm.getBody()->push_back(op);
  }
  std::vector<evo::KernelLaunch> launches;
  for (evo::KernelLaunch l : winner.bestLaunches) {
    l.kernel = renamed[l.kernel];
    l.task = t;
    for (unsigned &a : l.args)
      a = bufferOf[a];
    launches.push_back(l);
  }
  plan.launches.insert(plan.launches.begin() + insertAt, launches.begin(), launches.end());
  std::string err;
  evo::ScheduleKnobs knobs;
  if (llvm::Expected<json::Value> v = json::parse(winner.bestKnobs))
    (void)knobs.mergeJson(*v->getAsObject(), &err);
  else
    llvm::consumeError(v.takeError());
  desc.knobs = knobs.toAttr(ctx, desc.family);
  return success();
}

void EvoEvolvePass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *ctx = &getContext();
  std::string workerPath;
  SmallVector<gpu::GPUModuleOp> targets;
  for (auto gm : module.getOps<gpu::GPUModuleOp>())
    if (gm->hasAttr(evo::kPlanAttrName))
      targets.push_back(gm);
  if (targets.empty()) {
    emitError(module.getLoc(), "evo-evolve: no gpu.module with an evo.plan; run evo-lower-to-gpu first");
    return signalPassFailure();
  }
  std::optional<evo::llm::Strategy> llmStrategy = evo::llm::parseStrategy(strategy);
  if (strategy != "evo" && strategy != "single-best" && strategy != "islands" && !llmStrategy) {
    emitError(module.getLoc()) << "evo-evolve: strategy must be evo, single-best, islands, free, "
                                  "insight, full, eoh or funsearch, got '"
                               << strategy << "'";
    return signalPassFailure();
  }
  if (llmStrategy && std::string(llm).empty()) {
    emitError(module.getLoc()) << "evo-evolve: strategy=" << strategy
                               << " asks an LLM: set llm=openai, llm=anthropic or llm=cmd:<program>";
    return signalPassFailure();
  }
  if (!llmStrategy && !std::string(llm).empty()) {
    emitError(module.getLoc()) << "evo-evolve: llm=" << llm << " is used by the LLM strategies "
                               << "(free, insight, full, eoh, funsearch), not strategy=" << strategy;
    return signalPassFailure();
  }
  if (llmMix < 0 || llmMix > 1) {
    emitError(module.getLoc()) << "evo-evolve: llm-mix must be in [0, 1], got " << llmMix;
    return signalPassFailure();
  }

  // Without a store there is work for the GPU: check for one before creating anything on disk.
  auto gpuAndWorker = [&]() -> LogicalResult {
    std::string why;
    if (!evo::cuda::Driver::get(&why))
      return emitError(module.getLoc()) << "evo-evolve: no GPU to run on: " << why;
    llvm::Expected<std::string> w = evo::findWorker(worker);
    if (!w)
      return emitError(module.getLoc()) << "evo-evolve: " << llvm::toString(w.takeError());
    workerPath = *w;
    return success();
  };
  // The run store: a new run, or `resume` of one made from the same input and configuration.
  std::string inputHash;
  for (gpu::GPUModuleOp gm : targets)
    if (auto plan = evo::LaunchPlan::fromModule(gm); succeeded(plan))
      inputHash += plan->source;
  inputHash = evo::sha256Hex(inputHash);
  // One evo-opt per run-dir (run, resume or replay), held until the pass ends.
  bool runDirExisted = llvm::sys::fs::exists(std::string(runDir));
  llvm::Expected<evo::RunDirLock> runDirLock = evo::RunDirLock::acquire(runDir, /*create=*/true);
  if (!runDirLock) {
    emitError(module.getLoc()) << "evo-evolve: " << llvm::toString(runDirLock.takeError());
    return signalPassFailure();
  }
  // A run that fails before its store exists leaves no run-dir behind (removed while the lock
  // is still held; RunDirLock::acquire retries when its lock file was unlinked under it).
  bool storeMade = false;
  auto dropNewRunDir = llvm::make_scope_exit([&] {
    if (runDirExisted || storeMade)
      return;
    llvm::sys::fs::remove(std::string(runDir) + "/.evo-lock");
    llvm::sys::fs::remove(std::string(runDir)); // only when empty
  });
  bool exists = llvm::sys::fs::exists(std::string(runDir) + "/run.sqlite");
  if (!exists && !standInWorker && failed(gpuAndWorker()))
    return signalPassFailure();
  // replay-run: the finished run to re-create, made from the same input and configuration.
  std::unique_ptr<evo::RunStore> replayStore;
  std::optional<evo::RunDirLock> replayLock;
  if (!std::string(replayRun).empty()) {
    auto bad = [&](const Twine &why) {
      emitError(module.getLoc()) << "evo-evolve: replay-run=" << replayRun << ": " << why;
      signalPassFailure();
    };
    if (llvm::sys::fs::equivalent(std::string(replayRun), std::string(runDir)))
      return bad("it is the run-dir itself; replay into a new run-dir");
    if (!llvm::sys::fs::exists(std::string(replayRun) + "/run.sqlite"))
      return bad("no run store there (run.sqlite)");
    llvm::Expected<evo::RunDirLock> oldLock = evo::RunDirLock::acquire(replayRun, false);
    if (!oldLock)
      return bad(llvm::toString(oldLock.takeError()));
    replayLock.emplace(std::move(*oldLock));
    llvm::Expected<std::unique_ptr<evo::RunStore>> old = evo::RunStore::open(replayRun, false);
    if (!old)
      return bad(llvm::toString(old.takeError()));
    replayStore = std::move(*old);
    if (!forceResume && (replayStore->getMeta("input_hash") != inputHash ||
                         replayStore->getMeta("config") != configJson()))
      return bad(Twine("that run was made from ") +
                 (replayStore->getMeta("input_hash") != inputHash ? "another input"
                                                                  : "another configuration") +
                 "; replay it with the same ones (or pass force-resume=true)");
    for (const evo::TaskRecord &t : replayStore->getTasks())
      if (t.status != "done")
        return bad("task '" + t.name + "' is not finished there; finish it with resume=true first");
  }
  if (exists && !resume) {
    emitError(module.getLoc()) << "evo-evolve: '" << runDir
                       << "' already holds a run; pass resume=true to continue it, or choose "
                          "another run-dir";
    return signalPassFailure();
  }
  // A new store is created with its identity (input, configuration, replay origin) in one
  // transaction: a run killed at any moment leaves a store that resume accepts, or none.
  std::vector<std::pair<std::string, std::string>> initialMeta = {{"input_hash", inputHash},
                                                                  {"config", configJson()}};
  if (replayStore)
    initialMeta.push_back({"replay_of", std::string(replayRun)});
  llvm::Expected<std::unique_ptr<evo::RunStore>> store =
      evo::RunStore::open(runDir, !exists, initialMeta);
  if (!store) {
    emitError(module.getLoc()) << "evo-evolve: " << llvm::toString(store.takeError());
    return signalPassFailure();
  }
  storeMade = true;
  if (exists) {
    std::optional<std::string> oldInput = (*store)->getMeta("input_hash");
    std::optional<std::string> oldConfig = (*store)->getMeta("config");
    if (!forceResume && (oldInput != inputHash || oldConfig != configJson())) {
      emitError(module.getLoc()) << "evo-evolve: the run in '" << runDir << "' was made from "
                         << (oldInput != inputHash ? "another input" : "another configuration")
                         << "; resume it with the same ones, or pass force-resume=true";
      return signalPassFailure();
    }
  }

  // The LLM client, shared by every task of the run (budgets are per run).
  std::unique_ptr<evo::llm::Client> client;
  std::optional<evo::llm::Templates> templates;
  evo::LLMSettings llmSettings;
  if (llmStrategy) {
    evo::llm::BackendOptions bo;
    bo.spec = llm;
    bo.model = llmModel;
    bo.baseUrl = llmBaseUrl;
    bo.keyEnv = llmKeyEnv;
    bo.waitSeconds = llmWait;
    llvm::Expected<std::unique_ptr<evo::llm::Backend>> backend = evo::llm::createBackend(bo);
    if (!backend)
      return emitError(module.getLoc()) << "evo-evolve: " << llvm::toString(backend.takeError()),
             signalPassFailure();
    evo::llm::PriceTable prices = evo::llm::PriceTable::builtin();
    if (!std::string(llmPrices).empty()) {
      llvm::Expected<evo::llm::PriceTable> t = evo::llm::PriceTable::load(llmPrices);
      if (!t)
        return emitError(module.getLoc()) << "evo-evolve: " << llvm::toString(t.takeError()),
               signalPassFailure();
      prices = std::move(*t);
    }
    llvm::Expected<evo::llm::Templates> t = evo::llm::Templates::load(llmPrompts);
    if (!t)
      return emitError(module.getLoc()) << "evo-evolve: " << llvm::toString(t.takeError()),
             signalPassFailure();
    templates = std::move(*t);
    if (StringRef(llm).starts_with("mailbox:"))
      for (const std::string &name : evo::llm::strayReplies(StringRef(llm).drop_front(8).trim()))
        emitWarning(module.getLoc()) << "evo-evolve: mailbox reply '" << name
                                     << "' answers no prompt of this mailbox; ignored";
    evo::llm::ClientOptions co;
    co.timeoutSeconds = llmTimeout;
    co.maxRetries = llmRetries;
    co.parallel = std::max(1u, static_cast<unsigned>(llmParallel));
    co.maxCalls = llmMaxCalls;
    co.maxTokens = llmMaxTotalTokens;
    co.maxCost = llmMaxCost;
    // A replay answers from the replayed run's cache and never calls the backend.
    co.cacheDir = !std::string(llmCache).empty() ? std::string(llmCache)
                  : replayStore                  ? std::string(replayRun) + "/llm-cache"
                                                 : std::string(runDir) + "/llm-cache";
    co.replay = llmReplay || replayStore;
    co.seed = seed;
    client = std::make_unique<evo::llm::Client>(std::move(*backend), co, std::move(prices));
    llmSettings.strategy = *llmStrategy;
    llmSettings.client = client.get();
    llmSettings.templates = &*templates;
    llmSettings.temperature = llmTemperature;
    llmSettings.maxTokens = llmMaxTokens;
    llmSettings.repairs = llmRepairs;
    llmSettings.mix = llmMix;
    llmSettings.chip = chip;
  }

  evo::EvolveOptions opts;
  opts.strategy = strategy;
  if (llmStrategy) {
    // The population mechanics of each method: Free and Insight improve the single best, Full
    // and EoH keep an elitist population, FunSearch runs islands (5 unless set).
    opts.strategy = *llmStrategy == evo::llm::Strategy::FunSearch ? "islands"
                    : (*llmStrategy == evo::llm::Strategy::Free ||
                       *llmStrategy == evo::llm::Strategy::Insight)
                        ? "single-best"
                        : "evo";
    opts.llm = &llmSettings;
  }
  opts.population = population;
  opts.samples = samples;
  opts.generations = generations;
  opts.islands = llmStrategy == evo::llm::Strategy::FunSearch && islands.getNumOccurrences() == 0
                     ? 5u
                     : static_cast<unsigned>(islands);
  opts.migrateEvery = migrateEvery;
  opts.maxCandidates = maxCandidates;
  opts.timeBudgetSeconds = timeBudget;
  opts.seed = seed;
  opts.finalists = finalists;
  opts.finalRounds = finalRounds;
  opts.finalRuns = finalRuns;
  opts.compileThreads = compileThreads;
  opts.quiet = quiet;
  opts.replay = replayStore.get();
  opts.ptx.chip = chip;
  opts.ptx.features = features;
  opts.verify.trials = trials;
  // The verifier's inputs: the user's seed, else one drawn from OS entropy for this run, stored
  // so that a resumed run draws the same ones.
  {
    uint64_t vs = verifySeed;
    std::optional<std::string> stored = (*store)->getMeta("verify_seed");
    uint64_t old = 0;
    if (stored && StringRef(*stored).getAsInteger(10, old))
      old = 0;
    if (!vs)
      vs = old ? old : evo::freshSeed();
    if (!vs)
      return emitError(module.getLoc(), "evo-evolve: no entropy for the verifier's seed; pass "
                                        "verify-seed=N"),
             signalPassFailure();
    if (vs != old)
      if (llvm::Error e = (*store)->setMeta("verify_seed", std::to_string(vs)))
        return emitError(module.getLoc()) << llvm::toString(std::move(e)), signalPassFailure();
    opts.verify.seed = vs;
  }
  opts.verify.runs = runs;
  opts.verify.warmup = warmup;
  opts.verify.repeats = 1;
  opts.verify.device = device;
  opts.verify.worker.candidateTimeoutSeconds = timeout;
  if (llvm::Expected<std::optional<std::string>> p = evo::findPtxas(ptxas); p && *p)
    opts.ptxasPath = **p;
  else if (!p)
    return emitError(module.getLoc()) << "evo-evolve: " << llvm::toString(p.takeError()),
           signalPassFailure();

  // Tasks already done (resume) need no GPU; the others do.
  bool needGpu = false;
  for (gpu::GPUModuleOp gm : targets)
    if (auto plan = evo::LaunchPlan::fromModule(gm); succeeded(plan))
      for (const evo::TaskDesc &t : plan->tasks) {
        std::optional<evo::TaskRecord> r = (*store)->getTask(t.name);
        needGpu |= !r || r->status != "done";
      }
  std::optional<evo::Ceilings> ceilings;
  bool workerReady = false;
  // The worker (and the device's ceilings): for the search, and for the final check of a
  // module not verified yet.
  auto ensureWorker = [&]() -> LogicalResult {
    if (workerReady)
      return success();
    if (standInWorker) {
      if (worker.empty())
        return emitError(module.getLoc(), "evo-evolve: stand-in-worker needs worker=PATH");
      opts.verify.worker.workerPath = worker;
    } else {
      if (workerPath.empty() && failed(gpuAndWorker()))
        return failure();
      opts.verify.worker.workerPath = workerPath;
      llvm::Expected<evo::Ceilings> c = evo::deviceCeilings(opts.verify.worker, device);
      if (!c)
        return emitError(module.getLoc()) << "evo-evolve: " << llvm::toString(c.takeError());
      ceilings = *c;
      llmSettings.gpuName = c->device;
      if (llvm::Error e = (*store)->setMeta("device", c->device))
        return emitError(module.getLoc()) << llvm::toString(std::move(e));
    }
    workerReady = true;
    return success();
  };
  if (needGpu && failed(ensureWorker()))
    return signalPassFailure();

  evo::ProgressLine progress(quiet);
  unsigned pausedPrompts = 0;
  Builder b(ctx);
  // What each gpu.module received: for the final check, and to name the task that fails it.
  struct Spliced {
    unsigned index; // in the plan's tasks
    std::string name, source;
    unsigned numTaskBuffers;
    int64_t bestId, baselineId;
  };
  llvm::DenseMap<Operation *, SmallVector<Spliced>> spliced;
  for (gpu::GPUModuleOp gm : targets) {
    FailureOr<evo::LaunchPlan> plan = evo::LaunchPlan::fromModule(gm);
    if (failed(plan))
      return signalPassFailure();
    SmallVector<Attribute> summary;
    for (unsigned t = 0; t < plan->tasks.size(); ++t) {
      evo::TaskDesc &desc = plan->tasks[t];
      OwningOpRef<ModuleOp> src = parseSourceString<ModuleOp>(desc.source, ParserConfig(ctx));
      if (!src || src->getOps<func::FuncOp>().empty())
        return gm.emitError() << "evo-evolve: task '" << desc.name << "' has no source",
               signalPassFailure();
      func::FuncOp f = *src->getOps<func::FuncOp>().begin();
      unsigned numTaskBuffers = f.getNumArguments() + f.getNumResults();
      evo::TaskInput input{desc.name, plan->funcName, desc.family, desc.source, {}};
      if (failed(input.baselineKnobs.merge(desc.knobs, [&] { return gm.emitError(); })))
        return signalPassFailure();

      llvm::Expected<evo::TaskResult> result =
          llvm::createStringError(llvm::inconvertibleErrorCode(), "not run");
      std::optional<evo::TaskRecord> done = (*store)->getTask(desc.name);
      if (done && done->status == "done") {
        // Finished in an earlier run: rebuild the winner on the CPU.
        llvm::consumeError(result.takeError());
        std::optional<evo::CandidateRecord> best = (*store)->getCandidate(done->bestId);
        std::optional<evo::CandidateRecord> base = (*store)->getCandidate(done->baselineId);
        llvm::Expected<evo::CompiledVariant> v =
            best ? evo::rebuildCandidate(**store, best->id, ctx->getDialectRegistry(),
                                         desc.source, desc.family, opts.ptx, "")
                 : llvm::createStringError(llvm::inconvertibleErrorCode(), "it is not stored");
        if (!v)
          return gm.emitError() << "evo-evolve: the stored winner of '" << desc.name
                                << "' cannot be rebuilt: " << llvm::toString(v.takeError()),
                 signalPassFailure();
        evo::TaskResult r;
        r.task = desc.name;
        r.bestId = best->id;
        r.baselineId = done->baselineId;
        auto timeOf = [](const evo::CandidateRecord &c) {
          return std::isfinite(c.finalMedianMs) ? c.finalMedianMs : c.medianMs;
        };
        r.bestMs = timeOf(*best);
        r.baselineMs = base ? timeOf(*base) : NAN;
        r.bestIr = v->ir;
        r.bestLaunches = v->launches;
        r.bestScratch = v->scratch;
        r.bestKnobs = best->knobs;
        result = std::move(r);
      } else {
        llvm::consumeError(result.takeError());
        result = evo::evolveTask(input, ctx, **store, opts, ceilings ? &*ceilings : nullptr,
                                 progress);
      }
      if (!result) {
        llvm::Error rest = llvm::handleErrors(result.takeError(), [&](const evo::PausedError &p) {
          pausedPrompts += p.pending;
        });
        if (rest) {
          gm.emitError() << "evo-evolve: " << llvm::toString(std::move(rest));
          return signalPassFailure();
        }
        continue; // paused: the other tasks may still post their prompts
      }
      if (failed(splice(gm, *plan, t, *result, numTaskBuffers)))
        return signalPassFailure();
      spliced[gm.getOperation()].push_back(
          {t, desc.name, desc.source, numTaskBuffers, result->bestId, result->baselineId});
      double speedup = result->bestMs > 0 ? result->baselineMs / result->bestMs : 1.0;
      summary.push_back(b.getDictionaryAttr(
          {b.getNamedAttr("task", b.getStringAttr(desc.name)),
           b.getNamedAttr("baseline_ms", b.getF64FloatAttr(result->baselineMs)),
           b.getNamedAttr("best_ms", b.getF64FloatAttr(result->bestMs)),
           b.getNamedAttr("speedup", b.getF64FloatAttr(speedup)),
           b.getNamedAttr("best_candidate", b.getI64IntegerAttr(result->bestId))}));
      emitRemark(gm.getLoc()) << llvm::formatv("evo-evolve: {0}: {1:f4} ms -> {2:f4} ms ({3:f2}x), "
                                       "{4} candidates evaluated, {5} valid",
                                       desc.name, result->baselineMs, result->bestMs, speedup,
                                       result->evaluated, result->valid)
                             .str();
      if (replayStore) {
        unsigned same = result->replayed - result->replayDiffer.size();
        emitRemark(gm.getLoc()) << llvm::formatv(
            "evo-evolve: replay of {0}: {1}: {2} candidates re-created, {3} identical to the "
            "replayed run's (same PTX, or the same verdict without PTX)",
            replayRun, desc.name, result->replayed, same);
        if (!result->replayDiffer.empty()) {
          std::string ids;
          for (int64_t id : result->replayDiffer)
            ids += (ids.empty() ? "" : ", ") + std::to_string(id);
          emitWarning(gm.getLoc()) << "evo-evolve: replay of " << replayRun << ": " << desc.name
                                   << ": these candidates came out differently: " << ids;
        }
      }
    }
    gm->setAttr(evo::kPlanAttrName, plan->toAttr(ctx));
    gm->setAttr("evo.evolved", b.getArrayAttr(summary));
    if (failed(plan->verifyAgainst(gm)))
      return signalPassFailure();
    // The host side follows the plan.
    if (auto host = module.lookupSymbol<func::FuncOp>(plan->funcName)) {
      OpBuilder ob(host);
      func::FuncOp fresh = evo::buildHostFunction(ob, host.getLoc(), *plan, gm);
      fresh.setVisibility(host.getVisibility());
      host.erase();
    }
  }

  // A task's own plan inside the function's: its buffers (arguments, results, then scratch) and
  // launches, renumbered; its source is the task's.
  auto taskPlanOf = [&](const evo::LaunchPlan &fp, const Spliced &s) -> FailureOr<evo::LaunchPlan> {
    OwningOpRef<ModuleOp> src = parseSourceString<ModuleOp>(s.source, ParserConfig(ctx));
    if (!src || src->getOps<func::FuncOp>().empty() || s.index >= fp.tasks.size())
      return failure();
    func::FuncOp f = *src->getOps<func::FuncOp>().begin();
    evo::LaunchPlan tp;
    tp.funcName = f.getSymName().str();
    tp.source = s.source;
    std::map<unsigned, unsigned> local;
    for (auto [i, buf] : llvm::enumerate(fp.tasks[s.index].buffers)) {
      evo::BufferDesc d = fp.buffers[buf];
      d.role = i < f.getNumArguments()  ? evo::BufferRole::Input
               : i < s.numTaskBuffers ? evo::BufferRole::Output
                                      : evo::BufferRole::Scratch;
      local[buf] = tp.buffers.size();
      tp.buffers.push_back(d);
    }
    for (evo::KernelLaunch l : fp.launches) {
      if (l.task != s.index)
        continue;
      for (unsigned &a : l.args) {
        auto it = local.find(a);
        if (it == local.end())
          return failure();
        a = it->second;
      }
      l.task = 0;
      tp.launches.push_back(std::move(l));
    }
    return tp;
  };
  // The emitted module, verified once more before anything is written: the gpu.module as it now
  // is (every task's winner, spliced) is compiled like evo-emit-ptx compiles it and verified as
  // a whole against the function, on fresh inputs, with the search's protocol (evo-verify's:
  // the naive baseline as reference, every element compared, timed launches checked). A module
  // that passed is recorded by the hash of its PTX, so resuming a finished run does not need the
  // GPU again. On failure nothing is emitted, and the task whose kernels fail alone has its
  // winner recorded invalid and is searched again by `resume=true`.
  auto finalCheck = [&](gpu::GPUModuleOp gm, ArrayRef<Spliced> tasks) -> LogicalResult {
    FailureOr<evo::LaunchPlan> plan = evo::LaunchPlan::fromModule(gm);
    if (failed(plan))
      return failure();
    std::string text;
    {
      llvm::raw_string_ostream os(text);
      gm->print(os, OpPrintingFlags().useLocalScope());
    }
    evo::CompiledVariant v =
        evo::compileGpuModule(ctx->getDialectRegistry(), text, opts.ptx, /*ptxasPath=*/"");
    if (!v.ok)
      return emitError(gm.getLoc()) << "evo-evolve: the evolved kernels of '" << plan->funcName
                            << "' do not compile: " << v.diagnostics;
    std::string certKey = "final_check:" + plan->funcName;
    if (std::optional<std::string> cert = (*store)->getMeta(certKey)) {
      llvm::Expected<json::Value> j = json::parse(*cert);
      const json::Object *o = j ? j->getAsObject() : nullptr;
      if (!j)
        llvm::consumeError(j.takeError());
      if (o && o->getString("ptx_sha256") == StringRef(v.ptxHash) &&
          o->getString("verdict") == StringRef("valid")) {
        emitRemark(gm.getLoc()) << "evo-evolve: '" << plan->funcName
                                << "': these kernels passed the final re-verification already "
                                   "(same PTX); not run again";
        return success();
      }
    }
    if (failed(ensureWorker()))
      return failure();
    evo::VerifyOptions vo = opts.verify;
    vo.seed = evo::freshSeed(); // never the search's inputs
    if (!vo.seed)
      return emitError(gm.getLoc(), "evo-evolve: no entropy for the final re-verification's inputs");
    const evo::Ceilings *ceil = ceilings ? &*ceilings : nullptr;
    llvm::Expected<evo::VariantReport> r =
        evo::verifyFunction(*plan, v.ptx, ctx, gm.getLoc(), vo, opts.ptx, ceil);
    if (!r)
      return emitError(gm.getLoc()) << "evo-evolve: the final re-verification of '" << plan->funcName
                            << "' could not run: " << llvm::toString(r.takeError());
    if (r->verdict == evo::Verdict::Valid) {
      json::Object cert{{"function", plan->funcName},
                        {"verdict", "valid"},
                        {"ptx_sha256", v.ptxHash},
                        {"seed", std::to_string(r->seed)},
                        {"trials", static_cast<int64_t>(vo.trials)}};
      if (r->medianMs > 0)
        cert["median_ms"] = r->medianMs;
      if (llvm::Error e = (*store)->setMeta(
              certKey, llvm::formatv("{0}", json::Value(std::move(cert))).str()))
        return emitError(gm.getLoc()) << "evo-evolve: " << llvm::toString(std::move(e));
      emitRemark(gm.getLoc()) << llvm::formatv(
          "evo-evolve: '{0}': the emitted kernels passed the final re-verification ({1} trials "
          "on fresh inputs, seed {2})",
          plan->funcName, vo.trials, r->seed);
      return success();
    }
    // Which task's kernels fail on their own? Each task alone: its kernels and the symbols it
    // carries (all tagged with its index), against its own source.
    std::vector<std::pair<const Spliced *, std::string>> culprits;
    if (tasks.size() == 1) {
      culprits.push_back(
          {&tasks.front(), evo::stringifyVerdict(r->verdict).str() + ": " + r->reason});
    } else {
      for (const Spliced &s : tasks) {
        FailureOr<evo::LaunchPlan> tp = taskPlanOf(*plan, s);
        if (failed(tp))
          return emitError(gm.getLoc()) << "evo-evolve: task '" << s.name
                                        << "' cannot be isolated in the plan of '"
                                        << plan->funcName << "'";
        OwningOpRef<gpu::GPUModuleOp> alone = cast<gpu::GPUModuleOp>(gm->clone());
        for (Operation &op : llvm::make_early_inc_range(alone->getBody()->getOperations()))
          if (auto tag = op.getAttrOfType<IntegerAttr>(evo::kTaskAttrName);
              !tag || tag.getInt() != s.index)
            op.erase();
        std::string aloneText;
        {
          llvm::raw_string_ostream os(aloneText);
          alone->print(os, OpPrintingFlags().useLocalScope());
        }
        evo::CompiledVariant tv =
            evo::compileGpuModule(ctx->getDialectRegistry(), aloneText, opts.ptx, "");
        if (!tv.ok)
          return emitError(gm.getLoc()) << "evo-evolve: the kernels of task '" << s.name
                                        << "' do not compile alone: " << tv.diagnostics;
        llvm::Expected<evo::VariantReport> tr =
            evo::verifyFunction(*tp, tv.ptx, ctx, gm.getLoc(), vo, opts.ptx, ceil);
        if (!tr)
          return emitError(gm.getLoc()) << "evo-evolve: the final re-verification of task '"
                                        << s.name << "' could not run: "
                                        << llvm::toString(tr.takeError());
        if (tr->verdict != evo::Verdict::Valid)
          culprits.push_back({&s, evo::stringifyVerdict(tr->verdict).str() + ": " + tr->reason});
      }
    }
    if (culprits.empty())
      return emitError(gm.getLoc()) << "evo-evolve: the evolved kernels of '" << plan->funcName
                            << "' failed the final re-verification ("
                            << evo::stringifyVerdict(r->verdict) << ": " << r->reason
                            << ") although every task's kernels pass alone: the tasks are wired "
                               "together wrongly (a bug of evo-evolve); nothing is written";
    for (auto &[s, why] : culprits) {
      bool baselineWon = s->bestId == s->baselineId;
      if (!baselineWon) {
        // Never chosen again: resume picks the next valid candidate.
        std::optional<evo::CandidateRecord> c = (*store)->getCandidate(s->bestId);
        std::optional<evo::TaskRecord> t = (*store)->getTask(s->name);
        if (c && t) {
          c->verdict = "invalid";
          c->reason = "final re-verification of the emitted module: " + why;
          t->status = "running";
          if (llvm::Error e = (*store)->recordResult(*c))
            return emitError(gm.getLoc()) << "evo-evolve: " << llvm::toString(std::move(e));
          if (llvm::Error e = (*store)->upsertTask(*t))
            return emitError(gm.getLoc()) << "evo-evolve: " << llvm::toString(std::move(e));
        }
      }
      emitError(gm.getLoc()) << "evo-evolve: task '" << s->name << "': its winner (candidate "
                     << s->bestId << ") failed the final re-verification of the emitted module: "
                     << why << "; nothing is written"
                     << (baselineWon ? ". It is the naive baseline itself: the GPU or the "
                                       "verifier is unreliable"
                                     : ". It is now recorded invalid: run again with "
                                       "resume=true to choose the next valid candidate");
    }
    return failure();
  };
  if (!pausedPrompts) {
    bool failedCheck = false;
    for (gpu::GPUModuleOp gm : targets) {
      auto it = spliced.find(gm.getOperation());
      if (it != spliced.end() && failed(finalCheck(gm, it->second)))
        failedCheck = true;
    }
    if (failedCheck) {
      if (llvm::Error e = evo::writeReports(**store, runDir))
        emitError(module.getLoc()) << "evo-evolve: " << llvm::toString(std::move(e));
      return signalPassFailure();
    }
  }

  if (client) {
    evo::llm::Totals t = client->totals();
    emitRemark(module.getLoc()) << llvm::formatv(
        "evo-evolve: LLM ({0}): {1} calls ({2} retried, {3} failed), {4} answered from the "
        "cache; {5} prompt + {6} completion tokens; cost {7:f4} {8}",
        client->backend().identity(), t.calls, t.retries, t.failures, t.cacheHits, t.promptTokens,
        t.completionTokens, t.cost, client->priceTable().currency());
  }
  if (llvm::Error e = evo::writeReports(**store, runDir)) {
    emitError(module.getLoc()) << "evo-evolve: " << llvm::toString(std::move(e));
    return signalPassFailure();
  }
  if (pausedPrompts) {
    // Not an error of the input: a checkpoint. No output is written; evo-opt exits with 75.
    StringRef dir = StringRef(llm).drop_front(strlen("mailbox:")).trim();
    llvm::errs() << "evo-evolve: paused: " << pausedPrompts << " LLM prompt(s) wait in " << dir
                 << "/pending; answer them (e.g. evo-opt llm-relay " << dir
                 << " --llm=...) and run again with resume=true\n";
    evo::llm::requestPausedExit();
    return signalPassFailure();
  }
}
