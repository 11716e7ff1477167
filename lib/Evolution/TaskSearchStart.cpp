//===- TaskSearchStart.cpp - a task's search, started or resumed ---------------===//
//
// What TaskSearch::run does once before its loop: the task's source, plan and verifier; the
// baseline and the worker sessions of every GPU it uses; the populations rebuilt from the store
// and the candidates a resumed run left pending. docs/evolution.md, "Resume and replay".
//
//===----------------------------------------------------------------------===//

#include "evo/Evaluation/WorkerProtocol.h"
#include "evo/Evolution/Proposers.h"
#include "evo/Evolution/TaskSearch.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include <cmath>

using namespace mlir;
namespace json = llvm::json;

namespace evo {

namespace {
/// The task's own plan: its arguments and results are the buffers (scratch travels with each
/// candidate, since variants may need different scratch).
FailureOr<LaunchPlan> planOfTask(func::FuncOp f, StringRef source) {
  LaunchPlan plan;
  plan.funcName = f.getSymName().str();
  plan.source = source.str();
  // Tensors, and scalar arguments as by-value inputs (the kernels' ABI in the plan).
  auto addBuffers = [&](TypeRange types, StringRef prefix, BufferRole role) {
    for (auto [i, t] : llvm::enumerate(types)) {
      std::optional<BufferDesc> b = argumentBuffer(t, prefix.str() + std::to_string(i), role);
      if (!b)
        return false;
      plan.buffers.push_back(std::move(*b));
    }
    return true;
  };
  if (!addBuffers(f.getArgumentTypes(), "arg", BufferRole::Input) ||
      !addBuffers(f.getResultTypes(), "result", BufferRole::Output))
    return failure();
  return plan;
}
} // namespace

TaskCost estimateTaskCost(const TaskInput &task) {
  if (!task.func)
    return {};
  FailureOr<LaunchPlan> plan = planOfTask(task.func, task.source);
  return succeeded(plan) ? estimateCost(task.func, *plan) : TaskCost{};
}

/// The task's source (parsed once), plan and verifier; the task is marked running.
llvm::Error TaskSearch::prepare() {
  func = taskIn.func;
  if (!func) {
    parsed = parseSourceString<ModuleOp>(taskIn.source, ParserConfig(ctx));
    if (!parsed || parsed->getOps<func::FuncOp>().empty())
      return error("its source does not parse");
    func = *parsed->getOps<func::FuncOp>().begin();
  }
  FailureOr<LaunchPlan> p = planOfTask(func, taskIn.source);
  if (failed(p))
    return error("its signature is not all tensors and scalar arguments");
  plan = std::move(*p);
  FailureOr<std::unique_ptr<FunctionVerifier>> v =
      FunctionVerifier::create(plan, ctx, func.getLoc(), opts.verify);
  if (failed(v))
    return error("the verifier cannot be prepared (see the diagnostics)");
  verifier = std::move(*v);

  if (std::optional<TaskRecord> existing = runStore.getTask(taskIn.name))
    record = *existing;
  record.name = taskIn.name;
  record.function = taskIn.function;
  record.family = stringifyTaskFamily(taskIn.family).str();
  record.source = taskIn.source;
  record.status = "running";
  if (llvm::Error e = runStore.upsertTask(record))
    return e;

  workDir = runStore.getPath();
  llvm::sys::path::remove_filename(workDir);
  llvm::sys::path::append(workDir, "work", taskIn.name);
  if (std::error_code ec = llvm::sys::fs::create_directories(workDir))
    return llvm::errorCodeToError(ec);
  threads = opts.compileThreads ? opts.compileThreads
                                : llvm::hardware_concurrency().compute_thread_count();
  pool = std::make_unique<llvm::DefaultThreadPool>(llvm::hardware_concurrency(threads));
  return llvm::Error::success();
}

/// The baseline: the naive lowering, the reference of every comparison, stored (once) and
/// measured by the worker session the search then keeps.
llvm::Error TaskSearch::startBaseline() {
  for (const CandidateRecord &c : runStore.getCandidates(taskIn.name))
    if (c.op == "baseline")
      baseline = c;
  baseGenome = Genome{taskIn.baselineKnobs, {}};
  baseCompiled = startCompile(baseGenome).get();
  if (!baseCompiled.ok)
    return error("the baseline does not compile:\n" + baseCompiled.diagnostics);
  if (!baseline) {
    CandidateRecord c;
    c.task = taskIn.name;
    c.op = "baseline";
    c.knobs = llvm::formatv("{0}", json::Value(baseGenome.knobsJson(taskIn.family))).str();
    c.rewrites = "[]";
    c.ir = baseCompiled.ir;
    c.ptxHash = baseCompiled.ptxHash;
    c.registers = baseCompiled.registers;
    c.spills = baseCompiled.spills;
    if (llvm::Error e = runStore.addCandidate(c))
      return e;
    baseline = c;
  }
  llvm::Expected<json::Object> refJson = writeBinary(baseline->id, baseCompiled);
  if (!refJson)
    return refJson.takeError();
  (*refJson)["reference"] = true;

  request = verifier->getRequestTemplate();
  worker = opts.verify.worker;
  worker.workDir = workDir.str().str();
  llvm::Expected<std::unique_ptr<EvaluationSession>> s =
      EvaluationSession::start(request, *refJson, worker);
  if (!s)
    return s.takeError();
  session = std::move(*s);
  llvm::Expected<CandidateOutcome> ref = session->referenceOutcome();
  if (!ref)
    return ref.takeError();
  if (baseline->verdict == "pending")
    if (llvm::Error e = recordOutcome(*baseline, *ref))
      return e;
  if (ref->verdict != Verdict::Valid)
    return error("its naive baseline is not valid (" +
                 std::string(stringifyVerdict(ref->verdict)) + "): " + ref->reason);
  baselineTime = baseline->medianMs;
  return startLanes(*refJson);
}

/// Lane 0 is the session above; each spread GPU gets a worker of its own, whose first job is
/// the baseline (its reference for the outputs, and its time there for the ranking).
llvm::Error TaskSearch::startLanes(const json::Object &reference) {
  lanes.clear();
  lanes.push_back({opts.verify.device, ceilings, nullptr, baselineTime});
  for (auto [device, c] : opts.spreadDevices) {
    json::Object req = request;
    req[protocol::kDevice] = device;
    llvm::Expected<std::unique_ptr<EvaluationSession>> s =
        EvaluationSession::start(req, reference, worker);
    if (!s)
      return s.takeError();
    llvm::Expected<CandidateOutcome> ref = (*s)->referenceOutcome();
    if (!ref)
      return ref.takeError();
    const json::Object *t = ref->result.getObject("timing");
    double ms = t ? t->getNumber("median_ms").value_or(NAN) : NAN;
    if (ref->verdict != Verdict::Valid || !(ms > 0))
      return error("its naive baseline is not valid on GPU " + llvm::Twine(device) + " (" +
                   stringifyVerdict(ref->verdict) + "): " + ref->reason);
    lanes.push_back({device, c, std::move(*s), ms});
  }
  return llvm::Error::success();
}

/// Populations (one per island) seeded with the baseline and rebuilt from the store when
/// resuming; candidates left pending are collected to be compiled or asked again.
llvm::Error TaskSearch::restore() {
  numIslands = opts.strategy == SearchStrategy::Islands ? std::max(1u, opts.islands) : 1;
  unsigned popSize = opts.strategy == SearchStrategy::SingleBest ? 1 : std::max(1u, opts.population);
  pops.assign(numIslands, Population(popSize));
  genomeOf[baseline->id] = baseGenome;
  seenKeys.insert(baseGenome.key(taskIn.family));
  seenHashes[baseCompiled.ptxHash] = baseline->id;
  for (Population &p : pops)
    p.add({baseline->id, baselineTime, true, order++});
  infos[baseline->id] = VariantInfo::of(baseCompiled);
  compiledById[baseline->id] = baseCompiled;
  for (CandidateRecord &c : runStore.getCandidates(taskIn.name)) {
    if (c.op == "baseline")
      continue;
    ++created;
    generationNo = std::max(generationNo, c.generation);
    if (StringRef(c.op).starts_with("llm-")) {
      if (!c.thought.empty() && llm)
        llm->noteThought(c.id, c.thought);
      if (c.verdict == "pending") {
        reask.push_back(c); // the same request again: the cache or mailbox answers it
        continue;
      }
    } else {
      FailureOr<Genome> g = Genome::fromJson(c.knobs, c.rewrites, ctx);
      if (succeeded(g))
        addGenome(c.id, *g);
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
    pops[c.island % numIslands].add({c.id, ok ? rankTime(c) : 0, ok, order++});
  }
  return llvm::Error::success();
}

/// Resumed candidates without a verdict: built-in ones are compiled again, LLM ones asked
/// again with their stored request (the cache or the mailbox answers).
llvm::Error TaskSearch::resumePending() {
  for (CandidateRecord &c : resubmit)
    if (genomeOf.count(c.id))
      compileGenome(c.id, genomeOf[c.id]);
  for (CandidateRecord &c : reask) {
    std::optional<VariantInfo> parent =
        c.parents.empty() ? std::nullopt : infoFor(c.parents.front());
    std::optional<StoredRequest> sr = LLMProposer::storedRequest(c, taskIn.name);
    if (!llm || !parent || !sr) {
      c.verdict = "not-run";
      c.reason = llm ? "LLM: the stored request cannot be asked again"
                     : "LLM: interrupted, and this run has no LLM configured";
      if (llvm::Error e = runStore.recordResult(c))
        return e;
      continue;
    }
    // The prompt's context lets a reply that cannot be used be repaired after a resume too.
    std::optional<unsigned> repairs = replay ? replay->repairsOf(c.id) : std::nullopt;
    llm->ask(c.id, std::move(*sr), *parent, repairs.value_or(opts.llm->repairs));
  }
  return llvm::Error::success();
}

} // namespace evo
