//===- EmitMmaGemv.cpp - few-row f16/bf16 contractions on tensor cores -----===//
//
// nn.Linear at a small batch (y = x W^T, x M x K with M <= 16, W N x K): every element of W
// serves M outputs, so the SIMT GEMVs pay M FMAs (and conversions) per element of W read and
// the tiled schedules stage W through shared memory. Here mma.sync.m16n8k16 takes W as its A
// operand (16 rows of W per warp) and x as its B operand (8 rows of x per n8 tile), loaded
// straight from global memory into the fragments, so the kernel is one stream of 16-byte loads
// of W (streamed past L1) and the tensor cores do the arithmetic. Selected by mma_sync with
// tile_sizes = [8 or 16, 16, BK] (emitMmaSyncMatmul).
//
//  * The K order inside each 32-element chunk is permuted so that every lane loads 16
//    contiguous bytes: lane (g = l / 4, t = l % 4) loads elements 8t..8t+7 of the chunk of
//    W's rows g and g + 8 and of x's row g. For the chunk's two k16 steps s, logical k
//    2t, 2t + 1 is physical 8t + 4s + 0, 1, and 2t + 8, 2t + 9 is 8t + 4s + 2, 3; A and B take
//    the same permutation, so the products pair the same elements of K.
//  * A block is 4 warps on the same 16 rows of W (tile_sizes[1] = 16): warp w takes the chunks
//    of BK = tile_sizes[2] elements w, w + 4, ... (BK / 32 chunks per lane in flight), and the
//    4 partial fragments are added in shared memory by warp 0, which stores them through the
//    task's epilogue. tile_sizes[0] (8 or 16) is the rows of x a block covers (one or two n8
//    tiles); the grid is (ceil(N / 16), ceil(M / BM), batch).
//  * Rows past N or M and chunks past K load zeros (from a clamped, in-bounds address).
//
//===----------------------------------------------------------------------===//

#include "TensorCore.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace evo {

namespace {

constexpr int64_t kWarps = 4;

struct GemvPlan : TensorCoreGemm {
  int64_t BM = 0, BK = 0;
  unsigned ia = 0, ib = 0; // the inputs of A (x) and B (W)
  bool stream = true;
  int64_t nTiles() const { return ceilDiv(N, 16); }
  int64_t mTiles() const { return ceilDiv(M, BM); }
  /// Floats of accumulators per lane: 4 per n8 tile.
  int64_t accs() const { return BM / 8 * 4; }
  int64_t smem() const { return kWarps * 32 * accs() * 4 + 16; }
};

class GemvKernel {
public:
  GemvKernel(const GemvPlan &pl, KernelBuilder &kb) : pl(pl), kb(kb), b(kb.b), p(kb.b) {}
  void build();

private:
  /// The 16 bytes of row `row` (a loop index of dimension `rowDim`, of `rows`) of input `in`
  /// at elements k .. k + 7, as 4 i32 words; zeros where the row or k is out of range.
  SmallVector<Value> loadChunk(unsigned in, unsigned rowDim, Value row, int64_t rows, Value k,
                               bool streaming);
  void mmaChunk(Value k, SmallVector<Value> &acc);
  void reduceAndStore(ArrayRef<Value> acc);

