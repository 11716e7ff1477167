//===- EmitReduction.cpp - generics with reduction iterators ---------------===//
//
// The parallel dimensions are flattened into output points, the reduction dimensions into
// reduction points. Strategies:
//   thread  one thread per output point, a serial loop over the reduction points (the naive
//           baseline; coalesced when the reduced dimension is the outer one, e.g. column sums)
//   warp    one warp per output point; lanes stride the reduction, then butterfly shuffles
//   block   one block per output point; threads stride, warp shuffles, then shared memory
// `vector_width` reads that many consecutive points of the innermost reduction dimension per
// access; `accumulators` keeps independent partial results per thread to overlap loads.
// `split` S > 1 gives each output point S slices of the reduction, reduced by S times as many
// threads/warps/blocks (gridDim.y = S) into a scratch buffer of partials [S, outputs]; a second
// kernel combines the S partials with the init in a fixed order: one thread per output point
// walks them in order, or, for few outputs and S >= 32 (a 0-d loss: one output, S partials),
// one warp per output point folds every 32nd partial and then the lanes (a serial walk of 256
// partials is 256 dependent L2 round trips, ~30 us, half of a 256 MiB read's floor).
// `group_outputs` G > 1 gives each thread/warp/block G output points, consecutive along the
// parallel dimension the most input bytes do not depend on (groupDim): those inputs are loaded
// once per chunk for all G points (a GEMV's rows share x; nn.Linear at batch 8 shares each
// element of W among the 8 rows, which then read W once instead of 8 times). `group_outputs2`
// G2 > 1 adds G2 points along a second such dimension (groupDim2): a warp of nn.Linear at batch
// 8 takes 8 batch rows x G2 rows of W, loading each chunk of W once for its 8 rows and each
// chunk of x once for its G2 rows (x's traffic through L1 falls from 8x W's to 8/G2 x).
// With reduction=thread, a group may also run along a pooling window's strided dimension, where
// no input is shared but windows overlap or sit side by side: input i reads s*d + c*w along its
// last dimension (d the group's, w the window's). The G points' windows then span
// s*(G-1) + c*(W-1) + 1 consecutive elements, loaded once per group with `vector_width`
// elements per access (maxpool1d in a hand-written probe: 0.2445 ms with a thread per output,
// 0.1895 ms, the read ceiling, with 4 outputs per thread and 128-bit loads; docs/bench.md). G
// need not divide that dimension: the last group's points past its end are not stored.
// `stream_loads` loads the inputs each output point reads for itself alone (indexed by every loop
// dimension but the group's) with ld.global.nc.L1::no_allocate: a GEMV's matrix streams past L1
// and leaves it to x (H200, 128 MiB f16 GEMV: 0.0425 -> 0.0387 ms in a hand-written probe,
// docs/bench.md).
// Parallel strategies need a payload `yield combine(f(ins...), out)` with an associative
// combiner; narrow floats (f16/bf16) accumulate in f32.
//
//===----------------------------------------------------------------------===//

#include "Emitters.h"
#include "KernelBuilder.h"
#include "mlir/Analysis/FlatLinearValueConstraints.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace evo {

namespace {
class ReductionEmitter {
public:
  ReductionEmitter(const GenericTask &t, const ScheduleKnobs &k, ReductionStrategy strategy)
      : t(t), k(k), strategy(strategy), op(t.op) {
    for (unsigned d : t.parallelDims)
      psizes.push_back(t.loopSizes[d]);
    for (unsigned d : t.reductionDims)
      rsizes.push_back(t.loopSizes[d]);
    numOut = t.numOutputPoints();
    numRed = t.numReductionPoints();
    G = k.groupOutputs;
    G2 = k.groupOutputs2;
    for (unsigned o = 0; o < t.outputs.size(); ++o) {
      Type elt = getElementTypeOrSelf(op.getDpsInitOperand(o)->get().getType());
      outTypes.push_back(elt);
      accTypes.push_back(t.allCombinersKnown() ? accumulatorType(elt) : elt);
    }
  }

