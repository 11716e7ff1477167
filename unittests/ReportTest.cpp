//===- ReportTest.cpp - run summary, HTML report and progress line ------------===//

#include "evo/Evolution/RunStore.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "gtest/gtest.h"

using namespace evo;
namespace json = llvm::json;

namespace {

/// A hand-built run with known numbers:
///   t0: baseline #1 (4.0 ms, re-measured 4.2) -> #2 knob-mutate (2.0) -> #6 crossover of #2 and
///       #1 (1.0, re-measured 1.05, the best); #3/#4 invalid with reasons that differ only in
///       numbers, #5 crashed, #7 a duplicate of #2's PTX, #8 pending, #9 compile error, #10
///       timeout.
///   t1: only the baseline is valid (2.0 ms), so its speedup is 1.
class ReportTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("evo-report", dir));
    llvm::Expected<std::unique_ptr<RunStore>> s = RunStore::open(dir, true);
    ASSERT_TRUE(static_cast<bool>(s)) << llvm::toString(s.takeError());
    store = std::move(*s);
    build();
  }
  void TearDown() override {
    store.reset();
    llvm::sys::fs::remove_directories(dir);
  }

  int64_t add(const std::string &task, const std::string &op, std::vector<int64_t> parents,
              const std::string &ptx, const std::string &verdict, double ms,
              const std::string &reason = "") {
    CandidateRecord c;
    c.task = task;
    c.op = op;
    c.parents = std::move(parents);
    c.ptxHash = ptx;
    c.generation = c.parents.empty() ? 0 : 1;
    c.knobs = "{\"block\":" + std::to_string(ptx.size() * 32) + "}";
    EXPECT_FALSE(static_cast<bool>(store->addCandidate(c)));
    if (verdict != "pending") {
      c.verdict = verdict;
      c.medianMs = ms;
      c.reason = reason;
      EXPECT_FALSE(static_cast<bool>(store->recordResult(c)));
    }
    return c.id;
  }

  void build() {
    ASSERT_FALSE(store->setMeta("device", "NVIDIA H200"));
    ASSERT_FALSE(
        store->setMeta("config", R"({"population":5,"llm":{"model":"m1","api_key":"sk-NESTED"}})"));
    ASSERT_FALSE(store->setMeta("openai_api_key", "sk-TOPLEVEL"));
    ASSERT_FALSE(store->setMeta("auth_token", "tok-TOPLEVEL"));
    ASSERT_FALSE(store->setMeta("client_secret", "shh-TOPLEVEL"));

    TaskRecord t0;
    t0.name = "t0";
    t0.function = "softmax";
    t0.family = "softmax";
    ASSERT_FALSE(store->upsertTask(t0));
    TaskRecord t1;
    t1.name = "t1";
    t1.function = "softmax";
    t1.family = "reduction";
    ASSERT_FALSE(store->upsertTask(t1));

    base = add("t0", "baseline", {}, "p1", "valid", 4.0);
    mid = add("t0", "knob-mutate", {base}, "p2", "valid", 2.0);
    add("t0", "knob-mutate", {base}, "p3", "invalid", NAN,
        "output 0: 512 of 1024 elements differ (max error 0.5)");
    add("t0", "knob-mutate", {mid}, "p4", "invalid", NAN,
        "output 0: 3 of 1024 elements differ (max error 1.25e-3)");
    add("t0", "ir-unroll", {mid}, "p5", "crashed", NAN, "CUDA_ERROR_ILLEGAL_ADDRESS");

    CandidateRecord best;
    best.task = "t0";
    best.op = "knob-crossover";
    best.parents = {mid, base};
    best.generation = 2;
    best.ptxHash = "p6";
    best.knobs = R"({"block":256,"vector_width":4})";
    best.thought = "vectorize the loads";
    best.promptTokens = 1000;
    best.completionTokens = 200;
    best.costUsd = 0.02;
    best.ir = "gpu.module @k { \"</pre><script>alert('ir')</script>\" }";
    ASSERT_FALSE(store->addCandidate(best));
    best.verdict = "valid";
    best.medianMs = 1.0;
    best.roofline = R"({"fraction_of_copy":0.4,"fraction_of_peak":0.05,"floor_ms":0.3})";
    ASSERT_FALSE(store->recordResult(best));
    bestId = best.id;
    ASSERT_FALSE(store->recordFinal(base, 4.2));
    ASSERT_FALSE(store->recordFinal(bestId, 1.05));

    add("t0", "knob-mutate", {mid}, "p2", "not-run", NAN, "duplicate"); // #7
    add("t0", "knob-mutate", {mid}, "p8", "pending", NAN);              // #8
    CandidateRecord broken;                                             // #9
    broken.task = "t0";
    broken.op = "llm-mutate";
    broken.promptTokens = 500;
    broken.completionTokens = 100;
    broken.costUsd = 0.01;
    ASSERT_FALSE(store->addCandidate(broken));
    broken.verdict = "compile-error";
    broken.compileDiagnostics = "error: 'scf.for' op expects region\nnote: more";
    ASSERT_FALSE(store->recordResult(broken));
    add("t0", "knob-mutate", {bestId}, "p10", "timeout", NAN, "no result after 60 s");

    t0.baselineId = base;
    t0.bestId = bestId;
    t0.status = "done";
    t0.generationsDone = 2;
    ASSERT_FALSE(store->upsertTask(t0));

    // t1 has no recorded best or baseline id: both are derived from the candidates.
    add("t1", "baseline", {}, "q1", "valid", 2.0);
    add("t1", "knob-mutate", {}, "q2", "invalid", NAN, "<script>alert(1)</script> & \"x\"");
  }

  const json::Object &taskJson(const json::Value &summary, size_t i) {
    return *(*summary.getAsObject()->getArray("tasks"))[i].getAsObject();
  }

  llvm::SmallString<128> dir;
  std::unique_ptr<RunStore> store;
  int64_t base = -1, mid = -1, bestId = -1;
};

} // namespace

