//===- BuiltinProposer.cpp - children from the built-in mutators ---------------===//
//
// The embedded default proposer: the family's seeds, then knob mutation, knob crossover and
// loop unrolling of members of the population (rank selection, or the best for single-best),
// then, when the population's neighbourhood is explored, two-step mutations of any earlier
// genome. Only legal genomes never proposed before are made (docs/evolution.md, "Mutators").
//
//===----------------------------------------------------------------------===//

#include "evo/Evolution/Proposers.h"
#include "evo/Evolution/TaskSearch.h"
#include "llvm/Support/FormatVariadic.h"

namespace json = llvm::json;

namespace evo {

BuiltinProposer::BuiltinProposer(TaskSearch &search, bool withSeeds)
    : search(search), legal(search.taskFunc(), search.task().family,
            chipHasWgmma(search.options().ptx.chip), chipHasMmaSync(search.options().ptx.chip)) {
  if (!withSeeds)
    return;
  for (Genome &g : seedGenomes(search.baselineGenome(), search.task().family,
                               seedTraits(search.taskFunc())))
    seeds.push_back(std::move(g));
}

/// The next seed that is legal for the task and new.
std::optional<BuiltinProposer::Child> BuiltinProposer::fromSeeds() {
  while (!seeds.empty()) {
    Genome g = std::move(seeds.front());
    seeds.pop_front();
    if (!search.seen(g) && legal.isLegal(g))
      return Child{std::move(g), "knob-seed", {search.baselineId()}};
  }
  return std::nullopt;
}

/// Crossover (30 %, with two valid parents), unrolling (20 %), otherwise knob mutation of a
/// selected member; members made by an LLM have no knobs to mutate.
std::optional<BuiltinProposer::Child> BuiltinProposer::fromPopulation(const Population &pop) {
  const EvolveOptions &opts = search.options();
  TaskFamily family = search.task().family;
  const std::map<int64_t, Genome> &genomes = search.genomes();
  std::mt19937_64 &rng = search.rng();
  bool singleBest = opts.strategy == SearchStrategy::SingleBest;
  for (int attempt = 0; attempt < 30; ++attempt) {
    std::optional<Member> p1 = singleBest ? pop.best() : pop.select(rng);
    if (!p1)
      break;
    if (!genomes.count(p1->id))
      continue; // an LLM-made member: the built-in mutators need knobs
    const Genome &first = genomes.at(p1->id);
    unsigned roll = rng() % 10;
    std::optional<Genome> g;
    std::string op;
    std::vector<int64_t> parents;
    if (roll < 3 && pop.numValid() >= 2 && !singleBest) {
      std::optional<Member> p2 = pop.select(rng);
      if (p2 && p2->id != p1->id && genomes.count(p2->id)) {
        g = crossoverKnobs(first, genomes.at(p2->id), family, legal, rng);
        op = "knob-crossover";
        parents = {p1->id, p2->id};
      }
    } else if (roll < 5) {
      g = mutateUnroll(first, family, legal, rng);
      op = "ir-unroll";
      parents = {p1->id};
    }
    if (!g) {
      g = mutateKnob(first, family, legal, rng);
      op = "knob-mutate";
      parents = {p1->id};
    }
    if (g && !search.seen(*g))
      return Child{std::move(*g), op, parents};
  }
  return std::nullopt;
}

/// The population's neighbourhood is explored: step further, from any earlier genome and with
/// two knob changes, before calling the space exhausted.
std::optional<BuiltinProposer::Child> BuiltinProposer::furtherAway() {
  const std::map<int64_t, Genome> &genomes = search.genomes();
  TaskFamily family = search.task().family;
  std::mt19937_64 &rng = search.rng();
  for (int attempt = 0; attempt < 200 && !genomes.empty(); ++attempt) {
    auto it = std::next(genomes.begin(), rng() % genomes.size());
    std::optional<Genome> g = mutateKnob(it->second, family, legal, rng);
    if (g && search.seen(*g))
      g = mutateKnob(*g, family, legal, rng);
    if (g && !search.seen(*g))
      return Child{std::move(*g), "knob-mutate", {it->first}};
  }
  return std::nullopt;
}

llvm::Expected<Proposer::Outcome> BuiltinProposer::propose(unsigned island, int generation) {
  std::optional<Child> child = fromSeeds();
  if (!child)
    child = fromPopulation(search.islands()[island]);
  if (!child)
    child = furtherAway();
  if (!child)
    return Outcome::Exhausted;
  TaskFamily family = search.task().family;
  CandidateRecord c;
  c.task = search.task().name;
  c.generation = generation;
  c.island = island;
  c.parents = child->parents;
  c.op = child->op;
  c.knobs = llvm::formatv("{0}", json::Value(child->genome.knobsJson(family))).str();
  c.rewrites = llvm::formatv("{0}", json::Value(child->genome.rewritesJson())).str();
  if (llvm::Error e = search.store().addCandidate(c))
    return std::move(e);
  search.addGenome(c.id, child->genome);
  search.compileGenome(c.id, child->genome);
  return Outcome::Made;
}

} // namespace evo