  FailureOr<LoweredTask> emit(EmitContext &ctx);

private:
  LogicalResult validate();
  SmallVector<Value> fullIndices(ArrayRef<Value> pIdx, ArrayRef<Value> rIdx);
  /// Combines f(point) over the chunks first+lane, first+lane+width, ... below first+count
  /// (chunks of vector_width points).
  /// For each of the G points (pIdxs) and outputs, point-major.
  SmallVector<Value> stridedAccumulate(KernelBuilder &kb, ArrayRef<SmallVector<Value>> pIdxs,
                                       Value lane, int64_t width, Value first, int64_t count);
  /// The parallel dimension (a position in t.parallelDims) a group of G points runs along: the
  /// one the most input bytes do not depend on; none when no input is invariant along any.
  std::optional<unsigned> groupDim(int64_t size, std::optional<unsigned> except = {}) const;
  /// Runs the payload on `args` (inputs, then outputs) at loop indices `ivs`, skipping the
  /// combiners, and folds f(inputs) into one point's accumulators (one per output).
  void foldPayload(KernelBuilder &kb, ArrayRef<Value> args, ArrayRef<Value> ivs,
                   ArrayRef<Operation *> combinerOps, MutableArrayRef<Value> accs);
  /// Whether parallel dimension position `i` can carry a window group (sets windowInputs, wpos).
  bool windowGroupAlong(unsigned i);
  /// stridedAccumulate for a window group (reduction=thread): each window input's span loaded
  /// once per group, then the G x W window points folded from registers.
  SmallVector<Value> windowAccumulate(KernelBuilder &kb, ArrayRef<SmallVector<Value>> pIdxs);
  /// The linear output point of parallel indices `pIdx`.
  Value linearPoint(KernelBuilder &kb, ArrayRef<Value> pIdx);
  /// The second kernel of a split reduction: partials [S, outputs] -> outputs.
  void emitCombine(EmitContext &ctx, ArrayRef<MemRefType> params);
  /// How the combine kernel spreads the outputs over threads.
  ReductionGroups combineGroups() const;
  /// The serial loop for payloads whose combiner is not recognized: exact linalg semantics.
  SmallVector<Value> sequentialPayload(KernelBuilder &kb, ArrayRef<Value> pIdx);
  Value initValue(KernelBuilder &kb, unsigned o, ArrayRef<Value> ivs);

  const GenericTask &t;
  const ScheduleKnobs &k;
  ReductionStrategy strategy;
  linalg::GenericOp op;
  SmallVector<int64_t> psizes, rsizes;
  int64_t numOut, numRed, G = 1, G2 = 1;
  unsigned gd = 0, gd2 = 0; // groupDim(), when G > 1; groupDim2, when G2 > 1
  /// A window group: the inputs read along its strided dimension, input index s*d + c*w.
  struct WindowInput {
    unsigned input;
    int64_t stride, dilation, span;
  };
  SmallVector<WindowInput> windowInputs; // empty: no window group
  unsigned wpos = 0;                     // the window's reduction dimension (in reductionDims)
  SmallVector<Type> outTypes, accTypes;
};

std::optional<unsigned> ReductionEmitter::groupDim(int64_t size,
                                                   std::optional<unsigned> except) const {
  SmallVector<AffineMap> maps = linalg::GenericOp(t.op).getIndexingMapsArray();
  std::optional<unsigned> best;
  int64_t bestBytes = 0;
  for (auto [i, d] : llvm::enumerate(t.parallelDims)) {
    if (psizes[i] % size || (except && *except == i))
      continue;
    int64_t bytes = 0;
    for (auto [j, src] : llvm::enumerate(t.inputs))
      if (src.isPlainBuffer() && !maps[j].isFunctionOfDim(d)) {
        MemRefType type = t.params[src.buffer];
        bytes += type.getNumElements() * type.getElementTypeBitWidth() / 8;
      }
    if (bytes > bestBytes) {
      best = i;
      bestBytes = bytes;
    }
  }
  return best;
}

/// `e` as coefficients of the loop dimensions and a constant (upstream's flattener), when it is
/// linear: sums and constant multiples, no floordiv/mod/ceildiv.
static bool linearForm(AffineExpr e, unsigned numDims, SmallVectorImpl<int64_t> &coeffs,
                       int64_t &constant) {
  SmallVector<int64_t> flat;
  if (failed(getFlattenedAffineExpr(e, numDims, 0, &flat)) || flat.size() != numDims + 1)
    return false;
  coeffs.assign(flat.begin(), flat.end() - 1);
  constant = flat.back();
  return true;
}

bool ReductionEmitter::windowGroupAlong(unsigned i) {
  const unsigned d = t.parallelDims[i];
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<WindowInput> found;
  std::optional<unsigned> pos;
  for (auto [j, src] : llvm::enumerate(t.inputs)) {
    if (!maps[j].isFunctionOfDim(d))
      continue;
    // Read along d only by its last index, s*d + c*w with w one reduction dimension.
    if (!src.isPlainBuffer() || maps[j].getNumResults() == 0)
      return false;
    ArrayRef<AffineExpr> results = maps[j].getResults();
    SmallVector<int64_t> coeffs;
    int64_t constant = 0;
    if (!linearForm(results.back(), t.loopSizes.size(), coeffs, constant) || constant != 0 ||
        coeffs[d] <= 0)
      return false;
    std::optional<unsigned> r;
    for (unsigned l = 0; l < coeffs.size(); ++l) {
      if (l == d || coeffs[l] == 0)
        continue;
      auto *at = llvm::find(t.reductionDims, l);
      if (r || at == t.reductionDims.end() || coeffs[l] < 0)
        return false;
      r = at - t.reductionDims.begin();
    }
    if (!r || (pos && *pos != *r))
      return false;
    for (AffineExpr e : results.drop_back())
      if (e.isFunctionOfDim(d) || e.isFunctionOfDim(t.reductionDims[*r]))
        return false;
    pos = r;
    const int64_t s = coeffs[d], c = coeffs[t.reductionDims[*r]], W = rsizes[*r];
    // (Bounded before the span is computed: no overflow on absurd strides or windows.)
    if (s > 64 || c > 64 || W > 64)
      return false;
    found.push_back({unsigned(j), s, c, s * (G - 1) + c * (W - 1) + 1});
  }
  // Spans and unrolled window points a thread keeps in registers.
  if (found.empty() || G * rsizes[*pos] > 256 ||
      llvm::any_of(found, [](const WindowInput &w) { return w.span > 64; }))
    return false;
  windowInputs = std::move(found);
  wpos = *pos;
  return true;
}

Value ReductionEmitter::linearPoint(KernelBuilder &kb, ArrayRef<Value> pIdx) {
  Value point = kb.idx(0);
  int64_t stride = 1;
  for (int64_t i = int64_t(pIdx.size()) - 1; i >= 0; --i) {
    point = kb.add(point, kb.mul(pIdx[i], stride));
    stride *= psizes[i];
  }
  return point;
}
} // namespace

