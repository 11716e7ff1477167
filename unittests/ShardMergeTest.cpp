//===- ShardMergeTest.cpp - shard=I/N's assignment and runs-merge ---------------===//
//
// The assignment of tasks to shards (Shard.h) and the merge of shard stores (RunMerge.h) on
// stores written directly, without evo-evolve: renumbering and every reference to an id, the
// meta, the LLM cache read as untrusted, and the refusals (nothing written on failure).
// test/Evolution/shards.test runs the whole flow with the stand-in worker.
//
//===----------------------------------------------------------------------===//

#include "evo/Evolution/RunDirLock.h"
#include "evo/Evolution/RunMerge.h"
#include "evo/Evolution/RunStore.h"
#include "evo/Evolution/Shard.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"
#include <algorithm>
#include <map>
#include <random>
#include <unistd.h>

using namespace evo;

namespace {

//===----------------------------------------------------------------------===//
// The shard option
//===----------------------------------------------------------------------===//

struct Env {
  std::map<std::string, std::string> vars;
  const char *operator()(const char *name) const {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  }
};

std::optional<ShardSpec> spec(llvm::StringRef option, const Env &env = {}) {
  llvm::Expected<std::optional<ShardSpec>> s = parseShardSpec(option, env);
  if (!s) {
    ADD_FAILURE() << llvm::toString(s.takeError());
    return std::nullopt;
  }
  return *s;
}

std::string specError(llvm::StringRef option, const Env &env = {}) {
  llvm::Expected<std::optional<ShardSpec>> s = parseShardSpec(option, env);
  if (s)
    return "";
  return llvm::toString(s.takeError());
}

TEST(ShardSpecTest, OptionAndSlurmArrayVariables) {
  std::optional<ShardSpec> s = spec("1/4");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->index, 1u);
  EXPECT_EQ(s->count, 4u);
  EXPECT_FALSE(spec("all"));
  EXPECT_FALSE(spec(""));
  for (const char *bad : {"4/4", "x", "1/0", "-1/4", "1/4/2", "1", "/4", "a/b"})
    EXPECT_NE(specError(bad).find("shard must be I/N"), std::string::npos) << bad;

  // An array element: ID - MIN of COUNT; the option wins over the variables.
  Env slurm{{{"SLURM_ARRAY_TASK_ID", "5"},
             {"SLURM_ARRAY_TASK_MIN", "4"},
             {"SLURM_ARRAY_TASK_COUNT", "4"}}};
  s = spec("", slurm);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->index, 1u);
  EXPECT_EQ(s->count, 4u);
  EXPECT_NE(s->origin.find("SLURM_ARRAY_TASK_ID=5"), std::string::npos);
  EXPECT_FALSE(spec("all", slurm));
  s = spec("3/8", slurm);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->index, 3u);
  s = spec("", Env{{{"SLURM_ARRAY_TASK_ID", "2"}, {"SLURM_ARRAY_TASK_COUNT", "3"}}});
  ASSERT_TRUE(s);
  EXPECT_EQ(s->index, 2u);
  EXPECT_EQ(s->count, 3u);
  // A stepped or listed array, or a missing count, gives no shard: an error, not a guess.
  for (const Env &bad : {Env{{{"SLURM_ARRAY_TASK_ID", "4"}, {"SLURM_ARRAY_TASK_COUNT", "4"}}},
                         Env{{{"SLURM_ARRAY_TASK_ID", "1"}}},
                         Env{{{"SLURM_ARRAY_TASK_ID", "x"}, {"SLURM_ARRAY_TASK_COUNT", "4"}}},
                         Env{{{"SLURM_ARRAY_TASK_ID", "1"},
                              {"SLURM_ARRAY_TASK_MIN", "2"},
                              {"SLURM_ARRAY_TASK_COUNT", "4"}}}})
    EXPECT_NE(specError("", bad).find("--array=0-<N-1>"), std::string::npos);
}

//===----------------------------------------------------------------------===//
// The assignment
//===----------------------------------------------------------------------===//

