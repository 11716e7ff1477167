//===- Population.h - selection and elitism (EvoEngineer's mechanics) -*- C++ -*-===//

#ifndef EVO_EVOLUTION_POPULATION_H
#define EVO_EVOLUTION_POPULATION_H

#include <cstdint>
#include <optional>
#include <random>
#include <vector>

namespace evo {

struct Member {
  int64_t id = -1;
  double ms = 0;     // median time; meaningful when valid
  bool valid = false;
  int64_t order = 0; // when it was added (newer is larger)
};

/// An elitist population: the best `size` valid members by time; empty slots are filled with the
/// newest invalid ones (so that operators can still learn from failures when little is valid).
class Population {
public:
  explicit Population(unsigned size) : size(size) {}
  void add(const Member &m);
  /// Best first: valid by time, then invalid newest first.
  const std::vector<Member> &members() const { return list; }
  std::optional<Member> best() const;
  unsigned numValid() const;
  /// Rank selection among the valid members: P(rank r) proportional to 1 / (r + N), ranks from 0
  /// (the fastest), N the population size. Falls back to any member when none is valid.
  std::optional<Member> select(std::mt19937_64 &rng) const;
  /// The probabilities `select` uses, in the order of members() (tests and reports).
  std::vector<double> selectionProbabilities() const;

private:
  unsigned size;
  std::vector<Member> list;
  std::vector<Member> valid, invalid;
  void rebuild();
};

} // namespace evo

#endif