LogicalResult ReductionEmitter::validate() {
  const int64_t vw = k.vectorWidth;
  // Only the inputs read along the innermost reduction dimension take vector accesses (results
  // and partials are written per output point): an f16 GEMV with f32 results reads 8 lanes.
  SmallVector<MemRefType> alongK;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  for (auto [i, src] : llvm::enumerate(t.inputs))
    if (src.isPlainBuffer() &&
        maps[i].isFunctionOfDim(t.reductionDims.back()))
      alongK.push_back(t.params[src.buffer]);
  bool known = t.allCombinersKnown();
  if (!known && (strategy != ReductionStrategy::Thread || k.accumulators != 1 || vw != 1))
    return op.emitError()
           << "reduction=" << stringifyReductionStrategy(strategy) << ", vector_width=" << vw
           << " and accumulators=" << k.accumulators
           << " need a payload of the form `yield combine(f(ins), out)` with an associative "
              "arith combiner; this one only lowers with reduction=thread, vector_width=1, "
              "accumulators=1";
  if (k.split > 1) {
    if (!known)
      return op.emitError() << "split=" << k.split
                            << " needs a payload of the form `yield combine(f(ins), out)` with an "
                               "associative arith combiner";
    if ((numRed / vw) % k.split != 0)
      return op.emitError() << "split=" << k.split << " does not divide the " << numRed / vw
                            << " reduction chunks of vector_width=" << vw << " points";
  }
  if (G > 1) {
    if (!known)
      return op.emitError() << "group_outputs=" << G
                            << " needs a payload of the form `yield combine(f(ins), out)` with an "
                               "associative arith combiner";
    std::optional<unsigned> d = groupDim(G);
    for (int64_t i = int64_t(psizes.size()) - 1; !d && i >= 0; --i)
      if (psizes[i] >= G && windowGroupAlong(i))
        d = i;
    if (!d)
      return op.emitError() << "group_outputs=" << G
                            << " needs an output dimension of a multiple of " << G
                            << " points along which some input stays the same (nothing to share), "
                               "or one along which a pooling window slides";
    gd = *d;
  }
  if (!windowInputs.empty()) {
    if (strategy != ReductionStrategy::Thread || G2 > 1 || k.split > 1)
      return op.emitError() << "group_outputs=" << G
                            << " along a pooling window needs reduction=thread, no "
                               "group_outputs2 and no split";
    // Spans start at s*G*group along rows that hold whole vectors: every access is aligned.
    for (const WindowInput &w : windowInputs) {
      MemRefType type = t.params[t.inputs[w.input].buffer];
      if (failed(checkVectorWidth(op, vw, type.getShape().back(), {type},
                                  "pooled dimension")))
        return failure();
      if ((w.stride * G) % vw != 0)
        return op.emitError() << "vector_width=" << vw << " does not divide the " << w.stride * G
                              << " elements between the windows of consecutive groups";
    }
  } else if (failed(checkVectorWidth(op, vw, rsizes.back(), alongK,
                                     "innermost reduction dimension"))) {
    return failure();
  }
  if (G2 > 1) {
    if (G == 1)
      return op.emitError() << "group_outputs2=" << G2 << " needs group_outputs > 1";
    std::optional<unsigned> d = groupDim(G2, gd);
    if (!d)
      return op.emitError() << "group_outputs2=" << G2
                            << " needs a second output dimension of a multiple of " << G2
                            << " points along which some input stays the same";
    gd2 = *d;
  }
  if (strategy != ReductionStrategy::Thread)
    for (Type acc : accTypes)
      if (acc.getIntOrFloatBitWidth() != 32 && acc.getIntOrFloatBitWidth() != 64)
        return op.emitError() << "reduction=" << stringifyReductionStrategy(strategy)
                              << " needs 32- or 64-bit accumulators, got " << acc;
  return success();
}

