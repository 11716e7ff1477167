//===- TuningDB.cpp - task signatures and the tuning database ------------------===//

#include "evo/Conversion/TuningDB.h"
#include "TaskAnalysis.h"
#include "evo/Conversion/LowerToGPU.h"
#include "evo/Runtime/ChipRules.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace mlir;
namespace json = llvm::json;

namespace evo {

//===----------------------------------------------------------------------===//
// Signatures
//===----------------------------------------------------------------------===//

TaskSignature taskSignature(func::FuncOp task) {
  // A copy in a module of its own: the original keeps its name and attributes.
  OwningOpRef<ModuleOp> holder = ModuleOp::create(UnknownLoc::get(task.getContext()));
  OpBuilder b = OpBuilder::atBlockEnd(holder->getBody());
  auto f = cast<func::FuncOp>(b.clone(*task));
  f.setSymName("task");
  f.setSymVisibilityAttr(nullptr);
  f.setArgAttrsAttr(nullptr);
  f.setResAttrsAttr(nullptr);
  f->setDiscardableAttrs(DictionaryAttr::get(task.getContext()));
  f.walk([](Operation *op) { op->removeAttr(kOpKnobsAttrName); });

  TaskSignature s;
  s.canonical = printSource(f);
  std::array<uint8_t, 32> digest = llvm::SHA256::hash(
      ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(s.canonical.data()), s.canonical.size()));
  s.hash = llvm::toHex(digest, /*LowerCase=*/true);
  SmallVector<std::string> names;
  for (Operation &op : f.getBody().front().without_terminator())
    if (!isCheapProducer(&op) && !isViewOp(&op) &&
        !llvm::is_contained(names, op.getName().getStringRef().str()))
      names.push_back(op.getName().getStringRef().str());
  s.ops = llvm::join(names, ", ");
  llvm::raw_string_ostream os(s.type);
  f.getFunctionType().print(os);
  return s;
}

//===----------------------------------------------------------------------===//
// Records
//===----------------------------------------------------------------------===//

static json::Value number(double v) { return std::isfinite(v) ? json::Value(v) : nullptr; }

json::Object TuningRecord::toJson() const {
  json::Object o{{"signature", signature},
                 {"chip", chip},
                 {"features", features},
                 {"family", stringifyTaskFamily(family)},
                 {"ops", ops},
                 {"type", type},
                 {"kind", kind},
                 {"knobs", json::Object(knobsJson)},
                 {"baseline_ms", number(baselineMs)},
                 {"best_ms", number(bestMs)},
                 {"speedup", number(speedup())},
                 {"remeasured", remeasured},
                 {"measured_at", measuredAt},
                 {"run", json::Object(run)},
                 {"source", source}};
  if (!op.empty())
    o["op"] = op;
  if (kind == "ir") {
    o["rewrites"] = json::Array(rewrites);
    o["ir"] = ir;
  }
  return o;
}

namespace {
/// Validation of one record; `fail` records the first problem with its JSON path.
class RecordReader {
public:
  RecordReader(const json::Object &o, std::string &error) : o(o), error(error) {}

