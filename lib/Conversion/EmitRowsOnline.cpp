//===- EmitRowsOnline.cpp - row programs' one-pass folds ------------------===//
//
// Two reductions over the same row folded in one pass when the row is re-read from memory for
// each pass: a softmax's max and sum of exponentials (onlineMaxSum, written as linalg.softmax
// or as generics: expSumAfterMax), and a sum with the sum of squared distances to its mean
// (onlineMoments: Welford per thread, Chan's merge; centredSquaresAfterSum). docs/lowering.md,
// "Online softmax" and "One-pass statistics".
//
//===----------------------------------------------------------------------===//

#include "RowPrograms.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

namespace evo {

using namespace rows;

/// Whether a reduction (or a softmax) lies strictly between `first` and `last` of one block: two
/// reductions folded together take the shared buffers emit() made for them in order, so none
/// may come in between.
static bool reductionBetween(Operation *first, Operation *last) {
  for (Operation *op = first->getNextNode(); op != last; op = op->getNextNode())
    if (isa<linalg::SoftmaxOp>(op) ||
        (isa<linalg::GenericOp>(op) && cast<linalg::GenericOp>(op).getNumReductionLoops()))
      return true;
  return false;
}

bool RowEmitter::onlineSoftmax() const {
  // Measured on the H200 (docs/bench.md): rows of 65536 f32 took 0.97 ms online against 1.03 in
  // two passes; rows of 4096 (16 KiB, whose second read mostly hits the caches) 0.072 against
  // 0.052, the online step's dependent chain (exp of the distance to the running max, then the
  // rescale) costing more than the read it saves. So: rows of 64 KiB or more.
  int64_t bytes = shape.cols * rowElementBytes;
  return !k.cacheRow && split == 1 && bytes >= 65536 && ceilDiv(numChunks, width) <= 1024;
}

std::pair<Value, Value>
RowEmitter::onlineMaxSum(Type acc, function_ref<SmallVector<Value>(Chunk &)> produce) {
  auto &b = kb->b;
  auto fty = cast<FloatType>(acc);
  Value negInf = kb->constant(FloatAttr::get(acc, APFloat::getInf(fty.getFloatSemantics(), true)));
  Value posInf = kb->constant(FloatAttr::get(acc, APFloat::getInf(fty.getFloatSemantics())));
  Value zero = kb->constant(FloatAttr::get(acc, 0.0));
  Value one = kb->constant(FloatAttr::get(acc, 1.0));
  auto cmp = [&](arith::CmpFPredicate p, Value a, Value c) {
    return arith::CmpFOp::create(b, loc, p, a, c);
  };
  // One element x into (m, s): one exp, of minus the distance to the running max.
  auto step = [&](Value m, Value s, Value x) -> std::pair<Value, Value> {
    Value d = arith::SubFOp::create(b, loc, x, m);
    Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, math::AbsFOp::create(b, loc, d)));
    e = arith::SelectOp::create(b, loc, cmp(arith::CmpFPredicate::OEQ, x, negInf), zero, e);
    Value above = cmp(arith::CmpFPredicate::OGT, d, zero); // false for NaN
    Value rescaled = arith::AddFOp::create(b, loc, arith::MulFOp::create(b, loc, s, e), one);
    Value added = arith::AddFOp::create(b, loc, s, e);
    return {arith::MaximumFOp::create(b, loc, m, x),
            arith::SelectOp::create(b, loc, above, rescaled, added)};
  };
  // Two pairs into one.
  auto merge = [&](Value m1, Value s1, Value m2, Value s2) -> std::pair<Value, Value> {
    Value m = arith::MaximumFOp::create(b, loc, m1, m2);
    auto scaled = [&](Value mi, Value si) -> Value {
      Value f = arith::MulFOp::create(
          b, loc, si, math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, mi, m)));
      return arith::SelectOp::create(b, loc, cmp(arith::CmpFPredicate::OEQ, mi, negInf), zero, f);
    };
    return {m, arith::AddFOp::create(b, loc, scaled(m1, s1), scaled(m2, s2))};
  };
  // vw independent chains over this thread's chunks, then merged.
  SmallVector<Value> init;
  for (int64_t l = 0; l < vw; ++l)
    init.append({negInf, zero});
  SmallVector<Value> chains =
      kb->forLoop(chunkBegin(), chunkEnd(), width, init, [&](Value chunk, ValueRange carried) {
        Chunk c(kb->mul(chunk, vw));
        SmallVector<Value> xs = produce(c);
        SmallVector<Value> next;
        for (int64_t l = 0; l < vw; ++l) {
          auto [m, s] = step(carried[2 * l], carried[2 * l + 1], castTo(b, loc, xs[l], acc));
          next.append({m, s});
        }
        return next;
      });
  Value m = chains[0], s = chains[1];
  for (int64_t l = 1; l < vw; ++l)
    std::tie(m, s) = merge(m, s, chains[2 * l], chains[2 * l + 1]);
  // Across the threads of the row: a butterfly over the warp, then (block) the warps' pairs
  // through shared memory, folded by every thread in warp order.
  auto warpMerge = [&] {
    for (int32_t offset = 16; offset >= 1; offset /= 2) {
      Value m2 = gpu::ShuffleOp::create(b, m, offset, 32, gpu::ShuffleMode::XOR).getShuffleResult();
      Value s2 = gpu::ShuffleOp::create(b, s, offset, 32, gpu::ShuffleMode::XOR).getShuffleResult();
      std::tie(m, s) = merge(m, s, m2, s2);
    }
  };
  if (groups.strategy != ReductionStrategy::Thread) {
    if (groups.strategy == ReductionStrategy::Block && groups.needsWorkgroupBuffer()) {
      Value smemM = kb->workgroup(nextSmem++), smemS = kb->workgroup(nextSmem++);
      Value tid = kb->threadId();
      gpu::BarrierOp::create(b);
      warpMerge();
      kb->ifThen(kb->eq(kb->rem(tid, 32), 0), [&] {
        memref::StoreOp::create(b, m, smemM, ValueRange{kb->div(tid, 32)});
        memref::StoreOp::create(b, s, smemS, ValueRange{kb->div(tid, 32)});
      });
      gpu::BarrierOp::create(b);
      Value tm = negInf, ts = zero;
      for (int64_t w = 0; w < k.blockSize / 32; ++w)
        std::tie(tm, ts) = merge(tm, ts, memref::LoadOp::create(b, smemM, ValueRange{kb->idx(w)}),
                                 memref::LoadOp::create(b, smemS, ValueRange{kb->idx(w)}));
      m = tm;
      s = ts;
    } else {
      warpMerge();
    }
  }
  // The two passes' sum holds exp(inf - inf) = NaN when the max is +inf.
  Value nan = kb->constant(FloatAttr::get(acc, APFloat::getNaN(fty.getFloatSemantics())));
  s = arith::SelectOp::create(b, loc, cmp(arith::CmpFPredicate::OEQ, m, posInf), nan, s);
  return {m, s};
}

