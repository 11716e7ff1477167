//===- Shard.h - one run's share of the tasks, for many hosts -----*- C++ -*-===//
//
// `evo-evolve shard=I/N` (or a Slurm job array's SLURM_ARRAY_TASK_ID/COUNT) makes a run evolve
// a deterministic share of the input's tasks into its own run directory; `evo-opt runs-merge`
// (RunMerge.h) joins the finished shards into one store that a last evo-opt applies without a
// GPU. The unit of the share is the function: all tasks of a function go to one shard, so that
// shard can verify the function's emitted kernels as a whole (the final re-verification) and
// store its certificate. Only a function with more tasks than a shard's fair share
// (ceil(tasks / N)) is cut into consecutive pieces; its final re-verification then happens
// when the merged run is applied (on a GPU). docs/evolution.md, "Many hosts: shards and Slurm".
//
//===----------------------------------------------------------------------===//

#ifndef EVO_EVOLUTION_SHARD_H
#define EVO_EVOLUTION_SHARD_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <optional>
#include <string>
#include <vector>

namespace evo {

/// Which shard a run is: `index` of `count`, and where that came from (for messages).
struct ShardSpec {
  unsigned index = 0, count = 1;
  std::string origin; // "shard=1/4" or "SLURM_ARRAY_TASK_ID=1, SLURM_ARRAY_TASK_COUNT=4"
};

/// The shard of a run from evo-evolve's `shard` option: "I/N" (0 <= I < N), "all" (no
/// sharding), or empty: from Slurm's job array variables when SLURM_ARRAY_TASK_ID is set
/// (index ID - SLURM_ARRAY_TASK_MIN, count SLURM_ARRAY_TASK_COUNT), else no sharding.
/// `getenv` looks a variable up (null: unset).
llvm::Expected<std::optional<ShardSpec>>
parseShardSpec(llvm::StringRef option, llvm::function_ref<const char *(const char *)> getenv);

/// A function of the input as sharding sees it: its tasks in its plan's order, and the shard
/// of each.
struct ShardFunction {
  std::string name;
  std::vector<std::string> tasks;
  std::vector<unsigned> shards; // one per task
  /// All its tasks are in one shard (which can then verify the function as a whole).
  bool whole() const;
};

/// The assignment of every task of the input to `count` shards, and which one this run is.
struct ShardPlan {
  unsigned index = 0, count = 1;
  std::vector<ShardFunction> functions; // in the module's order
  std::string origin;                   // ShardSpec::origin, for messages (not stored)

  /// Assigns `functions` (their `shards` are ignored) to `count` shards, deterministically and
  /// balanced by task count: each function is one unit unless it has more than
  /// ceil(total / count) tasks, in which case it is cut into that many consecutive pieces of
  /// near-equal size; units go, largest first (ties by function name, then piece), to the shard
  /// with the fewest tasks so far (ties: the lowest index). The module's order plays no part.
  static ShardPlan assign(unsigned index, unsigned count, std::vector<ShardFunction> functions);

  bool ownsTask(llvm::StringRef task) const;
  /// The tasks of shard `s`.
  std::vector<std::string> tasksOf(unsigned s) const;

  /// "I/N".
  std::string name() const;
  /// The run store's meta "shard": {"index", "count", "functions": [{"name", "tasks",
  /// "shards"}]} (canonical JSON: equal plans give equal text).
  std::string toMeta() const;
  static llvm::Expected<ShardPlan> fromMeta(llvm::StringRef text);
};

} // namespace evo

#endif