  const GemvPlan &pl;
  KernelBuilder &kb;
  ImplicitLocOpBuilder &b;
  Ptx p;
  Value lane, g, tq, warp, n0, m0, bz;
};

SmallVector<Value> GemvKernel::loadChunk(unsigned in, unsigned rowDim, Value row, int64_t rows,
                                         Value k, bool streaming) {
  const GenericTask &t = *pl.t;
  Value valid = arith::AndIOp::create(b, kb.lt(row, rows), kb.lt(k, pl.K));
  SmallVector<Value> ivs(t.loopSizes.size(), kb.idx(0));
  if (!pl.batch.empty())
    ivs[pl.batch[0]] = bz;
  ivs[rowDim] = arith::MinUIOp::create(b, row, kb.idx(rows - 1));
  ivs[pl.kD] = arith::MinUIOp::create(b, k, kb.idx(pl.K - 8));
  AffineMap map = linalg::GenericOp(t.op).getIndexingMapsArray()[in];
  Type elt = in == pl.ia ? pl.eltA : pl.eltB;
  auto load = vector::LoadOp::create(b, VectorType::get({8}, elt), kb.param(t.inputs[in].buffer),
                                     kb.applyMap(map, ivs), streaming);
  load.setAlignment(16);
  auto v4 = VectorType::get({4}, b.getI32Type());
  Value words = vector::BitCastOp::create(b, v4, load);
  Value zero = arith::ConstantOp::create(b, DenseElementsAttr::get(v4, APInt(32, 0)));
  words = arith::SelectOp::create(b, valid, words, zero);
  SmallVector<Value> out;
  for (int64_t i = 0; i < 4; ++i)
    out.push_back(vector::ExtractOp::create(b, words, i));
  return out;
}

void GemvKernel::mmaChunk(Value k, SmallVector<Value> &acc) {
  MLIRContext *mctx = b.getContext();
  const bool f16 = pl.eltA.isF16();
  auto operand = [&](Value reg) -> Value {
    // f16 fragments are <2 x f16>, bf16 ones i32 (nvvm.mma.sync's operand types).
    return f16 ? Value(LLVM::BitcastOp::create(b, VectorType::get({2}, b.getF16Type()), reg))
               : reg;
  };
  Value kl = kb.add(k, kb.mul(tq, 8));
  SmallVector<Value> w0 = loadChunk(pl.ib, pl.nD, kb.add(n0, g), pl.N, kl, pl.stream);
  SmallVector<Value> w1 = loadChunk(pl.ib, pl.nD, kb.add(n0, kb.add(g, 8)), pl.N, kl, pl.stream);
  SmallVector<SmallVector<Value>> x;
  for (int64_t j = 0; j < pl.BM / 8; ++j)
    x.push_back(loadChunk(pl.ia, pl.mD, kb.add(m0, kb.add(g, 8 * j)), pl.M, kl, false));
  auto resType = LLVM::LLVMStructType::getLiteral(mctx, SmallVector<Type>(4, b.getF32Type()));
  auto mmaType = f16 ? NVVM::MMATypes::f16 : NVVM::MMATypes::bf16;
  for (int64_t s = 0; s < 2; ++s) {
    SmallVector<Value> a = {operand(w0[2 * s]), operand(w1[2 * s]), operand(w0[2 * s + 1]),
                            operand(w1[2 * s + 1])};
    for (int64_t j = 0; j < pl.BM / 8; ++j) {
      SmallVector<Value> bf = {operand(x[j][2 * s]), operand(x[j][2 * s + 1])};
      Value *c = &acc[j * 4];
      Value d = NVVM::MmaOp::create(
          b, resType, a, bf, ValueRange(ArrayRef<Value>(c, 4)), {16, 8, 16}, std::nullopt,
          std::nullopt, std::array<NVVM::MMATypes, 2>{mmaType, mmaType},
          std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row, NVVM::MMALayout::col});
      for (int64_t i = 0; i < 4; ++i)
        c[i] = LLVM::ExtractValueOp::create(b, d, i);
    }
  }
}

/// C fragment of n8 tile j: c0, c1 at (W row g, x rows 2t, 2t + 1), c2, c3 at W row g + 8.
void GemvKernel::reduceAndStore(ArrayRef<Value> acc) {
  Value base = p.dynamicSharedBase(16);
  const int64_t n = pl.accs();
  Value l64 = p.to64(lane), w64 = p.to64(warp);
  auto slot = [&](Value w, int64_t i) {
    return p.shared(p.add(base, p.mul(p.add(p.mul(p.add(p.mul(w, n), i), 32), l64), 4)));
  };
  for (int64_t i = 0; i < n; ++i)
    LLVM::StoreOp::create(b, acc[i], slot(w64, i), /*alignment=*/4);
  gpu::BarrierOp::create(b);
  kb.ifThen(kb.eq(warp, 0), [&] {
    const GenericTask &t = *pl.t;
    for (int64_t i = 0; i < n; ++i) {
      Value sum = acc[i];
      for (int64_t w = 1; w < kWarps; ++w)
        sum = arith::AddFOp::create(b, sum,
                                    LLVM::LoadOp::create(b, b.getF32Type(), slot(p.c64(w), i), 4));
      const int64_t j = i / 4, h = (i % 4) / 2, e = i % 2;
      Value nIdx = kb.add(n0, kb.add(g, 8 * h));
      Value mIdx = kb.add(m0, kb.add(kb.mul(tq, 2), 8 * j + e));
      Value inside = arith::AndIOp::create(b, kb.lt(nIdx, pl.N), kb.lt(mIdx, pl.M));
      kb.ifThen(inside, [&] {
        SmallVector<Value> ivs(t.loopSizes.size(), kb.idx(0));
        if (!pl.batch.empty())
          ivs[pl.batch[0]] = bz;
        ivs[pl.mD] = mIdx;
        storeAccumulator(kb, pl, ivs, nIdx, sum);
      });
    }
  });
}

