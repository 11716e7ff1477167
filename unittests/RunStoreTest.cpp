//===- RunStoreTest.cpp - the SQLite run store, including SIGKILL --------------===//

#include "evo/Evolution/RunDirLock.h"
#include "evo/Evolution/RunStore.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"
#include "gtest/gtest.h"
#include <csignal>
#include <set>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace evo;

namespace {

class RunStoreTest : public ::testing::Test {
protected:
  void SetUp() override { ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("evo-runstore", dir)); }
  void TearDown() override { llvm::sys::fs::remove_directories(dir); }

  std::string dbPath() const {
    llvm::SmallString<128> p(dir);
    llvm::sys::path::append(p, "run.sqlite");
    return std::string(p);
  }

  std::unique_ptr<RunStore> open(bool create = true) {
    llvm::Expected<std::unique_ptr<RunStore>> s = RunStore::open(dir, create);
    if (!s) {
      ADD_FAILURE() << llvm::toString(s.takeError());
      return nullptr;
    }
    return std::move(*s);
  }

  /// Runs SQL on the file directly, as another program would.
  std::vector<std::string> rawQuery(const std::string &sql) {
    std::vector<std::string> rows;
    sqlite3 *db = nullptr;
    EXPECT_EQ(sqlite3_open(dbPath().c_str(), &db), SQLITE_OK);
    sqlite3_stmt *stmt = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK)
        << sqlite3_errmsg(db);
    while (sqlite3_step(stmt) == SQLITE_ROW) {
      const unsigned char *t = sqlite3_column_text(stmt, 0);
      rows.push_back(t ? reinterpret_cast<const char *>(t) : "<null>");
    }
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    return rows;
  }

  static TaskRecord task(const std::string &name) {
    TaskRecord t;
    t.name = name;
    t.function = "f";
    t.family = "elementwise";
    t.source = "func.func @" + name + "() { return }";
    return t;
  }

  llvm::SmallString<128> dir;
};

std::string errorOf(llvm::Error e) { return e ? llvm::toString(std::move(e)) : ""; }

template <typename T> std::string errorOf(llvm::Expected<T> &v) {
  return v ? "" : llvm::toString(v.takeError());
}

CandidateRecord candidate(const std::string &task, const std::string &ptx) {
  CandidateRecord c;
  c.task = task;
  c.op = "knob-mutate";
  c.ptxHash = ptx;
  c.ir = "gpu.module @m {}";
  return c;
}

} // namespace

