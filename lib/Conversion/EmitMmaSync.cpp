//===- EmitMmaSync.cpp - f16/bf16 matmuls on tensor cores with mma.sync (sm_80+) ----===//
//
// The portable tensor-core schedule: what Ampere and later chips (sm_80, sm_86, sm_89, sm_90
// without the `a` features, sm_100, sm_120) run f16/bf16 GEMMs with. Block (pid, 0, bz)
// computes a BM x BN tile of C for batch bz with one warp per 64 x 64 piece of it (WM x WN
// when a tile side is 32).
//
//  * Global -> shared: every thread copies 16-byte chunks of the next K tile of A (BM x BK)
//    and B (BK x BN or BN x BK) with cp.async into a ring of `stages` buffers, one commit group
//    per K tile; chunks past M, N or K are zero-filled (src-size 0), so no shape needs to be a
//    multiple of the tile. Iteration kt waits for tile kt's group (wait_group stages - 2), one
//    barrier, then issues tile kt + stages - 1 into the buffer read in iteration kt - 1.
//  * Shared -> registers: ldmatrix.x4 per 16 x 16 piece of A and per 16 x 16 piece of B (with
//    .trans where B is N-contiguous), then mma.sync.m16n8k16 with f32 accumulators.
//  * Shared rows are swizzled by 16-byte chunk: chunk c of row r is stored at c ^ (r mod 8)
//    (rows of >= 128 bytes) or c ^ ((r / 2) mod 4) (64-byte rows), so the 8 rows one ldmatrix
//    matrix reads hit 8 different bank groups.
//  * Tiles are visited in groups of 8 rows of tiles (groupedTile), as the wgmma schedule does.
//  * The epilogue stores each accumulator pair through the task's epilogue (storeAccumulatorPair).
//
// Fragment layouts (PTX ISA, "Matrix Fragments for mma.m16n8k16"): lane l, g = l / 4, t = l % 4;
// A: a0 (row g, k 2t..2t+1), a1 (row g+8), a2 (k +8), a3 (row g+8, k +8); B: b0 (k 2t..2t+1,
// col g), b1 (k +8); C: c0 c1 (row g, cols 2t, 2t+1), c2 c3 (row g+8).
//
//===----------------------------------------------------------------------===//

#include "TensorCore.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;

namespace evo {

namespace {

/// An mma.sync matmul's shapes, checked against the knobs.
struct MmaPlan : TensorCoreGemm {
  int64_t BM = 0, BN = 0, BK = 0, S = 0;
  int64_t WM = 0, WN = 0; // the warp tile

