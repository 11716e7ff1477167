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
  // A convolution as an implicit GEMM: output channels x (batch, output pixels), reduced over
  // (input channels, filter window). The filter is A, the image B: output pixels are
  // contiguous in the image and the result, so B's tile copies and C's stores coalesce.
  FailureOr<linalg::ConvolutionDimensions> c = linalg::inferConvolutionDims(op);
  if (linalg::isaContractionOpInterface(op) || failed(c) || !c->depth.empty() || c->outputChannel.size() != 1 ||
      c->inputChannel.empty() || c->outputImage.empty() ||
      llvm::any_of(c->strides, [](int64_t x) { return x != 1; }) ||
      llvm::any_of(c->dilations, [](int64_t x) { return x != 1; }))
    return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  unsigned filter = maps[0].isFunctionOfDim(c->outputChannel.front()) ? 0 : 1;
  if (!maps[filter].isFunctionOfDim(c->outputChannel.front()) ||
      maps[1 - filter].isFunctionOfDim(c->outputChannel.front()))
    return std::nullopt;
  v.a = filter;
  v.b = 1 - filter;
  v.m.assign(c->outputChannel.begin(), c->outputChannel.end());
  v.n.append(c->batch.begin(), c->batch.end());
  v.n.append(c->outputImage.begin(), c->outputImage.end());
  v.k.append(c->inputChannel.begin(), c->inputChannel.end());
  v.k.append(c->filterLoop.begin(), c->filterLoop.end());
  return v;
}

