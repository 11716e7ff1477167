//===- Mailbox.cpp - LLM replies answered elsewhere, later -------------------===//

#include "evo/LLM/Mailbox.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include <atomic>
#include <chrono>
#include <set>
#include <thread>

namespace json = llvm::json;
using llvm::StringRef;

namespace evo::llm {

namespace {

std::string join(StringRef a, StringRef b, StringRef c = "") {
  llvm::SmallString<256> p(a);
  llvm::sys::path::append(p, b);
  if (!c.empty())
    llvm::sys::path::append(p, c);
  return p.str().str();
}

llvm::Error writeAtomically(StringRef path, StringRef text) {
  return llvm::writeToOutput(path, [&](llvm::raw_ostream &os) {
    os << text;
    return llvm::Error::success();
  });
}


/// A reply file's text, or why it is rejected.
llvm::Expected<std::string> readReply(StringRef path) {
  uint64_t size = 0;
  if (std::error_code ec = llvm::sys::fs::file_size(path, size))
    return llvm::createStringError("mailbox reply '" + path.str() + "': " + ec.message());
  if (size > kMaxReplyBytes)
    return llvm::createStringError(llvm::formatv("mailbox reply '{0}' is {1} bytes, over the "
                                                 "limit of {2}: rejected",
                                                 path, size, kMaxReplyBytes)
                                       .str());
  auto buf = llvm::MemoryBuffer::getFile(path);
  if (!buf)
    return llvm::createStringError("mailbox reply '" + path.str() +
                                   "' cannot be read: " + buf.getError().message());
  StringRef text = (*buf)->getBuffer();
  if (!json::isUTF8(text))
    return llvm::createStringError("mailbox reply '" + path.str() + "' is not UTF-8: rejected");
  return text.str();
}

class MailboxBackend : public Backend {
public:
  MailboxBackend(std::string dir, double wait, double poll)
      : dir(std::move(dir)), waitSeconds(wait), pollSeconds(poll) {}
  std::string identity() const override { return "mailbox"; }
  std::string model() const override { return "mailbox"; }
  bool answersElsewhere() const override { return true; }

  Attempt attempt(const Request &r, double) override {
    Attempt a;
    if (r.key.empty()) {
      a.error = "internal: a mailbox request needs its key";
      return a;
    }
    std::string replyPath = join(dir, "replies", r.key + ".md");
    std::string sidecarPath = join(dir, "pending", r.key + ".json");
    if (!llvm::sys::fs::exists(replyPath)) {
      if (llvm::Error e = post(r, sidecarPath)) {
        a.error = llvm::toString(std::move(e));
        return a;
      }
      auto start = std::chrono::steady_clock::now();
      while (!llvm::sys::fs::exists(replyPath)) {
        double waited =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (waited >= waitSeconds) {
          a.pending = true;
          a.error = "waiting for " + replyPath;
          return a;
        }
        std::this_thread::sleep_for(std::chrono::duration<double>(pollSeconds));
      }
    }
    llvm::Expected<std::string> text = readReply(replyPath);
    if (!text) {
      a.error = llvm::toString(text.takeError());
      return a; // not transient: the same file would be rejected again
    }
    a.ok = true;
    a.reply.text = std::move(*text);
    a.reply.model = "mailbox";
    // What the relay recorded about the call it made.
    if (std::optional<json::Object> side = readJsonObject(sidecarPath))
      if (const json::Object *u = side->getObject("usage")) {
        a.reply.usage.promptTokens = u->getInteger("prompt_tokens").value_or(0);
        a.reply.usage.completionTokens = u->getInteger("completion_tokens").value_or(0);
        a.reply.usage.cost = u->getNumber("cost").value_or(0);
        a.reply.usage.reported = true;
        a.reply.model = u->getString("model").value_or("mailbox").str();
      }
    return a;
  }

private:
  llvm::Error post(const Request &r, StringRef sidecarPath) {
    if (llvm::sys::fs::exists(sidecarPath))
      return llvm::Error::success(); // already posted (a resumed run asking again)
    for (StringRef sub : {"pending", "replies"})
      if (std::error_code ec = llvm::sys::fs::create_directories(join(dir, sub)))
        return llvm::createStringError("mailbox '" + dir + "': " + ec.message());
    json::Array parents;
    for (int64_t p : r.parents)
      parents.push_back(p);
    json::Object side{{"format", "evo-mailbox/1"},
                      {"key", r.key},
                      {"system", r.system},
                      {"temperature", r.temperature},
                      {"max_tokens", r.maxTokens},
                      {"sample", static_cast<int64_t>(r.sample)},
                      {"task", r.task},
                      {"strategy", r.strategy},
                      {"operator", r.op},
                      {"parents", std::move(parents)}};
    // The prompt first, the sidecar last: a sidecar means the prompt is complete.
    if (llvm::Error e = writeAtomically(join(dir, "pending", r.key + ".prompt.md"), r.prompt))
      return e;
    return writeAtomically(sidecarPath,
                           llvm::formatv("{0:2}", json::Value(std::move(side))).str());
  }

