//===- TuningExport.cpp - a run's winners as tuning records --------------------===//

#include "evo/Evolution/TuningExport.h"
#include "evo/Conversion/LowerToGPU.h"
#include "evo/Evolution/Finalists.h"
#include "evo/Target/Manifest.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/Path.h"

using namespace mlir;
namespace json = llvm::json;

namespace evo {

static llvm::Error exportError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "tuning export: " + message);
}

llvm::Expected<TuningDb> exportTuningDb(const RunStore &store, MLIRContext *ctx) {
  loadLoweringDialects(ctx);
  std::string chip = "sm_90", features;
  if (std::optional<std::string> config = store.getMeta("config")) {
    llvm::Expected<json::Value> v = json::parse(*config);
    if (!v)
      return exportError("the run's config is not JSON: " + llvm::toString(v.takeError()));
    if (const json::Object *o = v->getAsObject()) {
      chip = o->getString("chip").value_or(chip).str();
      features = o->getString("features").value_or("").str();
    }
  }
  std::string runDir = llvm::sys::path::parent_path(store.getPath()).str();
  TuningDb db;
  for (const TaskRecord &task : store.getTasks()) {
    if (task.status != "done" || task.bestId < 0)
      continue;
    std::optional<CandidateRecord> best = store.getCandidate(task.bestId);
    std::optional<CandidateRecord> base = store.getCandidate(task.baselineId);
    if (!best || best->verdict != "valid")
      continue;
    FailureOr<TuningRecord> rec = recordForTaskSource(task.source, ctx, chip);
    if (failed(rec))
      return exportError("the source of task '" + task.name + "' does not parse");
    TuningRecord r = std::move(*rec);
    r.features = features;
    std::optional<TaskFamily> family = symbolizeTaskFamily(task.family);
    if (!family)
      return exportError("task '" + task.name + "' has an unknown family '" + task.family + "'");
    r.family = *family;
    llvm::Expected<json::Value> knobs = json::parse(best->knobs);
    if (!knobs || !knobs->getAsObject()) {
      if (!knobs)
        llvm::consumeError(knobs.takeError());
      return exportError("the knobs of candidate " + llvm::Twine(best->id) + " are not an object");
    }
    r.knobsJson = *knobs->getAsObject();
    std::string why;
    if (failed(r.knobs.mergeJson(r.knobsJson, &why)))
      return exportError("the knobs of candidate " + llvm::Twine(best->id) + ": " + why);
    r.op = best->op;
    llvm::Expected<json::Value> rewrites = json::parse(best->rewrites.empty() ? "[]" : best->rewrites);
    if (rewrites && rewrites->getAsArray())
      r.rewrites = *rewrites->getAsArray();
    else if (!rewrites)
      llvm::consumeError(rewrites.takeError());
    // Knobs describe the winner fully only when no IR rewrite or LLM code made it.
    bool pureKnobs = r.rewrites.empty() && !StringRef(best->op).starts_with("llm");
    if (!pureKnobs) {
      r.kind = "ir";
      r.ir = best->ir;
    }
    // A ratio never mixes the finalists' re-measurement with the search's medians (Report.cpp).
    double bestMs = best->finalMedianMs, baseMs = base ? base->finalMedianMs : NAN;
    r.remeasured = std::isfinite(bestMs) && std::isfinite(baseMs);
    if (!r.remeasured) {
      bestMs = best->medianMs;
      baseMs = base ? base->medianMs : NAN;
    }
    r.bestMs = std::isfinite(bestMs) && bestMs > 0 ? bestMs : NAN;
    r.baselineMs = std::isfinite(baseMs) && baseMs > 0 ? baseMs : NAN;
    r.measuredAt = best->evaluatedAt.empty() ? best->createdAt : best->evaluatedAt;
    json::Object run{{"dir", runDir},
                     {"task", task.name},
                     {"function", task.function},
                     {"candidate", best->id},
                     {"generator", evoVersionString()}};
    if (std::optional<std::string> created = store.getMeta("created_at"))
      run["created_at"] = *created;
    if (std::optional<std::string> on = store.getMeta("evaluated_on:" + task.name)) {
      llvm::Expected<json::Value> v = json::parse(*on);
      if (v)
        run["evaluated_on"] = std::move(*v);
      else
        llvm::consumeError(v.takeError());
    } else if (std::optional<std::string> device = store.getMeta("device")) {
      run["evaluated_on"] = json::Object{{"gpu", *device}};
    }
    r.run = std::move(run);
    db.add(std::move(r), TuningDb::Prefer::Fastest);
  }
  return db;
}

} // namespace evo
