//===- Finalists.cpp - re-measuring the best few before choosing the winner ----===//
//
// The end of a task's search, apart from the search loop: a finalist wins only with a valid,
// interleaved re-measurement (its timed launches checked, its time not below the roofline
// floor), so a lucky exploration sample cannot win. docs/evolution.md, "Finalists".
//
//===----------------------------------------------------------------------===//

#include "evo/Evolution/Finalists.h"
#include "evo/Evaluation/WorkerProtocol.h"
#include "evo/Evolution/Engine.h"
#include "llvm/Support/FormatVariadic.h"
#include <cmath>

#include <tuple>

namespace json = llvm::json;

namespace evo {

std::vector<CandidateRecord> pickFinalists(const RunStore &store, const std::string &task,
                                           int64_t baselineId, unsigned n,
                                           llvm::function_ref<double(const CandidateRecord &)>
                                               rankMs) {
  std::vector<std::pair<double, CandidateRecord>> ranked;
  for (const CandidateRecord &c : store.getCandidates(task))
    if (c.verdict == "valid" && c.op != "baseline" && std::isfinite(c.medianMs))
      ranked.push_back({rankMs ? rankMs(c) : c.medianMs, c});
  // Ties (the same kernel proposed twice) go to the older candidate, so that a run and its
  // replay choose alike whatever order their evaluations finished in.
  std::sort(ranked.begin(), ranked.end(), [](const auto &a, const auto &b) {
    return std::tie(a.first, a.second.id) < std::tie(b.first, b.second.id);
  });
  if (ranked.size() > n)
    ranked.resize(n);
  std::vector<CandidateRecord> finalists = {*store.getCandidate(baselineId)};
  for (auto &r : ranked)
    finalists.push_back(std::move(r.second));
  return finalists;
}

double finalTime(const CandidateRecord &c) {
  return std::isfinite(c.finalMedianMs) ? c.finalMedianMs : c.medianMs;
}

const CandidateRecord &chooseWinner(const std::vector<CandidateRecord> &finalists) {
  const CandidateRecord *best = &finalists.front();
  for (const CandidateRecord &f : finalists)
    if (finalTime(f) < finalTime(*best) || (finalTime(f) == finalTime(*best) && f.id < best->id))
      best = &f;
  return *best;
}

namespace {
/// The re-measurement's request: the template's timing (its inputs, with the oracle's values
/// for them, and the launch checks) with the finalists' run counts, so every re-measured launch
/// is accountable too.
json::Object timeRequest(const json::Object &requestTemplate, const EvolveOptions &opts) {
  json::Object timeReq = requestTemplate;
  timeReq["mode"] = "time";
  timeReq["rounds"] = static_cast<int64_t>(opts.finalRounds);
  json::Object timing;
  if (const json::Object *t = requestTemplate.getObject(protocol::kTiming))
    timing = *t;
  timing[protocol::kEnabled] = true;
  timing[protocol::kWarmup] = static_cast<int64_t>(opts.verify.warmup);
  timing[protocol::kRuns] = static_cast<int64_t>(opts.finalRuns);
  timing[protocol::kRepeats] = 1;
  timing[protocol::kFlushBytes] = static_cast<int64_t>(opts.verify.flushBytes);
  timeReq["timing"] = std::move(timing);
  return timeReq;
}
} // namespace

llvm::Expected<RemeasureResult> remeasureFinalists(
    std::vector<CandidateRecord> finalists,
    llvm::function_ref<llvm::Expected<json::Object>(const CandidateRecord &)> binary,
    const json::Object &requestTemplate, const WorkerOptions &worker, const EvolveOptions &opts,
    const TaskCost &cost, const Ceilings *ceilings, RunStore &store,
    llvm::function_ref<void(CandidateOutcome &)> arbitrate) {
  json::Object timeReq = timeRequest(requestTemplate, opts);
  json::Array cands;
  for (const CandidateRecord &f : finalists) {
    llvm::Expected<json::Object> cj = binary(f);
    if (!cj)
      return cj.takeError();
    // The baseline (first) is the reference the others' timed launches are compared with.
    (*cj)[protocol::kReference] = f.id == finalists.front().id;
    cands.push_back(std::move(*cj));
  }
  timeReq["candidates"] = std::move(cands);
  llvm::Expected<std::vector<json::Object>> events =
      runWorkerOnce(timeReq, worker, 60 + 5.0 * finalists.size() * opts.finalRounds);
  if (!events)
    return events.takeError();
  // A finalist wins only with a valid re-measurement (its timed launches checked, its time
  // not below the roofline floor); one that fails is invalid from now on.
  std::vector<std::string> failedFinal(finalists.size(), "the re-measurement returned no result");
  for (json::Object &ev : *events) {
    if (ev.getString(protocol::kEvent) != llvm::StringRef(protocol::kEventResult))
      continue;
    std::optional<int64_t> i = ev.getInteger(protocol::kCandidate);
    if (!i || *i < 0 || size_t(*i) >= finalists.size())
      continue;
    if (arbitrate && ev.getArray(protocol::kDisputed) &&
        ev.getString(protocol::kVerdict) == llvm::StringRef(protocol::kVerdictInvalid)) {
      CandidateOutcome o;
      o.verdict = Verdict::Invalid;
      o.reason = ev.getString(protocol::kReason).value_or("").str();
      o.result = ev;
      arbitrate(o);
      ev = std::move(o.result);
    }
    const json::Object *t = ev.getObject(protocol::kTiming);
    std::string reason = ev.getString(protocol::kReason).value_or("").str();
    double ms = t ? t->getNumber(protocol::kMedianMs).value_or(NAN) : NAN;
    bool ok = ev.getString(protocol::kVerdict) == llvm::StringRef(protocol::kVerdictValid) &&
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
  RemeasureResult result;
  if (!failedFinal.front().empty()) {
    result.baselineFailure = failedFinal.front();
    return result;
  }
  for (size_t i = 0; i < finalists.size(); ++i) {
    if (failedFinal[i].empty()) {
      result.passed.push_back(finalists[i]);
      continue;
    }
    finalists[i].verdict = "invalid";
    finalists[i].reason = "finalists' re-measurement: " + failedFinal[i];
    if (llvm::Error e = store.recordResult(finalists[i]))
      return std::move(e);
    ++result.failed;
  }
  return result;
}

} // namespace evo