  std::string dir;
  double waitSeconds, pollSeconds;
};

} // namespace

static std::atomic<bool> pausedFlag{false};
void requestPausedExit() { pausedFlag = true; }
bool pausedExitRequested() { return pausedFlag; }

std::unique_ptr<Backend> createMailboxBackend(std::string dir, double waitSeconds,
                                              double pollSeconds) {
  return std::make_unique<MailboxBackend>(std::move(dir), waitSeconds, pollSeconds);
}

unsigned countPending(StringRef dir) {
  unsigned n = 0;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(join(dir, "pending"), ec), end; it != end && !ec;
       it.increment(ec)) {
    StringRef name = llvm::sys::path::filename(it->path());
    if (!name.ends_with(".json") || name.ends_with(".prompt.md"))
      continue;
    std::string key = name.drop_back(5).str();
    n += !llvm::sys::fs::exists(join(dir, "replies", key + ".md"));
  }
  return n;
}

llvm::Expected<RelayStats> relayMailbox(StringRef dir, Client &client,
                                        const RelayOptions &options) {
  RelayStats stats;
  if (!llvm::sys::fs::is_directory(join(dir, "pending")))
    return llvm::createStringError("'" + dir.str() + "' is not a mailbox (no pending/)");
  if (std::error_code ec = llvm::sys::fs::create_directories(join(dir, "replies")))
    return llvm::createStringError("mailbox '" + dir.str() + "': " + ec.message());
  std::set<std::string> seen;
  auto idleSince = std::chrono::steady_clock::now();
  while (true) {
    struct Job {
      std::string key, sidecar;
      json::Object side;
      std::shared_future<Result> result;
    };
    std::vector<Job> jobs;
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(join(dir, "pending"), ec), end; it != end && !ec;
         it.increment(ec)) {
      StringRef name = llvm::sys::path::filename(it->path());
      if (!name.ends_with(".json"))
        continue;
      std::string key = name.drop_back(5).str();
      if (seen.count(key) || llvm::sys::fs::exists(join(dir, "replies", key + ".md")))
        continue;
      seen.insert(key);
      std::optional<json::Object> side = readJsonObject(it->path());
      auto prompt = llvm::MemoryBuffer::getFile(join(dir, "pending", key + ".prompt.md"));
      if (!side || !prompt || side->getString("key") != StringRef(key)) {
        ++stats.skipped;
        stats.problems.push_back("pending/" + name.str() +
                                 ": unreadable sidecar or prompt, or a key that does not match "
                                 "the file name; skipped");
        continue;
      }
      Request r;
      r.system = side->getString("system").value_or("").str();
      r.prompt = (*prompt)->getBuffer().str();
      r.temperature = side->getNumber("temperature").value_or(1.0);
      r.maxTokens = side->getInteger("max_tokens").value_or(4096);
      r.sample = static_cast<unsigned>(side->getInteger("sample").value_or(0));
      r.task = side->getString("task").value_or("").str();
      r.strategy = side->getString("strategy").value_or("").str();
      r.op = side->getString("operator").value_or("").str();
      jobs.push_back({key, it->path(), std::move(*side), client.submit(r)});
    }
    if (ec)
      return llvm::createStringError("mailbox '" + dir.str() + "': " + ec.message());
    for (Job &j : jobs) {
      const Result &r = j.result.get();
      if (!r.ok()) {
        ++stats.failed;
        stats.problems.push_back(j.key + ": " + r.error);
        continue;
      }
      j.side["usage"] = json::Object{{"prompt_tokens", r.reply.usage.promptTokens},
                                     {"completion_tokens", r.reply.usage.completionTokens},
                                     {"cost", r.reply.usage.cost},
                                     {"model", r.reply.model},
                                     {"attempts", static_cast<int64_t>(r.reply.attempts)},
                                     {"backend", client.backend().identity()}};
      // Usage first, then the reply: a reply's sidecar always holds its usage.
      if (llvm::Error e = writeAtomically(
              j.sidecar, llvm::formatv("{0:2}", json::Value(std::move(j.side))).str()))
        return std::move(e);
      if (llvm::Error e = writeAtomically(join(dir, "replies", j.key + ".md"), r.reply.text))
        return std::move(e);
      ++stats.answered;
    }
    if (!jobs.empty())
      idleSince = std::chrono::steady_clock::now();
    double idle =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - idleSince).count();
    if (options.idleSeconds <= 0 || idle >= options.idleSeconds || client.budgetExhausted())
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  // Replies nobody asked for are reported, never used.
  for (const std::string &name : strayReplies(dir))
    stats.problems.push_back("replies/" + name + ": no prompt has this key; ignored");
  return stats;
}

std::vector<std::string> strayReplies(StringRef dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(join(dir, "replies"), ec), end; it != end && !ec;
       it.increment(ec)) {
    StringRef name = llvm::sys::path::filename(it->path());
    if (name.ends_with(".md") &&
        !llvm::sys::fs::exists(join(dir, "pending", (name.drop_back(3) + ".json").str())))
      out.push_back(name.str());
  }
  llvm::sort(out);
  return out;
}

} // namespace evo::llm
