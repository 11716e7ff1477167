//===- RunStore.cpp - the SQLite run store ---------------------------------===//
//
// Crash safety rests on three SQLite settings made at every open: WAL journal mode (a commit is
// one append to the log, readers never block the writer), synchronous=FULL (a commit is on disk
// before it returns, so a reported result survives even a power loss) and one explicit
// transaction per write. A process killed at any instant leaves either the whole write or none
// of it. Data only ever reaches SQL through bound parameters. The run-dir lock taken before a
// store is opened is RunDirLock.cpp's.
//
//===----------------------------------------------------------------------===//

#include "evo/Evolution/RunStore.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include <cstdio>
#include <ctime>
#include <sqlite3.h>
#include <unistd.h>

using namespace evo;
using llvm::Error;
using llvm::Expected;
using llvm::StringRef;
namespace json = llvm::json;

namespace {

/// "EVOR": marks the file as ours in the SQLite header, so another application's database is
/// recognised before any table is read.
constexpr int32_t kApplicationId = 0x45564F52;
/// Long enough to ride out a concurrent reader's checkpoint or a report run; an evaluation takes
/// seconds, so waiting is always better than failing the write.
constexpr int kBusyTimeoutMs = 10000;

Error makeError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

std::string nowIso8601() {
  auto now = std::chrono::system_clock::now();
  std::time_t secs = std::chrono::system_clock::to_time_t(now);
  auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm utc;
  gmtime_r(&secs, &utc);
  char buf[40];
  size_t n = std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &utc);
  std::snprintf(buf + n, sizeof(buf) - n, ".%03dZ", static_cast<int>(millis));
  return buf;
}

/// The store's "none" (-1) for an id or count, bound as SQL NULL so that foreign keys and
/// aggregates ignore it.
struct OptionalId {
  int64_t value;
};
/// Text that is NULL when empty (evaluated_at of a pending candidate).
struct OptionalText {
  StringRef value;
};

/// One prepared statement. Binding errors are remembered and reported by the first step, so
/// a call site binds all its parameters in one bind(...) and checks once.
class Statement {
public:
  Statement(sqlite3 *db, StringRef sql) : db(db) {
    rc = sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
  }
  ~Statement() { sqlite3_finalize(stmt); }
  Statement(const Statement &) = delete;
  Statement &operator=(const Statement &) = delete;

  /// Binds ?1, ?2, ... in order, each by its type: text, an integer, a real (NaN, which SQLite
  /// cannot store, becomes NULL; real() reads NULL back as NaN) or an OptionalId.
  template <typename... Ts> void bind(const Ts &...values) {
    int i = 0;
    (bindOne(++i, values), ...);
  }

  /// Advances; true while a row is available. Errors end the iteration and stay in status().
  bool next() {
    if (!ok())
      return false;
    int r = sqlite3_step(stmt);
    if (r == SQLITE_ROW)
      return true;
    rc = r == SQLITE_DONE ? SQLITE_OK : r;
    return false;
  }
  /// Runs a statement that returns no rows.
  Error run(StringRef what) {
    while (next()) {
    }
    return status(what);
  }
  Error status(StringRef what) const {
    if (ok())
      return Error::success();
    return makeError(llvm::formatv("{0}: {1}", what, sqlite3_errmsg(db)));
  }
  int errorCode() const { return rc; }
  /// Makes the statement ready to run again, with new bindings.
  void reset() { sqlite3_reset(stmt); }

