//===- Client.cpp - retries, budgets, prices and the response cache ----------===//

#include "evo/LLM/Client.h"
#include "evo/LLM/Untrusted.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/raw_ostream.h"
#include <chrono>
#include <cmath>
#include <limits>
#include <thread>

namespace json = llvm::json;
using llvm::StringRef;

namespace evo::llm {

namespace {
std::string sha256(StringRef data) {
  std::array<uint8_t, 32> h = llvm::SHA256::hash(llvm::arrayRefFromStringRef(data));
  return llvm::toHex(h, /*LowerCase=*/true);
}

// The table shipped with evo-opt (share/evo-opt/prices.json, embedded at build time).
const char *kBuiltinPrices =
#include "prices.json.inc"
    ;
} // namespace

//===----------------------------------------------------------------------===//
// Prices
//===----------------------------------------------------------------------===//

PriceTable PriceTable::builtin() {
  llvm::Expected<PriceTable> t = parse(kBuiltinPrices);
  if (!t) {
    llvm::consumeError(t.takeError());
    return PriceTable();
  }
  return *t;
}

llvm::Expected<PriceTable> PriceTable::load(StringRef path) {
  // The user named this file: a link is followed, but it must be a regular file of sane size.
  llvm::Expected<std::string> text = readRegularFileCapped(path, 4 << 20, /*followSymlink=*/true);
  if (!text)
    return llvm::createStringError("cannot read the price table: " +
                                   llvm::toString(text.takeError()));
  llvm::Expected<PriceTable> t = parse(*text);
  if (!t)
    return llvm::createStringError("price table '" + sanitizeForTerminal(path) +
                                   "': " + llvm::toString(t.takeError()));
  return t;
}

llvm::Expected<PriceTable> PriceTable::parse(StringRef text) {
  llvm::Expected<json::Value> v = json::parse(text);
  if (!v)
    return v.takeError();
  const json::Object *o = v->getAsObject();
  const json::Object *models = o ? o->getObject("models") : nullptr;
  if (!models)
    return llvm::createStringError("expected {\"models\": {\"<name>\": {\"input_per_mtok\": x, "
                                   "\"output_per_mtok\": y}}}");
  PriceTable t;
  if (o->getString("currency"))
    t.currencyName = o->getString("currency")->str();
  for (const auto &[name, entry] : *models) {
    const json::Object *e = entry.getAsObject();
    std::optional<double> in = e ? e->getNumber("input_per_mtok") : std::nullopt;
    std::optional<double> out = e ? e->getNumber("output_per_mtok") : std::nullopt;
    if (!in || !out || *in < 0 || *out < 0)
      return llvm::createStringError("model '" + name.str() +
                                     "' needs non-negative input_per_mtok and output_per_mtok");
    t.prices[name.str()] = {*in, *out};
  }
  return t;
}

std::optional<PriceTable::Price> PriceTable::lookup(StringRef model) const {
  auto it = prices.find(model.str());
  if (it != prices.end())
    return it->second;
  // Dated or suffixed names ("gpt-4.1-2025-04-14") take the longest listed prefix.
  std::optional<Price> best;
  size_t bestLen = 0;
  for (const auto &[name, price] : prices)
    if (model.starts_with(name) && name.size() > bestLen) {
      best = price;
      bestLen = name.size();
    }
  return best;
}

double PriceTable::cost(StringRef model, int64_t promptTokens, int64_t completionTokens) const {
  std::optional<Price> p = lookup(model);
  if (!p)
    return 0;
  return (promptTokens * p->inputPerMTok + completionTokens * p->outputPerMTok) / 1e6;
}

//===----------------------------------------------------------------------===//
// Cache
//===----------------------------------------------------------------------===//

std::string cacheKey(StringRef identity, StringRef model, const Request &r) {
  json::Object o{{"identity", identity},       {"model", model},
                 {"system", r.system},         {"prompt", r.prompt},
                 {"temperature", r.temperature}, {"max_tokens", r.maxTokens},
                 {"sample", static_cast<int64_t>(r.sample)}};
  return sha256(llvm::formatv("{0}", json::Value(std::move(o))).str());
}

std::optional<json::Object> readJsonObject(StringRef path) {
  return parseJsonObject(readRegularFileCapped(path, kMaxJsonFileBytes));
}

std::optional<std::string> checkUsage(const Usage &u) {
  if (u.promptTokens < 0 || u.completionTokens < 0)
    return llvm::formatv("negative token count: {0} prompt, {1} completion", u.promptTokens,
                         u.completionTokens)
        .str();
  if (u.promptTokens > kMaxTokensPerReply || u.completionTokens > kMaxTokensPerReply)
    return llvm::formatv("{0} prompt, {1} completion tokens, over {2} for one reply",
                         u.promptTokens, u.completionTokens, kMaxTokensPerReply)
        .str();
  if (!std::isfinite(u.cost) || u.cost < 0 || u.cost > kMaxCostPerReply)
    return llvm::formatv("cost {0}", u.cost).str();
  return std::nullopt;
}

int64_t saturatingAdd(int64_t a, int64_t b) {
  int64_t r;
  if (!__builtin_add_overflow(a, b, &r))
    return r;
  return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
}

std::optional<Reply> ResponseCache::get(StringRef key) const {
  if (!isPlainFileName(key))
    return std::nullopt;
  llvm::Expected<SafeDir> d = SafeDir::open(dir, /*create=*/false);
  if (!d) {
    llvm::consumeError(d.takeError());
    return std::nullopt;
  }
  std::optional<json::Object> entry =
      parseJsonObject(d->read((key + ".json").str(), kMaxJsonFileBytes, /*allowHardLinks=*/true));
  const json::Object *o = entry ? &*entry : nullptr;
  if (!o || o->getString("key") != key || !o->getString("text"))
    return std::nullopt;
  Reply r;
  r.text = o->getString("text")->str();
  r.model = o->getString("model").value_or("").str();
  json::Path::Root root("usage");
  if (const json::Value *u = o->get("usage"); u && !fromJSON(*u, r.usage, root)) {
    llvm::consumeError(root.getError());
    return std::nullopt; // a damaged (or forged) entry
  }
  if (checkUsage(r.usage))
    return std::nullopt; // a damaged (or forged) entry
  r.cached = true;
  return r;
}

llvm::Error ResponseCache::put(StringRef key, const Request &request, StringRef identity,
                               const Reply &reply) const {
  if (!isPlainFileName(key))
    return llvm::createStringError("LLM cache: not a key: '" + sanitizeForTerminal(key) + "'");
  llvm::Expected<SafeDir> d = SafeDir::open(dir, /*create=*/true);
  if (!d)
    return llvm::createStringError("LLM cache: " + llvm::toString(d.takeError()));
  json::Object o{{"format", "evo-llm-cache/1"},
                 {"key", key},
                 {"identity", identity},
                 {"model", reply.model},
                 {"sample", static_cast<int64_t>(request.sample)},
                 {"task", request.task},
                 {"strategy", request.strategy},
                 {"operator", request.op},
                 {"prompt_sha256", sha256(request.system + "\n" + request.prompt)},
                 {"text", reply.text},
                 {"usage", reply.usage}};
  return d->writeAtomically((key + ".json").str(),
                            llvm::formatv("{0:2}", json::Value(std::move(o))).str());
}

//===----------------------------------------------------------------------===//
// Client
//===----------------------------------------------------------------------===//

json::Object Totals::toJson() const {
  return json::Object{{"calls", calls},
                      {"cache_hits", cacheHits},
                      {"retries", retries},
                      {"failures", failures},
                      {"prompt_tokens", promptTokens},
                      {"completion_tokens", completionTokens},
                      {"cost", cost}};
}

Client::Client(std::unique_ptr<Backend> backend, ClientOptions options, PriceTable prices)
    : impl(std::move(backend)), opts(std::move(options)), prices(std::move(prices)),
      jitterState(opts.seed * 0x9E3779B97F4A7C15ull + 1) {
  if (!opts.cacheDir.empty())
    cache.emplace(opts.cacheDir);
  pool = std::make_unique<llvm::StdThreadPool>(
      llvm::hardware_concurrency(std::max(1u, opts.parallel)));
  sleep = [](double s) {
    std::this_thread::sleep_for(std::chrono::duration<double>(s));
  };
}

Client::~Client() { pool->wait(); }

std::string Client::key(const Request &request) const {
  return cacheKey(impl->identity(), impl->model(), request);
}

Totals Client::totals() const {
  std::lock_guard<std::mutex> lock(mutex);
  return sums;
}

bool Client::budgetExhausted() const {
  std::lock_guard<std::mutex> lock(mutex);
  return (opts.maxCalls && sums.calls >= opts.maxCalls) ||
         (opts.maxTokens &&
          saturatingAdd(sums.promptTokens, sums.completionTokens) >= opts.maxTokens) ||
         (opts.maxCost > 0 && sums.cost >= opts.maxCost);
}

/// Counts a call against the budget, or says which budget is spent.
std::optional<std::string> Client::reserveCall() {
  std::lock_guard<std::mutex> lock(mutex);
  if (opts.maxCalls && sums.calls >= opts.maxCalls)
    return "the LLM call budget (" + std::to_string(opts.maxCalls) + " calls) is spent";
  int64_t tokens = saturatingAdd(sums.promptTokens, sums.completionTokens);
  if (opts.maxTokens && tokens >= opts.maxTokens)
    return "the LLM token budget (" + std::to_string(opts.maxTokens) + " tokens) is spent";
  if (opts.maxCost > 0 && sums.cost >= opts.maxCost)
    return llvm::formatv("the LLM cost budget ({0:f2} {1}) is spent", opts.maxCost,
                         prices.currency())
        .str();
  ++sums.calls;
  return std::nullopt;
}

double Client::backoff(unsigned retry, double retryAfter) {
  if (retryAfter >= 0)
    return std::min(retryAfter, opts.backoffMaxSeconds);
  double base = opts.backoffBaseSeconds * std::pow(2.0, retry);
  uint64_t x;
  {
    std::lock_guard<std::mutex> lock(mutex);
    jitterState ^= jitterState << 13;
    jitterState ^= jitterState >> 7;
    jitterState ^= jitterState << 17;
    x = jitterState;
  }
  // Full jitter in [base/2, base]: concurrent clients do not retry in lockstep.
  double u = static_cast<double>(x % 1000000) / 1e6;
  return std::min(opts.backoffMaxSeconds, base * (0.5 + 0.5 * u));
}

Result Client::complete(const Request &request) {
  Result res;
  res.key = key(request);
  if (cache) {
    if (std::optional<Reply> hit = cache->get(res.key)) {
      hit->text = cleanReply(hit->text); // the cache may be another run's
      hit->model = cleanError(StringRef(hit->model).take_front(200));
      std::lock_guard<std::mutex> lock(mutex);
      ++sums.cacheHits;
      res.status = Result::Status::Ok;
      res.reply = std::move(*hit);
      return res;
    }
  }
  if (opts.replay) {
    res.status = Result::Status::ReplayMiss;
    res.error = "replay: no cached reply for prompt " + res.key;
    return res;
  }
  if (!impl->answersElsewhere())
    if (std::optional<std::string> spent = reserveCall()) {
      res.status = Result::Status::BudgetExhausted;
      res.error = *spent;
      return res;
    }
  Request keyed = request;
  keyed.key = res.key;
  std::string lastError;
  for (unsigned attempt = 0; attempt <= opts.maxRetries; ++attempt) {
    if (attempt > 0) {
      std::lock_guard<std::mutex> lock(mutex);
      ++sums.retries;
    }
    Attempt a = impl->attempt(keyed, opts.timeoutSeconds);
    if (a.pending) {
      res.status = Result::Status::Pending;
      res.error = cleanError(a.error);
      return res;
    }
    if (a.ok) {
      a.reply.attempts = attempt + 1;
      // Server text: no key, no terminal controls, in everything stored or printed from here.
      a.reply.text = cleanReply(a.reply.text);
      a.reply.model = cleanError(StringRef(a.reply.model).take_front(200));
      if (a.reply.model.empty())
        a.reply.model = impl->model();
      if (std::optional<std::string> bad = checkUsage(a.reply.usage)) {
        lastError = "the server reported an impossible usage (" + *bad + "): reply rejected";
        break; // counted as a failure; its tokens are never added to the budgets
      }
      // Priced as the model the server named when the table knows it (dated names match by
      // prefix), else as the configured model (gateways may report other names).
      std::string priced = prices.lookup(a.reply.model) ? a.reply.model : impl->model();
      if (!impl->answersElsewhere() || a.reply.usage.cost == 0)
        a.reply.usage.cost =
            prices.cost(priced, a.reply.usage.promptTokens, a.reply.usage.completionTokens);
      if (!std::isfinite(a.reply.usage.cost)) // a price table with absurd prices
        a.reply.usage.cost = std::numeric_limits<double>::max();
      if (impl->answersElsewhere()) {
        std::lock_guard<std::mutex> lock(mutex);
        ++sums.calls; // answered by the relay: counted when it arrives
      }
      {
        std::lock_guard<std::mutex> lock(mutex);
        sums.promptTokens = saturatingAdd(sums.promptTokens, a.reply.usage.promptTokens);
        sums.completionTokens =
            saturatingAdd(sums.completionTokens, a.reply.usage.completionTokens);
        sums.cost += a.reply.usage.cost;
        if (!std::isfinite(sums.cost))
          sums.cost = std::numeric_limits<double>::max();
      }
      if (cache)
        if (llvm::Error e = cache->put(res.key, request, impl->identity(), a.reply))
          llvm::consumeError(std::move(e)); // a cache that cannot be written only costs replays
      res.status = Result::Status::Ok;
      res.reply = std::move(a.reply);
      return res;
    }
    lastError = cleanError(a.error);
    if (!a.transient || attempt == opts.maxRetries)
      break;
    sleep(backoff(attempt, a.retryAfterSeconds));
  }
  {
    std::lock_guard<std::mutex> lock(mutex);
    ++sums.failures;
  }
  res.status = Result::Status::Failed;
  res.error = lastError;
  return res;
}

std::string Client::cleanError(StringRef text) const {
  std::string t = redactSecrets(text, environmentSecrets(impl->keyEnvironment()));
  for (char &c : t)
    if (c == '\n' || c == '\t' || c == '\r')
      c = ' ';
  if (t.size() > 2000)
    t = t.substr(0, 2000) + "... (" + std::to_string(t.size() - 2000) + " more bytes)";
  return sanitizeForTerminal(t);
}

std::string Client::cleanReply(StringRef text) const {
  return sanitizeReplyText(redactSecrets(text, environmentSecrets(impl->keyEnvironment())));
}

std::shared_future<Result> Client::submit(Request request) {
  return pool->async([this, request = std::move(request)] { return complete(request); });
}

} // namespace evo::llm
