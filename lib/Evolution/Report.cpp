//===- Report.cpp - JSON summary and HTML report of a run ------------------===//
//
// Both reports are computed from the run store alone (no GPU, no input module), so a finished,
// interrupted or still running search can be reported at any time. The HTML page is one file
// with no scripts and no external resources: it is safe to open from an untrusted run directory,
// and everything taken from the store (reasons, IR, thoughts written by an LLM) is escaped.
//
// Why one file of ~830 lines: both reports are views of one analysis (analyzeTask), and the
// HTML page's escaping and inline SVG charts are only used here; splitting the renderers would
// make the analysis structs and the escaping an internal header for no other reader.
//
//===----------------------------------------------------------------------===//

#include "evo/Evolution/RunStore.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include <algorithm>
#include <cstdio>

using namespace evo;
using llvm::StringRef;
namespace json = llvm::json;

//===----------------------------------------------------------------------===//
// Analysis shared by both reports
//===----------------------------------------------------------------------===//

std::string evo::normalizeReason(StringRef reason) {
  std::string out;
  out.reserve(reason.size());
  auto isWordChar = [](char c) { return llvm::isAlnum(c) || c == '_'; };
  size_t i = 0, n = reason.size();
  while (i < n) {
    char c = reason[i];
    // Only free-standing numbers: "sm_90", "f32" or "CUDA_ERROR_..." name things, they do not
    // count them.
    if (!llvm::isDigit(c) || (i > 0 && isWordChar(reason[i - 1]))) {
      out += c;
      ++i;
      continue;
    }
    if (c == '0' && i + 2 < n && (reason[i + 1] == 'x' || reason[i + 1] == 'X') &&
        llvm::isHexDigit(reason[i + 2])) {
      i += 2;
      while (i < n && llvm::isHexDigit(reason[i]))
        ++i;
    } else {
      while (i < n && llvm::isDigit(reason[i]))
        ++i;
      if (i + 1 < n && reason[i] == '.' && llvm::isDigit(reason[i + 1])) {
        ++i;
        while (i < n && llvm::isDigit(reason[i]))
          ++i;
      }
      if (i + 1 < n && (reason[i] == 'e' || reason[i] == 'E')) {
        size_t j = i + 1;
        if (j < n && (reason[j] == '+' || reason[j] == '-'))
          ++j;
        if (j < n && llvm::isDigit(reason[j])) {
          i = j;
          while (i < n && llvm::isDigit(reason[i]))
            ++i;
        }
      }
    }
    out += 'N';
  }
  return out;
}

namespace {

/// Counts over the duplicate-free candidates of a task: of the candidates with the same PTX,
/// one stands for it (the first evaluated, else the first) and the others count only in
/// `duplicates`.
struct Counts {
  int64_t total = 0, evaluated = 0, valid = 0, invalid = 0, crashed = 0, timeout = 0,
          compileError = 0, pending = 0, notRun = 0, other = 0, duplicates = 0;
  /// Generated candidates (everything but the baseline), for the validity rate.
  int64_t generatedEvaluated = 0, generatedValid = 0;