TEST_F(RunStoreTest, RoundTripsEveryField) {
  std::unique_ptr<RunStore> store = open();
  ASSERT_TRUE(store);
  ASSERT_EQ(errorOf(store->setMeta("config", "{\"population\": 5}")), "");
  ASSERT_EQ(errorOf(store->setMeta("config", "{\"population\": 4}")), ""); // overwrites

  TaskRecord t = task("softmax_t0");
  t.family = "softmax";
  ASSERT_EQ(errorOf(store->upsertTask(t)), "");

  CandidateRecord base = candidate("softmax_t0", "hash-base");
  base.op = "baseline";
  ASSERT_EQ(errorOf(store->addCandidate(base)), "");
  ASSERT_GT(base.id, 0);

  CandidateRecord c;
  c.task = "softmax_t0";
  c.generation = 3;
  c.island = 2;
  c.parents = {base.id, base.id};
  c.op = "llm-mutate";
  c.knobs = R"({"block":128,"vector_width":4})";
  c.rewrites = R"([{"kind":"unroll","factor":2}])";
  // Text that would break string-formatted SQL or careless escaping.
  c.ir = "gpu.module @k { // it's \"quoted\" \n }\n'); DROP TABLE candidates; --";
  c.ptxHash = "ab12";
  c.compileDiagnostics = "warning: ptxas \xce\xbb stack";
  c.thought = "use warp shuffles; \xe2\x9c\x93";
  c.promptTokens = 1234;
  c.completionTokens = 567;
  c.costUsd = 0.0125;
  ASSERT_EQ(errorOf(store->addCandidate(c)), "");
  EXPECT_EQ(c.id, base.id + 1);
  EXPECT_TRUE(llvm::Regex("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]{3})?Z$")
                  .match(c.createdAt))
      << c.createdAt;

  c.verdict = "valid";
  c.reason = "ok'; --";
  c.medianMs = 0.125;
  c.timing = R"({"median_ms":0.125,"runs":100})";
  c.roofline = R"({"fraction_of_copy":0.5})";
  c.registers = 40;
  c.spills = 2;
  ASSERT_EQ(errorOf(store->recordResult(c)), "");
  ASSERT_EQ(errorOf(store->recordFinal(c.id, 0.1)), "");

  t.status = "done";
  t.baselineId = base.id;
  t.bestId = c.id;
  t.generationsDone = 7;
  ASSERT_EQ(errorOf(store->upsertTask(t)), "");

  std::optional<CandidateRecord> r = store->getCandidate(c.id);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->id, c.id);
  EXPECT_EQ(r->task, c.task);
  EXPECT_EQ(r->generation, 3);
  EXPECT_EQ(r->island, 2);
  EXPECT_EQ(r->parents, c.parents);
  EXPECT_EQ(r->op, c.op);
  EXPECT_EQ(r->knobs, c.knobs);
  EXPECT_EQ(r->rewrites, c.rewrites);
  EXPECT_EQ(r->ir, c.ir);
  EXPECT_EQ(r->ptxHash, c.ptxHash);
  EXPECT_EQ(r->compileDiagnostics, c.compileDiagnostics);
  EXPECT_EQ(r->verdict, "valid");
  EXPECT_EQ(r->reason, c.reason);
  EXPECT_DOUBLE_EQ(r->medianMs, 0.125);
  EXPECT_EQ(r->timing, c.timing);
  EXPECT_EQ(r->roofline, c.roofline);
  EXPECT_EQ(r->registers, 40);
  EXPECT_EQ(r->spills, 2);
  EXPECT_DOUBLE_EQ(r->finalMedianMs, 0.1);
  EXPECT_EQ(r->promptTokens, 1234);
  EXPECT_EQ(r->completionTokens, 567);
  EXPECT_DOUBLE_EQ(r->costUsd, 0.0125);
  EXPECT_EQ(r->thought, c.thought);
  EXPECT_EQ(r->createdAt, c.createdAt);
  EXPECT_FALSE(r->evaluatedAt.empty());
  EXPECT_EQ(r->evalOrder, 1);

  // Defaults survive too: NaN times, unknown registers, no parents.
  std::optional<CandidateRecord> b = store->getCandidate(base.id);
  ASSERT_TRUE(b);
  EXPECT_TRUE(std::isnan(b->medianMs));
  EXPECT_TRUE(std::isnan(b->finalMedianMs));
  EXPECT_EQ(b->registers, -1);
  EXPECT_EQ(b->spills, -1);
  EXPECT_TRUE(b->parents.empty());
  EXPECT_EQ(b->verdict, "pending");
  EXPECT_EQ(b->evalOrder, -1);
  EXPECT_EQ(b->knobs, "{}");

  std::optional<TaskRecord> rt = store->getTask("softmax_t0");
  ASSERT_TRUE(rt);
  EXPECT_EQ(rt->function, t.function);
  EXPECT_EQ(rt->family, "softmax");
  EXPECT_EQ(rt->source, t.source);
  EXPECT_EQ(rt->status, "done");
  EXPECT_EQ(rt->baselineId, base.id);
  EXPECT_EQ(rt->bestId, c.id);
  EXPECT_EQ(rt->generationsDone, 7);
  EXPECT_FALSE(store->getTask("nope"));
  ASSERT_EQ(store->getTasks().size(), 1u);

  EXPECT_EQ(store->getMeta("config"), std::optional<std::string>("{\"population\": 4}"));
  EXPECT_EQ(store->getMeta("schema_version"), std::to_string(RunStore::schemaVersion));
  EXPECT_FALSE(store->getMeta("missing"));
  EXPECT_EQ(store->getCandidates().size(), 2u);
  EXPECT_EQ(store->getCandidates("softmax_t0").size(), 2u);
  EXPECT_TRUE(store->getCandidates("other").empty());
  store.reset();

  // NaN is NULL in SQL (SQLite has no NaN), and the journal is WAL.
  EXPECT_EQ(rawQuery("SELECT median_ms IS NULL FROM candidates WHERE op = 'baseline'"),
            std::vector<std::string>{"1"});
  EXPECT_EQ(rawQuery("PRAGMA journal_mode"), std::vector<std::string>{"wal"});
  EXPECT_EQ(rawQuery("SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name IN "
                     "('candidates_task_ptx', 'candidates_task_verdict')"),
            std::vector<std::string>{"2"});
}

