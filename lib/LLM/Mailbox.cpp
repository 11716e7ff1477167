//===- Mailbox.cpp - LLM replies answered elsewhere, later -------------------===//
//
// Every file of a mailbox is reached through SafeDir (Untrusted.h): pending/ and replies/ are
// opened once per operation, relative to the mailbox, and must be real directories; files in
// them are read with O_NOFOLLOW, regular-file and size checks, and written atomically.
//
//===----------------------------------------------------------------------===//

#include "evo/LLM/Mailbox.h"
#include "evo/LLM/Untrusted.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"
#include <atomic>
#include <chrono>
#include <cmath>
#include <set>
#include <thread>

namespace json = llvm::json;
using llvm::StringRef;

namespace evo::llm {

bool isMailboxKey(StringRef name) {
  return name.size() == 64 &&
         llvm::all_of(name, [](char c) { return llvm::isDigit(c) || (c >= 'a' && c <= 'f'); });
}

namespace {

/// A mailbox opened for one operation.
struct Layout {
  SafeDir root, pending, replies;
};

llvm::Expected<Layout> openMailbox(StringRef dir, bool create) {
  auto wrap = [&](llvm::Error e) {
    return llvm::createStringError("mailbox '" + sanitizeForTerminal(dir) +
                                   "': " + llvm::toString(std::move(e)));
  };
  llvm::Expected<SafeDir> root = SafeDir::open(dir, create);
  if (!root)
    return wrap(root.takeError());
  llvm::Expected<SafeDir> pending = root->sub("pending", create);
  if (!pending)
    return wrap(pending.takeError());
  llvm::Expected<SafeDir> replies = root->sub("replies", create);
  if (!replies)
    return wrap(replies.takeError());
  return Layout{std::move(*root), std::move(*pending), std::move(*replies)};
}

/// The reply to `key` as a run takes it: never through a link, a regular file of at most
/// kMaxReplyBytes, UTF-8. The error is the reason the run records (not transient: the same file
/// would be refused again).
llvm::Expected<std::string> readReply(const SafeDir &replies, StringRef key) {
  std::string name = key.str() + ".md";
  // Whatever is there now (a link, a FIFO, a flood) is judged by the capped no-follow read.
  llvm::Expected<std::string> text = replies.read(name, kMaxReplyBytes);
  if (!text)
    return llvm::createStringError("mailbox reply " + llvm::toString(text.takeError()));
  if (!json::isUTF8(*text))
    return llvm::createStringError("mailbox reply '" + replies.display(name) +
                                   "' is not UTF-8: rejected");
  return text;
}

/// The sidecar of `key`: pending/<key>.json, a JSON object whose "key" is `key`.
llvm::Expected<json::Object> readSidecar(const SafeDir &pending, StringRef key) {
  llvm::Expected<std::string> text = pending.read(key.str() + ".json", kMaxJsonFileBytes);
  if (!text)
    return text.takeError();
  std::optional<json::Object> side = parseJsonObject(std::move(*text));
  if (!side || side->getString("key") != key)
    return llvm::createStringError(
        "not a sidecar of this key (JSON object with \"key\": \"<file name>\")");
  return std::move(*side);
}

class MailboxBackend : public Backend {
public:
  MailboxBackend(std::string dir, double wait, double poll)
      : dir(std::move(dir)), waitSeconds(wait), pollSeconds(std::max(0.01, poll)) {}
  std::string identity() const override { return "mailbox"; }
  std::string model() const override { return "mailbox"; }
  bool answersElsewhere() const override { return true; }

