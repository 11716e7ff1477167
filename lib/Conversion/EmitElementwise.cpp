//===- EmitElementwise.cpp - all-parallel generics ---------------------------===//
//
// Schedule: the iteration space is cut into groups of `vector_width` consecutive points along
// the innermost loop dimension; thread t of block b computes groups b*B*E + j*B + t for
// j < E (B = block_size, E = elements_per_thread), so each of its E steps is coalesced across
// the warp. Operands contiguous along the innermost dimension are read with one vector access
// per group, broadcast operands with one scalar load.
//
// With transpose_tile T, inputs that are contiguous along the second-innermost loop dimension
// but not the innermost one (a transpose) are staged through shared memory: a block owns a
// T x T tile of the two innermost dimensions, reads each staged input coalesced along its own
// contiguous dimension into a padded (T x T+1, conflict-free) buffer, synchronizes, and then
// computes and writes the tile coalesced along the output's innermost dimension.
//
//===----------------------------------------------------------------------===//

#include "Emitters.h"
#include "KernelBuilder.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace evo {

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

LogicalResult checkVectorWidth(Operation *op, int64_t vw, int64_t extent,
                               ArrayRef<MemRefType> params, StringRef what) {
  if (vw == 1)
    return success();
  if (extent % vw != 0)
    return op->emitError() << "vector_width=" << vw << " does not divide the " << what << " ("
                           << extent << ")";
  for (MemRefType t : params) {
    // A vector of i1 is packed bits, a buffer of i1 one byte per element.
    if (t.getElementType().isInteger(1))
      return op->emitError() << "vector_width=" << vw
                             << " on an i1 buffer (a byte per element in memory, a bit per "
                                "lane in a vector); i1 buffers take vector_width=1";
    int64_t bytes = vw * t.getElementTypeBitWidth() / 8;
    if (bytes > 16)
      return op->emitError() << "vector_width=" << vw << " makes " << bytes << "-byte accesses to "
                             << t.getElementType() << " elements; the limit is 16 bytes";
  }
  return success();
}