ShardFunction fn(const std::string &name, unsigned tasks) {
  ShardFunction f;
  f.name = name;
  for (unsigned t = 0; t < tasks; ++t)
    f.tasks.push_back(name + "_t" + std::to_string(t));
  return f;
}

std::map<std::string, unsigned> owners(const ShardPlan &p) {
  std::map<std::string, unsigned> m;
  for (const ShardFunction &f : p.functions)
    for (size_t t = 0; t < f.tasks.size(); ++t)
      m[f.tasks[t]] = f.shards[t];
  return m;
}

TEST(ShardPlanTest, WholeFunctionsLargestFirstByName) {
  ShardPlan p = ShardPlan::assign(
      0, 4, {fn("scale", 1), fn("row_sum", 1), fn("softmax", 1), fn("two_sums", 2)});
  std::map<std::string, unsigned> o = owners(p);
  EXPECT_EQ(o["two_sums_t0"], 0u);
  EXPECT_EQ(o["two_sums_t1"], 0u);
  EXPECT_EQ(o["row_sum_t0"], 1u);
  EXPECT_EQ(o["scale_t0"], 2u);
  EXPECT_EQ(o["softmax_t0"], 3u);
  for (const ShardFunction &f : p.functions)
    EXPECT_TRUE(f.whole()) << f.name;
  // The module's order plays no part; the functions keep it.
  ShardPlan q = ShardPlan::assign(
      0, 4, {fn("two_sums", 2), fn("softmax", 1), fn("scale", 1), fn("row_sum", 1)});
  EXPECT_EQ(owners(q), o);
  EXPECT_EQ(q.functions.front().name, "two_sums");
  EXPECT_EQ(p.tasksOf(0), (std::vector<std::string>{"two_sums_t0", "two_sums_t1"}));
  EXPECT_TRUE(p.ownsTask("two_sums_t1"));
  EXPECT_FALSE(p.ownsTask("scale_t0"));
  EXPECT_FALSE(p.ownsTask("nothing"));
  // More shards than tasks: some shards get nothing.
  ShardPlan wide = ShardPlan::assign(7, 8, {fn("a", 1), fn("b", 1)});
  EXPECT_TRUE(wide.tasksOf(7).empty());
}

TEST(ShardPlanTest, AFunctionLargerThanAFairShareIsCutIntoConsecutivePieces) {
  // One function of 10 tasks over 4 shards: fair share 3, pieces 3, 3, 2, 2.
  ShardPlan p = ShardPlan::assign(0, 4, {fn("model", 10)});
  const ShardFunction &f = p.functions.front();
  EXPECT_FALSE(f.whole());
  EXPECT_EQ(f.shards, (std::vector<unsigned>{0, 0, 0, 1, 1, 1, 2, 2, 3, 3}));
  // A large function beside small ones: the small ones stay whole.
  ShardPlan q = ShardPlan::assign(0, 2, {fn("big", 5), fn("s1", 1), fn("s2", 1), fn("s3", 1)});
  for (const ShardFunction &g : q.functions)
    EXPECT_EQ(g.whole(), g.name != "big") << g.name;
}

TEST(ShardPlanTest, BalancedAndDeterministic) {
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    std::vector<ShardFunction> fs;
    unsigned n = 1 + rng() % 12, total = 0;
    for (unsigned i = 0; i < n; ++i) {
      unsigned tasks = rng() % 9;
      total += tasks;
      fs.push_back(fn("f" + std::to_string(i), tasks));
    }
    unsigned count = 1 + rng() % 6;
    ShardPlan p = ShardPlan::assign(0, count, fs);
    std::shuffle(fs.begin(), fs.end(), rng);
    EXPECT_EQ(owners(ShardPlan::assign(0, count, fs)), owners(p));
    std::vector<size_t> load(count, 0);
    for (auto &[task, s] : owners(p)) {
      ASSERT_LT(s, count);
      ++load[s];
    }
    size_t fair = std::max<size_t>(1, (total + count - 1) / count);
    // Greedy over units of at most `fair` tasks: no shard exceeds the least loaded by more.
    EXPECT_LE(*std::max_element(load.begin(), load.end()) -
                  *std::min_element(load.begin(), load.end()),
              fair);
    // Every task of every shard exactly once.
    size_t all = 0;
    for (unsigned s = 0; s < count; ++s)
      all += p.tasksOf(s).size();
    EXPECT_EQ(all, total);
  }
}

