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
// 4 columns at a time. A B contiguous along K only (x @ Wᵀ) is read as A is, in runs of 4 K,
// and stored transposed into rows padded the same way; an A contiguous along M (Aᵀ @ B) as B
// is, in runs of 4 M stored whole.
//
// A fused epilogue (elementwise ops on the result, TaskAnalysis.h) is applied to each element
// of the register tile, in f32 for f16/bf16, just before its store (storeOutput).
//
//===----------------------------------------------------------------------===//

#include "Emitters.h"
#include "KernelBuilder.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

namespace evo {

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
  unsigned mDim = 0, nDim = 0, kDim = 0;          // the fastest loop dimension of M, N and K
  int64_t M = 0, N = 0, K = 0, batch = 1;
  int64_t BM = 0, BN = 0, BK = 0, TM = 0, TN = 0;
  int64_t tx = 0, ty = 0, threads = 0;
  int64_t lda = 0;                                // A's tile in shared memory: BK rows of lda
  // B contiguous along K only (x @ Wᵀ, nn.Linear's weight): its tile is stored transposed, as
  // A's, in BK rows of ldb > BN (padded, so that the threads' transposed stores, consecutive K
  // of one column, fall on different banks).
  bool bKMajor = false;
  int64_t ldb = 0;
  bool vec = false, prefetch = false;
  // Shapes the tiles do not divide: the last row (column) tile reads clamped rows (columns) and
  // stores only those inside; K: kFull whole K tiles, then a tail tile of kTail < BK elements.
  bool guardM = false, guardN = false;
  int64_t kFull = 0, kTail = 0;
  // Split-K: `split` slices of the whole K tiles per output tile (grid z = batch * split), their
  // partial tiles written to a scratch buffer [split, batch * M * N] and added in order (with the
  // initial value, through the epilogue) by a second kernel, one thread per output.
  int64_t split = 1;
  std::optional<OutputMask> mask;
  Type eltA, eltB;
};

FailureOr<MatmulPlan> planMatmul(const GenericTask &t, const ScheduleKnobs &k) {
  linalg::GenericOp op = t.op;
  std::optional<GemmView> view = gemmView(op);
  if (!view || t.outputs.size() != 1)
    return op.emitError("tile_sizes need a contraction with M, N and K dimensions, or a "
                        "convolution seen as an implicit GEMM (docs/lowering.md)");
  MatmulPlan pl;
  pl.mask = matchOutputMask(op);
  if (!t.allCombinersKnown() || (op.hasIndexSemantics() && !pl.mask))
    return op.emitError("tile_sizes need a payload of the form `yield add(f(a, b), out)`, or "
                        "`yield add(out, select(c, a * b, 0))` with c a function of the output "
                        "indices");
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
  pl.mDim = view->m.back();
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
  pl.guardM = M % BM != 0;
  pl.guardN = N % BN != 0;
  pl.kFull = K / BK;
  pl.kTail = K % BK;
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
  pl.split = k.split;
  if (pl.split > 1 && pl.kFull < pl.split)
    return bad() << "split=" << pl.split << " needs at least " << pl.split << " whole K tiles, got "
                 << pl.kFull;
  pl.lda = pl.vec ? BM + 4 : BM;
  // (A convolution's image is contiguous along both output and filter columns: N wins, as
  // consecutive K there jump rows after a filter width.) Padding by 4 keeps the 128-bit
  // fragment loads of the vector schedule aligned.
  AffineMap mapB = op.getIndexingMapsArray()[pl.ib];
  pl.bKMajor = accessAlong(mapB, pl.kDim) == Access::Contiguous &&
               accessAlong(mapB, pl.nDim) != Access::Contiguous;
  pl.ldb = pl.bKMajor ? BN + (pl.vec ? 4 : 1) : BN;
  pl.eltA = t.params[t.inputs[pl.ia].buffer].getElementType();
  pl.eltB = t.params[t.inputs[pl.ib].buffer].getElementType();
  int64_t smemBytes = pl.lda * BK * pl.eltA.getIntOrFloatBitWidth() / 8 +
                      BK * pl.ldb * pl.eltB.getIntOrFloatBitWidth() / 8;
  if (smemBytes > 48 * 1024)
    return bad() << "the tiles need " << smemBytes << " bytes of shared memory (limit 49152)";
  for (unsigned d : view->batch) {
    pl.batchSizes.push_back(t.loopSizes[d]);
    pl.batch *= t.loopSizes[d];
  }
  if (pl.batch * pl.split > 65535)
    return bad() << "batch " << pl.batch << (pl.split > 1 ? " times split " : "")
                 << (pl.split > 1 ? std::to_string(pl.split) : "")
                 << " exceeds the grid's z limit";
  if (ceilDiv(M, BM) > 65535)
    return bad() << ceilDiv(M, BM) << " row tiles exceed the grid's y limit";
  if (ceilDiv(N, BN) > std::numeric_limits<int32_t>::max())
    return bad() << ceilDiv(N, BN) << " column tiles exceed the grid's x limit";
  if (pl.split > 1) {
    const int64_t accBytes = accumulatorType(t.resultElementType(0)).getIntOrFloatBitWidth() / 8;
    const int64_t scratch = pl.split * pl.batch * M * N * accBytes;
    if (scratch > (int64_t(1) << 28))
      return bad() << "split=" << pl.split << " needs " << scratch
                   << " bytes of partial results (limit 268435456)";
    if (ceilDiv(pl.batch * M * N, 256) > std::numeric_limits<int32_t>::max())
      return bad() << "the split-K combine's grid is too large";
  }
  return pl;
}