  bool read(TuningRecord &r) {
    std::optional<std::string> family;
    if (!str("signature", r.signature) || !str("chip", r.chip) || !str("family", family.emplace()))
      return false;
    if (r.signature.size() != 64 ||
        !llvm::all_of(r.signature, [](char c) { return llvm::isDigit(c) || (c >= 'a' && c <= 'f'); }))
      return fail("signature", "must be 64 lowercase hexadecimal digits (SHA-256)");
    if (!isChipName(r.chip))
      return fail("chip", "'" + r.chip + "' is not a chip name like sm_90 or sm_90a");
    std::optional<TaskFamily> f = symbolizeTaskFamily(*family);
    if (!f)
      return fail("family", "'" + *family + "' is not a task family");
    r.family = *f;
    std::string kind = "knobs";
    if (o.get("kind") && !str("kind", kind))
      return false;
    if (kind != "knobs" && kind != "ir")
      return fail("kind", "must be \"knobs\" or \"ir\", got '" + kind + "'");
    r.kind = kind;
    const json::Object *knobs = o.getObject("knobs");
    if (!knobs)
      return fail("knobs", "missing or not an object");
    r.knobsJson = *knobs;
    // The lowering's own checks of every value (ranges, powers of two, lists' lengths):
    // whatever a hostile file holds, only a knob set the lowering accepts goes on.
    std::string why;
    if (failed(r.knobs.mergeJson(*knobs, &why)))
      return fail("knobs", why);
    // What the lowering cannot check (it does not know the chip): evo-evolve proposes wgmma
    // only for sm_90a, the one chip that has it; a record elsewhere would give PTX that fails.
    if (r.knobs.wgmma && r.chip != "sm_90a")
      return fail("knobs", "wgmma needs chip sm_90a, the record is for " + r.chip);
    if (std::optional<chips::Chip> c = chips::parse(r.chip);
        r.knobs.mmaSync && (!c || c->number() < 80))
      return fail("knobs", "mma_sync needs chip sm_80 or newer, the record is for " + r.chip);
    for (auto [key, field] : {std::pair<StringRef, std::string *>{"features", &r.features},
                              {"ops", &r.ops},
                              {"type", &r.type},
                              {"source", &r.source},
                              {"op", &r.op},
                              {"ir", &r.ir},
                              {"measured_at", &r.measuredAt}})
      if (o.get(key) && !str(key, *field))
        return false;
    if (const json::Value *rw = o.get("rewrites")) {
      if (!rw->getAsArray())
        return fail("rewrites", "not an array");
      r.rewrites = *rw->getAsArray();
    }
    if (!time("baseline_ms", r.baselineMs) || !time("best_ms", r.bestMs))
      return false;
    if (const json::Value *v = o.get("remeasured")) {
      if (!v->getAsBoolean())
        return fail("remeasured", "not a boolean");
      r.remeasured = *v->getAsBoolean();
    }
    if (const json::Value *v = o.get("run")) {
      if (!v->getAsObject())
        return fail("run", "not an object");
      r.run = *v->getAsObject();
    }
    return true;
  }

private:
  static bool isChipName(StringRef chip) {
    if (!chip.consume_front("sm_") || chip.empty() || chip.size() > 6)
      return false;
    chip.consume_back("a");
    chip.consume_back("f");
    return !chip.empty() && llvm::all_of(chip, llvm::isDigit);
  }
  bool fail(StringRef key, const std::string &why) {
    error = key.str() + ": " + why;
    return false;
  }
  bool str(StringRef key, std::string &out) {
    const json::Value *v = o.get(key);
    if (!v)
      return fail(key, "missing");
    std::optional<StringRef> s = v->getAsString();
    if (!s)
      return fail(key, "not a string");
    out = s->str();
    return true;
  }
  bool time(StringRef key, double &out) {
    const json::Value *v = o.get(key);
    if (!v || v->kind() == json::Value::Null)
      return true;
    std::optional<double> d = v->getAsNumber();
    if (!d || !std::isfinite(*d) || *d <= 0)
      return fail(key, "not a positive number of milliseconds");
    out = *d;
    return true;
  }

  const json::Object &o;
  std::string &error;
};

/// Calls `visit(c, line, column)` (1-based) for each character of JSON `text` outside strings,
/// an opening quote included, until it returns false: the scans below follow strings and
/// nesting only, before (or without) a parse.
void scanOutsideStrings(StringRef text,
                        llvm::function_ref<bool(char, unsigned, unsigned)> visit) {
  unsigned line = 1;
  size_t lineStart = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\n') {
      ++line;
      lineStart = i + 1;
    }
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
      continue;
    }
    inString = c == '"';
    if (!visit(c, line, static_cast<unsigned>(i - lineStart + 1)))
      return;
  }
}

/// The line and column of each element of the top-level object's arrays (the records), for diagnostics
/// about a record.
std::vector<std::pair<unsigned, unsigned>> recordLines(StringRef text) {
  std::vector<std::pair<unsigned, unsigned>> lines;
  unsigned depth = 0;
  bool inArray = false, expectElement = false;
  scanOutsideStrings(text, [&](char c, unsigned line, unsigned column) {
    if (expectElement && !llvm::isSpace(c)) {
      expectElement = false;
      if (c != ']')
        lines.push_back({line, column});
    }
    if (c == '{' || c == '[') {
      if (depth == 1) {
        inArray = c == '[';
        expectElement = inArray;
      }
      ++depth;
    } else if ((c == '}' || c == ']') && depth > 0) {
      --depth;
    } else if (c == ',' && depth == 2 && inArray) {
      expectElement = true;
    }
    return true;
  });
  return lines;
}

