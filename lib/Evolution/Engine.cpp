//===- Engine.cpp - the evolutionary search over a task's kernel variants -----===//

#include "evo/Evolution/Engine.h"
#include "evo/Conversion/InputChecks.h"
#include "evo/Evaluation/WorkerProtocol.h"
#include "evo/Evolution/LLMMutator.h"
#include "evo/Evolution/Population.h"
#include "evo/LLM/Reply.h"
#include "evo/Target/Manifest.h"
#include "evo/Target/PTXAssembler.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/raw_ostream.h"
#include <chrono>
#include <cmath>
#include <future>
#include <map>
#include <deque>
#include <set>
#include <thread>

using namespace mlir;
namespace json = llvm::json;

namespace evo {

MLIRContext &compileContext(const DialectRegistry &registry) {
  // One context per compile thread: variants compile in parallel without sharing IR.
  thread_local std::unique_ptr<MLIRContext> ctx;
  if (!ctx) {
    ctx = std::make_unique<MLIRContext>(registry, MLIRContext::Threading::DISABLED);
    loadLoweringDialects(ctx.get());
  }
  return *ctx;
}

void compileVariantModule(ModuleOp module, gpu::GPUModuleOp gm, const PTXOptions &ptx,
                          StringRef ptxasPath, CompiledVariant &out) {
  {
    llvm::raw_string_ostream os(out.ir);
    gm->print(os, OpPrintingFlags().useLocalScope());
  }
  FailureOr<std::string> text = compileToPTX(module, ptx);
  if (failed(text))
    return;
  out.ptx = std::move(*text);
  out.ptxHash = sha256Hex(out.ptx);
  if (!ptxasPath.empty()) {
    llvm::Expected<AssembleResult> asmResult = assemblePtx(ptxasPath, out.ptx, ptx.chip);
    if (!asmResult) {
      out.diagnostics += llvm::toString(asmResult.takeError()) + "\n";
      return;
    }
    out.cubin = std::move(asmResult->cubin);
    for (const auto &entry : asmResult->kernels) {
      out.registers = std::max<int>(out.registers, entry.second.registers);
      out.spills = std::max<int>(out.spills, entry.second.spillStores + entry.second.spillLoads);
    }
  }
  out.ok = true;
}

CompiledVariant compileGpuModule(const DialectRegistry &registry, StringRef text,
                                 const PTXOptions &ptx, StringRef ptxasPath) {
  MLIRContext &ctx = compileContext(registry);
  CompiledVariant out;
  std::string diagText;
  llvm::raw_string_ostream diag(diagText);
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    diag << d.getLocation() << ": " << d.str() << "\n";
    return success();
  });
  Block block;
  OpBuilder b(&ctx);
  OwningOpRef<ModuleOp> module = ModuleOp::create(b.getUnknownLoc());
  // The text may be an LLM's kernel read back from the store: too deep, it would overflow the
  // parser's stack.
  if (findExcessiveNesting(text, kDefaultMaxNesting)) {
    out.diagnostics = llvm::formatv("the module's kernels nest brackets deeper than {0} levels\n",
                                    kDefaultMaxNesting)
                          .str();
    return out;
  }
  if (succeeded(parseSourceString(text, &block, ParserConfig(&ctx))) && !block.empty() &&
      isa<gpu::GPUModuleOp>(block.front())) {
    Operation &gm = block.front();
    gm.remove();
    module->getBody()->push_back(&gm);
    compileVariantModule(*module, cast<gpu::GPUModuleOp>(gm), ptx, ptxasPath, out);
  } else {
    diag << "the module's kernels do not parse as one gpu.module\n";
  }
  out.diagnostics = diagText + out.diagnostics;
  return out;
}

CompiledVariant compileVariant(const DialectRegistry &registry, StringRef source,
                               TaskFamily family, const Genome &genome, const PTXOptions &ptx,
                               StringRef ptxasPath) {
  MLIRContext &ctx = compileContext(registry);
  CompiledVariant out;
  std::string diagText;
  llvm::raw_string_ostream diag(diagText);
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    diag << d.str() << "\n";
    return success();
  });
  auto done = [&] {
    out.diagnostics = diagText + out.diagnostics;
    return out;
  };
  OwningOpRef<ModuleOp> src = parseSourceString<ModuleOp>(source, ParserConfig(&ctx));
  if (!src || src->getOps<func::FuncOp>().empty()) {
    diag << "the task source does not parse\n";
    return done();
  }
  func::FuncOp task = *src->getOps<func::FuncOp>().begin();
  out.numInputs = task.getNumArguments();
  OpBuilder b(&ctx);
  OwningOpRef<ModuleOp> module = ModuleOp::create(task.getLoc());
  b.setInsertionPointToEnd(module->getBody());
  auto gm = gpu::GPUModuleOp::create(b, task.getLoc(), "variant");
  FailureOr<LoweredTask> lowered = lowerTask(task, genome.knobs, gm, "k0");
  if (failed(lowered))
    return done();
  applyRewrites(gm, genome.rewrites);
  PassManager tidy(&ctx, gpu::GPUModuleOp::getOperationName());
  tidy.addPass(createCanonicalizerPass());
  tidy.addPass(createCSEPass());
  if (failed(tidy.run(gm)))
    return done();
  out.launches = lowered->launches;
  for (const BufferDesc &b : lowered->scratch)
    out.scratch.push_back({b.name, llvm::to_vector(b.type.getShape()),
                           elementTypeName(b.type.getElementType()), b.zeroInit});
  compileVariantModule(*module, gm, ptx, ptxasPath, out);
  return done();
}

char PausedError::ID = 0;
void PausedError::log(llvm::raw_ostream &os) const {
  os << pending << " LLM prompt(s) wait for replies in the mailbox";
}

int64_t ScratchSpec::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

