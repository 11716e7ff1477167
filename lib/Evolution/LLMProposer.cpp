//===- LLMProposer.cpp - children written by an LLM ------------------------------===//
//
// EvoEngineer's LLM operators as a proposer: each child is a prompt (the parents' kernels and
// launches, the task's contract and roofline, earlier thoughts, recent failures) sent through
// the run's client; its reply is parsed, compiled on the search's pool and, when it cannot be
// used, sent back for a repair while repairs are left. Requests are stored with the candidate so
// that a resumed or replayed run can ask them again. docs/llm.md.
//
//===----------------------------------------------------------------------===//

#include "evo/Evolution/Proposers.h"
#include "evo/Evolution/ReplyCheck.h"
#include "evo/Evolution/TaskSearch.h"
#include "evo/LLM/Reply.h"
#include "llvm/Support/FormatVariadic.h"

namespace json = llvm::json;
using llvm::StringRef;

namespace evo {

namespace {
std::string firstLine(StringRef s) { return s.trim().split('\n').first.str(); }

std::string launchText(llvm::ArrayRef<KernelLaunch> launches) {
  std::string s;
  for (auto [i, l] : llvm::enumerate(launches))
    s += llvm::formatv("{0}@{1}: grid [{2}, {3}, {4}], block [{5}, {6}, {7}]", i ? "; " : "",
                       l.kernel, l.grid[0], l.grid[1], l.grid[2], l.block[0], l.block[1],
                       l.block[2])
             .str();
  return s;
}
} // namespace

/// An LLM candidate compiling on the search's pool: what a repair needs.
struct LLMProposer::Compiling : ProposalState {
  Compiling(Asking a, std::string code) : asking(std::move(a)), code(std::move(code)) {}
  Asking asking;
  std::string code;
};

LLMProposer::LLMProposer(TaskSearch &search, const LLMSettings &settings)
    : search(search), settings(settings) {
  // I1 pieces that do not change during the task.
  llvm::raw_string_ostream os(contract);
  for (auto [i, b] : llvm::enumerate(search.taskPlan().buffers))
    os << (i ? ", " : "") << b.name << " (" << stringifyBufferRole(b.role) << ", "
       << b.abiType() << (b.byValue ? ": a scalar argument, its value, not a pointer" : "")
       << ")";
  for (const ScratchSpec &sc : search.baselineVariant().scratch)
    os << ", scratch " << sc.elementType << "[" << sc.numElements() << "]";
  if (const Ceilings *ceilings = search.deviceCeilings()) {
    const TaskCost &cost = search.cost();
    rooflineText =
        llvm::formatv("It moves {0:f1} MB and computes {1:f2} GFLOP: at least {2:f4} ms on this "
                      "GPU (copy {3:f0} GB/s, FP32 {4:f1} TFLOP/s).",
                      cost.bytes / 1e6, cost.flops / 1e9, judge(cost, *ceilings, 1.0, 1.0).floorMs,
                      ceilings->copyGBps, ceilings->fp32TFlops)
            .str();
  }
}

bool LLMProposer::wantsNext() {
  return !llmStopped && !paused &&
         !(settings.mix > 0 &&
           std::uniform_real_distribution<double>(0, 1)(search.rng()) < settings.mix);
}

bool LLMProposer::holds(int64_t id) const {
  return llvm::any_of(asking, [&](const Asking &a) { return a.id == id; });
}

void LLMProposer::noteThought(int64_t id, std::string thought) {
  thoughtPool.push_back({id, std::move(thought)});
}

/// Free and Insight improve the best of all islands, and so does Full's initialization (the
/// best known kernel, which may be a built-in member, rather than the naive one); the others
/// select from the island (FunSearch shows its versions from worst to best).
std::vector<Member> LLMProposer::chooseParents(unsigned island, const LLMOperator &op) {
  std::vector<Member> parents;
  std::vector<Population> &islands = search.islands();
  if (settings.strategy == SearchStrategy::Free || settings.strategy == SearchStrategy::Insight ||
      op.templateName == "full_init") {
    std::optional<Member> b;
    for (Population &p : islands)
      if (std::optional<Member> m = p.best(); m && (!b || m->ms < b->ms))
        b = m;
    if (b)
      parents.push_back(*b);
    return parents;
  }
  Population &pop = islands[island];
  for (int attempt = 0; attempt < 20 && parents.size() < std::max(1u, op.numParents); ++attempt) {
    std::optional<Member> m = pop.select(search.rng());
    if (!m)
      m = pop.best();
    if (m && llvm::none_of(parents, [&](const Member &p) { return p.id == m->id; }))
      parents.push_back(*m);
  }
  if (settings.strategy == SearchStrategy::FunSearch) // versions from worst to best
    llvm::sort(parents, [](const Member &a, const Member &b) { return a.ms > b.ms; });
  return parents;
}

/// Registers, spills and the roofline fractions of a stored candidate, in words.
std::string LLMProposer::profileOf(const CandidateRecord &rec) const {
  std::string profile;
  if (rec.registers >= 0)
    profile += llvm::formatv("{0} registers per thread, {1} spilled; ", rec.registers,
                             std::max(rec.spills, 0))
                   .str();
  if (llvm::Expected<json::Value> r = json::parse(rec.roofline)) {
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
  return StringRef(profile).trim().trim(";").str();
}

llm::PromptContext LLMProposer::promptContext(const std::vector<Member> &parents,
                                              const VariantInfo &first) {
  const TaskInput &task = search.task();
  RunStore &store = search.store();
  llm::PromptContext pc;
  pc.taskName = task.name;
  pc.family = stringifyTaskFamily(task.family).str();
  pc.gpu = settings.gpuName;
  pc.chip = settings.chip;
  pc.taskSource = task.source;
  pc.contract = contract;
  pc.launch = launchText(first.launches);
  pc.roofline = rooflineText;
  pc.currentKernel = first.ir;
  pc.currentMs = parents.front().ms;
  pc.baselineMs = search.baselineMs();
  for (const Member &m : parents) {
    std::optional<VariantInfo> info = search.infoFor(m.id);
    std::optional<CandidateRecord> rec = store.getCandidate(m.id);
    if (info)
      pc.solutions.push_back({m.id, info->ir, m.ms, rec ? rec->thought : ""});
  }
  if (std::optional<CandidateRecord> rec = store.getCandidate(parents.front().id)) {
    pc.bestThought = rec->thought;
    pc.profile = profileOf(*rec);
  }
  // Three earlier ideas other than the parent's, picked at random.
  std::vector<std::string> others;
  for (auto &[id, t] : thoughtPool)
    if (id != parents.front().id)
      others.push_back(t);
  for (unsigned i = 0; i < 3 && !others.empty(); ++i) {
    size_t k = search.rng()() % others.size();
    pc.thoughts.push_back(others[k]);
    others.erase(others.begin() + k);
  }
  pc.failures.assign(search.recentFailures().begin(), search.recentFailures().end());
  return pc;
}

llvm::Expected<Proposer::Outcome> LLMProposer::propose(unsigned island, int generation) {
  LLMOperator op = chooseLLMOperator(settings.strategy, search.islands()[island].numValid(),
                                     sequence++);
  std::vector<Member> parents = chooseParents(island, op);
  if (parents.empty())
    return Outcome::Declined;
  std::optional<VariantInfo> first = search.infoFor(parents.front().id);
  if (!first)
    return Outcome::Declined;
  llm::PromptContext pc = promptContext(parents, *first);
  llvm::Expected<llm::RenderedPrompt> prompt =
      llm::renderPrompt(*settings.templates, op.templateName, pc);
  if (!prompt)
    return prompt.takeError();
  llm::Request req;
  req.system = prompt->system;
  req.prompt = prompt->user;
  req.temperature = settings.temperature;
  req.maxTokens = settings.maxTokens;
  req.sample = promptSamples[req.system + "\n" + req.prompt]++;
  req.task = search.task().name;
  req.strategy = stringifySearchStrategy(settings.strategy).str();
  req.op = op.templateName;
  for (const Member &m : parents)
    req.parents.push_back(m.id);
  req.parentVariant = replyTargetJson(*first, search.options().ptx);

  CandidateRecord c;
  c.task = search.task().name;
  c.generation = generation;
  c.island = island;
  c.parents = req.parents;
  c.op = "llm-" + op.templateName;
  c.llmKey = settings.client->key(req);
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
  if (llvm::Error e = search.store().addCandidate(c))
    return std::move(e);
  asking.push_back({c.id, settings.client->submit(req), req, std::move(pc), *first,
                    settings.repairs});
  return Outcome::Made;
}

std::optional<StoredRequest> LLMProposer::storedRequest(const CandidateRecord &c,
                                                        StringRef task) {
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
  req.task = task.str();
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
}

void LLMProposer::ask(int64_t id, StoredRequest sr, const VariantInfo &parent, unsigned repairs) {
  ++promptSamples[sr.request.system + "\n" + sr.request.prompt];
  sr.request.parentVariant = replyTargetJson(parent, search.options().ptx);
  asking.push_back({id, settings.client->submit(sr.request), sr.request, std::move(sr.context),
                    parent, repairs});
}

/// An LLM reply that cannot be used: ask for a repair while allowed, else record why.
llvm::Error LLMProposer::repairOrReject(Asking a, CandidateRecord &c,
                                       const std::string &diagnostics, const std::string &code) {
  if (a.repairsLeft > 0 && !llmStopped && !a.context.taskName.empty()) {
    llvm::Expected<llm::RenderedPrompt> p =
        llm::renderRepair(*settings.templates, a.context, code, diagnostics);
    if (!p)
      return p.takeError();
    a.request.system = p->system;
    a.request.prompt = p->user;
    a.request.op = "repair";
    --a.repairsLeft;
    a.reply = settings.client->submit(a.request);
    asking.push_back(std::move(a));
    return llvm::Error::success();
  }
  c.verdict = "compile-error";
  c.reason = "LLM reply: " + firstLine(diagnostics);
  c.compileDiagnostics = diagnostics;
  search.noteFailure(c);
  return search.store().recordResult(c);
}

llvm::Error LLMProposer::compileFailed(CandidateRecord &c, const std::string &diagnostics,
                                       std::unique_ptr<ProposalState> state) {
  auto *s = static_cast<Compiling *>(state.get());
  return repairOrReject(std::move(s->asking), c, diagnostics, s->code);
}

/// One reply: settled in the store, sent for a repair, or handed to the search to compile.
llvm::Error LLMProposer::takeReply(Asking a) {
  const llm::Result &r = a.reply.get();
  RunStore &store = search.store();
  std::optional<CandidateRecord> c = store.getCandidate(a.id);
  if (!c)
    return search.error("candidate " + llvm::Twine(a.id) + " vanished from the store");
  if (r.status == llm::Result::Status::Pending) {
    ++paused; // stays pending in the store; a resumed run asks again
    return llvm::Error::success();
  }
  if (!r.ok()) {
    if (r.status == llm::Result::Status::BudgetExhausted ||
        r.status == llm::Result::Status::ReplayMiss)
      llmStopped = true;
    c->verdict = "not-run";
    c->reason = "LLM: " + r.error;
    return store.recordResult(*c);
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
    return e;
  if (!parsed.hasCode()) {
    return repairOrReject(std::move(a), *c, llm::missingCodeDiagnostics(r.reply.text), "");
  }
  int64_t id = a.id;
  VariantInfo parent = a.parent;
  std::string code = parsed.code;
  search.compileCode(id, code, std::move(parent), this,
                     std::make_unique<Compiling>(std::move(a), code));
  return llvm::Error::success();
}

llvm::Error LLMProposer::collect() {
  for (size_t i = 0; i < asking.size();) {
    if (asking[i].reply.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
      ++i;
      continue;
    }
    Asking a = std::move(asking[i]);
    asking.erase(asking.begin() + i);
    if (llvm::Error e = takeReply(std::move(a)))
      return e;
  }
  return llvm::Error::success();
}

} // namespace evo
