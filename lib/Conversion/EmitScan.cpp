//===- EmitScan.cpp - scans (cumsum, cumprod, cummax, ...) as parallel scans -===//
//
// A scan task is a generic of the masked triangular form (evo/Conversion/ScanForm.h): every
// output line (the parallel loops other than j) is the scan of the elements f(k) along the
// scanned axis. The parallel loops besides j are flattened into lines; a thread, a warp or a
// block (`reduction`, the same ReductionGroups as reductions and rows) walks each line in tiles
// of width x elements_per_thread x vector_width elements, in scan order (from the end for reverse
// scans):
//   1. each thread loads its elements_per_thread chunks of vector_width consecutive elements
//      (one vector load each where the axis is contiguous), evaluates f, and scans them
//      sequentially (its total is the last value);
//   2. warp: an inclusive scan of the thread totals with `gpu.shuffle up` (5 steps), the
//      exclusive prefix one lane up, the warp's total from lane 31;
//      block: the warps' totals through shared memory (double-buffered by tile parity: one
//      barrier per tile), scanned by every warp with shuffles, each warp taking its prefix;
//   3. each element is carry + the thread's prefix + its local prefix (the one before it for
//      exclusive scans), combined with a buffer init where there is one, cast and stored;
//      the carry moves on by the tile's total.
// The naive schedule (thread, vector_width 1, elements_per_thread 1) is one thread per line
// walking it serially: O(C) per line instead of the triangular form's O(C^2). f16/bf16 scans
// accumulate in f32.
//
//===----------------------------------------------------------------------===//

#include "Emitters.h"
#include "KernelBuilder.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

namespace evo {

namespace {
class ScanEmitter {
public:
  ScanEmitter(const GenericTask &t, const ScanForm &form, const ScheduleKnobs &k)
      : t(t), form(form), k(k), op(t.op) {
    for (unsigned d : t.parallelDims)
      if (d != form.outLoop) {
        lineDims.push_back(d);
        lineSizes.push_back(t.loopSizes[d]);
      }
    length = t.loopSizes[form.scanLoop];
    numLines = 1;
    for (int64_t s : lineSizes)
      numLines *= s;
    elt = t.resultElementType(0);
    acc = accumulatorType(elt);
  }

  FailureOr<LoweredTask> emit(EmitContext &ctx);

private:
  LogicalResult validate();
  Value identity(KernelBuilder &kb) {
    return combinerIdentity(kb.b, kb.b.getLoc(), form.combiner, acc);
  }
  Value combine(KernelBuilder &kb, Value a, Value b) {
    return evo::combine(kb.b, kb.b.getLoc(), form.combiner, a, b);
  }
  /// Loop indices at position `pos` of the scanned axis in line `line` (k and j both at pos).
  SmallVector<Value> indicesAt(ArrayRef<Value> line, Value pos);
  /// The physical chunk (of vector_width elements) of logical chunk `q` in scan order.
  Value physicalChunk(KernelBuilder &kb, Value q);
  /// f at the vector_width elements of chunk `q`, in scan order, as accumulators.
  SmallVector<Value> loadChunk(KernelBuilder &kb, ArrayRef<Value> line, Value q);
  /// Stores the scan values of chunk `q` (in scan order).
  void storeChunk(KernelBuilder &kb, ArrayRef<Value> line, Value q, ArrayRef<Value> values);
  /// Inclusive scan across the 32 lanes of each warp (`laneInWarp` = this thread's lane).
  Value warpInclusiveScan(KernelBuilder &kb, Value v, Value laneInWarp);
  Value shuffleUp(KernelBuilder &kb, Value v, Value laneInWarp, int32_t offset);