  bool isNull(int c) const { return sqlite3_column_type(stmt, c) == SQLITE_NULL; }
  std::string text(int c) const {
    const unsigned char *p = sqlite3_column_text(stmt, c);
    return p ? std::string(reinterpret_cast<const char *>(p), sqlite3_column_bytes(stmt, c))
             : std::string();
  }
  int64_t integer(int c, int64_t ifNull = 0) const {
    return isNull(c) ? ifNull : sqlite3_column_int64(stmt, c);
  }
  double real(int c) const { return isNull(c) ? NAN : sqlite3_column_double(stmt, c); }

private:
  bool ok() const { return rc == SQLITE_OK; }
  void bindOne(int i, StringRef s) {
    // A null data pointer would bind SQL NULL, which the NOT NULL columns reject.
    if (ok())
      rc = sqlite3_bind_text(stmt, i, s.data() ? s.data() : "", static_cast<int>(s.size()),
                             SQLITE_TRANSIENT);
  }
  void bindOne(int i, const std::string &s) { bindOne(i, StringRef(s)); }
  template <typename T> std::enable_if_t<std::is_integral_v<T>> bindOne(int i, T v) {
    if (ok())
      rc = sqlite3_bind_int64(stmt, i, static_cast<int64_t>(v));
  }
  void bindOne(int i, double v) {
    if (ok())
      rc = std::isnan(v) ? sqlite3_bind_null(stmt, i) : sqlite3_bind_double(stmt, i, v);
  }
  void bindOne(int i, OptionalText t) {
    if (t.value.empty()) {
      if (ok())
        rc = sqlite3_bind_null(stmt, i);
      return;
    }
    bindOne(i, t.value);
  }
  void bindOne(int i, OptionalId id) {
    if (ok())
      rc = id.value < 0 ? sqlite3_bind_null(stmt, i) : sqlite3_bind_int64(stmt, i, id.value);
  }

  sqlite3 *db;
  sqlite3_stmt *stmt = nullptr;
  int rc;
};

/// Runs `body` inside BEGIN IMMEDIATE ... COMMIT. IMMEDIATE takes the write lock up front, so a
/// concurrent writer waits in the busy handler instead of failing with SQLITE_BUSY half-way.
Error inTransaction(sqlite3 *db, llvm::function_ref<Error()> body) {
  char *msg = nullptr;
  if (sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, &msg) != SQLITE_OK) {
    Error e = makeError(llvm::Twine("cannot begin a transaction: ") + (msg ? msg : "?"));
    sqlite3_free(msg);
    return e;
  }
  Error e = body();
  if (!e && sqlite3_exec(db, "COMMIT", nullptr, nullptr, &msg) != SQLITE_OK) {
    e = makeError(llvm::Twine("cannot commit: ") + (msg ? msg : "?"));
    sqlite3_free(msg);
  }
  if (e)
    sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
  return e;
}

Error checkJson(StringRef field, StringRef text) {
  Expected<json::Value> v = json::parse(text);
  if (!v)
    return makeError(
        llvm::formatv("{0} is not valid JSON: {1}", field, llvm::toString(v.takeError())));
  return Error::success();
}

std::string parentsToJson(const std::vector<int64_t> &parents) {
  return llvm::formatv("{0}", json::Value(parents)).str();
}

/// The stored "parents" column; a column this store did not write (not an array of ids) reads
/// as no parents rather than losing the candidate.
std::vector<int64_t> parentsFromJson(StringRef text) {
  Expected<std::vector<int64_t>> parents = json::parse<std::vector<int64_t>>(text);
  if (!parents) {
    llvm::consumeError(parents.takeError());
    return {};
  }
  return std::move(*parents);
}

