//===- LLMTest.cpp - backends, retries, budgets, cache, prompts, replies -----===//
//
// The HTTP backends talk to a scripted server on 127.0.0.1 (FakeLLMServer.h) that injects the
// faults real endpoints produce; backoff sleeps are recorded instead of slept.

#include "FakeLLMServer.h"
#include "evo/LLM/Client.h"
#include "evo/LLM/Prompt.h"
#include "evo/LLM/Reply.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "gtest/gtest.h"
#include <cstdlib>

using namespace evo::llm;
using evo::test::FakeLLMServer;
namespace json = llvm::json;

namespace {

json::Array script(std::initializer_list<json::Value> steps) { return json::Array(steps); }

json::Object reply(const std::string &content, int64_t p = 100, int64_t c = 20) {
  return json::Object{{"content", content}, {"usage", json::Array{p, c}}};
}

std::string tempDir() {
  llvm::SmallString<128> dir;
  EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("evo-llm-test", dir));
  return dir.str().str();
}

struct Harness {
  std::unique_ptr<Client> client;
  std::vector<double> sleeps;
};

Harness makeClient(const std::string &spec, const std::string &base, ClientOptions o = {},
                   const std::string &keyEnv = "EVO_TEST_NO_KEY") {
  BackendOptions b;
  b.spec = spec;
  b.model = "gpt-4.1";
  b.baseUrl = base;
  b.keyEnv = keyEnv;
  llvm::Expected<std::unique_ptr<Backend>> backend = createBackend(b);
  EXPECT_TRUE(static_cast<bool>(backend)) << llvm::toString(backend.takeError());
  Harness h;
  h.client = std::make_unique<Client>(std::move(*backend), o, PriceTable::builtin());
  return h;
}

Request req(const std::string &prompt, unsigned sample = 0) {
  Request r;
  r.system = "system text";
  r.prompt = prompt;
  r.sample = sample;
  return r;
}

} // namespace

TEST(LLMClientTest, RetriesTransientFaultsAndHonoursRetryAfter) {
  FakeLLMServer server(script({json::Object{{"status", 429}, {"retry_after", "7"}},
                               json::Object{{"status", 500}},
                               json::Object{{"raw", "{\"choices\": [ not json"}},
                               json::Object{{"truncate", true}, {"content", "partial"}},
                               json::Object{{"content", ""}, {"usage", json::Array{5, 0}}},
                               reply("finally", 120, 30)}));
  ClientOptions o;
  o.maxRetries = 6;
  o.timeoutSeconds = 5;
  Harness h = makeClient("openai", server.baseUrl() + "/v1", o);
  std::vector<double> sleeps;
  h.client->sleep = [&](double s) { sleeps.push_back(s); };
  Result r = h.client->complete(req("hello"));
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.reply.text, "finally");
  EXPECT_EQ(r.reply.attempts, 6u);
  EXPECT_EQ(server.numRequests(), 6u);
  ASSERT_EQ(sleeps.size(), 5u);
  EXPECT_DOUBLE_EQ(sleeps[0], 7.0); // Retry-After wins over the backoff
  // Exponential backoff with jitter in [base/2, base] for the others.
  EXPECT_GE(sleeps[1], 1.0);
  EXPECT_LE(sleeps[1], 2.0);
  EXPECT_GE(sleeps[2], 2.0);
  EXPECT_LE(sleeps[2], 4.0);
  // Usage as the server reported it (only the successful call counts), priced from the table.
  Totals t = h.client->totals();
  EXPECT_EQ(t.calls, 1);
  EXPECT_EQ(t.retries, 5);
  EXPECT_EQ(t.promptTokens, 120);
  EXPECT_EQ(t.completionTokens, 30);
  EXPECT_NEAR(t.cost, (120 * 2.0 + 30 * 8.0) / 1e6, 1e-12);
  EXPECT_NEAR(r.reply.usage.cost, t.cost, 1e-12);
}

TEST(LLMClientTest, AHangPastTheTimeoutIsRetriedThenReported) {
  FakeLLMServer server(script({json::Object{{"delay_ms", 2500}, {"content", "late"}}}));
  ClientOptions o;
  o.maxRetries = 1;
  o.timeoutSeconds = 0.5;
  Harness h = makeClient("openai", server.baseUrl() + "/v1", o);
  h.client->sleep = [](double) {};
  Result r = h.client->complete(req("hello"));
  EXPECT_EQ(r.status, Result::Status::Failed);
  EXPECT_NE(r.error.find("no reply within"), std::string::npos) << r.error;
  EXPECT_EQ(h.client->totals().failures, 1);
}