  Counts &operator+=(const Counts &n) {
    for (auto [mine, theirs] :
         {std::pair{&total, n.total}, {&evaluated, n.evaluated}, {&valid, n.valid},
          {&invalid, n.invalid}, {&crashed, n.crashed}, {&timeout, n.timeout},
          {&compileError, n.compileError}, {&pending, n.pending}, {&notRun, n.notRun},
          {&other, n.other}, {&duplicates, n.duplicates},
          {&generatedEvaluated, n.generatedEvaluated}, {&generatedValid, n.generatedValid}})
      *mine += theirs;
    return *this;
  }
};

struct ReasonGroup {
  std::string verdict, reason, example;
  int64_t count = 0;
};

struct TaskReport {
  TaskRecord task;
  std::vector<CandidateRecord> candidates; // all of them, by id
  std::vector<bool> duplicate;             // parallel to candidates
  int baseline = -1, best = -1;            // indices into candidates
  double baselineMs = NAN, bestMs = NAN, speedup = NAN;
  bool remeasured = false; // the speedup uses finalist re-measurements
  double fractionOfCopy = NAN, fractionOfPeak = NAN;
  Counts counts;
  double validityRate = NAN;
  std::vector<ReasonGroup> reasons;
  std::vector<int> lineage; // baseline first, the best last
  int64_t promptTokens = 0, completionTokens = 0;
  double costUsd = 0;
  /// {"device", "gpu", "host"} of the GPU that searched the task (evo-evolve, devices=); null
  /// for a run made before it was recorded.
  json::Value evaluatedOn = nullptr;
};

constexpr size_t kMaxReasonGroups = 10;
constexpr size_t kMaxReasonChars = 400;

bool finitePositive(double v) { return std::isfinite(v) && v > 0; }

std::string clip(StringRef s, size_t max) {
  if (s.size() <= max)
    return s.str();
  return (s.take_front(max) + "...").str();
}

/// Text for a failure: the reason, else the first line of the compiler's diagnostics.
std::string failureText(const CandidateRecord &c) {
  StringRef r = StringRef(c.reason).trim();
  if (r.empty())
    r = StringRef(c.compileDiagnostics).trim().split('\n').first;
  return r.empty() ? "(no reason given)" : r.str();
}

TaskReport analyzeTask(const RunStore &store, TaskRecord task) {
  TaskReport r;
  if (std::optional<std::string> on = store.getMeta("evaluated_on:" + task.name)) {
    if (llvm::Expected<json::Value> v = json::parse(*on))
      r.evaluatedOn = std::move(*v);
    else
      llvm::consumeError(v.takeError());
  }
  r.candidates = store.getCandidates(task.name);
  r.task = std::move(task);
  const std::vector<CandidateRecord> &cs = r.candidates;

  // One candidate stands for each PTX: the first evaluated one (compiles finish out of order, so
  // it need not be the first made), else the first; the others are its duplicates.
  llvm::DenseMap<int64_t, int> indexOf;
  llvm::StringMap<int> representative;
  for (auto [i, c] : llvm::enumerate(cs)) {
    if (c.ptxHash.empty())
      continue;
    auto [it, fresh] = representative.try_emplace(c.ptxHash, static_cast<int>(i));
    if (!fresh && !cs[it->second].isEvaluated() && c.isEvaluated())
      it->second = static_cast<int>(i);
  }
  for (auto [i, c] : llvm::enumerate(cs)) {
    indexOf[c.id] = static_cast<int>(i);
    bool dup = !c.ptxHash.empty() && representative.lookup(c.ptxHash) != static_cast<int>(i);
    r.duplicate.push_back(dup);
    r.promptTokens += c.promptTokens;
    r.completionTokens += c.completionTokens;
    r.costUsd += c.costUsd;
  }
  auto find = [&](int64_t id) { return indexOf.count(id) ? indexOf[id] : -1; };

  r.baseline = find(r.task.baselineId);
  if (r.baseline < 0)
    for (auto [i, c] : llvm::enumerate(cs))
      if (c.op == "baseline") {
        r.baseline = static_cast<int>(i);
        break;
      }
  // The search records its best; while it has not, the fastest valid candidate stands in.
  r.best = find(r.task.bestId);
  if (r.best < 0)
    for (auto [i, c] : llvm::enumerate(cs))
      if (c.verdict == "valid" && finitePositive(c.medianMs) &&
          (r.best < 0 || c.medianMs < cs[r.best].medianMs))
        r.best = static_cast<int>(i);

  if (r.baseline >= 0 && r.best >= 0) {
    const CandidateRecord &b = cs[r.baseline], &w = cs[r.best];
    // Finalist re-measurements are interleaved and longer, so they are preferred, but only in
    // pairs: a ratio of a re-measured time and a search time would mix two protocols.
    r.remeasured = finitePositive(b.finalMedianMs) && finitePositive(w.finalMedianMs);
    r.baselineMs = r.remeasured ? b.finalMedianMs : b.medianMs;
    r.bestMs = r.remeasured ? w.finalMedianMs : w.medianMs;
    if (b.verdict == "valid" && w.verdict == "valid" && finitePositive(r.baselineMs) &&
        finitePositive(r.bestMs))
      r.speedup = r.baselineMs / r.bestMs;
  } else if (r.baseline >= 0) {
    r.baselineMs = cs[r.baseline].medianMs;
  }

  if (r.best >= 0) {
    llvm::Expected<json::Value> roof = json::parse(cs[r.best].roofline);
    if (!roof)
      llvm::consumeError(roof.takeError());
    else if (const json::Object *o = roof->getAsObject()) {
      r.fractionOfCopy = o->getNumber("fraction_of_copy").value_or(NAN);
      r.fractionOfPeak = o->getNumber("fraction_of_peak").value_or(NAN);
    }
  }

  Counts &n = r.counts;
  std::vector<ReasonGroup> groups;
  llvm::StringMap<size_t> groupIndex;
  for (auto [i, c] : llvm::enumerate(cs)) {
    if (r.duplicate[i]) {
      ++n.duplicates;
      continue;
    }
    ++n.total;
    StringRef v = c.verdict;
    if (v == "pending") {
      ++n.pending;
      continue;
    }
    if (v == "not-run") {
      ++n.notRun;
      continue;
    }
    ++n.evaluated;
    bool generated = static_cast<int>(i) != r.baseline;
    if (generated)
      ++n.generatedEvaluated;
    if (v == "valid") {
      ++n.valid;
      n.generatedValid += generated;
      continue;
    }
    if (v == "invalid")
      ++n.invalid;
    else if (v == "crashed")
      ++n.crashed;
    else if (v == "timeout")
      ++n.timeout;
    else if (v == "compile-error")
      ++n.compileError;
    else
      ++n.other;
    std::string text = failureText(c);
    std::string reason = clip(normalizeReason(text), kMaxReasonChars);
    std::string key = (v + "\n" + reason).str();
    auto [it, inserted] = groupIndex.try_emplace(key, groups.size());
    if (inserted)
      groups.push_back({v.str(), reason, clip(text, kMaxReasonChars), 0});
    ++groups[it->second].count;
  }
  if (n.generatedEvaluated > 0)
    r.validityRate = static_cast<double>(n.generatedValid) / n.generatedEvaluated;
  // Stable: equally frequent reasons stay in the order they first occurred.
  std::stable_sort(groups.begin(), groups.end(),
                   [](const ReasonGroup &a, const ReasonGroup &b) { return a.count > b.count; });
  if (groups.size() > kMaxReasonGroups)
    groups.resize(kMaxReasonGroups);
  r.reasons = std::move(groups);

  // The winner's chain through first parents (the one a mutation or crossover started from).
  llvm::DenseSet<int> visited;
  for (int i = r.best; i >= 0 && visited.insert(i).second;) {
    r.lineage.push_back(i);
    if (i == r.baseline || cs[i].parents.empty())
      break;
    i = find(cs[i].parents.front());
  }
  std::reverse(r.lineage.begin(), r.lineage.end());
  return r;
}

std::vector<TaskReport> analyzeRun(const RunStore &store) {
  std::vector<TaskReport> reports;
  for (TaskRecord &t : store.getTasks())
    reports.push_back(analyzeTask(store, std::move(t)));
  return reports;
}

//===----------------------------------------------------------------------===//
// JSON
//===----------------------------------------------------------------------===//

/// JSON strings must be UTF-8; worker and JIT logs need not be.
json::Value str(StringRef s) {
  if (json::isUTF8(s))
    return s.str();
  return json::fixUTF8(s);
}

json::Value num(double v) { return std::isfinite(v) ? json::Value(v) : json::Value(nullptr); }

/// A stored JSON field as JSON (it was checked when stored), or as a string if it is not.
json::Value embedded(StringRef text) {
  llvm::Expected<json::Value> v = json::parse(text);
  if (v)
    return std::move(*v);
  llvm::consumeError(v.takeError());
  return str(text);
}

bool isSecretKey(StringRef key) {
  std::string k = key.lower();
  StringRef s(k);
  return s.contains("key") || s.contains("token") || s.contains("secret") || s.contains("password");
}

/// Configuration JSON may nest credentials ({"llm": {"api_key": ...}}): they are dropped at
/// every depth, not only at the top.
void scrubSecrets(json::Value &v) {
  if (json::Object *o = v.getAsObject()) {
    std::vector<json::ObjectKey> drop;
    for (auto &[k, child] : *o) {
      if (isSecretKey(k))
        drop.push_back(k);
      else
        scrubSecrets(child);
    }
    for (const json::ObjectKey &k : drop)
      o->erase(k);
  } else if (json::Array *a = v.getAsArray()) {
    for (json::Value &child : *a)
      scrubSecrets(child);
  }
}

json::Object publicMeta(const RunStore &store) {
  json::Object meta;
  for (auto &[key, value] : store.getAllMeta()) {
    if (isSecretKey(key))
      continue;
    StringRef trimmed = StringRef(value).ltrim();
    json::Value v = str(value);
    if (trimmed.starts_with("{") || trimmed.starts_with("["))
      v = embedded(value);
    scrubSecrets(v);
    meta[str(key).getAsString()->str()] = std::move(v);
  }
  return meta;
}

json::Value countsJson(const Counts &n) {
  return json::Object{{"total", n.total},
                      {"evaluated", n.evaluated},
                      {"valid", n.valid},
                      {"invalid", n.invalid},
                      {"crashed", n.crashed},
                      {"timeout", n.timeout},
                      {"compile_error", n.compileError},
                      {"pending", n.pending},
                      {"not_run", n.notRun},
                      {"other", n.other},
                      {"duplicates", n.duplicates}};
}

json::Value taskJson(const TaskReport &r) {
  const std::vector<CandidateRecord> &cs = r.candidates;
  json::Array reasons;
  for (const ReasonGroup &g : r.reasons)
    reasons.push_back(json::Object{{"verdict", str(g.verdict)},
                                   {"reason", str(g.reason)},
                                   {"example", str(g.example)},
                                   {"count", g.count}});
  double baselineSearchMs = r.baseline >= 0 ? cs[r.baseline].medianMs : NAN;
  json::Array lineage;
  for (int i : r.lineage) {
    const CandidateRecord &c = cs[i];
    json::Array parents;
    for (int64_t p : c.parents)
      parents.push_back(p);
    lineage.push_back(json::Object{
        {"id", c.id},
        {"op", str(c.op)},
        {"generation", c.generation},
        {"parents", std::move(parents)},
        {"knobs", embedded(c.knobs)},
        {"rewrites", embedded(c.rewrites)},
        {"verdict", str(c.verdict)},
        {"median_ms", num(c.medianMs)},
        {"final_median_ms", num(c.finalMedianMs)},
        // Search medians on both sides: every ancestor has one, few have a re-measurement.
        {"speedup", num(finitePositive(c.medianMs) ? baselineSearchMs / c.medianMs : NAN)},
        {"thought", str(c.thought)}});
  }
  return json::Object{
      {"name", str(r.task.name)},
      {"function", str(r.task.function)},
      {"family", str(r.task.family)},
      {"status", str(r.task.status)},
      {"generations_done", r.task.generationsDone},
      {"baseline_id", r.baseline >= 0 ? json::Value(cs[r.baseline].id) : json::Value(nullptr)},
      {"best_id", r.best >= 0 ? json::Value(cs[r.best].id) : json::Value(nullptr)},
      {"baseline_ms", num(r.baselineMs)},
      {"best_ms", num(r.bestMs)},
      {"speedup", num(r.speedup)},
      {"remeasured", r.remeasured},
      {"fraction_of_copy", num(r.fractionOfCopy)},
      {"fraction_of_peak", num(r.fractionOfPeak)},
      {"counts", countsJson(r.counts)},
      {"validity_rate", num(r.validityRate)},
      {"invalid_reasons", std::move(reasons)},
      {"lineage", std::move(lineage)},
      {"prompt_tokens", r.promptTokens},
      {"completion_tokens", r.completionTokens},
      {"cost_usd", r.costUsd},
      {"evaluated_on", r.evaluatedOn}};
}

json::Value summarize(const RunStore &store, const std::vector<TaskReport> &reports) {
  json::Array tasks;
  Counts all;
  int64_t promptTokens = 0, completionTokens = 0, done = 0, improved = 0, withSpeedup = 0;
  double costUsd = 0, logSpeedups = 0;
  for (const TaskReport &r : reports) {
    tasks.push_back(taskJson(r));
    all += r.counts;
    promptTokens += r.promptTokens;
    completionTokens += r.completionTokens;
    costUsd += r.costUsd;
    done += r.task.status == "done";
    if (finitePositive(r.speedup)) {
      ++withSpeedup;
      logSpeedups += std::log(r.speedup);
      improved += r.speedup > 1;
    }
  }
  double validity = all.generatedEvaluated > 0
                        ? static_cast<double>(all.generatedValid) / all.generatedEvaluated
                        : NAN;
  json::Object totals{
      {"tasks", static_cast<int64_t>(reports.size())},
      {"tasks_done", done},
      {"tasks_improved", improved},
      {"counts", countsJson(all)},
      {"validity_rate", num(validity)},
      {"geomean_speedup", num(withSpeedup ? std::exp(logSpeedups / withSpeedup) : NAN)},
      {"prompt_tokens", promptTokens},
      {"completion_tokens", completionTokens},
      {"cost_usd", costUsd}};
  return json::Object{{"format", "evo-run-report/1"},
                      {"meta", publicMeta(store)},
                      {"tasks", std::move(tasks)},
                      {"totals", std::move(totals)}};
}

//===----------------------------------------------------------------------===//
// HTML
//===----------------------------------------------------------------------===//

/// Escapes for element content and quoted attributes alike (SVG inside HTML is parsed by the
/// HTML parser, so the same rules hold there).
std::string esc(StringRef s) {
  std::string text = json::isUTF8(s) ? s.str() : json::fixUTF8(s);
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    case '\'':
      out += "&#39;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

std::string printf1(const char *fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), fmt, v);
  return buf;
}