/// The schema (docs/evolution.md, "Run store"). Ids that may be absent are NULL, never -1.
const char *const kSchema = R"sql(
CREATE TABLE meta(
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
CREATE TABLE tasks(
  name             TEXT PRIMARY KEY,
  function         TEXT NOT NULL,
  family           TEXT NOT NULL,
  source           TEXT NOT NULL,
  status           TEXT NOT NULL,
  baseline_id      INTEGER REFERENCES candidates(id),
  best_id          INTEGER REFERENCES candidates(id),
  generations_done INTEGER NOT NULL
);
CREATE TABLE candidates(
  id                  INTEGER PRIMARY KEY AUTOINCREMENT,
  task                TEXT NOT NULL REFERENCES tasks(name),
  generation          INTEGER NOT NULL,
  island              INTEGER NOT NULL,
  parents             TEXT NOT NULL,
  op                  TEXT NOT NULL,
  knobs               TEXT NOT NULL,
  rewrites            TEXT NOT NULL,
  ir                  TEXT NOT NULL,
  ptx_hash            TEXT NOT NULL,
  compile_diagnostics TEXT NOT NULL,
  verdict             TEXT NOT NULL,
  reason              TEXT NOT NULL,
  median_ms           REAL,
  timing              TEXT NOT NULL,
  roofline            TEXT NOT NULL,
  registers           INTEGER,
  spills              INTEGER,
  final_median_ms     REAL,
  prompt_tokens       INTEGER NOT NULL,
  completion_tokens   INTEGER NOT NULL,
  cost_usd            REAL NOT NULL,
  thought             TEXT NOT NULL,
  llm_key             TEXT NOT NULL DEFAULT '',
  llm_request         TEXT NOT NULL DEFAULT '{}',
  llm_calls           INTEGER NOT NULL DEFAULT 0,
  created_at          TEXT NOT NULL,
  evaluated_at        TEXT,
  eval_order          INTEGER
);
CREATE INDEX candidates_task_ptx ON candidates(task, ptx_hash);
CREATE INDEX candidates_task_verdict ON candidates(task, verdict);
)sql";

const char *const kCandidateColumns =
    "id, task, generation, island, parents, op, knobs, rewrites, ir, ptx_hash, "
    "compile_diagnostics, verdict, reason, median_ms, timing, roofline, registers, spills, "
    "final_median_ms, prompt_tokens, completion_tokens, cost_usd, thought, created_at, "
    "evaluated_at, eval_order, llm_key, llm_request, llm_calls";

CandidateRecord readCandidate(const Statement &s) {
  CandidateRecord c;
  c.id = s.integer(0);
  c.task = s.text(1);
  c.generation = static_cast<int>(s.integer(2));
  c.island = static_cast<int>(s.integer(3));
  c.parents = parentsFromJson(s.text(4));
  c.op = s.text(5);
  c.knobs = s.text(6);
  c.rewrites = s.text(7);
  c.ir = s.text(8);
  c.ptxHash = s.text(9);
  c.compileDiagnostics = s.text(10);
  c.verdict = s.text(11);
  c.reason = s.text(12);
  c.medianMs = s.real(13);
  c.timing = s.text(14);
  c.roofline = s.text(15);
  c.registers = static_cast<int>(s.integer(16, -1));
  c.spills = static_cast<int>(s.integer(17, -1));
  c.finalMedianMs = s.real(18);
  c.promptTokens = s.integer(19);
  c.completionTokens = s.integer(20);
  c.costUsd = s.isNull(21) ? 0 : s.real(21);
  c.thought = s.text(22);
  c.createdAt = s.text(23);
  c.evaluatedAt = s.text(24);
  c.evalOrder = s.integer(25, -1);
  c.llmKey = s.text(26);
  c.llmRequest = s.text(27);
  c.llmCalls = s.integer(28);
  return c;
}

TaskRecord readTask(const Statement &s) {
  TaskRecord t;
  t.name = s.text(0);
  t.function = s.text(1);
  t.family = s.text(2);
  t.source = s.text(3);
  t.status = s.text(4);
  t.baselineId = s.integer(5, -1);
  t.bestId = s.integer(6, -1);
  t.generationsDone = static_cast<int>(s.integer(7));
  return t;
}

const char *const kTaskColumns =
    "name, function, family, source, status, baseline_id, best_id, generations_done";

} // namespace

//===----------------------------------------------------------------------===//
// Opening and creating
//===----------------------------------------------------------------------===//

