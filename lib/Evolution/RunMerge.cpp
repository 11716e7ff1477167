//===- RunMerge.cpp - the finished shards of a run, joined into one ---------------===//
//
// Candidates are renumbered in the input's order (its functions, then each function's tasks,
// then each task's candidates by id), which is the order an unsharded run creates them in: a
// merged run's ids and evaluation order are those the unsharded run would have given. Every
// reference to a candidate id follows: `parents`, the tasks' `baseline_id`/`best_id`, the
// reason of a duplicate ("identical PTX to candidate N") and the solutions shown in an LLM
// request's context. LLM cache files are keyed by the request, not by ids: they are copied as
// they are, from directories read as untrusted (evo/LLM/Untrusted.h: no symbolic link
// followed, only regular files with key names). docs/evolution.md, "Many hosts: shards and
// Slurm".
//
//===----------------------------------------------------------------------===//

#include "evo/Evolution/RunMerge.h"
#include "evo/Evolution/RunDirLock.h"
#include "evo/Evolution/RunStore.h"
#include "evo/Evolution/Shard.h"
#include "evo/LLM/Mailbox.h"
#include "evo/LLM/Untrusted.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <set>

using llvm::Error;
using llvm::Expected;
using llvm::StringRef;
namespace json = llvm::json;

namespace evo {

namespace {

Error makeError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

std::string quoted(StringRef dir) { return ("'" + dir + "'").str(); }

/// Meta keys that belong to a run as a whole (not to a task or function, which carry a ':')
/// and are not joined like the others: the store's own, the run's identity, the shard.
bool isOwnKey(StringRef key) {
  return key == "schema_version" || key == "format" || key == "created_at" || key == "input_hash" ||
         key == "config" || key == "shard";
}

/// One shard, opened: its run-dir lock is held until the merge ends.
struct Shard {
  std::string dir;
  std::optional<RunDirLock> lock;
  std::unique_ptr<RunStore> store;
  std::map<std::string, std::string> meta;
  ShardPlan plan;
};

Expected<Shard> openShard(StringRef dir) {
  Shard s;
  s.dir = dir.str();
  llvm::SmallString<256> file(dir);
  llvm::sys::path::append(file, "run.sqlite");
  if (!llvm::sys::fs::exists(file))
    return makeError(quoted(dir) + ": no evo run store there (run.sqlite)");
  Expected<RunDirLock> lock = RunDirLock::acquire(dir, /*create=*/false);
  if (!lock)
    return lock.takeError();
  s.lock.emplace(std::move(*lock));
  Expected<std::unique_ptr<RunStore>> store = RunStore::open(dir, /*create=*/false);
  if (!store)
    return store.takeError();
  s.store = std::move(*store);
  for (auto &[k, v] : s.store->getAllMeta())
    s.meta[k] = v;
  auto it = s.meta.find("shard");
  if (it == s.meta.end())
    return makeError(quoted(dir) +
                     " is not a shard (it was made without shard=I/N and outside a Slurm job "
                     "array); runs-merge joins the shards of one array");
  Expected<ShardPlan> plan = ShardPlan::fromMeta(it->second);
  if (!plan)
    return makeError(quoted(dir) + ": " + llvm::toString(plan.takeError()));
  s.plan = std::move(*plan);
  return std::move(s);
}

bool samePlan(const ShardPlan &a, const ShardPlan &b) {
  if (a.count != b.count || a.functions.size() != b.functions.size())
    return false;
  for (auto [f, g] : llvm::zip_equal(a.functions, b.functions))
    if (f.name != g.name || f.tasks != g.tasks || f.shards != g.shards)
      return false;
  return true;
}

/// The shards are the N distinct shards of one array, of one input and configuration.
Error checkArray(std::vector<Shard> &shards) {
  const Shard &first = shards.front();
  for (const Shard &s : llvm::drop_begin(shards)) {
    for (StringRef key : {"input_hash", "config"})
      if (s.meta.count(key.str()) != first.meta.count(key.str()) ||
          (s.meta.count(key.str()) && s.meta.at(key.str()) != first.meta.at(key.str())))
        return makeError(quoted(first.dir) + " and " + quoted(s.dir) + " were made from " +
                         (key == "config" ? "different configurations" : "different inputs") +
                         "; the shards of one array are made from the same input with the same "
                         "evo-evolve options");
    if (s.plan.count != first.plan.count)
      return makeError(quoted(first.dir) + " is shard " + first.plan.name() + " but " +
                       quoted(s.dir) + " is shard " + s.plan.name() +
                       ": they belong to arrays of different sizes");
    if (!samePlan(s.plan, first.plan))
      return makeError(quoted(first.dir) + " and " + quoted(s.dir) +
                       " assign the tasks to shards differently (made by different evo-opt "
                       "versions?)");
  }
  std::map<unsigned, const Shard *> byIndex;
  for (const Shard &s : shards) {
    auto [it, fresh] = byIndex.insert({s.plan.index, &s});
    if (!fresh)
      return makeError(quoted(it->second->dir) + " and " + quoted(s.dir) + " are both shard " +
                       s.plan.name() + "; give each shard of the array once");
  }
  std::string missing;
  for (unsigned i = 0; i < first.plan.count; ++i)
    if (!byIndex.count(i))
      missing +=
          (missing.empty() ? "" : ", ") + llvm::formatv("{0}/{1}", i, first.plan.count).str();
  if (!missing.empty())
    return makeError("shard " + missing + " is missing (" + llvm::Twine(shards.size()) + " of " +
                     llvm::Twine(first.plan.count) +
                     " given); give the run directory of every shard of the array");
  return Error::success();
}

/// What keeps a shard from being finished: its tasks not stored or not done, a function it
/// evolved whole without its final re-verification certificate, a task not its own.
Expected<std::vector<std::string>> unfinished(const Shard &s) {
  std::vector<std::string> why;
  std::set<std::string> own;
  for (const std::string &t : s.plan.tasksOf(s.plan.index)) {
    own.insert(t);
    std::optional<TaskRecord> r = s.store->getTask(t);
    if (!r)
      why.push_back("task '" + t + "' was not started");
    else if (r->status != "done")
      why.push_back("task '" + t + "' is not finished (" + r->status + ")");
  }
  for (const TaskRecord &t : s.store->getTasks())
    if (!own.count(t.name))
      return makeError(quoted(s.dir) + " (shard " + s.plan.name() + ") holds task '" + t.name +
                       "', which is not one of its own");
  for (const ShardFunction &f : s.plan.functions) {
    if (f.tasks.empty() || !f.whole() || f.shards.front() != s.plan.index)
      continue;
    auto it = s.meta.find("final_check:" + f.name);
    std::optional<json::Object> cert;
    if (it != s.meta.end()) {
      if (Expected<json::Value> v = json::parse(it->second)) {
        if (json::Object *o = v->getAsObject())
          cert = std::move(*o);
      } else {
        llvm::consumeError(v.takeError());
      }
    }
    if (!cert || cert->getString("verdict") != StringRef("valid"))
      why.push_back("function '" + f.name + "' has no final re-verification certificate");
  }
  return why;
}

/// The run-level meta of a merged run: the shards' identity, the values every shard agrees on,
/// every task's and function's entries (final_check:<function>, ...), and `merged_from`: each
/// shard's directory, index and run-level meta (its verifier seed, device, ...).
Expected<std::vector<std::pair<std::string, std::string>>>
mergedMeta(const std::vector<const Shard *> &byIndex) {
  const Shard &first = *byIndex.front();
  std::vector<std::pair<std::string, std::string>> meta;
  for (StringRef key : {"input_hash", "config"})
    if (first.meta.count(key.str()))
      meta.push_back({key.str(), first.meta.at(key.str())});
  std::map<std::string, std::pair<std::string, const Shard *>> entries;
  std::map<std::string, std::vector<std::string>> runLevel; // key -> one value per shard
  json::Array from;
  for (const Shard *s : byIndex) {
    json::Object own;
    for (auto &[key, value] : s->meta) {
      if (isOwnKey(key))
        continue;
      if (StringRef(key).contains(':')) {
        auto [it, fresh] = entries.insert({key, {value, s}});
        if (!fresh && it->second.first != value)
          return makeError(quoted(it->second.second->dir) + " and " + quoted(s->dir) +
                           " both hold meta '" + key + "', with different values");
        continue;
      }
      runLevel[key].push_back(value);
      own[key] = value;
    }
    llvm::SmallString<256> real;
    std::string dir = llvm::sys::fs::real_path(s->dir, real) ? s->dir : std::string(real);
    from.push_back(json::Object{
        {"run", dir},
        {"shard", s->plan.name()},
        {"created_at", s->meta.count("created_at") ? s->meta.at("created_at") : std::string()},
        {"meta", std::move(own)}});
  }
  // A value every shard has alike (a chosen verify_seed, one kind of GPU) stays the run's; one
  // that differs (each shard's drawn verifier seed) is only in merged_from.
  for (auto &[key, values] : runLevel)
    if (values.size() == byIndex.size() && llvm::all_equal(values))
      meta.push_back({key, values.front()});
  for (auto &[key, value] : entries)
    meta.push_back({key, value.first});
  meta.push_back({"merged_from", llvm::formatv("{0}", json::Value(std::move(from))).str()});
  return meta;
}

/// "identical PTX to candidate N" with N renumbered.
std::string remapReason(StringRef reason, const std::map<int64_t, int64_t> &ids) {
  static constexpr StringRef kDuplicate = "identical PTX to candidate ";
  if (!reason.starts_with(kDuplicate))
    return reason.str();
  StringRef rest = reason.drop_front(kDuplicate.size());
  StringRef digits = rest.take_while(llvm::isDigit);
  int64_t old = 0;
  if (digits.empty() || digits.getAsInteger(10, old) || !ids.count(old))
    return reason.str();
  return (kDuplicate + llvm::Twine(ids.at(old)) + rest.drop_front(digits.size())).str();
}

/// An LLM request's context names the solutions it showed by candidate id.
std::string remapRequest(StringRef request, const std::map<int64_t, int64_t> &ids) {
  Expected<json::Value> v = json::parse(request);
  if (!v) {
    llvm::consumeError(v.takeError());
    return request.str();
  }
  json::Object *o = v->getAsObject();
  json::Object *context = o ? o->getObject("context") : nullptr;
  json::Array *solutions = context ? context->getArray("solutions") : nullptr;
  if (!solutions)
    return request.str();
  for (json::Value &sv : *solutions)
    if (json::Object *s = sv.getAsObject())
      if (std::optional<int64_t> id = s->getInteger("id"); id && ids.count(*id))
        (*s)["id"] = ids.at(*id);
  return llvm::formatv("{0}", *v).str();
}

/// Copies RUN/llm-cache/<key>.json into OUT/llm-cache. The directory is read as untrusted: a
/// symbolic link, a special file or a name that is not a key is not followed or copied. An
/// entry two shards hold with different contents (two replies to one request) keeps the first.
Expected<size_t> copyCache(const Shard &s, StringRef out, std::map<std::string, std::string> &from,
                           std::vector<std::string> &warnings) {
  Expected<llm::SafeDir> run = llm::SafeDir::open(s.dir, /*create=*/false);
  if (!run)
    return run.takeError();
  llm::SafeDir::Kind kind = run->kind("llm-cache");
  if (kind == llm::SafeDir::Kind::Missing)
    return 0;
  if (kind != llm::SafeDir::Kind::Directory) {
    warnings.push_back(run->display("llm-cache") +
                       " is not a directory (a symbolic link?): its LLM replies are not copied; "
                       "a replay of the merged run cannot answer that shard's LLM candidates");
    return 0;
  }
  Expected<llm::SafeDir> cache = run->sub("llm-cache", /*create=*/false);
  if (!cache)
    return cache.takeError();
  Expected<std::vector<std::string>> names = cache->list();
  if (!names)
    return names.takeError();
  Expected<llm::SafeDir> outDir = llm::SafeDir::open(out, /*create=*/false);
  if (!outDir)
    return outDir.takeError();
  Expected<llm::SafeDir> dest = outDir->sub("llm-cache", /*create=*/true);
  if (!dest)
    return dest.takeError();
  size_t copied = 0;
  std::sort(names->begin(), names->end());
  for (const std::string &name : *names) {
    StringRef n(name);
    if (!llm::isPlainFileName(n) || !n.consume_back(".json") || !llm::isMailboxKey(n))
      continue; // temporaries, anything else
    if (cache->kind(name) != llm::SafeDir::Kind::Regular) {
      warnings.push_back(cache->display(name) + " is not a regular file: not copied");
      continue;
    }
    Expected<std::string> text = cache->read(name, llm::kMaxJsonFileBytes, /*allowHardLinks=*/true);
    if (!text) {
      warnings.push_back(llvm::toString(text.takeError()) + ": not copied");
      continue;
    }
    auto [it, fresh] = from.insert({name, s.dir});
    if (!fresh) {
      Expected<std::string> kept =
          dest->read(name, llm::kMaxJsonFileBytes, /*allowHardLinks=*/true);
      if (!kept || *kept != *text)
        warnings.push_back("LLM cache entry " + name + " differs between " + quoted(it->second) +
                           " and " + quoted(s.dir) + " (two replies to one request): kept " +
                           quoted(it->second) + "'s");
      if (!kept)
        llvm::consumeError(kept.takeError());
      continue;
    }
    if (Error e = dest->writeAtomically(name, *text))
      return std::move(e);
    ++copied;
  }
  return copied;
}

/// Renames the finished directory into place, never over an existing one.
Error moveIntoPlace(StringRef temp, StringRef out) {
  std::string from = temp.str(), to = out.str();
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0)
    return Error::success();
  int err = errno;
  if (err != EINVAL && err != ENOSYS) // not a file system that refuses the flag
    return makeError("cannot rename " + quoted(temp) + " to " + quoted(out) + ": " +
                     std::strerror(err));
  if (llvm::sys::fs::exists(out))
    return makeError(quoted(out) + " appeared while merging; nothing was written there");
  if (std::error_code ec = llvm::sys::fs::rename(temp, out))
    return makeError("cannot rename " + quoted(temp) + " to " + quoted(out) + ": " + ec.message());
  return Error::success();
}

/// The merged run's numbering so far: ids and evaluation orders continue from task to task.
struct Numbering {
  int64_t nextId = 1, nextOrder = 1;
};

/// One task of shard `s` into the merged `store`: its candidates renumbered (`ids`: the shard's
/// ids to the merged run's), and every reference to an id with them.
Error importTask(RunStore &store, const Shard &s, StringRef taskName,
                 std::map<int64_t, int64_t> &ids, Numbering &n, MergeSummary &summary) {
  std::optional<TaskRecord> task = s.store->getTask(taskName);
  if (!task)
    return Error::success(); // not started (allowIncomplete): the merged run's resume searches it
  std::vector<CandidateRecord> cs = s.store->getCandidates(taskName);
  for (const CandidateRecord &c : cs)
    ids[c.id] = n.nextId++;
  // The evaluation order, renumbered in the order this task's verdicts were recorded.
  std::vector<CandidateRecord *> evaluated;
  for (CandidateRecord &c : cs)
    if (c.evalOrder >= 0)
      evaluated.push_back(&c);
  llvm::stable_sort(evaluated, [](const CandidateRecord *a, const CandidateRecord *b) {
    return a->evalOrder < b->evalOrder;
  });
  for (CandidateRecord *c : evaluated)
    c->evalOrder = n.nextOrder++;
  for (CandidateRecord &c : cs) {
    for (int64_t &p : c.parents) {
      auto it = ids.find(p);
      if (it == ids.end())
        return makeError(llvm::formatv("{0}: candidate {1} of task '{2}' names parent {3}, "
                                       "which is not in that run",
                                       quoted(s.dir), c.id, taskName, p)
                             .str());
      p = it->second;
    }
    c.reason = remapReason(c.reason, ids);
    if (c.llmRequest != "{}")
      c.llmRequest = remapRequest(c.llmRequest, ids);
    c.id = ids.at(c.id);
  }
  auto remapTaskId = [&](int64_t id) -> int64_t {
    auto it = ids.find(id);
    return it == ids.end() ? -1 : it->second;
  };
  TaskRecord stored = *task;
  stored.baselineId = stored.bestId = -1;
  if (Error e = store.upsertTask(stored))
    return e;
  if (Error e = store.importCandidates(cs))
    return e;
  stored.baselineId = task->baselineId < 0 ? -1 : remapTaskId(task->baselineId);
  stored.bestId = task->bestId < 0 ? -1 : remapTaskId(task->bestId);
  if (Error e = store.upsertTask(stored))
    return e;
  ++summary.tasks;
  summary.candidates += cs.size();
  return Error::success();
}

/// The shard run directories, each given once, opened (and locked) in the order given.
Expected<std::vector<Shard>> openShards(llvm::ArrayRef<std::string> dirs) {
  std::vector<Shard> shards;
  for (const std::string &dir : dirs) {
    for (const Shard &s : shards)
      if (llvm::sys::fs::equivalent(s.dir, dir))
        return makeError(quoted(s.dir) + " and " + quoted(dir) +
                         " are the same run directory; give each shard once");
    Expected<Shard> s = openShard(dir);
    if (!s)
      return s.takeError();
    shards.push_back(std::move(*s));
  }
  return std::move(shards);
}

/// Lists in `summary` what keeps each shard from being finished; an error unless
/// `allowIncomplete`.
Error checkFinished(const std::vector<const Shard *> &byIndex, bool allowIncomplete,
                    MergeSummary &summary) {
  std::string notDone;
  for (const Shard *s : byIndex) {
    Expected<std::vector<std::string>> why = unfinished(*s);
    if (!why)
      return why.takeError();
    for (const std::string &w : *why) {
      std::string line = "shard " + s->plan.name() + " (" + quoted(s->dir) + "): " + w;
      summary.incomplete.push_back(line);
      notDone += "\n  " + line;
    }
  }
  if (!notDone.empty() && !allowIncomplete)
    return makeError(
        "not every shard is finished:" + notDone +
        "\nresume the shard with the same options and resume=true (in its array element, or "
        "with shard=I/N), or pass --allow-incomplete to merge what there is (the merged run's "
        "resume then searches and verifies the rest, on a GPU)");
  return Error::success();
}

/// A new, empty directory beside `out` (the merged run is built there, then renamed into place).
Expected<llvm::SmallString<256>> makeTempBeside(StringRef out) {
  llvm::SmallString<256> parent(llvm::sys::path::parent_path(out));
  if (parent.empty())
    parent = ".";
  if (std::error_code ec = llvm::sys::fs::create_directories(parent))
    return makeError("cannot create " + quoted(parent) + ": " + ec.message());
  llvm::SmallString<256> model(parent);
  llvm::sys::path::append(model, "." + llvm::sys::path::filename(out) + ".merging-%%%%%%");
  llvm::SmallString<256> temp;
  std::error_code made;
  for (int attempt = 0; attempt < 16; ++attempt) {
    // The permissions of any new run directory (the umask's), not a private temporary's.
    llvm::sys::fs::createUniquePath(model, temp, /*MakeAbsolute=*/false);
    made = llvm::sys::fs::create_directory(temp, /*IgnoreExisting=*/false);
    if (made != std::errc::file_exists)
      break;
  }
  if (made)
    return makeError("cannot create a directory beside " + quoted(out) + ": " + made.message());
  return temp;
}

/// The merged run in `dir`: its meta, every task of every shard in the input's order, the LLM
/// caches and the reports.
Error buildMergedRun(StringRef dir, const std::vector<std::pair<std::string, std::string>> &meta,
                     const std::vector<const Shard *> &byIndex, MergeSummary &summary) {
  Expected<std::unique_ptr<RunStore>> opened = RunStore::open(dir, /*create=*/true, meta);
  if (!opened)
    return opened.takeError();
  RunStore &store = **opened;
  Numbering numbering;
  std::vector<std::map<int64_t, int64_t>> shardIds(byIndex.size());
  std::set<std::string> certified, toVerify;
  for (const ShardFunction &f : byIndex.front()->plan.functions) {
    ++summary.functions;
    bool certifiedHere =
        f.whole() && !f.tasks.empty() &&
        llvm::any_of(meta, [&](const auto &kv) { return kv.first == "final_check:" + f.name; });
    (certifiedHere ? certified : toVerify).insert(f.name);
    for (auto [taskName, shardIndex] : llvm::zip_equal(f.tasks, f.shards))
      if (Error e = importTask(store, *byIndex[shardIndex], taskName, shardIds[shardIndex],
                               numbering, summary))
        return e;
  }
  summary.certified.assign(certified.begin(), certified.end());
  summary.toVerify.assign(toVerify.begin(), toVerify.end());
  std::map<std::string, std::string> cacheFrom;
  for (const Shard *s : byIndex) {
    Expected<size_t> n = copyCache(*s, dir, cacheFrom, summary.warnings);
    if (!n)
      return makeError(quoted(s->dir) + "/llm-cache: " + llvm::toString(n.takeError()));
    summary.cacheEntries += *n;
  }
  return writeReports(store, dir);
}

} // namespace