  Attempt attempt(const Request &r, double) override {
    Attempt a;
    if (!isMailboxKey(r.key)) {
      a.error = "internal: a mailbox request needs its key";
      return a;
    }
    llvm::Expected<Layout> box = openMailbox(dir, /*create=*/true);
    if (!box) {
      a.error = llvm::toString(box.takeError());
      return a;
    }
    std::string replyName = r.key + ".md";
    if (box->replies.kind(replyName) == SafeDir::Kind::Missing) {
      if (llvm::Error e = post(*box, r)) {
        a.error = llvm::toString(std::move(e));
        return a;
      }
      // Sleep between looks, 50 ms at first, then longer: llm-wait costs no CPU.
      auto start = std::chrono::steady_clock::now();
      double interval = std::min(0.05, pollSeconds);
      while (box->replies.kind(replyName) == SafeDir::Kind::Missing) {
        double waited =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (waited >= waitSeconds) {
          a.pending = true;
          a.error = "waiting for " + box->replies.display(replyName);
          return a;
        }
        std::this_thread::sleep_for(
            std::chrono::duration<double>(std::min(interval, waitSeconds - waited)));
        interval = std::min(interval * 2, pollSeconds);
      }
    }
    llvm::Expected<std::string> text = readReply(box->replies, r.key);
    if (!text) {
      a.error = llvm::toString(text.takeError());
      return a;
    }
    a.ok = true;
    a.reply.text = std::move(*text);
    a.reply.model = "mailbox";
    // What the relay recorded about the call it made (the Client validates the numbers).
    std::optional<json::Object> side =
        parseJsonObject(box->pending.read(r.key + ".json", kMaxJsonFileBytes));
    if (side)
      if (const json::Object *u = side->getObject("usage")) {
        // Ill-typed counts read as none; the relay always reports what it knows.
        json::Path::Root root("usage");
        if (!fromJSON(*side->get("usage"), a.reply.usage, root)) {
          llvm::consumeError(root.getError());
          a.reply.usage = Usage();
        }
        a.reply.usage.reported = true;
        a.reply.model = u->getString("model").value_or("mailbox").str();
      }
    return a;
  }

private:
  llvm::Error post(const Layout &box, const Request &r) {
    if (box.pending.kind(r.key + ".json") != SafeDir::Kind::Missing)
      return llvm::Error::success(); // already posted (a resumed run asking again)
    json::Object side{{"format", "evo-mailbox/1"},
                      {"key", r.key},
                      {"system", r.system},
                      {"temperature", r.temperature},
                      {"max_tokens", r.maxTokens},
                      {"sample", static_cast<int64_t>(r.sample)},
                      {"task", r.task},
                      {"strategy", r.strategy},
                      {"operator", r.op},
                      {"parents", r.parents}};
    if (r.parentVariant)
      side["parent_variant"] = json::Object(*r.parentVariant);
    // The prompt first, the sidecar last: a sidecar means the prompt is complete.
    if (llvm::Error e = box.pending.writeAtomically(r.key + ".prompt.md", r.prompt))
      return e;
    return box.pending.writeAtomically(
        r.key + ".json", llvm::formatv("{0:2}", json::Value(std::move(side))).str());
  }