linalg::GenericOp RowEmitter::expSumAfterMax(linalg::GenericOp max) {
  // max: one full input x, `yield maximumf(in, out)`, init -inf.
  auto isNegInf = [](Value v) {
    auto f = dyn_cast_or_null<FloatAttr>(scalarConstant(v));
    return f && f.getValue().isInfinity() && f.getValue().isNegative();
  };
  auto isZero = [](Value v) {
    auto f = dyn_cast_or_null<FloatAttr>(scalarConstant(v));
    return f && f.getValue().isPosZero();
  };
  unsigned n = fullRank();
  if (max.getNumDpsInputs() != 1 || max.getNumResults() != 1 || !isNegInf(max.getDpsInits()[0]))
    return {};
  Type elt = getElementTypeOrSelf(max.getResult(0).getType());
  if (!isa<FloatType>(elt) || accumulatorType(elt) != elt ||
      getElementTypeOrSelf(max.getDpsInputs()[0].getType()) != elt ||
      roleOf(max.getIndexingMapsArray()[0], n, colRank(), false) != Role::Full)
    return {};
  Block &mb = max.getRegion().front();
  auto myield = cast<linalg::YieldOp>(mb.getTerminator());
  auto mop = myield.getOperand(0).getDefiningOp<arith::MaximumFOp>();
  if (!mop || &mb.front() != mop.getOperation() ||
      !((mop.getLhs() == mb.getArgument(0) && mop.getRhs() == mb.getArgument(1)) ||
        (mop.getLhs() == mb.getArgument(1) && mop.getRhs() == mb.getArgument(0))))
    return {};
  // The sum: the only other user of max's result among the later reductions, reading the same x
  // at the same point: `yield addf(exp(subf(x, max)), out)`, init 0.
  Value x = max.getDpsInputs()[0], r = max.getResult(0);
  for (Operation *user : r.getUsers()) {
    auto sum = dyn_cast<linalg::GenericOp>(user);
    if (!sum || sum.getNumDpsInputs() != 2 || sum.getNumResults() != 1 ||
        sum.getNumReductionLoops() != max.getNumReductionLoops() || sum.getDpsInputs()[0] != x ||
        sum.getDpsInputs()[1] != r || !isZero(sum.getDpsInits()[0]) ||
        getElementTypeOrSelf(sum.getResult(0).getType()) != elt ||
        sum.getIndexingMapsArray()[0] != max.getIndexingMapsArray()[0] ||
        roleOf(sum.getIndexingMapsArray()[1], n, colRank(), false) != Role::Row)
      continue;
    Block &sb = sum.getRegion().front();
    auto syield = cast<linalg::YieldOp>(sb.getTerminator());
    auto add = syield.getOperand(0).getDefiningOp<arith::AddFOp>();
    if (!add || std::distance(sb.begin(), sb.end()) != 4)
      continue;
    Value other = add.getLhs() == sb.getArgument(2) ? add.getRhs() : add.getLhs();
    if (add.getLhs() != sb.getArgument(2) && add.getRhs() != sb.getArgument(2))
      continue;
    auto e = other.getDefiningOp<math::ExpOp>();
    auto d = e ? e.getOperand().getDefiningOp<arith::SubFOp>() : arith::SubFOp();
    if (!d || d.getLhs() != sb.getArgument(0) || d.getRhs() != sb.getArgument(1))
      continue;
    if (sum->getBlock() != max->getBlock() || !max->isBeforeInBlock(sum) ||
        reductionBetween(max, sum))
      continue;
    return sum;
  }
  return {};
}

