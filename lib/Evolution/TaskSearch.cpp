//===- TaskSearch.cpp - the evolutionary search over one task's variants -------===//
//
// The search loop and its state: the populations, the compile pool, the GPU lanes. Starting or
// resuming it (the baseline, the populations rebuilt from the store) is TaskSearchStart.cpp's;
// what to try next is the proposers' business (BuiltinProposer.cpp, LLMProposer.cpp,
// ReplayProposer.cpp), the re-measurement at the end is Finalists.cpp's, compiling is
// VariantCompiler.cpp's. docs/evolution.md.
//
//===----------------------------------------------------------------------===//

#include "evo/Evolution/TaskSearch.h"
#include "evo/Evolution/Finalists.h"
#include "evo/Evolution/Proposers.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include <cmath>
#include <thread>

using namespace mlir;
namespace json = llvm::json;

namespace evo {

char PausedError::ID = 0;
void PausedError::log(llvm::raw_ostream &os) const {
  os << pending << " LLM prompt(s) wait for replies in the mailbox";
}

Proposer::~Proposer() = default;

llvm::Error Proposer::compileFailed(CandidateRecord &c, const std::string &,
                                    std::unique_ptr<ProposalState>) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "internal: candidate " + llvm::Twine(c.id) +
                                     " came back to a proposer that keeps no state");
}

llvm::Expected<TaskResult> evolveTask(const TaskInput &task, MLIRContext *ctx, RunStore &store,
                                      const EvolveOptions &opts, const Ceilings *ceilings,
                                      ProgressLine &progress) {
  TaskSearch search(task, ctx, store, opts, ceilings, progress);
  return search.run();
}

namespace {
using Clock = std::chrono::steady_clock;

std::string firstLine(StringRef s) { return s.trim().split('\n').first.str(); }
} // namespace

TaskSearch::TaskSearch(const TaskInput &task, MLIRContext *ctx, RunStore &store,
                       const EvolveOptions &options, const Ceilings *ceilings,
                       ProgressLine &progress)
    : taskIn(task), ctx(ctx), runStore(store), opts(options), ceilings(ceilings),
      progress(progress) {}

TaskSearch::~TaskSearch() = default;

const TaskCost &TaskSearch::cost() const { return verifier->getCost(); }

llvm::Error TaskSearch::error(const llvm::Twine &msg) const {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "task '" + taskIn.name + "': " + msg);
}

bool TaskSearch::seen(const Genome &g) const { return seenKeys.count(g.key(taskIn.family)); }

void TaskSearch::addGenome(int64_t id, const Genome &g) {
  genomeOf[id] = g;
  seenKeys.insert(g.key(taskIn.family));
}

void TaskSearch::noteFailure(const CandidateRecord &c) {
  if (c.verdict == "valid" || c.verdict == "pending" || c.verdict == "not-run")
    return;
  failures.push_back(c.verdict + ": " + firstLine(c.reason));
  if (failures.size() > 3)
    failures.pop_front();
}

double TaskSearch::elapsed() const {
  return std::chrono::duration<double>(Clock::now() - started).count();
}

bool TaskSearch::timeUp() const {
  if (opts.replay || opts.timeBudgetSeconds <= 0 || elapsed() <= opts.timeBudgetSeconds)
    return false;
  // A spent budget still lets the first generation (the family's seeds come first) be proposed:
  // a bounded overrun, so that a small task searched after a big one that overran the run's
  // budget is not left at its naive baseline (a 0-d mean after a rows task: 0.52 ms naive,
  // seeds reach ~0.01 ms; docs/bench.md).
  return created >= std::min(budget, std::max(1u, opts.samples));
}

std::shared_future<CompiledVariant> TaskSearch::startCompile(const Genome &g) {
  const DialectRegistry *registry = &ctx->getDialectRegistry();
  const TaskInput *task = &taskIn;
  const EvolveOptions *o = &opts;
  return pool->async([registry, task, o, g] {
    return compileVariant(*registry, task->source, task->family, g, o->ptx, o->ptxasPath);
  });
}

void TaskSearch::compileGenome(int64_t id, const Genome &g) {
  compiling.push_back({id, startCompile(g), nullptr, nullptr});
}

void TaskSearch::compileCode(int64_t id, std::string code, VariantInfo parent, Proposer *owner,
                             std::unique_ptr<ProposalState> state) {
  const DialectRegistry *registry = &ctx->getDialectRegistry();
  const EvolveOptions *o = &opts;
  auto future = pool->async([registry, o, code = std::move(code), parent = std::move(parent)] {
    return compileLLMVariant(*registry, code, parent, o->ptx, o->ptxasPath);
  });
  compiling.push_back({id, future, owner, std::move(state)});
}