TEST_F(ReportTest, SummaryNumbers) {
  json::Value summary = summarizeRun(*store);
  const json::Object &t0 = taskJson(summary, 0);
  EXPECT_EQ(t0.getString("name"), "t0");
  EXPECT_EQ(t0.getString("family"), "softmax");
  EXPECT_EQ(t0.getString("status"), "done");
  EXPECT_EQ(t0.getInteger("best_id"), bestId);
  // Both re-measured, so the speedup uses the finalist medians: 4.2 / 1.05.
  EXPECT_DOUBLE_EQ(*t0.getNumber("baseline_ms"), 4.2);
  EXPECT_DOUBLE_EQ(*t0.getNumber("best_ms"), 1.05);
  EXPECT_DOUBLE_EQ(*t0.getNumber("speedup"), 4.0);
  EXPECT_EQ(t0.getBoolean("remeasured"), true);
  EXPECT_DOUBLE_EQ(*t0.getNumber("fraction_of_copy"), 0.4);
  EXPECT_DOUBLE_EQ(*t0.getNumber("fraction_of_peak"), 0.05);

  const json::Object &n = *t0.getObject("counts");
  EXPECT_EQ(n.getInteger("total"), 9); // 10 candidates, one duplicate
  EXPECT_EQ(n.getInteger("duplicates"), 1);
  EXPECT_EQ(n.getInteger("evaluated"), 8); // all but the duplicate and the pending one
  EXPECT_EQ(n.getInteger("valid"), 3);
  EXPECT_EQ(n.getInteger("invalid"), 2);
  EXPECT_EQ(n.getInteger("crashed"), 1);
  EXPECT_EQ(n.getInteger("timeout"), 1);
  EXPECT_EQ(n.getInteger("compile_error"), 1);
  EXPECT_EQ(n.getInteger("pending"), 1);
  // Generated candidates only (the baseline is not one): 2 valid of 7.
  EXPECT_DOUBLE_EQ(*t0.getNumber("validity_rate"), 2.0 / 7.0);

  const json::Array &reasons = *t0.getArray("invalid_reasons");
  ASSERT_EQ(reasons.size(), 4u);
  const json::Object &top = *reasons[0].getAsObject();
  EXPECT_EQ(top.getString("verdict"), "invalid");
  EXPECT_EQ(top.getString("reason"), "output N: N of N elements differ (max error N)");
  EXPECT_EQ(top.getInteger("count"), 2);
  EXPECT_EQ(top.getString("example"), "output 0: 512 of 1024 elements differ (max error 0.5)");
  EXPECT_EQ(reasons[1].getAsObject()->getString("reason"), "CUDA_ERROR_ILLEGAL_ADDRESS");
  // Without a reason, the compiler's first line explains a compile error.
  EXPECT_EQ(reasons[2].getAsObject()->getString("reason"), "error: 'scf.for' op expects region");
  EXPECT_EQ(reasons[3].getAsObject()->getString("reason"), "no result after N s");

  // The winner's chain through first parents, from the baseline to the winner.
  const json::Array &lineage = *t0.getArray("lineage");
  ASSERT_EQ(lineage.size(), 3u);
  EXPECT_EQ(lineage[0].getAsObject()->getInteger("id"), base);
  EXPECT_EQ(lineage[0].getAsObject()->getString("op"), "baseline");
  EXPECT_EQ(lineage[1].getAsObject()->getInteger("id"), mid);
  EXPECT_EQ(lineage[2].getAsObject()->getInteger("id"), bestId);
  EXPECT_EQ(lineage[2].getAsObject()->getString("op"), "knob-crossover");
  EXPECT_DOUBLE_EQ(*lineage[1].getAsObject()->getNumber("speedup"), 2.0);
  EXPECT_EQ(lineage[2].getAsObject()->getObject("knobs")->getInteger("vector_width"), 4);
  EXPECT_DOUBLE_EQ(*lineage[2].getAsObject()->getNumber("median_ms"), 1.0);

  EXPECT_EQ(t0.getInteger("prompt_tokens"), 1500);
  EXPECT_EQ(t0.getInteger("completion_tokens"), 300);
  EXPECT_NEAR(*t0.getNumber("cost_usd"), 0.03, 1e-12);

  // t1: no recorded ids; the baseline is the only valid candidate and so the best.
  const json::Object &t1 = taskJson(summary, 1);
  EXPECT_DOUBLE_EQ(*t1.getNumber("speedup"), 1.0);
  EXPECT_EQ(t1.getBoolean("remeasured"), false);
  EXPECT_EQ(t1.get("fraction_of_copy")->kind(), json::Value::Null);
  EXPECT_EQ(t1.getArray("lineage")->size(), 1u);
  EXPECT_DOUBLE_EQ(*t1.getNumber("validity_rate"), 0.0);

  const json::Object &totals = *summary.getAsObject()->getObject("totals");
  EXPECT_EQ(totals.getInteger("tasks"), 2);
  EXPECT_DOUBLE_EQ(*totals.getNumber("geomean_speedup"), 2.0); // sqrt(4 * 1)
  EXPECT_DOUBLE_EQ(*totals.getNumber("validity_rate"), 2.0 / 8.0);
  EXPECT_EQ(totals.getObject("counts")->getInteger("evaluated"), 10);
  EXPECT_EQ(totals.getInteger("prompt_tokens"), 1500);
}

