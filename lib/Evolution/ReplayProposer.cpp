//===- ReplayProposer.cpp - an earlier run's candidates, re-created --------------===//
//
// replay-run: instead of searching, the old run's candidates of a task are made again in their
// order -- built-in ones from their genomes, LLM ones from their stored requests (answered by
// the replaying client, with the same number of repairs) -- and evaluated afresh, so that a new
// GPU, driver or evo-opt build can be compared with the old run candidate by candidate.
// docs/evolution.md, "Resume and replay".
//
//===----------------------------------------------------------------------===//

#include "evo/Evolution/Proposers.h"
#include "evo/Evolution/TaskSearch.h"

namespace evo {

ReplayProposer::ReplayProposer(TaskSearch &search, const RunStore &old, LLMProposer *llm)
    : search(search), llm(llm) {
  const std::string &task = search.task().name;
  for (CandidateRecord &c : old.getCandidates(task)) {
    if (c.op == "baseline")
      ids[c.id] = search.baselineId();
    else
      source.push_back(std::move(c));
  }
  // A resumed replay: the candidates made here so far are the old run's first ones.
  for (const CandidateRecord &c : search.store().getCandidates(task))
    if (c.op != "baseline" && next < source.size())
      ids[source[next++].id] = c.id;
}

std::optional<unsigned> ReplayProposer::repairsOf(int64_t id) const {
  for (auto &[oldId, newId] : ids)
    if (newId == id)
      for (const CandidateRecord &o : source)
        if (o.id == oldId)
          return static_cast<unsigned>(std::max<int64_t>(0, o.llmCalls - 1));
  return std::nullopt;
}

llvm::Expected<Proposer::Outcome> ReplayProposer::propose(unsigned, int) {
  if (next >= source.size())
    return Outcome::Exhausted;
  llvm::Expected<Outcome> made = replayOne(source[next]);
  if (made && *made == Outcome::Made)
    ++next;
  return made;
}

/// Stores `c` as the old candidate `oldId`'s re-creation, settled at once as `not-run`.
llvm::Error ReplayProposer::settle(CandidateRecord &c, int64_t oldId, const std::string &reason) {
  if (llvm::Error e = search.store().addCandidate(c))
    return e;
  c.verdict = "not-run";
  c.reason = reason;
  if (llvm::Error e = search.store().recordResult(c))
    return e;
  ids[oldId] = c.id;
  return llvm::Error::success();
}

/// Re-creates the old run's candidate `old`; Later while the parent it needs is still in flight.
llvm::Expected<Proposer::Outcome> ReplayProposer::replayOne(const CandidateRecord &old) {
  CandidateRecord c;
  c.task = search.task().name;
  c.generation = old.generation;
  c.island = old.island;
  c.op = old.op;
  for (int64_t p : old.parents) {
    auto it = ids.find(p);
    if (it == ids.end())
      return search.error("replay: candidate " + llvm::Twine(old.id) + "'s parent " +
                          llvm::Twine(p) + " is not an earlier candidate of the replayed run");
    c.parents.push_back(it->second);
  }
  if (!llvm::StringRef(old.op).starts_with("llm-")) {
    mlir::FailureOr<Genome> g = Genome::fromJson(old.knobs, old.rewrites, search.context());
    if (mlir::failed(g))
      return search.error("replay: candidate " + llvm::Twine(old.id) +
                          "'s genome cannot be read");
    c.knobs = old.knobs;
    c.rewrites = old.rewrites;
    if (llvm::Error e = search.store().addCandidate(c))
      return std::move(e);
    search.addGenome(c.id, *g);
    search.compileGenome(c.id, *g);
    ids[old.id] = c.id;
    return Outcome::Made;
  }
  c.llmKey = old.llmKey;
  c.llmRequest = old.llmRequest;
  std::optional<StoredRequest> sr = LLMProposer::storedRequest(old, search.task().name);
  if (!llm || old.llmCalls == 0 || !sr) {
    // Never answered there (a budget, an interruption): the same outcome, without asking.
    if (llvm::Error e = settle(c, old.id,
                               old.verdict == "not-run"
                                   ? old.reason
                                   : "replay: the replayed run holds no reply for it"))
      return std::move(e);
    return Outcome::Made;
  }
  std::optional<VariantInfo> parent =
      c.parents.empty() ? std::nullopt : search.infoFor(c.parents.front());
  if (!parent) {
    if (!c.parents.empty() && search.inFlight(c.parents.front()))
      return Outcome::Later;
    // Its parent came out differently here (e.g. a reply missing from the cache).
    if (llvm::Error e = settle(c, old.id, "replay: its parent has no kernels here to build on"))
      return std::move(e);
    return Outcome::Made;
  }
  if (llvm::Error e = search.store().addCandidate(c))
    return std::move(e);
  llm->ask(c.id, std::move(*sr), *parent,
           static_cast<unsigned>(std::max<int64_t>(0, old.llmCalls - 1)));
  ids[old.id] = c.id;
  return Outcome::Made;
}

void ReplayProposer::summarize(TaskResult &result) const {
  for (const CandidateRecord &old : source) {
    ++result.replayed;
    auto it = ids.find(old.id);
    std::optional<CandidateRecord> now =
        it == ids.end() ? std::nullopt : search.store().getCandidate(it->second);
    bool same = now && now->op == old.op && now->ptxHash == old.ptxHash &&
                (!old.ptxHash.empty() || now->verdict == old.verdict);
    if (!same)
      result.replayDiffer.push_back(old.id);
  }
}

} // namespace evo