TEST(LLMClientTest, ClientErrorsAreNotRetried) {
  FakeLLMServer server(script({json::Object{{"status", 401}}}));
  Harness h = makeClient("openai", server.baseUrl() + "/v1");
  h.client->sleep = [](double) { FAIL() << "no backoff for a 401"; };
  Result r = h.client->complete(req("hello"));
  EXPECT_EQ(r.status, Result::Status::Failed);
  EXPECT_NE(r.error.find("HTTP 401: scripted status 401"), std::string::npos) << r.error;
  EXPECT_EQ(server.numRequests(), 1u);
}

TEST(LLMClientTest, ARefusalInProseIsAReplyWithoutCode) {
  FakeLLMServer server(script({reply("I'm sorry, but I can't help with rewriting this kernel.")}));
  Harness h = makeClient("openai", server.baseUrl() + "/v1");
  Result r = h.client->complete(req("hello"));
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(parseReply(r.reply.text).hasCode());
}

TEST(LLMClientTest, BudgetsStopCleanlyWithoutCallingTheServer) {
  FakeLLMServer server(script({reply("one", 600, 500)}));
  ClientOptions o;
  o.maxCalls = 5;
  o.maxTokens = 2000;
  Harness h = makeClient("openai", server.baseUrl() + "/v1", o);
  EXPECT_TRUE(h.client->complete(req("a")).ok());
  EXPECT_TRUE(h.client->complete(req("b")).ok());
  EXPECT_TRUE(h.client->budgetExhausted());
  Result r = h.client->complete(req("c"));
  EXPECT_EQ(r.status, Result::Status::BudgetExhausted);
  EXPECT_NE(r.error.find("token budget"), std::string::npos) << r.error;
  EXPECT_EQ(server.numRequests(), 2u);

  ClientOptions money;
  money.maxCost = 0.000001;
  Harness m = makeClient("openai", server.baseUrl() + "/v1", money);
  EXPECT_TRUE(m.client->complete(req("d")).ok());
  EXPECT_EQ(m.client->complete(req("e")).status, Result::Status::BudgetExhausted);
}

TEST(LLMClientTest, TheCacheReplaysWithZeroRequestsAndHoldsNoSecret) {
  std::string dir = tempDir();
  setenv("EVO_TEST_SECRET_KEY", "sk-test-should-never-be-stored", 1);
  FakeLLMServer server(script({reply("first", 10, 2), reply("second", 11, 3)}));
  ClientOptions o;
  o.cacheDir = dir;
  Harness h = makeClient("openai", server.baseUrl() + "/v1", o, "EVO_TEST_SECRET_KEY");
  Result a = h.client->complete(req("p", 0));
  Result b = h.client->complete(req("p", 1)); // another sample of the same prompt
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a.reply.text, "first");
  EXPECT_EQ(b.reply.text, "second");
  EXPECT_NE(a.key, b.key);
  ASSERT_EQ(server.numRequests(), 2u);
  EXPECT_EQ(server.requests()[0].authorization, "Bearer sk-test-should-never-be-stored");

  ClientOptions replay = o;
  replay.replay = true;
  Harness r = makeClient("openai", server.baseUrl() + "/v1", replay, "EVO_TEST_SECRET_KEY");
  Result a2 = r.client->complete(req("p", 0));
  Result b2 = r.client->complete(req("p", 1));
  EXPECT_EQ(a2.reply.text, "first");
  EXPECT_EQ(b2.reply.text, "second");
  EXPECT_TRUE(a2.reply.cached);
  EXPECT_EQ(a2.reply.usage.promptTokens, 10);
  EXPECT_EQ(server.numRequests(), 2u); // nothing new
  EXPECT_EQ(r.client->complete(req("never asked")).status, Result::Status::ReplayMiss);
  EXPECT_EQ(r.client->totals().cacheHits, 2);

  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec; it.increment(ec)) {
    auto buf = llvm::MemoryBuffer::getFile(it->path());
    ASSERT_TRUE(static_cast<bool>(buf));
    EXPECT_EQ((*buf)->getBuffer().find("sk-test"), llvm::StringRef::npos) << it->path();
  }
  unsetenv("EVO_TEST_SECRET_KEY");
}

