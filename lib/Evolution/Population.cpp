//===- Population.cpp - selection and elitism ---------------------------------===//

#include "evo/Evolution/Population.h"
#include <algorithm>

namespace evo {

void Population::add(const Member &m) {
  for (const Member &x : valid)
    if (x.id == m.id)
      return;
  for (const Member &x : invalid)
    if (x.id == m.id)
      return;
  (m.valid ? valid : invalid).push_back(m);
  rebuild();
}

void Population::rebuild() {
  std::stable_sort(valid.begin(), valid.end(), [](const Member &a, const Member &b) {
    return a.ms != b.ms ? a.ms < b.ms : a.order < b.order;
  });
  if (valid.size() > size)
    valid.resize(size);
  std::stable_sort(invalid.begin(), invalid.end(),
                   [](const Member &a, const Member &b) { return a.order > b.order; });
  size_t room = size > valid.size() ? size - valid.size() : 0;
  if (invalid.size() > room)
    invalid.resize(room);
  list = valid;
  list.insert(list.end(), invalid.begin(), invalid.end());
}

std::optional<Member> Population::best() const {
  if (valid.empty())
    return std::nullopt;
  return valid.front();
}

unsigned Population::numValid() const { return valid.size(); }

std::vector<double> Population::selectionProbabilities() const {
  std::vector<double> p(list.size(), 0.0);
  if (valid.empty()) {
    for (double &x : p)
      x = 1.0 / p.size();
    return p;
  }
  double total = 0;
  for (size_t r = 0; r < valid.size(); ++r)
    total += 1.0 / (r + size);
  for (size_t r = 0; r < valid.size(); ++r)
    p[r] = (1.0 / (r + size)) / total;
  return p;
}

std::optional<Member> Population::select(std::mt19937_64 &rng) const {
  if (list.empty())
    return std::nullopt;
  std::vector<double> p = selectionProbabilities();
  std::discrete_distribution<size_t> pick(p.begin(), p.end());
  return list[pick(rng)];
}

} // namespace evo