static FailureOr<LoweredTask> emitTransposeTiled(const GenericTask &t, const ScheduleKnobs &k,
                                                 EmitContext &ctx) {
  linalg::GenericOp op = t.op;
  ArrayRef<int64_t> sizes = t.loopSizes;
  const unsigned rank = sizes.size();
  const int64_t T = k.transposeTile, bs = k.blockSize;
  if (rank < 2)
    return op.emitError("transpose_tile needs at least 2 loop dimensions");
  const unsigned dimA = rank - 2, dimB = rank - 1;
  if (sizes[dimA] % T || sizes[dimB] % T)
    return op.emitError() << "transpose_tile=" << T << " does not divide the two innermost loop "
                          << "dimensions (" << sizes[dimA] << ", " << sizes[dimB] << ")";
  const int64_t rowsPerPass = bs / T;
  if (bs % T || rowsPerPass > T || T % rowsPerPass)
    return op.emitError() << "transpose_tile=" << T << " needs block_size to be " << T
                          << " times a divisor of " << T << ", got block_size=" << bs;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  const unsigned numInputs = op.getNumDpsInputs();
  SmallVector<unsigned> staged;
  for (unsigned i = 0; i < numInputs; ++i)
    if (t.inputs[i].isPlainBuffer() &&
        accessAlong(maps[i], dimB) != Access::Contiguous &&
        accessAlong(maps[i], dimA) == Access::Contiguous)
      staged.push_back(i);
  if (staged.empty())
    return op.emitError("transpose_tile needs an input read across the innermost loop dimension "
                        "and along the one before it (a transpose)");
  if (k.vectorWidth != 1 || k.elementsPerThread != 1)
    return op.emitError("transpose_tile needs vector_width=1 and elements_per_thread=1");

  SmallVector<MemRefType> workgroup;
  for (unsigned i : staged)
    workgroup.push_back(workgroupBuffer(
        op.getContext(), T * (T + 1), getElementTypeOrSelf(op.getDpsInputOperand(i)->get().getType())));
  SmallVector<int64_t> outer(sizes.begin(), sizes.begin() + dimA);
  SmallVector<int64_t> blockGrid = outer;
  blockGrid.push_back(sizes[dimA] / T);
  blockGrid.push_back(sizes[dimB] / T);
  int64_t grid = 1;
  for (int64_t g : blockGrid)
    grid *= g;
  if (grid > std::numeric_limits<int32_t>::max())
    return op.emitError("evo-lower-to-gpu: grid too large");

  KernelBuilder kb(ctx.module, ctx.kernelName, t.params, workgroup, {bs, 1, 1}, op.getLoc());
  Value tid = kb.threadId();
  Value tx = kb.rem(tid, T), ty = kb.div(tid, T);
  SmallVector<Value> tile = kb.delinearize(kb.blockId(), blockGrid);
  Value a0 = kb.mul(tile[dimA], T), b0 = kb.mul(tile[dimB], T);
  auto ivsAt = [&](Value a, Value b) {
    SmallVector<Value> ivs(tile.begin(), tile.begin() + dimA);
    ivs.push_back(a);
    ivs.push_back(b);
    return ivs;
  };
  // Phase 1: thread (tx, ty) reads point (a0 + tx, b0 + ty + r) of each staged input, coalesced
  // along a, into smem[(ty + r) * (T + 1) + tx].
  for (int64_t r = 0; r < T; r += rowsPerPass) {
    Value row = kb.add(ty, r);
    SmallVector<Value> ivs = ivsAt(kb.add(a0, tx), kb.add(b0, row));
    for (auto [s, i] : llvm::enumerate(staged)) {
      Type elt = getElementTypeOrSelf(op.getDpsInputOperand(i)->get().getType());
      Value v = loadLanes(kb, t.inputs[i], maps[i], elt, ivs, dimB, 1).front();
      memref::StoreOp::create(kb.b, v, kb.workgroup(s),
                              ValueRange{kb.add(kb.mul(row, T + 1), tx)});
    }
  }
  gpu::BarrierOp::create(kb.b);
  // Phase 2: thread (tx, ty) computes point (a0 + ty + r, b0 + tx), coalesced along b.
  for (int64_t r = 0; r < T; r += rowsPerPass) {
    Value row = kb.add(ty, r);
    SmallVector<Value> ivs = ivsAt(kb.add(a0, row), kb.add(b0, tx));
    SmallVector<Value> args;
    for (unsigned i = 0; i < numInputs; ++i) {
      Type elt = getElementTypeOrSelf(op.getDpsInputOperand(i)->get().getType());
      auto it = llvm::find(staged, i);
      if (it != staged.end())
        args.push_back(memref::LoadOp::create(
            kb.b, kb.workgroup(it - staged.begin()),
            ValueRange{kb.add(kb.mul(tx, T + 1), row)}));
      else
        args.push_back(loadLanes(kb, t.inputs[i], maps[i], elt, ivs, dimB, 1).front());
    }
    for (unsigned o = 0; o < t.outputs.size(); ++o) {
      Type elt = getElementTypeOrSelf(op.getDpsInitOperand(o)->get().getType());
      args.push_back(t.initRead[o]
                         ? loadLanes(kb, t.inits[o], maps[numInputs + o], elt, ivs, dimB, 1).front()
                         : kb.constant(cast<TypedAttr>(kb.b.getZeroAttr(elt))));
    }
    IRMapping map;
    clonePayload(kb.b, op, args, ivs, {}, map);
    for (auto [o, v] : llvm::enumerate(payloadResults(op, map)))
      storeLanes(kb, t.outputs[o], maps[numInputs + o], ivs, dimB, {v});
  }
  kb.finish();

  return singleKernel(TaskFamily::Elementwise, ctx, {grid, 1, 1}, {bs, 1, 1}, t.params.size());
}