TEST(ShardPlanTest, MetaRoundTrip) {
  ShardPlan p = ShardPlan::assign(2, 3, {fn("a", 4), fn("b", 1), fn("c", 0)});
  llvm::Expected<ShardPlan> q = ShardPlan::fromMeta(p.toMeta());
  ASSERT_TRUE(bool(q)) << llvm::toString(q.takeError());
  EXPECT_EQ(q->toMeta(), p.toMeta());
  EXPECT_EQ(q->name(), "2/3");
  for (const char *bad : {"", "[]", "{\"index\": 3, \"count\": 3, \"functions\": []}",
                          "{\"index\": 0, \"count\": 1, \"functions\": [{\"name\": \"a\", "
                          "\"tasks\": [\"a_t0\"], \"shards\": []}]}"}) {
    llvm::Expected<ShardPlan> r = ShardPlan::fromMeta(bad);
    EXPECT_FALSE(bool(r)) << bad;
    if (!r)
      llvm::consumeError(r.takeError());
  }
}

//===----------------------------------------------------------------------===//
// runs-merge
//===----------------------------------------------------------------------===//

constexpr const char *kKeyA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
constexpr const char *kKeyB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
constexpr const char *kKeyC = "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc";

class RunMergeTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("evo-runmerge", root));
    // The module's order is g, then f; by name f goes to shard 0 and g to shard 1.
    plan = ShardPlan::assign(0, 2, {fn("g", 1), fn("f", 1)});
  }
  void TearDown() override { llvm::sys::fs::remove_directories(root); }

  std::string path(llvm::StringRef name) const {
    llvm::SmallString<256> p(root);
    llvm::sys::path::append(p, name);
    return std::string(p);
  }

  static CandidateRecord candidate(const std::string &task, std::vector<int64_t> parents,
                                   const std::string &ptx, const std::string &verdict, double ms) {
    CandidateRecord c;
    c.task = task;
    c.parents = std::move(parents);
    c.op = c.parents.empty() ? "baseline" : "knob-mutate";
    c.ptxHash = ptx;
    c.verdict = verdict;
    c.medianMs = ms;
    return c;
  }

  /// Shard `index` of `plan`: its task with a baseline, a child, and for f a twin of the child
  /// (not run, naming it) and an LLM candidate whose request shows the child; done, certified.
  void makeShard(const std::string &dir, unsigned index, const std::string &input = "in",
                 const std::string &verifySeed = "") {
    ShardPlan p = plan;
    p.index = index;
    std::vector<std::pair<std::string, std::string>> meta = {
        {"input_hash", input}, {"config", "{\"seed\":1}"}, {"shard", p.toMeta()}};
    if (!verifySeed.empty())
      meta.push_back({"verify_seed", verifySeed});
    llvm::Expected<std::unique_ptr<RunStore>> s = RunStore::open(dir, true, meta);
    ASSERT_TRUE(bool(s)) << llvm::toString(s.takeError());
    RunStore &store = **s;
    std::string fname = index == 0 ? "f" : "g";
    std::string task = fname + "_t0";
    TaskRecord t;
    t.name = task;
    t.function = fname;
    t.family = "elementwise";
    t.source = "func.func @" + task + "()";
    ASSERT_FALSE(bool(store.upsertTask(t)));
    // Ids from 1 in each shard; a gap first in shard 0, as a resumed run may leave.
    CandidateRecord base = candidate(task, {}, "p-base-" + fname, "valid", 2.0);
    ASSERT_FALSE(bool(store.addCandidate(base)));
    ASSERT_FALSE(bool(store.recordResult(base)));
    CandidateRecord child = candidate(task, {base.id}, "p-child-" + fname, "valid", 1.0);
    ASSERT_FALSE(bool(store.addCandidate(child)));
    if (index == 0) {
      CandidateRecord twin = candidate(task, {base.id}, "p-child-f", "not-run", NAN);
      ASSERT_FALSE(bool(store.addCandidate(twin)));
      twin.reason = "identical PTX to candidate " + std::to_string(child.id);
      ASSERT_FALSE(bool(store.recordResult(twin)));
      CandidateRecord llm = candidate(task, {child.id, base.id}, "p-llm", "invalid", NAN);
      llm.op = "llm-mutate";
      llm.llmKey = kKeyA;
      llm.llmRequest =
          "{\"prompt\":\"p\",\"context\":{\"solutions\":[{\"id\":" + std::to_string(child.id) +
          ",\"ir\":\"\"}]}}";
      ASSERT_FALSE(bool(store.addCandidate(llm)));
      ASSERT_FALSE(bool(store.recordResult(llm)));
    }
    ASSERT_FALSE(bool(store.recordResult(child)));
    ASSERT_FALSE(bool(store.recordFinal(child.id, 0.9)));
    t.status = "done";
    t.baselineId = base.id;
    t.bestId = child.id;
    ASSERT_FALSE(bool(store.upsertTask(t)));
    ASSERT_FALSE(bool(
        store.setMeta("final_check:" + fname, "{\"verdict\":\"valid\",\"ptx_sha256\":\"x\"}")));
    ASSERT_FALSE(bool(store.setMeta("device", "Stand-in GPU")));
  }

  void writeFile(const std::string &file, llvm::StringRef text) {
    std::error_code ec;
    llvm::raw_fd_ostream os(file, ec);
    ASSERT_FALSE(ec) << ec.message();
    os << text;
  }

  llvm::Expected<MergeSummary> merge(std::vector<std::string> runs, bool allowIncomplete = false) {
    MergeOptions o;
    o.out = path("out");
    o.runs = std::move(runs);
    o.allowIncomplete = allowIncomplete;
    return mergeRuns(o);
  }

  std::string mergeError(std::vector<std::string> runs) {
    llvm::Expected<MergeSummary> s = merge(std::move(runs));
    if (s)
      return "(merged)";
    return llvm::toString(s.takeError());
  }

  /// Nothing of a failed merge is left: no OUT, no temporary directory beside it.
  void expectNothingWritten() {
    EXPECT_FALSE(llvm::sys::fs::exists(path("out")));
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(root, ec), end; it != end && !ec; it.increment(ec))
      EXPECT_FALSE(llvm::sys::path::filename(it->path()).starts_with(".out")) << it->path();
  }

  llvm::SmallString<128> root;
  ShardPlan plan;
};

