//===- Seeds.cpp - known-good starting points of the search ------------------===//
//
// Each family's seeds (seedGenomes: proposed before any mutation, docs/evolution.md "Seeds") and
// the task's traits they depend on (seedTraits). Every table is a measured choice; its comment
// says what it is for and, where one exists, which measurement chose it.
//
//===----------------------------------------------------------------------===//

#include "evo/Evolution/Genome.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/bit.h"

using namespace mlir;

namespace evo {

bool hasFastMathForms(func::FuncOp task) {
  return task
      .walk([](Operation *op) {
        return isa<linalg::SoftmaxOp, math::ExpOp, math::Exp2Op, math::ExpM1Op, math::LogOp,
                   math::Log2Op, math::Log10Op, math::Log1pOp, math::SinOp, math::CosOp,
                   math::TanOp, math::PowFOp>(op)
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      })
      .wasInterrupted();
}

int64_t depthwiseWindow(func::FuncOp task) {
  int64_t window = 0;
  task.walk([&](linalg::LinalgOp op) {
    FailureOr<linalg::ConvolutionDimensions> c = linalg::inferConvolutionDims(op);
    if (failed(c) || c->depth.empty() || !c->outputChannel.empty() || c->filterLoop.empty())
      return;
    SmallVector<int64_t> sizes = op.getStaticLoopRanges();
    window = 1;
    for (unsigned d : c->filterLoop)
      window = ShapedType::isDynamic(sizes[d]) ? 0 : window * sizes[d];
  });
  return window;
}

/// Whether an input of a linalg op in `task` is indexed by a parallel and a reduction dimension
/// together (a window sliding over it: pooling, convolution).
static bool hasSlidingWindow(func::FuncOp task) {
  return task
      .walk([](linalg::LinalgOp op) {
        SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
        for (OpOperand *in : op.getDpsInputOperands())
          for (AffineExpr e : op.getMatchingIndexingMap(in).getResults()) {
            bool parallel = false, reduction = false;
            for (unsigned d = 0; d < iters.size(); ++d)
              if (e.isFunctionOfDim(d))
                (iters[d] == utils::IteratorType::parallel ? parallel : reduction) = true;
            if (parallel && reduction)
              return WalkResult::interrupt();
          }
        return WalkResult::advance();
      })
      .wasInterrupted();
}

SeedTraits seedTraits(func::FuncOp task) {
  SeedTraits t;
  for (Type r : task.getResultTypes())
    if (auto s = dyn_cast<ShapedType>(r); s && s.hasStaticShape())
      t.outputElements += s.getNumElements();
  t.depthwiseWindow = depthwiseWindow(task);
  if (std::optional<std::pair<int64_t, int64_t>> rows = rowProgramExtent(task))
    std::tie(t.rows, t.rowLength) = *rows;
  t.stridedRows = rowProgramIsStrided(task);
  t.fastMathForms = hasFastMathForms(task);
  t.slidingWindow = hasSlidingWindow(task);
  task.walk([&](linalg::LinalgOp op) {
    // (inferContractionDims also "finds" dimensions in a convolution, whose K is more than
    // the dimensions it names: convolutions are not contractions here.)
    if (linalg::isaConvolutionOpInterface(op))
      return;
    FailureOr<linalg::ContractionDimensions> c = linalg::inferContractionDims(op);
    SmallVector<int64_t> sizes = op.getStaticLoopRanges();
    if (failed(c) || c->k.empty())
      return;
    auto extent = [&](ArrayRef<unsigned> dims) {
      int64_t e = 1;
      for (unsigned d : dims) {
        if (ShapedType::isDynamic(sizes[d]))
          return ShapedType::kDynamic;
        e *= sizes[d];
      }
      return e;
    };
    int64_t m = extent(c->m), n = extent(c->n);
    if (ShapedType::isDynamic(m) || ShapedType::isDynamic(n))
      return;
    int64_t least = std::min(m, n), k = extent(c->k);
    if (t.contractionMinMN && t.contractionMinMN <= least)
      return;
    t.contractionMinMN = least;
    t.contractionK = ShapedType::isDynamic(k) ? 0 : k;
  });
  return t;
}

namespace {

using Seeds = std::vector<Genome>;

void elementwiseSeeds(const Genome &baseline, Seeds &seeds) {
  // 128-bit accesses (illegal, and skipped, where the innermost dimension refuses them; 8
  // lanes only for 16-bit types), one to four vector groups a thread: {block, vector width,
  // elements per thread}.
  const int64_t shapes[][3] = {{256, 4, 2}, {256, 4, 1}, {512, 4, 1}, {256, 8, 1},
                               {128, 4, 4}, {256, 2, 2}};
  for (const auto &s : shapes) {
    Genome g = baseline;
    g.knobs.blockSize = s[0];
    g.knobs.vectorWidth = s[1];
    g.knobs.elementsPerThread = s[2];
    seeds.push_back(g);
  }
}

/// A row program's genome: strategy, threads per block, vector width, cache_row, row_split.
Genome rowSeed(const Genome &baseline, ReductionStrategy strategy, int64_t block, int64_t width,
               bool cacheRow, int64_t rowSplit) {
  Genome g = baseline;
  g.knobs.reduction = strategy;
  g.knobs.blockSize = block;
  g.knobs.vectorWidth = width;
  g.knobs.cacheRow = cacheRow;
  g.knobs.rowSplit = rowSplit;
  return g;
}

/// An untiled reduction's genome (a contraction's without tiles too): a warp (`strategy` 1) or
/// a block (2) per output, vector width, accumulators, stream_loads.
Genome untiledSeed(const Genome &baseline, int64_t strategy, int64_t width,
                   int64_t accumulators, bool stream) {
  Genome g = baseline;
  g.knobs.reduction = strategy == 1 ? ReductionStrategy::Warp : ReductionStrategy::Block;
  g.knobs.vectorWidth = width;
  g.knobs.accumulators = accumulators;
  g.knobs.streamLoads = stream;
  return g;
}

void stridedRowSeeds(const Genome &baseline, const SeedTraits &traits, Seeds &seeds) {
  // Strided rows (neighbouring rows are neighbours in memory): a thread per row reads
  // coalesced; with the row in registers (cache_row, rows of at most 64) the input is read
  // once. {block size, cache_row}; the illegal ones are skipped.
  const int64_t shapes[][2] = {{256, 1}, {128, 1}, {512, 1}, {256, 0}, {1024, 1}};
  for (const auto &s : shapes)
    seeds.push_back(rowSeed(baseline, ReductionStrategy::Thread, s[0], 1, s[1], 1));
  if (traits.fastMathForms) {
    Genome g = seeds.front();
    g.knobs.fastMath = true;
    seeds.push_back(g);
  }
}

void rowSeeds(const Genome &baseline, const SeedTraits &traits, Seeds &seeds) {
  const int64_t rows = traits.rows, rowLength = traits.rowLength;
  // Few long rows (a LayerNorm over [C, H, W]: 16 rows of 4 M) give a block per row only as
  // many blocks as rows: each row is split over S blocks, the powers of 2 that give about 2
  // and 4 blocks per SM of an H100/H200 SXM (132 SMs; rows x S from 256), each with 128-bit
  // loads and 256 to 1024 threads (cache_row where a slice fits in registers); the illegal
  // ones (4 not dividing the row's last dimension, cache_row past 64 elements per thread)
  // are skipped.
  constexpr int64_t kSMs = 132;
  if (rows > 0 && rows < 2 * kSMs && rowLength >= 16384) {
    int64_t s0 = 1;
    while (rows * s0 < 256 && s0 < 128)
      s0 *= 2;
    const int64_t shapes[][2] = {{512, 0}, {1024, 0}, {256, 0}, {1024, 1}};
    for (int64_t s : {s0, std::min<int64_t>(2 * s0, 256)})
      for (const auto &b : shapes)
        seeds.push_back(rowSeed(baseline, ReductionStrategy::Block, b[0], 4, b[1], s));
  }
  // Exponentials and logarithms (a softmax, a log-softmax, a cross-entropy) cost more than
  // the row's bytes at libdevice's accurate forms (an online softmax step is about 27
  // instructions an element, the H200's issue rate at its read rate about 33): a block or a
  // warp per row, 128-bit loads, with the fast forms, and one without them to compare.
  if (traits.fastMathForms) {
    const int64_t shapes[][3] = {{2, 256, 1}, {2, 512, 1}, {2, 1024, 1}, {1, 256, 1}, {2, 256, 0}};
    for (const auto &s : shapes) {
      Genome g = rowSeed(baseline, static_cast<ReductionStrategy>(s[0]), s[1], 4,
                         baseline.knobs.cacheRow, baseline.knobs.rowSplit);
      g.knobs.fastMath = s[2];
      seeds.push_back(g);
    }
  }
}

void scanSeeds(const Genome &baseline, Seeds &seeds) {
  // {strategy, block size, vector width, elements per thread}: a warp per line for many short
  // lines, a block per line for few long ones, 128-bit loads where the scanned axis is
  // contiguous (illegal otherwise, and skipped), the vector-less ones for scans along an outer
  // dimension (where the naive thread per line already reads coalesced).
  const int64_t scans[][4] = {{1, 256, 4, 1},  {1, 256, 4, 2}, {1, 128, 8, 1}, {2, 256, 4, 1},
                              {2, 512, 4, 2},  {2, 1024, 4, 1}, {2, 256, 4, 4}, {2, 256, 8, 1},
                              {1, 256, 1, 4},  {2, 256, 1, 4},  {0, 128, 1, 1}, {0, 64, 1, 1}};
  for (const auto &s : scans) {
    Genome g = baseline;
    g.knobs.reduction = static_cast<ReductionStrategy>(s[0]);
    g.knobs.blockSize = s[1];
    g.knobs.vectorWidth = s[2];
    g.knobs.elementsPerThread = s[3];
    seeds.push_back(g);
  }
}

void reductionSeeds(const Genome &baseline, const SeedTraits &traits, Seeds &seeds) {
  const int64_t outputElements = traits.outputElements;
  // Few outputs (a 0-d loss or norm, a handful of long rows) do not fill the GPU: the
  // reduction is split over blocks, partials combined in a fixed order, aiming at 512-2048
  // blocks in all. {block size, vector width, accumulators, blocks}. Many outputs: a warp or a
  // block each, 128-bit loads. Seeds the task does not allow (a split that does not divide its
  // reduction, a vector width its innermost dimension refuses) are skipped.
  if (outputElements > 0 && outputElements <= 1024) {
    const int64_t few[][4] = {{256, 4, 4, 1024}, {512, 4, 2, 1024}, {256, 4, 2, 2048},
                              {1024, 4, 2, 512}, {256, 4, 4, 512},  {256, 1, 4, 1024}};
    for (const auto &s : few) {
      Genome g = baseline;
      g.knobs.reduction = ReductionStrategy::Block;
      g.knobs.blockSize = s[0];
      g.knobs.vectorWidth = s[1];
      g.knobs.accumulators = s[2];
      g.knobs.split = std::clamp<int64_t>(
          static_cast<int64_t>(llvm::bit_floor(static_cast<uint64_t>(s[3] / outputElements))), 1, 256);
      seeds.push_back(g);
    }
  }
  // {strategy, vector width, accumulators, stream_loads}.
  const int64_t many[][4] = {{1, 4, 2, 0}, {2, 4, 2, 0}, {1, 4, 4, 0}, {1, 1, 4, 0}, {1, 4, 2, 1}};
  for (const auto &s : many)
    seeds.push_back(untiledSeed(baseline, s[0], s[1], s[2], s[3]));
  // Pooling: a thread per group of outputs along the window's strided dimension, the group's
  // span of input loaded once in `vector_width` accesses. {group_outputs, vector_width}.
  if (!traits.slidingWindow)
    return;
  const int64_t windows[][2] = {{4, 4}, {4, 2}, {2, 2}, {8, 4}, {4, 1}};
  for (const auto &s : windows) {
    Genome g = baseline;
    g.knobs.reduction = ReductionStrategy::Thread;
    g.knobs.groupOutputs = s[0];
    g.knobs.vectorWidth = s[1];
    seeds.push_back(g);
  }
}

/// Few outputs (GEMV, skinny GEMM): too few tiles to fill the GPU, and reading the matrix once
/// at full bandwidth is the whole game. {strategy, vector width, accumulators, split}; the
/// vector widths that do not fit the element type (8 x f32) are illegal and skipped. Then a
/// warp per group of outputs sharing an operand's loads (group_outputs: a GEMV's rows share x,
/// nn.Linear's batch rows share W), and the matrix streamed past L1 (stream_loads; a warp per
/// row with 2 16-byte loads in flight per lane was the fastest hand-written GEMV on the H200).
/// Groups over two output dimensions (group_outputs2: nn.Linear's batch rows x a few rows of
/// W; the probe's best at batch 8 in f32, 4 rows of W) are legal only where there are two.
void skinnyContractionSeeds(const Genome &baseline, Seeds &seeds) {
  // {strategy, vector width, accumulators, split, group, stream, group2}.
  const int64_t gemv[][7] = {
      {1, 8, 2, 1, 1, 1, 1},  {1, 4, 2, 1, 1, 1, 1}, {1, 8, 4, 1, 1, 0, 1},
      {1, 4, 4, 1, 1, 0, 1},  {2, 8, 2, 1, 1, 0, 1}, {2, 4, 2, 1, 1, 0, 1},
      {1, 8, 2, 8, 1, 1, 1},  {1, 4, 2, 8, 1, 1, 1}, {2, 8, 2, 32, 1, 0, 1},
      {2, 4, 2, 32, 1, 0, 1}, {1, 8, 2, 1, 4, 0, 1}, {1, 4, 2, 1, 4, 1, 1},
      {1, 8, 1, 1, 8, 1, 1},  {1, 4, 1, 1, 8, 0, 1}, {1, 4, 2, 1, 8, 1, 1},
      {1, 8, 2, 1, 2, 0, 1},  {1, 4, 2, 1, 8, 0, 4}, {1, 4, 1, 1, 8, 1, 2},
      {1, 8, 1, 1, 8, 1, 2},  {1, 4, 2, 1, 4, 0, 2}, {1, 4, 2, 1, 4, 0, 1}};
  for (const auto &s : gemv) {
    Genome g = untiledSeed(baseline, s[0], s[1], s[2], s[5]);
    g.knobs.split = s[3];
    g.knobs.groupOutputs = s[4];
    g.knobs.groupOutputs2 = s[6];
    seeds.push_back(g);
  }
  // A few rows (nn.Linear at batch 2-16, y = x W^T): each element of W serves every row, so
  // the untiled schedules above (a warp per output) read W once per row. Tiles that span all
  // rows read it once: on tensor cores (the rows a fraction of one M tile; narrow N tiles for
  // enough blocks, deep rings for enough bytes in flight) {wgmma, BM, BN, BK, stages}, and
  // SIMT register tiles {BM, BN, BK, TM, TN, split} with split-K, since N / BN tiles alone are
  // too few blocks.
  const int64_t fewRowsTc[][5] = {{0, 32, 32, 64, 8}, {0, 32, 64, 64, 8}, {1, 64, 64, 64, 8},
                                  {0, 32, 64, 32, 8}};
  for (const auto &s : fewRowsTc) {
    Genome g = baseline;
    g.knobs.tileSizes = {s[1], s[2], s[3]};
    (s[0] ? g.knobs.wgmma : g.knobs.mmaSync) = true;
    g.knobs.stages = s[4];
    seeds.push_back(g);
  }
  const int64_t fewRowsSimt[][6] = {{8, 256, 32, 8, 2, 8}, {8, 128, 32, 8, 1, 4},
                                    {4, 128, 32, 4, 1, 4}, {8, 64, 32, 8, 1, 2}};
  for (const auto &s : fewRowsSimt) {
    Genome g = baseline;
    g.knobs.tileSizes = {s[0], s[1], s[2]};
    g.knobs.threadTile = {s[3], s[4]};
    g.knobs.prefetch = true;
    g.knobs.split = s[5];
    seeds.push_back(g);
  }
}