/// json::parse's message is "[line:col, byte=N]: what" (llvm/Support/JSON.cpp).
void locateParseError(StringRef message, TuningDbError &error) {
  size_t open = message.find('['), close = message.find("]: ");
  if (open == StringRef::npos || close == StringRef::npos || close < open)
    return;
  auto [line, rest] = message.slice(open + 1, close).split(':');
  auto [col, _] = rest.split(',');
  unsigned l = 0, c = 0;
  if (!line.getAsInteger(10, l) && !col.getAsInteger(10, c)) {
    error.line = l;
    error.column = c;
    error.message = (message.take_front(open) + message.drop_front(close + 3)).str();
  }
}
} // namespace

//===----------------------------------------------------------------------===//
// The database
//===----------------------------------------------------------------------===//

/// Where the text's brackets first nest deeper than `limit` (outside strings), if they do:
/// llvm::json's parser recurses once per level, and a hostile file could nest millions deep.
static std::optional<std::pair<unsigned, unsigned>> tooDeep(StringRef text, unsigned limit) {
  std::optional<std::pair<unsigned, unsigned>> at;
  unsigned depth = 0;
  scanOutsideStrings(text, [&](char c, unsigned line, unsigned column) {
    if ((c == '{' || c == '[') && ++depth > limit)
      at = std::make_pair(line, column);
    else if ((c == '}' || c == ']') && depth > 0)
      --depth;
    return !at;
  });
  return at;
}

std::optional<TuningDb> TuningDb::parse(StringRef text, TuningDbError &error) {
  // A record nests 4 deep (the file, records, a record, its knobs' lists); 64 is plenty.
  if (std::optional<std::pair<unsigned, unsigned>> at = tooDeep(text, 64)) {
    error = {"nested more than 64 levels deep", at->first, at->second};
    return std::nullopt;
  }
  llvm::Expected<json::Value> v = json::parse(text);
  if (!v) {
    error.message = "not JSON: " + llvm::toString(v.takeError());
    locateParseError(error.message, error);
    return std::nullopt;
  }
  const json::Object *top = v->getAsObject();
  if (!top) {
    error = {"not a tuning database: the top level is not an object", 1, 1};
    return std::nullopt;
  }
  std::optional<StringRef> format = top->getString("format");
  if (!format || *format != kTuningDbFormat) {
    error = {"not a tuning database: 'format' must be \"" + kTuningDbFormat.str() + "\"", 1, 1};
    return std::nullopt;
  }
  const json::Array *records = top->getArray("records");
  if (!records) {
    error = {"'records' is missing or not an array", 1, 1};
    return std::nullopt;
  }
  std::vector<std::pair<unsigned, unsigned>> lines = recordLines(text);
  TuningDb db;
  for (auto [i, rv] : llvm::enumerate(*records)) {
    auto fail = [&](const std::string &why) {
      error.message = "records[" + std::to_string(i) + "]: " + why;
      std::tie(error.line, error.column) =
          i < lines.size() ? lines[i] : std::pair<unsigned, unsigned>(1, 1);
      return std::nullopt;
    };
    const json::Object *ro = rv.getAsObject();
    if (!ro)
      return fail("not an object");
    TuningRecord r;
    std::string why;
    if (!RecordReader(*ro, why).read(r))
      return fail(why);
    if (db.lookup(r.signature, r.chip))
      return fail("a second record for signature " + r.signature + " on " + r.chip +
                  " (merge databases with `evo-opt tuning-merge`, which keeps one)");
    db.recs.push_back(std::move(r));
  }
  return db;
}

std::optional<TuningDb> TuningDb::load(StringRef path, TuningDbError &error) {
  std::string p = path.str();
  // O_NONBLOCK: opening a FIFO must not wait for a writer; what is opened is checked, not the
  // path (it could change between a stat and an open).
  int fd = ::open(p.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    error.message = "cannot open: " + std::string(std::strerror(errno));
    return std::nullopt;
  }
  auto closeFd = llvm::make_scope_exit([&] { ::close(fd); });
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    error.message = "cannot stat: " + std::string(std::strerror(errno));
    return std::nullopt;
  }
  if (!S_ISREG(st.st_mode)) {
    error.message = "not a regular file";
    return std::nullopt;
  }
  if (static_cast<uint64_t>(st.st_size) > kMaxTuningDbBytes) {
    error.message = llvm::formatv("{0} bytes: larger than the {1} MiB a tuning database may have",
                                  st.st_size, kMaxTuningDbBytes >> 20)
                        .str();
    return std::nullopt;
  }
  std::string text;
  text.reserve(st.st_size);
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      error.message = "cannot read: " + std::string(std::strerror(errno));
      return std::nullopt;
    }
    if (n == 0)
      break;
    text.append(buf, n);
    if (text.size() > kMaxTuningDbBytes) { // it grew while being read
      error.message = "larger than the limit while being read";
      return std::nullopt;
    }
  }
  return parse(text, error);
}

