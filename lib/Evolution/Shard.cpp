//===- Shard.cpp - one run's share of the tasks ---------------------------------===//
//
// The assignment is a function of the functions' names and task lists and of the shard count
// only, so every shard of an array computes the same one, runs-merge can check it, and the
// module's order plays no part. docs/evolution.md, "Many hosts: shards and Slurm".
//
//===----------------------------------------------------------------------===//

#include "evo/Evolution/Shard.h"
#include "EvolveSteps.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include <algorithm>
#include <cstdlib>
#include <map>
#include <tuple>

using namespace mlir;
namespace json = llvm::json;

namespace evo {

namespace {
llvm::Error makeError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

/// "I/N" as two numbers with 0 <= I < N.
std::optional<std::pair<unsigned, unsigned>> parseIndexCount(llvm::StringRef text) {
  auto [i, n] = text.trim().split('/');
  unsigned index = 0, count = 0;
  if (i.trim().getAsInteger(10, index) || n.trim().getAsInteger(10, count) || count == 0 ||
      index >= count)
    return std::nullopt;
  return std::make_pair(index, count);
}
} // namespace

llvm::Expected<std::optional<ShardSpec>>
parseShardSpec(llvm::StringRef option, llvm::function_ref<const char *(const char *)> getenv) {
  option = option.trim();
  if (option == "all")
    return std::nullopt;
  if (!option.empty()) {
    std::optional<std::pair<unsigned, unsigned>> ic = parseIndexCount(option);
    if (!ic)
      return makeError("shard must be I/N with 0 <= I < N (e.g. shard=0/4), or 'all'; got '" +
                       option + "'");
    return ShardSpec{ic->first, ic->second, ("shard=" + option).str()};
  }
  const char *id = getenv("SLURM_ARRAY_TASK_ID");
  if (!id || !*id)
    return std::nullopt;
  const char *count = getenv("SLURM_ARRAY_TASK_COUNT");
  const char *min = getenv("SLURM_ARRAY_TASK_MIN");
  std::string origin = llvm::formatv("SLURM_ARRAY_TASK_ID={0}, SLURM_ARRAY_TASK_MIN={1}, "
                                     "SLURM_ARRAY_TASK_COUNT={2}",
                                     id, min ? min : "(unset)", count ? count : "(unset)")
                           .str();
  int64_t i = 0, m = 0, n = 0;
  bool bad = llvm::StringRef(id).trim().getAsInteger(10, i) || !count ||
             llvm::StringRef(count).trim().getAsInteger(10, n) ||
             (min && *min && llvm::StringRef(min).trim().getAsInteger(10, m));
  if (bad || n < 1 || i - m < 0 || i - m >= n)
    return makeError(
        "a Slurm job array element (" + origin +
        ") is run as shard (ID - MIN)/COUNT, but these do not give one; submit a contiguous "
        "array (--array=0-<N-1>), or pass shard=I/N (or shard=all for the whole input)");
  return ShardSpec{static_cast<unsigned>(i - m), static_cast<unsigned>(n), origin};
}

bool ShardFunction::whole() const { return llvm::all_equal(shards); }

ShardPlan ShardPlan::assign(unsigned index, unsigned count, std::vector<ShardFunction> functions) {
  ShardPlan plan;
  plan.index = index;
  plan.count = std::max(1u, count);
  size_t total = 0;
  for (const ShardFunction &f : functions)
    total += f.tasks.size();
  size_t fair = std::max<size_t>(1, (total + plan.count - 1) / plan.count);
  // The units: a function, or a piece of one (function, first task, size).
  struct Unit {
    size_t function, first, size;
  };
  std::vector<Unit> units;
  for (auto [fi, f] : llvm::enumerate(functions)) {
    size_t n = f.tasks.size();
    size_t pieces = n > fair ? (n + fair - 1) / fair : 1;
    for (size_t p = 0, first = 0; p < pieces && first < n; ++p) {
      size_t size = n / pieces + (p < n % pieces);
      units.push_back({fi, first, size});
      first += size;
    }
    f.shards.assign(n, 0);
  }
  std::stable_sort(units.begin(), units.end(), [&](const Unit &a, const Unit &b) {
    return std::make_tuple(-static_cast<int64_t>(a.size),
                           llvm::StringRef(functions[a.function].name), a.first) <
           std::make_tuple(-static_cast<int64_t>(b.size),
                           llvm::StringRef(functions[b.function].name), b.first);
  });
  std::vector<size_t> load(plan.count, 0);
  for (const Unit &u : units) {
    unsigned s = std::min_element(load.begin(), load.end()) - load.begin();
    load[s] += u.size;
    for (size_t t = u.first; t < u.first + u.size; ++t)
      functions[u.function].shards[t] = s;
  }
  plan.functions = std::move(functions);
  return plan;
}

bool ShardPlan::ownsTask(llvm::StringRef task) const {
  for (const ShardFunction &f : functions)
    for (auto [t, s] : llvm::zip_equal(f.tasks, f.shards))
      if (t == task)
        return s == index;
  return false;
}

std::vector<std::string> ShardPlan::tasksOf(unsigned shard) const {
  std::vector<std::string> tasks;
  for (const ShardFunction &f : functions)
    for (auto [t, s] : llvm::zip_equal(f.tasks, f.shards))
      if (s == shard)
        tasks.push_back(t);
  return tasks;
}

std::string ShardPlan::name() const { return llvm::formatv("{0}/{1}", index, count).str(); }

std::string ShardPlan::toMeta() const {
  json::Array fs;
  for (const ShardFunction &f : functions) {
    json::Array shards;
    for (unsigned s : f.shards)
      shards.push_back(static_cast<int64_t>(s));
    fs.push_back(json::Object{
        {"name", f.name}, {"tasks", json::Array(f.tasks)}, {"shards", std::move(shards)}});
  }
  return llvm::formatv("{0}", json::Value(json::Object{{"index", static_cast<int64_t>(index)},
                                                       {"count", static_cast<int64_t>(count)},
                                                       {"functions", std::move(fs)}}))
      .str();
}

llvm::Expected<ShardPlan> ShardPlan::fromMeta(llvm::StringRef text) {
  llvm::Expected<json::Value> v = json::parse(text);
  if (!v)
    return makeError("meta 'shard' is not JSON: " + llvm::toString(v.takeError()));
  const json::Object *o = v->getAsObject();
  std::optional<int64_t> index = o ? o->getInteger("index") : std::nullopt;
  std::optional<int64_t> count = o ? o->getInteger("count") : std::nullopt;
  const json::Array *fs = o ? o->getArray("functions") : nullptr;
  if (!index || !count || !fs || *count < 1 || *index < 0 || *index >= *count)
    return makeError("meta 'shard' is not a shard plan: " + text.take_front(200));
  ShardPlan plan;
  plan.index = static_cast<unsigned>(*index);
  plan.count = static_cast<unsigned>(*count);
  for (const json::Value &fv : *fs) {
    const json::Object *f = fv.getAsObject();
    std::optional<llvm::StringRef> name = f ? f->getString("name") : std::nullopt;
    const json::Array *tasks = f ? f->getArray("tasks") : nullptr;
    const json::Array *shards = f ? f->getArray("shards") : nullptr;
    if (!name || !tasks || !shards || tasks->size() != shards->size())
      return makeError("meta 'shard': a function entry is damaged");
    ShardFunction sf;
    sf.name = name->str();
    for (auto [t, s] : llvm::zip_equal(*tasks, *shards)) {
      std::optional<llvm::StringRef> tn = t.getAsString();
      std::optional<int64_t> sn = s.getAsInteger();
      if (!tn || !sn || *sn < 0 || *sn >= *count)
        return makeError("meta 'shard': function '" + sf.name + "' has a damaged task entry");
      sf.tasks.push_back(tn->str());
      sf.shards.push_back(static_cast<unsigned>(*sn));
    }
    plan.functions.push_back(std::move(sf));
  }
  return plan;
}

//===----------------------------------------------------------------------===//
// The pass's side (EvolveSteps.h)
//===----------------------------------------------------------------------===//

FailureOr<std::optional<ShardPlan>> planShard(Location loc, llvm::StringRef option,
                                              ArrayRef<gpu::GPUModuleOp> targets) {
  llvm::Expected<std::optional<ShardSpec>> spec =
      parseShardSpec(option, [](const char *name) { return std::getenv(name); });
  if (!spec)
    return emitError(loc) << "evo-evolve: " << llvm::toString(spec.takeError());
  if (!*spec)
    return std::optional<ShardPlan>();
  std::vector<ShardFunction> functions;
  for (gpu::GPUModuleOp gm : targets) {
    FailureOr<LaunchPlan> plan = LaunchPlan::fromModule(gm);
    if (failed(plan))
      return failure();
    ShardFunction f;
    f.name = plan->funcName;
    for (const TaskDesc &t : plan->tasks)
      f.tasks.push_back(t.name);
    functions.push_back(std::move(f));
  }
  ShardPlan plan = ShardPlan::assign((*spec)->index, (*spec)->count, std::move(functions));
  plan.origin = (*spec)->origin;
  return std::optional<ShardPlan>(std::move(plan));
}

namespace {
/// "a, b, c" with at most `max` items, then "and N more".
std::string listed(ArrayRef<std::string> items, size_t max = 24) {
  std::string s;
  for (auto [i, item] : llvm::enumerate(items)) {
    if (i == max) {
      s += llvm::formatv(" and {0} more", items.size() - max).str();
      break;
    }
    s += (i ? ", " : "") + item;
  }
  return s.empty() ? "none" : s;
}
} // namespace

void selectShard(Location loc, const ShardPlan &shard, SmallVectorImpl<gpu::GPUModuleOp> &targets) {
  std::vector<std::string> mine, others, split;
  size_t myTasks = 0, allTasks = 0;
  for (const ShardFunction &f : shard.functions) {
    allTasks += f.tasks.size();
    bool whole = f.whole();
    std::vector<std::string> myPart;
    std::map<unsigned, std::vector<std::string>> theirs;
    for (auto [t, s] : llvm::zip_equal(f.tasks, f.shards))
      (s == shard.index ? myPart : theirs[s]).push_back(t);
    myTasks += myPart.size();
    if (whole && !myPart.empty())
      mine.push_back(f.name);
    else if (!myPart.empty())
      mine.push_back(f.name + " (" + listed(myPart) + ")");
    for (auto &[s, ts] : theirs)
      others.push_back(whole ? llvm::formatv("{0} (shard {1})", f.name, s).str()
                             : llvm::formatv("{0} ({1}: shard {2})", f.name, listed(ts), s).str());
    if (!whole && !myPart.empty())
      split.push_back(f.name);
  }
  auto diag = emitRemark(loc);
  diag << llvm::formatv("evo-evolve: shard {0} ({1}): evolves {2} of {3} tasks: {4}; leaves to "
                        "the other shards: {5}",
                        shard.name(), shard.origin, myTasks, allTasks, listed(mine), listed(others))
              .str();
  if (!split.empty())
    diag << "; split over shards, so verified as a whole only when the merged run is applied: "
         << listed(split);
  // The functions with no task of this shard are neither evolved nor verified here: their
  // kernels stay the naive lowering in this shard's output module.
  llvm::erase_if(targets, [&](gpu::GPUModuleOp gm) {
    FailureOr<LaunchPlan> plan = LaunchPlan::fromModule(gm);
    return succeeded(plan) &&
           llvm::none_of(plan->tasks, [&](const TaskDesc &t) { return shard.ownsTask(t.name); });
  });
}

LogicalResult checkStoredShard(Location loc, llvm::StringRef runDir, RunStore &store,
                               llvm::StringRef shardMeta) {
  std::optional<std::string> stored = store.getMeta("shard");
  if (!stored && shardMeta.empty())
    return success();
  llvm::Expected<ShardPlan> now =
      shardMeta.empty() ? llvm::Expected<ShardPlan>(ShardPlan()) : ShardPlan::fromMeta(shardMeta);
  if (!now)
    return emitError(loc) << "evo-evolve: " << llvm::toString(now.takeError());
  if (!stored)
    return emitError(loc) << "evo-evolve: the run in '" << runDir << "' was not made as a shard; "
                          << "resume it without shard " << now->name()
                          << " (shard=all, and no Slurm array variables)";
  llvm::Expected<ShardPlan> then = ShardPlan::fromMeta(*stored);
  if (!then)
    return emitError(loc) << "evo-evolve: '" << runDir << "': " << llvm::toString(then.takeError());
  if (shardMeta.empty())
    return emitError(loc) << "evo-evolve: the run in '" << runDir << "' is shard " << then->name()
                          << "; resume it as that shard (shard=" << then->name()
                          << "), or merge the finished shards with `evo-opt runs-merge`";
  if (then->index != now->index || then->count != now->count)
    return emitError(loc) << "evo-evolve: the run in '" << runDir << "' is shard " << then->name()
                          << ", not " << now->name()
                          << "; resume it as that shard (shard=" << then->name() << ")";
  if (*stored != shardMeta)
    return emitError(loc) << "evo-evolve: the run in '" << runDir << "' is shard " << then->name()
                          << " of another assignment of the tasks (another input or evo-opt)";
  return success();
}

} // namespace evo