  int64_t warpsM() const { return BM / WM; }
  int64_t warpsN() const { return BN / WN; }
  int64_t threads() const { return 32 * warpsM() * warpsN(); }
  int64_t tilesM() const { return ceilDiv(M, BM); }
  int64_t tilesN() const { return ceilDiv(N, BN); }
  int64_t kTiles() const { return ceilDiv(K, BK); }
  /// Bytes of one row of A's tile, B's tile (BK elements K-major, BN N-major).
  int64_t rowBytesA() const { return BK * 2; }
  int64_t rowBytesB() const { return (bKMajor ? BK : BN) * 2; }
  int64_t bytesA() const { return BM * BK * 2; }
  int64_t stageBytes() const { return (BM + BN) * BK * 2; }
  /// Dynamic shared memory: the stages and 128 bytes of slack for the alignment.
  int64_t smem() const { return S * stageBytes() + 128; }
};

FailureOr<MmaPlan> planMmaSync(const GenericTask &t, const ScheduleKnobs &k) {
  linalg::GenericOp op = t.op;
  MmaPlan pl;
  pl.BM = k.tileSizes[0];
  pl.BN = k.tileSizes[1];
  pl.BK = k.tileSizes[2];
  pl.S = k.stages;
  auto bad = [&]() {
    return op.emitError() << "mma_sync with tile_sizes=" << pl.BM << "," << pl.BN << "," << pl.BK
                          << ": ";
  };
  if (k.split != 1)
    return bad() << "split=" << k.split << ": split-K is a tiled SIMT schedule (mma_sync=0)";
  std::optional<GemmView> view = gemmView(op);
  if (!linalg::isaContractionOpInterface(op) || !view || view->m.size() != 1 ||
      view->n.size() != 1 || view->k.size() != 1 || view->batch.size() > 1)
    return bad() << "needs a contraction with one M, N and K dimension and at most one batch "
                    "dimension (convolutions: wgmma on sm_90a, or the SIMT schedule)";
  if (failed(matchTensorCoreOperands(t, view->a, view->b, pl, bad)))
    return failure();
  if (pl.eltA != pl.eltB || !(pl.eltA.isF16() || pl.eltA.isBF16()))
    return bad() << "needs f16 or bf16 operands of one type, got " << pl.eltA << " and "
                 << pl.eltB;
  if (failed(matchTensorCoreLayout(t, *view, pl, bad)))
    return failure();
  auto oneOf = [](int64_t v, std::initializer_list<int64_t> set) {
    return llvm::is_contained(set, v);
  };
  if (!oneOf(pl.BM, {32, 64, 128, 256}) || !oneOf(pl.BN, {32, 64, 128, 256}))
    return bad() << "the M and N tiles must be 32, 64, 128 or 256";
  if (!oneOf(pl.BK, {32, 64}))
    return bad() << "the K tile must be 32 or 64";
  pl.WM = std::min<int64_t>(pl.BM, 64);
  pl.WN = std::min<int64_t>(pl.BN, 64);
  if (pl.warpsM() * pl.warpsN() > 8)
    return bad() << "needs " << pl.warpsM() * pl.warpsN()
                 << " warps of 64 x 64 (at most 8: their accumulators fill the register file)";
  if (pl.smem() > 232448)
    return bad() << "stages=" << pl.S << " needs " << pl.smem()
                 << " bytes of shared memory (limit 232448)";
  // cp.async copies 16-byte chunks: rows of whole chunks.
  if (pl.K % 8 || (!pl.bKMajor && pl.N % 8))
    return bad() << "cp.async needs rows of a multiple of 16 bytes (K" << (pl.bKMajor ? "" : " and N")
                 << " a multiple of 8), got M=" << pl.M << " N=" << pl.N << " K=" << pl.K;
  if (pl.tilesM() * pl.tilesN() > (int64_t(1) << 31) - 1 || pl.B > 65535)
    return bad() << "the grid of " << pl.tilesM() * pl.tilesN() << " x " << pl.B
                 << " tiles exceeds the launch limits";
  return pl;
}

class MmaSyncKernel {
public:
  MmaSyncKernel(const MmaPlan &pl, KernelBuilder &kb) : pl(pl), kb(kb), b(kb.b), p(kb.b) {}
  void build();

private:
  /// The chunk where logical chunk `c` (an i64) of a row whose swizzle key is `key` is stored.
  Value swizzle(Value c, Value key) { return arith::XOrIOp::create(b, c, key); }
  /// The swizzle key of row `r` (an i64) of a tile with `chunks` chunks per row.
  Value swizzleKey(Value r, int64_t chunks) {
    if (chunks >= 8)
      return arith::AndIOp::create(b, r, p.c64(7));
    return arith::AndIOp::create(b, arith::ShRUIOp::create(b, r, p.c64(1)), p.c64(3));
  }
  Value i64(Value index) { return p.to64(index); }
  Value ult(Value a, Value c) {
    return arith::CmpIOp::create(b, arith::CmpIPredicate::ult, a, c);
  }
  /// Issues the cp.async copies of K tile `kt` (an i64) into stage `stage` (an i64).
  void loadTile(Value stage, Value kt);
  /// The copies of one operand's tile: `rows` x `chunks` chunks; chunk (r, c) comes from
  /// global element offset base + r * rowStride + 8 * c + kt * ktStride (all i64, in elements)
  /// and is valid while row `rowLimit[r]` and column 8 c + kt * ktStride stay below their sizes.
  void copyTile(Value stageAddr, int64_t rows, int64_t chunks, int64_t rowBytes, Value global,
                Value baseOffset, int64_t rowStride, Value rowStart, int64_t rowSize,
                Value colStart, int64_t colSize);
  /// ldmatrix and mma.sync over the BK of stage `stage`.
  void compute(Value stage, SmallVector<Value> &acc);
  void store(ArrayRef<Value> acc);

