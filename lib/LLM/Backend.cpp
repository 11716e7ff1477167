//===- Backend.cpp - OpenAI-compatible, Anthropic and command backends -------===//

#include "evo/LLM/Backend.h"
#include "evo/LLM/Mailbox.h"
#include "evo/LLM/Untrusted.h"
#include "Http.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/StringSaver.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"
#include <chrono>
#include <cmath>
#include <ctime>

extern char **environ;

namespace json = llvm::json;
using llvm::StringRef;

namespace evo::llm {

Backend::~Backend() = default;

double parseRetryAfter(StringRef value) {
  value = value.trim();
  if (value.empty())
    return -1;
  double seconds;
  if (!value.getAsDouble(seconds))
    return seconds >= 0 ? seconds : -1;
  // An HTTP date: "Wed, 21 Oct 2015 07:28:00 GMT".
  std::tm tm = {};
  if (!strptime(value.str().c_str(), "%a, %d %b %Y %H:%M:%S", &tm))
    return -1;
  time_t when = timegm(&tm);
  double delta = std::difftime(when, std::time(nullptr));
  return delta > 0 ? delta : 0;
}

llvm::json::Value toJSON(const Usage &u) {
  return llvm::json::Object{{"prompt_tokens", u.promptTokens},
                            {"completion_tokens", u.completionTokens},
                            {"cost", u.cost},
                            {"reported", u.reported}};
}

bool fromJSON(const llvm::json::Value &value, Usage &u, llvm::json::Path path) {
  llvm::json::ObjectMapper m(value, path);
  return m && m.mapOptional("prompt_tokens", u.promptTokens) &&
         m.mapOptional("completion_tokens", u.completionTokens) && m.mapOptional("cost", u.cost) &&
         m.mapOptional("reported", u.reported);
}

/// Whether `text` ends inside a quote, read the way TokenizeGNUCommandLine reads it (a
/// backslash escapes the next character, inside quotes too); the tokenizer itself silently takes
/// the rest of the line into the last word.
static bool endsInQuote(StringRef text) {
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\\' && i + 1 < text.size())
      ++i;
    else if (quote && c == quote)
      quote = 0;
    else if (!quote && (c == '\'' || c == '"'))
      quote = c;
  }
  return quote != 0;
}

llvm::Expected<std::vector<std::string>> splitCommand(StringRef text) {
  if (endsInQuote(text))
    return llvm::createStringError("unterminated quote in the command '" + text.str() + "'");
  llvm::BumpPtrAllocator alloc;
  llvm::StringSaver saver(alloc);
  llvm::SmallVector<const char *> words;
  llvm::cl::TokenizeGNUCommandLine(text, saver, words);
  if (words.empty())
    return llvm::createStringError("the command is empty");
  return std::vector<std::string>(words.begin(), words.end());
}

