//===- Client.h - retries, budgets, prices and the response cache -*- C++ -*-===//
//
// The Client wraps a Backend with what real endpoints need: a timeout per attempt, retries with
// exponential backoff and jitter that honour Retry-After, several requests in flight, token usage
// priced from a user-editable table, budgets (calls, tokens, money) that stop cleanly, and a
// response cache keyed by everything that determines a reply. docs/llm.md.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_LLM_CLIENT_H
#define EVO_LLM_CLIENT_H

#include "evo/LLM/Backend.h"
#include "llvm/Support/JSON.h"
#include <future>
#include <map>
#include <mutex>
#include <optional>

namespace llvm {
class ThreadPoolInterface;
}

namespace evo::llm {

/// Prices per million tokens, by model name (exact, else the longest matching prefix).
class PriceTable {
public:
  struct Price {
    double inputPerMTok = 0, outputPerMTok = 0;
  };
  /// The table shipped with evo-opt (share/evo-opt/prices.json).
  static PriceTable builtin();
  /// A user's table: {"currency": "USD", "models": {"<name>": {"input_per_mtok": x,
  /// "output_per_mtok": y}}}.
  static llvm::Expected<PriceTable> load(llvm::StringRef path);
  static llvm::Expected<PriceTable> parse(llvm::StringRef json);
  std::optional<Price> lookup(llvm::StringRef model) const;
  double cost(llvm::StringRef model, int64_t promptTokens, int64_t completionTokens) const;
  const std::string &currency() const { return currencyName; }

private:
  std::map<std::string, Price> prices;
  std::string currencyName = "USD";
};

/// Replies stored by key, one JSON file each, written atomically (temp + rename). The directory
/// may come from another run (replay-run): entries are read like mailbox files (Untrusted.h), and
/// an entry that is a link, special, too large, damaged or reports an impossible usage is a miss.
class ResponseCache {
public:
  explicit ResponseCache(std::string dir) : dir(std::move(dir)) {}
  std::optional<Reply> get(llvm::StringRef key) const;
  llvm::Error put(llvm::StringRef key, const Request &request, llvm::StringRef identity,
                  const Reply &reply) const;
  const std::string &directory() const { return dir; }

private:
  std::string dir;
};

/// The cache key: SHA-256 of (backend identity, model, system, prompt, temperature, max tokens,
/// sample index).
std::string cacheKey(llvm::StringRef identity, llvm::StringRef model, const Request &request);

/// The JSON object in file `path`; nullopt when it cannot be read or holds no JSON object (a
/// damaged file is a miss, never an error). Read with readRegularFileCapped (no symbolic link, a
/// regular file of at most kMaxJsonFileBytes).
std::optional<llvm::json::Object> readJsonObject(llvm::StringRef path);

/// Why a reported usage cannot be true (negative or absurd token counts, a cost that is negative,
/// not finite or absurd); nullopt when it is plausible. The Client rejects such a reply (an error
/// of that call, counted as a failure) instead of adding it to the budgets.
std::optional<std::string> checkUsage(const Usage &usage);
constexpr int64_t kMaxTokensPerReply = 100'000'000;
constexpr double kMaxCostPerReply = 1e6;

/// a + b, clamped to int64_t's range.
int64_t saturatingAdd(int64_t a, int64_t b);

struct ClientOptions {
  double timeoutSeconds = 60;
  unsigned maxRetries = 4;
  double backoffBaseSeconds = 1, backoffMaxSeconds = 60;
  unsigned parallel = 4;
  /// Budgets, 0 = unlimited. Calls count requests sent to the backend (cache hits are free).
  int64_t maxCalls = 0, maxTokens = 0;
  double maxCost = 0;
  /// Where replies are cached (empty: no cache). With `replay`, only the cache answers.
  std::string cacheDir;
  bool replay = false;
  uint64_t seed = 1; // of the backoff jitter
};

struct Result {
  /// Pending: handed to a mailbox, the reply comes later.
  enum class Status { Ok, Failed, BudgetExhausted, ReplayMiss, Pending };
  Status status = Status::Failed;
  Reply reply;
  std::string key;
  std::string error;
  bool ok() const { return status == Status::Ok; }
};

struct Totals {
  int64_t calls = 0, cacheHits = 0, retries = 0, failures = 0;
  int64_t promptTokens = 0, completionTokens = 0;
  double cost = 0;
  llvm::json::Object toJson() const;
};

class Client {
public:
  Client(std::unique_ptr<Backend> backend, ClientOptions options, PriceTable prices);
  ~Client();

  std::string key(const Request &request) const;
  /// Answers from the cache, else from the backend with retries; never throws.
  Result complete(const Request &request);
  /// The same on a worker thread (up to `parallel` at once).
  std::shared_future<Result> submit(Request request);

  Totals totals() const;
  bool budgetExhausted() const;
  const Backend &backend() const { return *impl; }
  const PriceTable &priceTable() const { return prices; }

  /// Sleeps for the backoff (tests replace it to run instantly).
  std::function<void(double seconds)> sleep;

  /// What the Client does to every text it returns, stores or caches: the backend's key, Bearer
  /// tokens and x-api-key values redacted; an error message on one line, at most 2000 bytes, a
  /// reply with "\r\n" as "\n"; terminal control characters made visible (Untrusted.h).
  std::string cleanError(llvm::StringRef text) const;
  std::string cleanReply(llvm::StringRef text) const;

private:
  std::optional<std::string> reserveCall();
  double backoff(unsigned retry, double retryAfter);

  std::unique_ptr<Backend> impl;
  ClientOptions opts;
  PriceTable prices;
  std::optional<ResponseCache> cache;
  std::unique_ptr<llvm::ThreadPoolInterface> pool;
  mutable std::mutex mutex;
  Totals sums;
  uint64_t jitterState;
};

} // namespace evo::llm

#endif