SmallVector<Value> ReductionEmitter::fullIndices(ArrayRef<Value> pIdx, ArrayRef<Value> rIdx) {
  SmallVector<Value> ivs(t.loopSizes.size());
  for (auto [i, d] : llvm::enumerate(t.parallelDims))
    ivs[d] = pIdx[i];
  for (auto [i, d] : llvm::enumerate(t.reductionDims))
    ivs[d] = rIdx[i];
  return ivs;
}

Value ReductionEmitter::initValue(KernelBuilder &kb, unsigned o, ArrayRef<Value> ivs) {
  const ValueSource &src = t.inits[o];
  AffineMap map = op.getIndexingMapsArray()[op.getNumDpsInputs() + o];
  return loadLanes(kb, src, map, outTypes[o], ivs, 0, 1).front();
}

SmallVector<Value> ReductionEmitter::stridedAccumulate(KernelBuilder &kb,
                                                       ArrayRef<SmallVector<Value>> pIdxs,
                                                       Value lane, int64_t width, Value first,
                                                       int64_t count) {
  const int64_t vw = k.vectorWidth, A = k.accumulators, P = int64_t(pIdxs.size());
  // One set of accumulators per point of the group: the combiners of output o repeat every
  // `numOutputs` values (combineAt below).
  const unsigned numOutputs = t.outputs.size() * P, perPoint = t.outputs.size();
  const unsigned laneDim = t.reductionDims.back();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<Operation *> combinerOps;
  for (const Combiner &c : t.combiners)
    combinerOps.push_back(c.op);

  SmallVector<Value> init;
  for (int64_t a = 0; a < A; ++a)
    for (unsigned o = 0; o < numOutputs; ++o)
      init.push_back(combinerIdentity(kb.b, kb.b.getLoc(), t.combiners[o % perPoint].op,
                                      accTypes[o % perPoint]));
  // The out block arguments only feed the (skipped) combiners.
  SmallVector<Value> unusedOuts;
  for (Type elt : outTypes)
    unusedOuts.push_back(kb.constant(cast<TypedAttr>(kb.b.getZeroAttr(elt))));

  // Folds one chunk of `vw` points into the accumulator set `accs`.
  // Point p of the group is (p / G2, p % G2) along (gd, gd2). An input is loaded once for the
  // points that differ only along group dimensions it does not depend on: its lanes at p are
  // those of the first point with the same coordinates along the dimensions it reads.
  auto sharedWith = [&](unsigned i, int64_t p) {
    int64_t j1 = p / G2, j2 = p % G2;
    if (G > 1 && !maps[i].isFunctionOfDim(t.parallelDims[gd]))
      j1 = 0;
    if (G2 > 1 && !maps[i].isFunctionOfDim(t.parallelDims[gd2]))
      j2 = 0;
    return j1 * G2 + j2;
  };
  // Streamed: read by one output point (or group) only, and not a buffer this kernel writes.
  // A dimension the input does not depend on is fine only where one group spans all of it (else
  // the next group along it reads the input again: a GEMV's x with groups of 4 rows).
  auto spansAll = [&](unsigned d) {
    return (G > 1 && d == t.parallelDims[gd] && psizes[gd] == G) ||
           (G2 > 1 && d == t.parallelDims[gd2] && psizes[gd2] == G2);
  };
  auto isStreamed = [&](unsigned i) {
    if (!k.streamLoads || t.inputs[i].kind != ValueSource::Kind::Buffer ||
        llvm::is_contained(t.outputs, t.inputs[i].buffer))
      return false;
    for (unsigned d = 0; d < t.loopSizes.size(); ++d)
      if (!maps[i].isFunctionOfDim(d) && !spansAll(d))
        return false;
    return true;
  };
  SmallVector<bool> streamed;
  for (unsigned i = 0; i < op.getNumDpsInputs(); ++i)
    streamed.push_back(isStreamed(i));
  auto accumulateChunk = [&](Value chunk, ValueRange accs) {
    SmallVector<Value> rIdx = kb.delinearize(kb.mul(chunk, vw), rsizes);
    SmallVector<SmallVector<Value>> pointIvs;
    for (ArrayRef<Value> pIdx : pIdxs)
      pointIvs.push_back(fullIndices(pIdx, rIdx));
    // inLanes[p][i]: input i's lanes at point p.
    SmallVector<SmallVector<SmallVector<Value>>> inLanes(P);
    for (int64_t p = 0; p < P; ++p)
      for (unsigned i = 0; i < op.getNumDpsInputs(); ++i) {
        int64_t first = sharedWith(i, p);
        inLanes[p].push_back(
            first < p
                ? inLanes[first][i]
                : loadLanes(kb, t.inputs[i], maps[i],
                            getElementTypeOrSelf(op.getDpsInputOperand(i)->get().getType()),
                            pointIvs[p], laneDim, vw, streamed[i]));
      }
    SmallVector<Value> next(accs.begin(), accs.end());
    for (int64_t p = 0; p < P; ++p)
      for (int64_t l = 0; l < vw; ++l) {
        SmallVector<Value> args;
        for (auto &lanes : inLanes[p])
          args.push_back(lanes[l]);
        args.append(unusedOuts);
        foldPayload(kb, args, laneIndices(kb, pointIvs[p], laneDim, l), combinerOps,
                    MutableArrayRef<Value>(next).slice(p * perPoint, perPoint));
      }
    return next;
  };

  const int64_t step = width * A;
  const bool exact = count % step == 0;
  // Folded when `first` is a constant, so that the loop keeps a static trip count (unrolling).
  Value end = kb.b.createOrFold<arith::AddIOp>(first, kb.idx(count));
  // Long serial walks (a naive one-thread reduction of 65536 points, a block's threads over a
  // 0-d sum of millions) accumulate in blocks (blockedForLoop): a two-level sum.
  auto combineAt = [&](unsigned i, Value a, Value b) {
    return combine(kb.b, kb.b.getLoc(), t.combiners[i % perPoint].op, a, b);
  };
  SmallVector<Value> accs = blockedForLoop(
      kb, kb.b.createOrFold<arith::AddIOp>(first, lane), end, step, ceilDiv(count, step), init,
      combineAt, [&](Value c0, ValueRange carried) {
        SmallVector<Value> out;
        for (int64_t a = 0; a < A; ++a) {
          ValueRange cur = carried.slice(a * numOutputs, numOutputs);
          Value chunk = kb.add(c0, a * width);
          SmallVector<Value> next;
          if (exact || a == 0) {
            next = accumulateChunk(chunk, cur);
          } else {
            next = kb.ifThenElse(
                arith::CmpIOp::create(kb.b, arith::CmpIPredicate::ult, chunk, end), cur.getTypes(),
                [&] { return accumulateChunk(chunk, cur); },
                [&] { return SmallVector<Value>(cur.begin(), cur.end()); });
          }
          out.append(next);
        }
        return out;
      });
  // Fold the independent accumulators.
  SmallVector<Value> result(accs.begin(), accs.begin() + numOutputs);
  for (int64_t a = 1; a < A; ++a)
    for (unsigned o = 0; o < numOutputs; ++o)
      result[o] = combine(kb.b, kb.b.getLoc(), t.combiners[o % perPoint].op, result[o],
                          accs[a * numOutputs + o]);
  return result;
}