bool TaskSearch::inFlight(int64_t id) const {
  return llvm::any_of(compiling, [&](const Pending &p) { return p.id == id; }) ||
         (llm && llm->holds(id));
}

std::optional<VariantInfo> TaskSearch::infoFor(int64_t id) {
  auto it = infos.find(id);
  if (it != infos.end())
    return it->second;
  std::optional<CandidateRecord> c = runStore.getCandidate(id);
  if (!c || c->ir.empty())
    return std::nullopt;
  if (genomeOf.count(id)) {
    CompiledVariant v = startCompile(genomeOf[id]).get();
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
  CompiledVariant v =
      compileLLMVariant(ctx->getDialectRegistry(), c->ir, *p, opts.ptx, opts.ptxasPath);
  if (!v.ok)
    return std::nullopt;
  compiledById[id] = v;
  return infos[id] = VariantInfo::of(v);
}

llvm::Expected<json::Object> TaskSearch::writeBinary(int64_t id, const CompiledVariant &v) {
  SmallString<256> file(workDir);
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
}

/// Records an outcome, judging its time against the roofline of the GPU that measured it.
llvm::Error TaskSearch::recordOutcome(CandidateRecord &c, const CandidateOutcome &o,
                                      unsigned lane) {
  c.verdict = stringifyVerdict(o.verdict).str();
  c.reason = o.reason;
  const Ceilings *laneCeilings = lane < lanes.size() ? lanes[lane].ceilings : ceilings;
  if (const json::Object *t = o.result.getObject("timing")) {
    json::Object timing = *t;
    if (lanes.size() > 1) // spread over GPUs: which one measured it
      timing["device"] = lanes[lane].device;
    c.timing = llvm::formatv("{0}", json::Value(std::move(timing))).str();
    c.medianMs = t->getNumber("median_ms").value_or(NAN);
    if (laneCeilings && o.verdict == Verdict::Valid) {
      RooflineVerdict r = judge(cost(), *laneCeilings, c.medianMs, opts.verify.floorSlack);
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
  return runStore.recordResult(c);
}

/// A valid candidate's time for ranking: measured on lane 0's GPU, or scaled by the ratio of
/// the baselines when another GPU measured it (timing's "device").
double TaskSearch::rankTime(const CandidateRecord &c) const {
  if (lanes.size() < 2)
    return c.medianMs;
  llvm::Expected<json::Value> t = json::parse(c.timing);
  if (!t) {
    llvm::consumeError(t.takeError());
    return c.medianMs;
  }
  std::optional<int64_t> device =
      t->getAsObject() ? t->getAsObject()->getInteger("device") : std::nullopt;
  for (const Lane &l : llvm::drop_begin(lanes))
    if (device && *device == l.device)
      return c.medianMs * baselineTime / l.baselineMs;
  return c.medianMs;
}

/// The task's name on the progress line; with several GPUs, also which ones measure it.
std::string TaskSearch::progressName() const {
  if (!opts.showDevice)
    return taskIn.name;
  std::string s = taskIn.name + " (GPU" + (opts.spreadDevices.empty() ? " " : "s ") +
                  std::to_string(opts.verify.device);
  for (auto [device, c] : opts.spreadDevices)
    s += "," + std::to_string(device);
  return s + ")";
}

size_t TaskSearch::inFlight() const {
  size_t n = session ? session->pending() : 0;
  for (const Lane &l : lanes)
    n += l.session ? l.session->pending() : 0;
  return n;
}

/// Outcomes from every lane; waits at most `seconds` in all.
llvm::Expected<std::vector<TaskSearch::Outcome>> TaskSearch::pollLanes(double seconds) {
  std::vector<Outcome> out;
  unsigned busy = 0;
  for (unsigned i = 0; i < lanes.size(); ++i)
    busy += laneSession(i).pending() > 0;
  for (unsigned i = 0; i < lanes.size(); ++i) {
    EvaluationSession *s = &laneSession(i);
    // One lane: as before. Several: each busy one gets a share of the wait, the idle ones none.
    double wait = lanes.size() == 1 ? seconds : s->pending() ? seconds / std::max(1u, busy) : 0;
    auto done = s->poll(wait);
    if (!done)
      return done.takeError();
    for (auto &[ticket, outcome] : *done) {
      verifier->arbitrate(outcome); // every lane runs the same trials
      out.push_back({i, ticket, std::move(outcome)});
    }
  }
  return out;
}

/// With an LLM the search goes generation by generation (EvoEngineer's loop): `samples`
/// children made from the population as it stands, all of them settled (replies, repairs,
/// compiles, the GPU) before the next generation is made, so every prompt after the first
/// generation sees measured times. A mailbox cycle is one generation. Without an LLM, or once
/// it is stopped (budget spent, replay ran out) or paused, the built-in mutators keep the
/// compiler and the GPU busy instead (`depth` in flight).
/// Islands: every `migrate-every` generations' worth of children, each island's best joins the
/// next island.
void TaskSearch::migrateIfDue() {
  if (numIslands > 1 && opts.migrateEvery && created > 0 &&
      created % (std::max(1u, opts.samples) * opts.migrateEvery) == 0)
    for (unsigned k = 0; k < numIslands; ++k)
      if (std::optional<Member> m = pops[k].best())
        pops[(k + 1) % numIslands].add(*m);
}

bool TaskSearch::generational() const { return llm && !replay && !llm->stopped(); }

llvm::Error TaskSearch::generateGeneration() {
  using Outcome = Proposer::Outcome;
  if (!compiling.empty() || llm->waiting() || inFlight())
    return llvm::Error::success(); // the generation is still being settled
  if (exhausted || created >= budget || timeUp())
    return llvm::Error::success();
  ++generationNo;
  unsigned n = std::min(std::max(1u, opts.samples), budget - created);
  unsigned made = 0;
  for (unsigned i = 0; i < n; ++i) {
    unsigned island = created % numIslands;
    migrateIfDue();
    Outcome o = Outcome::Declined;
    // llm-mix: each child is the built-in mutators' with that probability (while they have
    // something new), else the LLM's.
    bool useLLM = builtinDone || llm->exclusive() || llm->wantsNext();
    if (useLLM && !llm->stopped()) {
      llvm::Expected<Outcome> r = llm->propose(island, generationNo);
      if (!r)
        return r.takeError();
      o = *r;
    }
    if (o != Outcome::Made && !builtinDone && !llm->exclusive()) {
      llvm::Expected<Outcome> r = builtin->propose(island, generationNo);
      if (!r)
        return r.takeError();
      o = *r;
      builtinDone = o != Outcome::Made;
    }
    if (o != Outcome::Made)
      break;
    ++created;
    ++made;
  }
  if (!made)
    exhausted = true;
  return llvm::Error::success();
}

/// Keeps the compiler and the GPU busy: proposes while fewer than `depth` are in flight.
llvm::Error TaskSearch::generate() {
  if (generational())
    return generateGeneration();
  auto waitingOnLLM = [&] { return llm ? llm->waiting() : 0; };
  while (!exhausted && created < budget && !timeUp() &&
         compiling.size() + waitingOnLLM() + inFlight() < depth) {
    using Outcome = Proposer::Outcome;
    if (replay) {
      llvm::Expected<Outcome> made = replay->propose(0, 0);
      if (!made)
        return made.takeError();
      if (*made == Outcome::Exhausted)
        exhausted = true;
      if (*made != Outcome::Made)
        break; // or its parent is still compiling: after the next poll
      ++created;
      continue;
    }
    unsigned island = created % numIslands;
    // (After LLM generations, e.g. once its budget is spent, the numbering goes on from them.)
    int generation = std::max<int>(created / std::max(1u, opts.samples) + 1,
                                   llm ? generationNo + 1 : 0);
    migrateIfDue();
    if (llm && llm->wantsNext()) {
      llvm::Expected<Outcome> made = llm->propose(island, generation);
      if (!made)
        return made.takeError();
      if (*made == Outcome::Made) {
        ++created;
        continue;
      }
    }
    if (llm && llm->exclusive()) {
      // LLM only: nothing to do until replies come back (or the LLM budget stopped it).
      if (llm->stopped())
        exhausted = true;
      break;
    }
    llvm::Expected<Outcome> made = builtin->propose(island, generation);
    if (!made)
      return made.takeError();
    if (*made != Outcome::Made) {
      exhausted = true;
      break;
    }
    ++created;
  }
  return llvm::Error::success();
}

/// Compiled variants go to the GPU (or are settled here: compile errors, duplicates).
llvm::Error TaskSearch::takeCompiled() {
  for (size_t i = 0; i < compiling.size();) {
    if (compiling[i].compiled.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
      ++i;
      continue;
    }
    Pending p = std::move(compiling[i]);
    compiling.erase(compiling.begin() + i);
    const CompiledVariant &v = p.compiled.get();
    std::optional<CandidateRecord> c = runStore.getCandidate(p.id);
    if (!c)
      return error("candidate " + llvm::Twine(p.id) + " vanished from the store");
    if (!v.ok && p.state) {
      if (llvm::Error e = p.owner->compileFailed(*c, v.diagnostics, std::move(p.state)))
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
      if (llvm::Error e = runStore.recordResult(*c))
        return e;
      continue;
    }
    infos[p.id] = VariantInfo::of(v);
    compiledById[p.id] = v;
    auto dup = seenHashes.find(v.ptxHash);
    if (dup != seenHashes.end()) {
      c->verdict = "not-run";
      c->reason = "identical PTX to candidate " + std::to_string(dup->second);
      if (llvm::Error e = runStore.recordResult(*c))
        return e;
      continue;
    }
    seenHashes[v.ptxHash] = p.id;
    if (llvm::Error e = runStore.recordResult(*c)) // still pending: IR and hash are now known
      return e;
    llvm::Expected<json::Object> cj = writeBinary(p.id, v);
    if (!cj)
      return cj.takeError();
    // The lane with the fewest candidates waiting (ties taken in turn).
    auto waiting = [&](unsigned i) { return laneSession(i).pending(); };
    unsigned n = lanes.size(), lane = (lastLane + 1) % n;
    for (unsigned s = 1; s < n; ++s)
      if (unsigned i = (lastLane + 1 + s) % n; waiting(i) < waiting(lane))
        lane = i;
    lastLane = lane;
    size_t ticket = laneSession(lane).submit(std::move(*cj));
    submitted[{lane, ticket}] = {p.id, v};
  }
  return llvm::Error::success();
}

/// The worker's verdicts: recorded, and the candidates join their island's population (a time
/// from another GPU than lane 0's counts in proportion to the baseline's time there).
llvm::Error TaskSearch::takeOutcomes(std::vector<Outcome> &done) {
  for (Outcome &d : done) {
    auto it = submitted.find({d.lane, d.ticket});
    if (it == submitted.end())
      continue;
    std::optional<CandidateRecord> c = runStore.getCandidate(it->second.first);
    if (!c)
      continue;
    if (llvm::Error e = recordOutcome(*c, d.outcome, d.lane))
      return e;
    ++evaluated;
    bool ok = c->verdict == "valid";
    valid += ok;
    noteFailure(*c);
    pops[c->island % numIslands].add({c->id, ok ? rankTime(*c) : 0, ok, order++});
    submitted.erase(it);
  }
  return llvm::Error::success();
}

void TaskSearch::report() {
  double best = baselineTime;
  for (Population &p : pops)
    if (std::optional<Member> m = p.best())
      best = std::min(best, m->ms);
  double speedup = best > 0 ? baselineTime / best : 1.0;
  // The generation being worked on: with an LLM the one proposed last; else as many
  // generations' worth of children as are settled, plus the one under way.
  unsigned samples = std::max(1u, opts.samples);
  unsigned gens = std::max(1u, (budget + samples - 1) / samples);
  unsigned gen = llm && !replay ? std::max(1u, static_cast<unsigned>(generationNo))
                                : std::min(gens, evaluated / samples + 1);
  // ETA: unknown until something was measured.
  double eta = evaluated ? elapsed() / evaluated * (budget > created ? budget - created : 0) : NAN;
  progress.update(progressName(), gen, gens, evaluated, valid, speedup, eta);
}

llvm::Expected<TaskResult> TaskSearch::run() {
  if (llvm::Error e = prepare())
    return std::move(e);
  if (llvm::Error e = startBaseline())
    return std::move(e);
  if (opts.llm && opts.llm->client && opts.llm->templates)
    llm = std::make_unique<LLMProposer>(*this, *opts.llm);
  if (llvm::Error e = restore())
    return std::move(e);
  if (opts.replay)
    replay = std::make_unique<ReplayProposer>(*this, *opts.replay, llm.get());
  budget = replay                ? replay->size()
           : opts.maxCandidates ? opts.maxCandidates
                                : opts.generations * std::max(1u, opts.samples);
  depth = std::max(2 * opts.samples, threads) * std::max<size_t>(1, lanes.size());
  random = std::mt19937_64(opts.seed * 0x9E3779B97F4A7C15ull +
                           std::hash<std::string>()(taskIn.name) + created);
  builtin = std::make_unique<BuiltinProposer>(*this, /*withSeeds=*/!opts.replay);
  started = Clock::now();
  if (llvm::Error e = resumePending())
    return std::move(e);
  // The first line before anything is settled, however fast the first outcomes come back (a
  // loaded machine once settled two candidates before the first report).
  report();

  while (true) {
    if (llvm::Error e = generate())
      return std::move(e);
    // LLM replies: parse, then compile on the pool (or ask for a repair, or record why not).
    if (llm)
      if (llvm::Error e = llm->collect())
        return std::move(e);
    if (llvm::Error e = takeCompiled())
      return std::move(e);
    size_t asking = llm ? llm->waiting() : 0;
    bool idle = compiling.empty() && asking == 0 && inFlight() == 0;
    bool generating = !exhausted && created < budget && !timeUp();
    if (idle && !generating)
      break;
    // LLM-only runs whose replies are all in and that cannot make more: done.
    if (idle && llm && llm->exclusive() && llm->stopped())
      break;
    // Nothing on the worker: poll() returns at once, and the pool's futures are deferred ones
    // (wait_for returns at once too), so sleep a little instead of spinning while LLM replies
    // (a mailbox's llm-wait can keep them out for minutes) or compiles are awaited.
    if (inFlight() == 0 && (asking || !compiling.empty()))
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    auto done = pollLanes(compiling.empty() && asking == 0 ? 0.5 : 0.02);
    if (!done)
      return done.takeError();
    if (llvm::Error e = takeOutcomes(*done))
      return std::move(e);
    report();
  }
  session.reset(); // ends the workers (their destructors send "end"); the lanes' baselines
  for (Lane &l : lanes) // still rank the finalists
    l.session.reset();
  if (llm && llm->pausedPrompts()) {
    progress.finish("paused", progressName());
    return llvm::make_error<PausedError>(llm->pausedPrompts());
  }
  return finish();
}

/// Finalists: the best few, re-measured interleaved with the baseline; the winner is recorded.
llvm::Expected<TaskResult> TaskSearch::finish() {
  std::vector<CandidateRecord> finalists =
      pickFinalists(runStore, taskIn.name, baseline->id, opts.finalists,
                    [&](const CandidateRecord &c) { return rankTime(c); });
  std::map<int64_t, CompiledVariant> binaries;
  binaries[baseline->id] = baseCompiled;
  if (finalists.size() > 1) {
    auto binary = [&](const CandidateRecord &f) -> llvm::Expected<json::Object> {
      if (!binaries.count(f.id) && compiledById.count(f.id))
        binaries[f.id] = compiledById[f.id];
      if (!binaries.count(f.id)) {
        // From an earlier session: compiled again (LLM code from its stored IR).
        if (!infoFor(f.id) || !compiledById.count(f.id))
          return error("finalist " + llvm::Twine(f.id) + " no longer compiles");
        binaries[f.id] = compiledById[f.id];
      }
      return writeBinary(f.id, binaries[f.id]);
    };
    llvm::Expected<RemeasureResult> r = remeasureFinalists(
        std::move(finalists), binary, request, worker, opts, cost(), ceilings, runStore,
        [&](CandidateOutcome &o) { verifier->arbitrate(o); });
    if (!r)
      return r.takeError();
    if (!r->baselineFailure.empty())
      return error("its naive baseline failed the finalists' re-measurement: " +
                   r->baselineFailure);
    valid -= std::min(valid, r->failed);
    finalists = std::move(r->passed);
  }
  // The winner: the lowest re-measured time (exploration time when there were no finalists).
  const CandidateRecord &best = chooseWinner(finalists);
  if (!binaries.count(best.id))
    return error("the winner has no binary");

  record.status = "done";
  record.baselineId = baseline->id;
  record.bestId = best.id;
  record.generationsDone =
      llm && !replay ? generationNo : created / std::max(1u, opts.samples);
  if (llvm::Error e = runStore.upsertTask(record))
    return std::move(e);
  progress.finish("done", progressName());

  TaskResult result;
  result.task = taskIn.name;
  result.baselineId = baseline->id;
  result.bestId = best.id;
  result.firstBestId = runStore.oldestWithSamePtx(taskIn.name, best);
  result.baselineMs = finalTime(finalists.front());
  result.bestMs = finalTime(best);
  result.bestIr = binaries[best.id].ir;
  result.bestLaunches = binaries[best.id].launches;
  result.bestScratch = binaries[best.id].scratch;
  result.bestKnobs = best.knobs;
  result.evaluated = evaluated;
  result.valid = valid;
  if (replay)
    replay->summarize(result);
  // The candidates' binaries and the worker's files are of no use once the task is done: the
  // store holds every candidate's IR (resume, replay and reports rebuild from it).
  if (!opts.keepWork)
    llvm::sys::fs::remove_directories(workDir, /*IgnoreErrors=*/true);
  return result;
}

} // namespace evo