static bool better(const TuningRecord &a, const TuningRecord &b, TuningDb::Prefer prefer) {
  auto faster = [](const TuningRecord &x, const TuningRecord &y) {
    // A record without a time never beats one with a time.
    if (std::isnan(x.bestMs) != std::isnan(y.bestMs))
      return !std::isnan(x.bestMs);
    return !std::isnan(x.bestMs) && x.bestMs < y.bestMs;
  };
  // ISO 8601 UTC timestamps order as strings.
  if (prefer == TuningDb::Prefer::Newest) {
    if (a.measuredAt != b.measuredAt)
      return a.measuredAt > b.measuredAt;
    return faster(a, b);
  }
  if (faster(a, b) || faster(b, a))
    return faster(a, b);
  return a.measuredAt > b.measuredAt;
}

bool TuningDb::add(TuningRecord r, Prefer prefer) {
  for (TuningRecord &old : recs)
    if (old.signature == r.signature && old.chip == r.chip) {
      if (!better(r, old, prefer))
        return false;
      old = std::move(r);
      return true;
    }
  recs.push_back(std::move(r));
  return true;
}

const TuningRecord *TuningDb::lookup(StringRef signature, StringRef chip) const {
  for (const TuningRecord &r : recs)
    if (r.signature == signature && r.chip == chip)
      return &r;
  return nullptr;
}

std::vector<const TuningRecord *> TuningDb::otherChips(StringRef signature,
                                                       StringRef chip) const {
  std::vector<const TuningRecord *> out;
  for (const TuningRecord &r : recs)
    if (r.signature == signature && r.chip != chip)
      out.push_back(&r);
  return out;
}

json::Value TuningDb::toJson() const {
  std::vector<const TuningRecord *> sorted;
  for (const TuningRecord &r : recs)
    sorted.push_back(&r);
  std::sort(sorted.begin(), sorted.end(), [](const TuningRecord *a, const TuningRecord *b) {
    return std::tie(a->signature, a->chip) < std::tie(b->signature, b->chip);
  });
  json::Array records;
  for (const TuningRecord *r : sorted)
    records.push_back(r->toJson());
  return json::Object{{"format", kTuningDbFormat}, {"records", std::move(records)}};
}

llvm::Error TuningDb::write(StringRef path) const {
  // Like -o and output-dir, the file's directory is created when missing.
  StringRef parent = llvm::sys::path::parent_path(path);
  if (!parent.empty() && path != "-")
    if (std::error_code ec = llvm::sys::fs::create_directories(parent))
      return llvm::createStringError(ec, "cannot create '" + parent + "': " + ec.message());
  json::Value v = toJson();
  return llvm::writeToOutput(path, [&](llvm::raw_ostream &os) {
    os << llvm::formatv("{0:2}", v) << "\n";
    return llvm::Error::success();
  });
}

FailureOr<TuningRecord> recordForTaskSource(StringRef source, MLIRContext *ctx, StringRef chip) {
  OwningOpRef<ModuleOp> src = parseSourceString<ModuleOp>(source, ParserConfig(ctx));
  if (!src || src->getOps<func::FuncOp>().empty())
    return failure();
  TaskSignature sig = taskSignature(*src->getOps<func::FuncOp>().begin());
  TuningRecord r;
  r.signature = sig.hash;
  r.source = sig.canonical;
  r.ops = sig.ops;
  r.type = sig.type;
  r.chip = chip.str();
  return r;
}

FailureOr<TuningDb> tuningTemplate(ModuleOp module, StringRef chip) {
  TuningDb db;
  for (auto gm : module.getOps<gpu::GPUModuleOp>()) {
    if (!gm->hasAttr(kPlanAttrName))
      continue;
    FailureOr<LaunchPlan> plan = LaunchPlan::fromModule(gm);
    if (failed(plan))
      return failure();
    for (const TaskDesc &t : plan->tasks) {
      FailureOr<TuningRecord> rec = recordForTaskSource(t.source, module.getContext(), chip);
      if (failed(rec))
        return gm.emitError() << "tuning template: the source of task '" << t.name
                              << "' does not parse";
      TuningRecord &r = *rec;
      r.family = t.family;
      r.knobs = t.knobs ? t.knobs.getKnobs() : ScheduleKnobs();
      r.knobsJson = r.knobs.toJson(t.family);
      r.run = json::Object{{"template_of", plan->funcName}, {"task", t.name}};
      db.add(std::move(r), TuningDb::Prefer::Fastest);
    }
  }
  return db;
}