TEST_F(RunStoreTest, FindEvaluatedIgnoresPendingCandidates) {
  std::unique_ptr<RunStore> store = open();
  ASSERT_TRUE(store);
  ASSERT_EQ(errorOf(store->upsertTask(task("a"))), "");
  ASSERT_EQ(errorOf(store->upsertTask(task("b"))), "");

  CandidateRecord pending = candidate("a", "h1");
  ASSERT_EQ(errorOf(store->addCandidate(pending)), "");
  EXPECT_FALSE(store->findEvaluated("a", "h1"));

  CandidateRecord skipped = candidate("a", "h1");
  ASSERT_EQ(errorOf(store->addCandidate(skipped)), "");
  skipped.verdict = "not-run";
  ASSERT_EQ(errorOf(store->recordResult(skipped)), "");
  EXPECT_FALSE(store->findEvaluated("a", "h1"));

  CandidateRecord done = candidate("a", "h1");
  ASSERT_EQ(errorOf(store->addCandidate(done)), "");
  done.verdict = "invalid";
  done.reason = "mismatch";
  ASSERT_EQ(errorOf(store->recordResult(done)), "");
  std::optional<CandidateRecord> found = store->findEvaluated("a", "h1");
  ASSERT_TRUE(found);
  EXPECT_EQ(found->id, done.id);
  EXPECT_EQ(found->reason, "mismatch");

  // Same PTX in another task, and the empty hash of something that never compiled, never match.
  EXPECT_FALSE(store->findEvaluated("b", "h1"));
  CandidateRecord noPtx = candidate("a", "");
  ASSERT_EQ(errorOf(store->addCandidate(noPtx)), "");
  noPtx.verdict = "compile-error";
  ASSERT_EQ(errorOf(store->recordResult(noPtx)), "");
  EXPECT_FALSE(store->findEvaluated("a", ""));

  // The PTX hash may only be known at evaluation time.
  CandidateRecord late = candidate("b", "");
  ASSERT_EQ(errorOf(store->addCandidate(late)), "");
  late.ptxHash = "h2";
  late.verdict = "valid";
  late.medianMs = 1;
  ASSERT_EQ(errorOf(store->recordResult(late)), "");
  ASSERT_TRUE(store->findEvaluated("b", "h2"));
  EXPECT_EQ(store->findEvaluated("b", "h2")->id, late.id);
}

TEST_F(RunStoreTest, TheWinnerIsNamedByTheOldestCandidateWithItsPtx) {
  // Outputs name the winner by the oldest candidate with its PTX, whatever that one's verdict
  // (a twin created earlier but compiled later is recorded not-run), in its own task only.
  std::unique_ptr<RunStore> store = open();
  ASSERT_TRUE(store);
  ASSERT_EQ(errorOf(store->upsertTask(task("a"))), "");
  ASSERT_EQ(errorOf(store->upsertTask(task("b"))), "");
  CandidateRecord otherTask = candidate("b", "w");
  ASSERT_EQ(errorOf(store->addCandidate(otherTask)), "");
  CandidateRecord twin = candidate("a", "w");
  ASSERT_EQ(errorOf(store->addCandidate(twin)), "");
  twin.verdict = "not-run";
  ASSERT_EQ(errorOf(store->recordResult(twin)), "");
  CandidateRecord other = candidate("a", "x");
  ASSERT_EQ(errorOf(store->addCandidate(other)), "");
  CandidateRecord winner = candidate("a", "w");
  ASSERT_EQ(errorOf(store->addCandidate(winner)), "");
  winner.verdict = "valid";
  ASSERT_EQ(errorOf(store->recordResult(winner)), "");
  EXPECT_EQ(store->oldestWithSamePtx("a", winner), twin.id);
  EXPECT_EQ(store->oldestWithSamePtx("a", other), other.id);
  CandidateRecord noPtx = candidate("a", "");
  ASSERT_EQ(errorOf(store->addCandidate(noPtx)), "");
  EXPECT_EQ(store->oldestWithSamePtx("a", noPtx), noPtx.id);
}

