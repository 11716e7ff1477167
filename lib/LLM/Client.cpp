//===- Client.cpp - retries, budgets, prices and the response cache ----------===//

#include "evo/LLM/Client.h"
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
  auto buf = llvm::MemoryBuffer::getFile(path);
  if (!buf)
    return llvm::createStringError("cannot read the price table '" + path.str() +
                                   "': " + buf.getError().message());
  llvm::Expected<PriceTable> t = parse((*buf)->getBuffer());
  if (!t)
    return llvm::createStringError("price table '" + path.str() +
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
  auto buf = llvm::MemoryBuffer::getFile(path);
  if (!buf)
    return std::nullopt;
  llvm::Expected<json::Value> v = json::parse((*buf)->getBuffer());
  if (!v) {
    llvm::consumeError(v.takeError());
    return std::nullopt;
  }
  if (json::Object *o = v->getAsObject())
    return std::move(*o);
  return std::nullopt;
}

std::optional<Reply> ResponseCache::get(StringRef key) const {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, key + ".json");
  std::optional<json::Object> entry = readJsonObject(path);
  const json::Object *o = entry ? &*entry : nullptr;
  if (!o || o->getString("key") != key || !o->getString("text"))
    return std::nullopt;
  Reply r;
  r.text = o->getString("text")->str();
  r.model = o->getString("model").value_or("").str();
  if (const json::Object *u = o->getObject("usage")) {
    r.usage.promptTokens = u->getInteger("prompt_tokens").value_or(0);
    r.usage.completionTokens = u->getInteger("completion_tokens").value_or(0);
    r.usage.cost = u->getNumber("cost").value_or(0);
    r.usage.reported = u->getBoolean("reported").value_or(false);
  }
  r.cached = true;
  return r;
}

llvm::Error ResponseCache::put(StringRef key, const Request &request, StringRef identity,
                               const Reply &reply) const {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return llvm::createStringError("cannot create the LLM cache '" + dir + "': " + ec.message());
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, key + ".json");
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
                 {"usage", json::Object{{"prompt_tokens", reply.usage.promptTokens},
                                        {"completion_tokens", reply.usage.completionTokens},
                                        {"cost", reply.usage.cost},
                                        {"reported", reply.usage.reported}}}};
  // writeToOutput writes a temporary file and renames it into place.
  return llvm::writeToOutput(path, [&](llvm::raw_ostream &os) {
    os << llvm::formatv("{0:2}", json::Value(std::move(o)));
    return llvm::Error::success();
  });
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
         (opts.maxTokens && sums.promptTokens + sums.completionTokens >= opts.maxTokens) ||
         (opts.maxCost > 0 && sums.cost >= opts.maxCost);
}

/// Counts a call against the budget, or says which budget is spent.
std::optional<std::string> Client::reserveCall() {
  std::lock_guard<std::mutex> lock(mutex);
  if (opts.maxCalls && sums.calls >= opts.maxCalls)
    return "the LLM call budget (" + std::to_string(opts.maxCalls) + " calls) is spent";
  int64_t tokens = sums.promptTokens + sums.completionTokens;
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
      res.error = a.error;
      return res;
    }
    if (a.ok) {
      a.reply.attempts = attempt + 1;
      if (a.reply.model.empty())
        a.reply.model = impl->model();
      // Priced as the model the server named when the table knows it (dated names match by
      // prefix), else as the configured model (gateways may report other names).
      std::string priced = prices.lookup(a.reply.model) ? a.reply.model : impl->model();
      if (!impl->answersElsewhere() || a.reply.usage.cost == 0)
        a.reply.usage.cost =
            prices.cost(priced, a.reply.usage.promptTokens, a.reply.usage.completionTokens);
      if (impl->answersElsewhere()) {
        std::lock_guard<std::mutex> lock(mutex);
        ++sums.calls; // answered by the relay: counted when it arrives
      }
      {
        std::lock_guard<std::mutex> lock(mutex);
        sums.promptTokens += a.reply.usage.promptTokens;
        sums.completionTokens += a.reply.usage.completionTokens;
        sums.cost += a.reply.usage.cost;
      }
      if (cache)
        if (llvm::Error e = cache->put(res.key, request, impl->identity(), a.reply))
          llvm::consumeError(std::move(e)); // a cache that cannot be written only costs replays
      res.status = Result::Status::Ok;
      res.reply = std::move(a.reply);
      return res;
    }
    lastError = a.error;
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

std::shared_future<Result> Client::submit(Request request) {
  return pool->async([this, request = std::move(request)] { return complete(request); });
}

} // namespace evo::llm