  std::string dir;
  double waitSeconds, pollSeconds;
};

} // namespace


std::unique_ptr<Backend> createMailboxBackend(std::string dir, double waitSeconds,
                                              double pollSeconds) {
  return std::make_unique<MailboxBackend>(std::move(dir), waitSeconds, pollSeconds);
}

llvm::Error checkMailbox(StringRef dir) {
  llvm::Expected<SafeDir> root = SafeDir::open(dir, /*create=*/false);
  if (!root) {
    llvm::consumeError(root.takeError());
    if (!llvm::sys::fs::exists(dir))
      return llvm::Error::success(); // created with the first prompt
    return llvm::createStringError("mailbox '" + sanitizeForTerminal(dir) +
                                   "' is not a directory");
  }
  for (StringRef sub : {"pending", "replies"}) {
    if (root->kind(sub) == SafeDir::Kind::Missing)
      continue;
    llvm::Expected<SafeDir> d = root->sub(sub, /*create=*/false);
    if (!d)
      return llvm::createStringError("mailbox '" + sanitizeForTerminal(dir) +
                                     "': " + llvm::toString(d.takeError()));
  }
  return llvm::Error::success();
}

unsigned countPending(StringRef dir) {
  llvm::Expected<SafeDir> root = SafeDir::open(dir, /*create=*/false);
  if (!root) {
    llvm::consumeError(root.takeError());
    return 0;
  }
  llvm::Expected<SafeDir> pending = root->sub("pending", /*create=*/false);
  llvm::Expected<std::vector<std::string>> names =
      pending ? pending->list() : llvm::Expected<std::vector<std::string>>(pending.takeError());
  if (!names) {
    llvm::consumeError(names.takeError());
    return 0;
  }
  // No replies/ yet: every prompt waits.
  llvm::Expected<SafeDir> replies = root->sub("replies", /*create=*/false);
  if (!replies)
    llvm::consumeError(replies.takeError());
  unsigned n = 0;
  for (StringRef name : *names)
    if (name.ends_with(".json") && isMailboxKey(name.drop_back(5)))
      n += !replies ||
           replies->kind((name.drop_back(5) + ".md").str()) == SafeDir::Kind::Missing;
  return n;
}

namespace {
/// A relayed request's sampling parameters must be sane (the sidecar is someone else's file).
std::optional<std::string> requestFromSidecar(const json::Object &side, Request &r) {
  r.system = side.getString("system").value_or("").str();
  r.temperature = side.getNumber("temperature").value_or(1.0);
  r.maxTokens = side.getInteger("max_tokens").value_or(4096);
  int64_t sample = side.getInteger("sample").value_or(0);
  if (!std::isfinite(r.temperature) || r.temperature < 0 || r.temperature > 10)
    return "temperature out of range";
  if (r.maxTokens < 1 || r.maxTokens > 10'000'000)
    return "max_tokens out of range";
  if (sample < 0 || sample > 1'000'000)
    return "sample out of range";
  r.sample = static_cast<unsigned>(sample);
  r.task = side.getString("task").value_or("").str();
  r.strategy = side.getString("strategy").value_or("").str();
  r.op = side.getString("operator").value_or("").str();
  return std::nullopt;
}
} // namespace

llvm::Expected<RelayStats> relayMailbox(StringRef dir, Client &client,
                                        const RelayOptions &options) {
  RelayStats stats;
  {
    llvm::Expected<SafeDir> root = SafeDir::open(dir, /*create=*/false);
    if (!root || root->kind("pending") == SafeDir::Kind::Missing) {
      if (!root)
        llvm::consumeError(root.takeError());
      return llvm::createStringError("'" + sanitizeForTerminal(dir) +
                                     "' is not a mailbox (no pending/)");
    }
    // replies/ is created here when missing; both must be real directories.
    if (llvm::Error e = root->sub("replies", /*create=*/true).takeError())
      return llvm::createStringError("mailbox '" + sanitizeForTerminal(dir) +
                                     "': " + llvm::toString(std::move(e)));
  }
  std::set<std::string> seen;
  auto idleSince = std::chrono::steady_clock::now();
  while (true) {
    llvm::Expected<Layout> box = openMailbox(dir, /*create=*/false);
    if (!box)
      return box.takeError();
    llvm::Expected<std::vector<std::string>> names = box->pending.list();
    if (!names)
      return llvm::createStringError("mailbox '" + sanitizeForTerminal(dir) +
                                     "': " + llvm::toString(names.takeError()));
    llvm::sort(*names);
    struct Job {
      std::string key, sidecar;
      json::Object side;
      std::shared_future<Result> result;
    };
    std::vector<Job> jobs;
    for (const std::string &name : *names) {
      StringRef n(name);
      if (!n.ends_with(".json") || !seen.insert(name).second)
        continue;
      auto skip = [&](const std::string &why) {
        ++stats.skipped;
        stats.problems.push_back("pending/" + sanitizeForTerminal(name) + ": " + why +
                                 "; skipped");
      };
      std::string key = n.drop_back(5).str();
      if (!isMailboxKey(key)) {
        skip("not a mailbox file name (<64 hex digits>.json)");
        continue;
      }
      if (box->replies.kind(key + ".md") != SafeDir::Kind::Missing)
        continue; // answered
      llvm::Expected<json::Object> side = readSidecar(box->pending, key);
      if (!side) {
        skip(llvm::toString(side.takeError()));
        continue;
      }
      llvm::Expected<std::string> prompt = box->pending.read(key + ".prompt.md",
                                                             kMaxPromptFileBytes);
      if (!prompt) {
        skip("its prompt " + llvm::toString(prompt.takeError()));
        continue;
      }
      if (!json::isUTF8(*prompt)) {
        skip("its prompt is not UTF-8");
        continue;
      }
      Request r;
      if (std::optional<std::string> bad = requestFromSidecar(*side, r)) {
        skip(*bad);
        continue;
      }
      r.prompt = std::move(*prompt);
      jobs.push_back({key, name, std::move(*side), client.submit(r)});
    }
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
      if (llvm::Error e = box->pending.writeAtomically(
              j.sidecar, llvm::formatv("{0:2}", json::Value(std::move(j.side))).str()))
        return std::move(e);
      if (llvm::Error e = box->replies.writeAtomically(j.key + ".md", r.reply.text))
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

llvm::Expected<std::string> readMailboxReply(StringRef dir, StringRef key) {
  if (!isMailboxKey(key))
    return llvm::createStringError("not a mailbox key: '" + sanitizeForTerminal(key) + "'");
  llvm::Expected<Layout> box = openMailbox(dir, /*create=*/false);
  if (!box)
    return box.takeError();
  return readReply(box->replies, key);
}

llvm::Expected<json::Object> readMailboxSidecar(StringRef dir, StringRef key) {
  if (!isMailboxKey(key))
    return llvm::createStringError("not a mailbox key: '" + sanitizeForTerminal(key) + "'");
  llvm::Expected<Layout> box = openMailbox(dir, /*create=*/false);
  if (!box)
    return box.takeError();
  llvm::Expected<json::Object> side = readSidecar(box->pending, key);
  if (!side)
    return llvm::createStringError(box->pending.display(key.str() + ".json") + ": " +
                                   llvm::toString(side.takeError()));
  return side;
}

llvm::Expected<std::vector<std::string>> answeredPrompts(StringRef dir) {
  llvm::Expected<Layout> box = openMailbox(dir, /*create=*/false);
  if (!box)
    return box.takeError();
  llvm::Expected<std::vector<std::string>> names = box->replies.list();
  if (!names)
    return llvm::createStringError("mailbox '" + sanitizeForTerminal(dir) +
                                   "': " + llvm::toString(names.takeError()));
  std::vector<std::string> keys;
  for (StringRef name : *names)
    if (name.ends_with(".md") && isMailboxKey(name.drop_back(3)) &&
        box->pending.kind((name.drop_back(3) + ".json").str()) != SafeDir::Kind::Missing)
      keys.push_back(name.drop_back(3).str());
  llvm::sort(keys);
  return keys;
}

std::vector<std::string> strayReplies(StringRef dir) {
  std::vector<std::string> out;
  llvm::Expected<SafeDir> root = SafeDir::open(dir, /*create=*/false);
  if (!root) {
    llvm::consumeError(root.takeError());
    return out;
  }
  llvm::Expected<SafeDir> replies = root->sub("replies", /*create=*/false);
  llvm::Expected<std::vector<std::string>> names =
      replies ? replies->list() : llvm::Expected<std::vector<std::string>>(replies.takeError());
  if (!names) {
    llvm::consumeError(names.takeError());
    return out;
  }
  // No pending/ yet: every reply is stray.
  llvm::Expected<SafeDir> pending = root->sub("pending", /*create=*/false);
  if (!pending)
    llvm::consumeError(pending.takeError());
  for (StringRef name : *names)
    if (name.ends_with(".md") &&
        (!isMailboxKey(name.drop_back(3)) || !pending ||
         pending->kind((name.drop_back(3) + ".json").str()) == SafeDir::Kind::Missing))
      out.push_back(sanitizeForTerminal(name));
  llvm::sort(out);
  return out;
}

} // namespace evo::llm