TEST_F(RunStoreTest, PendingUpdateRecordsWhatCompilingFound) {
  std::unique_ptr<RunStore> store = open();
  ASSERT_TRUE(store);
  ASSERT_EQ(errorOf(store->upsertTask(task("t"))), "");
  CandidateRecord c = candidate("t", "");
  c.ir = "";
  ASSERT_EQ(errorOf(store->addCandidate(c)), "");
  c.ir = "gpu.module @compiled {}";
  c.ptxHash = "h";
  c.registers = 32;
  c.compileDiagnostics = "ptxas info: 32 registers";
  ASSERT_EQ(errorOf(store->recordResult(c)), ""); // still pending
  std::optional<CandidateRecord> r = store->getCandidate(c.id);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->verdict, "pending");
  EXPECT_EQ(r->ir, c.ir);
  EXPECT_EQ(r->ptxHash, "h");
  EXPECT_EQ(r->registers, 32);
  EXPECT_EQ(r->evalOrder, -1);
  EXPECT_TRUE(r->evaluatedAt.empty());
  EXPECT_FALSE(store->findEvaluated("t", "h"));

  // The final result leaves the IR alone when it does not carry one.
  CandidateRecord result = *r;
  result.ir.clear();
  result.verdict = "valid";
  result.medianMs = 0.5;
  ASSERT_EQ(errorOf(store->recordResult(result)), "");
  r = store->getCandidate(c.id);
  EXPECT_EQ(r->ir, c.ir);
  EXPECT_EQ(r->evalOrder, 1);
  EXPECT_FALSE(r->evaluatedAt.empty());
  ASSERT_TRUE(store->findEvaluated("t", "h"));
}

TEST_F(RunStoreTest, ReopeningSeesEverythingCommitted) {
  int64_t id = -1;
  {
    std::unique_ptr<RunStore> store = open();
    ASSERT_TRUE(store);
    ASSERT_EQ(errorOf(store->setMeta("status", "running")), "");
    ASSERT_EQ(errorOf(store->upsertTask(task("t"))), "");
    for (int i = 0; i < 5; ++i) {
      CandidateRecord c = candidate("t", "h" + std::to_string(i));
      ASSERT_EQ(errorOf(store->addCandidate(c)), "");
      if (i < 3) {
        c.verdict = "valid";
        c.medianMs = 1.0 + i;
        ASSERT_EQ(errorOf(store->recordResult(c)), "");
      }
      id = c.id;
    }
  }
  std::unique_ptr<RunStore> store = open(/*create=*/false);
  ASSERT_TRUE(store);
  EXPECT_EQ(store->getMeta("status"), std::optional<std::string>("running"));
  std::vector<CandidateRecord> all = store->getCandidates("t");
  ASSERT_EQ(all.size(), 5u);
  EXPECT_EQ(all.back().id, id);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(all[i].verdict, i < 3 ? "valid" : "pending");
    if (i < 3) {
      EXPECT_DOUBLE_EQ(all[i].medianMs, 1.0 + i);
      EXPECT_EQ(all[i].evalOrder, i + 1);
    }
  }
  // Ids keep growing after a resume.
  CandidateRecord next = candidate("t", "h9");
  ASSERT_EQ(errorOf(store->addCandidate(next)), "");
  EXPECT_GT(next.id, id);
}