TEST_F(RunMergeTest, RenumbersInTheInputsOrderAndFollowsEveryReference) {
  makeShard(path("s0"), 0, "in", "11");
  makeShard(path("s1"), 1, "in", "22");
  // Shard 0's LLM cache: an entry, a name that is not a key, a symbolic link to an entry.
  ASSERT_FALSE(llvm::sys::fs::create_directories(path("s0/llm-cache")));
  writeFile(path("s0/llm-cache/") + kKeyA + ".json", "{\"key\":\"a\"}");
  writeFile(path("s0/llm-cache/notes.json"), "{}");
  writeFile(path("elsewhere.json"), "{\"secret\":1}");
  ASSERT_FALSE(
      llvm::sys::fs::create_link(path("elsewhere.json"), path("s0/llm-cache/") + kKeyB + ".json"));
  llvm::Expected<MergeSummary> s = merge({path("s1"), path("s0")});
  ASSERT_TRUE(bool(s)) << llvm::toString(s.takeError());
  EXPECT_EQ(s->shards, 2u);
  EXPECT_EQ(s->tasks, 2u);
  EXPECT_EQ(s->candidates, 6u);
  EXPECT_EQ(s->cacheEntries, 1u);
  EXPECT_EQ(s->certified, (std::vector<std::string>{"f", "g"}));
  EXPECT_TRUE(s->toVerify.empty());
  ASSERT_EQ(s->warnings.size(), 1u);
  EXPECT_NE(s->warnings[0].find("not a regular file"), std::string::npos) << s->warnings[0];

  llvm::Expected<std::unique_ptr<RunStore>> m = RunStore::open(path("out"), false);
  ASSERT_TRUE(bool(m)) << llvm::toString(m.takeError());
  RunStore &store = **m;
  // g (shard 1) first, as in the module: ids 1 and 2; then f: 3 (baseline), 4 (child),
  // 5 (its twin), 6 (LLM).
  std::vector<TaskRecord> tasks = store.getTasks();
  ASSERT_EQ(tasks.size(), 2u);
  EXPECT_EQ(tasks[0].name, "g_t0");
  EXPECT_EQ(tasks[0].baselineId, 1);
  EXPECT_EQ(tasks[0].bestId, 2);
  EXPECT_EQ(tasks[1].name, "f_t0");
  EXPECT_EQ(tasks[1].baselineId, 3);
  EXPECT_EQ(tasks[1].bestId, 4);
  EXPECT_EQ(tasks[1].status, "done");
  std::vector<CandidateRecord> cs = store.getCandidates();
  ASSERT_EQ(cs.size(), 6u);
  for (auto [i, c] : llvm::enumerate(cs))
    EXPECT_EQ(c.id, static_cast<int64_t>(i + 1));
  EXPECT_EQ(cs[1].parents, (std::vector<int64_t>{1}));
  EXPECT_EQ(cs[3].parents, (std::vector<int64_t>{3}));
  EXPECT_EQ(cs[4].reason, "identical PTX to candidate 4");
  EXPECT_EQ(cs[5].parents, (std::vector<int64_t>{4, 3}));
  EXPECT_NE(cs[5].llmRequest.find("\"id\":4"), std::string::npos) << cs[5].llmRequest;
  EXPECT_EQ(cs[5].llmKey, kKeyA);
  EXPECT_EQ(cs[3].finalMedianMs, 0.9);
  EXPECT_EQ(cs[3].ptxHash, "p-child-f");
  // The evaluation order: g's two verdicts, then f's in the order they were recorded.
  EXPECT_EQ(cs[0].evalOrder, 1);
  EXPECT_EQ(cs[1].evalOrder, 2);
  EXPECT_EQ(cs[2].evalOrder, 3);
  EXPECT_EQ(cs[4].evalOrder, 4);
  EXPECT_EQ(cs[5].evalOrder, 5);
  EXPECT_EQ(cs[3].evalOrder, 6);
  // A new candidate after the merge (a resume) takes the next id.
  CandidateRecord more = candidate("f_t0", {3}, "p-more", "pending", NAN);
  ASSERT_FALSE(bool(store.addCandidate(more)));
  EXPECT_EQ(more.id, 7);

  // Meta: the identity, both certificates, what all agree on; each shard's own in merged_from.
  EXPECT_EQ(store.getMeta("input_hash"), std::optional<std::string>("in"));
  EXPECT_EQ(store.getMeta("config"), std::optional<std::string>("{\"seed\":1}"));
  EXPECT_TRUE(store.getMeta("final_check:f"));
  EXPECT_TRUE(store.getMeta("final_check:g"));
  EXPECT_EQ(store.getMeta("device"), std::optional<std::string>("Stand-in GPU"));
  EXPECT_FALSE(store.getMeta("verify_seed")); // the shards drew different ones
  EXPECT_FALSE(store.getMeta("shard"));
  std::optional<std::string> from = store.getMeta("merged_from");
  ASSERT_TRUE(from);
  llvm::Expected<llvm::json::Value> fv = llvm::json::parse(*from);
  ASSERT_TRUE(bool(fv));
  const llvm::json::Array *arr = fv->getAsArray();
  ASSERT_TRUE(arr && arr->size() == 2);
  EXPECT_EQ((*arr)[0].getAsObject()->getString("shard"), std::optional<llvm::StringRef>("0/2"));
  EXPECT_EQ((*arr)[1].getAsObject()->getObject("meta")->getString("verify_seed"),
            std::optional<llvm::StringRef>("22"));

  // The cache: the entry only; the reports are there.
  EXPECT_TRUE(llvm::sys::fs::exists(path("out/llm-cache/") + kKeyA + ".json"));
  EXPECT_FALSE(llvm::sys::fs::exists(path("out/llm-cache/") + kKeyB + ".json"));
  EXPECT_FALSE(llvm::sys::fs::exists(path("out/llm-cache/notes.json")));
  EXPECT_TRUE(llvm::sys::fs::exists(path("out/report.json")));
  EXPECT_TRUE(llvm::sys::fs::exists(path("out/report.html")));

  // OUT exists now: a second merge is refused.
  m->reset();
  EXPECT_NE(mergeError({path("s0"), path("s1")}).find("exists"), std::string::npos);
}