Expected<std::unique_ptr<RunStore>>
RunStore::open(StringRef dir, bool create,
               llvm::ArrayRef<std::pair<std::string, std::string>> initialMeta) {
  if (create)
    if (std::error_code ec = llvm::sys::fs::create_directories(dir))
      return makeError(llvm::formatv("cannot create run directory '{0}': {1}", dir, ec.message()));
  llvm::SmallString<256> file(dir);
  llvm::sys::path::append(file, "run.sqlite");
  bool exists = llvm::sys::fs::exists(file);
  if (!create && !exists)
    return makeError(llvm::formatv("no evo run store in '{0}' ({1} does not exist)", dir, file));

  if (!exists) {
    // Build the store whole under a name of its own, then rename it into place: run.sqlite
    // either does not exist or holds the schema and the initial meta. Leftovers of a creator
    // killed earlier are removed first.
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
         it.increment(ec))
      if (llvm::sys::path::filename(it->path()).starts_with("run.sqlite.creating-"))
        llvm::sys::fs::remove(it->path());
    std::string temp = (file + ".creating-" + llvm::Twine(::getpid())).str();
    {
      std::unique_ptr<RunStore> fresh(new RunStore());
      fresh->path = temp;
      if (sqlite3_open_v2(temp.c_str(), &fresh->db,
                          SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK)
        return makeError(llvm::formatv("cannot create '{0}': {1}", temp,
                                       fresh->db ? sqlite3_errmsg(fresh->db) : "out of memory"));
      if (Error e = fresh->initialize(/*create=*/true, initialMeta)) {
        fresh.reset();
        llvm::sys::fs::remove(temp);
        return std::move(e);
      }
      // Closing the last connection checkpoints the WAL into the file and removes it.
    }
    for (const char *side : {"-wal", "-shm"})
      llvm::sys::fs::remove(temp + side);
    if (std::error_code rc = llvm::sys::fs::rename(temp, file)) {
      llvm::sys::fs::remove(temp);
      return makeError(llvm::formatv("cannot create '{0}': {1}", file, rc.message()));
    }
  }

  std::unique_ptr<RunStore> store(new RunStore());
  store->path = std::string(file);
  if (sqlite3_open_v2(store->path.c_str(), &store->db, SQLITE_OPEN_READWRITE, nullptr) !=
      SQLITE_OK)
    return makeError(llvm::formatv("cannot open '{0}': {1}", store->path,
                                   store->db ? sqlite3_errmsg(store->db) : "out of memory"));
  if (Error e = store->initialize(/*create=*/false))
    return std::move(e);
  return std::move(store);
}

RunStore::~RunStore() {
  // The last connection to close checkpoints the WAL into the main file and removes it.
  if (db)
    sqlite3_close_v2(db);
}

Error RunStore::exec(StringRef sql) {
  std::string text(sql);
  char *msg = nullptr;
  if (sqlite3_exec(db, text.c_str(), nullptr, nullptr, &msg) == SQLITE_OK)
    return Error::success();
  Error e = makeError(llvm::formatv("{0}: {1}", path, msg ? msg : sqlite3_errmsg(db)));
  sqlite3_free(msg);
  return e;
}

Error RunStore::initialize(bool create,
                          llvm::ArrayRef<std::pair<std::string, std::string>> initialMeta) {
  sqlite3_extended_result_codes(db, 1);
  sqlite3_busy_timeout(db, kBusyTimeoutMs);

  // Identify the file before changing anything in it: a foreign database must stay untouched.
  auto notOurs = [&](const llvm::Twine &why) {
    return makeError(llvm::Twine("'") + path + "' is not an evo run store: " + why);
  };
  int64_t appId = 0, tables = 0;
  {
    Statement s(db, "PRAGMA application_id");
    if (s.next())
      appId = s.integer(0);
    if (s.errorCode() != SQLITE_OK)
      return notOurs(sqlite3_errmsg(db));
  }
  {
    Statement s(db, "SELECT count(*) FROM sqlite_master");
    if (s.next())
      tables = s.integer(0);
    if (s.errorCode() != SQLITE_OK)
      return notOurs(sqlite3_errmsg(db));
  }
  bool empty = appId == 0 && tables == 0;
  if (empty && !create)
    return notOurs("the database is empty");
  if (!empty && appId != kApplicationId)
    return notOurs("an SQLite database of another application");

  if (!empty) {
    std::optional<std::string> version = getMeta("schema_version");
    if (!version)
      return notOurs("no schema_version in its meta table");
    if (*version != std::to_string(schemaVersion))
      return makeError(llvm::formatv(
          "'{0}' has run store schema version {1}, but this evo-opt reads version {2}; use the "
          "evo-opt that made it, or start a new run",
          path, *version, schemaVersion));
  }

  {
    // journal_mode answers with the mode in effect; it stays "delete" where WAL is impossible
    // (e.g. network file systems without shared memory), and the guarantees above need WAL.
    Statement s(db, "PRAGMA journal_mode=WAL");
    std::string mode = s.next() ? s.text(0) : "";
    if (Error e = s.status(path))
      return e;
    if (StringRef(mode).lower() != "wal")
      return makeError(llvm::formatv("'{0}': cannot use WAL journal mode (got '{1}')", path, mode));
  }
  if (Error e = exec("PRAGMA foreign_keys=ON; PRAGMA synchronous=FULL;"))
    return e;
  if (empty)
    return createSchema(initialMeta);
  return Error::success();
}