TEST_F(RunStoreTest, RejectsBadWrites) {
  std::unique_ptr<RunStore> store = open();
  ASSERT_TRUE(store);
  CandidateRecord orphan = candidate("no-such-task", "h");
  EXPECT_NE(errorOf(store->addCandidate(orphan)).find("upsertTask"), std::string::npos);
  EXPECT_EQ(orphan.id, -1);

  ASSERT_EQ(errorOf(store->upsertTask(task("t"))), "");
  CandidateRecord badJson = candidate("t", "h");
  badJson.knobs = "{block: 1";
  EXPECT_NE(errorOf(store->addCandidate(badJson)).find("knobs is not valid JSON"),
            std::string::npos);

  CandidateRecord c = candidate("t", "h");
  ASSERT_EQ(errorOf(store->addCandidate(c)), "");
  c.verdict = "";
  EXPECT_NE(errorOf(store->recordResult(c)).find("needs a verdict"), std::string::npos);
  CandidateRecord ghost = c;
  ghost.id = 999;
  ghost.verdict = "valid";
  EXPECT_NE(errorOf(store->recordResult(ghost)).find("no candidate 999"), std::string::npos);
  EXPECT_NE(errorOf(store->recordFinal(999, 1.0)).find("no candidate 999"), std::string::npos);

  TaskRecord t = task("t");
  t.bestId = 12345;
  EXPECT_NE(errorOf(store->upsertTask(t)).find("is not a candidate"), std::string::npos);
  EXPECT_EQ(store->getTask("t")->bestId, -1); // the failed write left nothing behind

  EXPECT_NE(errorOf(store->setMeta("schema_version", "2")).find("belongs to the run store"),
            std::string::npos);
}

TEST_F(RunStoreTest, OpeningAMissingRunWithoutCreateFails) {
  llvm::SmallString<128> missing(dir);
  llvm::sys::path::append(missing, "nothing-here");
  llvm::Expected<std::unique_ptr<RunStore>> s = RunStore::open(missing, false);
  EXPECT_NE(errorOf(s).find("no evo run store"), std::string::npos);
  EXPECT_FALSE(llvm::sys::fs::exists(missing)); // and nothing was created
}

TEST_F(RunStoreTest, SchemaVersionMismatchIsAnError) {
  ASSERT_TRUE(open());
  rawQuery("UPDATE meta SET value = '999' WHERE key = 'schema_version'");
  llvm::Expected<std::unique_ptr<RunStore>> s = RunStore::open(dir, false);
  std::string err = errorOf(s);
  EXPECT_NE(err.find("schema version 999"), std::string::npos) << err;
  EXPECT_NE(err.find("reads version " + std::to_string(RunStore::schemaVersion)), std::string::npos)
      << err;
}

TEST_F(RunStoreTest, ForeignDatabasesAreRefusedAndLeftAlone) {
  rawQuery("CREATE TABLE photos(id INTEGER PRIMARY KEY, path TEXT)");
  llvm::Expected<std::unique_ptr<RunStore>> s = RunStore::open(dir, true);
  std::string err = errorOf(s);
  EXPECT_NE(err.find("is not an evo run store"), std::string::npos) << err;
  EXPECT_EQ(rawQuery("SELECT name FROM sqlite_master"), std::vector<std::string>{"photos"});
  EXPECT_EQ(rawQuery("PRAGMA journal_mode"), std::vector<std::string>{"delete"});

  // Even a foreign database that happens to have a meta table.
  rawQuery("CREATE TABLE meta(key TEXT, value TEXT)");
  s = RunStore::open(dir, true);
  EXPECT_NE(errorOf(s).find("is not an evo run store"), std::string::npos);

  // And a file that is not SQLite at all.
  ASSERT_TRUE(llvm::sys::fs::remove(dbPath()) == std::error_code());
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(dbPath(), ec);
    os << "this is a text file, long enough to look like a header, and more text follows"
       << std::string(200, 'x');
  }
  s = RunStore::open(dir, false);
  err = errorOf(s);
  EXPECT_NE(err.find("is not an evo run store"), std::string::npos) << err;
}

