//===- EmitElementwise.cpp - all-parallel generics ---------------------------===//
//
// Schedule: the iteration space is cut into groups of `vector_width` consecutive points along
// the innermost loop dimension; thread t of block b computes groups b*B*E + j*B + t for
// j < E (B = block_size, E = elements_per_thread), so each of its E steps is coalesced across
// the warp. Operands contiguous along the innermost dimension are read with one vector access
// per group, broadcast operands with one scalar load.
//
//===----------------------------------------------------------------------===//

#include "Emitters.h"
#include "KernelBuilder.h"
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
    int64_t bytes = vw * t.getElementTypeBitWidth() / 8;
    if (bytes > 16)
      return op->emitError() << "vector_width=" << vw << " makes " << bytes << "-byte accesses to "
                             << t.getElementType() << " elements; the limit is 16 bytes";
  }
  return success();
}

FailureOr<LoweredTask> emitElementwise(const GenericTask &t, const ScheduleKnobs &k,
                                       EmitContext &ctx) {
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

  LoweredTask lowered;
  lowered.family = TaskFamily::Elementwise;
  KernelLaunch launch;
  launch.kernel = ctx.kernelName;
  launch.grid = {grid, 1, 1};
  launch.block = {bs, 1, 1};
  for (unsigned i = 0; i < t.params.size(); ++i)
    launch.args.push_back(i);
  lowered.launches.push_back(launch);
  return lowered;
}

} // namespace evo