TEST_F(RunMergeTest, AVerifierSeedAllShardsShareStays) {
  makeShard(path("s0"), 0, "in", "7");
  makeShard(path("s1"), 1, "in", "7");
  llvm::Expected<MergeSummary> s = merge({path("s0"), path("s1")});
  ASSERT_TRUE(bool(s)) << llvm::toString(s.takeError());
  llvm::Expected<std::unique_ptr<RunStore>> m = RunStore::open(path("out"), false);
  ASSERT_TRUE(bool(m));
  EXPECT_EQ((*m)->getMeta("verify_seed"), std::optional<std::string>("7"));
}

TEST_F(RunMergeTest, RefusesWhatIsNotOneFinishedArray) {
  makeShard(path("s0"), 0);
  makeShard(path("s1"), 1);
  ASSERT_FALSE(llvm::sys::fs::create_directories(path("copy")));
  makeShard(path("copy"), 0);
  makeShard(path("other"), 1, "another input");
  EXPECT_NE(mergeError({path("s0"), path("copy"), path("s1")}).find("are both shard 0/2"),
            std::string::npos);
  expectNothingWritten();
  EXPECT_NE(mergeError({path("s0")}).find("shard 1/2 is missing"), std::string::npos);
  EXPECT_NE(mergeError({path("s0"), path("other")}).find("different inputs"), std::string::npos);
  EXPECT_NE(mergeError({path("s0"), path("s0")}).find("the same run directory"), std::string::npos);
  EXPECT_NE(mergeError({path("s0"), path("nowhere")}).find("no evo run store"), std::string::npos);
  expectNothingWritten();

  // Not a shard.
  {
    llvm::Expected<std::unique_ptr<RunStore>> s =
        RunStore::open(path("plain"), true, {{"input_hash", "in"}, {"config", "{\"seed\":1}"}});
    ASSERT_TRUE(bool(s));
  }
  EXPECT_NE(mergeError({path("s0"), path("plain")}).find("is not a shard"), std::string::npos);

  // A shard of another array size.
  {
    ShardPlan three = ShardPlan::assign(2, 3, {fn("g", 1), fn("f", 1)});
    llvm::Expected<std::unique_ptr<RunStore>> s = RunStore::open(
        path("three"), true,
        {{"input_hash", "in"}, {"config", "{\"seed\":1}"}, {"shard", three.toMeta()}});
    ASSERT_TRUE(bool(s));
  }
  EXPECT_NE(mergeError({path("s0"), path("three")}).find("arrays of different sizes"),
            std::string::npos);
  expectNothingWritten();
}