void ReductionEmitter::foldPayload(KernelBuilder &kb, ArrayRef<Value> args, ArrayRef<Value> ivs,
                                   ArrayRef<Operation *> combinerOps,
                                   MutableArrayRef<Value> accs) {
  IRMapping map;
  clonePayload(kb.b, op, args, ivs, combinerOps, map);
  for (auto [o, acc] : llvm::enumerate(accs)) {
    const Combiner &c = t.combiners[o];
    Value x = castTo(kb.b, kb.b.getLoc(), map.lookupOrDefault(c.op->getOperand(c.valueOperand)),
                     accTypes[o]);
    acc = combine(kb.b, kb.b.getLoc(), c.op, acc, x);
  }
}

SmallVector<Value> ReductionEmitter::windowAccumulate(KernelBuilder &kb,
                                                     ArrayRef<SmallVector<Value>> pIdxs) {
  const unsigned perPoint = t.outputs.size();
  const int64_t W = rsizes[wpos], vw = k.vectorWidth;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<Operation *> combinerOps;
  for (const Combiner &c : t.combiners)
    combinerOps.push_back(c.op);
  SmallVector<Value> init, unusedOuts;
  for (int64_t g = 0; g < G; ++g)
    for (unsigned o = 0; o < perPoint; ++o)
      init.push_back(
          combinerIdentity(kb.b, kb.b.getLoc(), t.combiners[o].op, accTypes[o]));
  for (Type elt : outTypes)
    unusedOuts.push_back(kb.constant(cast<TypedAttr>(kb.b.getZeroAttr(elt))));
  auto inputType = [&](unsigned i) {
    return getElementTypeOrSelf(op.getDpsInputOperand(i)->get().getType());
  };
  // The reduction points besides the window's (a 2-D window's rows) are walked serially.
  SmallVector<int64_t> osizes;
  for (auto [rp, size] : llvm::enumerate(rsizes))
    if (rp != wpos)
      osizes.push_back(size);
  auto reductionIdx = [&](ArrayRef<Value> outer, int64_t w) {
    SmallVector<Value> r;
    for (unsigned rp = 0, o = 0; rp < rsizes.size(); ++rp)
      r.push_back(rp == wpos ? kb.idx(w) : outer[o++]);
    return r;
  };
  auto windowIndex = [&](unsigned i) -> std::optional<unsigned> {
    for (auto [n, w] : llvm::enumerate(windowInputs))
      if (w.input == i)
        return n;
    return std::nullopt;
  };
  // Folds the group's G x W window points into `accs`; `windowValue(n, g, w)` is window input
  // n's value for point g at window position w.
  auto fold = [&](ArrayRef<Value> outer, ValueRange accs, ArrayRef<SmallVector<Value>> points,
                  llvm::function_ref<Value(unsigned, int64_t, int64_t)> windowValue) {
    SmallVector<Value> next(accs.begin(), accs.end());
    for (int64_t g = 0; g < G; ++g)
      for (int64_t w = 0; w < W; ++w) {
        SmallVector<Value> ivs = fullIndices(points[g], reductionIdx(outer, w));
        SmallVector<Value> args;
        for (unsigned i = 0; i < op.getNumDpsInputs(); ++i) {
          std::optional<unsigned> n = windowIndex(i);
          args.push_back(n ? windowValue(*n, g, w)
                           : loadLanes(kb, t.inputs[i], maps[i], inputType(i), ivs, 0, 1).front());
        }
        args.append(unusedOuts);
        foldPayload(kb, args, ivs, combinerOps,
                    MutableArrayRef<Value>(next).slice(g * perPoint, perPoint));
      }
    return next;
  };
  // Each window input's span, loaded once: `vw` elements per access (aligned: validate()),
  // scalar loads for a tail shorter than a vector.
  auto spans = [&](ArrayRef<Value> outer, ValueRange accs) {
    SmallVector<Value> ivs0 = fullIndices(pIdxs.front(), reductionIdx(outer, 0));
    SmallVector<SmallVector<Value>> span;
    for (const WindowInput &w : windowInputs) {
      const ValueSource &src = t.inputs[w.input];
      Type elt = inputType(w.input);
      SmallVector<Value> at = kb.applyMap(maps[w.input], ivs0);
      Value first = at.back();
      span.emplace_back();
      for (int64_t j = 0; j < w.span;) {
        at.back() = kb.add(first, j);
        if (vw > 1 && j + vw <= w.span) {
          auto load = vector::LoadOp::create(kb.b, VectorType::get({vw}, elt),
                                             kb.param(src.buffer), at);
          if (int64_t align = vectorAlignment(elt, vw))
            load.setAlignment(align);
          for (int64_t l = 0; l < vw; ++l)
            span.back().push_back(vector::ExtractOp::create(kb.b, load, l));
          j += vw;
        } else {
          span.back().push_back(memref::LoadOp::create(kb.b, kb.param(src.buffer), at));
          ++j;
        }
      }
    }
    return fold(outer, accs, pIdxs, [&](unsigned n, int64_t g, int64_t w) {
      const WindowInput &in = windowInputs[n];
      return span[n][in.stride * g + in.dilation * w];
    });
  };
  const int64_t extent = psizes[gd];
  return kb.forLoop(
      kb.idx(0), kb.idx(ShapedType::getNumElements(osizes)), 1, init,
      [&](Value r, ValueRange carried) {
        SmallVector<Value> outer = kb.delinearize(r, osizes);
        if (extent % G == 0)
          return spans(outer, carried);
        // The last group along a dimension G does not divide: its points past the end compute
        // the last point again (in bounds; not stored).
        return kb.ifThenElse(
            kb.lt(pIdxs.back()[gd], extent), carried.getTypes(),
            [&] { return spans(outer, carried); },
            [&] {
              SmallVector<SmallVector<Value>> clamped(pIdxs.begin(), pIdxs.end());
              for (SmallVector<Value> &p : clamped)
                p[gd] = arith::MinUIOp::create(kb.b, p[gd], kb.idx(extent - 1));
              return fold(outer, carried, clamped, [&](unsigned n, int64_t g, int64_t w) {
                unsigned i = windowInputs[n].input;
                SmallVector<Value> ivs = fullIndices(clamped[g], reductionIdx(outer, w));
                return loadLanes(kb, t.inputs[i], maps[i], inputType(i), ivs, 0, 1).front();
              });
            });
      });
}