TEST_F(ReportTest, SummaryKeepsSecretsOut) {
  json::Value summary = summarizeRun(*store);
  std::string text;
  llvm::raw_string_ostream(text) << summary;
  EXPECT_EQ(text.find("sk-"), std::string::npos) << text;
  EXPECT_EQ(text.find("TOPLEVEL"), std::string::npos) << text;
  const json::Object &meta = *summary.getAsObject()->getObject("meta");
  EXPECT_EQ(meta.getString("device"), "NVIDIA H200");
  EXPECT_EQ(meta.getString("schema_version"), std::to_string(RunStore::schemaVersion));
  EXPECT_FALSE(meta.get("openai_api_key"));
  EXPECT_FALSE(meta.get("auth_token"));
  EXPECT_FALSE(meta.get("client_secret"));
  const json::Object *config = meta.getObject("config");
  ASSERT_TRUE(config);
  EXPECT_EQ(config->getInteger("population"), 5);
  EXPECT_EQ(config->getObject("llm")->getString("model"), "m1");
  EXPECT_FALSE(config->getObject("llm")->get("api_key"));
}

TEST_F(ReportTest, NormalizesNumbersInReasons) {
  EXPECT_EQ(normalizeReason("512 of 1024 elements"), normalizeReason("3 of 1024 elements"));
  EXPECT_EQ(normalizeReason("max error 1.5e-3 at 17"), "max error N at N");
  EXPECT_EQ(normalizeReason("bits 0x7FBADBAD left"), "bits N left");
  // Numbers inside names are part of the name.
  EXPECT_EQ(normalizeReason("sm_90 f32 CUDA_ERROR_2"), "sm_90 f32 CUDA_ERROR_2");
}