/// Loop indices of GEMM point (m, n, k) of batch `batchIdx`: each GEMM index split over its loop
/// dimensions (the last fastest; one dimension each for a plain contraction).
SmallVector<Value> gemmIndices(KernelBuilder &kb, const MatmulPlan &pl, ArrayRef<Value> batchIdx,
                               Value m, Value n, Value kk) {
  SmallVector<Value> ivs(pl.t->loopSizes.size());
  for (auto [i, d] : llvm::enumerate(pl.view.batch))
    ivs[d] = batchIdx[i];
  auto place = [&](ArrayRef<unsigned> ds, ArrayRef<int64_t> sizes, Value linear) {
    SmallVector<Value> parts =
        ds.size() == 1 ? SmallVector<Value>{linear} : kb.delinearize(linear, sizes);
    for (auto [d, v] : llvm::zip(ds, parts))
      ivs[d] = v;
  };
  place(pl.view.m, pl.mSizes, m);
  place(pl.view.n, pl.nSizes, n);
  place(pl.view.k, pl.kSizes, kk);
  return ivs;
}

/// A masked contraction's mask at output point `ivs`: the accumulated value where the condition
/// keeps the product, else the combiner's identity (what the masked terms add up to).
Value applyOutputMask(KernelBuilder &kb, const MatmulPlan &pl, ArrayRef<Value> ivs, Value v) {
  if (!pl.mask)
    return v;
  IRMapping map;
  for (Operation *o : pl.mask->condOps) {
    if (auto index = dyn_cast<linalg::IndexOp>(o)) {
      map.map(index.getResult(), ivs[index.getDim()]);
      continue;
    }
    for (Value operand : o->getOperands())
      if (!map.contains(operand))
        if (Operation *c = operand.getDefiningOp(); c && c->getBlock() != o->getBlock())
          map.map(operand, kb.b.clone(*c)->getResult(0)); // a captured constant
    kb.b.clone(*o, map);
  }
  Value cond = map.lookup(cast<arith::SelectOp>(pl.mask->select).getCondition());
  Operation *c = pl.t->combiners[0].op;
  Value identity = combinerIdentity(kb.b, kb.b.getLoc(), c, v.getType());
  return pl.mask->keepWhenTrue ? arith::SelectOp::create(kb.b, cond, v, identity).getResult()
                               : arith::SelectOp::create(kb.b, cond, identity, v).getResult();
}

/// Writes the kernel of a plan, piece by piece, in the order the kernel runs them.
class MatmulKernel {
public:
  MatmulKernel(const MatmulPlan &pl, KernelBuilder &kb);