TEST(LLMClientTest, SeveralRequestsInFlight) {
  FakeLLMServer server(script({json::Object{{"delay_ms", 300}, {"content", "x"}}}));
  ClientOptions o;
  o.parallel = 4;
  Harness h = makeClient("openai", server.baseUrl() + "/v1", o);
  auto start = std::chrono::steady_clock::now();
  std::vector<std::shared_future<Result>> futures;
  for (unsigned i = 0; i < 4; ++i)
    futures.push_back(h.client->submit(req("q" + std::to_string(i))));
  for (auto &f : futures)
    EXPECT_TRUE(f.get().ok());
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(s, 1.0); // four 300 ms requests overlapped
}

TEST(LLMClientTest, AnthropicMessagesApi) {
  setenv("EVO_TEST_ANTHROPIC", "ak-test", 1);
  FakeLLMServer server(script({reply("from claude", 50, 7)}));
  BackendOptions b;
  b.spec = "anthropic";
  b.model = "claude-sonnet-4-20250514";
  b.baseUrl = server.baseUrl();
  b.keyEnv = "EVO_TEST_ANTHROPIC";
  llvm::Expected<std::unique_ptr<Backend>> backend = createBackend(b);
  ASSERT_TRUE(static_cast<bool>(backend));
  Client c(std::move(*backend), ClientOptions(), PriceTable::builtin());
  Result r = c.complete(req("hi"));
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.reply.text, "from claude");
  EXPECT_EQ(server.requests()[0].path, "/v1/messages");
  EXPECT_EQ(server.requests()[0].apiKey, "ak-test");
  llvm::Expected<json::Value> sent = json::parse(server.requests()[0].body);
  ASSERT_TRUE(static_cast<bool>(sent));
  EXPECT_EQ(sent->getAsObject()->getString("system"), llvm::StringRef("system text"));
  // The server said "claude-test", not in the table: priced as the configured model.
  EXPECT_EQ(c.totals().promptTokens, 50);
  EXPECT_NEAR(c.totals().cost, (50 * 3.0 + 7 * 15.0) / 1e6, 1e-12);
  unsetenv("EVO_TEST_ANTHROPIC");
}

TEST(LLMBackendTest, CommandBackendRunsWithoutAShell) {
  BackendOptions b;
  b.spec = "cmd:cat";
  llvm::Expected<std::unique_ptr<Backend>> cat = createBackend(b);
  ASSERT_TRUE(static_cast<bool>(cat)) << llvm::toString(cat.takeError());
  Request r = req("echo $HOME; `rm -rf /` | tee x");
  Attempt a = (*cat)->attempt(r, 10);
  ASSERT_TRUE(a.ok) << a.error;
  EXPECT_NE(a.reply.text.find("echo $HOME; `rm -rf /` | tee x"), std::string::npos);

  b.spec = "cmd:sleep 5";
  llvm::Expected<std::unique_ptr<Backend>> slow = createBackend(b);
  ASSERT_TRUE(static_cast<bool>(slow));
  Attempt t = (*slow)->attempt(r, 1);
  EXPECT_FALSE(t.ok);
  EXPECT_NE(t.error.find("no reply within 1 s"), std::string::npos) << t.error;

  b.spec = "cmd:false";
  Attempt f = (*createBackend(b))->attempt(r, 5);
  EXPECT_FALSE(f.ok);
  EXPECT_NE(f.error.find("exited with status 1"), std::string::npos) << f.error;

  b.spec = "cmd:no-such-program-evo";
  llvm::Expected<std::unique_ptr<Backend>> missing = createBackend(b);
  ASSERT_FALSE(static_cast<bool>(missing));
  EXPECT_NE(llvm::toString(missing.takeError()).find("cannot find 'no-such-program-evo'"),
            std::string::npos);
}