FailureOr<LoweredTask> emitTiledMatmul(const GenericTask &t, const ScheduleKnobs &k,
                                       EmitContext &ctx) {
  linalg::GenericOp op = t.op;
  std::optional<GemmView> view = gemmView(op);
  if (!view || t.outputs.size() != 1)
    return op.emitError("tile_sizes need a contraction with exactly one M, N and K dimension, "
                        "or a convolution with unit strides and dilations");
  if (!t.allCombinersKnown() || op.hasIndexSemantics())
    return op.emitError("tile_sizes need a payload of the form `yield add(f(a, b), out)`");
  const unsigned ia = view->a, ib = view->b;
  if (t.inputs[ia].kind != ValueSource::Kind::Buffer || t.inputs[ib].kind != ValueSource::Kind::Buffer)
    return op.emitError("tile_sizes need both operands in memory");
  auto sizesOf = [&](ArrayRef<unsigned> ds) {
    SmallVector<int64_t> out;
    for (unsigned d : ds)
      out.push_back(t.loopSizes[d]);
    return out;
  };
  const SmallVector<int64_t> mSizes = sizesOf(view->m), nSizes = sizesOf(view->n),
                             kSizes = sizesOf(view->k);
  auto product = [](ArrayRef<int64_t> xs) {
    int64_t p = 1;
    for (int64_t x : xs)
      p *= x;
    return p;
  };
  // The fastest-varying loop dimension of each GEMM index (vector accesses run along it).
  const unsigned nDim = view->n.back(), kDim = view->k.back();
  const int64_t M = product(mSizes), N = product(nSizes), K = product(kSizes);
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
  if (k.vectorWidth != 1 && k.vectorWidth != 4)
    return bad() << "vector_width=" << k.vectorWidth << " with tile_sizes must be 1 or 4";
  const bool vec = k.vectorWidth == 4;
  if (vec && (TM % 4 || TN % 4))
    return bad() << "vector_width=4 needs thread_tile entries that are multiples of 4";
  const int64_t lda = vec ? BM + 4 : BM; // A's tile in shared memory: BK rows of lda
  Type eltA = t.params[t.inputs[ia].buffer].getElementType();
  Type eltB = t.params[t.inputs[ib].buffer].getElementType();
  int64_t smemBytes = lda * BK * eltA.getIntOrFloatBitWidth() / 8 +
                      BK * BN * eltB.getIntOrFloatBitWidth() / 8;
  if (smemBytes > 48 * 1024)
    return bad() << "the tiles need " << smemBytes << " bytes of shared memory (limit 49152)";
  int64_t batch = 1;
  SmallVector<int64_t> batchSizes;
  for (unsigned d : view->batch) {
    batchSizes.push_back(t.loopSizes[d]);
    batch *= t.loopSizes[d];
  }
  if (batch > 65535)
    return bad() << "batch " << batch << " exceeds the grid's z limit";

  // The contraction's own result type (an epilogue may store another one).
  Type outElt = t.resultElementType(0);
  Type acc = accumulatorType(outElt);
  const Combiner &comb = t.combiners[0];
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  MLIRContext *mctx = op.getContext();
  KernelBuilder kb(ctx.module, ctx.kernelName, t.params,
                   {workgroupBuffer(mctx, BK * lda, eltA), workgroupBuffer(mctx, BK * BN, eltB)},
                   {threads, 1, 1}, op.getLoc());
  Location loc = op.getLoc();
  Value As = kb.workgroup(0), Bs = kb.workgroup(1);
  Value tid = kb.threadId();
  Value tCol = kb.rem(tid, tx), tRow = kb.div(tid, tx);
  // The tile rows and columns a thread owns (see the file comment).
  auto rowOf = [&](int64_t i) {
    return vec ? kb.add(kb.mul(tRow, 4), (i / 4) * 4 * ty + i % 4) : kb.add(tRow, i * ty);
  };
  auto colOf = [&](int64_t j) {
    return vec ? kb.add(kb.mul(tCol, 4), (j / 4) * 4 * tx + j % 4) : kb.add(tCol, j * tx);
  };
  // Four consecutive shared-memory elements from `base`, one 128-bit (or 64-bit) load.
  auto load4 = [&](Value buffer, Type elt, Value base) {
    auto v = vector::LoadOp::create(kb.b, VectorType::get({4}, elt), buffer, ValueRange{base});
    if (int64_t align = vectorAlignment(elt, 4))
      v.setAlignment(align);
    SmallVector<Value> out;
    for (int64_t l = 0; l < 4; ++l)
      out.push_back(vector::ExtractOp::create(kb.b, v, l));
    return out;
  };
  Value m0 = kb.mul(kb.blockId(gpu::Dimension::y), BM);
  Value n0 = kb.mul(kb.blockId(gpu::Dimension::x), BN);
  SmallVector<Value> batchIdx = kb.delinearize(kb.blockId(gpu::Dimension::z), batchSizes);
  // Loop indices of GEMM point (m, n, k): each GEMM index split over its loop dimensions (the
  // last fastest; one dimension each for a plain contraction).
  auto indices = [&](Value m, Value n, Value kk) {
    SmallVector<Value> ivs(t.loopSizes.size());
    for (auto [i, d] : llvm::enumerate(view->batch))
      ivs[d] = batchIdx[i];
    auto place = [&](ArrayRef<unsigned> ds, ArrayRef<int64_t> sizes, Value linear) {
      SmallVector<Value> parts =
          ds.size() == 1 ? SmallVector<Value>{linear} : kb.delinearize(linear, sizes);
      for (auto [d, v] : llvm::zip(ds, parts))
        ivs[d] = v;
    };
    place(view->m, mSizes, m);
    place(view->n, nSizes, n);
    place(view->k, kSizes, kk);
    return ivs;
  };
  Value zeroIdx = kb.idx(0);
  // Copies of a tile are coalesced along the dimension contiguous in global memory.
  auto contiguousIn = [&](AffineMap map, unsigned dim) {
    return accessAlong(map, dim) == Access::Contiguous;
  };
  // A is read along K where K's fastest dimension is contiguous in it; B along N where N's is
  // (a convolution's image is contiguous along both output and filter columns: N wins, as
  // consecutive K there jump rows after a filter width).
  const bool aKFastest = contiguousIn(maps[ia], kDim);
  const bool bNFastest = contiguousIn(maps[ib], nDim) || !contiguousIn(maps[ib], kDim);

  SmallVector<Value> init;
  for (int64_t i = 0; i < TM * TN; ++i)
    init.push_back(combinerIdentity(kb.b, loc, comb.op, acc));
  Value unusedOut = kb.constant(cast<TypedAttr>(kb.b.getZeroAttr(outElt)));

  // Global -> shared copies of one K tile, in two halves so that the next tile can be read
  // into registers while the current one is computed on (prefetch): `fetch` loads, `stash`
  // stores. A run of 4 elements contiguous in global memory is one 128-bit load (vector
  // schedule, when the threads share the runs evenly); A's tile is stored transposed.
  struct Piece {
    Value row, col; // A: (mm, kk); B: (kk, nn), the first of the piece's elements
    SmallVector<Value> values;
  };
  struct Fetched {
    SmallVector<Piece> a, b;
  };
  // 128-bit loads only where a GEMM index is one loop dimension: a run of 4 along a split one
  // can leave its dimension (a filter row of 3) or its alignment (image columns at ow + kw).
  const bool vecA = vec && aKFastest && view->k.size() == 1 && BK % 4 == 0 &&
                    (BM * BK / 4) % threads == 0;
  const bool vecB = vec && bNFastest && view->n.size() == 1 && (BK * BN / 4) % threads == 0;
  auto fetch = [&](Value k0) {
    Fetched f;
    const int64_t pa = vecA ? 4 : 1, pb = vecB ? 4 : 1;
    for (int64_t l = 0; l < BM * BK / pa / threads; ++l) {
      Value e = kb.add(tid, l * threads);
      Value mm = vecA ? kb.div(e, BK / 4) : aKFastest ? kb.div(e, BK) : kb.rem(e, BM);
      Value kk = vecA ? kb.mul(kb.rem(e, BK / 4), 4) : aKFastest ? kb.rem(e, BK) : kb.div(e, BM);
      f.a.push_back({mm, kk,
                     loadLanes(kb, t.inputs[ia], maps[ia], eltA,
                               indices(kb.add(m0, mm), zeroIdx, kb.add(k0, kk)), kDim, pa)});
    }
    for (int64_t l = 0; l < BK * BN / pb / threads; ++l) {
      Value e = kb.add(tid, l * threads);
      Value nn = vecB ? kb.mul(kb.rem(e, BN / 4), 4) : bNFastest ? kb.rem(e, BN) : kb.div(e, BK);
      Value kk = vecB ? kb.div(e, BN / 4) : bNFastest ? kb.div(e, BN) : kb.rem(e, BK);
      f.b.push_back({kk, nn,
                     loadLanes(kb, t.inputs[ib], maps[ib], eltB,
                               indices(zeroIdx, kb.add(n0, nn), kb.add(k0, kk)), nDim, pb)});
    }
    return f;
  };
  auto stash = [&](const Fetched &f) {
    for (const Piece &p : f.a)
      for (auto [q, v] : llvm::enumerate(p.values))
        memref::StoreOp::create(kb.b, v, As,
                                ValueRange{kb.add(kb.mul(kb.add(p.col, q), lda), p.row)});
    for (const Piece &p : f.b) {
      Value at = kb.add(kb.mul(p.row, BN), p.col);
      if (p.values.size() == 1) {
        memref::StoreOp::create(kb.b, p.values.front(), Bs, ValueRange{at});
        continue;
      }
      auto v = vector::FromElementsOp::create(
          kb.b, VectorType::get({int64_t(p.values.size())}, eltB), p.values);
      auto st = vector::StoreOp::create(kb.b, v, Bs, ValueRange{at});
      if (int64_t align = vectorAlignment(eltB, p.values.size()))
        st.setAlignment(align);
    }
  };

  // One K tile from shared memory into the accumulators.
  auto step = [&](Value kk, ValueRange a) {
    SmallVector<Value> as, bs;
    Value aRow = kb.mul(kk, lda), bRow = kb.mul(kk, BN);
    if (vec) {
      for (int64_t i = 0; i < TM; i += 4)
        llvm::append_range(as, load4(As, eltA, kb.add(aRow, rowOf(i))));
      for (int64_t j = 0; j < TN; j += 4)
        llvm::append_range(bs, load4(Bs, eltB, kb.add(bRow, colOf(j))));
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
        args[ia] = as[i];
        args[ib] = bs[j];
        clonePayload(kb.b, op, args, {}, {comb.op}, map);
        Value x = castTo(kb.b, loc, map.lookupOrDefault(comb.op->getOperand(comb.valueOperand)),
                         acc);
        out.push_back(combine(kb.b, loc, comb.op, a[i * TN + j], x));
      }
    return out;
  };
  auto computeTile = [&](ValueRange cur) {
    // The vector schedule unrolls the K step here (BK <= 32: at most 32 x TM*TN FMAs), so the
    // shared-memory offsets are constants and no loop counter competes with the FMAs.
    if (vec && BK <= 32) {
      SmallVector<Value> next(cur.begin(), cur.end());
      for (int64_t kk = 0; kk < BK; ++kk)
        next = step(kb.idx(kk), next);
      return next;
    }
    return kb.forLoop(zeroIdx, kb.idx(BK), 1, cur, step);
  };

  SmallVector<Value> accs;
  if (!k.prefetch) {
    accs = kb.forLoop(zeroIdx, kb.idx(K), BK, init, [&](Value k0, ValueRange cur) {
      stash(fetch(k0));
      gpu::BarrierOp::create(kb.b);
      SmallVector<Value> next = computeTile(cur);
      gpu::BarrierOp::create(kb.b);
      return next;
    });
  } else {
    // Tile 0 first; then each iteration reads tile k0 while computing tile k0 - BK.
    stash(fetch(zeroIdx));
    gpu::BarrierOp::create(kb.b);
    SmallVector<Value> last = kb.forLoop(kb.idx(BK), kb.idx(K), BK, init, [&](Value k0, ValueRange cur) {
      Fetched next = fetch(k0);
      SmallVector<Value> out = computeTile(cur);
      gpu::BarrierOp::create(kb.b);
      stash(next);
      gpu::BarrierOp::create(kb.b);
      return out;
    });
    accs = computeTile(last);
  }

  // C: `lanes` consecutive columns at a time (one vector access where C is contiguous along N).
  AffineMap outMap = maps[2];
  // (C's fastest N dimension must hold whole groups of 4 for the 16-byte aligned store.)
  const int64_t lanes = vec && t.loopSizes[nDim] % 4 == 0 ? 4 : 1;
  for (int64_t i = 0; i < TM; ++i)
    for (int64_t j = 0; j < TN; j += lanes) {
      SmallVector<Value> ivs = indices(kb.add(m0, rowOf(i)), kb.add(n0, colOf(j)), zeroIdx);
      SmallVector<Value> results(accs.begin() + i * TN + j, accs.begin() + i * TN + j + lanes);
      if (t.inits[0].kind != ValueSource::Kind::None) {
        SmallVector<Value> init0 = loadLanes(kb, t.inits[0], outMap, outElt, ivs, nDim, lanes);
        for (int64_t l = 0; l < lanes; ++l)
          results[l] = combine(kb.b, loc, comb.op, castTo(kb.b, loc, init0[l], acc), results[l]);
      }
      // Cast and stored, through the epilogue (in f32 for f16/bf16) where the task has one.
      storeOutput(kb, t, 0, ivs, nDim, results, /*wide=*/true);
    }
  // Multiply and add contract to FMA (one rounding, as cuBLAS does): without it NVPTX emits
  // mul.rn + add.rn, twice the instructions of the inner loop.
  kb.kernel.walk([](arith::ArithFastMathInterface op) {
    auto flags = arith::FastMathFlagsAttr::get(op->getContext(), op.getFastMathFlagsAttr()
                                                                     ? op.getFastMathFlagsAttr().getValue() |
                                                                           arith::FastMathFlags::contract
                                                                     : arith::FastMathFlags::contract);
    op->setAttr(op.getFastMathAttrName(), flags);
  });
  kb.finish();

  return singleKernel(TaskFamily::Matmul, ctx, {N / BN, M / BM, batch}, {threads, 1, 1}, t.params.size());
}

} // namespace evo