namespace {

std::string envKey(const std::string &var) {
  if (var.empty())
    return "";
  return llvm::sys::Process::GetEnv(var).value_or("");
}

/// The URL without "user:password@": identities are printed and stored.
std::string withoutUserInfo(StringRef url) {
  size_t scheme = url.find("://");
  size_t start = scheme == StringRef::npos ? 0 : scheme + 3;
  size_t end = url.find_first_of("/?#", start);
  size_t at = url.substr(0, end).rfind('@');
  if (at == StringRef::npos || at < start)
    return url.str();
  return (url.take_front(start) + url.drop_front(at + 1)).str();
}

/// Status codes worth another attempt.
bool transientStatus(int status) {
  return status == 408 || status == 409 || status == 425 || status == 429 || status >= 500;
}

/// The server's own error text, when the body is JSON with one (the Client redacts, sanitizes
/// and shortens it).
std::string serverMessage(const std::string &body) {
  llvm::Expected<json::Value> v = json::parse(body);
  if (!v) {
    llvm::consumeError(v.takeError());
    return StringRef(body).take_front(200).str();
  }
  if (const json::Object *o = v->getAsObject()) {
    if (const json::Object *e = o->getObject("error"))
      if (std::optional<StringRef> m = e->getString("message"))
        return m->str();
    if (std::optional<StringRef> m = o->getString("message"))
      return m->str();
  }
  return StringRef(body).take_front(200).str();
}

/// Common handling of an HTTP exchange; `extract` reads the success body.
template <typename Extract>
Attempt exchange(const std::string &url, const std::vector<std::string> &headers,
                 const std::string &body, double timeout, uint64_t maxBodyBytes,
                 Extract extract) {
  Attempt a;
  auto start = std::chrono::steady_clock::now();
  HttpResponse r = httpPost(url, headers, body, timeout, maxBodyBytes);
  a.reply.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  a.httpStatus = r.status;
  a.retryAfterSeconds = parseRetryAfter(r.retryAfter);
  if (r.tooLarge) {
    // Not retried: the same server would send the same flood again.
    a.error = r.error;
    return a;
  }
  if (!r.transportOk) {
    a.transient = true;
    a.error = r.timedOut ? "no reply within " + llvm::formatv("{0}", timeout).str() + " s"
                         : "transport error: " + r.error;
    return a;
  }
  if (r.status != 200) {
    a.transient = transientStatus(r.status);
    a.error = "HTTP " + std::to_string(r.status) + ": " + serverMessage(r.body);
    return a;
  }
  llvm::Expected<json::Value> v = json::parse(r.body);
  if (!v) {
    a.transient = true;
    a.error = "malformed JSON in the reply: " + llvm::toString(v.takeError());
    return a;
  }
  const json::Object *o = v->getAsObject();
  if (!o) {
    a.transient = true;
    a.error = "the reply is not a JSON object";
    return a;
  }
  if (std::optional<std::string> err = extract(*o, a.reply)) {
    a.transient = true;
    a.error = *err;
    return a;
  }
  if (StringRef(a.reply.text).trim().empty()) {
    a.transient = true;
    a.error = "the reply is empty";
    return a;
  }
  a.ok = true;
  return a;
}

class OpenAIBackend : public Backend {
public:
  OpenAIBackend(BackendOptions o) : opts(std::move(o)) {
    if (opts.baseUrl.empty())
      opts.baseUrl = "https://api.openai.com/v1";
    while (StringRef(opts.baseUrl).ends_with("/"))
      opts.baseUrl.pop_back();
    if (opts.keyEnv.empty())
      opts.keyEnv = "OPENAI_API_KEY";
  }
  std::string identity() const override {
    return "openai|" + withoutUserInfo(opts.baseUrl) + "|" + opts.model;
  }
  std::string model() const override { return opts.model; }
  std::string keyEnvironment() const override { return opts.keyEnv; }
  Attempt attempt(const Request &r, double timeout) override {
    json::Array messages;
    if (!r.system.empty())
      messages.push_back(json::Object{{"role", "system"}, {"content", r.system}});
    messages.push_back(json::Object{{"role", "user"}, {"content", r.prompt}});
    json::Object body{{"model", opts.model},
                      {"messages", std::move(messages)},
                      {"temperature", r.temperature},
                      {"max_tokens", r.maxTokens}};
    std::vector<std::string> headers = {"Content-Type: application/json"};
    if (std::string key = envKey(opts.keyEnv); !key.empty())
      headers.push_back("Authorization: Bearer " + key);
    std::string text = llvm::formatv("{0}", json::Value(std::move(body))).str();
    return exchange(opts.baseUrl + "/chat/completions", headers, text, timeout, opts.maxReplyBytes,
                    [&](const json::Object &o, Reply &reply) -> std::optional<std::string> {
                      const json::Array *choices = o.getArray("choices");
                      if (!choices || choices->empty() || !(*choices)[0].getAsObject())
                        return std::string("the reply has no choices");
                      const json::Object *msg = (*choices)[0].getAsObject()->getObject("message");
                      if (!msg)
                        return std::string("the reply's choice has no message");
                      reply.text = msg->getString("content").value_or("").str();
                      reply.model = o.getString("model").value_or(opts.model).str();
                      if (const json::Object *u = o.getObject("usage")) {
                        reply.usage.promptTokens = u->getInteger("prompt_tokens").value_or(0);
                        reply.usage.completionTokens =
                            u->getInteger("completion_tokens").value_or(0);
                        reply.usage.reported = true;
                      }
                      return std::nullopt;
                    });
  }

private:
  BackendOptions opts;
};

class AnthropicBackend : public Backend {
public:
  AnthropicBackend(BackendOptions o) : opts(std::move(o)) {
    if (opts.baseUrl.empty())
      opts.baseUrl = "https://api.anthropic.com";
    while (StringRef(opts.baseUrl).ends_with("/"))
      opts.baseUrl.pop_back();
    if (opts.keyEnv.empty())
      opts.keyEnv = "ANTHROPIC_API_KEY";
  }
  std::string identity() const override {
    return "anthropic|" + withoutUserInfo(opts.baseUrl) + "|" + opts.model;
  }
  std::string model() const override { return opts.model; }
  std::string keyEnvironment() const override { return opts.keyEnv; }
  Attempt attempt(const Request &r, double timeout) override {
    json::Object body{{"model", opts.model},
                      {"max_tokens", r.maxTokens},
                      {"temperature", r.temperature},
                      {"messages", json::Array{json::Object{{"role", "user"},
                                                            {"content", r.prompt}}}}};
    if (!r.system.empty())
      body["system"] = r.system;
    std::vector<std::string> headers = {"Content-Type: application/json",
                                        "anthropic-version: 2023-06-01"};
    if (std::string key = envKey(opts.keyEnv); !key.empty())
      headers.push_back("x-api-key: " + key);
    std::string text = llvm::formatv("{0}", json::Value(std::move(body))).str();
    return exchange(opts.baseUrl + "/v1/messages", headers, text, timeout, opts.maxReplyBytes,
                    [&](const json::Object &o, Reply &reply) -> std::optional<std::string> {
                      const json::Array *content = o.getArray("content");
                      if (!content)
                        return std::string("the reply has no content");
                      for (const json::Value &block : *content)
                        if (const json::Object *b = block.getAsObject())
                          if (b->getString("type") == StringRef("text"))
                            reply.text += b->getString("text").value_or("").str();
                      reply.model = o.getString("model").value_or(opts.model).str();
                      if (const json::Object *u = o.getObject("usage")) {
                        reply.usage.promptTokens = u->getInteger("input_tokens").value_or(0);
                        reply.usage.completionTokens = u->getInteger("output_tokens").value_or(0);
                        reply.usage.reported = true;
                      }
                      return std::nullopt;
                    });
  }

private:
  BackendOptions opts;
};

/// `cmd:<program> [args]`: the prompt on stdin, the reply from stdout. No shell is involved.
class CommandBackend : public Backend {
public:
  CommandBackend(std::vector<std::string> argv, std::string program, std::string modelName,
                 uint64_t maxReplyBytes)
      : argv(std::move(argv)), program(std::move(program)), modelName(std::move(modelName)),
        maxReplyBytes(maxReplyBytes) {}
  std::string identity() const override {
    // The arguments only as a hash: identities appear in logs and reports.
    std::string args;
    for (const std::string &a : llvm::ArrayRef(argv).drop_front())
      args += a + "\x1f";
    std::array<uint8_t, 32> h = llvm::SHA256::hash(llvm::arrayRefFromStringRef(args));
    return "cmd|" + llvm::sys::path::filename(program).str() + "|" +
           llvm::toHex(llvm::ArrayRef(h).take_front(6), true) + "|" + modelName;
  }
  std::string model() const override { return modelName.empty() ? "cmd" : modelName; }
  Attempt attempt(const Request &r, double timeout) override {
    Attempt a;
    llvm::SmallString<128> in, out, err;
    if (llvm::sys::fs::createTemporaryFile("evo-llm-prompt", "md", in) ||
        llvm::sys::fs::createTemporaryFile("evo-llm-reply", "md", out) ||
        llvm::sys::fs::createTemporaryFile("evo-llm-stderr", "txt", err)) {
      a.error = "cannot create temporary files for the command";
      return a;
    }
    llvm::scope_exit cleanup([&] {
      llvm::sys::fs::remove(in);
      llvm::sys::fs::remove(out);
      llvm::sys::fs::remove(err);
    });
    {
      std::error_code ec;
      llvm::raw_fd_ostream os(in, ec);
      if (ec) {
        a.error = "cannot write the prompt file: " + ec.message();
        return a;
      }
      if (!r.system.empty())
        os << r.system << "\n\n";
      os << r.prompt;
    }
    // The environment, plus what a wrapper around a real model needs: the sampling parameters
    // and a file it may write its token usage to ({"prompt_tokens": n, "completion_tokens": m}).
    llvm::SmallString<128> usageFile;
    if (!llvm::sys::fs::createTemporaryFile("evo-llm-usage", "json", usageFile))
      llvm::sys::fs::remove(usageFile);
    std::vector<std::string> envStrings;
    for (char **e = environ; e && *e; ++e) {
      StringRef kv(*e);
      if (!kv.starts_with("EVO_LLM_"))
        envStrings.push_back(kv.str());
    }
    envStrings.push_back("EVO_LLM_SAMPLE=" + std::to_string(r.sample));
    envStrings.push_back("EVO_LLM_TEMPERATURE=" + llvm::formatv("{0}", r.temperature).str());
    envStrings.push_back("EVO_LLM_MAX_TOKENS=" + std::to_string(r.maxTokens));
    envStrings.push_back("EVO_LLM_USAGE_FILE=" + usageFile.str().str());
    std::vector<StringRef> env(envStrings.begin(), envStrings.end());
    llvm::scope_exit removeUsage([&] { llvm::sys::fs::remove(usageFile); });
    std::vector<StringRef> args(argv.begin(), argv.end());
    std::optional<StringRef> redirects[] = {StringRef(in), StringRef(out), StringRef(err)};
    std::string errMsg;
    bool failedToRun = false;
    auto start = std::chrono::steady_clock::now();
    unsigned waitSeconds = static_cast<unsigned>(std::max(1.0, std::ceil(timeout)));
    int rc = llvm::sys::ExecuteAndWait(program, args, llvm::ArrayRef<StringRef>(env), redirects,
                                       waitSeconds, 0, &errMsg, &failedToRun);
    a.reply.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    // The program may have replaced its files with links, FIFOs or floods: capped reads.
    auto readAll = [](StringRef path, uint64_t cap) {
      llvm::Expected<std::string> text = readRegularFileCapped(path, cap);
      if (!text) {
        llvm::consumeError(text.takeError());
        return std::string();
      }
      return *text;
    };
    if (failedToRun) {
      a.error = "cannot run '" + program + "': " + errMsg;
      return a;
    }
    if (rc != 0) {
      // -2: killed at the timeout or by a signal; both may pass on another attempt.
      a.transient = rc < 0;
      std::string tail = StringRef(readAll(err, 1 << 20)).trim().take_back(300).str();
      a.error = rc == -2 && a.reply.seconds >= waitSeconds - 0.5
                    ? "no reply within " + std::to_string(waitSeconds) + " s"
                    : "'" + program + "' exited with status " + std::to_string(rc) +
                          (errMsg.empty() ? "" : " (" + errMsg + ")") +
                          (tail.empty() ? "" : ": " + tail);
      return a;
    }
    llvm::Expected<std::string> text = readRegularFileCapped(out, maxReplyBytes);
    if (!text) {
      a.error = "the output of '" + program + "': " + llvm::toString(text.takeError());
      return a;
    }
    a.reply.text = std::move(*text);
    a.reply.model = model();
    if (std::string usage = readAll(usageFile, 1 << 16); !usage.empty()) {
      if (llvm::Expected<json::Value> u = json::parse(usage)) {
        if (const json::Object *o = u->getAsObject()) {
          a.reply.usage.promptTokens = o->getInteger("prompt_tokens").value_or(0);
          a.reply.usage.completionTokens = o->getInteger("completion_tokens").value_or(0);
          a.reply.usage.reported = true;
          if (std::optional<StringRef> m = o->getString("model"))
            a.reply.model = m->str();
        }
      } else {
        llvm::consumeError(u.takeError());
      }
    }
    if (StringRef(a.reply.text).trim().empty()) {
      a.transient = true;
      a.error = "the command printed nothing";
      return a;
    }
    a.ok = true;
    return a;
  }

private:
  std::vector<std::string> argv;
  std::string program, modelName;
  uint64_t maxReplyBytes;
};

} // namespace