TEST_F(ReportTest, HtmlHasChartsAndEscapesEverything) {
  std::string html = renderHtmlReport(*store);
  EXPECT_TRUE(llvm::StringRef(html).starts_with("<!DOCTYPE html>"));
  // One scatter per task, the speedup bars and the roofline bars, all inline SVG.
  EXPECT_EQ(llvm::StringRef(html).count("<svg class=\"scatter\""), 2u);
  EXPECT_EQ(llvm::StringRef(html).count("<svg class=\"speedup\""), 1u);
  EXPECT_EQ(llvm::StringRef(html).count("<svg class=\"roofline\""), 1u);
  EXPECT_NE(html.find("class=\"best-so-far\""), std::string::npos);
  EXPECT_NE(html.find("class=\"baseline\""), std::string::npos);
  EXPECT_NE(html.find("4.00x"), std::string::npos);
  EXPECT_NE(html.find("40.0%"), std::string::npos);
  EXPECT_NE(html.find("<table class=\"lineage\">"), std::string::npos);
  EXPECT_NE(html.find("<table class=\"reasons\">"), std::string::npos);
  EXPECT_NE(html.find("vectorize the loads"), std::string::npos);

  // Nothing from the store reaches the page unescaped, and nothing is loaded or run.
  std::string lower = llvm::StringRef(html).lower();
  EXPECT_EQ(lower.find("<script"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;x&quot;"),
            std::string::npos);
  EXPECT_NE(html.find("&lt;/pre&gt;&lt;script&gt;alert(&#39;ir&#39;)"), std::string::npos);
  EXPECT_EQ(lower.find("http:"), std::string::npos);
  EXPECT_EQ(lower.find("https:"), std::string::npos);
  EXPECT_EQ(lower.find(" src="), std::string::npos);
  EXPECT_EQ(lower.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("sk-NESTED"), std::string::npos);
  EXPECT_EQ(html.find("TOPLEVEL"), std::string::npos);
}

TEST_F(ReportTest, WritesBothReports) {
  llvm::SmallString<128> out(dir);
  llvm::sys::path::append(out, "reports");
  ASSERT_FALSE(static_cast<bool>(writeReports(*store, out)));

  llvm::SmallString<128> jsonPath(out), htmlPath(out);
  llvm::sys::path::append(jsonPath, "report.json");
  llvm::sys::path::append(htmlPath, "report.html");
  auto jsonFile = llvm::MemoryBuffer::getFile(jsonPath);
  ASSERT_TRUE(static_cast<bool>(jsonFile));
  llvm::Expected<json::Value> parsed = json::parse((*jsonFile)->getBuffer());
  ASSERT_TRUE(static_cast<bool>(parsed)) << llvm::toString(parsed.takeError());
  EXPECT_EQ(parsed->getAsObject()->getString("format"), "evo-run-report/1");
  EXPECT_EQ(parsed->getAsObject()->getArray("tasks")->size(), 2u);

  auto htmlFile = llvm::MemoryBuffer::getFile(htmlPath);
  ASSERT_TRUE(static_cast<bool>(htmlFile));
  EXPECT_EQ((*htmlFile)->getBuffer(), renderHtmlReport(*store));
}

TEST(ReportProgressLineTest, FormatsTheLine) {
  EXPECT_EQ(ProgressLine::format("softmax_t0", 3, 10, 45, 35, 3.4217, 80),
            "softmax_t0 | gen 3/10 | 45 evaluated | 78% valid | best 3.42x | ETA 1m20s");
  // Parts without data are left out.
  EXPECT_EQ(ProgressLine::format("t", 0, 10, 0, 0, NAN, NAN), "t | gen 0/10 | 0 evaluated");
}

// Not on a terminal (a batch job's log): one plain line when a task's generation changes, and
// the task's newest state when it ends; no redraw control sequences.
TEST(ReportProgressLineTest, LinesModePrintsOneLinePerGeneration) {
  std::string out;
  llvm::raw_string_ostream os(out);
  {
    ProgressLine p(ProgressLine::Mode::Lines, os);
    p.update("a", 1, 3, 0, 0, NAN, NAN);
    p.update("a", 1, 3, 2, 1, 1.5, NAN); // same generation: not printed now
    p.update("a", 2, 3, 4, 2, 2.0, NAN);
    p.update("a", 2, 3, 6, 3, 2.5, NAN);
    p.finish("done");
    p.update("b", 1, 3, 0, 0, NAN, NAN);
    p.finish("paused");
    p.finish("paused"); // nothing new: nothing printed
  }
  EXPECT_EQ(out, "evo-evolve: a | gen 1/3 | 0 evaluated\n"
                 "evo-evolve: a | gen 2/3 | 4 evaluated | 50% valid | best 2.00x\n"
                 "evo-evolve: a | gen 2/3 | 6 evaluated | 50% valid | best 2.50x | done\n"
                 "evo-evolve: b | gen 1/3 | 0 evaluated\n"
                 "evo-evolve: b | gen 1/3 | 0 evaluated | paused\n");
  EXPECT_EQ(out.find('\r'), std::string::npos);
  std::string off;
  llvm::raw_string_ostream offOs(off);
  ProgressLine q(ProgressLine::Mode::Off, offOs);
  q.update("a", 1, 3, 0, 0, NAN, NAN);
  q.finish("done");
  EXPECT_EQ(off, "");
}

TEST(ReportProgressLineTest, FormatsEta) {
  EXPECT_EQ(ProgressLine::formatEta(80), "1m20s");
  EXPECT_EQ(ProgressLine::formatEta(45.4), "45s");
  EXPECT_EQ(ProgressLine::formatEta(0), "0s");
  EXPECT_EQ(ProgressLine::formatEta(60), "1m00s");
  EXPECT_EQ(ProgressLine::formatEta(3600 + 5 * 60 + 10), "1h05m");
  EXPECT_EQ(ProgressLine::formatEta(-1), "");
  EXPECT_EQ(ProgressLine::formatEta(NAN), "");
  EXPECT_EQ(ProgressLine::formatEta(INFINITY), "");
}

TEST(ReportProgressLineTest, QuietIsSilentAndNotATerminalStillReports) {
  ProgressLine quiet(/*quiet=*/true);
  EXPECT_FALSE(quiet.enabled());
  quiet.update("t", 1, 2, 3, 4, 5, 6); // must not draw
  quiet.finish();
  // Under ctest stderr is a pipe: plain lines (LinesModePrintsOneLinePerGeneration), not off.
  ProgressLine line(/*quiet=*/false);
  EXPECT_TRUE(line.enabled());
}

// Compiles finish out of order: the evaluated one of two identical kernels counts, whichever was
// made first.
TEST(ReportDuplicates, TheEvaluatedCopyStandsForItsPTX) {
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("evo-report-dup", dir));
  {
    llvm::Expected<std::unique_ptr<RunStore>> s = RunStore::open(dir, true);
    ASSERT_TRUE(static_cast<bool>(s)) << llvm::toString(s.takeError());
    RunStore &store = **s;
    TaskRecord t;
    t.name = "t";
    t.family = "rows";
    ASSERT_FALSE(store.upsertTask(t));
    auto add = [&](const std::string &op, const std::string &ptx, const std::string &verdict,
                   double ms, const std::string &reason) {
      CandidateRecord c;
      c.task = "t";
      c.op = op;
      c.ptxHash = ptx;
      EXPECT_FALSE(static_cast<bool>(store.addCandidate(c)));
      c.verdict = verdict;
      c.medianMs = ms;
      c.reason = reason;
      EXPECT_FALSE(static_cast<bool>(store.recordResult(c)));
      return c.id;
    };
    add("baseline", "p1", "valid", 4.0, "");
    add("llm-full_init", "p2", "not-run", NAN, "identical PTX to candidate 3"); // #2
    add("llm-full_init", "p2", "valid", 1.0, "");                               // #3
    add("llm-full_mutation", "p2", "not-run", NAN, "identical PTX to candidate 3");
    json::Value summary = summarizeRun(store);
    const json::Object &n =
        *(*summary.getAsObject()->getArray("tasks"))[0].getAsObject()->getObject("counts");
    EXPECT_EQ(n.getInteger("total"), 2);
    EXPECT_EQ(n.getInteger("duplicates"), 2);
    EXPECT_EQ(n.getInteger("evaluated"), 2);
    EXPECT_EQ(n.getInteger("valid"), 2);
    EXPECT_EQ(n.getInteger("not_run"), 0);
  }
  llvm::sys::fs::remove_directories(dir);
}
