//===- LLMTest.cpp - backends, retries, budgets, cache, prompts, replies -----===//
//
// The HTTP backends talk to a scripted server on 127.0.0.1 (FakeLLMServer.h) that injects the
// faults real endpoints produce; backoff sleeps are recorded instead of slept.

#include "FakeLLMServer.h"
#include "evo/LLM/Client.h"
#include "evo/LLM/Mailbox.h"
#include "evo/LLM/Prompt.h"
#include "evo/LLM/Reply.h"
#include "evo/LLM/Untrusted.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "ScratchDir.h"
#include "gtest/gtest.h"
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sys/stat.h>
#include <unistd.h>

using namespace evo::llm;
using evo::test::FakeLLMServer;
namespace json = llvm::json;

namespace {

json::Array script(std::initializer_list<json::Value> steps) { return json::Array(steps); }

json::Object reply(const std::string &content, int64_t p = 100, int64_t c = 20) {
  return json::Object{{"content", content}, {"usage", json::Array{p, c}}};
}

std::string tempDir() { return evo::test::scratchDir("evo-llm-test"); }

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

//===----------------------------------------------------------------------===//
// Hostile files, servers and text (Untrusted.h, docs/reliability.md)
//===----------------------------------------------------------------------===//

namespace {

void writeFile(const std::string &path, llvm::StringRef text) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  ASSERT_FALSE(ec) << path;
  os << text;
}

std::string errorOf(llvm::Error e) { return llvm::toString(std::move(e)); }

template <typename T> std::string errorOf(llvm::Expected<T> &v) {
  EXPECT_FALSE(static_cast<bool>(v));
  return v ? std::string() : llvm::toString(v.takeError());
}

bool contains(llvm::StringRef text, llvm::StringRef part) { return text.contains(part); }

} // namespace

TEST(LLMUntrustedTest, ReadsOnlyRegularFilesUnderTheCap) {
  std::string dir = tempDir();
  std::string outside = tempDir() + "/secret.txt";
  writeFile(outside, "SECRET-OUTSIDE");
  writeFile(dir + "/ok.md", "hello");
  llvm::Expected<std::string> ok = readRegularFileCapped(dir + "/ok.md", 5);
  ASSERT_TRUE(static_cast<bool>(ok)) << llvm::toString(ok.takeError());
  EXPECT_EQ(*ok, "hello");

  llvm::Expected<std::string> big = readRegularFileCapped(dir + "/ok.md", 4);
  EXPECT_TRUE(contains(errorOf(big), "is 5 bytes, over the limit of 4: rejected"));

  ASSERT_FALSE(llvm::sys::fs::create_link(outside, dir + "/link.md"));
  llvm::Expected<std::string> link = readRegularFileCapped(dir + "/link.md", 1 << 20);
  EXPECT_TRUE(contains(errorOf(link), "is a symbolic link: refused"));
  // A user-named file may be a link (the price table), but still must be regular.
  llvm::Expected<std::string> followed =
      readRegularFileCapped(dir + "/link.md", 1 << 20, /*followSymlink=*/true);
  ASSERT_TRUE(static_cast<bool>(followed));

  ASSERT_FALSE(llvm::sys::fs::create_link("/dev/zero", dir + "/zero.md"));
  llvm::Expected<std::string> zero = readRegularFileCapped(dir + "/zero.md", 1 << 20);
  EXPECT_TRUE(contains(errorOf(zero), "is a symbolic link: refused"));
  llvm::Expected<std::string> zeroFollowed =
      readRegularFileCapped(dir + "/zero.md", 1 << 20, /*followSymlink=*/true);
  EXPECT_TRUE(contains(errorOf(zeroFollowed), "is a character device, not a regular file"));

  ASSERT_EQ(mkfifo((dir + "/fifo.md").c_str(), 0600), 0);
  auto start = std::chrono::steady_clock::now();
  llvm::Expected<std::string> fifo = readRegularFileCapped(dir + "/fifo.md", 1 << 20);
  EXPECT_TRUE(contains(errorOf(fifo), "is a FIFO, not a regular file: refused"));
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 1.0);

  llvm::Expected<std::string> directory = readRegularFileCapped(dir, 1 << 20);
  EXPECT_TRUE(contains(errorOf(directory), "is a directory, not a regular file"));

  ASSERT_FALSE(llvm::sys::fs::create_hard_link(outside, dir + "/hard.md"));
  llvm::Expected<std::string> hard = readRegularFileCapped(dir + "/hard.md", 1 << 20);
  EXPECT_TRUE(contains(errorOf(hard), "has 2 hard links"));

  // A sparse 8 GiB file is refused from its size, without reading (or allocating) it.
  {
    int fd;
    ASSERT_FALSE(llvm::sys::fs::openFileForWrite(dir + "/sparse.md", fd));
    ASSERT_EQ(ftruncate(fd, 8ll << 30), 0);
    close(fd);
  }
  llvm::Expected<std::string> sparse = readRegularFileCapped(dir + "/sparse.md", 1 << 20);
  EXPECT_TRUE(contains(errorOf(sparse), "is 8589934592 bytes, over the limit of 1048576"));
  llvm::sys::fs::remove(dir + "/sparse.md");
}