namespace {
/// Reads exactly one id; false at end of file.
bool readId(int fd, int64_t &id) {
  char *p = reinterpret_cast<char *>(&id);
  size_t got = 0;
  while (got < sizeof(id)) {
    ssize_t n = ::read(fd, p + got, sizeof(id) - got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    got += n;
  }
  return true;
}

/// The child: adds and evaluates candidates forever, reporting each id on `fd` only after its
/// result was committed. With `selfKillAt` >= 0 it raises SIGKILL on itself between adding
/// candidate number `selfKillAt` and recording its result.
[[noreturn]] void childLoop(const std::string &dir, int fd, int selfKillAt) {
  llvm::Expected<std::unique_ptr<RunStore>> store = RunStore::open(dir, false);
  if (!store)
    _exit(3);
  // Large rows span many pages, so a kill is likely to land inside a commit.
  std::string ir(64 * 1024, 'x');
  for (int i = 0;; ++i) {
    CandidateRecord c;
    c.task = "t";
    c.op = "knob-mutate";
    c.ir = ir;
    c.ptxHash = "h" + std::to_string(i);
    if ((*store)->addCandidate(c))
      _exit(4);
    if (i == selfKillAt)
      raise(SIGKILL);
    c.verdict = "valid";
    c.medianMs = 0.5 * c.id;
    c.timing = "{\"runs\":" + std::to_string(c.id) + "}";
    if ((*store)->recordResult(c))
      _exit(5);
    if (::write(fd, &c.id, sizeof(c.id)) != sizeof(c.id))
      _exit(6);
  }
}
} // namespace

TEST_F(RunStoreTest, SigkillLosesOnlyUncommittedWork) {
  {
    std::unique_ptr<RunStore> store = open();
    ASSERT_TRUE(store);
    ASSERT_EQ(errorOf(store->upsertTask(task("t"))), "");
  } // no connection may cross fork()

  std::set<int64_t> committed;
  const int rounds = 4;
  for (int round = 0; round < rounds; ++round) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(fds[0]);
      childLoop(std::string(dir), fds[1], round == 0 ? 10 : -1);
    }
    close(fds[1]);
    // Round 0 kills itself; later rounds are killed by us at an arbitrary point.
    int64_t id;
    for (int seen = 0; (round == 0 || seen < 8 + 5 * round) && readId(fds[0], id); ++seen)
      committed.insert(id);
    if (round != 0)
      kill(pid, SIGKILL);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    // Ids written before the kill are committed too.
    while (readId(fds[0], id))
      committed.insert(id);
    close(fds[0]);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
        << "the child failed on its own, status " << status;
  }
  ASSERT_GE(committed.size(), 10u + 13 + 18 + 23);

  std::unique_ptr<RunStore> store = open(/*create=*/false);
  ASSERT_TRUE(store);
  for (int64_t id : committed) {
    std::optional<CandidateRecord> c = store->getCandidate(id);
    ASSERT_TRUE(c) << "committed candidate " << id << " is lost";
    EXPECT_EQ(c->verdict, "valid");
    EXPECT_DOUBLE_EQ(c->medianMs, 0.5 * id);
    EXPECT_EQ(c->timing, "{\"runs\":" + std::to_string(id) + "}");
    EXPECT_EQ(c->ir.size(), 64u * 1024);
  }
  // Each kill interrupts at most one iteration: its candidate is left pending, or its result
  // was committed but not yet reported. Nothing is half-written.
  int pending = 0, unreported = 0;
  for (const CandidateRecord &c : store->getCandidates("t")) {
    if (c.verdict == "pending")
      ++pending;
    else if (!committed.count(c.id))
      ++unreported;
    EXPECT_EQ(c.ir.size(), 64u * 1024);
  }
  EXPECT_GE(pending, 1); // round 0 died between adding and recording
  EXPECT_LE(pending + unreported, rounds);
  store.reset();
  EXPECT_EQ(rawQuery("PRAGMA integrity_check"), std::vector<std::string>{"ok"});
  EXPECT_TRUE(rawQuery("PRAGMA foreign_key_check").empty());
}

