//===- Backend.h - where LLM replies come from ---------------------*- C++ -*-===//
//
// A Backend makes one attempt at turning a prompt into a reply: an OpenAI-compatible chat
// completions endpoint, Anthropic's Messages API, or a local command (`cmd:`). Retries, budgets,
// pricing and the response cache are the Client's (Client.h). API keys are read from the
// environment at each attempt and never stored anywhere. docs/llm.md.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_LLM_BACKEND_H
#define EVO_LLM_BACKEND_H

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace evo::llm {

/// The reply length asked for unless configured (`llm-max-tokens`): room for a tensor-core
/// kernel in MLIR (4096 cut such replies short); current models allow 16k or more.
constexpr int64_t kDefaultMaxTokens = 16384;

struct Request {
  std::string system; // the system prompt (may be empty)
  std::string prompt; // the user message
  double temperature = 1.0;
  int64_t maxTokens = kDefaultMaxTokens;
  /// Distinguishes repeated samples of the same prompt (part of the cache key).
  unsigned sample = 0;
  // Context for mailboxes and logs; not part of the cache key.
  std::string task, strategy, op;
  std::vector<int64_t> parents;
  /// Set by the Client: the cache key (a mailbox names its files by it).
  std::string key;
  /// What the reply builds on, in the evolution engine's form (the parent's kernels, launches
  /// and compile options): a mailbox stores it with the prompt, as "parent_variant", so that a
  /// reply can be checked where it is written (`evo-opt llm-check`). Not part of the cache key.
  std::optional<llvm::json::Object> parentVariant;
};

struct Usage {
  int64_t promptTokens = 0, completionTokens = 0;
  double cost = 0;       // in the price table's currency (USD by default)
  bool reported = false; // the backend reported token counts
};
/// {"prompt_tokens", "completion_tokens", "cost", "reported"} (the response cache's "usage";
/// the mailbox sidecar's leaves "reported" out). fromJSON reads the keys that are present, each
/// with its type (integers, a number, a boolean); checkUsage (Client.h) judges the values.
llvm::json::Value toJSON(const Usage &usage);
bool fromJSON(const llvm::json::Value &value, Usage &usage, llvm::json::Path path);

struct Reply {
  std::string text;
  std::string model; // as the server reported it (else the configured one)
  Usage usage;
  unsigned attempts = 0;
  bool cached = false;
  double seconds = 0;
};

/// One attempt's outcome, as the transport saw it.
struct Attempt {
  bool ok = false;
  Reply reply;
  int httpStatus = 0;     // 0 when there was no HTTP response
  bool transient = false; // worth retrying (timeouts, 429, 5xx, truncated or malformed bodies)
  double retryAfterSeconds = -1;
  std::string error;
  /// The request was handed over and its reply will come later (a mailbox).
  bool pending = false;
};

class Backend {
public:
  virtual ~Backend();
  /// Kind, endpoint and model, for cache keys and reports (never the key).
  virtual std::string identity() const = 0;
  virtual std::string model() const = 0;
  virtual Attempt attempt(const Request &request, double timeoutSeconds) = 0;
  /// Replies are produced elsewhere (a mailbox): budgets are the relay's, not this run's.
  virtual bool answersElsewhere() const { return false; }
  /// The environment variable holding this backend's key ("" when it has none): its value is
  /// redacted from everything the Client returns (Untrusted.h, redactSecrets).
  virtual std::string keyEnvironment() const { return ""; }
};

struct BackendOptions {
  /// "openai", "anthropic", "cmd:<program> [args...]" or "mailbox:<dir>".
  std::string spec;
  std::string model;
  /// Default: https://api.openai.com/v1, https://api.anthropic.com.
  std::string baseUrl;
  /// The environment variable holding the key. Default OPENAI_API_KEY / ANTHROPIC_API_KEY; an
  /// unset variable sends no key (local servers such as vLLM, llama.cpp, Ollama need none).
  std::string keyEnv;
  /// mailbox: seconds to wait for a reply (0: leave the request pending).
  double waitSeconds = 0;
  /// HTTP: a response body over this many bytes aborts the transfer (that attempt fails, not
  /// retried); cmd: a longer output is refused.
  uint64_t maxReplyBytes = 8ull << 20;
};

llvm::Expected<std::unique_ptr<Backend>> createBackend(const BackendOptions &options);

/// Splits a `cmd:` argument string the way a POSIX shell splits words (llvm::cl's
/// TokenizeGNUCommandLine: white space separates, '...' and "..." quote, a backslash escapes the
/// next character) and nothing else: no variables, globs, pipes or redirections. An unterminated
/// quote and an empty command are errors.
llvm::Expected<std::vector<std::string>> splitCommand(llvm::StringRef text);

/// Parses a Retry-After header value: delta-seconds or an HTTP date; -1 when unusable.
double parseRetryAfter(llvm::StringRef value);

} // namespace evo::llm

#endif
