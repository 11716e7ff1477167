//===- RunMerge.h - the finished shards of a run, joined into one -*- C++ -*-===//
//
// `evo-opt runs-merge OUT RUN...`: the run stores of the shards of one array (Shard.h; each
// made by `evo-evolve shard=I/N` from the same input and configuration) become one new run
// directory OUT, as if one evo-opt had evolved every task: candidates renumbered in the input's
// function and task order (parents, baseline and best ids, duplicates' reasons, LLM requests'
// solution ids and the evaluation order follow), the meta (input, configuration, the final
// re-verification certificates) joined, the LLM response caches copied, and the reports made
// anew. `evo-evolve run-dir=OUT resume=true` with the shards' options then applies the winners
// without a GPU. docs/evolution.md, "Many hosts: shards and Slurm".
//
//===----------------------------------------------------------------------===//

#ifndef EVO_EVOLUTION_RUNMERGE_H
#define EVO_EVOLUTION_RUNMERGE_H

#include "llvm/Support/Error.h"
#include <string>
#include <vector>

namespace evo {

struct MergeOptions {
  /// The new run directory; it must not exist. It is built beside itself under a temporary name
  /// and renamed into place at the end, so a failed merge leaves no OUT.
  std::string out;
  /// The shards' run directories, in any order: every shard of the array exactly once.
  std::vector<std::string> runs;
  /// Merge shards whose tasks are not all done (or whose function lacks its final
  /// re-verification certificate); the merged run's resume then does the rest, on a GPU.
  bool allowIncomplete = false;
};

struct MergeSummary {
  unsigned shards = 0;
  size_t functions = 0, tasks = 0, candidates = 0, cacheEntries = 0;
  /// Functions whose final re-verification certificate the merged run holds (applied without
  /// a GPU), and those the apply verifies on a GPU (split over shards, or not certified).
  std::vector<std::string> certified, toVerify;
  /// What --allow-incomplete let through, and other things the user should know.
  std::vector<std::string> incomplete, warnings;
};

/// Merges `o.runs` into `o.out` (see the file comment). Every problem with the shards (not
/// shards, of another input or configuration or array, a shard twice or missing, unfinished
/// without allowIncomplete, in use by an evo-opt) is an error that names it, and nothing is
/// written.
llvm::Expected<MergeSummary> mergeRuns(const MergeOptions &o);

} // namespace evo

#endif
