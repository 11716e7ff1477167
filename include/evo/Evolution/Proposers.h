//===- Proposers.h - the built-in, LLM and replay proposers -----------*- C++ -*-===//
//
// The three proposers TaskSearch drives through the Proposer interface (Proposer.h says what
// each is for). Each keeps the state only it needs: the built-in mutators their legality cache
// and seeds, the LLM its requests in flight, earlier thoughts and budget state, the replay the
// old run's candidates and how their ids map to the new ones. docs/evolution.md, docs/llm.md.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_EVOLUTION_PROPOSERS_H
#define EVO_EVOLUTION_PROPOSERS_H

#include "evo/Evolution/LLMMutator.h"
#include "evo/Evolution/Population.h"
#include "evo/Evolution/Proposer.h"
#include "evo/Evolution/RunStore.h"
#include "evo/Evolution/VariantCompiler.h"
#include <deque>
#include <future>
#include <map>

namespace evo {

class TaskSearch;
struct TaskResult;

/// Genomes from the built-in mutators: the family's seeds first, then knob mutation and
/// crossover and loop unrolling of the population's members (docs/evolution.md, "Mutators").
class BuiltinProposer final : public Proposer {
public:
  /// `withSeeds`: try the family's known-good genomes (seedGenomes) first.
  BuiltinProposer(TaskSearch &search, bool withSeeds);
  /// Exhausted when every genome near the population was proposed already.
  llvm::Expected<Outcome> propose(unsigned island, int generation) override;

private:
  struct Child {
    Genome genome;
    std::string op;
    std::vector<int64_t> parents;
  };
  std::optional<Child> fromSeeds();
  std::optional<Child> fromPopulation(const Population &pop);
  std::optional<Child> furtherAway();

  TaskSearch &search;
  LegalityCache legal;
  std::deque<Genome> seeds;
};

/// An LLM request as stored with its candidate, and the prompt context a repair needs.
struct StoredRequest {
  llm::Request request;
  llm::PromptContext context;
};

/// Kernels written by an LLM (EvoEngineer's strategies): a prompt per child, built from the
/// parents' kernels, earlier thoughts and recent failures; a reply that does not parse, breaks
/// the contract or does not compile is sent back for a repair while repairs are left.
class LLMProposer final : public Proposer {
public:
  LLMProposer(TaskSearch &search, const LLMSettings &settings);
  /// Declined when no parent's kernels can be used.
  llvm::Expected<Outcome> propose(unsigned island, int generation) override;
  size_t waiting() const override { return asking.size(); }
  bool holds(int64_t id) const override;
  llvm::Error collect() override;
  llvm::Error compileFailed(CandidateRecord &c, const std::string &diagnostics,
                            std::unique_ptr<ProposalState> state) override;

  /// Whether the next child is the LLM's: it is neither stopped nor paused, and the llm-mix
  /// draw (made only then, from the search's generator) does not give it to the built-in ones.
  bool wantsNext();
  /// Whether the built-in mutators make no children (llm-mix 0, or paused).
  bool exclusive() const { return settings.mix <= 0 || paused; }
  /// Whether it will make no more children (budget spent, replay ran out, or paused).
  bool stopped() const { return llmStopped || paused; }
  /// Prompts left waiting in a mailbox (llm-wait=0): the search checkpoints and stops.
  unsigned pausedPrompts() const { return paused; }
  /// An earlier candidate's thought, which later prompts may quote.
  void noteThought(int64_t id, std::string thought);
  /// Asks `sr` again for stored candidate `id`, building on `parent` (resume, replay).
  void ask(int64_t id, StoredRequest sr, const VariantInfo &parent, unsigned repairs);
  /// The request stored with `c` (its own parents, `task` as the task), if it can be read.
  static std::optional<StoredRequest> storedRequest(const CandidateRecord &c,
                                                    llvm::StringRef task);

private:
  /// A candidate waiting for its reply (or a repair).
  struct Asking {
    int64_t id;
    std::shared_future<llm::Result> reply;
    llm::Request request;
    llm::PromptContext context;
    VariantInfo parent;
    unsigned repairsLeft = 0;
  };
  struct Compiling;
  std::vector<Member> chooseParents(unsigned island, const LLMOperator &op);
  llm::PromptContext promptContext(const std::vector<Member> &parents, const VariantInfo &first);
  std::string profileOf(const CandidateRecord &rec) const;
  llvm::Error takeReply(Asking a);
  llvm::Error repairOrReject(Asking a, CandidateRecord &c, const std::string &diagnostics,
                             const std::string &code);

  TaskSearch &search;
  const LLMSettings &settings;
  std::string contract, rooflineText; // prompt pieces that do not change during the task
  std::vector<Asking> asking;
  std::vector<std::pair<int64_t, std::string>> thoughtPool;
  std::map<std::string, unsigned> promptSamples; // sample index per identical prompt
  unsigned sequence = 0;
  bool llmStopped = false; // the LLM budget is spent (or replay ran out): no more LLM children
  unsigned paused = 0;     // prompts left in a mailbox (llm-wait=0)
};

/// replay-run: the old run's candidates of this task, re-created in their order (built-in ones
/// from their genomes, LLM ones from their stored requests, answered by the replaying client).
/// A resumed replay maps by position: the k-th candidate made here is the old run's k-th.
class ReplayProposer final : public Proposer {
public:
  /// `llm`: asks the LLM candidates' requests again; null when the run has no LLM.
  ReplayProposer(TaskSearch &search, const RunStore &old, LLMProposer *llm);
  /// Later while the parent an LLM candidate needs is still in flight.
  llvm::Expected<Outcome> propose(unsigned island, int generation) override;
  /// How many candidates the old run made (the replay's budget).
  size_t size() const { return source.size(); }
  /// How many repairs the old run made for the candidate now numbered `id`.
  std::optional<unsigned> repairsOf(int64_t id) const;
  /// Counts the re-created candidates and names those that came out differently.
  void summarize(TaskResult &result) const;

private:
  llvm::Expected<Outcome> replayOne(const CandidateRecord &old);
  llvm::Error settle(CandidateRecord &c, int64_t oldId, const std::string &reason);

  TaskSearch &search;
  LLMProposer *llm;
  std::vector<CandidateRecord> source;
  std::map<int64_t, int64_t> ids; // old id -> id here
  size_t next = 0;
};

} // namespace evo

#endif
