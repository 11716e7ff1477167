//===- FinalCheck.cpp - the emitted module, verified once more as a whole -------===//
//
// Before anything is written, each evolved gpu.module (every task's winner, spliced) is compiled
// as evo-emit-ptx compiles it and verified as a whole against its function, on fresh inputs,
// with the search's protocol. A module that passed is recorded by the hash of its PTX, so
// resuming a finished run needs no GPU. On failure nothing is emitted, and the task whose
// kernels fail alone has its winner recorded invalid, to be searched again by `resume=true`.
// docs/evolution.md, "Final re-verification".
//
//===----------------------------------------------------------------------===//

#include "EvolveSteps.h"
#include "evo/Evaluation/LaunchSelection.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
namespace json = llvm::json;

namespace evo {

namespace {
std::string printed(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  op->print(os, OpPrintingFlags().useLocalScope());
  return text;
}

/// Whether the store says these very kernels (same PTX) passed already.
bool passedBefore(RunStore &store, StringRef certKey, StringRef ptxHash) {
  std::optional<std::string> cert = store.getMeta(certKey);
  if (!cert)
    return false;
  llvm::Expected<json::Value> j = json::parse(*cert);
  if (!j) {
    llvm::consumeError(j.takeError());
    return false;
  }
  const json::Object *o = j->getAsObject();
  return o && o->getString("ptx_sha256") == ptxHash && o->getString("verdict") == StringRef("valid");
}

using Culprits = std::vector<std::pair<const SplicedTask *, std::string>>;

/// Which task's kernels fail on their own? Each task alone: its kernels and the symbols it
/// carries (all tagged with its index), against its own source.
FailureOr<Culprits> findCulprits(gpu::GPUModuleOp gm, const LaunchPlan &plan,
                                 ArrayRef<SplicedTask> tasks, const VariantReport &whole,
                                 const VerifyOptions &vo, const FinalCheckSettings &s) {
  Culprits culprits;
  if (tasks.size() == 1) {
    culprits.push_back(
        {&tasks.front(), stringifyVerdict(whole.verdict).str() + ": " + whole.reason});
    return culprits;
  }
  MLIRContext *ctx = gm.getContext();
  for (const SplicedTask &t : tasks) {
    FailureOr<LaunchPlan> tp = isolateTaskPlan(plan, t);
    if (failed(tp))
      return emitError(gm.getLoc()) << "evo-evolve: task '" << t.name
                                    << "' cannot be isolated in the plan of '" << plan.funcName
                                    << "'";
    OwningOpRef<gpu::GPUModuleOp> alone = cast<gpu::GPUModuleOp>(gm->clone());
    for (Operation &op : llvm::make_early_inc_range(alone->getBody()->getOperations()))
      if (auto tag = op.getAttrOfType<IntegerAttr>(kTaskAttrName); !tag || tag.getInt() != t.index)
        op.erase();
    CompiledVariant tv =
        compileGpuModule(ctx->getDialectRegistry(), printed(*alone), s.opts.ptx, "");
    if (!tv.ok)
      return emitError(gm.getLoc()) << "evo-evolve: the kernels of task '" << t.name
                                    << "' do not compile alone: " << tv.diagnostics;
    llvm::Expected<VariantReport> tr =
        verifyFunction(*tp, tv.ptx, ctx, gm.getLoc(), vo, s.opts.ptx, s.ceilings());
    if (!tr)
      return emitError(gm.getLoc()) << "evo-evolve: the final re-verification of task '" << t.name
                                    << "' could not run: " << llvm::toString(tr.takeError());
    if (tr->verdict != Verdict::Valid)
      culprits.push_back({&t, stringifyVerdict(tr->verdict).str() + ": " + tr->reason});
  }
  return culprits;
}

/// Each culprit's winner is recorded invalid (never chosen again: resume picks the next valid
/// candidate) and named in an error.
LogicalResult reportCulprits(gpu::GPUModuleOp gm, const Culprits &culprits, RunStore &store) {
  for (auto &[t, why] : culprits) {
    bool baselineWon = t->bestId == t->baselineId;
    if (!baselineWon) {
      std::optional<CandidateRecord> c = store.getCandidate(t->bestId);
      std::optional<TaskRecord> r = store.getTask(t->name);
      if (c && r) {
        // Every candidate of the task with the winner's PTX is the same kernel: all of them are
        // invalid, or resume would choose the same kernel again under another id.
        for (CandidateRecord &same : store.getCandidates(t->name)) {
          if (same.id != c->id && (c->ptxHash.empty() || same.ptxHash != c->ptxHash ||
                                   same.verdict != "valid"))
            continue;
          same.verdict = "invalid";
          same.reason = "final re-verification of the emitted module: " + why;
          if (llvm::Error e = store.recordResult(same))
            return emitError(gm.getLoc()) << "evo-evolve: " << llvm::toString(std::move(e));
        }
        r->status = "running";
        if (llvm::Error e = store.upsertTask(*r))
          return emitError(gm.getLoc()) << "evo-evolve: " << llvm::toString(std::move(e));
      }
    }
    emitError(gm.getLoc()) << "evo-evolve: task '" << t->name << "': its winner (candidate "
                           << t->bestId
                           << ") failed the final re-verification of the emitted module: " << why
                           << "; nothing is written"
                           << (baselineWon ? ". It is the naive baseline itself: the GPU or the "
                                             "verifier is unreliable"
                                           : ". It is now recorded invalid: run again with "
                                             "resume=true to choose the next valid candidate");
  }
  return failure();
}
} // namespace

LogicalResult finalCheck(gpu::GPUModuleOp gm, ArrayRef<SplicedTask> tasks,
                         const FinalCheckSettings &s) {
  MLIRContext *ctx = gm.getContext();
  FailureOr<LaunchPlan> plan = LaunchPlan::fromModule(gm);
  if (failed(plan))
    return failure();
  // A shard that holds only some of the function's tasks (Shard.h) cannot verify the function
  // as it will be emitted: that happens where all its winners are spliced, when the merged run
  // is applied.
  if (tasks.size() < plan->tasks.size()) {
    emitRemark(gm.getLoc()) << "evo-evolve: '" << plan->funcName << "': " << tasks.size()
                            << " of its " << plan->tasks.size()
                            << " tasks evolved in this shard; its kernels are verified as a whole "
                               "when the merged run is applied";
    return success();
  }
  CompiledVariant v =
      compileGpuModule(ctx->getDialectRegistry(), printed(gm), s.opts.ptx, /*ptxasPath=*/"");
  if (!v.ok)
    return emitError(gm.getLoc()) << "evo-evolve: the evolved kernels of '" << plan->funcName
                                  << "' do not compile: " << v.diagnostics;
  std::string certKey = "final_check:" + plan->funcName;
  if (passedBefore(s.store, certKey, v.ptxHash)) {
    emitRemark(gm.getLoc()) << "evo-evolve: '" << plan->funcName
                            << "': these kernels passed the final re-verification already "
                               "(same PTX); not run again";
    return success();
  }
  if (failed(s.ensureWorker()))
    return failure();
  VerifyOptions vo = s.opts.verify;
  vo.seed = freshSeed(); // never the search's inputs
  if (!vo.seed)
    return emitError(gm.getLoc(), "evo-evolve: no entropy for the final re-verification's inputs");
  llvm::Expected<VariantReport> r =
      verifyFunction(*plan, v.ptx, ctx, gm.getLoc(), vo, s.opts.ptx, s.ceilings());
  if (!r)
    return emitError(gm.getLoc()) << "evo-evolve: the final re-verification of '" << plan->funcName
                                  << "' could not run: " << llvm::toString(r.takeError());
  if (r->verdict == Verdict::Valid) {
    json::Object cert{{"function", plan->funcName},
                      {"verdict", "valid"},
                      {"ptx_sha256", v.ptxHash},
                      {"seed", std::to_string(r->seed)},
                      {"trials", static_cast<int64_t>(vo.trials)}};
    if (r->medianMs > 0)
      cert["median_ms"] = r->medianMs;
    if (llvm::Error e =
            s.store.setMeta(certKey, llvm::formatv("{0}", json::Value(std::move(cert))).str()))
      return emitError(gm.getLoc()) << "evo-evolve: " << llvm::toString(std::move(e));
    emitRemark(gm.getLoc()) << llvm::formatv(
        "evo-evolve: '{0}': the emitted kernels passed the final re-verification ({1} trials "
        "on fresh inputs, seed {2})",
        plan->funcName, vo.trials, r->seed);
    return success();
  }
  FailureOr<Culprits> culprits = findCulprits(gm, *plan, tasks, *r, vo, s);
  if (failed(culprits))
    return failure();
  if (culprits->empty())
    return emitError(gm.getLoc()) << "evo-evolve: the evolved kernels of '" << plan->funcName
                                  << "' failed the final re-verification ("
                                  << stringifyVerdict(r->verdict) << ": " << r->reason
                                  << ") although every task's kernels pass alone: either the "
                                     "tasks are wired together wrongly (a bug of evo-evolve) or "
                                     "the function is too ill-conditioned on those inputs for its "
                                     "float types (more elements off the naive kernels' results "
                                     "than the oracle arbitrates, or elements where the oracle "
                                     "found the evolved kernels further from it than the naive "
                                     "ones; declare realistic input ranges with evo.range, "
                                     "docs/verification.md) or a "
                                     "kernel races (a result that changes between launches); "
                                     "nothing is written";
  return reportCulprits(gm, *culprits, s.store);
}

} // namespace evo