void GemvKernel::build() {
  Value tid = kb.threadId();
  lane = kb.rem(tid, 32);
  warp = kb.div(tid, 32);
  g = kb.div(lane, 4);
  tq = kb.rem(lane, 4);
  n0 = kb.mul(kb.blockId(gpu::Dimension::x), 16);
  m0 = kb.mul(kb.blockId(gpu::Dimension::y), pl.BM);
  bz = kb.blockId(gpu::Dimension::z);
  SmallVector<Value> init(pl.accs(), arith::ConstantOp::create(b, b.getF32FloatAttr(0.0f)));
  const int64_t chunks = pl.BK / 32;
  SmallVector<Value> acc = kb.forLoop(
      kb.mul(warp, pl.BK), kb.idx(pl.K), kWarps * pl.BK, init,
      [&](Value k, ValueRange cur) -> SmallVector<Value> {
        SmallVector<Value> values(cur.begin(), cur.end());
        for (int64_t c = 0; c < chunks; ++c)
          mmaChunk(kb.add(k, 32 * c), values);
        return values;
      });
  reduceAndStore(acc);
}

} // namespace

FailureOr<LoweredTask> emitMmaGemv(const GenericTask &t, const ScheduleKnobs &k,
                                   const TensorCoreGemm &gemm, unsigned ia, unsigned ib,
                                   EmitContext &ctx, function_ref<InFlightDiagnostic()> bad) {
  GemvPlan pl;
  static_cast<TensorCoreGemm &>(pl) = gemm;
  pl.BM = k.tileSizes[0];
  pl.BK = k.tileSizes[2];
  pl.ia = ia;
  pl.ib = ib;
  // W is read once: past L1 (evo-streaming-loads), leaving L1 to x, which every block reads.
  pl.stream = true;
  if (pl.BM != 8 && pl.BM != 16)
    return bad() << "a few-row tile (the tensor-core GEMV) covers 8 or 16 rows of x";
  if (k.tileSizes[1] != 16)
    return bad() << "the tensor-core GEMV takes 16 rows of W per block (tile_sizes = [" << pl.BM
                 << ", 16, BK])";
  if (pl.BK != 32 && pl.BK != 64 && pl.BK != 128 && pl.BK != 256)
    return bad() << "the tensor-core GEMV's K step per warp must be 32, 64, 128 or 256";
  if (!pl.bKMajor)
    return bad() << "the tensor-core GEMV needs W K-contiguous (y = x W^T, nn.Linear's [out, "
                    "in]); W [k][n] takes the tiled tensor-core schedule (M and N tiles of 32+)";
  if (pl.K % 8)
    return bad() << "the tensor-core GEMV loads 16-byte chunks of K: K must be a multiple of "
                    "8, got "
                 << pl.K;
  if (pl.nTiles() > (int64_t(1) << 31) - 1 || pl.mTiles() > 65535 || pl.B > 65535)
    return bad() << "the grid of " << pl.nTiles() << " x " << pl.mTiles() << " x " << pl.B
                 << " blocks exceeds the launch limits";
  SmallVector<MemRefType> params(t.params.begin(), t.params.end());
  const int64_t threads = 32 * kWarps;
  KernelBuilder kb(ctx.module, ctx.kernelName, params, {}, {threads, 1, 1}, t.op->getLoc());
  GemvKernel(pl, kb).build();
  kb.finish();
  LoweredTask lowered = singleKernel(TaskFamily::Matmul, ctx, {pl.nTiles(), pl.mTiles(), pl.B},
                                     {threads, 1, 1}, params.size());
  lowered.launches.front().dynamicSharedMemory = pl.smem();
  return lowered;
}

} // namespace evo
