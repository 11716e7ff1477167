//===- Genome.cpp - knobs, rewrites and the built-in mutators -----------------===//

#include "evo/Evolution/Genome.h"
#include "evo/Runtime/ChipRules.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
namespace json = llvm::json;

namespace evo {

json::Object Genome::knobsJson(TaskFamily family) const { return knobs.toJson(family); }

json::Array Genome::rewritesJson() const {
  json::Array a;
  for (const Rewrite &r : rewrites)
    a.push_back(json::Object{{"kind", r.kind}, {"factor", r.factor}});
  return a;
}

std::string Genome::key(TaskFamily family) const {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << json::Value(knobsJson(family)) << json::Value(rewritesJson());
  return s;
}

FailureOr<Genome> Genome::fromJson(StringRef knobsText, StringRef rewritesText, MLIRContext *) {
  Genome g;
  llvm::Expected<json::Value> k = json::parse(knobsText);
  llvm::Expected<json::Value> r = json::parse(rewritesText.empty() ? "[]" : rewritesText);
  if (!k || !r || !k->getAsObject() || !r->getAsArray()) {
    if (!k)
      llvm::consumeError(k.takeError());
    if (!r)
      llvm::consumeError(r.takeError());
    return failure();
  }
  if (failed(g.knobs.mergeJson(*k->getAsObject(), nullptr)))
    return failure();
  for (const json::Value &v : *r->getAsArray()) {
    const json::Object *o = v.getAsObject();
    if (!o)
      return failure();
    g.rewrites.push_back({o->getString("kind").value_or("").str(),
                          o->getInteger("factor").value_or(1)});
  }
  return g;
}

/// Innermost scf.for loops with constant bounds and at least `factor` iterations.
static SmallVector<scf::ForOp> unrollableLoops(gpu::GPUFuncOp func, int64_t factor) {
  SmallVector<scf::ForOp> loops;
  func.walk([&](scf::ForOp loop) {
    bool innermost = true;
    loop.getBody()->walk([&](scf::ForOp) { innermost = false; });
    std::optional<int64_t> trips = loop.getStaticTripCount() ? std::optional<int64_t>(
                                                                   loop.getStaticTripCount()->getSExtValue())
                                                             : std::nullopt;
    if (innermost && trips && *trips >= factor)
      loops.push_back(loop);
  });
  return loops;
}

unsigned applyRewrites(gpu::GPUModuleOp module, ArrayRef<Rewrite> rewrites) {
  unsigned changed = 0;
  for (const Rewrite &r : rewrites) {
    if (r.kind != "unroll" || r.factor < 2)
      continue;
    for (auto func : module.getOps<gpu::GPUFuncOp>())
      for (scf::ForOp loop : unrollableLoops(func, r.factor))
        if (succeeded(loopUnrollByFactor(loop, r.factor)))
          ++changed;
  }
  return changed;
}

std::vector<KnobDimension> knobDimensions(TaskFamily family) {
  // The family's knob set and each knob's candidate values come from EvoKnobs.td.
  std::vector<KnobDimension> dims;
  for (KnobId id : familyKnobs(family)) {
    KnobDimension d;
    d.name = knobName(id).str();
    for (const KnobList &v : knobSearchValues(id))
      d.values.emplace_back(v.begin(), v.end());
    d.get = [id](const ScheduleKnobs &k) {
      KnobList v = getKnobValue(k, id);
      return SmallVector<int64_t>(v.begin(), v.end());
    };
    d.set = [id](ScheduleKnobs &k, ArrayRef<int64_t> v) { setKnobValue(k, id, v); };
    dims.push_back(std::move(d));
  }
  return dims;
}

bool chipHasWgmma(StringRef chip) { return chip == "sm_90a"; }

bool chipHasMmaSync(StringRef chip) {
  std::optional<chips::Chip> c = chips::parse(std::string_view(chip.data(), chip.size()));
  return c && c->number() >= 80;
}

bool LegalityCache::isLegal(const Genome &g) {
  std::string k = g.key(family);
  auto it = cache.find(k);
  if (it != cache.end())
    return it->second;
  if ((g.knobs.wgmma && !wgmmaTarget) || (g.knobs.mmaSync && !mmaSyncTarget))
    return cache[k] = false;
  MLIRContext *ctx = task.getContext();
  // Lower into a scratch module; the lowering's diagnostics are the verdict, not user errors.
  ScopedDiagnosticHandler quiet(ctx, [](Diagnostic &) { return success(); });
  OpBuilder b(ctx);
  OwningOpRef<ModuleOp> scratch = ModuleOp::create(task.getLoc());
  b.setInsertionPointToEnd(scratch->getBody());
  auto gm = gpu::GPUModuleOp::create(b, task.getLoc(), "legality");
  bool ok = succeeded(lowerTask(task, g.knobs, gm, "k"));
  cache[k] = ok;
  return ok;
}

std::optional<Genome> mutateKnob(const Genome &parent, TaskFamily family, LegalityCache &legal,
                                 std::mt19937_64 &rng) {
  std::vector<KnobDimension> dims = knobDimensions(family);
  for (int attempt = 0; attempt < 40 && !dims.empty(); ++attempt) {
    const KnobDimension &d = dims[rng() % dims.size()];
    const auto &v = d.values[rng() % d.values.size()];
    if (d.get(parent.knobs) == v)
      continue;
    Genome child = parent;
    d.set(child.knobs, v);
    if (legal.isLegal(child))
      return child;
  }
  return std::nullopt;
}

std::optional<Genome> crossoverKnobs(const Genome &a, const Genome &b, TaskFamily family,
                                     LegalityCache &legal, std::mt19937_64 &rng) {
  std::vector<KnobDimension> dims = knobDimensions(family);
  for (int attempt = 0; attempt < 20; ++attempt) {
    Genome child = a;
    for (const KnobDimension &d : dims)
      if (rng() & 1)
        d.set(child.knobs, d.get(b.knobs));
    if (rng() & 1)
      child.rewrites = b.rewrites;
    if (child.key(family) == a.key(family) || child.key(family) == b.key(family))
      continue;
    if (legal.isLegal(child))
      return child;
  }
  return std::nullopt;
}

std::optional<Genome> mutateUnroll(const Genome &parent, TaskFamily family, LegalityCache &legal,
                                   std::mt19937_64 &rng) {
  static const int64_t factors[] = {1, 2, 4, 8};
  int64_t current = parent.rewrites.empty() ? 1 : parent.rewrites.front().factor;
  for (int attempt = 0; attempt < 8; ++attempt) {
    int64_t f = factors[rng() % 4];
    if (f == current)
      continue;
    Genome child = parent;
    child.rewrites.clear();
    if (f > 1)
      child.rewrites.push_back({"unroll", f});
    if (legal.isLegal(child))
      return child;
  }
  return std::nullopt;
}

} // namespace evo