TEST(LLMUntrustedTest, SafeDirStaysInsideAndWritesAtomically) {
  std::string dir = tempDir();
  std::string elsewhere = tempDir();
  llvm::Expected<SafeDir> root = SafeDir::open(dir, /*create=*/false);
  ASSERT_TRUE(static_cast<bool>(root));
  llvm::Expected<SafeDir> real = root->sub("real", /*create=*/true);
  ASSERT_TRUE(static_cast<bool>(real)) << llvm::toString(real.takeError());

  ASSERT_FALSE(llvm::sys::fs::create_link(elsewhere, dir + "/linked"));
  llvm::Expected<SafeDir> linked = root->sub("linked", /*create=*/true);
  EXPECT_TRUE(contains(errorOf(linked), "is a symbolic link, not a directory: refused"));
  llvm::Expected<SafeDir> dots = root->sub("..", /*create=*/false);
  EXPECT_TRUE(contains(errorOf(dots), "not a plain directory name"));

  // A symlink at the destination is replaced, never written through.
  writeFile(elsewhere + "/victim", "unchanged");
  ASSERT_FALSE(llvm::sys::fs::create_link(elsewhere + "/victim", dir + "/real/out.md"));
  ASSERT_FALSE(static_cast<bool>(real->writeAtomically("out.md", "new text")));
  EXPECT_EQ(real->kind("out.md"), SafeDir::Kind::Regular);
  EXPECT_EQ(*readRegularFileCapped(dir + "/real/out.md", 100), "new text");
  EXPECT_EQ(*readRegularFileCapped(elsewhere + "/victim", 100), "unchanged");
  EXPECT_TRUE(contains(errorOf(real->writeAtomically("../escape.md", "x")),
                       "not a plain file name"));
  EXPECT_EQ(llvm::sys::fs::exists(dir + "/escape.md"), false);

  // A directory at the destination: an error, and no temporary file is left behind.
  ASSERT_FALSE(llvm::sys::fs::create_directory(dir + "/real/adir.md"));
  EXPECT_TRUE(contains(errorOf(real->writeAtomically("adir.md", "x")), "cannot write"));
  llvm::Expected<std::vector<std::string>> names = real->list();
  ASSERT_TRUE(static_cast<bool>(names));
  std::sort(names->begin(), names->end());
  EXPECT_EQ(*names, (std::vector<std::string>{"adir.md", "out.md"}));

  EXPECT_EQ(real->kind("missing"), SafeDir::Kind::Missing);
  EXPECT_EQ(real->kind("a/b"), SafeDir::Kind::Missing);
  llvm::Expected<std::string> up = real->read("../../etc/passwd", 100);
  EXPECT_TRUE(contains(errorOf(up), "not a plain file name: refused"));
}

