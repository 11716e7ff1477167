//===- EmitMatmul.cpp - contractions with shared-memory and register tiles ----===//
//
// Block (by, bx, bz) computes a BM x BN tile of C for batch index bz. Per K step of BK, the
// block's threads cooperatively copy the BM x BK tile of A and the BK x BN tile of B into
// shared memory (coalesced along whichever dimension is contiguous in global memory), then each
// thread accumulates a TM x TN register tile. Thread (ty, tx) owns rows ty + i*(BM/TM) and
// columns tx + j*(BN/TN): consecutive threads read consecutive shared-memory words (no bank
// conflicts) and write consecutive columns of C.
//
// With vector_width=4 a thread's tile is made of 4x4 blocks instead: rows 4*ty + i%4 + (i/4)*4*
// (BM/TM), columns likewise, so each K step reads its A and B fragments with 128-bit shared-memory
// loads (a warp's A reads are broadcasts, its B reads two wavefronts), A's tile is stored with
// rows padded by 4 elements (its transposed stores do not collide on banks), and C is written
// 4 columns at a time.
//
// A fused epilogue (elementwise ops on the result, TaskAnalysis.h) is applied to each element
// of the register tile, in f32 for f16/bf16, just before its store (storeOutput).
//
//===----------------------------------------------------------------------===//

#include "Emitters.h"
#include "KernelBuilder.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace evo {

std::optional<GemmView> gemmView(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1)
    return std::nullopt;
  GemmView v;
  // (inferContractionDims alone also "finds" dimensions in a convolution: ask first whether the
  // op is a contraction.)
  if (FailureOr<linalg::ContractionDimensions> d = linalg::inferContractionDims(op);
      linalg::isaContractionOpInterface(op) && succeeded(d) && d->m.size() == 1 &&
      d->n.size() == 1 && d->k.size() == 1) {
    v.m.assign(d->m.begin(), d->m.end());
    v.n.assign(d->n.begin(), d->n.end());
    v.k.assign(d->k.begin(), d->k.end());
    v.batch.assign(d->batch.begin(), d->batch.end());
    return v;
  }
  return convolutionGemmView(op);
}