Error RunStore::createSchema(llvm::ArrayRef<std::pair<std::string, std::string>> initialMeta) {
  return inTransaction(db, [&]() -> Error {
    // Another process may have created it while we waited for the write lock.
    Statement count(db, "SELECT count(*) FROM sqlite_master");
    if (count.next() && count.integer(0) != 0)
      return makeError(llvm::formatv("'{0}' was initialised concurrently; open it again", path));
    if (Error e = exec(kSchema))
      return e;
    if (Error e = exec(llvm::formatv("PRAGMA application_id={0}", kApplicationId).str()))
      return e;
    Statement meta(db, "INSERT INTO meta(key, value) VALUES ('schema_version', ?1), "
                       "('format', 'evo-run-store'), ('created_at', ?2)");
    meta.bind(std::to_string(schemaVersion), nowIso8601());
    if (Error e = meta.run(path))
      return e;
    for (const auto &[key, value] : initialMeta) {
      if (key == "schema_version")
        return makeError("meta key 'schema_version' belongs to the run store");
      Statement s(db, "INSERT INTO meta(key, value) VALUES (?1, ?2) "
                      "ON CONFLICT(key) DO UPDATE SET value = excluded.value");
      s.bind(key, value);
      if (Error e = s.run(path))
        return e;
    }
    return Error::success();
  });
}

//===----------------------------------------------------------------------===//
// Meta and tasks
//===----------------------------------------------------------------------===//

Error RunStore::setMeta(StringRef key, StringRef value) {
  if (key == "schema_version")
    return makeError("meta key 'schema_version' belongs to the run store");
  std::lock_guard<std::mutex> lock(mutex);
  return inTransaction(db, [&] {
    Statement s(db, "INSERT INTO meta(key, value) VALUES (?1, ?2) "
                    "ON CONFLICT(key) DO UPDATE SET value = excluded.value");
    s.bind(key, value);
    return s.run(llvm::formatv("{0}: setMeta('{1}')", path, key).str());
  });
}

std::optional<std::string> RunStore::getMeta(StringRef key) const {
  std::lock_guard<std::mutex> lock(mutex);
  Statement s(db, "SELECT value FROM meta WHERE key = ?1");
  s.bind(key);
  if (s.next())
    return s.text(0);
  return std::nullopt;
}

std::vector<std::pair<std::string, std::string>> RunStore::getAllMeta() const {
  std::lock_guard<std::mutex> lock(mutex);
  std::vector<std::pair<std::string, std::string>> entries;
  Statement s(db, "SELECT key, value FROM meta ORDER BY key");
  while (s.next())
    entries.emplace_back(s.text(0), s.text(1));
  return entries;
}