SmallVector<Value> ReductionEmitter::sequentialPayload(KernelBuilder &kb, ArrayRef<Value> pIdx) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<Value> zeroR(rsizes.size(), kb.idx(0));
  SmallVector<Value> init;
  for (unsigned o = 0; o < t.outputs.size(); ++o)
    init.push_back(initValue(kb, o, fullIndices(pIdx, zeroR)));
  return kb.forLoop(kb.idx(0), kb.idx(numRed), 1, init, [&](Value r, ValueRange accs) {
    SmallVector<Value> ivs = fullIndices(pIdx, kb.delinearize(r, rsizes));
    SmallVector<Value> args;
    for (unsigned i = 0; i < op.getNumDpsInputs(); ++i)
      args.push_back(loadLanes(kb, t.inputs[i], maps[i],
                               getElementTypeOrSelf(op.getDpsInputOperand(i)->get().getType()),
                               ivs, 0, 1)
                         .front());
    args.append(accs.begin(), accs.end());
    IRMapping map;
    clonePayload(kb.b, op, args, ivs, {}, map);
    return payloadResults(op, map);
  });
}

FailureOr<LoweredTask> ReductionEmitter::emit(EmitContext &ctx) {
  if (failed(validate()))
    return failure();
  const int64_t bs = k.blockSize;
  const ReductionGroups groups{strategy, bs};
  // A thread/warp/block computes G points (G divides the group's dimension, except for a window
  // group, whose last group may be partial).
  SmallVector<int64_t> gsizes(psizes);
  if (G > 1)
    gsizes[gd] = ceilDiv(gsizes[gd], G);
  if (G2 > 1)
    gsizes[gd2] /= G2;
  const int64_t numGroups = ShapedType::getNumElements(gsizes);
  int64_t grid = ceilDiv(numGroups, groups.pointsPerBlock());
  if (grid > std::numeric_limits<int32_t>::max())
    return op.emitError("evo-lower-to-gpu: grid too large");

  const int64_t S = k.split, numChunks = numRed / k.vectorWidth;
  SmallVector<MemRefType> params(t.params.begin(), t.params.end());
  SmallVector<BufferDesc, 2> scratch;
  if (S > 1)
    for (Type acc : accTypes) {
      params.push_back(MemRefType::get({S, numOut}, acc));
      scratch.push_back({"", BufferRole::Scratch, params.back()});
    }
  SmallVector<MemRefType> workgroup;
  if (groups.needsWorkgroupBuffer())
    for (Type acc : accTypes)
      workgroup.push_back(workgroupBuffer(op.getContext(), bs / 32, acc));
  KernelBuilder kb(ctx.module, ctx.kernelName, params, workgroup, {bs, 1, 1}, op.getLoc());
  Value tid = kb.threadId(), bid = kb.blockId();
  Value point, lane;
  std::tie(point, lane) = groups.pointAndLane(kb, tid, bid);
  const int64_t width = groups.width();

  auto body = [&] {
    // The group's points: `point` is the group's index, its points G consecutive ones along gd
    // (times G2 along gd2).
    SmallVector<Value> gIdx = kb.delinearize(point, gsizes);
    SmallVector<SmallVector<Value>> pIdxs;
    for (int64_t j = 0; j < G * G2; ++j) {
      SmallVector<Value> pIdx(gIdx);
      if (G > 1)
        pIdx[gd] = kb.add(kb.mul(gIdx[gd], G), j / G2);
      if (G2 > 1)
        pIdx[gd2] = kb.add(kb.mul(gIdx[gd2], G2), j % G2);
      pIdxs.push_back(pIdx);
    }
    SmallVector<Value> pIdx = pIdxs.front();
    SmallVector<Value> zeroR(rsizes.size(), kb.idx(0));
    SmallVector<Value> outIvs = fullIndices(pIdx, zeroR);
    if (!t.allCombinersKnown()) {
      SmallVector<Value> results = sequentialPayload(kb, pIdx);
      for (auto [o, v] : llvm::enumerate(results))
        storeOutput(kb, t, o, outIvs, 0, {v}, /*wide=*/false);
      return;
    }
    Value slice = S > 1 ? kb.blockId(gpu::Dimension::y) : kb.idx(0);
    SmallVector<Value> partial =
        !windowInputs.empty()
            ? windowAccumulate(kb, pIdxs)
            : stridedAccumulate(kb, pIdxs, lane, width,
                                S > 1 ? kb.mul(slice, numChunks / S) : kb.idx(0), numChunks / S);
    const unsigned numOutputs = t.outputs.size();
    for (unsigned i = 0; i < partial.size(); ++i) {
      const unsigned o = i % numOutputs;
      Operation *c = t.combiners[o].op;
      auto fn = [&](Value a, Value b) { return combine(kb.b, kb.b.getLoc(), c, a, b); };
      partial[i] = groups.reduce(
          kb, partial[i], [&] { return kb.workgroup(o); },
          [&] { return combinerIdentity(kb.b, kb.b.getLoc(), c, accTypes[o]); }, fn);
    }
    auto write = [&] {
      for (int64_t j = 0; j < G * G2; ++j) {
        if (S > 1) {
          Value at = G > 1 ? linearPoint(kb, pIdxs[j]) : point;
          for (unsigned o = 0; o < numOutputs; ++o)
            memref::StoreOp::create(kb.b, partial[j * numOutputs + o],
                                    kb.param(t.params.size() + o), ValueRange{slice, at});
          continue;
        }
        SmallVector<Value> ivs = fullIndices(pIdxs[j], zeroR);
        auto store = [&] {
          for (unsigned o = 0; o < numOutputs; ++o) {
            Value result = partial[j * numOutputs + o];
            if (t.inits[o].kind != ValueSource::Kind::None) {
              Value init = castTo(kb.b, kb.b.getLoc(), initValue(kb, o, ivs), accTypes[o]);
              result = combine(kb.b, kb.b.getLoc(), t.combiners[o].op, init, result);
            }
            // The naive matmul's epilogue runs exactly as the unfused ops would (wide=false).
            storeOutput(kb, t, o, ivs, 0, {result}, /*wide=*/false);
          }
        };
        // A partial last group (window groups only) stores the points inside the dimension.
        if (G > 1 && psizes[gd] % G != 0 && j > 0)
          kb.ifThen(kb.lt(pIdxs[j][gd], psizes[gd]), store);
        else
          store();
      }
    };
    if (strategy == ReductionStrategy::Thread)
      write();
    else
      kb.ifThen(kb.eq(lane, 0), write);
  };
  // The guard is uniform across a warp for the warp strategy, so shuffles stay convergent.
  if (numGroups % groups.pointsPerBlock() == 0)
    body();
  else
    kb.ifThen(kb.lt(point, numGroups), body);
  kb.finish();

  LoweredTask lowered = singleKernel(TaskFamily::Reduction, ctx, {grid, S, 1}, {bs, 1, 1}, params.size());
  lowered.scratch = scratch;
  if (S > 1) {
    // The partials' combine: the same buffers, one thread per output.
    KernelLaunch launch = lowered.launches.front();
    EmitContext combineCtx{ctx.module, ctx.kernelName + "_combine"};
    emitCombine(combineCtx, params);
    launch.kernel = combineCtx.kernelName;
    launch.grid = {ceilDiv(numOut, combineGroups().pointsPerBlock()), 1, 1};
    launch.block = {combineGroups().blockSize, 1, 1};
    lowered.launches.push_back(launch);
  }
  return lowered;
}

