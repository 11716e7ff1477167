//===- LaunchSelection.h - which timed launches are checked; OS entropy -*- C++ -*-===//
//
// No timed launch of a candidate finds its own answer in its outputs (poison, or the other input
// set's answer when timing alternates two sets); after a random subset of them (always including
// the last two) the worker compares every output element with the reference on the GPU
// (docs/verification.md, "Timing"). The subset is drawn from OS entropy inside the worker,
// so nothing in the request, and nothing a kernel can observe, predicts it.
//
// Header-only plain C++ (evo-eval-worker links no LLVM); unit-tested in CI without a GPU.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_EVALUATION_LAUNCHSELECTION_H
#define EVO_EVALUATION_LAUNCHSELECTION_H

#include <cstdint>
#include <cstdio>
#include <vector>
#include <sys/random.h>

namespace evo {

/// 64 bits from the operating system's entropy pool (getrandom(2), else /dev/urandom) into
/// `out`; false when neither works: the caller must then fail, never fall back to a predictable
/// value. (No exceptions: evo-opt is built without them.)
inline bool osEntropy(uint64_t &out) {
  uint64_t v = 0;
  if (::getrandom(&v, sizeof v, 0) == static_cast<ssize_t>(sizeof v)) {
    out = v;
    return true;
  }
  if (FILE *f = std::fopen("/dev/urandom", "rb")) {
    size_t n = std::fread(&v, 1, sizeof v, f);
    std::fclose(f);
    if (n == sizeof v) {
      out = v;
      return true;
    }
  }
  return false;
}

/// A fresh seed for a verification run, from OS entropy: nonzero (0 means "draw one") and below
/// 2^53, so that it travels exactly through JSON and Python. 0 when there is no entropy.
inline uint64_t freshSeed() {
  uint64_t s = 0;
  if (!osEntropy(s))
    return 0;
  s &= (uint64_t(1) << 53) - 1;
  return s ? s : 1;
}

/// splitmix64: a small, well-mixed generator for drawing from one entropy word.
struct SplitMix64 {
  uint64_t state;
  explicit SplitMix64(uint64_t seed) : state(seed) {}
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, n) (n > 0), without modulo bias.
  uint64_t below(uint64_t n) {
    uint64_t limit = ~uint64_t(0) - (~uint64_t(0) % n);
    uint64_t x;
    do
      x = next();
    while (x >= limit);
    return x % n;
  }
};

/// Which of `runs` timed launches (indices 0 .. runs-1) are followed by a full comparison:
///  * the last two, always: a kernel that stops working after N launches is caught. With
///    timing that alternates two input sets, its outputs keep the answer of one set, right for
///    every later launch of that set: only a launch of the other set shows it, and the last two
///    are one of each;
///  * every other one independently with probability `fraction` (clamped to [0, 1]);
///  * topped up with uniformly chosen unchecked launches until at least `minChecked` (or all
///    `runs`, when fewer) are checked.
/// Deterministic in `entropy`: the worker passes OS entropy, tests pass fixed values.
inline std::vector<bool> chooseCheckedLaunches(unsigned runs, double fraction, unsigned minChecked,
                                               uint64_t entropy) {
  std::vector<bool> checked(runs, false);
  if (runs == 0)
    return checked;
  SplitMix64 rng(entropy);
  if (!(fraction >= 0)) // NaN
    fraction = 0;
  if (fraction > 1)
    fraction = 1;
  // fraction as a 53-bit threshold on a uniform draw: exact for 0 and 1.
  const uint64_t scale = uint64_t(1) << 53;
  const uint64_t threshold = static_cast<uint64_t>(fraction * static_cast<double>(scale));
  unsigned count = 0;
  for (unsigned r = 0; r + 1 < runs; ++r)
    if ((rng.next() >> 11) < threshold) {
      checked[r] = true;
      ++count;
    }
  for (unsigned r = runs >= 2 ? runs - 2 : 0; r < runs; ++r)
    if (!checked[r]) {
      checked[r] = true;
      ++count;
    }
  unsigned want = minChecked < runs ? minChecked : runs;
  while (count < want) {
    unsigned r = static_cast<unsigned>(rng.below(runs));
    if (!checked[r]) {
      checked[r] = true;
      ++count;
    }
  }
  return checked;
}

} // namespace evo

#endif
