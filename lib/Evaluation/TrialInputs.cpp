//===- TrialInputs.cpp - the distributions of the verifier's trials -------===//
//
// fillFor: what each trial writes into each input (evo/Runtime/BufferContract.h evaluates the
// parameters on both sides); scheduled: which distribution a trial asks for. Split from
// Verifier.cpp, which chooses the rungs and seeds. docs/verification.md, "Inputs".
//
//===----------------------------------------------------------------------===//

#include "TrialInputs.h"
#include "evo/Evaluation/WorkerProtocol.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include <algorithm>
#include <cmath>
#include <cstdio>

namespace json = llvm::json;
namespace P = evo::protocol;

namespace evo::trials {

//===----------------------------------------------------------------------===//
// Input distributions
//===----------------------------------------------------------------------===//

using contract::Distribution;
using contract::FillParams;

Want scheduled(unsigned t, unsigned k) {
  static const Want order[] = {Want::Uniform, Want::Normal, Want::Wide, Want::Special,
                               Want::Large};
  constexpr unsigned n = std::size(order);
  if (t < n)
    return order[t];
  return order[(t + k) % n];
}

static std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

/// The special values of an input (at most kMaxSpecialValues), returned as they are (never
/// clamped): those of `candidates` inside [lo, hi], in order, without repeats.
static void setSpecials(FillParams &p, llvm::ArrayRef<double> candidates, double lo, double hi) {
  p.numSpecial = 0;
  for (double c : candidates) {
    if (!(c >= lo && c <= hi))
      continue;
    bool seen = false;
    for (int i = 0; i < p.numSpecial; ++i)
      seen |= p.special[i] == c;
    if (!seen && p.numSpecial < contract::kMaxSpecialValues)
      p.special[p.numSpecial++] = c;
  }
}

/// The fill of one input for `want` at narrowing level `rung` (0: full strength; higher: milder,
/// when the function's results were not finite or not representable).
FillParams fillFor(Want want, unsigned rung, uint64_t seed, unsigned buffer, ElementKind kind,
                   InputRange r, std::string &desc) {
  FillParams p = contract::uniformFill(seed, buffer, kind, r.lo, r.hi);
  if (kind == ElementKind::I1) {
    // A boolean holds 0 or 1 and nothing else, whatever the trial wants (a declared range
    // cannot widen it).
    p.lo = std::max(0.0, std::ceil(r.lo));
    p.hi = std::min(1.0, std::floor(r.hi));
    if (!(p.lo <= p.hi))
      p.lo = 0, p.hi = 1;
    desc = p.lo == p.hi ? "constant " + num(p.lo) + " (i1)" : "uniform{0, 1} (i1)";
    return p;
  }
  const bool isFloat = contract::isFloat(kind);
  const double kindMax = maxFinite(kind);
  auto range = [&](double lo, double hi) {
    return "[" + num(lo) + ", " + num(hi) + (isFloat ? ")" : "]");
  };
  switch (want) {
  case Want::Uniform:
    desc = "uniform" + range(r.lo, r.hi);
    return p;
  case Want::Normal: {
    p.dist = static_cast<int32_t>(Distribution::Normal);
    p.center = 0.5 * (r.lo + r.hi);
    double half = 0.5 * (r.hi - r.lo);
    p.scale = std::ldexp(r.declared || !isFloat ? half / 2 : half, -static_cast<int>(rung));
    if (!r.declared && isFloat) {
      p.lo = -128;
      p.hi = 128;
    }
    desc = "normal(" + num(p.center) + ", " + num(p.scale) + ")";
    if (r.declared)
      desc += " within " + range(r.lo, r.hi);
    return p;
  }
  case Want::Wide: {
    if (!isFloat) {
      if (r.declared) {
        desc = "uniform" + range(r.lo, r.hi) + " (declared)";
        return p;
      }
      static const double widths[] = {100, 30, 12};
      double w = std::min(widths[std::min(rung, 2u)], kindMax);
      p.lo = -w;
      p.hi = w;
      desc = "uniform" + range(-w, w) + " (wide)";
      return p;
    }
    p.dist = static_cast<int32_t>(Distribution::Wide);
    int e;
    if (r.declared) {
      double m = std::max(std::fabs(r.lo), std::fabs(r.hi));
      e = static_cast<int>(std::ceil(std::log2(m))) - 3 * static_cast<int>(rung);
    } else {
      static const int exps[] = {7, 4, 2};
      e = exps[std::min(rung, 2u)];
      p.lo = -std::ldexp(1.0, e);
      p.hi = std::ldexp(1.0, e);
    }
    p.emax = e - 1;
    p.emin = p.emax - 18;
    desc = r.declared ? "wide(2^" + std::to_string(p.emin) + " <= |x| < 2^" + std::to_string(e) +
                            ") within " + range(r.lo, r.hi)
                      : "wide(2^" + std::to_string(p.emin) + " <= |x| < " + num(p.hi) + ")";
    return p;
  }
  case Want::Large: {
    // Every element outside the uniform trial's range (undeclared ranges) or in the top binade of
    // the declared one: a kernel that is honest only while a few inputs look like trial 0's is
    // caught here whatever elements it looks at (normal, wide and special values mostly fall
    // inside [-1, 1), so they catch it only by chance).
    double m = std::max(std::fabs(r.lo), std::fabs(r.hi));
    if (!(m > 0)) {
      desc = "uniform" + range(r.lo, r.hi);
      return p;
    }
    p.dist = static_cast<int32_t>(Distribution::Wide);
    if (r.declared) {
      if (!isFloat) {
        desc = "uniform" + range(r.lo, r.hi) + " (declared)";
        return p;
      }
      p.emax = static_cast<int>(std::ceil(std::log2(m))) - 1 - 3 * static_cast<int>(rung);
      p.emin = p.emax;
      desc = "large(2^" + std::to_string(p.emin) + " <= |x| < 2^" + std::to_string(p.emax + 1) +
             ") within " + range(r.lo, r.hi);
      return p;
    }
    static const int exps[] = {7, 4, 2};
    int e = exps[std::min(rung, 2u)];
    // Floats: |x| >= max(|lo|, |hi|) is outside [lo, hi); integers: |x| > max(|lo|, |hi|).
    p.emin = isFloat ? static_cast<int>(std::ceil(std::log2(m)))
                     : static_cast<int>(std::floor(std::log2(m))) + 1;
    p.emax = std::max(p.emin, e - 1);
    double bound = std::min(std::ldexp(1.0, p.emax + 1), kindMax);
    p.lo = -bound;
    p.hi = bound;
    desc = "large(" + num(std::ldexp(1.0, p.emin)) + " <= |x| < " + num(bound) + ")";
    return p;
  }
  case Want::Special: {
    p.dist = static_cast<int32_t>(Distribution::Special);
    if (r.declared) {
      double mid = 0.5 * (r.lo + r.hi);
      if (!isFloat)
        mid = std::floor(mid);
      llvm::SmallVector<double> c = {r.lo, r.hi};
      if (rung < 1)
        c.push_back(0);
      if (rung < 2)
        c.append({1, -1, 0.5, -0.5, 2, -2});
      c.push_back(mid);
      double lo = isFloat ? r.lo : std::ceil(r.lo), hi = isFloat ? r.hi : std::floor(r.hi);
      if (!isFloat)
        c[0] = lo, c[1] = hi;
      setSpecials(p, c, lo, hi);
    } else if (isFloat) {
      static const double s0[] = {0, 1, -1, 0.5, -0.5, 2, 100, -100};
      static const double s1[] = {0, 1, -1, 0.5, -0.5, 2, -2};
      static const double s2[] = {1, -1, 0.5, -0.5};
      llvm::ArrayRef<double> c = rung == 0 ? llvm::ArrayRef<double>(s0)
                                 : rung == 1 ? llvm::ArrayRef<double>(s1)
                                             : llvm::ArrayRef<double>(s2);
      setSpecials(p, c, -kindMax, kindMax);
    } else {
      static const double s0[] = {0, 1, -1, -8, 8, 100, -100};
      static const double s1[] = {0, 1, -1, -8, 8};
      static const double s2[] = {1, -1};
      llvm::ArrayRef<double> c = rung == 0 ? llvm::ArrayRef<double>(s0)
                                 : rung == 1 ? llvm::ArrayRef<double>(s1)
                                             : llvm::ArrayRef<double>(s2);
      setSpecials(p, c, -kindMax, kindMax);
    }
    desc = "special{";
    for (int i = 0; i < p.numSpecial; ++i)
      desc += (i ? ", " : "") + num(p.special[i]);
    desc += "} + uniform" + range(r.lo, r.hi);
    return p;
  }
  }
  return p;
}

json::Object fillJson(const FillParams &p, unsigned buffer) {
  static const char *names[] = {P::kDistUniform, P::kDistNormal, P::kDistWide, P::kDistSpecial};
  json::Object o{{P::kBuffer, static_cast<int64_t>(buffer)},
                 {P::kDist, names[p.dist]},
                 {P::kLo, p.lo},
                 {P::kHi, p.hi}};
  if (p.dist == static_cast<int32_t>(Distribution::Normal)) {
    o[P::kCenter] = p.center;
    o[P::kScale] = p.scale;
  }
  if (p.dist == static_cast<int32_t>(Distribution::Wide)) {
    o[P::kEmin] = p.emin;
    o[P::kEmax] = p.emax;
  }
  if (p.dist == static_cast<int32_t>(Distribution::Special)) {
    json::Array s;
    for (int i = 0; i < p.numSpecial; ++i)
      s.push_back(p.special[i]);
    o[P::kSpecial] = std::move(s);
  }
  return o;
}

} // namespace evo::trials