TEST(LLMUntrustedTest, NamesAndTextAreMadeSafe) {
  EXPECT_TRUE(isPlainFileName("0123abcd.md"));
  EXPECT_TRUE(isPlainFileName("résumé.md"));
  for (const char *bad : {"", ".", "..", "a/b", "../x", "a\x1b[31m", "a\nb", "a\x7f", "\xff.md",
                          "a\xc2\x9b" "b"})
    EXPECT_FALSE(isPlainFileName(bad)) << bad;
  EXPECT_FALSE(isPlainFileName(std::string(256, 'a')));

  EXPECT_EQ(sanitizeForTerminal("red \x1b[31mtext\x07"), "red \\x1b[31mtext\\x07");
  EXPECT_EQ(sanitizeForTerminal("c1 \xc2\x9b" "2J and \xff"), "c1 \\u009b2J and \\xff");
  EXPECT_EQ(sanitizeForTerminal("a\nb\tc"), "a\\x0ab\\x09c");
  EXPECT_EQ(sanitizeForTerminal("a\nb\tc", /*keepLines=*/true), "a\nb\tc");
  EXPECT_EQ(sanitizeForTerminal("ünï €"), "ünï €");
  EXPECT_EQ(sanitizeReplyText("x\r\ny\rz\x1b"), "x\ny\\x0dz\\x1b");

  std::vector<std::string> secrets = {"sk-live-1234567890", "abc"};
  EXPECT_EQ(redactSecrets("key sk-live-1234567890 and sk-live-1234567890x", secrets),
            "key [REDACTED] and [REDACTED]x");
  EXPECT_EQ(redactSecrets("abc stays (too short to be a key)", secrets),
            "abc stays (too short to be a key)");
  EXPECT_EQ(redactSecrets("Authorization: Bearer tok.en-1/2+3=", {}),
            "Authorization: Bearer [REDACTED]");
  EXPECT_EQ(redactSecrets("{\"x-api-key\": \"ak-123\", \"API_KEY\"='v2'}", {}),
            "{\"x-api-key\": \"[REDACTED]\", \"API_KEY\"='[REDACTED]'}");
  EXPECT_EQ(redactSecrets("bearer  abc; Bearers of news", {}), "bearer  [REDACTED]; Bearers of news");
}

TEST(LLMUntrustedTest, UsageIsValidatedAndSumsSaturate) {
  const int64_t max = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(saturatingAdd(max, 1), max);
  EXPECT_EQ(saturatingAdd(-max - 1, -1), -max - 1);
  EXPECT_EQ(saturatingAdd(2, 3), 5);
  Usage u;
  EXPECT_FALSE(checkUsage(u).has_value());
  u.promptTokens = -5;
  EXPECT_TRUE(checkUsage(u).has_value());
  u.promptTokens = max;
  EXPECT_TRUE(checkUsage(u).has_value());
  u.promptTokens = 10;
  u.cost = std::nan("");
  EXPECT_TRUE(checkUsage(u).has_value());
}

TEST(LLMClientTest, ImpossibleUsageIsAFailedCallAndNeverSpendsTheBudget) {
  const int64_t max = std::numeric_limits<int64_t>::max();
  FakeLLMServer server(script({reply("negative", -1000000, -1000000), reply("huge", max, max),
                               reply("fine", 600, 500)}));
  ClientOptions o;
  o.maxTokens = 2000;
  Harness h = makeClient("openai", server.baseUrl() + "/v1", o);
  h.client->sleep = [](double) { FAIL() << "an impossible usage is not retried"; };
  Result neg = h.client->complete(req("a"));
  EXPECT_EQ(neg.status, Result::Status::Failed);
  EXPECT_TRUE(contains(neg.error, "impossible usage (negative token count")) << neg.error;
  Result huge = h.client->complete(req("b"));
  EXPECT_EQ(huge.status, Result::Status::Failed);
  EXPECT_TRUE(contains(huge.error, "over 100000000 for one reply")) << huge.error;
  Totals t = h.client->totals();
  EXPECT_EQ(t.failures, 2);
  EXPECT_EQ(t.promptTokens, 0);
  EXPECT_EQ(t.completionTokens, 0);
  EXPECT_FALSE(h.client->budgetExhausted());
  EXPECT_TRUE(h.client->complete(req("c")).ok());
  EXPECT_TRUE(h.client->complete(req("d")).ok());
  EXPECT_TRUE(h.client->budgetExhausted()); // 2200 >= 2000: the real usage counts
  EXPECT_EQ(h.client->complete(req("e")).status, Result::Status::BudgetExhausted);
  EXPECT_EQ(server.numRequests(), 4u);
}

TEST(LLMClientTest, AnHugeBodyAbortsThatCallWithoutRetries) {
  for (json::Object step : {json::Object{{"stream_bytes", int64_t(8) << 30}},
                            json::Object{{"claim_length", int64_t(8) << 30}}}) {
    FakeLLMServer server(script({json::Value(std::move(step))}));
    BackendOptions b;
    b.spec = "openai";
    b.model = "gpt-4.1";
    b.baseUrl = server.baseUrl() + "/v1";
    b.keyEnv = "EVO_TEST_NO_KEY";
    b.maxReplyBytes = 1 << 20;
    llvm::Expected<std::unique_ptr<Backend>> backend = createBackend(b);
    ASSERT_TRUE(static_cast<bool>(backend));
    ClientOptions o;
    o.timeoutSeconds = 20;
    Client c(std::move(*backend), o, PriceTable::builtin());
    c.sleep = [](double) { FAIL() << "an oversized body is not retried"; };
    auto start = std::chrono::steady_clock::now();
    Result r = c.complete(req("flood"));
    EXPECT_EQ(r.status, Result::Status::Failed);
    EXPECT_TRUE(contains(r.error, "over the limit of 1048576 bytes: transfer aborted")) << r.error;
    EXPECT_EQ(server.numRequests(), 1u);
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
              10.0);
  }
}

