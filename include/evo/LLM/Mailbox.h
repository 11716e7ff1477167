//===- Mailbox.h - LLM replies answered elsewhere, later ------------*- C++ -*-===//
//
// `llm=mailbox:DIR` splits the evolution (on a GPU node without internet) from the LLM calls
// (on a login node with the API key, a batch API, or a person):
//
//   DIR/pending/<key>.prompt.md   the user prompt
//   DIR/pending/<key>.json        sidecar: key, system prompt, sampling parameters, task,
//                                 strategy, operator, parents; the relay adds the usage
//   DIR/replies/<key>.md          the reply, written atomically (temp + rename)
//
// <key> is the response-cache key of the prompt (Client.h), so a reply answers exactly one
// prompt. Whoever can write into the mailbox is untrusted (Untrusted.h): pending/ and replies/
// must be real directories, files are read without following links and with size caps, only
// names of the form <64 hex digits>.<ext> are used, and every write is atomic. The run either waits for replies (llm-wait seconds) or, with llm-wait=0, checkpoints
// and exits with kPausedExitCode; `resume=true` consumes whatever replies exist and asks again
// for the others. `evo-opt llm-relay DIR ...` answers a mailbox with any backend. docs/llm.md.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_LLM_MAILBOX_H
#define EVO_LLM_MAILBOX_H

#include "evo/LLM/Client.h"

namespace evo::llm {

/// evo-opt's exit status when a run paused with prompts waiting in a mailbox.
constexpr int kPausedExitCode = 75; // EX_TEMPFAIL: try again later
/// Replies larger than this are rejected (with a reason, never a crash).
constexpr uint64_t kMaxReplyBytes = 1 << 20;

/// The mailbox backend; `waitSeconds` 0 means do not wait (the request stays pending). While
/// waiting, it looks for the reply at growing intervals (50 ms doubling up to `pollSeconds`).
std::unique_ptr<Backend> createMailboxBackend(std::string dir, double waitSeconds,
                                              double pollSeconds = 0.5);

/// An error when `dir` exists but its pending/ or replies/ is not a real directory (a symbolic
/// link, a file): such a mailbox would move reads or writes elsewhere. A missing mailbox is fine
/// (it is created on the first prompt).
llvm::Error checkMailbox(llvm::StringRef dir);

/// Whether `name` is a mailbox key (a response-cache key: 64 lowercase hex digits).
bool isMailboxKey(llvm::StringRef name);

struct RelayOptions {
  /// Keep watching for new prompts until this many seconds pass without one (0: one pass).
  double idleSeconds = 0;
};

struct RelayStats {
  unsigned answered = 0, failed = 0, skipped = 0;
  std::vector<std::string> problems; // one line each, for the user
};

/// Answers the mailbox's pending prompts that have no reply yet with `client` (retries,
/// budgets, cache, accounting and parallelism are the client's), writing the usage into the
/// sidecars, then the replies, atomically.
llvm::Expected<RelayStats> relayMailbox(llvm::StringRef dir, Client &client,
                                        const RelayOptions &options);

/// Prompts in the mailbox without a reply.
unsigned countPending(llvm::StringRef dir);

/// The sidecar of prompt `key` (pending/<key>.json) as the relay reads it: a regular file (never
/// through a link) of at most kMaxJsonFileBytes holding a JSON object whose "key" is `key`.
llvm::Expected<llvm::json::Object> readMailboxSidecar(llvm::StringRef dir, llvm::StringRef key);

/// The reply to prompt `key` (replies/<key>.md) as a run reads it, before the client cleans it
/// (Client::cleanReply): a regular file (never through a link) of at most kMaxReplyBytes, UTF-8.
/// The error is the reason the run records for it.
llvm::Expected<std::string> readMailboxReply(llvm::StringRef dir, llvm::StringRef key);

/// The keys of the mailbox's replies that answer one of its prompts, sorted.
llvm::Expected<std::vector<std::string>> answeredPrompts(llvm::StringRef dir);

/// Reply files whose key names no prompt of the mailbox (they are never used), their names made
/// safe to print (sanitizeForTerminal).
std::vector<std::string> strayReplies(llvm::StringRef dir);

} // namespace evo::llm

#endif