std::string describe(StringRef path, const TuningDbError &error) {
  std::string where = path.str();
  if (error.line)
    where += ":" + std::to_string(error.line) + (error.column ? ":" + std::to_string(error.column) : "");
  return where + ": " + error.message;
}

llvm::Error addToTuningDb(StringRef path, const TuningDb &records, TuningDb::Prefer prefer) {
  auto err = [](const llvm::Twine &m) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), m);
  };
  // Two runs adding to one file at once must not lose each other's records: the read, merge
  // and rename happen under an exclusive lock on the directory (no lock file left behind).
  SmallString<256> dir(path);
  llvm::sys::path::remove_filename(dir);
  if (dir.empty())
    dir = ".";
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return err("cannot create '" + dir + "': " + ec.message());
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0)
    return err("cannot open the directory of '" + path + "': " + std::strerror(errno));
  auto closeDir = llvm::make_scope_exit([&] { ::close(dfd); });
  while (::flock(dfd, LOCK_EX) != 0)
    if (errno != EINTR)
      return err("cannot lock the directory of '" + path + "': " + std::strerror(errno));
  TuningDb merged;
  if (llvm::sys::fs::exists(path)) {
    TuningDbError e;
    std::optional<TuningDb> old = TuningDb::load(path, e);
    if (!old)
      return err(describe(path, e));
    merged = std::move(*old);
  }
  for (const TuningRecord &r : records.records())
    merged.add(r, prefer);
  return merged.write(path);
}

/// The record that applies to `task` under `options` (its chip and family), with a remark saying
/// so, or a remark or warning saying why none does.
const TuningRecord *tuningRecordFor(func::FuncOp task, const LowerOptions &options) {
  if (!options.tuningDb)
    return nullptr;
  TuningApplyStats dummy;
  TuningApplyStats &stats = options.tuningStats ? *options.tuningStats : dummy;
  ++stats.tasks;
  TaskSignature sig = taskSignature(task);
  Location loc = task.getLoc();
  const TuningRecord *r = options.tuningDb->lookup(sig.hash, options.tuningChip);
  if (!r) {
    std::vector<const TuningRecord *> others =
        options.tuningDb->otherChips(sig.hash, options.tuningChip);
    if (!others.empty()) {
      ++stats.otherChip;
      std::string chips;
      for (const TuningRecord *o : others)
        chips += (chips.empty() ? "" : ", ") + o->chip;
      emitRemark(loc) << "evo-lower-to-gpu: tuning-db: " << task.getSymName()
                      << " has records only for " << chips << ", not tuning-chip="
                      << options.tuningChip << ": not applied (the task keeps its knobs)";
    }
    return nullptr;
  }
  // The family the lowering gives the task must be the record's (another evo-opt may classify
  // it differently); the classification's own diagnostics come again from lowerTask.
  FailureOr<TaskFamily> family = failure();
  {
    ScopedDiagnosticHandler quiet(task.getContext(), [](Diagnostic &) { return success(); });
    family = classifyTask(task);
  }
  if (succeeded(family) && *family != r->family) {
    ++stats.otherFamily;
    emitWarning(loc) << "evo-lower-to-gpu: tuning-db: " << task.getSymName() << " is a "
                     << stringifyTaskFamily(*family) << " task but its record "
                     << r->signature.substr(0, 12) << " is for the " << stringifyTaskFamily(r->family)
                     << " family: not applied (the task keeps its knobs)";
    return nullptr;
  }
  ++stats.applied;
  std::string knobsText;
  llvm::raw_string_ostream os(knobsText);
  os << json::Value(json::Object(r->knobsJson));
  InFlightDiagnostic remark = emitRemark(loc);
  remark << "evo-lower-to-gpu: tuning-db: " << task.getSymName() << " ("
         << stringifyTaskFamily(r->family) << ") takes the knobs of record "
         << r->signature.substr(0, 12) << " for " << r->chip;
  if (std::isfinite(r->speedup()))
    remark << llvm::formatv(" ({0:f2}x over its baseline)", r->speedup()).str();
  remark << ": " << knobsText;
  if (r->kind == "ir")
    remark << "; the record's winner is more than knobs (" << (r->op.empty() ? "IR" : r->op)
           << "): its kernel IR is not applied, only the knobs it was built on";
  return r;
}

} // namespace evo