Error RunStore::upsertTask(const TaskRecord &t) {
  std::lock_guard<std::mutex> lock(mutex);
  return inTransaction(db, [&] {
    // ON CONFLICT ... UPDATE, not INSERT OR REPLACE: a replace deletes the row first, which the
    // candidates' foreign keys would refuse.
    Statement s(db, "INSERT INTO tasks(name, function, family, source, status, baseline_id, "
                    "best_id, generations_done) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) "
                    "ON CONFLICT(name) DO UPDATE SET function = excluded.function, "
                    "family = excluded.family, source = excluded.source, "
                    "status = excluded.status, baseline_id = excluded.baseline_id, "
                    "best_id = excluded.best_id, generations_done = excluded.generations_done");
    s.bind(t.name, t.function, t.family, t.source, t.status, OptionalId{t.baselineId},
           OptionalId{t.bestId}, t.generationsDone);
    Error e = s.run(llvm::formatv("{0}: upsertTask('{1}')", path, t.name).str());
    if (e && s.errorCode() == SQLITE_CONSTRAINT_FOREIGNKEY)
      return llvm::joinErrors(
          makeError(llvm::formatv("task '{0}': baseline {1} or best {2} is not a candidate", t.name,
                                  t.baselineId, t.bestId)),
          std::move(e));
    return e;
  });
}

std::vector<TaskRecord> RunStore::getTasks() const {
  std::lock_guard<std::mutex> lock(mutex);
  std::vector<TaskRecord> tasks;
  Statement s(db, llvm::formatv("SELECT {0} FROM tasks ORDER BY rowid", kTaskColumns).str());
  while (s.next())
    tasks.push_back(readTask(s));
  return tasks;
}

