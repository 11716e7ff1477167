//===- RunSetup.cpp - the run directory and store of an evo-evolve run ---------===//
//
// One evo-opt per run-dir (run, resume or replay), held until the pass ends; a new store is
// created with its identity (input, configuration, replay origin) in one transaction, so a run
// killed at any moment leaves a store that resume accepts, or none; resume and replay refuse a
// run made from another input or configuration, and resume refuses one made as another shard.
// docs/evolution.md, "Resume and replay".
//
//===----------------------------------------------------------------------===//

#include "EvolveSteps.h"
#include "evo/Evaluation/LaunchSelection.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"

using namespace mlir;

namespace evo {

namespace {
/// replay-run: the finished run to re-create, made from the same input and configuration.
LogicalResult openReplay(Location loc, const RunSetupOptions &o, OpenedRun &run) {
  auto bad = [&](const llvm::Twine &why) {
    return emitError(loc) << "evo-evolve: replay-run=" << o.replayRun << ": " << why;
  };
  if (llvm::sys::fs::equivalent(o.replayRun, o.runDir))
    return bad("it is the run-dir itself; replay into a new run-dir");
  if (!llvm::sys::fs::exists(o.replayRun + "/run.sqlite"))
    return bad("no run store there (run.sqlite)");
  llvm::Expected<RunDirLock> oldLock = RunDirLock::acquire(o.replayRun, false);
  if (!oldLock)
    return bad(llvm::toString(oldLock.takeError()));
  run.replayLock.emplace(std::move(*oldLock));
  llvm::Expected<std::unique_ptr<RunStore>> old = RunStore::open(o.replayRun, false);
  if (!old)
    return bad(llvm::toString(old.takeError()));
  run.replay = std::move(*old);
  RunStore &r = *run.replay;
  if (!o.forceResume && (r.getMeta("input_hash") != o.inputHash || r.getMeta("config") != o.config))
    return bad(llvm::Twine("that run was made from ") +
               (r.getMeta("input_hash") != o.inputHash ? "another input" : "another configuration") +
               "; replay it with the same ones (or pass force-resume=true)");
  for (const TaskRecord &t : r.getTasks())
    if (t.status != "done")
      return bad("task '" + t.name + "' is not finished there; finish it with resume=true first");
  return success();
}
} // namespace

FailureOr<OpenedRun> openRun(Location loc, const RunSetupOptions &o,
                             llvm::function_ref<LogicalResult()> checkGpu) {
  OpenedRun run;
  bool runDirExisted = llvm::sys::fs::exists(o.runDir);
  llvm::Expected<RunDirLock> lock = RunDirLock::acquire(o.runDir, /*create=*/true);
  if (!lock)
    return emitError(loc) << "evo-evolve: " << llvm::toString(lock.takeError());
  run.lock.emplace(std::move(*lock));
  // A run that fails before its store exists leaves no run-dir behind (removed while the lock
  // is still held: `run` is destroyed after this; RunDirLock::acquire retries when its lock
  // file was unlinked under it).
  bool storeMade = false;
  auto dropNewRunDir = llvm::make_scope_exit([&] {
    if (runDirExisted || storeMade)
      return;
    llvm::sys::fs::remove(o.runDir + "/.evo-lock");
    llvm::sys::fs::remove(o.runDir); // only when empty
  });
  bool exists = llvm::sys::fs::exists(o.runDir + "/run.sqlite");
  if (!exists && failed(checkGpu()))
    return failure();
  if (!o.replayRun.empty() && failed(openReplay(loc, o, run)))
    return failure();
  if (exists && !o.resume)
    return emitError(loc) << "evo-evolve: '" << o.runDir
                          << "' already holds a run; pass resume=true to continue it, or choose "
                             "another run-dir";
  std::vector<std::pair<std::string, std::string>> initialMeta = {{"input_hash", o.inputHash},
                                                                  {"config", o.config}};
  if (run.replay)
    initialMeta.push_back({"replay_of", o.replayRun});
  if (!o.shard.empty())
    initialMeta.push_back({"shard", o.shard});
  llvm::Expected<std::unique_ptr<RunStore>> store = RunStore::open(o.runDir, !exists, initialMeta);
  if (!store)
    return emitError(loc) << "evo-evolve: " << llvm::toString(store.takeError());
  storeMade = true;
  run.store = std::move(*store);
  if (exists) {
    std::optional<std::string> oldInput = run.store->getMeta("input_hash");
    std::optional<std::string> oldConfig = run.store->getMeta("config");
    if (!o.forceResume && (oldInput != o.inputHash || oldConfig != o.config))
      return emitError(loc) << "evo-evolve: the run in '" << o.runDir << "' was made from "
                            << (oldInput != o.inputHash ? "another input"
                                                        : "another configuration")
                            << "; resume it with the same ones, or pass force-resume=true";
    if (failed(checkStoredShard(loc, o.runDir, *run.store, o.shard)))
      return failure();
  }
  return run;
}

FailureOr<uint64_t> verifierSeed(Location loc, RunStore &store, uint64_t chosen) {
  uint64_t vs = chosen;
  std::optional<std::string> stored = store.getMeta("verify_seed");
  uint64_t old = 0;
  if (stored && llvm::StringRef(*stored).getAsInteger(10, old))
    old = 0;
  if (!vs)
    vs = old ? old : freshSeed();
  if (!vs)
    return emitError(loc, "evo-evolve: no entropy for the verifier's seed; pass verify-seed=N");
  if (vs != old)
    if (llvm::Error e = store.setMeta("verify_seed", std::to_string(vs)))
      return emitError(loc) << llvm::toString(std::move(e));
  return vs;
}

} // namespace evo
