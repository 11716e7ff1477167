//===- EmitSoftmax.cpp - linalg.softmax --------------------------------------===//
//
// One row (all elements along the softmax dimension) per thread, warp or block, like the
// reduction strategies. Three passes over the row: max, sum of exp(x - max), then
// exp(x - max) * (1 / sum). Narrow floats compute in f32. NaN propagates (arith.maximumf).
//
//===----------------------------------------------------------------------===//

#include "Emitters.h"
#include "KernelBuilder.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;

namespace evo {

FailureOr<LoweredTask> emitSoftmax(const SoftmaxTask &t, const ScheduleKnobs &k,
                                   EmitContext &ctx) {
  linalg::SoftmaxOp op = t.op;
  const int64_t bs = k.blockSize, vw = k.vectorWidth;
  const unsigned rank = t.shape.size(), dim = t.dim;
  const int64_t len = t.shape[dim];
  if (vw > 1 && dim != rank - 1)
    return op.emitError("vector_width > 1 needs the softmax dimension to be the innermost one");
  if (failed(checkVectorWidth(op, vw, len, t.params, "softmax dimension")))
    return failure();
  SmallVector<int64_t> rowSizes;
  int64_t numRows = 1;
  for (unsigned d = 0; d < rank; ++d)
    if (d != dim) {
      rowSizes.push_back(t.shape[d]);
      numRows *= t.shape[d];
    }
  const ReductionGroups groups{k.reduction, bs};
  const int64_t rowsPerBlock = groups.pointsPerBlock();
  int64_t grid = ceilDiv(numRows, rowsPerBlock);
  if (grid > std::numeric_limits<int32_t>::max())
    return op.emitError("evo-lower-to-gpu: grid too large");

  Type elt = t.params[t.input].getElementType();
  Type ct = accumulatorType(elt);
  SmallVector<MemRefType> workgroup;
  if (groups.needsWorkgroupBuffer())
    workgroup.push_back(workgroupBuffer(op.getContext(), bs / 32, ct));
  KernelBuilder kb(ctx.module, ctx.kernelName, t.params, workgroup, {bs, 1, 1}, op.getLoc());
  Location loc = op.getLoc();
  Value tid = kb.threadId(), bid = kb.blockId();
  Value row, lane;
  std::tie(row, lane) = groups.pointAndLane(kb, tid, bid);
  const int64_t width = groups.width();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, op.getContext());
  ValueSource in{ValueSource::Kind::Buffer, t.input, {}};
  const int64_t numChunks = len / vw;

  auto body = [&] {
    SmallVector<Value> rowIdx = kb.delinearize(row, rowSizes);
    auto ivsAt = [&](Value chunk) {
      SmallVector<Value> ivs(rowIdx.begin(), rowIdx.end());
      ivs.insert(ivs.begin() + dim, kb.mul(chunk, vw));
      return ivs;
    };
    auto loadChunk = [&](Value chunk) {
      SmallVector<Value> xs = loadLanes(kb, in, identity, elt, ivsAt(chunk), dim, vw);
      for (Value &x : xs)
        x = castTo(kb.b, loc, x, ct);
      return xs;
    };
    auto groupReduce = [&](Value v, Value identityValue, auto fn) {
      return groups.reduce(
          kb, v, [&] { return kb.workgroup(0); }, [&] { return identityValue; }, fn);
    };
    auto maxFn = [&](Value a, Value b) -> Value { return arith::MaximumFOp::create(kb.b, a, b); };
    auto addFn = [&](Value a, Value b) -> Value { return arith::AddFOp::create(kb.b, a, b); };

    Value negInf = kb.constant(FloatAttr::get(
        ct, APFloat::getInf(cast<FloatType>(ct).getFloatSemantics(), /*Negative=*/true)));
    Value zero = kb.constant(FloatAttr::get(ct, 0.0));
    Value one = kb.constant(FloatAttr::get(ct, 1.0));

    Value max = kb.forLoop(lane, kb.idx(numChunks), width, {negInf},
                           [&](Value c, ValueRange acc) {
                             Value m = acc[0];
                             for (Value x : loadChunk(c))
                               m = maxFn(m, x);
                             return SmallVector<Value>{m};
                           })[0];
    max = groupReduce(max, negInf, maxFn);
    Value sum = kb.forLoop(lane, kb.idx(numChunks), width, {zero},
                           [&](Value c, ValueRange acc) {
                             Value s = acc[0];
                             for (Value x : loadChunk(c))
                               s = addFn(s, math::ExpOp::create(kb.b, arith::SubFOp::create(kb.b, x, max)));
                             return SmallVector<Value>{s};
                           })[0];
    sum = groupReduce(sum, zero, addFn);
    Value inv = arith::DivFOp::create(kb.b, one, sum);
    kb.forLoop(lane, kb.idx(numChunks), width, {}, [&](Value c, ValueRange) {
      SmallVector<Value> ys;
      for (Value x : loadChunk(c)) {
        Value e = math::ExpOp::create(kb.b, arith::SubFOp::create(kb.b, x, max));
        ys.push_back(castTo(kb.b, loc, arith::MulFOp::create(kb.b, e, inv), elt));
      }
      storeLanes(kb, t.output, identity, ivsAt(c), dim, ys);
      return SmallVector<Value>{};
    });
  };
  if (numRows % rowsPerBlock == 0)
    body();
  else
    kb.ifThen(kb.lt(row, numRows), body);
  kb.finish();

  return singleKernel(TaskFamily::Softmax, ctx, {grid, 1, 1}, {bs, 1, 1}, t.params.size());
}

} // namespace evo