  const MmaPlan &pl;
  KernelBuilder &kb;
  ImplicitLocOpBuilder &b;
  Ptx p;
  Value tid, lane, warpM, warpN, base, m0, n0, bz, gA, gB;
};

void MmaSyncKernel::copyTile(Value stageAddr, int64_t rows, int64_t chunks, int64_t rowBytes,
                             Value global, Value baseOffset, int64_t rowStride, Value rowStart,
                             int64_t rowSize, Value colStart, int64_t colSize) {
  const int64_t total = rows * chunks, threads = pl.threads();
  auto gptr = LLVM::LLVMPointerType::get(b.getContext(), 1);
  Value tid64 = i64(tid);
  for (int64_t i = 0; i < ceilDiv(total, threads); ++i) {
    auto copy = [&] {
      Value chunk = p.add(tid64, i * threads);
      Value r = arith::DivUIOp::create(b, chunk, p.c64(chunks));
      Value c = arith::RemUIOp::create(b, chunk, p.c64(chunks));
      Value row = p.add(rowStart, r), col = p.add(colStart, p.mul(c, 8));
      Value valid = arith::AndIOp::create(b, ult(row, p.c64(rowSize)), ult(col, p.c64(colSize)));
      Value offset = p.add(p.add(baseOffset, p.mul(row, rowStride)), col);
      // A zero-filled chunk reads nothing; its address stays inside the buffer anyway.
      offset = arith::SelectOp::create(b, valid, offset, p.c64(0));
      Value src = LLVM::IntToPtrOp::create(b, gptr, p.add(global, p.mul(offset, 2)));
      Value dst = p.add(p.add(stageAddr, p.mul(r, rowBytes)),
                        p.mul(swizzle(c, swizzleKey(r, chunks)), 16));
      Value bytes = arith::SelectOp::create(b, valid, p.c32(16), p.c32(0));
      NVVM::CpAsyncOp::create(b, p.shared(dst), src, 16, NVVM::LoadCacheModifierKind::CG, bytes);
    };
    if ((i + 1) * threads <= total)
      copy();
    else
      kb.ifThen(arith::CmpIOp::create(b, arith::CmpIPredicate::ult, tid,
                                      kb.idx(total - i * threads)),
                copy);
  }
}

void MmaSyncKernel::loadTile(Value stage, Value kt) {
  Value stageA = p.add(base, p.mul(stage, pl.stageBytes()));
  Value stageB = p.add(stageA, pl.bytesA());
  Value k0 = p.mul(kt, pl.BK);
  Value bzM = p.mul(i64(bz), pl.M * pl.K), bzN = p.mul(i64(bz), pl.N * pl.K);
  // A: BM rows of BK (K contiguous).
  copyTile(stageA, pl.BM, pl.BK / 8, pl.rowBytesA(), gA, bzM, pl.K, i64(m0), pl.M, k0, pl.K);
  if (pl.bKMajor) // B[n][k]: BN rows of BK.
    copyTile(stageB, pl.BN, pl.BK / 8, pl.rowBytesB(), gB, bzN, pl.K, i64(n0), pl.N, k0, pl.K);
  else // B[k][n]: BK rows of BN.
    copyTile(stageB, pl.BK, pl.BN / 8, pl.rowBytesB(), gB, bzN, pl.N, k0, pl.K, i64(n0), pl.N);
}

void MmaSyncKernel::compute(Value stage, SmallVector<Value> &acc) {
  MLIRContext *mctx = b.getContext();
  const int64_t MT = pl.WM / 16, NT = pl.WN / 8;
  Value stageA = p.add(base, p.mul(stage, pl.stageBytes()));
  Value stageB = p.add(stageA, pl.bytesA());
  Value l = i64(lane);
  Value lo = arith::AndIOp::create(b, l, p.c64(7));                                 // l % 8
  Value mid = arith::AndIOp::create(b, arith::ShRUIOp::create(b, l, p.c64(3)), p.c64(1)); // (l/8)%2
  Value hi = arith::ShRUIOp::create(b, l, p.c64(4));                                 // l / 16
  // Rows that differ by multiples of 8 share a swizzle key, so every lane's key is that of its
  // row within the 8 x 8 matrix it addresses: l % 8.
  auto i32x4 = LLVM::LLVMStructType::getLiteral(mctx, SmallVector<Type>(4, p.i32));
  auto ldmatrix = [&](Value addr, bool trans) {
    Value r = NVVM::LdMatrixOp::create(
        b, i32x4, p.shared(addr), 4, trans ? NVVM::MMALayout::col : NVVM::MMALayout::row,
        NVVM::LdStMatrixShapeAttr::get(mctx, 8, 8), NVVM::LdStMatrixEltType::B16);
    SmallVector<Value> regs;
    for (int64_t i = 0; i < 4; ++i)
      regs.push_back(LLVM::ExtractValueOp::create(b, r, i));
    return regs;
  };
  const bool f16 = pl.eltA.isF16();
  auto operand = [&](Value reg) -> Value {
    // f16 fragments are <2 x f16>, bf16 ones i32 (nvvm.mma.sync's operand types).
    return f16 ? Value(LLVM::BitcastOp::create(b, VectorType::get({2}, b.getF16Type()), reg))
               : reg;
  };
  const int64_t chunksA = pl.BK / 8, chunksB = pl.rowBytesB() / 16;
  Value keyA = chunksA >= 8 ? lo : arith::ShRUIOp::create(b, lo, p.c64(1));
  Value keyB = chunksB >= 8 ? lo : arith::ShRUIOp::create(b, lo, p.c64(1));
  // This lane's row of A's 16 x 16 pieces: warp row + (l % 8) + 8 ((l / 8) % 2).
  Value rowA = p.add(p.mul(i64(warpM), pl.WM), p.add(lo, p.mul(mid, 8)));
  Value rowAAddr = p.add(stageA, p.mul(rowA, pl.rowBytesA()));
  auto resType = LLVM::LLVMStructType::getLiteral(mctx, SmallVector<Type>(4, b.getF32Type()));
  auto mmaType = f16 ? NVVM::MMATypes::f16 : NVVM::MMATypes::bf16;
  for (int64_t kk = 0; kk < pl.BK / 16; ++kk) {
    SmallVector<SmallVector<Value>> a(MT), bf(NT);
    Value chunkA = p.mul(swizzle(p.add(hi, 2 * kk), keyA), 16);
    for (int64_t mt = 0; mt < MT; ++mt) {
      SmallVector<Value> regs =
          ldmatrix(p.add(p.add(rowAAddr, mt * 16 * pl.rowBytesA()), chunkA), false);
      for (Value r : regs)
        a[mt].push_back(operand(r));
    }
    for (int64_t np = 0; np < NT / 2; ++np) {
      SmallVector<Value> regs;
      if (pl.bKMajor) {
        // Rows n: warp column + 16 np + (l % 8) + 8 (l / 16); chunk 2 kk + (l / 8) % 2.
        Value row = p.add(p.mul(i64(warpN), pl.WN), p.add(lo, p.mul(hi, 8)));
        Value addr = p.add(p.add(stageB, p.mul(row, pl.rowBytesB())), np * 16 * pl.rowBytesB());
        regs = ldmatrix(p.add(addr, p.mul(swizzle(p.add(mid, 2 * kk), keyB), 16)), false);
      } else {
        // Rows k: 16 kk + (l % 8) + 8 ((l / 8) % 2); chunk (warp column + 16 np) / 8 + l / 16.
        Value row = p.add(lo, p.mul(mid, 8));
        Value addr = p.add(stageB, p.mul(row, pl.rowBytesB()));
        addr = p.add(addr, kk * 16 * pl.rowBytesB());
        Value chunk = p.add(p.add(p.mul(i64(warpN), pl.WN / 8), hi), 2 * np);
        regs = ldmatrix(p.add(addr, p.mul(swizzle(chunk, keyB), 16)), true);
      }
      // Matrices 0 and 1 are b0 and b1 of column tile 2 np, matrices 2 and 3 of 2 np + 1.
      bf[2 * np] = {operand(regs[0]), operand(regs[1])};
      bf[2 * np + 1] = {operand(regs[2]), operand(regs[3])};
    }
    for (int64_t mt = 0; mt < MT; ++mt)
      for (int64_t nt = 0; nt < NT; ++nt) {
        Value *c = &acc[(mt * NT + nt) * 4];
        Value d = NVVM::MmaOp::create(
            b, resType, a[mt], bf[nt], ValueRange(ArrayRef<Value>(c, 4)), {16, 8, 16},
            std::nullopt, std::nullopt, std::array<NVVM::MMATypes, 2>{mmaType, mmaType},
            std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row, NVVM::MMALayout::col});
        for (int64_t i = 0; i < 4; ++i)
          c[i] = LLVM::ExtractValueOp::create(b, d, i);
      }
  }
}

void MmaSyncKernel::store(ArrayRef<Value> acc) {
  const int64_t MT = pl.WM / 16, NT = pl.WN / 8;
  const GenericTask &t = *pl.t;
  Value g = kb.div(lane, 4), tq = kb.rem(lane, 4);
  Value rowBase = kb.add(kb.add(m0, kb.mul(warpM, pl.WM)), g);
  Value colBase = kb.add(kb.add(n0, kb.mul(warpN, pl.WN)), kb.mul(tq, 2));
  const bool rowsFull = pl.M % pl.BM == 0, colsFull = pl.N % pl.BN == 0;
  for (int64_t mt = 0; mt < MT; ++mt)
    for (int64_t h = 0; h < 2; ++h) {
      SmallVector<Value> ivs(t.loopSizes.size(), kb.idx(0));
      if (!pl.batch.empty())
        ivs[pl.batch[0]] = bz;
      ivs[pl.mD] = kb.add(rowBase, mt * 16 + 8 * h);
      auto row = [&] {
        for (int64_t nt = 0; nt < NT; ++nt) {
          const Value *c = &acc[(mt * NT + nt) * 4 + 2 * h];
          storeAccumulatorPair(kb, pl, ivs, kb.add(colBase, nt * 8), c[0], c[1], colsFull);
        }
      };
      if (rowsFull)
        row();
      else
        kb.ifThen(kb.lt(ivs[pl.mD], pl.M), row);
    }
}

void MmaSyncKernel::build() {
  tid = kb.threadId();
  lane = kb.rem(tid, 32);
  Value warp = kb.div(tid, 32);
  warpM = kb.div(warp, pl.warpsN());
  warpN = kb.rem(warp, pl.warpsN());
  bz = kb.blockId(gpu::Dimension::z);
  auto [mTile, nTile] = groupedTile(kb, kb.blockId(gpu::Dimension::x), pl.tilesM(), pl.tilesN());
  m0 = kb.mul(mTile, pl.BM);
  n0 = kb.mul(nTile, pl.BN);
  base = p.dynamicSharedBase(128);
  gA = p.address(kb.param(pl.pa));
  gB = p.address(kb.param(pl.pb));

  const int64_t S = pl.S, kTiles = pl.kTiles();
  // The first stages - 1 K tiles, one commit group each (empty past the last tile, so that the
  // group count stays in step).
  for (int64_t s = 0; s < S - 1; ++s) {
    if (s < kTiles)
      loadTile(p.c64(s), p.c64(s));
    NVVM::CpAsyncCommitGroupOp::create(b);
  }
  SmallVector<Value> init(pl.WM / 16 * (pl.WN / 8) * 4,
                          arith::ConstantOp::create(b, b.getF32FloatAttr(0.0f)));
  SmallVector<Value> acc = kb.forLoop(
      kb.idx(0), kb.idx(kTiles), 1, init, [&](Value kt, ValueRange cur) -> SmallVector<Value> {
        // Tile kt has landed once at most stages - 2 younger groups are in flight; the barrier
        // also says every warp is done with the buffer the next copy overwrites (read in
        // iteration kt - 1).
        NVVM::CpAsyncWaitGroupOp::create(b, S - 2);
        gpu::BarrierOp::create(b);
        Value next = kb.add(kt, S - 1);
        kb.ifThen(kb.lt(next, kTiles), [&] {
          Value n64 = i64(next);
          loadTile(arith::RemUIOp::create(b, n64, p.c64(S)), n64);
        });
        NVVM::CpAsyncCommitGroupOp::create(b);
        SmallVector<Value> values(cur.begin(), cur.end());
        compute(arith::RemUIOp::create(b, i64(kt), p.c64(S)), values);
        return values;
      });
  NVVM::CpAsyncWaitGroupOp::create(b, 0);
  store(acc);
}

} // namespace

FailureOr<LoweredTask> emitMmaSyncMatmul(const GenericTask &t, const ScheduleKnobs &k,
                                         EmitContext &ctx) {
  FailureOr<MmaPlan> pl = planMmaSync(t, k);
  if (failed(pl))
    return failure();
  SmallVector<MemRefType> params(t.params.begin(), t.params.end());
  KernelBuilder kb(ctx.module, ctx.kernelName, params, {}, {pl->threads(), 1, 1},
                   t.op->getLoc());
  MmaSyncKernel(*pl, kb).build();
  kb.finish();
  LoweredTask lowered = singleKernel(TaskFamily::Matmul, ctx,
                                     {pl->tilesM() * pl->tilesN(), 1, pl->B},
                                     {pl->threads(), 1, 1}, params.size());
  lowered.launches.front().dynamicSharedMemory = pl->smem();
  return lowered;
}

} // namespace evo