  // A depthwise convolution: one row (M = 1), the whole window as the one K tile (its BM x BK
  // filter tile is copied by all threads), {BN, TN}: 32, 64 or 128 threads of 2 or 4 output
  // pixels each (a stencil schedule, with the image patch in shared memory, would reuse more).
  // Tiles of more rows than its one would only compute rows that are not there: the larger
  // seeds below are not proposed.
void depthwiseSeeds(const Genome &baseline, int64_t window, Seeds &seeds) {
  const int64_t rows[][2] = {{128, 4}, {256, 4}, {64, 2}, {256, 2}, {512, 4}};
  for (const auto &s : rows) {
    Genome g = baseline;
    g.knobs.tileSizes = {1, s[0], window};
    g.knobs.threadTile = {1, s[1]};
    seeds.push_back(g);
  }
}

void tensorCoreSeeds(const Genome &baseline, Seeds &seeds) {
  // Tensor cores (wgmma, f16/bf16 on sm_90a; illegal elsewhere): {BM, BN, stages, persistent},
  // the best first (H200, 8192^3: 128x256 with 3-4 stages reached 0.87-0.88 of cuBLAS,
  // docs/results/2026-11-30-issue13-wgmma-probe.txt); persistent grids of one or two blocks per
  // SM of an H100/H200 SXM (132 SMs) for problems of many short tiles (convolutions, small N).
  const int64_t tensorCore[][4] = {{128, 256, 3, 0},   {128, 256, 4, 0},  {128, 256, 4, 132},
                                   {128, 128, 4, 0},   {128, 128, 4, 132}, {128, 128, 6, 0},
                                   {128, 64, 6, 0},    {128, 64, 4, 264}, {128, 64, 6, 132},
                                   {64, 128, 6, 0}};
  // f32 operands with f32-matmul=tf32 or 3xtf32 (an opt-in the baseline records): the same
  // tiles with a K tile of 32 (one 128-byte row of f32); a 3xTF32 stage also holds the operands'
  // remainders (twice the bytes), so it gets half the stages (at least 2).
  const bool tf32 = baseline.knobs.f32Matmul != F32Matmul::Ieee;
  const bool split3 = baseline.knobs.f32Matmul == F32Matmul::TF32x3;
  for (const auto &s : tensorCore) {
    Genome g = baseline;
    g.knobs.tileSizes = {s[0], s[1], tf32 ? 32 : 64};
    g.knobs.wgmma = true;
    g.knobs.stages = split3 ? std::max<int64_t>(2, s[2] / 2) : s[2];
    g.knobs.persistent = s[3];
    seeds.push_back(g);
  }
  // Tensor cores before Hopper (mma.sync, f16/bf16 on sm_80 and newer; on sm_90a after the
  // wgmma seeds): {BM, BN, BK, stages}, CUTLASS's usual Ampere tiles, a 64 x 64 tile per warp.
  const int64_t mmaSync[][4] = {{128, 128, 32, 4}, {128, 256, 32, 3}, {256, 128, 32, 3},
                                {128, 128, 64, 3}, {64, 128, 32, 4},  {128, 64, 32, 4},
                                {64, 64, 64, 4}};
  if (!tf32)
    for (const auto &s : mmaSync) {
      Genome g = baseline;
      g.knobs.tileSizes = {s[0], s[1], s[2]};
      g.knobs.mmaSync = true;
      g.knobs.stages = s[3];
      seeds.push_back(g);
    }
}

void splitKSeeds(const Genome &baseline, const SeedTraits &traits, Seeds &seeds) {
  // Split-K tiles for few outputs of a long K (a 256x256 result is 4 tiles of 128x128, far too
  // few blocks for 132 SMs; K is the whole work): {BM, BN, BK, TM, TN}, prefetching, with as
  // many slices as give about 2 and then 4 blocks per SM of an H100/H200 SXM (a power of 2,
  // 2-256), but at least 256 of K per slice (fewer would make the partial tiles the traffic);
  // the slices' partial tiles are added in order by a second kernel. Only where K is known (a
  // contraction; a convolution's short K gets its tiles whole).
  const int64_t outputs = traits.outputElements, K = traits.contractionK;
  if (outputs <= 0 || outputs > (int64_t(1) << 20) || K < 512)
    return;
  constexpr int64_t kSMs = 132;
  const int64_t splitK[][5] = {{128, 128, 8, 8, 8}, {64, 64, 16, 4, 4}, {128, 128, 16, 8, 8}};
  auto slices = [&](const int64_t *s, int64_t perSM) {
    int64_t tiles = std::max<int64_t>(1, outputs / (s[0] * s[1]));
    uint64_t wanted = std::max<int64_t>(1, perSM * kSMs / tiles);
    uint64_t most = std::max<int64_t>(1, K / 256);
    return std::clamp<int64_t>(static_cast<int64_t>(llvm::bit_floor(std::min(wanted, most))), 2,
                               256);
  };
  for (int64_t perSM : {2, 4})
    for (const auto &s : splitK) {
      int64_t split = slices(s, perSM);
      if (perSM == 4 && split == slices(s, 2))
        continue; // (both at a cap)
      Genome g = baseline;
      g.knobs.tileSizes = {s[0], s[1], s[2]};
      g.knobs.threadTile = {s[3], s[4]};
      g.knobs.vectorWidth = 4;
      g.knobs.prefetch = true;
      g.knobs.split = split;
      seeds.push_back(g);
    }
}

void tiledSeeds(const Genome &baseline, Seeds &seeds) {
  // {BM, BN, BK, TM, TN}: 256 threads (128 for the last), 128-bit fragments, BK of 8 or 16, each
  // with and without register prefetch of the next K tile. The tiles need not divide the
  // problem (the last row and column tiles are guarded, K ends with a partial tile), so these
  // apply to any shape.
  const int64_t shapes[][5] = {{128, 128, 8, 8, 8}, {128, 64, 8, 8, 4},  {64, 128, 8, 4, 8},
                               {128, 128, 16, 8, 8}, {64, 64, 8, 4, 4},   {64, 64, 16, 4, 4},
                               {128, 64, 16, 8, 8}};
  // Few rows (M = 32: convolutions with 32 output channels, per group for a grouped one, such as
  // KernelBench's conv3d, grouped and transposed convolutions), which the tiles above do not
  // divide or (with bounds guards) fill a quarter of: 128 threads, with register prefetch; after
  // the first two shapes, so that a short search still reaches them.
  const int64_t narrow[][5] = {{32, 128, 8, 4, 8}, {32, 64, 8, 4, 4}};
  auto push = [&](const int64_t *s, bool prefetch) {
    Genome g = baseline;
    g.knobs.tileSizes = {s[0], s[1], s[2]};
    g.knobs.threadTile = {s[3], s[4]};
    g.knobs.vectorWidth = 4;
    g.knobs.prefetch = prefetch;
    seeds.push_back(g);
  };
  for (auto [i, s] : llvm::enumerate(shapes)) {
    for (bool prefetch : {true, false})
      push(s, prefetch);
    if (i == 1)
      for (const auto &n : narrow)
        push(n, true);
  }
}

} // namespace

std::vector<Genome> seedGenomes(const Genome &baseline, TaskFamily family,
                                const SeedTraits &traits) {
  Seeds seeds;
  switch (family) {
  case TaskFamily::Elementwise:
    elementwiseSeeds(baseline, seeds);
    break;
  case TaskFamily::Rows:
    if (traits.stridedRows)
      stridedRowSeeds(baseline, traits, seeds);
    else
      rowSeeds(baseline, traits, seeds);
    break;
  case TaskFamily::Scan:
    scanSeeds(baseline, seeds);
    break;
  case TaskFamily::Reduction:
    reductionSeeds(baseline, traits, seeds);
    break;
  case TaskFamily::Matmul:
    if (traits.outputElements > 0 && traits.outputElements <= 65536 &&
        (traits.contractionMinMN == 0 || traits.contractionMinMN <= 16))
      skinnyContractionSeeds(baseline, seeds);
    if (traits.depthwiseWindow > 0 && traits.depthwiseWindow <= 512) {
      depthwiseSeeds(baseline, traits.depthwiseWindow, seeds);
      break;
    }
    tensorCoreSeeds(baseline, seeds);
    splitKSeeds(baseline, traits, seeds);
    tiledSeeds(baseline, seeds);
    break;
  default:
    break;
  }
  return seeds;
}

} // namespace evo