std::optional<TaskRecord> RunStore::getTask(StringRef name) const {
  std::lock_guard<std::mutex> lock(mutex);
  Statement s(db, llvm::formatv("SELECT {0} FROM tasks WHERE name = ?1", kTaskColumns).str());
  s.bind(name);
  if (s.next())
    return readTask(s);
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Candidates
//===----------------------------------------------------------------------===//

Error RunStore::addCandidate(CandidateRecord &c) {
  for (auto [field, text] : {std::pair<StringRef, StringRef>{"knobs", c.knobs},
                             {"rewrites", c.rewrites},
                             {"timing", c.timing},
                             {"roofline", c.roofline}})
    if (Error e = checkJson(field, text))
      return e;
  std::lock_guard<std::mutex> lock(mutex);
  std::string createdAt = nowIso8601();
  int64_t id = -1;
  Error e = inTransaction(db, [&] {
    Statement s(db, "INSERT INTO candidates(task, generation, island, parents, op, knobs, "
                    "rewrites, ir, ptx_hash, compile_diagnostics, verdict, reason, median_ms, "
                    "timing, roofline, registers, spills, final_median_ms, prompt_tokens, "
                    "completion_tokens, cost_usd, thought, created_at, llm_key, llm_request, "
                    "llm_calls) VALUES (?1, ?2, ?3, ?4, "
                    "?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, "
                    "?21, ?22, ?23, ?24, ?25, ?26)");
    // cost_usd is NOT NULL: an unknown (NaN) cost is stored as 0.
    s.bind(c.task, c.generation, c.island, parentsToJson(c.parents), c.op, c.knobs, c.rewrites,
           c.ir, c.ptxHash, c.compileDiagnostics, c.verdict, c.reason, c.medianMs, c.timing,
           c.roofline, OptionalId{c.registers}, OptionalId{c.spills}, c.finalMedianMs,
           c.promptTokens, c.completionTokens, std::isnan(c.costUsd) ? 0.0 : c.costUsd, c.thought,
           createdAt, c.llmKey, c.llmRequest, c.llmCalls);
    Error e = s.run(llvm::formatv("{0}: addCandidate", path).str());
    if (e && s.errorCode() == SQLITE_CONSTRAINT_FOREIGNKEY)
      return llvm::joinErrors(
          makeError(llvm::formatv("candidate of unknown task '{0}' (upsertTask first)", c.task)),
          std::move(e));
    id = sqlite3_last_insert_rowid(db);
    return e;
  });
  if (e)
    return e;
  c.id = id;
  c.createdAt = std::move(createdAt);
  return Error::success();
}

Error RunStore::recordResult(const CandidateRecord &c) {
  if (c.verdict.empty())
    return makeError(llvm::formatv("candidate {0}: a result needs a verdict", c.id));
  for (auto [field, text] :
       {std::pair<StringRef, StringRef>{"timing", c.timing}, {"roofline", c.roofline}})
    if (Error e = checkJson(field, text))
      return e;
  std::lock_guard<std::mutex> lock(mutex);
  return inTransaction(db, [&]() -> Error {
    // A "pending" update only carries what compiling found (IR, hash, registers); the time and
    // the evaluation order belong to the final verdict. The order is assigned inside the write
    // transaction, so it is gap-free and unique even with several writers.
    Statement s(db, "UPDATE candidates SET verdict = ?2, reason = ?3, median_ms = ?4, "
                    "timing = ?5, roofline = ?6, registers = ?7, spills = ?8, "
                    "compile_diagnostics = ?9, "
                    "ptx_hash = CASE WHEN ?10 = '' THEN ptx_hash ELSE ?10 END, "
                    "ir = CASE WHEN ?11 = '' THEN ir ELSE ?11 END, "
                    "evaluated_at = CASE WHEN ?2 = 'pending' THEN NULL ELSE ?12 END, "
                    "eval_order = CASE WHEN ?2 = 'pending' THEN NULL ELSE (SELECT "
                    "coalesce(max(eval_order), 0) + 1 FROM candidates) END WHERE id = ?1");
    s.bind(c.id, c.verdict, c.reason, c.medianMs, c.timing, c.roofline, OptionalId{c.registers},
           OptionalId{c.spills}, c.compileDiagnostics, c.ptxHash, c.ir, nowIso8601());
    if (Error e = s.run(llvm::formatv("{0}: recordResult({1})", path, c.id).str()))
      return e;
    if (sqlite3_changes(db) != 1)
      return makeError(llvm::formatv("recordResult: no candidate {0} in '{1}'", c.id, path));
    return Error::success();
  });
}

Error RunStore::recordLLM(const CandidateRecord &c) {
  if (Error e = checkJson("llm_request", c.llmRequest))
    return e;
  std::lock_guard<std::mutex> lock(mutex);
  return inTransaction(db, [&]() -> Error {
    Statement s(db, "UPDATE candidates SET llm_key = ?2, llm_request = ?3, llm_calls = ?4, "
                    "prompt_tokens = ?5, completion_tokens = ?6, cost_usd = ?7, thought = ?8 "
                    "WHERE id = ?1");
    s.bind(c.id, c.llmKey, c.llmRequest, c.llmCalls, c.promptTokens, c.completionTokens,
           std::isnan(c.costUsd) ? 0.0 : c.costUsd, c.thought);
    if (Error e = s.run(llvm::formatv("{0}: recordLLM({1})", path, c.id).str()))
      return e;
    if (sqlite3_changes(db) != 1)
      return makeError(llvm::formatv("recordLLM: no candidate {0} in '{1}'", c.id, path));
    return Error::success();
  });
}

Error RunStore::importCandidates(llvm::ArrayRef<CandidateRecord> candidates) {
  for (const CandidateRecord &c : candidates)
    for (auto [field, text] : {std::pair<StringRef, StringRef>{"knobs", c.knobs},
                               {"rewrites", c.rewrites},
                               {"timing", c.timing},
                               {"roofline", c.roofline},
                               {"llm_request", c.llmRequest}})
      if (Error e = checkJson(field, text))
        return makeError(llvm::formatv("candidate {0}: {1}", c.id, llvm::toString(std::move(e))));
  std::lock_guard<std::mutex> lock(mutex);
  return inTransaction(db, [&]() -> Error {
    Statement s(db, llvm::formatv("INSERT INTO candidates({0}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, "
                                  "?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, "
                                  "?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29)",
                                  kCandidateColumns)
                        .str());
    for (const CandidateRecord &c : candidates) {
      s.reset();
      // The columns in kCandidateColumns' order; absent times and orders stay NULL.
      s.bind(c.id, c.task, c.generation, c.island, parentsToJson(c.parents), c.op, c.knobs,
             c.rewrites, c.ir, c.ptxHash, c.compileDiagnostics, c.verdict, c.reason, c.medianMs,
             c.timing, c.roofline, OptionalId{c.registers}, OptionalId{c.spills},
             c.finalMedianMs, c.promptTokens, c.completionTokens,
             std::isnan(c.costUsd) ? 0.0 : c.costUsd, c.thought, c.createdAt,
             OptionalText{c.evaluatedAt}, OptionalId{c.evalOrder}, c.llmKey, c.llmRequest,
             c.llmCalls);
      Error e = s.run(llvm::formatv("{0}: importCandidates({1})", path, c.id).str());
      if (e && (s.errorCode() & 0xff) == SQLITE_CONSTRAINT)
        return llvm::joinErrors(
            makeError(llvm::formatv("candidate {0} of task '{1}': its id is taken, or its task "
                                    "is not stored",
                                    c.id, c.task)),
            std::move(e));
      if (e)
        return e;
    }
    return Error::success();
  });
}

Error RunStore::recordFinal(int64_t id, double finalMedianMs) {
  std::lock_guard<std::mutex> lock(mutex);
  return inTransaction(db, [&]() -> Error {
    Statement s(db, "UPDATE candidates SET final_median_ms = ?2 WHERE id = ?1");
    s.bind(id, finalMedianMs);
    if (Error e = s.run(llvm::formatv("{0}: recordFinal({1})", path, id).str()))
      return e;
    if (sqlite3_changes(db) != 1)
      return makeError(llvm::formatv("recordFinal: no candidate {0} in '{1}'", id, path));
    return Error::success();
  });
}

std::vector<CandidateRecord> RunStore::getCandidates(StringRef task) const {
  std::lock_guard<std::mutex> lock(mutex);
  std::vector<CandidateRecord> result;
  Statement s(db, llvm::formatv("SELECT {0} FROM candidates WHERE ?1 = '' OR task = ?1 ORDER BY id",
                                kCandidateColumns)
                      .str());
  s.bind(task);
  while (s.next())
    result.push_back(readCandidate(s));
  return result;
}

std::optional<CandidateRecord> RunStore::getCandidate(int64_t id) const {
  std::lock_guard<std::mutex> lock(mutex);
  Statement s(db,
              llvm::formatv("SELECT {0} FROM candidates WHERE id = ?1", kCandidateColumns).str());
  s.bind(id);
  if (s.next())
    return readCandidate(s);
  return std::nullopt;
}

int64_t RunStore::oldestWithSamePtx(StringRef task, const CandidateRecord &winner) const {
  if (winner.ptxHash.empty())
    return winner.id;
  std::lock_guard<std::mutex> lock(mutex);
  Statement s(db, "SELECT MIN(id) FROM candidates WHERE task = ?1 AND ptx_hash = ?2");
  s.bind(task, winner.ptxHash);
  int64_t oldest = s.next() ? s.integer(0, winner.id) : winner.id;
  return std::min(oldest, winner.id);
}

std::optional<CandidateRecord> RunStore::findEvaluated(StringRef task, StringRef ptxHash) const {
  if (ptxHash.empty())
    return std::nullopt;
  std::lock_guard<std::mutex> lock(mutex);
  // A "not-run" candidate was never measured, so it cannot stand in for an evaluation.
  Statement s(db, llvm::formatv("SELECT {0} FROM candidates WHERE task = ?1 AND ptx_hash = ?2 "
                                "AND verdict NOT IN ('pending', 'not-run') ORDER BY id LIMIT 1",
                                kCandidateColumns)
                      .str());
  s.bind(task, ptxHash);
  if (s.next())
    return readCandidate(s);
  return std::nullopt;
}
