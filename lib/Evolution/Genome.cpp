//===- Genome.cpp - knobs, rewrites and the built-in mutators -----------------===//

#include "evo/Evolution/Genome.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
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

static SmallVector<int64_t> one(int64_t v) { return {v}; }

std::vector<KnobDimension> knobDimensions(TaskFamily family) {
  KnobDimension block{"block_size",
                      {one(64), one(128), one(256), one(512), one(1024)},
                      [](const ScheduleKnobs &k) { return one(k.blockSize); },
                      [](ScheduleKnobs &k, ArrayRef<int64_t> v) { k.blockSize = v[0]; }};
  KnobDimension vector{"vector_width",
                       {one(1), one(2), one(4), one(8)},
                       [](const ScheduleKnobs &k) { return one(k.vectorWidth); },
                       [](ScheduleKnobs &k, ArrayRef<int64_t> v) { k.vectorWidth = v[0]; }};
  KnobDimension ept{"elements_per_thread",
                    {one(1), one(2), one(4), one(8)},
                    [](const ScheduleKnobs &k) { return one(k.elementsPerThread); },
                    [](ScheduleKnobs &k, ArrayRef<int64_t> v) { k.elementsPerThread = v[0]; }};
  KnobDimension strategy{"reduction",
                         {one(0), one(1), one(2)},
                         [](const ScheduleKnobs &k) { return one(int64_t(k.reduction)); },
                         [](ScheduleKnobs &k, ArrayRef<int64_t> v) {
                           k.reduction = static_cast<ReductionStrategy>(v[0]);
                         }};
  KnobDimension accumulators{"accumulators",
                             {one(1), one(2), one(4), one(8)},
                             [](const ScheduleKnobs &k) { return one(k.accumulators); },
                             [](ScheduleKnobs &k, ArrayRef<int64_t> v) { k.accumulators = v[0]; }};
  KnobDimension tiles{"tile_sizes", {}, [](const ScheduleKnobs &k) {
                        return SmallVector<int64_t>(k.tileSizes.begin(), k.tileSizes.end());
                      },
                      [](ScheduleKnobs &k, ArrayRef<int64_t> v) { k.tileSizes.assign(v.begin(), v.end()); }};
  tiles.values.push_back({}); // the naive schedule
  for (int64_t m : {32, 64, 128})
    for (int64_t n : {32, 64, 128})
      for (int64_t kk : {8, 16, 32})
        tiles.values.push_back({m, n, kk});
  KnobDimension threadTile{"thread_tile", {}, [](const ScheduleKnobs &k) {
                             return SmallVector<int64_t>(k.threadTile.begin(), k.threadTile.end());
                           },
                           [](ScheduleKnobs &k, ArrayRef<int64_t> v) { k.threadTile.assign(v.begin(), v.end()); }};
  for (int64_t m : {1, 2, 4, 8})
    for (int64_t n : {1, 2, 4, 8})
      threadTile.values.push_back({m, n});

  switch (family) {
  case TaskFamily::Elementwise: {
    KnobDimension transpose{"transpose_tile",
                            {one(0), one(32), one(64)},
                            [](const ScheduleKnobs &k) { return one(k.transposeTile); },
                            [](ScheduleKnobs &k, ArrayRef<int64_t> v) { k.transposeTile = v[0]; }};
    return {block, vector, ept, transpose};
  }
  case TaskFamily::Reduction: {
    KnobDimension split{"split",
                        {one(1), one(2), one(4), one(8), one(16), one(32), one(64)},
                        [](const ScheduleKnobs &k) { return one(k.split); },
                        [](ScheduleKnobs &k, ArrayRef<int64_t> v) { k.split = v[0]; }};
    return {block, vector, strategy, accumulators, split};
  }
  case TaskFamily::Softmax:
    return {block, vector, strategy};
  case TaskFamily::Matmul: {
    KnobDimension prefetch{"prefetch",
                           {one(0), one(1)},
                           [](const ScheduleKnobs &k) { return one(int64_t(k.prefetch)); },
                           [](ScheduleKnobs &k, ArrayRef<int64_t> v) { k.prefetch = v[0]; }};
    return {tiles, threadTile, block, accumulators, vector, prefetch};
  }
  case TaskFamily::Rows: {
    KnobDimension cache{"cache_row",
                        {one(0), one(1)},
                        [](const ScheduleKnobs &k) { return one(int64_t(k.cacheRow)); },
                        [](ScheduleKnobs &k, ArrayRef<int64_t> v) { k.cacheRow = v[0]; }};
    return {block, vector, strategy, cache};
  }
  }
  return {};
}

std::vector<Genome> seedGenomes(const Genome &baseline, TaskFamily family) {
  std::vector<Genome> seeds;
  if (family != TaskFamily::Matmul)
    return seeds;
  // {BM, BN, BK, TM, TN}: 256 threads (128 for the last), 128-bit fragments, BK of 8 or 16, each
  // with and without register prefetch of the next K tile.
  const int64_t shapes[][5] = {{128, 128, 8, 8, 8}, {128, 64, 8, 8, 4},  {64, 128, 8, 4, 8},
                               {128, 128, 16, 8, 8}, {64, 64, 8, 4, 4},   {64, 64, 16, 4, 4},
                               {128, 64, 16, 8, 8}};
  for (const auto &s : shapes)
    for (bool prefetch : {true, false}) {
      Genome g = baseline;
      g.knobs.tileSizes = {s[0], s[1], s[2]};
      g.knobs.threadTile = {s[3], s[4]};
      g.knobs.vectorWidth = 4;
      g.knobs.prefetch = prefetch;
      seeds.push_back(g);
    }
  return seeds;
}

bool LegalityCache::isLegal(const Genome &g) {
  std::string k = g.key(family);
  auto it = cache.find(k);
  if (it != cache.end())
    return it->second;
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