std::string ms(double v) { return std::isfinite(v) ? printf1("%.4g", v) : "&#8212;"; }
std::string times(double v) { return std::isfinite(v) ? printf1("%.2fx", v) : "&#8212;"; }
std::string percent(double v) { return std::isfinite(v) ? printf1("%.1f%%", 100 * v) : "&#8212;"; }
std::string coord(double v) { return printf1("%.1f", v); }

std::string compactJson(StringRef text) {
  std::string s;
  llvm::raw_string_ostream(s) << embedded(text);
  return s;
}

const char *const kStyle = R"css(
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #1a202c; padding: 0 1em; }
h1 { font-size: 1.6em; } h2 { font-size: 1.3em; margin-top: 2em; border-bottom: 1px solid #cbd5e0; }
h3 { font-size: 1.1em; }
table { border-collapse: collapse; margin: .6em 0; }
th, td { border: 1px solid #e2e8f0; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f7fafc; } td.n { text-align: right; font-variant-numeric: tabular-nums; }
code, pre { font: 12px/1.35 ui-monospace, monospace; }
pre { background: #f7fafc; padding: .6em; overflow-x: auto; max-height: 30em; }
svg { background: #fff; border: 1px solid #e2e8f0; display: block; margin: .5em 0; }
svg text { font: 11px system-ui, sans-serif; fill: #2d3748; }
.muted { color: #718096; } .bad { color: #c53030; } .good { color: #2f855a; }
)css";

/// Nice tick values on a log axis: 1, 2 and 5 times powers of ten inside [lo, hi].
std::vector<double> logTicks(double lo, double hi) {
  std::vector<double> ticks;
  for (int d = static_cast<int>(std::floor(std::log10(lo))); d <= std::ceil(std::log10(hi)); ++d)
    for (double m : {1.0, 2.0, 5.0}) {
      double v = m * std::pow(10.0, d);
      if (v >= lo && v <= hi)
        ticks.push_back(v);
    }
  if (ticks.size() < 2)
    ticks = {lo, hi};
  return ticks;
}

/// Median time against evaluation order, on a log axis (equal distances are equal speedups).
void scatterSvg(llvm::raw_ostream &os, const TaskReport &r) {
  const std::vector<CandidateRecord> &cs = r.candidates;
  std::vector<int> order;
  for (auto [i, c] : llvm::enumerate(cs))
    if (!r.duplicate[i] && c.isEvaluated())
      order.push_back(static_cast<int>(i));
  // Evaluation order when recorded; creation order breaks ties and covers missing ones.
  llvm::stable_sort(order, [&](int a, int b) {
    int64_t ea = cs[a].evalOrder < 0 ? INT64_MAX : cs[a].evalOrder;
    int64_t eb = cs[b].evalOrder < 0 ? INT64_MAX : cs[b].evalOrder;
    return ea < eb;
  });
  double lo = INFINITY, hi = 0;
  for (int i : order)
    if (finitePositive(cs[i].medianMs)) {
      lo = std::min(lo, cs[i].medianMs);
      hi = std::max(hi, cs[i].medianMs);
    }
  if (order.empty() || !(hi > 0)) {
    os << "<p class=\"muted\">No measured candidates yet.</p>\n";
    return;
  }
  lo /= 1.15;
  hi *= 1.15;
  const double W = 760, H = 330, left = 64, right = 16, top = 36, bottom = 40;
  const double plotW = W - left - right, plotH = H - top - bottom;
  size_t n = order.size();
  auto x = [&](size_t k) { return left + (n == 1 ? plotW / 2 : plotW * k / (n - 1)); };
  auto y = [&](double v) {
    return top + plotH * (std::log(hi) - std::log(v)) / (std::log(hi) - std::log(lo));
  };

  os << "<svg class=\"scatter\" width=\"" << W << "\" height=\"" << H << "\" viewBox=\"0 0 " << W
     << " " << H << "\" role=\"img\">\n";
  os << "<title>median time of every evaluated candidate of " << esc(r.task.name)
     << " by evaluation order</title>\n";
  for (double t : logTicks(lo, hi))
    os << "<line x1=\"" << left << "\" x2=\"" << W - right << "\" y1=\"" << coord(y(t))
       << "\" y2=\"" << coord(y(t)) << "\" stroke=\"#edf2f7\"/><text x=\"" << left - 6 << "\" y=\""
       << coord(y(t) + 4) << "\" text-anchor=\"end\">" << ms(t) << "</text>\n";
  os << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << plotW << "\" height=\""
     << plotH << "\" fill=\"none\" stroke=\"#a0aec0\"/>\n";
  os << "<text x=\"" << left + plotW / 2 << "\" y=\"" << H - 8
     << "\" text-anchor=\"middle\">evaluation order (" << n << " candidates)</text>\n";
  os << "<text x=\"14\" y=\"" << top + plotH / 2 << "\" transform=\"rotate(-90 14 "
     << top + plotH / 2 << ")\" text-anchor=\"middle\">median ms (log)</text>\n";
  // About six integer ticks on the evaluation axis.
  size_t step = std::max<size_t>(1, (n + 5) / 6);
  for (size_t k = 0; k < n; k += step)
    os << "<text x=\"" << coord(x(k)) << "\" y=\"" << top + plotH + 14
       << "\" text-anchor=\"middle\">" << k + 1 << "</text>";
  os << "\n<text x=\"" << left << "\" y=\"" << 14
     << "\"><tspan fill=\"#3182ce\">&#9679;</tspan> valid &#160; <tspan fill=\"#2f855a\">"
        "&#9679;</tspan> best &#160; <tspan fill=\"#2f855a\">&#9472;</tspan> best so far "
        "&#160; <tspan fill=\"#718096\">- -</tspan> baseline &#160; <tspan fill=\"#c53030\">"
        "&#215;</tspan> failed (at its time, or on the top edge without one)</text>\n";

  if (r.baseline >= 0 && finitePositive(cs[r.baseline].medianMs)) {
    double by = y(cs[r.baseline].medianMs);
    os << "<line class=\"baseline\" x1=\"" << left << "\" x2=\"" << W - right << "\" y1=\""
       << coord(by) << "\" y2=\"" << coord(by)
       << "\" stroke=\"#718096\" stroke-dasharray=\"6 4\"/><text x=\"" << W - right - 4 << "\" y=\""
       << coord(by - 5) << "\" text-anchor=\"end\">baseline " << ms(cs[r.baseline].medianMs)
       << " ms</text>\n";
  }

  // Best so far: a step line through the valid medians, drawn before the points it connects.
  std::string steps;
  double bestSoFar = INFINITY;
  for (auto [k, i] : llvm::enumerate(order)) {
    const CandidateRecord &c = cs[i];
    if (c.verdict != "valid" || !finitePositive(c.medianMs) || c.medianMs >= bestSoFar) {
      continue;
    }
    if (std::isfinite(bestSoFar))
      steps += coord(x(k)) + "," + coord(y(bestSoFar)) + " ";
    bestSoFar = c.medianMs;
    steps += coord(x(k)) + "," + coord(y(bestSoFar)) + " ";
  }
  if (std::isfinite(bestSoFar)) {
    steps += coord(x(n - 1)) + "," + coord(y(bestSoFar));
    os << "<polyline class=\"best-so-far\" points=\"" << steps
       << "\" fill=\"none\" stroke=\"#2f855a\" stroke-width=\"2\"/>\n";
  }

  for (auto [k, i] : llvm::enumerate(order)) {
    const CandidateRecord &c = cs[i];
    std::string tip = "#" + std::to_string(c.id) + " " + c.op + " gen " +
                      std::to_string(c.generation) + ": " + c.verdict;
    if (finitePositive(c.medianMs))
      tip += ", " + printf1("%.4g", c.medianMs) + " ms";
    if (c.verdict != "valid")
      tip += " (" + clip(failureText(c), 200) + ")";
    double px = x(k);
    if (c.verdict == "valid" && finitePositive(c.medianMs)) {
      bool isBest = static_cast<int>(i) == r.best, isBase = static_cast<int>(i) == r.baseline;
      os << "<circle cx=\"" << coord(px) << "\" cy=\"" << coord(y(c.medianMs)) << "\" r=\""
         << (isBest || isBase ? 5 : 3) << "\" fill=\""
         << (isBest   ? "#2f855a"
             : isBase ? "#4a5568"
                      : "#3182ce")
         << "\" fill-opacity=\"0.8\"><title>" << esc(tip) << "</title></circle>\n";
    } else {
      double py = finitePositive(c.medianMs) ? y(c.medianMs) : top - 8;
      os << "<path d=\"M" << coord(px - 3) << " " << coord(py - 3)
         << "l6 6m0 -6l-6 6\" stroke=\"#c53030\" "
         << "stroke-width=\"1.5\"><title>" << esc(tip) << "</title></path>\n";
    }
  }
  os << "</svg>\n";
}

struct Bar {
  std::string label;
  double value;
  const char *fill;
};

/// Horizontal bars on a linear axis from 0 to `maxValue`, with a dashed line at `reference`.
void barSvg(llvm::raw_ostream &os, StringRef cls, StringRef title, const std::vector<Bar> &rows,
            double maxValue, double reference, llvm::function_ref<std::string(double)> label) {
  const double W = 760, left = 200, right = 70, rowH = 22, top = 10;
  const double H = top + rowH * rows.size() + 24, plotW = W - left - right;
  auto x = [&](double v) { return left + plotW * std::min(v, maxValue) / maxValue; };
  os << "<svg class=\"" << cls << "\" width=\"" << W << "\" height=\"" << H << "\" viewBox=\"0 0 "
     << W << " " << H << "\" role=\"img\"><title>" << esc(title) << "</title>\n";
  for (auto [k, row] : llvm::enumerate(rows)) {
    double ry = top + rowH * k;
    os << "<text x=\"" << left - 8 << "\" y=\"" << coord(ry + 15) << "\" text-anchor=\"end\">"
       << esc(clip(row.label, 30)) << "</text>";
    if (std::isfinite(row.value))
      os << "<rect x=\"" << left << "\" y=\"" << coord(ry + 3) << "\" width=\""
         << coord(std::max(0.0, x(row.value) - left)) << "\" height=\"" << rowH - 6 << "\" fill=\""
         << row.fill << "\"/><text x=\"" << coord(x(row.value) + 4) << "\" y=\"" << coord(ry + 15)
         << "\">" << label(row.value) << "</text>";
    else
      os << "<text x=\"" << left + 4 << "\" y=\"" << coord(ry + 15)
         << "\" class=\"muted\">no data</text>";
    os << "\n";
  }
  os << "<line x1=\"" << coord(x(reference)) << "\" x2=\"" << coord(x(reference)) << "\" y1=\""
     << top - 4 << "\" y2=\"" << coord(H - 20) << "\" stroke=\"#1a202c\" stroke-dasharray=\"4 3\"/>"
     << "<text x=\"" << coord(x(reference)) << "\" y=\"" << coord(H - 6)
     << "\" text-anchor=\"middle\">" << label(reference) << "</text>\n";
  os << "</svg>\n";
}

void speedupChart(llvm::raw_ostream &os, const std::vector<TaskReport> &reports) {
  std::vector<Bar> rows;
  double maxValue = 1;
  for (const TaskReport &r : reports) {
    // A slowdown (possible after re-measuring finalists) must not look like a win.
    rows.push_back({r.task.name, r.speedup, r.speedup < 1 ? "#e53e3e" : "#3182ce"});
    if (std::isfinite(r.speedup))
      maxValue = std::max(maxValue, r.speedup);
  }
  barSvg(os, "speedup", "speedup over the baseline per task", rows, maxValue * 1.1, 1.0, times);
}

void rooflineChart(llvm::raw_ostream &os, const std::vector<TaskReport> &reports) {
  std::vector<Bar> rows;
  double maxValue = 1;
  for (const TaskReport &r : reports) {
    rows.push_back({r.task.name + " (copy)", r.fractionOfCopy, "#3182ce"});
    rows.push_back({r.task.name + " (peak)", r.fractionOfPeak, "#dd6b20"});
    for (double v : {r.fractionOfCopy, r.fractionOfPeak})
      if (std::isfinite(v))
        maxValue = std::max(maxValue, v);
  }
  barSvg(os, "roofline", "the best candidate's fraction of copy bandwidth and of peak FLOP/s", rows,
         maxValue * 1.1, 1.0, percent);
}

void taskSection(llvm::raw_ostream &os, const TaskReport &r, size_t index) {
  const std::vector<CandidateRecord> &cs = r.candidates;
  const Counts &n = r.counts;
  os << "<h2 id=\"task-" << index << "\">" << esc(r.task.name) << "</h2>\n<p>function <code>"
     << esc(r.task.function) << "</code>, family " << esc(r.task.family) << ", "
     << esc(r.task.status) << " after " << r.task.generationsDone << " generations. Baseline "
     << ms(r.baselineMs) << " ms, best " << ms(r.bestMs) << " ms"
     << (r.remeasured ? " (re-measured finalists)" : "") << ": <b>" << times(r.speedup) << "</b>. "
     << n.evaluated << " evaluated, " << n.valid << " valid, " << n.invalid << " invalid, "
     << n.crashed << " crashed, " << n.timeout << " timed out, " << n.compileError
     << " did not compile";
  if (n.duplicates)
    os << ", " << n.duplicates << " duplicates skipped";
  os << "; validity " << percent(r.validityRate) << ".</p>\n";
  scatterSvg(os, r);

  os << "<h3>Lineage of the winner</h3>\n";
  if (r.lineage.empty()) {
    os << "<p class=\"muted\">No winner yet.</p>\n";
  } else {
    double baseMs = r.baseline >= 0 ? cs[r.baseline].medianMs : NAN;
    os << "<table class=\"lineage\"><tr><th>gen</th><th>id</th><th>operator</th><th>knobs</th>"
          "<th>median ms</th><th>speedup</th><th>thought</th></tr>\n";
    for (int i : r.lineage) {
      const CandidateRecord &c = cs[i];
      os << "<tr><td class=\"n\">" << c.generation << "</td><td class=\"n\">" << c.id << "</td><td>"
         << esc(c.op) << "</td><td><code>" << esc(compactJson(c.knobs)) << "</code>";
      if (StringRef(c.rewrites).trim() != "[]" && !c.rewrites.empty())
        os << "<br><code>" << esc(compactJson(c.rewrites)) << "</code>";
      os << "</td><td class=\"n\">" << ms(c.medianMs) << "</td><td class=\"n\">"
         << times(finitePositive(c.medianMs) ? baseMs / c.medianMs : NAN) << "</td><td>"
         << esc(clip(c.thought, 600)) << "</td></tr>\n";
    }
    os << "</table>\n";
  }

  os << "<h3>Why candidates failed</h3>\n";
  if (r.reasons.empty()) {
    os << "<p class=\"muted\">No failures.</p>\n";
  } else {
    os << "<table class=\"reasons\"><tr><th>count</th><th>verdict</th><th>reason (numbers as N)"
          "</th><th>example</th></tr>\n";
    for (const ReasonGroup &g : r.reasons)
      os << "<tr><td class=\"n\">" << g.count << "</td><td>" << esc(g.verdict) << "</td><td>"
         << esc(g.reason) << "</td><td>" << esc(g.example) << "</td></tr>\n";
    os << "</table>\n";
  }

  if (r.best >= 0) {
    const CandidateRecord &w = cs[r.best];
    os << "<details><summary>The winner's IR (candidate " << w.id << ")</summary><pre>" << esc(w.ir)
       << "</pre></details>\n";
  }
  os << "<details><summary>The task's source</summary><pre>" << esc(r.task.source)
     << "</pre></details>\n";
}

std::string renderHtml(const RunStore &store, const std::vector<TaskReport> &reports) {
  json::Value summary = summarize(store, reports);
  const json::Object &totals = *summary.getAsObject()->getObject("totals");
  std::string html;
  llvm::raw_string_ostream os(html);
  // The policy is a second line of defence: even if some text escaped unescaped, the page could
  // neither run a script nor load anything.
  os << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "style-src 'unsafe-inline'\">\n<title>evo-opt run report</title>\n<style>"
     << kStyle << "</style></head><body>\n<h1>evo-opt run report</h1>\n";

  os << "<table class=\"summary\"><tr><th>task</th><th>family</th><th>status</th>"
        "<th>baseline ms</th><th>best ms</th><th>speedup</th><th>validity</th>"
        "<th>evaluated</th><th>copy</th><th>peak</th><th>tokens</th><th>cost</th></tr>\n";
  for (auto [k, r] : llvm::enumerate(reports))
    os << "<tr><td><a href=\"#task-" << k << "\">" << esc(r.task.name) << "</a></td><td>"
       << esc(r.task.family) << "</td><td>" << esc(r.task.status) << "</td><td class=\"n\">"
       << ms(r.baselineMs) << "</td><td class=\"n\">" << ms(r.bestMs) << "</td><td class=\"n\">"
       << times(r.speedup) << "</td><td class=\"n\">" << percent(r.validityRate)
       << "</td><td class=\"n\">" << r.counts.evaluated << "</td><td class=\"n\">"
       << percent(r.fractionOfCopy) << "</td><td class=\"n\">" << percent(r.fractionOfPeak)
       << "</td><td class=\"n\">" << r.promptTokens + r.completionTokens << "</td><td class=\"n\">"
       << printf1("$%.2f", r.costUsd) << "</td></tr>\n";
  os << "</table>\n<p>" << reports.size() << " tasks; geometric mean speedup "
     << times(totals.getNumber("geomean_speedup").value_or(NAN)) << "; validity "
     << percent(totals.getNumber("validity_rate").value_or(NAN)) << "; "
     << printf1("$%.2f", totals.getNumber("cost_usd").value_or(0)) << " of LLM calls.</p>\n";

  os << "<h2>Speedup per task</h2>\n";
  speedupChart(os, reports);
  os << "<h2>Fraction of the roofline</h2>\n<p class=\"muted\">The best candidate's achieved "
        "bandwidth over the measured copy bandwidth, and achieved FLOP/s over the peak that "
        "applies.</p>\n";
  rooflineChart(os, reports);

  for (auto [k, r] : llvm::enumerate(reports))
    taskSection(os, r, k);

  os << "<h2>Run</h2>\n<table class=\"meta\">\n";
  for (const auto &[key, value] : *summary.getAsObject()->getObject("meta")) {
    std::string text;
    if (std::optional<StringRef> s = value.getAsString())
      text = s->str();
    else
      llvm::raw_string_ostream(text) << value;
    os << "<tr><th>" << esc(key) << "</th><td><code>" << esc(clip(text, 2000))
       << "</code></td></tr>\n";
  }
  os << "</table>\n</body></html>\n";
  return html;
}

} // namespace

llvm::json::Value evo::summarizeRun(const RunStore &store) {
  return summarize(store, analyzeRun(store));
}

std::string evo::renderHtmlReport(const RunStore &store) {
  return renderHtml(store, analyzeRun(store));
}

llvm::Error evo::writeReports(const RunStore &store, StringRef dir) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return llvm::createStringError(ec, "cannot create '%s': %s", dir.str().c_str(),
                                   ec.message().c_str());
  // One analysis for both files, so they describe the same moment of a running search.
  std::vector<TaskReport> reports = analyzeRun(store);
  llvm::SmallString<256> jsonPath(dir), htmlPath(dir);
  llvm::sys::path::append(jsonPath, "report.json");
  llvm::sys::path::append(htmlPath, "report.html");
  json::Value summary = summarize(store, reports);
  if (llvm::Error e = llvm::writeToOutput(jsonPath, [&](llvm::raw_ostream &os) {
        os << llvm::formatv("{0:2}", summary) << "\n";
        return llvm::Error::success();
      }))
    return e;
  std::string html = renderHtml(store, reports);
  return llvm::writeToOutput(htmlPath, [&](llvm::raw_ostream &os) {
    os << html;
    return llvm::Error::success();
  });
}