TEST(LLMBackendTest, CommandSplittingAndRetryAfter) {
  llvm::Expected<std::vector<std::string>> v = splitCommand("llm -m 'gpt 4' \"a b\"  c");
  ASSERT_TRUE(static_cast<bool>(v));
  EXPECT_EQ(*v, (std::vector<std::string>{"llm", "-m", "gpt 4", "a b", "c"}));
  EXPECT_FALSE(static_cast<bool>(splitCommand("llm 'open")));
  llvm::consumeError(splitCommand("llm 'open").takeError());
  EXPECT_DOUBLE_EQ(parseRetryAfter("12"), 12.0);
  EXPECT_DOUBLE_EQ(parseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT"), 0.0); // in the past
  EXPECT_EQ(parseRetryAfter("soon"), -1);
  llvm::Expected<std::unique_ptr<Backend>> bad = createBackend({"gemini", "m", "", ""});
  ASSERT_FALSE(static_cast<bool>(bad));
  EXPECT_NE(llvm::toString(bad.takeError()).find("unknown llm backend 'gemini'"),
            std::string::npos);
}

TEST(LLMPricesTest, TablesParseAndMatchPrefixes) {
  llvm::Expected<PriceTable> t = PriceTable::parse(
      R"({"currency": "EUR", "models": {"m": {"input_per_mtok": 1, "output_per_mtok": 2}}})");
  ASSERT_TRUE(static_cast<bool>(t));
  EXPECT_EQ(t->currency(), "EUR");
  EXPECT_DOUBLE_EQ(t->cost("m-2025-01-01", 1000000, 1000000), 3.0);
  EXPECT_DOUBLE_EQ(t->cost("other", 1000000, 0), 0.0);
  llvm::Expected<PriceTable> bad = PriceTable::parse(R"({"models": {"m": {"input_per_mtok": -1}}})");
  ASSERT_FALSE(static_cast<bool>(bad));
  llvm::consumeError(bad.takeError());
  EXPECT_TRUE(PriceTable::builtin().lookup("gpt-4.1").has_value());
}

TEST(LLMReplyTest, ParsesTheProtocolAndItsFallbacks) {
  ParsedReply p = parseReply("name: vec4_rows\n```mlir\ngpu.module @m {\n}\n```\nthought: wider "
                             "loads\nand fewer passes\n");
  EXPECT_EQ(p.name, "vec4_rows");
  EXPECT_EQ(p.how, "fenced-mlir");
  EXPECT_EQ(p.code, "gpu.module @m {\n}\n");
  EXPECT_EQ(p.thought, "wider loads and fewer passes");

  ParsedReply q = parseReply("Here you go:\n```\ngpu.func @k() kernel {\n  gpu.return\n}\n```");
  EXPECT_EQ(q.how, "fenced-gpu");
  ParsedReply r = parseReply("**Thought:** unrolled\n gpu.module @m { }\n");
  EXPECT_EQ(r.how, "raw");
  EXPECT_EQ(r.code, "gpu.module @m { }\n");
  EXPECT_EQ(r.thought, "unrolled gpu.module @m { }");
  ParsedReply t = parseReply("```mlir\ngpu.module @m {\n  gpu.func"); // truncated reply
  EXPECT_EQ(t.how, "fenced-mlir");
  EXPECT_NE(t.code.find("gpu.func"), std::string::npos);
  EXPECT_FALSE(parseReply("I cannot help with that.").hasCode());
}

TEST(LLMPromptTest, TemplatesRenderSectionsIncludesAndOverrides) {
  llvm::Expected<Templates> t = Templates::load();
  ASSERT_TRUE(static_cast<bool>(t)) << llvm::toString(t.takeError());
  PromptContext c;
  c.taskName = "relu_t0";
  c.currentKernel = "gpu.module @k {}";
  c.launch = "relu_k0: grid [4, 1, 1], block [256, 1, 1]";
  llvm::Expected<RenderedPrompt> free = renderPrompt(*t, "free", c);
  ASSERT_TRUE(static_cast<bool>(free)) << llvm::toString(free.takeError());
  EXPECT_NE(free->user.find("## Task"), std::string::npos);
  EXPECT_EQ(free->user.find("## Insights"), std::string::npos);
  EXPECT_EQ(free->user.find("ms; the naive baseline"), std::string::npos); // no times given
  EXPECT_NE(free->user.find("relu_k0: grid [4, 1, 1]"), std::string::npos);

  std::string dir = tempDir();
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(dir + "/free.md", ec);
    os << "custom {{task_name}} {{#current_ms}}timed{{/current_ms}}{{> reply_format}}";
  }
  llvm::Expected<Templates> mine = Templates::load(dir);
  ASSERT_TRUE(static_cast<bool>(mine));
  llvm::Expected<RenderedPrompt> p = renderPrompt(*mine, "free", c);
  ASSERT_TRUE(static_cast<bool>(p));
  EXPECT_TRUE(llvm::StringRef(p->user).starts_with("custom relu_t0 ## Reply format"));
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(dir + "/free.md", ec);
    os << "{{task_nmae}}";
  }
  llvm::Expected<Templates> typo = Templates::load(dir);
  ASSERT_TRUE(static_cast<bool>(typo));
  llvm::Expected<RenderedPrompt> bad = renderPrompt(*typo, "free", c);
  ASSERT_FALSE(static_cast<bool>(bad));
  EXPECT_NE(llvm::toString(bad.takeError()).find("unknown variable 'task_nmae'"),
            std::string::npos);
}