TEST(LLMClientTest, AnEchoedKeyAndTerminalControlsNeverComeBack) {
  setenv("EVO_TEST_ECHO_KEY", "sk-echo-0123456789abcdef", 1);
  std::string dir = tempDir();
  FakeLLMServer server(
      script({json::Object{{"status", 401}, {"echo_auth", true}},
              json::Object{{"content", "\x1b]0;pwned\x07\x1b[2Jcode \xc2\x9b" "1m"},
                           {"echo_auth", true},
                           {"usage", json::Array{1, 1}}}}));
  ClientOptions o;
  o.cacheDir = dir;
  Harness h = makeClient("openai", server.baseUrl() + "/v1", o, "EVO_TEST_ECHO_KEY");
  Result denied = h.client->complete(req("a"));
  EXPECT_EQ(denied.status, Result::Status::Failed);
  EXPECT_TRUE(contains(denied.error, "HTTP 401: scripted status 401")) << denied.error;
  EXPECT_FALSE(contains(denied.error, "sk-echo")) << denied.error;
  EXPECT_TRUE(contains(denied.error, "Bearer [REDACTED]")) << denied.error;
  Result r = h.client->complete(req("b"));
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_FALSE(contains(r.reply.text, "sk-echo")) << r.reply.text;
  EXPECT_FALSE(contains(r.reply.text, "\x1b")) << r.reply.text;
  EXPECT_FALSE(contains(r.reply.text, "\xc2\x9b")) << r.reply.text;
  EXPECT_TRUE(contains(r.reply.text, "\\x1b]0;pwned\\x07")) << r.reply.text;
  EXPECT_EQ(server.requests()[1].authorization, "Bearer sk-echo-0123456789abcdef");
  std::error_code ec;
  unsigned files = 0;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec; it.increment(ec)) {
    llvm::Expected<std::string> text = readRegularFileCapped(it->path(), 1 << 20);
    ASSERT_TRUE(static_cast<bool>(text));
    EXPECT_FALSE(contains(*text, "sk-echo")) << it->path();
    ++files;
  }
  EXPECT_EQ(files, 1u);
  unsetenv("EVO_TEST_ECHO_KEY");
}

TEST(LLMClientTest, AForgedCacheEntryIsAMiss) {
  std::string dir = tempDir();
  std::string outside = tempDir();
  FakeLLMServer server(script({reply("real", 10, 2)}));
  ClientOptions o;
  o.cacheDir = dir;
  o.replay = true;
  Harness h = makeClient("openai", server.baseUrl() + "/v1", o);
  std::string key = h.client->key(req("p"));
  std::string entry = "{\"key\": \"" + key + "\", \"text\": \"forged\", \"usage\": "
                      "{\"prompt_tokens\": -9, \"completion_tokens\": 0}}";
  writeFile(dir + "/" + key + ".json", entry);
  EXPECT_EQ(h.client->complete(req("p")).status, Result::Status::ReplayMiss);
  // A link to an entry elsewhere is not followed.
  llvm::sys::fs::remove(dir + "/" + key + ".json");
  writeFile(outside + "/e.json", "{\"key\": \"" + key + "\", \"text\": \"elsewhere\"}");
  ASSERT_FALSE(llvm::sys::fs::create_link(outside + "/e.json", dir + "/" + key + ".json"));
  EXPECT_EQ(h.client->complete(req("p")).status, Result::Status::ReplayMiss);
  llvm::sys::fs::remove(dir + "/" + key + ".json");
  writeFile(dir + "/" + key + ".json", "{\"key\": \"" + key + "\", \"text\": \"good\"}");
  Result ok = h.client->complete(req("p"));
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok.reply.text, "good");
}

