//===- LLMSetup.cpp - the LLM client of an evo-evolve run ----------------------===//
//
// The LLM strategies share one client per run (budgets, cache and redaction are per run, not
// per task): the backend, the price table, the prompt templates and the operator settings the
// search reads. Apart from the pass so that the pass only translates its options. docs/llm.md.
//
//===----------------------------------------------------------------------===//

#include "EvolveSteps.h"
#include "evo/LLM/Mailbox.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace evo {

FailureOr<std::unique_ptr<LLMRun>> setUpLLM(Location loc, const LLMSetupOptions &o) {
  llvm::Expected<std::unique_ptr<llm::Backend>> backend = llm::createBackend(o.backend);
  if (!backend)
    return emitError(loc) << "evo-evolve: " << llvm::toString(backend.takeError());
  llm::PriceTable prices = llm::PriceTable::builtin();
  if (!o.prices.empty()) {
    llvm::Expected<llm::PriceTable> t = llm::PriceTable::load(o.prices);
    if (!t)
      return emitError(loc) << "evo-evolve: " << llvm::toString(t.takeError());
    prices = std::move(*t);
  }
  llvm::Expected<llm::Templates> t = llm::Templates::load(o.prompts);
  if (!t)
    return emitError(loc) << "evo-evolve: " << llvm::toString(t.takeError());
  auto run = std::make_unique<LLMRun>();
  run->templates = std::move(*t);
  llvm::StringRef spec = o.backend.spec;
  if (spec.starts_with("mailbox:"))
    for (const std::string &name : llm::strayReplies(spec.drop_front(8).trim()))
      emitWarning(loc) << "evo-evolve: mailbox reply '" << name
                       << "' answers no prompt of this mailbox; ignored";
  run->client = std::make_unique<llm::Client>(std::move(*backend), o.client, std::move(prices));
  run->settings = o.settings;
  run->settings.client = run->client.get();
  run->settings.templates = &*run->templates;
  return run;
}

void remarkLLMTotals(Location loc, const llm::Client &client) {
  llm::Totals t = client.totals();
  emitRemark(loc) << llvm::formatv(
      "evo-evolve: LLM ({0}): {1} calls ({2} retried, {3} failed), {4} answered from the "
      "cache; {5} prompt + {6} completion tokens; cost {7:f4} {8}",
      client.backend().identity(), t.calls, t.retries, t.failures, t.cacheHits, t.promptTokens,
      t.completionTokens, t.cost, client.priceTable().currency());
}

} // namespace evo