Expected<MergeSummary> mergeRuns(const MergeOptions &o) {
  if (o.runs.empty())
    return makeError("no shard run directories to merge");
  if (o.out.empty())
    return makeError("no output run directory");
  if (llvm::sys::fs::exists(o.out))
    return makeError(quoted(o.out) + " exists; runs-merge makes a new run directory (choose "
                                     "another, or remove that one)");
  MergeSummary summary;
  Expected<std::vector<Shard>> shards = openShards(o.runs);
  if (!shards)
    return shards.takeError();
  if (Error e = checkArray(*shards))
    return std::move(e);
  std::vector<const Shard *> byIndex(shards->front().plan.count);
  for (const Shard &s : *shards)
    byIndex[s.plan.index] = &s;
  if (Error e = checkFinished(byIndex, o.allowIncomplete, summary))
    return std::move(e);

  Expected<std::vector<std::pair<std::string, std::string>>> meta = mergedMeta(byIndex);
  if (!meta)
    return meta.takeError();
  Expected<llvm::SmallString<256>> temp = makeTempBeside(o.out);
  if (!temp)
    return temp.takeError();
  bool done = false;
  llvm::scope_exit cleanUp([&] {
    if (!done)
      llvm::sys::fs::remove_directories(*temp);
  });
  // The store is closed (its WAL checkpointed into run.sqlite) before the rename.
  if (Error e = buildMergedRun(*temp, *meta, byIndex, summary))
    return std::move(e);
  if (Error e = moveIntoPlace(*temp, o.out))
    return std::move(e);
  done = true;
  summary.shards = byIndex.size();
  return summary;
}

} // namespace evo