TEST(LLMMailboxTest, LinksFifosAndFloodsInAMailboxAreRefused) {
  std::string box = tempDir();
  std::string outside = tempDir();
  writeFile(outside + "/secret.md", "SECRET-OUTSIDE");
  ClientOptions o;
  Client c(createMailboxBackend(box, /*waitSeconds=*/0), o, PriceTable::builtin());
  // First pass: every prompt is posted and stays pending.
  std::vector<std::string> keys;
  for (const char *p : {"a", "b", "c", "d", "e"}) {
    Result r = c.complete(req(p));
    EXPECT_EQ(r.status, Result::Status::Pending);
    keys.push_back(r.key);
  }
  EXPECT_EQ(countPending(box), 5u);
  std::string replies = box + "/replies/";
  ASSERT_FALSE(llvm::sys::fs::create_link(outside + "/secret.md", replies + keys[0] + ".md"));
  ASSERT_EQ(mkfifo((replies + keys[1] + ".md").c_str(), 0600), 0);
  ASSERT_FALSE(llvm::sys::fs::create_link("/dev/zero", replies + keys[2] + ".md"));
  {
    int fd;
    ASSERT_FALSE(llvm::sys::fs::openFileForWrite(replies + keys[3] + ".md", fd));
    ASSERT_EQ(ftruncate(fd, 8ll << 30), 0);
    close(fd);
  }
  writeFile(replies + keys[4] + ".md", "fine \x1b[31m");
  auto start = std::chrono::steady_clock::now();
  std::vector<std::string> errors;
  for (int i = 0; i < 4; ++i) {
    Result r = c.complete(req(std::string(1, char('a' + i))));
    EXPECT_EQ(r.status, Result::Status::Failed);
    EXPECT_FALSE(contains(r.error, "SECRET")) << r.error;
    errors.push_back(r.error);
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 2.0);
  EXPECT_TRUE(contains(errors[0], "is a symbolic link: refused")) << errors[0];
  EXPECT_TRUE(contains(errors[1], "is a FIFO, not a regular file: refused")) << errors[1];
  EXPECT_TRUE(contains(errors[2], "is a symbolic link: refused")) << errors[2];
  EXPECT_TRUE(contains(errors[3], "is 8589934592 bytes, over the limit of 1048576")) << errors[3];
  Result fine = c.complete(req("e"));
  ASSERT_TRUE(fine.ok()) << fine.error;
  EXPECT_EQ(fine.reply.text, "fine \\x1b[31m");
  llvm::sys::fs::remove(replies + keys[3] + ".md");

  // A reply file with a hostile name is reported with its name made printable.
  writeFile(replies + "\x1b[2J.md", "x");
  std::vector<std::string> stray = strayReplies(box);
  ASSERT_EQ(stray.size(), 1u);
  EXPECT_EQ(stray[0], "\\x1b[2J.md");
}

TEST(LLMMailboxTest, ASymlinkedSubdirectoryIsRefusedBeforeAnyWrite) {
  for (const char *sub : {"replies", "pending"}) {
    std::string box = tempDir();
    std::string outside = tempDir();
    ASSERT_FALSE(llvm::sys::fs::create_link(outside, box + "/" + sub));
    BackendOptions b;
    b.spec = "mailbox:" + box;
    llvm::Expected<std::unique_ptr<Backend>> backend = createBackend(b);
    EXPECT_TRUE(contains(errorOf(backend), "is a symbolic link, not a directory: refused"))
        << sub;
    // Swapped in after the backend was made: each attempt checks again.
    llvm::sys::fs::remove(box + "/" + sub);
    llvm::Expected<std::unique_ptr<Backend>> later = createBackend(b);
    ASSERT_TRUE(static_cast<bool>(later));
    ASSERT_FALSE(llvm::sys::fs::create_link(outside, box + "/" + sub));
    Client c(std::move(*later), ClientOptions(), PriceTable::builtin());
    Result r = c.complete(req("p"));
    EXPECT_EQ(r.status, Result::Status::Failed);
    EXPECT_TRUE(contains(r.error, "is a symbolic link, not a directory: refused")) << r.error;
    std::error_code ec;
    EXPECT_EQ(llvm::sys::fs::directory_iterator(outside, ec), llvm::sys::fs::directory_iterator())
        << "nothing written outside the mailbox";
  }
}

TEST(LLMBackendTest, IdentitiesNeverHoldCredentialsOfTheURL) {
  BackendOptions b;
  b.spec = "openai";
  b.model = "m";
  b.baseUrl = "https://user:sk-in-url-123456@example.invalid/v1?x=1";
  llvm::Expected<std::unique_ptr<Backend>> backend = createBackend(b);
  ASSERT_TRUE(static_cast<bool>(backend));
  EXPECT_EQ((*backend)->identity(), "openai|https://example.invalid/v1?x=1|m");
  b.baseUrl = "http://127.0.0.1:8000/v1/a@b";
  EXPECT_EQ((*createBackend(b))->identity(), "openai|http://127.0.0.1:8000/v1/a@b|m");
}