  /// The thread's and block's coordinates and the accumulators' initial values.
  void setUp();
  /// All K tiles (of the block's slice, with split-K) into the accumulators (prefetching the next
  /// tile when the plan says so), then the partial tail tile.
  SmallVector<Value> mainLoop();
  /// C += the accumulators, through the epilogue (with split-K: the partial tile to scratch).
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

  void storeElements(Value m, Value n, SmallVector<Value> results);
  Value rowOf(int64_t i);
  Value colOf(int64_t j);
  SmallVector<Value> load4(Value buffer, Type elt, Value base);
  SmallVector<Value> indices(Value m, Value n, Value kk);
  Fetched fetch(Value k0, bool tail = false);
  void stash(const Fetched &f);
  SmallVector<Value> step(Value kk, ValueRange a);
  SmallVector<Value> computeTile(ValueRange cur, int64_t count);
  /// The whole K tiles from element lo to hi (at least one tile).
  SmallVector<Value> wholeTiles(Value lo, Value hi, ValueRange cur);
  /// The last K tile, of kTail < BK elements (clamped loads; only its kTail rows are computed).
  SmallVector<Value> tailTile(ValueRange cur);

  const MatmulPlan &pl;
  const GenericTask &t;
  const GemmView &view;
  KernelBuilder &kb;
  linalg::GenericOp op;
  Location loc;
  SmallVector<AffineMap> maps;
  Type outElt, acc; // the contraction's own result type (an epilogue may store another one)
  const Combiner &comb;
  bool aKFastest = false, bNFastest = false, vecA = false, vecAM = false, vecB = false,
       vecBK = false;
  Value As, Bs, tid, tCol, tRow, m0, n0, zeroIdx, unusedOut;
  Value slice, batchLin; // split-K: the block's slice of K and its linear batch index
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
  // A is read along K where K's fastest dimension is contiguous in it; B along N unless it is
  // contiguous along K only (planMatmul).
  aKFastest = contiguousIn(maps[pl.ia], pl.kDim);
  bNFastest = !pl.bKMajor;
  // A run of 4 elements contiguous in global memory is one 128-bit load (vector schedule, when
  // the threads share the runs evenly); A's tile is stored transposed. 128-bit loads only where
  // a GEMM index is one loop dimension: a run of 4 along a split one can leave its dimension (a
  // filter row of 3) or its alignment (image columns at ow + kw).
  // The run's first element is a multiple of 4 of the operand's innermost extent (the GEMM
  // index's only dimension): that extent must be a multiple of 4 too, for the 16-byte alignment
  // of every row and for a run never to straddle the end of a clamped tile.
  vecA = pl.vec && aKFastest && view.k.size() == 1 && pl.BK % 4 == 0 &&
         t.loopSizes[pl.kDim] % 4 == 0 && (pl.BM * pl.BK / 4) % pl.threads == 0;
  // A contiguous along M (torch.matmul(A.T, B)): runs of 4 M, stored as they are (a row of
  // A's tile is M-contiguous), as B's runs of N.
  vecAM = pl.vec && !aKFastest && contiguousIn(maps[pl.ia], pl.mDim) && view.m.size() == 1 &&
          t.loopSizes[pl.mDim] % 4 == 0 && (pl.BM * pl.BK / 4) % pl.threads == 0;
  vecB = pl.vec && bNFastest && view.n.size() == 1 && t.loopSizes[pl.nDim] % 4 == 0 &&
         (pl.BK * pl.BN / 4) % pl.threads == 0;
  // B along K: runs of 4 K, as A's.
  vecBK = pl.vec && pl.bKMajor && view.k.size() == 1 && pl.BK % 4 == 0 &&
          t.loopSizes[pl.kDim] % 4 == 0 && (pl.BK * pl.BN / 4) % pl.threads == 0;
}