namespace {

int64_t product(ArrayRef<int64_t> xs) {
  int64_t p = 1;
  for (int64_t x : xs)
    p *= x;
  return p;
}

/// A tiled contraction's shapes, checked against the knobs: everything the kernel is built from.
struct MatmulPlan {
  const GenericTask *t = nullptr;
  GemmView view;
  unsigned ia = 0, ib = 1;                        // the A and B inputs
  SmallVector<int64_t> mSizes, nSizes, kSizes, batchSizes;
  unsigned nDim = 0, kDim = 0;                    // the fastest loop dimension of N and K
  int64_t M = 0, N = 0, K = 0, batch = 1;
  int64_t BM = 0, BN = 0, BK = 0, TM = 0, TN = 0;
  int64_t tx = 0, ty = 0, threads = 0;
  int64_t lda = 0;                                // A's tile in shared memory: BK rows of lda
  bool vec = false, prefetch = false;
  Type eltA, eltB;
};

FailureOr<MatmulPlan> planMatmul(const GenericTask &t, const ScheduleKnobs &k) {
  linalg::GenericOp op = t.op;
  std::optional<GemmView> view = gemmView(op);
  if (!view || t.outputs.size() != 1)
    return op.emitError("tile_sizes need a contraction with exactly one M, N and K dimension, "
                        "or a convolution with unit strides and dilations");
  if (!t.allCombinersKnown() || op.hasIndexSemantics())
    return op.emitError("tile_sizes need a payload of the form `yield add(f(a, b), out)`");
  MatmulPlan pl;
  pl.t = &t;
  pl.view = *view;
  pl.ia = view->a;
  pl.ib = view->b;
  // Operands read through views (tensor.pad, reshapes, slices) take loadLanes' element loads.
  if (t.inputs[pl.ia].kind != ValueSource::Kind::Buffer ||
      t.inputs[pl.ib].kind != ValueSource::Kind::Buffer)
    return op.emitError("tile_sizes need both operands in memory");
  auto sizesOf = [&](ArrayRef<unsigned> ds) {
    SmallVector<int64_t> out;
    for (unsigned d : ds)
      out.push_back(t.loopSizes[d]);
    return out;
  };
  pl.mSizes = sizesOf(view->m);
  pl.nSizes = sizesOf(view->n);
  pl.kSizes = sizesOf(view->k);
  // The fastest-varying loop dimension of each GEMM index (vector accesses run along it).
  pl.nDim = view->n.back();
  pl.kDim = view->k.back();
  const int64_t M = pl.M = product(pl.mSizes), N = pl.N = product(pl.nSizes),
                K = pl.K = product(pl.kSizes);
  const int64_t BM = pl.BM = k.tileSizes[0], BN = pl.BN = k.tileSizes[1],
                BK = pl.BK = k.tileSizes[2];
  const int64_t TM = pl.TM = k.threadTile[0], TN = pl.TN = k.threadTile[1];
  auto bad = [&]() {
    return op.emitError() << "tile_sizes=" << BM << "," << BN << "," << BK
                          << " thread_tile=" << TM << "," << TN << " for M=" << M
                          << " N=" << N << " K=" << K << ": ";
  };
  if (M % BM || N % BN || K % BK)
    return bad() << "the tiles must divide the problem";
  if (BM % TM || BN % TN)
    return bad() << "the thread tile must divide the block tile";
  pl.tx = BN / TN;
  pl.ty = BM / TM;
  const int64_t threads = pl.threads = pl.tx * pl.ty;
  if (threads < 32 || threads > 1024 || threads % 32)
    return bad() << "(BM/TM)*(BN/TN) = " << threads
                 << " threads; it must be a multiple of 32 in [32, 1024]";
  // (An A tile smaller than the block, a depthwise convolution's 1 x window of filter taps with
  // BM = 1, is copied by all threads: thread t copies element min(t, BM*BK - 1), so the threads
  // past the tile write its last element again, the same value.)
  if (((BM * BK) % threads && BM * BK > threads) || (BK * BN) % threads)
    return bad() << "the threads must evenly share the tile copies";
  if (TM * TN > 256)
    return bad() << "a thread tile of more than 256 accumulators would spill";
  if (k.vectorWidth != 1 && k.vectorWidth != 4)
    return bad() << "vector_width=" << k.vectorWidth << " with tile_sizes must be 1 or 4";
  pl.vec = k.vectorWidth == 4;
  pl.prefetch = k.prefetch;
  if (pl.vec && (TM % 4 || TN % 4))
    return bad() << "vector_width=4 needs thread_tile entries that are multiples of 4";
  pl.lda = pl.vec ? BM + 4 : BM;
  pl.eltA = t.params[t.inputs[pl.ia].buffer].getElementType();
  pl.eltB = t.params[t.inputs[pl.ib].buffer].getElementType();
  int64_t smemBytes = pl.lda * BK * pl.eltA.getIntOrFloatBitWidth() / 8 +
                      BK * BN * pl.eltB.getIntOrFloatBitWidth() / 8;
  if (smemBytes > 48 * 1024)
    return bad() << "the tiles need " << smemBytes << " bytes of shared memory (limit 49152)";
  for (unsigned d : view->batch) {
    pl.batchSizes.push_back(t.loopSizes[d]);
    pl.batch *= t.loopSizes[d];
  }
  if (pl.batch > 65535)
    return bad() << "batch " << pl.batch << " exceeds the grid's z limit";
  return pl;
}

/// Writes the kernel of a plan, piece by piece, in the order the kernel runs them.
class MatmulKernel {
public:
  MatmulKernel(const MatmulPlan &pl, KernelBuilder &kb);