FailureOr<LoweredTask> emitElementwise(const GenericTask &t, const ScheduleKnobs &k,
                                       EmitContext &ctx) {
  if (k.transposeTile)
    return emitTransposeTiled(t, k, ctx);
  linalg::GenericOp op = t.op;
  ArrayRef<int64_t> sizes = t.loopSizes;
  const int64_t vw = k.vectorWidth, bs = k.blockSize, ept = k.elementsPerThread;
  const unsigned rank = sizes.size();
  const unsigned laneDim = rank ? rank - 1 : 0;
  if (rank == 0 && vw != 1)
    return op.emitError("vector_width must be 1 for a 0-d op");
  if (failed(checkVectorWidth(op, vw, rank ? sizes.back() : 1, t.params,
                              "innermost loop dimension")))
    return failure();

  int64_t total = 1;
  for (int64_t s : sizes)
    total *= s;
  const int64_t groups = total / vw;
  const int64_t perBlock = bs * ept;
  const int64_t grid = ceilDiv(groups, perBlock);
  if (grid > std::numeric_limits<int32_t>::max())
    return op.emitError("evo-lower-to-gpu: grid too large; raise elements_per_thread");

  KernelBuilder kb(ctx.module, ctx.kernelName, t.params, {}, {bs, 1, 1}, op.getLoc());
  Value base = kb.add(kb.mul(kb.blockId(), perBlock), kb.threadId());
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  const unsigned numInputs = op.getNumDpsInputs();

  for (int64_t j = 0; j < ept; ++j) {
    Value g = kb.add(base, j * bs);
    auto emitGroup = [&] {
      SmallVector<Value> ivs =
          rank ? kb.delinearize(kb.mul(g, vw), sizes) : SmallVector<Value>();
      SmallVector<SmallVector<Value>> inLanes, initLanes;
      for (unsigned i = 0; i < numInputs; ++i)
        inLanes.push_back(loadLanes(kb, t.inputs[i], maps[i], getElementTypeOrSelf(
                                        op.getDpsInputOperand(i)->get().getType()),
                                    ivs, laneDim, vw));
      for (unsigned o = 0; o < t.outputs.size(); ++o) {
        Type elt = getElementTypeOrSelf(op.getDpsInitOperand(o)->get().getType());
        if (!t.initRead[o]) {
          // Never read by the payload: any value of the right type binds the block argument.
          initLanes.push_back(
              SmallVector<Value>(vw, kb.constant(cast<TypedAttr>(kb.b.getZeroAttr(elt)))));
          continue;
        }
        initLanes.push_back(loadLanes(kb, t.inits[o], maps[numInputs + o], elt, ivs, laneDim, vw));
      }
      SmallVector<SmallVector<Value>> outLanes(t.outputs.size());
      for (int64_t l = 0; l < vw; ++l) {
        SmallVector<Value> args;
        for (auto &lanes : inLanes)
          args.push_back(lanes[l]);
        for (auto &lanes : initLanes)
          args.push_back(lanes[l]);
        IRMapping map;
        SmallVector<Value> laneIvs = rank ? laneIndices(kb, ivs, laneDim, l) : ivs;
        clonePayload(kb.b, op, args, laneIvs, {}, map);
        for (auto [o, v] : llvm::enumerate(payloadResults(op, map)))
          outLanes[o].push_back(v);
      }
      for (unsigned o = 0; o < t.outputs.size(); ++o)
        storeLanes(kb, t.outputs[o], maps[numInputs + o], ivs, laneDim, outLanes[o]);
    };
    if (groups % perBlock == 0)
      emitGroup();
    else
      kb.ifThen(kb.lt(g, groups), emitGroup);
  }
  kb.finish();

  return singleKernel(TaskFamily::Elementwise, ctx, {grid, 1, 1}, {bs, 1, 1}, t.params.size());
}

} // namespace evo