void MatmulKernel::setUp() {
  As = kb.workgroup(0);
  Bs = kb.workgroup(1);
  tid = kb.threadId();
  tCol = kb.rem(tid, pl.tx);
  tRow = kb.div(tid, pl.tx);
  m0 = kb.mul(kb.blockId(gpu::Dimension::y), pl.BM);
  n0 = kb.mul(kb.blockId(gpu::Dimension::x), pl.BN);
  Value bz = kb.blockId(gpu::Dimension::z);
  batchLin = pl.split > 1 ? kb.rem(bz, pl.batch) : bz;
  slice = pl.split > 1 ? kb.div(bz, pl.batch) : Value();
  batchIdx = kb.delinearize(batchLin, pl.batchSizes);
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
  return gemmIndices(kb, pl, batchIdx, m, n, kk);
}

/// With `tail` (the last, partial K tile) and where the tiles do not divide M or N, the GEMM
/// indices past the problem are clamped to its last element (run): the loads stay in bounds, and
/// what they read is never used (rows and columns past M and N only reach accumulators that are
/// not stored; K rows past K are not computed on: tailTile).
MatmulKernel::Fetched MatmulKernel::fetch(Value k0, bool tail) {
  const int64_t BM = pl.BM, BN = pl.BN, BK = pl.BK, threads = pl.threads;
  const unsigned ia = pl.ia, ib = pl.ib;
  Fetched f;
  const int64_t pa = vecA || vecAM ? 4 : 1, pb = vecB || vecBK ? 4 : 1;
  auto clamp = [&](Value i, bool guard, int64_t extent, int64_t run) -> Value {
    return guard ? arith::MinUIOp::create(kb.b, i, kb.idx(extent - run)).getResult() : i;
  };
  const bool aSmall = BM * BK < threads; // (planMatmul; never vecA)
  for (int64_t l = 0; l < (aSmall ? 1 : BM * BK / pa / threads); ++l) {
    Value e = aSmall ? arith::MinUIOp::create(kb.b, tid, kb.idx(BM * BK - 1)).getResult()
                     : kb.add(tid, l * threads);
    Value mm = vecA    ? kb.div(e, BK / 4)
               : vecAM ? kb.mul(kb.rem(e, BM / 4), 4)
               : aKFastest ? kb.div(e, BK)
                           : kb.rem(e, BM);
    Value kk = vecA    ? kb.mul(kb.rem(e, BK / 4), 4)
               : vecAM ? kb.div(e, BM / 4)
               : aKFastest ? kb.rem(e, BK)
                           : kb.div(e, BM);
    f.a.push_back({mm, kk,
                   loadLanes(kb, t.inputs[ia], maps[ia], pl.eltA,
                             indices(clamp(kb.add(m0, mm), pl.guardM, pl.M, vecAM ? 4 : 1), zeroIdx,
                                     clamp(kb.add(k0, kk), tail, pl.K, vecA ? 4 : 1)),
                             vecAM ? pl.mDim : pl.kDim, pa)});
  }
  for (int64_t l = 0; l < BK * BN / pb / threads; ++l) {
    Value e = kb.add(tid, l * threads);
    Value nn = vecB    ? kb.mul(kb.rem(e, BN / 4), 4)
               : vecBK ? kb.div(e, BK / 4)
               : bNFastest ? kb.rem(e, BN)
                           : kb.div(e, BK);
    Value kk = vecB    ? kb.div(e, BN / 4)
               : vecBK ? kb.mul(kb.rem(e, BK / 4), 4)
               : bNFastest ? kb.div(e, BN)
                           : kb.rem(e, BK);
    f.b.push_back({kk, nn,
                   loadLanes(kb, t.inputs[ib], maps[ib], pl.eltB,
                             indices(zeroIdx, clamp(kb.add(n0, nn), pl.guardN, pl.N, vecB ? 4 : 1),
                                     clamp(kb.add(k0, kk), tail, pl.K, vecBK ? 4 : 1)),
                             vecBK ? pl.kDim : pl.nDim, pb)});
  }
  return f;
}