TEST_F(RunMergeTest, AnUnfinishedShardOnlyWithAllowIncomplete) {
  makeShard(path("s0"), 0);
  makeShard(path("s1"), 1);
  {
    llvm::Expected<std::unique_ptr<RunStore>> s = RunStore::open(path("s1"), false);
    ASSERT_TRUE(bool(s));
    std::optional<TaskRecord> t = (*s)->getTask("g_t0");
    ASSERT_TRUE(t);
    t->status = "running";
    ASSERT_FALSE(bool((*s)->upsertTask(*t)));
  }
  std::string e = mergeError({path("s0"), path("s1")});
  EXPECT_NE(e.find("task 'g_t0' is not finished (running)"), std::string::npos) << e;
  EXPECT_NE(e.find("--allow-incomplete"), std::string::npos) << e;
  expectNothingWritten();
  llvm::Expected<MergeSummary> s = merge({path("s0"), path("s1")}, /*allowIncomplete=*/true);
  ASSERT_TRUE(bool(s)) << llvm::toString(s.takeError());
  ASSERT_EQ(s->incomplete.size(), 1u);
  llvm::Expected<std::unique_ptr<RunStore>> m = RunStore::open(path("out"), false);
  ASSERT_TRUE(bool(m));
  EXPECT_EQ((*m)->getTask("g_t0")->status, "running");
}

