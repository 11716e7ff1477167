//===- EmitMatmul.cpp - contractions with shared-memory and register tiles ----===//
//
// Block (by, bx, bz) computes a BM x BN tile of C for batch index bz. Per K step of BK, the
// block's threads cooperatively copy the BM x BK tile of A and the BK x BN tile of B into
// shared memory (coalesced along whichever dimension is contiguous in global memory), then each
// thread accumulates a TM x TN register tile. Thread (ty, tx) owns rows ty + i*(BM/TM) and
// columns tx + j*(BN/TN): consecutive threads read consecutive shared-memory words (no bank
// conflicts) and write consecutive columns of C.
//
//===----------------------------------------------------------------------===//

#include "Emitters.h"
#include "KernelBuilder.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

namespace evo {

FailureOr<LoweredTask> emitTiledMatmul(const GenericTask &t, const ScheduleKnobs &k,
                                       EmitContext &ctx) {
  linalg::GenericOp op = t.op;
  FailureOr<linalg::ContractionDimensions> dims = linalg::inferContractionDims(op);
  if (failed(dims) || dims->m.size() != 1 || dims->n.size() != 1 || dims->k.size() != 1 ||
      op.getNumDpsInputs() != 2 || t.outputs.size() != 1)
    return op.emitError("tile_sizes need a contraction with exactly one M, N and K dimension");
  if (!t.allCombinersKnown() || op.hasIndexSemantics())
    return op.emitError("tile_sizes need a payload of the form `yield add(f(a, b), out)`");
  if (t.inputs[0].kind != ValueSource::Kind::Buffer || t.inputs[1].kind != ValueSource::Kind::Buffer)
    return op.emitError("tile_sizes need both operands in memory");
  const unsigned mDim = dims->m.front(), nDim = dims->n.front(), kDim = dims->k.front();
  const int64_t M = t.loopSizes[mDim], N = t.loopSizes[nDim], K = t.loopSizes[kDim];
  const int64_t BM = k.tileSizes[0], BN = k.tileSizes[1], BK = k.tileSizes[2];
  const int64_t TM = k.threadTile[0], TN = k.threadTile[1];
  auto bad = [&]() {
    return op.emitError() << "tile_sizes=" << BM << "," << BN << "," << BK
                          << " thread_tile=" << TM << "," << TN << " for M=" << M
                          << " N=" << N << " K=" << K << ": ";
  };
  if (M % BM || N % BN || K % BK)
    return bad() << "the tiles must divide the problem";
  if (BM % TM || BN % TN)
    return bad() << "the thread tile must divide the block tile";
  const int64_t tx = BN / TN, ty = BM / TM, threads = tx * ty;
  if (threads < 32 || threads > 1024 || threads % 32)
    return bad() << "(BM/TM)*(BN/TN) = " << threads
                 << " threads; it must be a multiple of 32 in [32, 1024]";
  if ((BM * BK) % threads || (BK * BN) % threads)
    return bad() << "the threads must evenly share the tile copies";
  if (TM * TN > 256)
    return bad() << "a thread tile of more than 256 accumulators would spill";
  Type eltA = t.params[t.inputs[0].buffer].getElementType();
  Type eltB = t.params[t.inputs[1].buffer].getElementType();
  int64_t smemBytes = BM * BK * eltA.getIntOrFloatBitWidth() / 8 +
                      BK * BN * eltB.getIntOrFloatBitWidth() / 8;
  if (smemBytes > 48 * 1024)
    return bad() << "the tiles need " << smemBytes << " bytes of shared memory (limit 49152)";
  int64_t batch = 1;
  SmallVector<int64_t> batchSizes;
  for (unsigned d : dims->batch) {
    batchSizes.push_back(t.loopSizes[d]);
    batch *= t.loopSizes[d];
  }
  if (batch > 65535)
    return bad() << "batch " << batch << " exceeds the grid's z limit";

  Type outElt = t.params[t.outputs[0]].getElementType();
  Type acc = accumulatorType(outElt);
  const Combiner &comb = t.combiners[0];
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  MLIRContext *mctx = op.getContext();
  KernelBuilder kb(ctx.module, ctx.kernelName, t.params,
                   {workgroupBuffer(mctx, BK * BM, eltA), workgroupBuffer(mctx, BK * BN, eltB)},
                   {threads, 1, 1}, op.getLoc());
  Location loc = op.getLoc();
  Value As = kb.workgroup(0), Bs = kb.workgroup(1);
  Value tid = kb.threadId();
  Value tCol = kb.rem(tid, tx), tRow = kb.div(tid, tx);
  Value m0 = kb.mul(kb.blockId(gpu::Dimension::y), BM);
  Value n0 = kb.mul(kb.blockId(gpu::Dimension::x), BN);
  SmallVector<Value> batchIdx = kb.delinearize(kb.blockId(gpu::Dimension::z), batchSizes);
  auto indices = [&](Value m, Value n, Value kk) {
    SmallVector<Value> ivs(t.loopSizes.size());
    for (auto [i, d] : llvm::enumerate(dims->batch))
      ivs[d] = batchIdx[i];
    ivs[mDim] = m;
    ivs[nDim] = n;
    ivs[kDim] = kk;
    return ivs;
  };
  Value zeroIdx = kb.idx(0);
  // Copies of a tile are coalesced along the dimension contiguous in global memory.
  auto contiguousIn = [&](AffineMap map, unsigned dim) {
    return accessAlong(map, dim) == Access::Contiguous;
  };
  const bool aKFastest = contiguousIn(maps[0], kDim);
  const bool bNFastest = !contiguousIn(maps[1], kDim);

  SmallVector<Value> init;
  for (int64_t i = 0; i < TM * TN; ++i)
    init.push_back(combinerIdentity(kb.b, loc, comb.op, acc));
  Value unusedOut = kb.constant(cast<TypedAttr>(kb.b.getZeroAttr(outElt)));

  SmallVector<Value> accs = kb.forLoop(zeroIdx, kb.idx(K), BK, init, [&](Value k0, ValueRange cur) {
    for (int64_t l = 0; l < BM * BK / threads; ++l) {
      Value e = kb.add(tid, l * threads);
      Value mm = aKFastest ? kb.div(e, BK) : kb.rem(e, BM);
      Value kk = aKFastest ? kb.rem(e, BK) : kb.div(e, BM);
      Value v = memref::LoadOp::create(
          kb.b, kb.param(t.inputs[0].buffer),
          kb.applyMap(maps[0], indices(kb.add(m0, mm), zeroIdx, kb.add(k0, kk))));
      memref::StoreOp::create(kb.b, v, As, ValueRange{kb.add(kb.mul(kk, BM), mm)});
    }
    for (int64_t l = 0; l < BK * BN / threads; ++l) {
      Value e = kb.add(tid, l * threads);
      Value nn = bNFastest ? kb.rem(e, BN) : kb.div(e, BK);
      Value kk = bNFastest ? kb.div(e, BN) : kb.rem(e, BK);
      Value v = memref::LoadOp::create(
          kb.b, kb.param(t.inputs[1].buffer),
          kb.applyMap(maps[1], indices(zeroIdx, kb.add(n0, nn), kb.add(k0, kk))));
      memref::StoreOp::create(kb.b, v, Bs, ValueRange{kb.add(kb.mul(kk, BN), nn)});
    }
    gpu::BarrierOp::create(kb.b);
    SmallVector<Value> next = kb.forLoop(zeroIdx, kb.idx(BK), 1, cur, [&](Value kk, ValueRange a) {
      SmallVector<Value> as, bs;
      Value aRow = kb.mul(kk, BM), bRow = kb.mul(kk, BN);
      for (int64_t i = 0; i < TM; ++i)
        as.push_back(memref::LoadOp::create(kb.b, As,
                                            ValueRange{kb.add(aRow, kb.add(tRow, i * ty))}));
      for (int64_t j = 0; j < TN; ++j)
        bs.push_back(memref::LoadOp::create(kb.b, Bs,
                                            ValueRange{kb.add(bRow, kb.add(tCol, j * tx))}));
      SmallVector<Value> out;
      for (int64_t i = 0; i < TM; ++i)
        for (int64_t j = 0; j < TN; ++j) {
          IRMapping map;
          clonePayload(kb.b, op, {as[i], bs[j], unusedOut}, {}, {comb.op}, map);
          Value x = castTo(kb.b, loc, map.lookupOrDefault(comb.op->getOperand(comb.valueOperand)),
                           acc);
          out.push_back(combine(kb.b, loc, comb.op, a[i * TN + j], x));
        }
      return out;
    });
    gpu::BarrierOp::create(kb.b);
    return next;
  });

  AffineMap outMap = maps[2];
  for (int64_t i = 0; i < TM; ++i)
    for (int64_t j = 0; j < TN; ++j) {
      SmallVector<Value> ivs =
          indices(kb.add(m0, kb.add(tRow, i * ty)), kb.add(n0, kb.add(tCol, j * tx)), zeroIdx);
      Value result = accs[i * TN + j];
      if (t.inits[0].kind != ValueSource::Kind::None) {
        Value init0 = loadLanes(kb, t.inits[0], outMap, outElt, ivs, 0, 1).front();
        result = combine(kb.b, loc, comb.op, castTo(kb.b, loc, init0, acc), result);
      }
      storeLanes(kb, t.outputs[0], outMap, ivs, 0, {castTo(kb.b, loc, result, outElt)});
    }
  kb.finish();

  LoweredTask lowered;
  lowered.family = TaskFamily::Matmul;
  KernelLaunch launch;
  launch.kernel = ctx.kernelName;
  launch.grid = {N / BN, M / BM, batch};
  launch.block = {threads, 1, 1};
  for (unsigned i = 0; i < t.params.size(); ++i)
    launch.args.push_back(i);
  lowered.launches.push_back(launch);
  return lowered;
}

} // namespace evo