  /// The thread's and block's coordinates and the accumulators' initial values.
  void setUp();
  /// All K tiles into the accumulators (prefetching the next tile when the plan says so).
  SmallVector<Value> mainLoop();
  /// C += the accumulators, through the epilogue.
  void storeTile(ArrayRef<Value> accs);
  /// Multiply and add contract to FMA.
  void contractToFma();

private:
  /// Global -> shared copies of one K tile, in two halves so that the next tile can be read
  /// into registers while the current one is computed on (prefetch): `fetch` loads, `stash`
  /// stores.
  struct Piece {
    Value row, col; // A: (mm, kk); B: (kk, nn), the first of the piece's elements
    SmallVector<Value> values;
  };
  struct Fetched {
    SmallVector<Piece> a, b;
  };

  Value rowOf(int64_t i);
  Value colOf(int64_t j);
  SmallVector<Value> load4(Value buffer, Type elt, Value base);
  SmallVector<Value> indices(Value m, Value n, Value kk);
  Fetched fetch(Value k0);
  void stash(const Fetched &f);
  SmallVector<Value> step(Value kk, ValueRange a);
  SmallVector<Value> computeTile(ValueRange cur);

  const MatmulPlan &pl;
  const GenericTask &t;
  const GemmView &view;
  KernelBuilder &kb;
  linalg::GenericOp op;
  Location loc;
  SmallVector<AffineMap> maps;
  Type outElt, acc; // the contraction's own result type (an epilogue may store another one)
  const Combiner &comb;
  bool aKFastest = false, bNFastest = false, vecA = false, vecB = false;
  Value As, Bs, tid, tCol, tRow, m0, n0, zeroIdx, unusedOut;
  SmallVector<Value> batchIdx, init;
};

MatmulKernel::MatmulKernel(const MatmulPlan &pl, KernelBuilder &kb)
    : pl(pl), t(*pl.t), view(pl.view), kb(kb), op(pl.t->op), loc(op.getLoc()),
      maps(op.getIndexingMapsArray()), outElt(t.resultElementType(0)),
      acc(accumulatorType(outElt)), comb(t.combiners[0]) {
  // Copies of a tile are coalesced along the dimension contiguous in global memory.
  auto contiguousIn = [&](AffineMap map, unsigned dim) {
    return accessAlong(map, dim) == Access::Contiguous;
  };
  // A is read along K where K's fastest dimension is contiguous in it; B along N where N's is
  // (a convolution's image is contiguous along both output and filter columns: N wins, as
  // consecutive K there jump rows after a filter width).
  aKFastest = contiguousIn(maps[pl.ia], pl.kDim);
  bNFastest = contiguousIn(maps[pl.ib], pl.nDim) || !contiguousIn(maps[pl.ib], pl.kDim);
  // A run of 4 elements contiguous in global memory is one 128-bit load (vector schedule, when
  // the threads share the runs evenly); A's tile is stored transposed. 128-bit loads only where
  // a GEMM index is one loop dimension: a run of 4 along a split one can leave its dimension (a
  // filter row of 3) or its alignment (image columns at ow + kw).
  vecA = pl.vec && aKFastest && view.k.size() == 1 && pl.BK % 4 == 0 &&
         (pl.BM * pl.BK / 4) % pl.threads == 0;
  vecB = pl.vec && bNFastest && view.n.size() == 1 && (pl.BK * pl.BN / 4) % pl.threads == 0;
}

void MatmulKernel::setUp() {
  As = kb.workgroup(0);
  Bs = kb.workgroup(1);
  tid = kb.threadId();
  tCol = kb.rem(tid, pl.tx);
  tRow = kb.div(tid, pl.tx);
  m0 = kb.mul(kb.blockId(gpu::Dimension::y), pl.BM);
  n0 = kb.mul(kb.blockId(gpu::Dimension::x), pl.BN);
  batchIdx = kb.delinearize(kb.blockId(gpu::Dimension::z), pl.batchSizes);
  zeroIdx = kb.idx(0);
  for (int64_t i = 0; i < pl.TM * pl.TN; ++i)
    init.push_back(combinerIdentity(kb.b, loc, comb.op, acc));
  unusedOut = kb.constant(cast<TypedAttr>(kb.b.getZeroAttr(outElt)));
}

// The tile rows and columns a thread owns (see the file comment).
Value MatmulKernel::rowOf(int64_t i) {
  return pl.vec ? kb.add(kb.mul(tRow, 4), (i / 4) * 4 * pl.ty + i % 4) : kb.add(tRow, i * pl.ty);
}

Value MatmulKernel::colOf(int64_t j) {
  return pl.vec ? kb.add(kb.mul(tCol, 4), (j / 4) * 4 * pl.tx + j % 4) : kb.add(tCol, j * pl.tx);
}

/// Four consecutive shared-memory elements from `base`, one 128-bit (or 64-bit) load.
SmallVector<Value> MatmulKernel::load4(Value buffer, Type elt, Value base) {
  auto v = vector::LoadOp::create(kb.b, VectorType::get({4}, elt), buffer, ValueRange{base});
  if (int64_t align = vectorAlignment(elt, 4))
    v.setAlignment(align);
  SmallVector<Value> out;
  for (int64_t l = 0; l < 4; ++l)
    out.push_back(vector::ExtractOp::create(kb.b, v, l));
  return out;
}

/// Loop indices of GEMM point (m, n, k): each GEMM index split over its loop dimensions (the
/// last fastest; one dimension each for a plain contraction).
SmallVector<Value> MatmulKernel::indices(Value m, Value n, Value kk) {
  SmallVector<Value> ivs(t.loopSizes.size());
  for (auto [i, d] : llvm::enumerate(view.batch))
    ivs[d] = batchIdx[i];
  auto place = [&](ArrayRef<unsigned> ds, ArrayRef<int64_t> sizes, Value linear) {
    SmallVector<Value> parts =
        ds.size() == 1 ? SmallVector<Value>{linear} : kb.delinearize(linear, sizes);
    for (auto [d, v] : llvm::zip(ds, parts))
      ivs[d] = v;
  };
  place(view.m, pl.mSizes, m);
  place(view.n, pl.nSizes, n);
  place(view.k, pl.kSizes, kk);
  return ivs;
}

MatmulKernel::Fetched MatmulKernel::fetch(Value k0) {
  const int64_t BM = pl.BM, BN = pl.BN, BK = pl.BK, threads = pl.threads;
  const unsigned ia = pl.ia, ib = pl.ib;
  Fetched f;
  const int64_t pa = vecA ? 4 : 1, pb = vecB ? 4 : 1;
  const bool aSmall = BM * BK < threads; // (planMatmul; never vecA)
  for (int64_t l = 0; l < (aSmall ? 1 : BM * BK / pa / threads); ++l) {
    Value e = aSmall ? arith::MinUIOp::create(kb.b, tid, kb.idx(BM * BK - 1)).getResult()
                     : kb.add(tid, l * threads);
    Value mm = vecA ? kb.div(e, BK / 4) : aKFastest ? kb.div(e, BK) : kb.rem(e, BM);
    Value kk = vecA ? kb.mul(kb.rem(e, BK / 4), 4) : aKFastest ? kb.rem(e, BK) : kb.div(e, BM);
    f.a.push_back({mm, kk,
                   loadLanes(kb, t.inputs[ia], maps[ia], pl.eltA,
                             indices(kb.add(m0, mm), zeroIdx, kb.add(k0, kk)), pl.kDim, pa)});
  }
  for (int64_t l = 0; l < BK * BN / pb / threads; ++l) {
    Value e = kb.add(tid, l * threads);
    Value nn = vecB ? kb.mul(kb.rem(e, BN / 4), 4) : bNFastest ? kb.rem(e, BN) : kb.div(e, BK);
    Value kk = vecB ? kb.div(e, BN / 4) : bNFastest ? kb.div(e, BN) : kb.rem(e, BK);
    f.b.push_back({kk, nn,
                   loadLanes(kb, t.inputs[ib], maps[ib], pl.eltB,
                             indices(zeroIdx, kb.add(n0, nn), kb.add(k0, kk)), pl.nDim, pb)});
  }
  return f;
}

void MatmulKernel::stash(const Fetched &f) {
  for (const Piece &p : f.a)
    for (auto [q, v] : llvm::enumerate(p.values))
      memref::StoreOp::create(kb.b, v, As,
                              ValueRange{kb.add(kb.mul(kb.add(p.col, q), pl.lda), p.row)});
  for (const Piece &p : f.b) {
    Value at = kb.add(kb.mul(p.row, pl.BN), p.col);
    if (p.values.size() == 1) {
      memref::StoreOp::create(kb.b, p.values.front(), Bs, ValueRange{at});
      continue;
    }
    auto v = vector::FromElementsOp::create(
        kb.b, VectorType::get({int64_t(p.values.size())}, pl.eltB), p.values);
    auto st = vector::StoreOp::create(kb.b, v, Bs, ValueRange{at});
    if (int64_t align = vectorAlignment(pl.eltB, p.values.size()))
      st.setAlignment(align);
  }
}

/// One K tile from shared memory into the accumulators.
SmallVector<Value> MatmulKernel::step(Value kk, ValueRange a) {
  const int64_t TM = pl.TM, TN = pl.TN;
  SmallVector<Value> as, bs;
  Value aRow = kb.mul(kk, pl.lda), bRow = kb.mul(kk, pl.BN);
  if (pl.vec) {
    for (int64_t i = 0; i < TM; i += 4)
      llvm::append_range(as, load4(As, pl.eltA, kb.add(aRow, rowOf(i))));
    for (int64_t j = 0; j < TN; j += 4)
      llvm::append_range(bs, load4(Bs, pl.eltB, kb.add(bRow, colOf(j))));
  } else {
    for (int64_t i = 0; i < TM; ++i)
      as.push_back(memref::LoadOp::create(kb.b, As, ValueRange{kb.add(aRow, rowOf(i))}));
    for (int64_t j = 0; j < TN; ++j)
      bs.push_back(memref::LoadOp::create(kb.b, Bs, ValueRange{kb.add(bRow, colOf(j))}));
  }
  SmallVector<Value> out;
  for (int64_t i = 0; i < TM; ++i)
    for (int64_t j = 0; j < TN; ++j) {
      IRMapping map;
      SmallVector<Value> args(3, unusedOut);
      args[pl.ia] = as[i];
      args[pl.ib] = bs[j];
      clonePayload(kb.b, op, args, {}, {comb.op}, map);
      Value x = castTo(kb.b, loc, map.lookupOrDefault(comb.op->getOperand(comb.valueOperand)),
                       acc);
      out.push_back(combine(kb.b, loc, comb.op, a[i * TN + j], x));
    }
  return out;
}

SmallVector<Value> MatmulKernel::computeTile(ValueRange cur) {
  // The vector schedule unrolls the K step here (BK <= 32: at most 32 x TM*TN FMAs), so the
  // shared-memory offsets are constants and no loop counter competes with the FMAs.
  if (pl.vec && pl.BK <= 32) {
    SmallVector<Value> next(cur.begin(), cur.end());
    for (int64_t kk = 0; kk < pl.BK; ++kk)
      next = step(kb.idx(kk), next);
    return next;
  }
  return kb.forLoop(zeroIdx, kb.idx(pl.BK), 1, cur,
                    [&](Value kk, ValueRange a) { return step(kk, a); });
}

SmallVector<Value> MatmulKernel::mainLoop() {
  const int64_t BK = pl.BK;
  if (!pl.prefetch)
    return kb.forLoop(zeroIdx, kb.idx(pl.K), BK, init, [&](Value k0, ValueRange cur) {
      stash(fetch(k0));
      gpu::BarrierOp::create(kb.b);
      SmallVector<Value> next = computeTile(cur);
      gpu::BarrierOp::create(kb.b);
      return next;
    });
  // Tile 0 first; then each iteration reads tile k0 while computing tile k0 - BK.
  stash(fetch(zeroIdx));
  gpu::BarrierOp::create(kb.b);
  SmallVector<Value> last =
      kb.forLoop(kb.idx(BK), kb.idx(pl.K), BK, init, [&](Value k0, ValueRange cur) {
        Fetched next = fetch(k0);
        SmallVector<Value> out = computeTile(cur);
        gpu::BarrierOp::create(kb.b);
        stash(next);
        gpu::BarrierOp::create(kb.b);
        return out;
      });
  return computeTile(last);
}

void MatmulKernel::storeTile(ArrayRef<Value> accs) {
  const int64_t TM = pl.TM, TN = pl.TN;
  // C: `lanes` consecutive columns at a time (one vector access where C is contiguous along N).
  AffineMap outMap = maps[2];
  // (C's fastest N dimension must hold whole groups of 4 for the 16-byte aligned store.)
  const int64_t lanes = pl.vec && t.loopSizes[pl.nDim] % 4 == 0 ? 4 : 1;
  for (int64_t i = 0; i < TM; ++i)
    for (int64_t j = 0; j < TN; j += lanes) {
      SmallVector<Value> ivs = indices(kb.add(m0, rowOf(i)), kb.add(n0, colOf(j)), zeroIdx);
      SmallVector<Value> results(accs.begin() + i * TN + j, accs.begin() + i * TN + j + lanes);
      if (t.inits[0].kind != ValueSource::Kind::None) {
        SmallVector<Value> init0 =
            loadLanes(kb, t.inits[0], outMap, outElt, ivs, pl.nDim, lanes);
        for (int64_t l = 0; l < lanes; ++l)
          results[l] = combine(kb.b, loc, comb.op, castTo(kb.b, loc, init0[l], acc), results[l]);
      }
      // Cast and stored, through the epilogue (in f32 for f16/bf16) where the task has one.
      storeOutput(kb, t, 0, ivs, pl.nDim, results, /*wide=*/true);
    }
}

void MatmulKernel::contractToFma() {
  // One rounding, as cuBLAS does: without it NVPTX emits mul.rn + add.rn, twice the
  // instructions of the inner loop.
  kb.kernel.walk([](arith::ArithFastMathInterface op) {
    auto flags = arith::FastMathFlagsAttr::get(op->getContext(), op.getFastMathFlagsAttr()
                                                                     ? op.getFastMathFlagsAttr().getValue() |
                                                                           arith::FastMathFlags::contract
                                                                     : arith::FastMathFlags::contract);
    op->setAttr(op.getFastMathAttrName(), flags);
  });
}

} // namespace

FailureOr<LoweredTask> emitTiledMatmul(const GenericTask &t, const ScheduleKnobs &k,
                                       EmitContext &ctx) {
  FailureOr<MatmulPlan> pl = planMatmul(t, k);
  if (failed(pl))
    return failure();
  MLIRContext *mctx = t.op->getContext();
  KernelBuilder kb(ctx.module, ctx.kernelName, t.params,
                   {workgroupBuffer(mctx, pl->BK * pl->lda, pl->eltA),
                    workgroupBuffer(mctx, pl->BK * pl->BN, pl->eltB)},
                   {pl->threads, 1, 1}, t.op->getLoc());
  MatmulKernel kernel(*pl, kb);
  kernel.setUp();
  SmallVector<Value> accs = kernel.mainLoop();
  kernel.storeTile(accs);
  kernel.contractToFma();
  kb.finish();

  return singleKernel(TaskFamily::Matmul, ctx, {pl->N / pl->BN, pl->M / pl->BM, pl->batch},
                      {pl->threads, 1, 1}, t.params.size());
}

} // namespace evo