llvm::Expected<std::unique_ptr<Backend>> createBackend(const BackendOptions &options) {
  StringRef spec = options.spec;
  if (spec.consume_front("mailbox:")) {
    if (spec.trim().empty())
      return llvm::createStringError("llm=mailbox: needs a directory (mailbox:DIR)");
    if (llvm::Error e = checkMailbox(spec.trim()))
      return std::move(e);
    return createMailboxBackend(spec.trim().str(), options.waitSeconds);
  }
  if (spec.consume_front("cmd:")) {
    llvm::Expected<std::vector<std::string>> argv = splitCommand(spec);
    if (!argv)
      return argv.takeError();
    std::string program = (*argv)[0];
    if (!StringRef(program).contains('/')) {
      llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName(program);
      if (!found)
        return llvm::createStringError("llm=cmd: cannot find '" + program + "' on PATH");
      program = *found;
    } else if (!llvm::sys::fs::can_execute(program)) {
      return llvm::createStringError("llm=cmd: '" + program + "' is not an executable file");
    }
    return std::make_unique<CommandBackend>(std::move(*argv), program, options.model,
                                            options.maxReplyBytes);
  }
  if (spec == "openai" || spec == "anthropic") {
    if (options.model.empty())
      return llvm::createStringError("llm=" + spec.str() + " needs llm-model=<name>");
    std::string why;
    if (!httpAvailable(&why))
      return llvm::createStringError("llm=" + spec.str() + ": " + why);
    if (spec == "openai")
      return std::make_unique<OpenAIBackend>(options);
    return std::make_unique<AnthropicBackend>(options);
  }
  return llvm::createStringError("unknown llm backend '" + spec.str() +
                                 "': expected openai, anthropic, cmd:<program> [args] or "
                                 "mailbox:<dir>");
}

} // namespace evo::llm