bool RowEmitter::onlineMomentsFit() const {
  // Equal counts per thread make every merge's weights compile-time constants. Rows under
  // 64 KiB are re-read from the caches, where the two passes are cheaper than Welford's
  // division per step (as for onlineSoftmax); a thread's chain stays short (a long one keeps
  // the two passes' two-level sums).
  int64_t bytes = shape.cols * rowElementBytes;
  return !k.cacheRow && split == 1 && bytes >= 65536 && numChunks % width == 0 &&
         numChunks / width <= 1024;
}

linalg::GenericOp RowEmitter::centredSquaresAfterSum(linalg::GenericOp sum) {
  auto isZero = [](Value v) {
    auto f = dyn_cast_or_null<FloatAttr>(scalarConstant(v));
    return f && f.getValue().isZero();
  };
  // `yield op(a, b)` (either order) as the block's only op before the yield, or null.
  auto onlyOp = [](Block &b, unsigned numOps) -> Operation * {
    if (static_cast<unsigned>(std::distance(b.begin(), b.end())) != numOps + 1)
      return nullptr;
    return cast<linalg::YieldOp>(b.getTerminator()).getOperand(0).getDefiningOp();
  };
  auto isPair = [](Operation *op, Value a, Value b) {
    return op && ((op->getOperand(0) == a && op->getOperand(1) == b) ||
                  (op->getOperand(0) == b && op->getOperand(1) == a));
  };
  unsigned n = fullRank();
  if (sum.getNumDpsInputs() != 1 || sum.getNumResults() != 1 || !isZero(sum.getDpsInits()[0]))
    return {};
  Type elt = getElementTypeOrSelf(sum.getResult(0).getType());
  Value x = sum.getDpsInputs()[0];
  if (!isa<FloatType>(elt) || accumulatorType(elt) != elt ||
      getElementTypeOrSelf(x.getType()) != elt ||
      roleOf(sum.getIndexingMapsArray()[0], n, colRank(), false) != Role::Full)
    return {};
  Block &sb = sum.getRegion().front();
  if (!isPair(onlyOp(sb, 1), sb.getArgument(0), sb.getArgument(1)) ||
      !isa<arith::AddFOp>(onlyOp(sb, 1)))
    return {};
  // `in / cols` or `in * (1 / cols)` (exactly), the constant from outside the payload.
  auto isMeanOf = [&](Operation *op, Value in) {
    auto cst = [&](Value v) -> std::optional<double> {
      if (v.getParentBlock() == op->getBlock())
        return std::nullopt;
      auto f = dyn_cast_or_null<FloatAttr>(scalarConstant(v));
      return f ? std::optional<double>(f.getValueAsDouble()) : std::nullopt;
    };
    if (auto div = dyn_cast_or_null<arith::DivFOp>(op))
      return div.getLhs() == in && cst(div.getRhs()) == double(shape.cols);
    if (auto mul = dyn_cast_or_null<arith::MulFOp>(op)) {
      Value other = mul.getLhs() == in ? mul.getRhs() : mul.getLhs();
      std::optional<double> c = cst(other);
      return (mul.getLhs() == in || mul.getRhs() == in) && c && *c * double(shape.cols) == 1.0;
    }
    return false;
  };
  // The mean: its own row-wise op (`mean = sum / cols`), or computed inside the variance's
  // payload from the sum (as elementwise fusion leaves it).
  SmallVector<Value> means{sum.getResult(0)};
  for (Operation *user : sum.getResult(0).getUsers())
    if (auto mean = dyn_cast<linalg::GenericOp>(user);
        mean && !mean.getNumReductionLoops() && mean.getNumDpsInputs() == 1 &&
        mean.getNumResults() == 1 && mean->getBlock() == sum->getBlock()) {
      Block &mb = mean.getRegion().front();
      if (isMeanOf(onlyOp(mb, 1), mb.getArgument(0)))
        means.push_back(mean.getResult(0));
    }
  for (Value meanOrSum : means) {
    bool inPayload = meanOrSum == sum.getResult(0);
    // var = sum over the row of (x - mean)^2, the same x at the same point.
    for (Operation *user : meanOrSum.getUsers()) {
      auto var = dyn_cast<linalg::GenericOp>(user);
      if (!var || var.getNumDpsInputs() != 2 || var.getNumResults() != 1 ||
          var.getNumReductionLoops() != sum.getNumReductionLoops() ||
          var.getDpsInputs()[0] != x || var.getDpsInputs()[1] != meanOrSum ||
          !isZero(var.getDpsInits()[0]) ||
          getElementTypeOrSelf(var.getResult(0).getType()) != elt ||
          var.getIndexingMapsArray()[0] != sum.getIndexingMapsArray()[0] ||
          roleOf(var.getIndexingMapsArray()[1], n, colRank(), false) != Role::Row ||
          var->getBlock() != sum->getBlock() || !sum->isBeforeInBlock(var))
        continue;
      Block &vb = var.getRegion().front();
      Operation *add = onlyOp(vb, inPayload ? 4 : 3);
      if (!isa_and_nonnull<arith::AddFOp>(add))
        continue;
      Value sq = add->getOperand(0) == vb.getArgument(2) ? add->getOperand(1) : add->getOperand(0);
      auto mul = sq.getDefiningOp<arith::MulFOp>();
      auto d = mul ? mul.getLhs().getDefiningOp<arith::SubFOp>() : arith::SubFOp();
      if (!isPair(add, sq, vb.getArgument(2)) || !mul || mul.getLhs() != mul.getRhs() || !d ||
          d.getLhs() != vb.getArgument(0))
        continue;
      if (inPayload ? !isMeanOf(d.getRhs().getDefiningOp(), vb.getArgument(1))
                    : d.getRhs() != vb.getArgument(1))
        continue;
      if (!reductionBetween(sum, var))
        return var;
    }
  }
  return {};
}