void MatmulKernel::stash(const Fetched &f) {
  for (const Piece &p : f.a) {
    if (vecAM) { // a run along M: one row of the tile
      auto v = vector::FromElementsOp::create(kb.b, VectorType::get({4}, pl.eltA), p.values);
      auto st = vector::StoreOp::create(kb.b, v, As,
                                        ValueRange{kb.add(kb.mul(p.col, pl.lda), p.row)});
      if (int64_t align = vectorAlignment(pl.eltA, 4))
        st.setAlignment(align);
      continue;
    }
    for (auto [q, v] : llvm::enumerate(p.values))
      memref::StoreOp::create(kb.b, v, As,
                              ValueRange{kb.add(kb.mul(kb.add(p.col, q), pl.lda), p.row)});
  }
  for (const Piece &p : f.b) {
    if (vecBK) { // a run along K: down one column of the transposed tile
      for (auto [q, v] : llvm::enumerate(p.values))
        memref::StoreOp::create(kb.b, v, Bs,
                                ValueRange{kb.add(kb.mul(kb.add(p.row, q), pl.ldb), p.col)});
      continue;
    }
    Value at = kb.add(kb.mul(p.row, pl.ldb), p.col);
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
  Value aRow = kb.mul(kk, pl.lda), bRow = kb.mul(kk, pl.ldb);
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
  // (A masked contraction computes the plain product here; the mask applies per output.)
  SmallVector<Operation *> skip{comb.op};
  if (pl.mask) {
    skip.push_back(pl.mask->select);
    llvm::append_range(skip, pl.mask->condOps);
  }
  SmallVector<Value> out;
  for (int64_t i = 0; i < TM; ++i)
    for (int64_t j = 0; j < TN; ++j) {
      IRMapping map;
      SmallVector<Value> args(3, unusedOut);
      args[pl.ia] = as[i];
      args[pl.ib] = bs[j];
      clonePayload(kb.b, op, args, {}, skip, map);
      Value x = castTo(kb.b, loc,
                       map.lookupOrDefault(pl.mask ? pl.mask->product
                                                   : comb.op->getOperand(comb.valueOperand)),
                       acc);
      out.push_back(combine(kb.b, loc, comb.op, a[i * TN + j], x));
    }
  return out;
}

SmallVector<Value> MatmulKernel::computeTile(ValueRange cur, int64_t count) {
  // The vector schedule unrolls the K step here (BK <= 32: at most 32 x TM*TN FMAs), so the
  // shared-memory offsets are constants and no loop counter competes with the FMAs.
  if (pl.vec && pl.BK <= 32) {
    SmallVector<Value> next(cur.begin(), cur.end());
    for (int64_t kk = 0; kk < count; ++kk)
      next = step(kb.idx(kk), next);
    return next;
  }
  return kb.forLoop(zeroIdx, kb.idx(count), 1, cur,
                    [&](Value kk, ValueRange a) { return step(kk, a); });
}

SmallVector<Value> MatmulKernel::mainLoop() {
  const int64_t BK = pl.BK;
  SmallVector<Value> accs(init);
  if (pl.split > 1) {
    // Slice s of S takes whole tiles [s * kFull / S, (s + 1) * kFull / S) (at least one each),
    // the last slice the tail tile too.
    auto bound = [&](Value s) { return kb.mul(kb.div(kb.mul(s, pl.kFull), pl.split), BK); };
    accs = wholeTiles(bound(slice), bound(kb.add(slice, 1)), accs);
    if (!pl.kTail)
      return accs;
    SmallVector<Type> types(accs.size(), acc);
    return kb.ifThenElse(
        kb.eq(slice, pl.split - 1), types, [&] { return tailTile(accs); },
        [&] { return accs; });
  }
  if (pl.kFull)
    accs = wholeTiles(zeroIdx, kb.idx(pl.kFull * BK), accs);
  if (pl.kTail)
    accs = tailTile(accs);
  return accs;
}

SmallVector<Value> MatmulKernel::tailTile(ValueRange cur) {
  // (The barrier: the last whole tile's shared-memory reads are done.)
  if (pl.kFull)
    gpu::BarrierOp::create(kb.b);
  stash(fetch(kb.idx(pl.kFull * pl.BK), /*tail=*/true));
  gpu::BarrierOp::create(kb.b);
  return computeTile(cur, pl.kTail);
}

SmallVector<Value> MatmulKernel::wholeTiles(Value lo, Value hi, ValueRange init) {
  const int64_t BK = pl.BK;
  if (!pl.prefetch)
    return kb.forLoop(lo, hi, BK, init, [&](Value k0, ValueRange cur) {
      stash(fetch(k0));
      gpu::BarrierOp::create(kb.b);
      SmallVector<Value> next = computeTile(cur, pl.BK);
      gpu::BarrierOp::create(kb.b);
      return next;
    });
  // The first tile first; then each iteration reads tile k0 while computing tile k0 - BK.
  stash(fetch(lo));
  gpu::BarrierOp::create(kb.b);
  SmallVector<Value> last =
      kb.forLoop(kb.add(lo, BK), hi, BK, init, [&](Value k0, ValueRange cur) {
        Fetched next = fetch(k0);
        SmallVector<Value> out = computeTile(cur, pl.BK);
        gpu::BarrierOp::create(kb.b);
        stash(next);
        gpu::BarrierOp::create(kb.b);
        return out;
      });
  return computeTile(last, pl.BK);
}

void MatmulKernel::storeTile(ArrayRef<Value> accs) {
  const int64_t TM = pl.TM, TN = pl.TN;
  // C: `lanes` consecutive columns at a time (one vector access where C is contiguous along N).
  // (C's fastest N dimension must hold whole groups of 4 for the 16-byte aligned store; then N
  // is a multiple of 4 too, and a group is wholly inside N or wholly past it.)
  const int64_t lanes =
      pl.split == 1 && pl.vec && t.loopSizes[pl.nDim] % 4 == 0 ? 4 : 1;
  for (int64_t i = 0; i < TM; ++i)
    for (int64_t j = 0; j < TN; j += lanes) {
      Value m = kb.add(m0, rowOf(i)), n = kb.add(n0, colOf(j));
      SmallVector<Value> results(accs.begin() + i * TN + j, accs.begin() + i * TN + j + lanes);
      // Rows and columns past the problem (tiles that do not divide it) are not stored.
      Value inside;
      if (pl.guardM)
        inside = kb.lt(m, pl.M);
      if (pl.guardN)
        inside = inside ? arith::AndIOp::create(kb.b, inside, kb.lt(n, pl.N)).getResult()
                        : kb.lt(n, pl.N);
      auto store = [&] { storeElements(m, n, results); };
      if (inside)
        kb.ifThen(inside, store);
      else
        store();
    }
}

void MatmulKernel::storeElements(Value m, Value n, SmallVector<Value> results) {
  const int64_t lanes = results.size();
  AffineMap outMap = maps[2];
  if (pl.split > 1) {
    // A slice's partial sums, raw: the combine kernel adds the slices and the initial value.
    Value point = kb.add(kb.mul(kb.add(kb.mul(batchLin, pl.M), m), pl.N), n);
    memref::StoreOp::create(kb.b, results[0], kb.param(t.params.size()),
                            ValueRange{slice, point});
    return;
  }
  SmallVector<Value> ivs = indices(m, n, zeroIdx);
  for (int64_t l = 0; l < lanes; ++l)
    results[l] = applyOutputMask(kb, pl, laneIndices(kb, ivs, pl.nDim, l), results[l]);
  if (t.inits[0].kind != ValueSource::Kind::None) {
    SmallVector<Value> init0 = loadLanes(kb, t.inits[0], outMap, outElt, ivs, pl.nDim, lanes);
    for (int64_t l = 0; l < lanes; ++l)
      results[l] = combine(kb.b, loc, comb.op, castTo(kb.b, loc, init0[l], acc), results[l]);
  }
  // Cast and stored, through the epilogue (in f32 for f16/bf16) where the task has one.
  storeOutput(kb, t, 0, ivs, pl.nDim, results, /*wide=*/true);
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

/// The second kernel of split-K: one thread per output point (batch, m, n), the slices' partial
/// sums added in order (the result does not depend on scheduling), then the initial value, then
/// the epilogue and the store.
void emitSplitCombine(const MatmulPlan &pl, EmitContext &ctx, ArrayRef<MemRefType> params) {
  const GenericTask &t = *pl.t;
  const int64_t bs = 256, points = pl.batch * pl.M * pl.N;
  Location loc = t.op->getLoc();
  KernelBuilder kb(ctx.module, ctx.kernelName, params, {}, {bs, 1, 1}, loc);
  Value point = kb.add(kb.mul(kb.blockId(), bs), kb.threadId());
  auto body = [&] {
    Value n = kb.rem(point, pl.N), rest = kb.div(point, pl.N);
    Value m = kb.rem(rest, pl.M), b = kb.div(rest, pl.M);
    SmallVector<Value> ivs = gemmIndices(kb, pl, kb.delinearize(b, pl.batchSizes), m, n, kb.idx(0));
    Operation *c = t.combiners[0].op;
    Type outElt = t.resultElementType(0), acc = accumulatorType(outElt);
    Value partials = kb.param(t.params.size());
    Value total =
        kb.forLoop(kb.idx(0), kb.idx(pl.split), 1, {combinerIdentity(kb.b, loc, c, acc)},
                   [&](Value s, ValueRange a) {
                     Value x = memref::LoadOp::create(kb.b, partials, ValueRange{s, point});
                     return SmallVector<Value>{combine(kb.b, loc, c, a[0], x)};
                   })
            .front();
    total = applyOutputMask(kb, pl, ivs, total);
    if (t.inits[0].kind != ValueSource::Kind::None) {
      AffineMap outMap = linalg::GenericOp(t.op).getIndexingMapsArray()[2];
      Value init0 = loadLanes(kb, t.inits[0], outMap, outElt, ivs, pl.nDim, 1).front();
      total = combine(kb.b, loc, c, castTo(kb.b, loc, init0, acc), total);
    }
    storeOutput(kb, t, 0, ivs, pl.nDim, {total}, /*wide=*/true);
  };
  if (points % bs == 0)
    body();
  else
    kb.ifThen(kb.lt(point, points), body);
  kb.finish();
}

} // namespace

FailureOr<LoweredTask> emitTiledMatmul(const GenericTask &t, const ScheduleKnobs &k,
                                       EmitContext &ctx) {
  FailureOr<MatmulPlan> pl = planMatmul(t, k);
  if (failed(pl))
    return failure();
  MLIRContext *mctx = t.op->getContext();
  SmallVector<MemRefType> params(t.params.begin(), t.params.end());
  SmallVector<BufferDesc, 2> scratch;
  const int64_t points = pl->batch * pl->M * pl->N;
  if (pl->split > 1) {
    params.push_back(
        MemRefType::get({pl->split, points}, accumulatorType(t.resultElementType(0))));
    scratch.push_back({"", BufferRole::Scratch, params.back()});
  }
  KernelBuilder kb(ctx.module, ctx.kernelName, params,
                   {workgroupBuffer(mctx, pl->BK * pl->lda, pl->eltA),
                    workgroupBuffer(mctx, pl->BK * pl->ldb, pl->eltB)},
                   {pl->threads, 1, 1}, t.op->getLoc());
  MatmulKernel kernel(*pl, kb);
  kernel.setUp();
  SmallVector<Value> accs = kernel.mainLoop();
  kernel.storeTile(accs);
  kernel.contractToFma();
  kb.finish();

  LoweredTask lowered = singleKernel(
      TaskFamily::Matmul, ctx,
      {ceilDiv(pl->N, pl->BN), ceilDiv(pl->M, pl->BM), pl->batch * pl->split},
      {pl->threads, 1, 1}, params.size());
  if (pl->split == 1)
    return lowered;
  lowered.scratch = scratch;
  KernelLaunch launch = lowered.launches.front();
  EmitContext combineCtx{ctx.module, ctx.kernelName + "_combine"};
  emitSplitCombine(*pl, combineCtx, params);
  launch.kernel = combineCtx.kernelName;
  launch.grid = {ceilDiv(points, 256), 1, 1};
  launch.block = {256, 1, 1};
  lowered.launches.push_back(launch);
  return lowered;
}

} // namespace evo