  const GenericTask &t;
  const ScanForm &form;
  const ScheduleKnobs &k;
  linalg::GenericOp op;
  SmallVector<unsigned> lineDims;
  SmallVector<int64_t> lineSizes;
  int64_t length = 0, numLines = 0;
  Type elt, acc;
};
} // namespace

LogicalResult ScanEmitter::validate() {
  const int64_t vw = k.vectorWidth;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  AffineMap outMap = maps.back();
  // The buffers accessed along the scanned axis take vector accesses.
  SmallVector<MemRefType> along{t.params[t.outputs[0]]};
  bool contiguous = accessAlong(outMap, form.outLoop) == Access::Contiguous;
  for (auto [i, src] : llvm::enumerate(t.inputs)) {
    if (src.kind != ValueSource::Kind::Buffer || !maps[i].isFunctionOfDim(form.scanLoop))
      continue;
    along.push_back(t.params[src.buffer]);
    contiguous &= accessAlong(maps[i], form.scanLoop) == Access::Contiguous;
  }
  if (t.inits[0].kind == ValueSource::Kind::Buffer)
    along.push_back(t.params[t.inits[0].buffer]);
  if (failed(checkVectorWidth(op, vw, length, along, "scanned dimension")))
    return failure();
  if (vw > 1 && !contiguous)
    return op.emitError() << "vector_width=" << vw
                          << " needs the scanned dimension to be the innermost (contiguous) one "
                             "of the output and of every input read along it";
  if (k.reduction != ReductionStrategy::Thread && acc.getIntOrFloatBitWidth() != 32 &&
      acc.getIntOrFloatBitWidth() != 64)
    return op.emitError() << "reduction=" << stringifyReductionStrategy(k.reduction)
                          << " needs 32- or 64-bit accumulators for the scan's shuffles, got "
                          << acc;
  if (t.inits[0].kind == ValueSource::Kind::None)
    return op.emitError("evo-lower-to-gpu: the scan's init is uninitialized (tensor.empty)");
  return success();
}

SmallVector<Value> ScanEmitter::indicesAt(ArrayRef<Value> line, Value pos) {
  SmallVector<Value> ivs(t.loopSizes.size());
  for (auto [i, d] : llvm::enumerate(lineDims))
    ivs[d] = line[i];
  ivs[form.scanLoop] = pos;
  ivs[form.outLoop] = pos;
  return ivs;
}

Value ScanEmitter::physicalChunk(KernelBuilder &kb, Value q) {
  if (!form.reverse)
    return q;
  const int64_t chunks = length / k.vectorWidth;
  return arith::SubIOp::create(kb.b, kb.idx(chunks - 1), q);
}

SmallVector<Value> ScanEmitter::loadChunk(KernelBuilder &kb, ArrayRef<Value> line, Value q) {
  const int64_t vw = k.vectorWidth;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<Value> ivs = indicesAt(line, kb.mul(physicalChunk(kb, q), vw));
  SmallVector<SmallVector<Value>> inLanes;
  for (unsigned i = 0; i < op.getNumDpsInputs(); ++i)
    inLanes.push_back(loadLanes(kb, t.inputs[i], maps[i],
                                getElementTypeOrSelf(op.getDpsInputOperand(i)->get().getType()),
                                ivs, form.scanLoop, vw));
  // The out block argument only feeds the (skipped) combiner.
  Value unusedOut = kb.constant(cast<TypedAttr>(kb.b.getZeroAttr(elt)));
  SmallVector<Value> values;
  for (int64_t l = 0; l < vw; ++l) {
    SmallVector<Value> args;
    for (auto &lanes : inLanes)
      args.push_back(lanes[l]);
    args.push_back(unusedOut);
    SmallVector<Value> at = laneIndices(kb, ivs, form.scanLoop, l);
    at[form.outLoop] = at[form.scanLoop];
    IRMapping map;
    clonePayload(kb.b, op, args, at, form.notElement, map);
    values.push_back(castTo(kb.b, kb.b.getLoc(), map.lookupOrDefault(form.element), acc));
  }
  if (form.reverse)
    std::reverse(values.begin(), values.end());
  return values;
}

void ScanEmitter::storeChunk(KernelBuilder &kb, ArrayRef<Value> line, Value q,
                             ArrayRef<Value> values) {
  const int64_t vw = k.vectorWidth;
  SmallVector<Value> ivs = indicesAt(line, kb.mul(physicalChunk(kb, q), vw));
  SmallVector<Value> physical(values.begin(), values.end());
  if (form.reverse)
    std::reverse(physical.begin(), physical.end());
  if (t.inits[0].kind == ValueSource::Kind::Buffer) {
    // out[j] = init[j] + scan[j]: linalg starts each output element from its init.
    AffineMap outMap = op.getIndexingMapsArray().back();
    SmallVector<Value> init = loadLanes(kb, t.inits[0], outMap, elt, ivs, form.outLoop, vw);
    for (int64_t l = 0; l < vw; ++l)
      physical[l] = combine(kb, castTo(kb.b, kb.b.getLoc(), init[l], acc), physical[l]);
  }
  storeOutput(kb, t, 0, ivs, form.outLoop, physical, /*wide=*/false);
}

Value ScanEmitter::shuffleUp(KernelBuilder &kb, Value v, Value laneInWarp, int32_t offset) {
  auto shuffle = gpu::ShuffleOp::create(kb.b, v, offset, 32, gpu::ShuffleMode::UP);
  Value from = arith::CmpIOp::create(kb.b, arith::CmpIPredicate::uge, laneInWarp, kb.idx(offset));
  // Lanes below `offset` have no lane to read from: the identity.
  return arith::SelectOp::create(kb.b, from, shuffle.getShuffleResult(), identity(kb));
}

Value ScanEmitter::warpInclusiveScan(KernelBuilder &kb, Value v, Value laneInWarp) {
  for (int32_t offset = 1; offset < 32; offset *= 2)
    v = combine(kb, shuffleUp(kb, v, laneInWarp, offset), v);
  return v;
}

FailureOr<LoweredTask> ScanEmitter::emit(EmitContext &ctx) {
  if (failed(validate()))
    return failure();
  const int64_t bs = k.blockSize, vw = k.vectorWidth, E = k.elementsPerThread;
  const ReductionGroups groups{k.reduction, bs};
  const int64_t width = groups.width(), warps = bs / 32;
  const bool blockCombine = k.reduction == ReductionStrategy::Block && warps > 1;
  const int64_t grid = ceilDiv(numLines, groups.pointsPerBlock());
  if (grid > std::numeric_limits<int32_t>::max())
    return op.emitError("evo-lower-to-gpu: grid too large");
  const int64_t chunks = length / vw, chunksPerTile = width * E;
  const int64_t tiles = ceilDiv(chunks, chunksPerTile);
  const bool exact = chunks % chunksPerTile == 0;

  SmallVector<MemRefType> workgroup;
  if (blockCombine)
    workgroup.push_back(workgroupBuffer(op.getContext(), 2 * warps, acc));
  KernelBuilder kb(ctx.module, ctx.kernelName, t.params, workgroup, {bs, 1, 1}, op.getLoc());
  Value tid = kb.threadId(), bid = kb.blockId();
  Value lineId, lane;
  std::tie(lineId, lane) = groups.pointAndLane(kb, tid, bid);
  Value laneInWarp = kb.rem(tid, 32), warp = kb.div(tid, 32);
  Type i32 = kb.b.getI32Type();

  auto body = [&] {
    SmallVector<Value> line = kb.delinearize(lineId, lineSizes);
    // The init starts the carry where it is a constant (a fill or a splat); a buffer init is
    // combined with each element when it is stored.
    Value carry0 = identity(kb);
    if (t.inits[0].kind == ValueSource::Kind::Scalar)
      carry0 = castTo(kb.b, kb.b.getLoc(), kb.constant(t.inits[0].scalar), acc);
    kb.forLoop(kb.idx(0), kb.idx(tiles), 1, {carry0}, [&](Value tile, ValueRange carried) {
      Value carry = carried[0];
      Value first = kb.add(kb.mul(tile, chunksPerTile), kb.mul(lane, E));
      // 1. This thread's chunks, in scan order, scanned sequentially.
      SmallVector<Value> scanned;
      SmallVector<Value> qs;
      for (int64_t e = 0; e < E; ++e) {
        Value q = kb.add(first, e);
        qs.push_back(q);
        SmallVector<Value> values;
        if (exact) {
          values = loadChunk(kb, line, q);
        } else {
          // Past the line's end: identities, which leave the totals alone.
          SmallVector<Type> types(vw, acc);
          values = kb.ifThenElse(
              kb.lt(q, chunks), types, [&] { return loadChunk(kb, line, q); },
              [&] { return SmallVector<Value>(vw, identity(kb)); });
        }
        for (Value v : values)
          scanned.push_back(scanned.empty() ? v : combine(kb, scanned.back(), v));
      }
      Value total = scanned.back();
      // 2. What the threads before this one in the tile contribute, and the tile's total.
      Value prefix, tileTotal = total;
      if (width > 1) {
        Value inclusive = warpInclusiveScan(kb, total, laneInWarp);
        prefix = shuffleUp(kb, inclusive, laneInWarp, 1);
        tileTotal = gpu::ShuffleOp::create(kb.b, inclusive, 31, 32, gpu::ShuffleMode::IDX)
                        .getShuffleResult();
        if (blockCombine) {
          Value slot = kb.mul(kb.rem(tile, 2), warps);
          kb.ifThen(kb.eq(laneInWarp, 31), [&] {
            memref::StoreOp::create(kb.b, inclusive, kb.workgroup(0),
                                    ValueRange{kb.add(slot, warp)});
          });
          gpu::BarrierOp::create(kb.b);
          // Every warp scans the warps' totals itself: no second barrier.
          Value warpTotal =
              warps == 32
                  ? Value(memref::LoadOp::create(kb.b, kb.workgroup(0),
                                                 ValueRange{kb.add(slot, laneInWarp)}))
                  : kb.ifThenElse(
                          kb.lt(laneInWarp, warps), {acc},
                          [&] {
                            return SmallVector<Value>{memref::LoadOp::create(
                                kb.b, kb.workgroup(0), ValueRange{kb.add(slot, laneInWarp)})};
                          },
                          [&] { return SmallVector<Value>{identity(kb)}; })
                        .front();
          Value warpsScanned = warpInclusiveScan(kb, warpTotal, laneInWarp);
          // Warp w takes lane w - 1's value (warp 0: the identity).
          Value isFirst = kb.eq(warp, 0);
          Value from = arith::SelectOp::create(kb.b, isFirst, kb.idx(0), kb.add(warp, -1));
          Value fromI32 = arith::IndexCastOp::create(kb.b, i32, from);
          Value before = gpu::ShuffleOp::create(kb.b, warpsScanned, fromI32,
                                                arith::ConstantIntOp::create(kb.b, i32, 32),
                                                gpu::ShuffleMode::IDX)
                             .getShuffleResult();
          before = arith::SelectOp::create(kb.b, isFirst, identity(kb), before);
          prefix = combine(kb, before, prefix);
          tileTotal =
              gpu::ShuffleOp::create(kb.b, warpsScanned, warps - 1, 32, gpu::ShuffleMode::IDX)
                  .getShuffleResult();
        }
      }
      // 3. Each element: the carry, the prefix of the threads before, its own prefix.
      Value base = prefix ? combine(kb, carry, prefix) : carry;
      for (int64_t e = 0; e < E; ++e) {
        SmallVector<Value> out;
        for (int64_t l = 0; l < vw; ++l) {
          int64_t i = e * vw + l;
          if (form.exclusive)
            out.push_back(i == 0 ? base : combine(kb, base, scanned[i - 1]));
          else
            out.push_back(combine(kb, base, scanned[i]));
        }
        if (exact)
          storeChunk(kb, line, qs[e], out);
        else
          kb.ifThen(kb.lt(qs[e], chunks), [&] { storeChunk(kb, line, qs[e], out); });
      }
      return SmallVector<Value>{combine(kb, carry, tileTotal)};
    });
  };
  // The guard is uniform across a warp (warp) or a block (block), so shuffles and barriers stay
  // convergent.
  if (numLines % groups.pointsPerBlock() == 0)
    body();
  else
    kb.ifThen(kb.lt(lineId, numLines), body);
  kb.finish();
  return singleKernel(TaskFamily::Scan, ctx, {grid, 1, 1}, {bs, 1, 1}, t.params.size());
}

FailureOr<LoweredTask> emitScan(const GenericTask &t, const ScanForm &form, const ScheduleKnobs &k,
                                EmitContext &ctx) {
  return ScanEmitter(t, form, k).emit(ctx);
}

} // namespace evo