TEST_F(RunMergeTest, AShardWithoutItsCertificateIsUnfinished) {
  makeShard(path("s0"), 0);
  makeShard(path("s1"), 1);
  {
    llvm::Expected<std::unique_ptr<RunStore>> s = RunStore::open(path("s0"), false);
    ASSERT_TRUE(bool(s));
    ASSERT_FALSE(bool((*s)->setMeta("final_check:f", "{\"verdict\":\"invalid\"}")));
  }
  std::string e = mergeError({path("s0"), path("s1")});
  EXPECT_NE(e.find("function 'f' has no final re-verification certificate"), std::string::npos)
      << e;
  expectNothingWritten();
}

TEST_F(RunMergeTest, ConflictingEntriesAndCacheEntries) {
  makeShard(path("s0"), 0);
  makeShard(path("s1"), 1);
  // One request answered differently in two shards: the first kept, a warning.
  for (const char *s : {"s0", "s1"}) {
    ASSERT_FALSE(llvm::sys::fs::create_directories(path(s) + "/llm-cache"));
    writeFile(path(s) + "/llm-cache/" + kKeyC + ".json", std::string("{\"from\":\"") + s + "\"}");
  }
  llvm::Expected<MergeSummary> s = merge({path("s0"), path("s1")});
  ASSERT_TRUE(bool(s)) << llvm::toString(s.takeError());
  EXPECT_EQ(s->cacheEntries, 1u);
  ASSERT_EQ(s->warnings.size(), 1u);
  EXPECT_NE(s->warnings[0].find("differs between"), std::string::npos) << s->warnings[0];
  auto kept = llvm::MemoryBuffer::getFile(path("out/llm-cache/") + kKeyC + ".json");
  ASSERT_TRUE(bool(kept));
  EXPECT_EQ((*kept)->getBuffer(), "{\"from\":\"s0\"}");
  llvm::sys::fs::remove_directories(path("out"));

  // A per-function entry two shards disagree on: refused, nothing written.
  {
    llvm::Expected<std::unique_ptr<RunStore>> st = RunStore::open(path("s1"), false);
    ASSERT_TRUE(bool(st));
    ASSERT_FALSE(bool((*st)->setMeta("final_check:f", "{\"verdict\":\"valid\"}")));
  }
  EXPECT_NE(mergeError({path("s0"), path("s1")}).find("both hold meta 'final_check:f'"),
            std::string::npos);
  expectNothingWritten();
}

TEST_F(RunMergeTest, AShardInUseIsRefused) {
  makeShard(path("s0"), 0);
  makeShard(path("s1"), 1);
  llvm::Expected<RunDirLock> held = RunDirLock::acquire(path("s1"), false);
  ASSERT_TRUE(bool(held));
  // flock is per open file description: a second acquire in this process is refused too.
  EXPECT_NE(mergeError({path("s0"), path("s1")}).find("in use by another evo-opt"),
            std::string::npos);
  expectNothingWritten();
}

} // namespace