// A creator killed at any moment leaves no run.sqlite (a fresh run starts) or a complete one whose
// identity a resume can check, never a store without its meta.
TEST_F(RunStoreTest, ACreatorKilledAtAnyMomentLeavesNoStoreOrAWholeOne) {
  std::vector<std::pair<std::string, std::string>> meta = {{"input_hash", "abc"},
                                                           {"config", "{}"}};
  int none = 0, whole = 0;
  for (int round = 0; round < 24; ++round) {
    llvm::sys::fs::remove_directories(dir);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      llvm::Expected<std::unique_ptr<RunStore>> s = RunStore::open(dir, true, meta);
      _exit(s ? 0 : 1);
    }
    // Spread the kills over the creation (a few ms: directory, temporary file, schema, rename).
    usleep(200 * round);
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    if (!llvm::sys::fs::exists(dbPath())) {
      ++none;
      // What a killed creator left is cleared by the next creation.
      std::unique_ptr<RunStore> s = open(true);
      ASSERT_TRUE(s);
      std::error_code ec;
      for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec; it.increment(ec))
        EXPECT_FALSE(llvm::StringRef(llvm::sys::path::filename(it->path()))
                         .starts_with("run.sqlite.creating-"))
            << it->path();
      continue;
    }
    ++whole;
    std::unique_ptr<RunStore> s = open(false);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->getMeta("input_hash"), std::optional<std::string>("abc"));
    EXPECT_EQ(s->getMeta("config"), std::optional<std::string>("{}"));
  }
  EXPECT_GT(none + whole, 0);
}

TEST_F(RunStoreTest, InitialMetaIsWrittenWithTheSchemaAndNotOverAnExistingStore) {
  {
    llvm::Expected<std::unique_ptr<RunStore>> s =
        RunStore::open(dir, true, {{"input_hash", "one"}});
    ASSERT_TRUE(static_cast<bool>(s)) << llvm::toString(s.takeError());
    EXPECT_EQ((*s)->getMeta("input_hash"), std::optional<std::string>("one"));
  }
  llvm::Expected<std::unique_ptr<RunStore>> again =
      RunStore::open(dir, true, {{"input_hash", "two"}});
  ASSERT_TRUE(static_cast<bool>(again)) << llvm::toString(again.takeError());
  EXPECT_EQ((*again)->getMeta("input_hash"), std::optional<std::string>("one"));
  std::string other = std::string(dir) + "-x";
  llvm::Expected<std::unique_ptr<RunStore>> bad =
      RunStore::open(other, true, {{"schema_version", "9"}});
  EXPECT_FALSE(static_cast<bool>(bad));
  llvm::consumeError(bad.takeError());
  EXPECT_FALSE(llvm::sys::fs::exists(other + "/run.sqlite"));
  llvm::sys::fs::remove_directories(other);
}

TEST_F(RunStoreTest, ARunDirIsLockedByOneProcessAtATime) {
  llvm::Expected<RunDirLock> first = RunDirLock::acquire(dir, false);
  ASSERT_TRUE(static_cast<bool>(first)) << llvm::toString(first.takeError());
  // flock locks belong to the open file description: another process is refused, naming us.
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    llvm::Expected<RunDirLock> second = RunDirLock::acquire(dir, false);
    if (second)
      _exit(10);
    std::string msg = llvm::toString(second.takeError());
    bool named = msg.find("in use by another evo-opt (pid " + std::to_string(getppid()) + ")") !=
                 std::string::npos;
    _exit(named ? 0 : 11);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  // Released with the object: the next process gets it.
  { RunDirLock released = std::move(*first); }
  pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0)
    _exit(RunDirLock::acquire(dir, false) ? 0 : 12);
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  // A symlink in place of the lock file is not followed.
  llvm::SmallString<128> lockFile(dir);
  llvm::sys::path::append(lockFile, ".evo-lock");
  llvm::sys::fs::remove(lockFile);
  ASSERT_FALSE(llvm::sys::fs::create_link("/dev/null", lockFile));
  llvm::Expected<RunDirLock> viaLink = RunDirLock::acquire(dir, false);
  EXPECT_FALSE(static_cast<bool>(viaLink));
  llvm::consumeError(viaLink.takeError());
}