std::pair<Value, Value>
RowEmitter::onlineMoments(Type acc, function_ref<SmallVector<Value>(Chunk &)> produce) {
  auto &b = kb->b;
  auto c = [&](double v) { return kb->constant(FloatAttr::get(acc, v)); };
  auto add = [&](Value x, Value y) -> Value { return arith::AddFOp::create(b, loc, x, y); };
  auto sub = [&](Value x, Value y) -> Value { return arith::SubFOp::create(b, loc, x, y); };
  auto mul = [&](Value x, Value y) -> Value { return arith::MulFOp::create(b, loc, x, y); };
  // Two partials of na and nb elements into one (Chan et al.): the weights are constants, since
  // every thread folds numChunks / width chunks.
  auto merge = [&](Value ma, Value qa, Value mb, Value qb, double na, double nb) {
    Value d = sub(mb, ma);
    Value m = add(ma, mul(d, c(nb / (na + nb))));
    Value q = add(add(qa, qb), mul(mul(d, d), c(na * nb / (na + nb))));
    return std::pair<Value, Value>{m, q};
  };
  // Welford per chain: vw chains (one per lane of a chunk), the step's 1 / count shared.
  SmallVector<Value> init{c(0)};
  for (int64_t l = 0; l < vw; ++l)
    init.append({c(0), c(0)});
  SmallVector<Value> chains =
      kb->forLoop(chunkBegin(), chunkEnd(), width, init, [&](Value chunk, ValueRange carried) {
        Chunk ch(kb->mul(chunk, vw));
        SmallVector<Value> xs = produce(ch);
        Value count = add(carried[0], c(1));
        Value r = arith::DivFOp::create(b, loc, c(1), count);
        SmallVector<Value> next{count};
        for (int64_t l = 0; l < vw; ++l) {
          Value x = castTo(b, loc, xs[l], acc), m = carried[1 + 2 * l], q = carried[2 + 2 * l];
          Value d = sub(x, m);
          Value m2 = add(m, mul(d, r));
          next.append({m2, add(q, mul(d, sub(x, m2)))});
        }
        return next;
      });
  double perChain = double(numChunks / width);
  Value m = chains[1], q = chains[2];
  for (int64_t l = 1; l < vw; ++l)
    std::tie(m, q) = merge(m, q, chains[1 + 2 * l], chains[2 + 2 * l], perChain * l, perChain);
  double perThread = perChain * vw;
  // Across the threads of the row: a butterfly over the warp (partners of equal counts: the same
  // result in both), then (block) the warps' partials through shared memory, folded in order.
  auto warpMerge = [&] {
    double n = perThread;
    for (int32_t offset = 16; offset >= 1; offset /= 2, n *= 2) {
      Value m2 = gpu::ShuffleOp::create(b, m, offset, 32, gpu::ShuffleMode::XOR).getShuffleResult();
      Value q2 = gpu::ShuffleOp::create(b, q, offset, 32, gpu::ShuffleMode::XOR).getShuffleResult();
      Value d = sub(m2, m);
      Value mm = mul(add(m, m2), c(0.5));
      q = add(add(q, q2), mul(mul(d, d), c(n / 2)));
      m = mm;
    }
  };
  if (groups.strategy != ReductionStrategy::Thread) {
    warpMerge();
    if (groups.strategy == ReductionStrategy::Block && groups.needsWorkgroupBuffer()) {
      Value smemM = kb->workgroup(nextSmem++), smemQ = kb->workgroup(nextSmem++);
      Value tid = kb->threadId();
      gpu::BarrierOp::create(b);
      kb->ifThen(kb->eq(kb->rem(tid, 32), 0), [&] {
        memref::StoreOp::create(b, m, smemM, ValueRange{kb->div(tid, 32)});
        memref::StoreOp::create(b, q, smemQ, ValueRange{kb->div(tid, 32)});
      });
      gpu::BarrierOp::create(b);
      double perWarp = perThread * 32;
      Value tm = memref::LoadOp::create(b, smemM, ValueRange{kb->idx(0)});
      Value tq = memref::LoadOp::create(b, smemQ, ValueRange{kb->idx(0)});
      for (int64_t w = 1; w < k.blockSize / 32; ++w)
        std::tie(tm, tq) = merge(tm, tq, memref::LoadOp::create(b, smemM, ValueRange{kb->idx(w)}),
                                 memref::LoadOp::create(b, smemQ, ValueRange{kb->idx(w)}),
                                 perWarp * w, perWarp);
      m = tm;
      q = tq;
    }
  }
  return {m, q};
}


} // namespace evo