namespace {

using Clock = std::chrono::steady_clock;

json::Array launchesJson(ArrayRef<KernelLaunch> launches) {
  json::Array out;
  for (const KernelLaunch &l : launches) {
    json::Array args;
    for (unsigned a : l.args)
      args.push_back(static_cast<int64_t>(a));
    out.push_back(json::Object{{"kernel", l.kernel},
                               {"grid", json::Array{l.grid[0], l.grid[1], l.grid[2]}},
                               {"block", json::Array{l.block[0], l.block[1], l.block[2]}},
                               {"dynamic_shared_memory", l.dynamicSharedMemory},
                               {"args", std::move(args)}});
  }
  return out;
}

json::Array scratchJson(ArrayRef<ScratchSpec> scratch) {
  json::Array out;
  for (const ScratchSpec &b : scratch)
    out.push_back(json::Object{{"name", b.name},
                               {"kind", b.elementType},
                               {"elements", b.numElements()},
                               {"zero_init", b.zeroInit}});
  return out;
}

/// The task's own plan: its arguments and results are the buffers (scratch travels with each
/// candidate, since variants may need different scratch).
FailureOr<LaunchPlan> taskPlan(func::FuncOp f, StringRef source) {
  LaunchPlan plan;
  plan.funcName = f.getSymName().str();
  plan.source = source.str();
  for (auto [i, t] : llvm::enumerate(f.getArgumentTypes())) {
    auto tensor = dyn_cast<RankedTensorType>(t);
    if (!tensor)
      return failure();
    plan.buffers.push_back({"arg" + std::to_string(i), BufferRole::Input,
                            MemRefType::get(tensor.getShape(), tensor.getElementType())});
  }
  for (auto [i, t] : llvm::enumerate(f.getResultTypes())) {
    auto tensor = dyn_cast<RankedTensorType>(t);
    if (!tensor)
      return failure();
    plan.buffers.push_back({"result" + std::to_string(i), BufferRole::Output,
                            MemRefType::get(tensor.getShape(), tensor.getElementType())});
  }
  return plan;
}

/// An LLM candidate waiting for its reply (or a repair).
struct Asking {
  int64_t id;
  std::shared_future<llm::Result> reply;
  llm::Request request;
  llm::PromptContext context;
  VariantInfo parent;
  unsigned repairsLeft = 0;
};

struct Pending {
  int64_t id;
  Genome genome;
  std::shared_future<CompiledVariant> compiled;
  /// Set for LLM candidates: what a repair needs.
  std::optional<Asking> llm;
  std::string code;
};

std::string firstLine(StringRef s) { return s.trim().split('\n').first.str(); }

std::string formatEta(double s) {
  if (s < 0 || !std::isfinite(s))
    return "?";
  return llvm::formatv("{0}m{1:2}s", int(s) / 60, int(s) % 60).str();
}

} // namespace

llvm::Expected<CompiledVariant> rebuildCandidate(const RunStore &store, int64_t id,
                                                 const DialectRegistry &registry,
                                                 StringRef taskSource, TaskFamily family,
                                                 const PTXOptions &ptx, StringRef ptxasPath) {
  auto fail = [&](const Twine &msg) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "candidate " + Twine(id) + ": " + msg);
  };
  std::optional<CandidateRecord> c = store.getCandidate(id);
  if (!c)
    return fail("not in the run store");
  CompiledVariant v;
  if (StringRef(c->op).starts_with("llm-")) {
    if (c->parents.empty() || c->ir.empty())
      return fail("an LLM candidate without a parent or IR");
    llvm::Expected<CompiledVariant> parent = rebuildCandidate(
        store, c->parents.front(), registry, taskSource, family, ptx, ptxasPath);
    if (!parent)
      return parent.takeError();
    v = compileLLMVariant(registry, c->ir, VariantInfo::of(*parent), ptx,
                          ptxasPath);
  } else {
    FailureOr<Genome> g = Genome::fromJson(c->knobs, c->rewrites, &compileContext(registry));
    if (failed(g))
      return fail("its genome cannot be read");
    v = compileVariant(registry, taskSource, family, *g, ptx, ptxasPath);
  }
  if (!v.ok)
    return fail("no longer compiles: " + firstLine(v.diagnostics));
  return v;
}