ReductionGroups ReductionEmitter::combineGroups() const {
  // Few outputs leave most of the GPU idle anyway; the lanes then shorten the serial chain.
  bool warp = k.split >= 32 && numOut <= 4096;
  return {warp ? ReductionStrategy::Warp : ReductionStrategy::Thread, 256};
}

void ReductionEmitter::emitCombine(EmitContext &ctx, ArrayRef<MemRefType> params) {
  const int64_t S = k.split;
  const ReductionGroups groups = combineGroups();
  const int64_t bs = groups.blockSize, width = groups.width();
  KernelBuilder kb(ctx.module, ctx.kernelName, params, {}, {bs, 1, 1}, op.getLoc());
  auto [point, lane] = groups.pointAndLane(kb, kb.threadId(), kb.blockId());
  auto body = [&] {
    SmallVector<Value> pIdx = kb.delinearize(point, psizes);
    SmallVector<Value> outIvs = fullIndices(pIdx, SmallVector<Value>(rsizes.size(), kb.idx(0)));
    for (unsigned o = 0; o < t.outputs.size(); ++o) {
      Operation *c = t.combiners[o].op;
      Value identity = combinerIdentity(kb.b, kb.b.getLoc(), c, accTypes[o]);
      Value partials = kb.param(t.params.size() + o);
      auto fn = [&](Value a, Value b) { return combine(kb.b, kb.b.getLoc(), c, a, b); };
      // A fixed order (each lane its slices in order, then the butterfly): the result does not
      // depend on scheduling.
      Value total = kb.forLoop(lane, kb.idx(S), width, {identity}, [&](Value s, ValueRange acc) {
                        Value x = memref::LoadOp::create(kb.b, partials, ValueRange{s, point});
                        return SmallVector<Value>{fn(acc[0], x)};
                      }).front();
      if (width > 1)
        total = warpReduce(kb, total, fn);
      auto write = [&] {
        Value result = total;
        if (t.inits[o].kind != ValueSource::Kind::None) {
          Value init = castTo(kb.b, kb.b.getLoc(), initValue(kb, o, outIvs), accTypes[o]);
          result = fn(init, result);
        }
        storeOutput(kb, t, o, outIvs, 0, {result}, /*wide=*/false);
      };
      if (width > 1)
        kb.ifThen(kb.eq(lane, 0), write);
      else
        write();
    }
  };
  // The guard is uniform across a warp, so the shuffles stay convergent.
  if (numOut % groups.pointsPerBlock() == 0)
    body();
  else
    kb.ifThen(kb.lt(point, numOut), body);
  kb.finish();
}

FailureOr<LoweredTask> emitReduction(const GenericTask &t, const ScheduleKnobs &k,
                                     EmitContext &ctx) {
  return ReductionEmitter(t, k, k.reduction).emit(ctx);
}

} // namespace evo