llvm::Expected<TaskResult> evolveTask(const TaskInput &task, MLIRContext *ctx, RunStore &store,
                                      const EvolveOptions &opts, const Ceilings *ceilings,
                                      ProgressLine &progress) {
  auto fail = [&](const Twine &msg) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "task '" + task.name + "': " + msg);
  };
  OwningOpRef<ModuleOp> parsed = parseSourceString<ModuleOp>(task.source, ParserConfig(ctx));
  if (!parsed || parsed->getOps<func::FuncOp>().empty())
    return fail("its source does not parse");
  func::FuncOp func = *parsed->getOps<func::FuncOp>().begin();
  FailureOr<LaunchPlan> plan = taskPlan(func, task.source);
  if (failed(plan))
    return fail("its signature is not all tensors");
  FailureOr<std::unique_ptr<FunctionVerifier>> verifier =
      FunctionVerifier::create(*plan, ctx, func.getLoc(), opts.verify);
  if (failed(verifier))
    return fail("the verifier cannot be prepared (see the diagnostics)");
  const TaskCost &cost = (*verifier)->getCost();

  TaskRecord record;
  if (std::optional<TaskRecord> existing = store.getTask(task.name))
    record = *existing;
  record.name = task.name;
  record.function = task.function;
  record.family = stringifyTaskFamily(task.family).str();
  record.source = task.source;
  record.status = "running";
  if (llvm::Error e = store.upsertTask(record))
    return std::move(e);

  SmallString<256> work(store.getPath());
  llvm::sys::path::remove_filename(work);
  llvm::sys::path::append(work, "work", task.name);
  if (std::error_code ec = llvm::sys::fs::create_directories(work))
    return llvm::errorCodeToError(ec);
  auto writeBinary = [&](int64_t id, const CompiledVariant &v) -> llvm::Expected<json::Object> {
    SmallString<256> file(work);
    bool cubin = !v.cubin.empty();
    llvm::sys::path::append(file, std::to_string(id) + (cubin ? ".cubin" : ".ptx"));
    if (llvm::Error e = llvm::writeToOutput(file, [&](llvm::raw_ostream &os) {
          os << (cubin ? v.cubin : v.ptx);
          return llvm::Error::success();
        }))
      return std::move(e);
    return json::Object{{"id", "#" + std::to_string(id)},
                        {cubin ? "cubin_file" : "ptx_file", file.str().str()},
                        {"ptx_sha256", v.ptxHash},
                        {"launches", launchesJson(v.launches)},
                        {"scratch", scratchJson(v.scratch)}};
  };

  const DialectRegistry &registry = ctx->getDialectRegistry();
  unsigned threads = opts.compileThreads ? opts.compileThreads : llvm::hardware_concurrency().compute_thread_count();
  llvm::DefaultThreadPool pool(llvm::hardware_concurrency(threads));
  auto compile = [&](const Genome &g) {
    return pool.async([&registry, &task, &opts, g] {
      return compileVariant(registry, task.source, task.family, g, opts.ptx, opts.ptxasPath);
    });
  };

  // The baseline: the naive lowering, the reference of every comparison.
  std::vector<CandidateRecord> history = store.getCandidates(task.name);
  std::optional<CandidateRecord> baseline;
  for (const CandidateRecord &c : history)
    if (c.op == "baseline")
      baseline = c;
  Genome baseGenome{task.baselineKnobs, {}};
  CompiledVariant baseCompiled = compile(baseGenome).get();
  if (!baseCompiled.ok)
    return fail("the baseline does not compile:\n" + baseCompiled.diagnostics);
  if (!baseline) {
    CandidateRecord c;
    c.task = task.name;
    c.op = "baseline";
    c.knobs = llvm::formatv("{0}", json::Value(baseGenome.knobsJson(task.family))).str();
    c.rewrites = "[]";
    c.ir = baseCompiled.ir;
    c.ptxHash = baseCompiled.ptxHash;
    c.registers = baseCompiled.registers;
    c.spills = baseCompiled.spills;
    if (llvm::Error e = store.addCandidate(c))
      return std::move(e);
    baseline = c;
  }
  llvm::Expected<json::Object> refJson = writeBinary(baseline->id, baseCompiled);
  if (!refJson)
    return refJson.takeError();
  (*refJson)["reference"] = true;

  json::Object request = (*verifier)->getRequestTemplate();
  WorkerOptions worker = opts.verify.worker;
  worker.workDir = work.str().str();
  llvm::Expected<std::unique_ptr<EvaluationSession>> session =
      EvaluationSession::start(request, *refJson, worker);
  if (!session)
    return session.takeError();
  llvm::Expected<CandidateOutcome> ref = (*session)->referenceOutcome();
  if (!ref)
    return ref.takeError();

  // Records an outcome, judging its time against the roofline.
  auto finish = [&](CandidateRecord &c, const CandidateOutcome &o) -> llvm::Error {
    c.verdict = stringifyVerdict(o.verdict).str();
    c.reason = o.reason;
    if (const json::Object *t = o.result.getObject("timing")) {
      c.timing = llvm::formatv("{0}", json::Value(json::Object(*t))).str();
      c.medianMs = t->getNumber("median_ms").value_or(NAN);
      if (ceilings && o.verdict == Verdict::Valid) {
        RooflineVerdict r = judge(cost, *ceilings, c.medianMs, opts.verify.floorSlack);
        c.roofline = llvm::formatv("{0}", json::Value(r.toJson())).str();
        if (r.belowFloor) {
          c.verdict = "invalid";
          c.reason = llvm::formatv("{0:f4} ms is below the roofline floor of {1:f4} ms: a "
                                   "measurement or correctness bug, not a speedup",
                                   c.medianMs, r.floorMs)
                         .str();
        }
      }
    }
    return store.recordResult(c);
  };
  if (baseline->verdict == "pending")
    if (llvm::Error e = finish(*baseline, *ref))
      return std::move(e);
  if (ref->verdict != Verdict::Valid)
    return fail("its naive baseline is not valid (" + std::string(stringifyVerdict(ref->verdict)) +
                "): " + ref->reason);
  double baselineMs = baseline->medianMs;

  // Populations (one per island), rebuilt from the store when resuming.
  unsigned numIslands = opts.strategy == "islands" ? std::max(1u, opts.islands) : 1;
  unsigned popSize = opts.strategy == "single-best" ? 1 : std::max(1u, opts.population);
  std::vector<Population> islands(numIslands, Population(popSize));
  std::map<int64_t, Genome> genomes;
  std::set<std::string> seenKeys;
  std::map<std::string, int64_t> seenHashes;
  int64_t order = 0;
  unsigned evaluated = 0, valid = 0, created = 0;
  genomes[baseline->id] = baseGenome;
  seenKeys.insert(baseGenome.key(task.family));
  seenHashes[baseCompiled.ptxHash] = baseline->id;
  for (Population &p : islands)
    p.add({baseline->id, baselineMs, true, order++});
  // What LLM prompts draw on: each variant's kernels and launches, earlier thoughts, failures.
  std::map<int64_t, VariantInfo> infos;
  std::map<int64_t, CompiledVariant> compiledById;
  infos[baseline->id] = VariantInfo::of(baseCompiled);
  compiledById[baseline->id] = baseCompiled;
  std::vector<std::pair<int64_t, std::string>> thoughtPool;
  std::deque<std::string> recentFailures;
  auto noteFailure = [&](const CandidateRecord &c) {
    if (c.verdict == "valid" || c.verdict == "pending" || c.verdict == "not-run")
      return;
    recentFailures.push_back(c.verdict + ": " + firstLine(c.reason));
    if (recentFailures.size() > 3)
      recentFailures.pop_front();
  };
  const bool llmOn = opts.llm && opts.llm->client && opts.llm->templates;
  std::vector<CandidateRecord> resubmit, reask;
  for (CandidateRecord &c : store.getCandidates(task.name)) {
    if (c.op == "baseline")
      continue;
    ++created;
    bool fromLLM = StringRef(c.op).starts_with("llm-");
    if (fromLLM) {
      if (!c.thought.empty())
        thoughtPool.push_back({c.id, c.thought});
      if (c.verdict == "pending") {
        reask.push_back(c); // the same request again: the cache or mailbox answers it
        continue;
      }
    } else {
      FailureOr<Genome> g = Genome::fromJson(c.knobs, c.rewrites, ctx);
      if (succeeded(g)) {
        genomes[c.id] = *g;
        seenKeys.insert(g->key(task.family));
      }
    }
    noteFailure(c);
    if (c.verdict == "pending") {
      resubmit.push_back(c);
      continue;
    }
    if (!c.ptxHash.empty())
      seenHashes.emplace(c.ptxHash, c.id);
    if (c.verdict == "not-run" || c.verdict == "compile-error")
      continue;
    ++evaluated;
    bool ok = c.verdict == "valid";
    valid += ok;
    islands[c.island % numIslands].add({c.id, ok ? c.medianMs : 0, ok, order++});
  }

  // replay-run: the old run's candidates of this task, re-created here in their order. A
  // resumed replay maps by position: the k-th candidate made here is the old run's k-th.
  std::vector<CandidateRecord> replaySource;
  std::map<int64_t, int64_t> replayIds; // old id -> id here
  size_t replayNext = 0;
  if (opts.replay) {
    for (CandidateRecord &c : opts.replay->getCandidates(task.name)) {
      if (c.op == "baseline")
        replayIds[c.id] = baseline->id;
      else
        replaySource.push_back(std::move(c));
    }
    for (const CandidateRecord &c : store.getCandidates(task.name))
      if (c.op != "baseline" && replayNext < replaySource.size())
        replayIds[replaySource[replayNext++].id] = c.id;
  }
  const unsigned budget =
      opts.replay ? replaySource.size()
      : opts.maxCandidates ? opts.maxCandidates
                           : opts.generations * std::max(1u, opts.samples);
  const unsigned depth = std::max(2 * opts.samples, threads);
  std::mt19937_64 rng(opts.seed * 0x9E3779B97F4A7C15ull + std::hash<std::string>()(task.name) +
                      created);
  LegalityCache legal(func, task.family);
  std::deque<Genome> seeds; // seedGenomes: tried first by the built-in mutators
  if (!opts.replay)
    for (Genome &g : seedGenomes(baseGenome, task.family))
      seeds.push_back(std::move(g));
  Clock::time_point started = Clock::now();
  std::vector<Pending> compiling;
  std::vector<Asking> asking;
  std::map<size_t, std::pair<int64_t, CompiledVariant>> submitted; // ticket -> candidate
  bool exhausted = false;
  bool llmStopped = false; // the LLM budget is spent (or replay ran out): no more LLM children
  unsigned paused = 0;     // prompts left in a mailbox (llm-wait=0): checkpoint and stop
  std::string llmStopReason;
  unsigned llmSequence = 0;
  std::map<std::string, unsigned> promptSamples; // sample index per identical prompt
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - started).count(); };
  auto timeUp = [&] {
    return !opts.replay && opts.timeBudgetSeconds > 0 && elapsed() > opts.timeBudgetSeconds;
  };

  for (CandidateRecord &c : resubmit)
    if (genomes.count(c.id))
      compiling.push_back({c.id, genomes[c.id], compile(genomes[c.id]), std::nullopt, ""});

  // A variant's kernels and launches (an LLM child keeps its first parent's launches).
  std::function<std::optional<VariantInfo>(int64_t)> infoFor =
      [&](int64_t id) -> std::optional<VariantInfo> {
    auto it = infos.find(id);
    if (it != infos.end())
      return it->second;
    std::optional<CandidateRecord> c = store.getCandidate(id);
    if (!c || c->ir.empty())
      return std::nullopt;
    if (genomes.count(id)) {
      CompiledVariant v = compile(genomes[id]).get();
      if (!v.ok)
        return std::nullopt;
      compiledById[id] = v;
      return infos[id] = VariantInfo::of(v);
    }
    if (c->parents.empty())
      return std::nullopt;
    std::optional<VariantInfo> p = infoFor(c->parents.front());
    if (!p)
      return std::nullopt;
    // Compiled again from its stored IR: its launches are the parent's, changed by any
    // evo.launch the IR carries.
    CompiledVariant v = compileLLMVariant(registry, c->ir, *p, opts.ptx, opts.ptxasPath);
    if (!v.ok)
      return std::nullopt;
    compiledById[id] = v;
    return infos[id] = VariantInfo::of(v);
  };

  // I1 pieces that do not change during the task.
  std::string contract, rooflineText;
  {
    llvm::raw_string_ostream os(contract);
    for (auto [i, b] : llvm::enumerate(plan->buffers)) {
      os << (i ? ", " : "") << b.name << " (" << stringifyBufferRole(b.role) << ", " << b.type
         << ")";
    }
    for (const ScratchSpec &sc : baseCompiled.scratch)
      os << ", scratch " << sc.elementType << "[" << sc.numElements() << "]";
    if (ceilings)
      rooflineText =
          llvm::formatv("It moves {0:f1} MB and computes {1:f2} GFLOP: at least {2:f4} ms on this "
                        "GPU (copy {3:f0} GB/s, FP32 {4:f1} TFLOP/s).",
                        cost.bytes / 1e6, cost.flops / 1e9,
                        judge(cost, *ceilings, 1.0, 1.0).floorMs, ceilings->copyGBps,
                        ceilings->fp32TFlops)
              .str();
  }
  auto launchText = [](ArrayRef<KernelLaunch> launches) {
    std::string s;
    for (auto [i, l] : llvm::enumerate(launches))
      s += llvm::formatv("{0}@{1}: grid [{2}, {3}, {4}], block [{5}, {6}, {7}]",
                         i ? "; " : "", l.kernel, l.grid[0], l.grid[1], l.grid[2], l.block[0],
                         l.block[1], l.block[2])
               .str();
    return s;
  };

  // Proposes one LLM child on `island`; false when no parent can be used.
  auto proposeLLM = [&](unsigned island, int generation) -> llvm::Expected<bool> {
    const LLMSettings &L = *opts.llm;
    Population &pop = islands[island];
    LLMOperator op = chooseLLMOperator(L.strategy, pop.numValid(), llmSequence++);
    std::vector<Member> parents;
    auto bestOverall = [&]() -> std::optional<Member> {
      std::optional<Member> b;
      for (Population &p : islands)
        if (std::optional<Member> m = p.best(); m && (!b || m->ms < b->ms))
          b = m;
      return b;
    };
    if (L.strategy == llm::Strategy::Free || L.strategy == llm::Strategy::Insight) {
      if (std::optional<Member> b = bestOverall())
        parents.push_back(*b);
    } else {
      for (int attempt = 0; attempt < 20 && parents.size() < std::max(1u, op.numParents);
           ++attempt) {
        std::optional<Member> m = pop.select(rng);
        if (!m)
          m = pop.best();
        if (m && llvm::none_of(parents, [&](const Member &p) { return p.id == m->id; }))
          parents.push_back(*m);
      }
      if (L.strategy == llm::Strategy::FunSearch) // versions from worst to best
        llvm::sort(parents, [](const Member &a, const Member &b) { return a.ms > b.ms; });
    }
    if (parents.empty())
      return false;
    std::optional<VariantInfo> first = infoFor(parents.front().id);
    if (!first)
      return false;
    llm::PromptContext pc;
    pc.taskName = task.name;
    pc.family = stringifyTaskFamily(task.family).str();
    pc.gpu = L.gpuName;
    pc.chip = L.chip;
    pc.taskSource = task.source;
    pc.contract = contract;
    pc.launch = launchText(first->launches);
    pc.roofline = rooflineText;
    pc.currentKernel = first->ir;
    pc.currentMs = parents.front().ms;
    pc.baselineMs = baselineMs;
    for (const Member &m : parents) {
      std::optional<VariantInfo> info = infoFor(m.id);
      std::optional<CandidateRecord> rec = store.getCandidate(m.id);
      if (info)
        pc.solutions.push_back({m.id, info->ir, m.ms, rec ? rec->thought : ""});
    }
    if (std::optional<CandidateRecord> rec = store.getCandidate(parents.front().id)) {
      pc.bestThought = rec->thought;
      std::string profile;
      if (rec->registers >= 0)
        profile += llvm::formatv("{0} registers per thread, {1} spilled; ", rec->registers,
                                 std::max(rec->spills, 0))
                       .str();
      if (llvm::Expected<json::Value> r = json::parse(rec->roofline)) {
        if (const json::Object *o = r->getAsObject()) {
          if (std::optional<double> g = o->getNumber("achieved_gbps"))
            profile += llvm::formatv("{0:f0} GB/s", *g).str();
          if (std::optional<double> f = o->getNumber("fraction_of_copy"))
            profile += llvm::formatv(" = {0:f0}% of copy bandwidth", 100 * *f).str();
          if (std::optional<double> t = o->getNumber("achieved_tflops"))
            profile += llvm::formatv(", {0:f2} TFLOP/s", *t).str();
          if (std::optional<double> f = o->getNumber("fraction_of_peak"))
            profile += llvm::formatv(" = {0:f1}% of peak", 100 * *f).str();
        }
      } else {
        llvm::consumeError(r.takeError());
      }
      pc.profile = StringRef(profile).trim().trim(";").str();
    }
    // Three earlier ideas other than the parent's, picked at random.
    std::vector<std::string> others;
    for (auto &[id, t] : thoughtPool)
      if (id != parents.front().id)
        others.push_back(t);
    for (unsigned i = 0; i < 3 && !others.empty(); ++i) {
      size_t k = rng() % others.size();
      pc.thoughts.push_back(others[k]);
      others.erase(others.begin() + k);
    }
    pc.failures.assign(recentFailures.begin(), recentFailures.end());

    llvm::Expected<llm::RenderedPrompt> prompt = llm::renderPrompt(*L.templates, op.templateName, pc);
    if (!prompt)
      return prompt.takeError();
    llm::Request req;
    req.system = prompt->system;
    req.prompt = prompt->user;
    req.temperature = L.temperature;
    req.maxTokens = L.maxTokens;
    req.sample = promptSamples[req.system + "\n" + req.prompt]++;
    req.task = task.name;
    req.strategy = llm::strategyName(L.strategy).str();
    req.op = op.templateName;
    for (const Member &m : parents)
      req.parents.push_back(m.id);

    CandidateRecord c;
    c.task = task.name;
    c.generation = generation;
    c.island = island;
    c.parents = req.parents;
    c.op = "llm-" + op.templateName;
    c.llmKey = L.client->key(req);
    c.llmRequest = llvm::formatv("{0}", json::Value(json::Object{
                                            {"system", req.system},
                                            {"prompt", req.prompt},
                                            {"temperature", req.temperature},
                                            {"max_tokens", req.maxTokens},
                                            {"sample", static_cast<int64_t>(req.sample)},
                                            {"template", op.templateName},
                                            {"strategy", req.strategy},
                                            {"context", pc.toJson()}}))
                       .str();
    if (llvm::Error e = store.addCandidate(c))
      return std::move(e);
    asking.push_back({c.id, L.client->submit(req), req, std::move(pc), *first, L.repairs});
    return true;
  };

  // An LLM candidate's stored request, and the prompt context a repair needs.
  struct StoredRequest {
    llm::Request request;
    llm::PromptContext context;
  };
  auto storedRequest = [&](const CandidateRecord &c) -> std::optional<StoredRequest> {
    llvm::Expected<json::Value> r = json::parse(c.llmRequest);
    if (!r) {
      llvm::consumeError(r.takeError());
      return std::nullopt;
    }
    const json::Object *o = r->getAsObject();
    if (!o || !o->getString("prompt"))
      return std::nullopt;
    StoredRequest s;
    llm::Request &req = s.request;
    req.system = o->getString("system").value_or("").str();
    req.prompt = o->getString("prompt")->str();
    req.temperature = o->getNumber("temperature").value_or(1.0);
    req.maxTokens = o->getInteger("max_tokens").value_or(4096);
    req.sample = static_cast<unsigned>(o->getInteger("sample").value_or(0));
    req.task = task.name;
    req.strategy = o->getString("strategy").value_or("").str();
    req.op = o->getString("template").value_or("").str();
    req.parents = c.parents;
    if (const json::Value *cv = o->get("context")) {
      if (llvm::Expected<llm::PromptContext> pc = llm::PromptContext::fromJson(*cv))
        s.context = std::move(*pc);
      else
        llvm::consumeError(pc.takeError());
    }
    return s;
  };
  // How many repairs a replayed candidate made in the old run (its replies less the first).
  auto replayRepairs = [&](int64_t id) -> std::optional<unsigned> {
    for (auto &[oldId, newId] : replayIds)
      if (newId == id)
        for (const CandidateRecord &o : replaySource)
          if (o.id == oldId)
            return static_cast<unsigned>(std::max<int64_t>(0, o.llmCalls - 1));
    return std::nullopt;
  };

  // Resumed LLM candidates that had no verdict: ask again with the stored request.
  for (CandidateRecord &c : reask) {
    std::optional<VariantInfo> parent =
        c.parents.empty() ? std::nullopt : infoFor(c.parents.front());
    std::optional<StoredRequest> sr = storedRequest(c);
    if (!llmOn || !parent || !sr) {
      c.verdict = "not-run";
      c.reason = llmOn ? "LLM: the stored request cannot be asked again"
                       : "LLM: interrupted, and this run has no LLM configured";
      if (llvm::Error e = store.recordResult(c))
        return std::move(e);
      continue;
    }
    ++promptSamples[sr->request.system + "\n" + sr->request.prompt];
    // The prompt's context lets a reply that cannot be used be repaired after a resume too.
    asking.push_back({c.id, opts.llm->client->submit(sr->request), sr->request,
                      std::move(sr->context), *parent,
                      replayRepairs(c.id).value_or(opts.llm->repairs)});
  }

  // replay-run: re-creates the old run's candidate `old`; false while the parent it needs is
  // still being compiled.
  auto replayOne = [&](const CandidateRecord &old) -> llvm::Expected<bool> {
    CandidateRecord c;
    c.task = task.name;
    c.generation = old.generation;
    c.island = old.island;
    c.op = old.op;
    for (int64_t p : old.parents) {
      auto it = replayIds.find(p);
      if (it == replayIds.end())
        return fail("replay: candidate " + Twine(old.id) + "'s parent " + Twine(p) +
                    " is not an earlier candidate of the replayed run");
      c.parents.push_back(it->second);
    }
    if (!StringRef(old.op).starts_with("llm-")) {
      FailureOr<Genome> g = Genome::fromJson(old.knobs, old.rewrites, ctx);
      if (failed(g))
        return fail("replay: candidate " + Twine(old.id) + "'s genome cannot be read");
      c.knobs = old.knobs;
      c.rewrites = old.rewrites;
      if (llvm::Error e = store.addCandidate(c))
        return std::move(e);
      genomes[c.id] = *g;
      seenKeys.insert(g->key(task.family));
      compiling.push_back({c.id, *g, compile(*g), std::nullopt, ""});
      replayIds[old.id] = c.id;
      return true;
    }
    c.llmKey = old.llmKey;
    c.llmRequest = old.llmRequest;
    std::optional<StoredRequest> sr = storedRequest(old);
    if (!llmOn || old.llmCalls == 0 || !sr) {
      // Never answered there (a budget, an interruption): the same outcome, without asking.
      if (llvm::Error e = store.addCandidate(c))
        return std::move(e);
      c.verdict = "not-run";
      c.reason = old.verdict == "not-run" ? old.reason
                                          : "replay: the replayed run holds no reply for it";
      if (llvm::Error e = store.recordResult(c))
        return std::move(e);
      replayIds[old.id] = c.id;
      return true;
    }
    std::optional<VariantInfo> parent =
        c.parents.empty() ? std::nullopt : infoFor(c.parents.front());
    if (!parent) {
      auto inFlight = [&](int64_t id) {
        return llvm::any_of(compiling, [&](const Pending &p) { return p.id == id; }) ||
               llvm::any_of(asking, [&](const Asking &a) { return a.id == id; });
      };
      if (!c.parents.empty() && inFlight(c.parents.front()))
        return false;
      // Its parent came out differently here (e.g. a reply missing from the cache).
      if (llvm::Error e = store.addCandidate(c))
        return std::move(e);
      c.verdict = "not-run";
      c.reason = "replay: its parent has no kernels here to build on";
      if (llvm::Error e = store.recordResult(c))
        return std::move(e);
      replayIds[old.id] = c.id;
      return true;
    }
    if (llvm::Error e = store.addCandidate(c))
      return std::move(e);
    ++promptSamples[sr->request.system + "\n" + sr->request.prompt];
    asking.push_back({c.id, opts.llm->client->submit(sr->request), sr->request,
                      std::move(sr->context), *parent,
                      static_cast<unsigned>(std::max<int64_t>(0, old.llmCalls - 1))});
    replayIds[old.id] = c.id;
    return true;
  };

  // An LLM reply that cannot be used: ask for a repair while allowed, else record why.
  auto repairOrReject = [&](Asking a, CandidateRecord &c, const std::string &diagnostics,
                            const std::string &code) -> llvm::Error {
    if (a.repairsLeft > 0 && !llmStopped && !a.context.taskName.empty()) {
      llvm::Expected<llm::RenderedPrompt> p =
          llm::renderRepair(*opts.llm->templates, a.context, code, diagnostics);
      if (!p)
        return p.takeError();
      a.request.system = p->system;
      a.request.prompt = p->user;
      a.request.op = "repair";
      --a.repairsLeft;
      a.reply = opts.llm->client->submit(a.request);
      asking.push_back(std::move(a));
      return llvm::Error::success();
    }
    c.verdict = "compile-error";
    c.reason = "LLM reply: " + firstLine(diagnostics);
    c.compileDiagnostics = diagnostics;
    noteFailure(c);
    return store.recordResult(c);
  };

  auto bestSpeedup = [&] {
    double best = baselineMs;
    for (Population &p : islands)
      if (std::optional<Member> m = p.best())
        best = std::min(best, m->ms);
    return best > 0 ? baselineMs / best : 1.0;
  };
  auto report = [&] {
    unsigned gen = created / std::max(1u, opts.samples);
    double rate = evaluated ? elapsed() / evaluated : 0;
    progress.update(task.name, gen, budget / std::max(1u, opts.samples), evaluated, valid,
                    bestSpeedup(), rate * (budget > created ? budget - created : 0));
  };

  while (true) {
    // Keep the compiler and the GPU busy: generate while fewer than `depth` are in flight.
    while (!exhausted && created < budget && !timeUp() &&
           compiling.size() + asking.size() + (*session)->pending() < depth) {
      if (opts.replay) {
        if (replayNext >= replaySource.size()) {
          exhausted = true;
          break;
        }
        llvm::Expected<bool> made = replayOne(replaySource[replayNext]);
        if (!made)
          return made.takeError();
        if (!*made)
          break; // its parent is still compiling: after the next poll
        ++replayNext;
        ++created;
        continue;
      }
      unsigned island = created % numIslands;
      int generation = created / std::max(1u, opts.samples) + 1;
      if (numIslands > 1 && opts.migrateEvery && created % (opts.samples * opts.migrateEvery) == 0 &&
          created > 0)
        for (unsigned i = 0; i < numIslands; ++i)
          if (std::optional<Member> m = islands[i].best())
            islands[(i + 1) % numIslands].add(*m);
      if (llmOn && !llmStopped && !paused &&
          !(opts.llm->mix > 0 && std::uniform_real_distribution<double>(0, 1)(rng) < opts.llm->mix)) {
        llvm::Expected<bool> made = proposeLLM(island, generation);
        if (!made)
          return made.takeError();
        if (*made) {
          ++created;
          continue;
        }
      }
      if (llmOn && (opts.llm->mix <= 0 || paused)) {
        // LLM only: nothing to do until replies come back (or the LLM budget stopped it).
        if (llmStopped || paused)
          exhausted = true;
        break;
      }
      Population &pop = islands[island];
      std::optional<Genome> child;
      std::string op;
      std::vector<int64_t> parents;
      while (!child && !seeds.empty()) {
        Genome g = std::move(seeds.front());
        seeds.pop_front();
        if (!seenKeys.count(g.key(task.family)) && legal.isLegal(g)) {
          child = std::move(g);
          op = "knob-seed";
          parents = {baseline->id};
        }
      }
      for (int attempt = 0; attempt < 30 && !child; ++attempt) {
        std::optional<Member> p1 =
            opts.strategy == "single-best" ? pop.best() : pop.select(rng);
        if (!p1)
          break;
        if (!genomes.count(p1->id))
          continue; // an LLM-made member: the built-in mutators need knobs
        unsigned roll = rng() % 10;
        std::optional<Genome> g;
        if (roll < 3 && pop.numValid() >= 2 && opts.strategy != "single-best") {
          std::optional<Member> p2 = pop.select(rng);
          if (p2 && p2->id != p1->id && genomes.count(p2->id)) {
            g = crossoverKnobs(genomes[p1->id], genomes[p2->id], task.family, legal, rng);
            op = "knob-crossover";
            parents = {p1->id, p2->id};
          }
        } else if (roll < 5) {
          g = mutateUnroll(genomes[p1->id], task.family, legal, rng);
          op = "ir-unroll";
          parents = {p1->id};
        }
        if (!g) {
          g = mutateKnob(genomes[p1->id], task.family, legal, rng);
          op = "knob-mutate";
          parents = {p1->id};
        }
        if (g && !seenKeys.count(g->key(task.family)))
          child = g;
      }
      // The population's neighbourhood is explored: step further, from any earlier genome and
      // with two knob changes, before calling the space exhausted.
      for (int attempt = 0; attempt < 200 && !child && !genomes.empty(); ++attempt) {
        auto it = std::next(genomes.begin(), rng() % genomes.size());
        std::optional<Genome> g = mutateKnob(it->second, task.family, legal, rng);
        if (g && seenKeys.count(g->key(task.family)))
          g = mutateKnob(*g, task.family, legal, rng);
        if (g && !seenKeys.count(g->key(task.family))) {
          child = g;
          op = "knob-mutate";
          parents = {it->first};
        }
      }
      if (!child) {
        exhausted = true;
        break;
      }
      seenKeys.insert(child->key(task.family));
      CandidateRecord c;
      c.task = task.name;
      c.generation = generation;
      c.island = island;
      c.parents = parents;
      c.op = op;
      c.knobs = llvm::formatv("{0}", json::Value(child->knobsJson(task.family))).str();
      c.rewrites = llvm::formatv("{0}", json::Value(child->rewritesJson())).str();
      if (llvm::Error e = store.addCandidate(c))
        return std::move(e);
      genomes[c.id] = *child;
      compiling.push_back({c.id, *child, compile(*child), std::nullopt, ""});
      ++created;
    }

    // LLM replies: parse, then compile on the pool (or ask for a repair, or record why not).
    for (size_t i = 0; i < asking.size();) {
      if (asking[i].reply.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
        ++i;
        continue;
      }
      Asking a = std::move(asking[i]);
      asking.erase(asking.begin() + i);
      const llm::Result &r = a.reply.get();
      std::optional<CandidateRecord> c = store.getCandidate(a.id);
      if (!c)
        return fail("candidate " + Twine(a.id) + " vanished from the store");
      if (r.status == llm::Result::Status::Pending) {
        ++paused; // stays pending in the store; a resumed run asks again
        continue;
      }
      if (!r.ok()) {
        if (r.status == llm::Result::Status::BudgetExhausted ||
            r.status == llm::Result::Status::ReplayMiss) {
          llmStopped = true;
          llmStopReason = r.error;
        }
        c->verdict = "not-run";
        c->reason = "LLM: " + r.error;
        if (llvm::Error e = store.recordResult(*c))
          return std::move(e);
        continue;
      }
      llm::ParsedReply parsed = llm::parseReply(r.reply.text);
      c->promptTokens += r.reply.usage.promptTokens;
      c->completionTokens += r.reply.usage.completionTokens;
      c->costUsd += r.reply.usage.cost;
      c->llmCalls += 1;
      if (!parsed.thought.empty()) {
        c->thought = parsed.thought;
        thoughtPool.push_back({c->id, parsed.thought});
      }
      if (llvm::Error e = store.recordLLM(*c))
        return std::move(e);
      if (!parsed.hasCode()) {
        std::string excerpt = StringRef(r.reply.text).trim().take_front(120).str();
        if (llvm::Error e = repairOrReject(std::move(a), *c,
                                           "the reply holds no MLIR code block (it begins: \"" +
                                               excerpt + "\")",
                                           ""))
          return e;
        continue;
      }
      VariantInfo parent = a.parent;
      std::string code = parsed.code;
      auto future = pool.async([&registry, &opts, code, parent] {
        return compileLLMVariant(registry, code, parent, opts.ptx, opts.ptxasPath);
      });
      compiling.push_back({a.id, Genome(), future, std::move(a), code});
    }

    // Compiled variants go to the GPU (or are settled here: compile errors, duplicates).
    for (size_t i = 0; i < compiling.size();) {
      if (compiling[i].compiled.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
        ++i;
        continue;
      }
      Pending p = compiling[i];
      compiling.erase(compiling.begin() + i);
      const CompiledVariant &v = p.compiled.get();
      std::optional<CandidateRecord> c = store.getCandidate(p.id);
      if (!c)
        return fail("candidate " + Twine(p.id) + " vanished from the store");
      if (!v.ok && p.llm) {
        if (llvm::Error e = repairOrReject(std::move(*p.llm), *c, v.diagnostics, p.code))
          return e;
        continue;
      }
      c->ir = v.ir;
      c->ptxHash = v.ptxHash;
      c->compileDiagnostics = v.diagnostics;
      c->registers = v.registers;
      c->spills = v.spills;
      if (!v.ok) {
        c->verdict = "compile-error";
        c->reason = StringRef(v.diagnostics).split('\n').first.str();
        if (llvm::Error e = store.recordResult(*c))
          return std::move(e);
        continue;
      }
      infos[p.id] = VariantInfo::of(v);
      compiledById[p.id] = v;
      auto dup = seenHashes.find(v.ptxHash);
      if (dup != seenHashes.end()) {
        c->verdict = "not-run";
        c->reason = "identical PTX to candidate " + std::to_string(dup->second);
        if (llvm::Error e = store.recordResult(*c))
          return std::move(e);
        continue;
      }
      seenHashes[v.ptxHash] = p.id;
      if (llvm::Error e = store.recordResult(*c)) // still pending: IR and hash are now known
        return std::move(e);
      llvm::Expected<json::Object> cj = writeBinary(p.id, v);
      if (!cj)
        return cj.takeError();
      size_t ticket = (*session)->submit(std::move(*cj));
      submitted[ticket] = {p.id, v};
    }

    bool generating = !exhausted && created < budget && !timeUp();
    if (compiling.empty() && asking.empty() && (*session)->pending() == 0 && !generating)
      break;
    // LLM-only runs whose replies are all in and that cannot make more: done.
    if (compiling.empty() && asking.empty() && (*session)->pending() == 0 && llmOn &&
        (opts.llm->mix <= 0 || paused) && (llmStopped || paused))
      break;
    // Nothing on the worker: poll() returns at once, and the pool's futures are deferred ones
    // (wait_for returns at once too), so sleep a little instead of spinning while LLM replies
    // (a mailbox's llm-wait can keep them out for minutes) or compiles are awaited.
    if ((*session)->pending() == 0 && (!asking.empty() || !compiling.empty()))
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    auto done = (*session)->poll(compiling.empty() && asking.empty() ? 0.5 : 0.02);
    if (!done)
      return done.takeError();
    for (auto &[ticket, outcome] : *done) {
      auto it = submitted.find(ticket);
      if (it == submitted.end())
        continue;
      std::optional<CandidateRecord> c = store.getCandidate(it->second.first);
      if (!c)
        continue;
      if (llvm::Error e = finish(*c, outcome))
        return std::move(e);
      ++evaluated;
      bool ok = c->verdict == "valid";
      valid += ok;
      noteFailure(*c);
      islands[c->island % numIslands].add({c->id, ok ? c->medianMs : 0, ok, order++});
      submitted.erase(it);
    }
    report();
  }
  (*session).reset(); // ends the worker (its destructor sends "end")
  if (paused) {
    progress.finish();
    return llvm::make_error<PausedError>(paused);
  }

  // Finalists: the best few, re-measured interleaved with the baseline, more repetitions.
  std::vector<CandidateRecord> all = store.getCandidates(task.name);
  std::vector<CandidateRecord> ranked;
  for (const CandidateRecord &c : all)
    if (c.verdict == "valid" && c.op != "baseline" && std::isfinite(c.medianMs))
      ranked.push_back(c);
  std::sort(ranked.begin(), ranked.end(),
            [](const CandidateRecord &a, const CandidateRecord &b) { return a.medianMs < b.medianMs; });
  if (ranked.size() > opts.finalists)
    ranked.resize(opts.finalists);
  std::vector<CandidateRecord> finalists = {*store.getCandidate(baseline->id)};
  finalists.insert(finalists.end(), ranked.begin(), ranked.end());
  std::map<int64_t, CompiledVariant> binaries;
  binaries[baseline->id] = baseCompiled;
  if (finalists.size() > 1) {
    json::Object timeReq = request;
    timeReq["mode"] = "time";
    timeReq["rounds"] = static_cast<int64_t>(opts.finalRounds);
    // The template's timing (its inputs, with the oracle's values for them, and the launch
    // checks) with the finalists' run counts: every re-measured launch is accountable too.
    json::Object timing;
    if (const json::Object *t = request.getObject(protocol::kTiming))
      timing = *t;
    timing[protocol::kEnabled] = true;
    timing[protocol::kWarmup] = static_cast<int64_t>(opts.verify.warmup);
    timing[protocol::kRuns] = static_cast<int64_t>(opts.finalRuns);
    timing[protocol::kRepeats] = 1;
    timing[protocol::kFlushBytes] = static_cast<int64_t>(opts.verify.flushBytes);
    timeReq["timing"] = std::move(timing);
    json::Array cands;
    for (const CandidateRecord &f : finalists) {
      if (!binaries.count(f.id) && compiledById.count(f.id))
        binaries[f.id] = compiledById[f.id];
      if (!binaries.count(f.id)) {
        // From an earlier session: compiled again (LLM code from its stored IR).
        if (!infoFor(f.id) || !compiledById.count(f.id))
          return fail("finalist " + Twine(f.id) + " no longer compiles");
        binaries[f.id] = compiledById[f.id];
      }
      llvm::Expected<json::Object> cj = writeBinary(f.id, binaries[f.id]);
      if (!cj)
        return cj.takeError();
      // The baseline (first) is the reference the others' timed launches are compared with.
      (*cj)[protocol::kReference] = f.id == baseline->id;
      cands.push_back(std::move(*cj));
    }
    timeReq["candidates"] = std::move(cands);
    llvm::Expected<std::vector<json::Object>> events =
        runWorkerOnce(timeReq, worker, 60 + 5.0 * finalists.size() * opts.finalRounds);
    if (!events)
      return events.takeError();
    // A finalist wins only with a valid re-measurement (its timed launches checked, its time
    // not below the roofline floor); one that fails is invalid from now on.
    std::vector<std::string> failedFinal(finalists.size(),
                                         "the re-measurement returned no result");
    for (json::Object &ev : *events) {
      if (ev.getString(protocol::kEvent) != StringRef(protocol::kEventResult))
        continue;
      std::optional<int64_t> i = ev.getInteger(protocol::kCandidate);
      if (!i || *i < 0 || size_t(*i) >= finalists.size())
        continue;
      const json::Object *t = ev.getObject(protocol::kTiming);
      std::string reason = ev.getString(protocol::kReason).value_or("").str();
      double ms = t ? t->getNumber(protocol::kMedianMs).value_or(NAN) : NAN;
      bool ok = ev.getString(protocol::kVerdict) == StringRef(protocol::kVerdictValid) &&
                std::isfinite(ms);
      if (ok && ceilings) {
        RooflineVerdict r = judge(cost, *ceilings, ms, opts.verify.floorSlack);
        if (r.belowFloor) {
          ok = false;
          reason = llvm::formatv("re-measured {0:f4} ms is below the roofline floor of {1:f4} ms: "
                                 "a measurement or correctness bug, not a speedup",
                                 ms, r.floorMs)
                       .str();
        }
      }
      if (!ok) {
        failedFinal[*i] = reason.empty() ? "the re-measurement failed" : reason;
        continue;
      }
      failedFinal[*i].clear();
      finalists[*i].finalMedianMs = ms;
      if (llvm::Error e = store.recordFinal(finalists[*i].id, ms))
        return std::move(e);
    }
    if (!failedFinal.front().empty())
      return fail("its naive baseline failed the finalists' re-measurement: " +
                  failedFinal.front());
    std::vector<CandidateRecord> passed;
    for (size_t i = 0; i < finalists.size(); ++i) {
      if (failedFinal[i].empty()) {
        passed.push_back(finalists[i]);
        continue;
      }
      finalists[i].verdict = "invalid";
      finalists[i].reason = "finalists' re-measurement: " + failedFinal[i];
      if (llvm::Error e = store.recordResult(finalists[i]))
        return std::move(e);
      valid -= valid > 0;
    }
    finalists = std::move(passed);
  }
  // The winner: the lowest re-measured time (exploration time when there were no finalists).
  const CandidateRecord *best = &finalists.front();
  auto timeOf = [](const CandidateRecord &c) {
    return std::isfinite(c.finalMedianMs) ? c.finalMedianMs : c.medianMs;
  };
  for (const CandidateRecord &f : finalists)
    if (timeOf(f) < timeOf(*best))
      best = &f;
  if (!binaries.count(best->id))
    return fail("the winner has no binary");

  record.status = "done";
  record.baselineId = baseline->id;
  record.bestId = best->id;
  record.generationsDone = created / std::max(1u, opts.samples);
  if (llvm::Error e = store.upsertTask(record))
    return std::move(e);
  progress.finish();

  TaskResult result;
  result.task = task.name;
  result.baselineId = baseline->id;
  result.bestId = best->id;
  result.baselineMs = timeOf(finalists.front());
  result.bestMs = timeOf(*best);
  result.bestIr = binaries[best->id].ir;
  result.bestLaunches = binaries[best->id].launches;
  result.bestScratch = binaries[best->id].scratch;
  result.bestKnobs = best->knobs;
  result.evaluated = evaluated;
  result.valid = valid;
  for (const CandidateRecord &old : replaySource) {
    ++result.replayed;
    auto it = replayIds.find(old.id);
    std::optional<CandidateRecord> now =
        it == replayIds.end() ? std::nullopt : store.getCandidate(it->second);
    bool same = now && now->op == old.op && now->ptxHash == old.ptxHash &&
                (!old.ptxHash.empty() || now->verdict == old.verdict);
    if (!same)
      result.replayDiffer.push_back(old.id);
  }
  return result;
}

} // namespace evo
