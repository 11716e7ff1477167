//===- SeedsTest.cpp - the seed genomes of each task family, without a GPU ----===//
//
// Which genomes seedGenomes proposes for a task from its traits (contractions, reductions,
// pooling, scans, row programs, fast math), and that those seeds lower and compile.
//
//===----------------------------------------------------------------------===//

#include "EvolutionFixture.h"
#include "evo/Evolution/Genome.h"
#include "evo/Evolution/VariantCompiler.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "gtest/gtest.h"
#include <optional>
#include <utility>

using namespace mlir;
using namespace evo;

using evo::unittest::kElementwise;
using evo::unittest::kScan;
using evo::unittest::registry;

namespace {
SeedTraits traits(int64_t outputs, int64_t depthwiseWindow = 0, int64_t rows = 0,
                  int64_t rowLength = 0, bool stridedRows = false, bool fastMathForms = false) {
  SeedTraits t;
  t.outputElements = outputs;
  t.depthwiseWindow = depthwiseWindow;
  t.rows = rows;
  t.rowLength = rowLength;
  t.stridedRows = stridedRows;
  t.fastMathForms = fastMathForms;
  return t;
}

/// A contraction's traits: `outputs` results, the smaller of M and N, and K.
SeedTraits contraction(int64_t outputs, int64_t minMN, int64_t k) {
  SeedTraits t = traits(outputs);
  t.contractionMinMN = minMN;
  t.contractionK = k;
  return t;
}
} // namespace

TEST(GenomeTest, SkinnyContractionsAreSeededWithTheGemvSchedulesFirst) {
  // At most 65536 outputs: the untiled reduction schedules (warp or block per output, vector
  // loads, split-K) come before the tiled and tensor-core seeds; larger problems do not get them.
  std::vector<Genome> skinny = seedGenomes(Genome(), TaskFamily::Matmul, contraction(8192, 1, 8192));
  ASSERT_FALSE(skinny.empty());
  EXPECT_TRUE(skinny.front().knobs.tileSizes.empty());
  EXPECT_EQ(skinny.front().knobs.reduction, ReductionStrategy::Warp);
  EXPECT_GT(skinny.front().knobs.vectorWidth, 1);
  EXPECT_TRUE(llvm::any_of(skinny, [](const Genome &g) { return g.knobs.split > 1; }));
  EXPECT_TRUE(llvm::any_of(skinny, [](const Genome &g) { return g.knobs.wgmma; }));
  std::vector<Genome> square = seedGenomes(Genome(), TaskFamily::Matmul, contraction(4096 * 4096, 4096, 4096));
  EXPECT_TRUE(llvm::none_of(square, [](const Genome &g) { return g.knobs.tileSizes.empty(); }));
  // Few outputs also get tiled split-K seeds; a square 4096^2 problem does not.
  EXPECT_TRUE(llvm::any_of(skinny, [](const Genome &g) {
    return !g.knobs.tileSizes.empty() && !g.knobs.wgmma && g.knobs.split > 1;
  }));
  EXPECT_TRUE(llvm::none_of(square, [](const Genome &g) { return g.knobs.split > 1; }));
  // The first streams the matrix past L1; the tiled seeds do not take stream_loads.
  EXPECT_TRUE(skinny.front().knobs.streamLoads);
  EXPECT_TRUE(llvm::none_of(square, [](const Genome &g) { return g.knobs.streamLoads; }));
  // Skinny: 10 untiled and 6 + 4 + 1 grouped untiled (over one and two output dimensions), 4
  // few-row tensor-core and 4 few-row split-K SIMT seeds, 3 split-K tiles (K = 8192: at most 32
  // slices of 256, whether for 2 or 4 blocks per SM, so one seed per tile shape).
  EXPECT_EQ(skinny.size(), square.size() + 10 + 6 + 4 + 1 + 4 + 4 + 3);
}

TEST(GenomeTest, SeedTraitsTellSkinnyFromLongKContractions) {
  // seedTraits reads M and N from the contraction. A 256 x 256 result of a long K (KernelBench's
  // large-K matmul) has as few outputs as a GEMV but is no GEMV: it gets no untiled seeds, and
  // its split-K tiles give 2, then 4, blocks per SM (4 tiles of 128 x 128: 64 and 128 slices).
  // A matrix-vector product (N = 1) keeps the untiled schedules first.
  const char *src = R"mlir(func.func @lk_t0(%a: tensor<256x131072xf32>, %b: tensor<131072x256xf32>) -> tensor<256x256xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x256xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
  %r = linalg.matmul ins(%a, %b : tensor<256x131072xf32>, tensor<131072x256xf32>) outs(%f : tensor<256x256xf32>) -> tensor<256x256xf32>
  return %r : tensor<256x256xf32>
}
func.func @mv_t0(%a: tensor<4096x8192xf32>, %x: tensor<8192x1xf32>) -> tensor<4096x1xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4096x1xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4096x1xf32>) -> tensor<4096x1xf32>
  %r = linalg.matmul ins(%a, %x : tensor<4096x8192xf32>, tensor<8192x1xf32>) outs(%f : tensor<4096x1xf32>) -> tensor<4096x1xf32>
  return %r : tensor<4096x1xf32>
}
func.func @conv_t0(%x: tensor<1x18x18x1024xf32>, %w: tensor<3x3x1024x64xf32>) -> tensor<1x16x16x64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x16x16x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x16x16x64xf32>) -> tensor<1x16x16x64xf32>
  %r = linalg.conv_2d_nhwc_hwcf ins(%x, %w : tensor<1x18x18x1024xf32>, tensor<3x3x1024x64xf32>) outs(%f : tensor<1x16x16x64xf32>) -> tensor<1x16x16x64xf32>
  return %r : tensor<1x16x16x64xf32>
})mlir";
  MLIRContext ctx(registry());
  OwningOpRef<ModuleOp> m = parseSourceString<ModuleOp>(src, &ctx);
  ASSERT_TRUE(m);
  auto funcs = llvm::to_vector(m->getOps<func::FuncOp>());
  SeedTraits longK = seedTraits(funcs[0]), gemv = seedTraits(funcs[1]);
  EXPECT_EQ(longK.outputElements, 65536);
  EXPECT_EQ(longK.contractionMinMN, 256);
  EXPECT_EQ(longK.contractionK, 131072);
  EXPECT_EQ(gemv.outputElements, 4096);
  EXPECT_EQ(gemv.contractionMinMN, 1);
  // A convolution is no contraction here (its K is more than the channels inferContractionDims
  // names): no split-K seeds from a K of 1024 channels.
  SeedTraits conv = seedTraits(funcs[2]);
  EXPECT_EQ(conv.contractionMinMN, 0);
  EXPECT_EQ(conv.contractionK, 0);
  std::vector<Genome> lk = seedGenomes(Genome(), TaskFamily::Matmul, longK);
  EXPECT_TRUE(llvm::none_of(lk, [](const Genome &g) { return g.knobs.tileSizes.empty(); }));
  SmallVector<int64_t> splits128;
  for (const Genome &g : lk)
    if (g.knobs.tileSizes == SmallVector<int64_t>{128, 128, 8} && g.knobs.split > 1)
      splits128.push_back(g.knobs.split);
  EXPECT_EQ(splits128, (SmallVector<int64_t>{64, 128}));
  LegalityCache legal(funcs[0], TaskFamily::Matmul);
  const Genome *firstLegal = nullptr;
  for (const Genome &g : lk)
    if (legal.isLegal(g)) {
      firstLegal = &g;
      break;
    }
  ASSERT_NE(firstLegal, nullptr);
  EXPECT_EQ(firstLegal->knobs.split, 64) << firstLegal->key(TaskFamily::Matmul);
  std::vector<Genome> mv = seedGenomes(Genome(), TaskFamily::Matmul, gemv);
  ASSERT_FALSE(mv.empty());
  EXPECT_TRUE(mv.front().knobs.tileSizes.empty());
  EXPECT_EQ(mv.front().knobs.reduction, ReductionStrategy::Warp);
}

TEST(GenomeTest, ElementwiseTasksAreSeededWithVectorAccesses) {
  // Elementwise tasks start from 128-bit accesses (a module's elementwise task after a long
  // reduction gets little of the budget: the search must not depend on mutation to find them).
  MLIRContext ctx(registry());
  OwningOpRef<ModuleOp> m = parseSourceString<ModuleOp>(kElementwise, &ctx);
  ASSERT_TRUE(m);
  func::FuncOp task = *m->getOps<func::FuncOp>().begin();
  std::vector<Genome> seeds =
      seedGenomes(Genome(), TaskFamily::Elementwise, seedTraits(task));
  ASSERT_FALSE(seeds.empty());
  EXPECT_EQ(seeds.front().knobs.vectorWidth, 4);
  LegalityCache legal(task, TaskFamily::Elementwise);
  EXPECT_TRUE(legal.isLegal(seeds.front()));
  // f32: 8 lanes would be 32 bytes, illegal (and skipped by the proposer).
  EXPECT_TRUE(llvm::any_of(seeds, [&](const Genome &g) { return !legal.isLegal(g); }));
}

TEST(GenomeTest, TiledSeedsLowerOnIrregularAndLongKMatmuls) {
  // The tiles need not divide the problem: on a 37x19 @ 19x45 matmul every SIMT tiled seed
  // without split-K is legal and compiles. On a long-K 64x8192 @ 8192x64 matmul the split-K seeds are legal and
  // lower to the partial-tile kernel plus the combine kernel over a scratch buffer.
  const char *irregular = R"mlir(func.func @irr_t0(%a: tensor<37x19xf32>, %b: tensor<19x45xf32>) -> tensor<37x45xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<37x45xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<37x45xf32>) -> tensor<37x45xf32>
  %r = linalg.matmul ins(%a, %b : tensor<37x19xf32>, tensor<19x45xf32>) outs(%f : tensor<37x45xf32>) -> tensor<37x45xf32>
  return %r : tensor<37x45xf32>
})mlir";
  const char *longK = R"mlir(func.func @lk_t0(%a: tensor<64x8192xf32>, %b: tensor<8192x64xf32>) -> tensor<64x64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %r = linalg.matmul ins(%a, %b : tensor<64x8192xf32>, tensor<8192x64xf32>) outs(%f : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
})mlir";
  MLIRContext ctx(registry());
  PTXOptions ptx;
  for (const char *src : {irregular, longK}) {
    OwningOpRef<ModuleOp> m = parseSourceString<ModuleOp>(src, &ctx);
    ASSERT_TRUE(m);
    func::FuncOp task = *m->getOps<func::FuncOp>().begin();
    LegalityCache legal(task, TaskFamily::Matmul);
    unsigned tiled = 0, split = 0;
    for (const Genome &g : seedGenomes(Genome(), TaskFamily::Matmul, seedTraits(task))) {
      if (g.knobs.tileSizes.empty() || g.knobs.wgmma || g.knobs.mmaSync)
        continue; // f32 operands: the tensor-core seeds are illegal here
      ++tiled;
      // (K = 19 has one whole tile of 16: fewer than any split's slices.)
      if (src == irregular && g.knobs.split > 1) {
        EXPECT_FALSE(legal.isLegal(g)) << g.key(TaskFamily::Matmul);
        continue;
      }
      ASSERT_TRUE(legal.isLegal(g)) << g.key(TaskFamily::Matmul);
      CompiledVariant v = compileVariant(registry(), src, TaskFamily::Matmul, g, ptx, "");
      ASSERT_TRUE(v.ok) << g.key(TaskFamily::Matmul) << "\n" << v.diagnostics;
      EXPECT_EQ(v.launches.size(), g.knobs.split > 1 ? 2u : 1u) << g.key(TaskFamily::Matmul);
      split += g.knobs.split > 1;
    }
    EXPECT_GE(tiled, 14u + 2u);
    // Neither is skinny (M and N above 16: no few-row seeds); the long K gets the 3 split-K
    // tiles (32 slices of 256), K = 19 none.
    EXPECT_EQ(split, src == irregular ? 0u : 3u);
  }
}

TEST(GenomeTest, MmaSyncSeedsAreLegalOnlyWhereTheChipHasIt) {
  // The mma.sync seeds (f16/bf16 tensor cores before Hopper) lower on an odd-sized f16 matmul
  // for a chip that has mma.sync, and are refused for one that does not (as wgmma's are off
  // sm_90a); chipHasMmaSync reads the chip name.
  const char *src = R"mlir(func.func @h_t0(%a: tensor<200x96xf16>, %b: tensor<96x136xf16>) -> tensor<200x136xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<200x136xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<200x136xf32>) -> tensor<200x136xf32>
  %r = linalg.matmul ins(%a, %b : tensor<200x96xf16>, tensor<96x136xf16>) outs(%f : tensor<200x136xf32>) -> tensor<200x136xf32>
  return %r : tensor<200x136xf32>
})mlir";
  MLIRContext ctx(registry());
  OwningOpRef<ModuleOp> m = parseSourceString<ModuleOp>(src, &ctx);
  ASSERT_TRUE(m);
  func::FuncOp task = *m->getOps<func::FuncOp>().begin();
  LegalityCache ampere(task, TaskFamily::Matmul, /*wgmmaTarget=*/false, /*mmaSyncTarget=*/true);
  LegalityCache older(task, TaskFamily::Matmul, /*wgmmaTarget=*/false, /*mmaSyncTarget=*/false);
  unsigned mma = 0;
  for (const Genome &g : seedGenomes(Genome(), TaskFamily::Matmul, traits(200 * 136))) {
    EXPECT_FALSE(g.knobs.mmaSync && g.knobs.wgmma);
    if (!g.knobs.mmaSync)
      continue;
    ++mma;
    EXPECT_TRUE(ampere.isLegal(g)) << g.key(TaskFamily::Matmul);
    EXPECT_FALSE(older.isLegal(g)) << g.key(TaskFamily::Matmul);
  }
  EXPECT_EQ(mma, 7u + 3u); // the 7 of every contraction, 3 more for few outputs (<= 65536)
  for (const char *chip : {"sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100a", "sm_120"})
    EXPECT_TRUE(chipHasMmaSync(chip)) << chip;
  for (const char *chip : {"sm_75", "sm_70", "sm_8", "gfx90a", ""})
    EXPECT_FALSE(chipHasMmaSync(chip)) << chip;
}

TEST(GenomeTest, ReductionsWithFewOutputsAreSeededWithSplitsThatLower) {
  // A 0-d sum (one output) does not fill the GPU with a block per output: its first seeds split
  // the reduction over blocks (256 slices for one output, fewer for more outputs), and each
  // legal one lowers to the partials' kernel plus the combine. Many outputs get no splits.
  const char *sum0d = R"mlir(func.func @s_t0(%x: tensor<1024x4096xf32>) -> tensor<f32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %r = linalg.reduce ins(%x : tensor<1024x4096xf32>) outs(%f : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %init: f32) {
      %s = arith.addf %in, %init : f32
      linalg.yield %s : f32
    }
  return %r : tensor<f32>
})mlir";
  std::vector<Genome> one = seedGenomes(Genome(), TaskFamily::Reduction, traits(1));
  ASSERT_FALSE(one.empty());
  EXPECT_EQ(one.front().knobs.reduction, ReductionStrategy::Block);
  EXPECT_EQ(one.front().knobs.split, 256);
  std::vector<Genome> sixteen = seedGenomes(Genome(), TaskFamily::Reduction, traits(16));
  EXPECT_EQ(sixteen.front().knobs.split, 64);
  std::vector<Genome> many = seedGenomes(Genome(), TaskFamily::Reduction, traits(65536));
  ASSERT_FALSE(many.empty());
  EXPECT_TRUE(llvm::none_of(many, [](const Genome &g) { return g.knobs.split > 1; }));
  EXPECT_TRUE(llvm::any_of(many, [](const Genome &g) {
    return g.knobs.reduction == ReductionStrategy::Warp && g.knobs.vectorWidth == 4;
  }));

  MLIRContext ctx(registry());
  OwningOpRef<ModuleOp> m = parseSourceString<ModuleOp>(sum0d, &ctx);
  ASSERT_TRUE(m);
  LegalityCache legal(*m->getOps<func::FuncOp>().begin(), TaskFamily::Reduction);
  PTXOptions ptx;
  unsigned split = 0;
  for (const Genome &g : one) {
    ASSERT_TRUE(legal.isLegal(g)) << g.key(TaskFamily::Reduction);
    CompiledVariant v = compileVariant(registry(), sum0d, TaskFamily::Reduction, g, ptx, "");
    ASSERT_TRUE(v.ok) << g.key(TaskFamily::Reduction) << "\n" << v.diagnostics;
    EXPECT_EQ(v.launches.size(), g.knobs.split > 1 ? 2u : 1u) << g.key(TaskFamily::Reduction);
    split += g.knobs.split > 1;
  }
  EXPECT_EQ(split, 6u);
}

TEST(GenomeTest, PoolingIsSeededWithWindowGroupsThatLower) {
  // A window sliding along an output dimension (maxpool1d: stride 2, dilation 3) is seeded with
  // a thread per group of outputs along it, the span loaded in vector accesses; every such seed
  // lowers (the group need not divide the 131 outputs). A plain row sum has no window seeds.
  const char *pool = R"mlir(func.func @p_t0(%x: tensor<4x8x272xf32>) -> tensor<4x8x131xf32> {
  %m = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<4x8x131xf32>
  %f = linalg.fill ins(%m : f32) outs(%e : tensor<4x8x131xf32>) -> tensor<4x8x131xf32>
  %w = tensor.empty() : tensor<4xf32>
  %r = linalg.pooling_ncw_max {dilations = dense<3> : vector<1xi64>, strides = dense<2> : vector<1xi64>}
         ins(%x, %w : tensor<4x8x272xf32>, tensor<4xf32>) outs(%f : tensor<4x8x131xf32>) -> tensor<4x8x131xf32>
  return %r : tensor<4x8x131xf32>
})mlir";
  const char *rowSum = R"mlir(func.func @s_t0(%x: tensor<64x4096xf32>) -> tensor<64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %r = linalg.reduce ins(%x : tensor<64x4096xf32>) outs(%f : tensor<64xf32>) dimensions = [1]
    (%in: f32, %init: f32) {
      %s = arith.addf %in, %init : f32
      linalg.yield %s : f32
    }
  return %r : tensor<64xf32>
})mlir";
  MLIRContext ctx(registry());
  auto windowSeeds = [&](const char *src, unsigned &legal) {
    OwningOpRef<ModuleOp> m = parseSourceString<ModuleOp>(src, &ctx);
    EXPECT_TRUE(m);
    func::FuncOp task = *m->getOps<func::FuncOp>().begin();
    LegalityCache legality(task, TaskFamily::Reduction);
    std::vector<Genome> out;
    for (const Genome &g : seedGenomes(Genome(), TaskFamily::Reduction, seedTraits(task)))
      if (g.knobs.groupOutputs > 1 && g.knobs.reduction == ReductionStrategy::Thread) {
        out.push_back(g);
        legal += legality.isLegal(g);
      }
    return out;
  };
  unsigned legal = 0;
  std::vector<Genome> seeds = windowSeeds(pool, legal);
  ASSERT_FALSE(seeds.empty());
  EXPECT_EQ(legal, seeds.size());
  EXPECT_EQ(seeds.front().knobs.vectorWidth, 4);
  PTXOptions ptx;
  for (const Genome &g : seeds) {
    CompiledVariant v = compileVariant(registry(), pool, TaskFamily::Reduction, g, ptx, "");
    ASSERT_TRUE(v.ok) << g.key(TaskFamily::Reduction) << "\n" << v.diagnostics;
  }
  legal = 0;
  EXPECT_TRUE(windowSeeds(rowSum, legal).empty());
}

TEST(GenomeTest, ScansAreSeededWithParallelScansThatLower) {
  // A warp or a block per line with 128-bit loads comes first; every seed legal for a row
  // cumsum of 16 x 512 f32 lowers (8 x f32 is not: 32-byte accesses), and most are legal.
  MLIRContext ctx(registry());
  OwningOpRef<ModuleOp> m = parseSourceString<ModuleOp>(kScan, &ctx);
  ASSERT_TRUE(m);
  func::FuncOp task = *m->getOps<func::FuncOp>().begin();
  FailureOr<TaskFamily> family = classifyTask(task);
  ASSERT_TRUE(succeeded(family));
  EXPECT_EQ(*family, TaskFamily::Scan);
  std::vector<Genome> seeds = seedGenomes(Genome(), TaskFamily::Scan);
  ASSERT_FALSE(seeds.empty());
  EXPECT_EQ(seeds.front().knobs.reduction, ReductionStrategy::Warp);
  EXPECT_EQ(seeds.front().knobs.vectorWidth, 4);
  EXPECT_TRUE(llvm::any_of(seeds, [](const Genome &g) {
    return g.knobs.reduction == ReductionStrategy::Block && g.knobs.elementsPerThread > 1;
  }));
  LegalityCache legal(task, TaskFamily::Scan);
  unsigned legalSeeds = 0;
  for (const Genome &g : seeds)
    legalSeeds += legal.isLegal(g);
  EXPECT_EQ(legalSeeds, seeds.size() - 2); // the two with vector_width 8
  // The knob dimensions the mutators draw from are the family's.
  std::vector<KnobDimension> dims = knobDimensions(TaskFamily::Scan);
  std::vector<std::string> names;
  for (const KnobDimension &d : dims)
    names.push_back(d.name);
  EXPECT_EQ(names, (std::vector<std::string>{"reduction", "vector_width", "block_size",
                                             "elements_per_thread"}));
}

TEST(GenomeTest, FewLongRowsAreSeededWithRowSplitsThatLower) {
  // A LayerNorm over 16 rows of 65536 gives a block per row only 16 blocks: its seeds split each
  // row over 16 and 32 blocks (rows x slices from 256, about 2 and 4 per SM of 132), and every
  // one lowers to three kernels (the sum's partials, the centered squares' partials, the
  // output). Many rows, or short ones, get no seeds.
  const char *ln = R"mlir(func.func @ln_t0(%x: tensor<16x65536xf32>) -> tensor<16x65536xf32> {
  %z = arith.constant 0.0 : f32
  %n = arith.constant 1.52587890625e-05 : f32
  %er = tensor.empty() : tensor<16xf32>
  %acc = linalg.fill ins(%z : f32) outs(%er : tensor<16xf32>) -> tensor<16xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<16x65536xf32>) outs(%acc : tensor<16xf32>) {
  ^bb0(%in: f32, %a: f32):
    %s = arith.addf %in, %a : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  %e = tensor.empty() : tensor<16x65536xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %sum : tensor<16x65536xf32>, tensor<16xf32>) outs(%e : tensor<16x65536xf32>) {
  ^bb0(%v: f32, %s: f32, %o: f32):
    %m = arith.mulf %s, %n : f32
    %d = arith.subf %v, %m : f32
    linalg.yield %d : f32
  } -> tensor<16x65536xf32>
  %sq = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%c : tensor<16x65536xf32>) outs(%acc : tensor<16xf32>) {
  ^bb0(%in: f32, %a: f32):
    %p = arith.mulf %in, %in : f32
    %s = arith.addf %p, %a : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%c, %sq : tensor<16x65536xf32>, tensor<16xf32>) outs(%e : tensor<16x65536xf32>) {
  ^bb0(%v: f32, %q: f32, %o: f32):
    %var = arith.mulf %q, %n : f32
    %r = math.rsqrt %var : f32
    %t = arith.mulf %v, %r : f32
    linalg.yield %t : f32
  } -> tensor<16x65536xf32>
  return %y : tensor<16x65536xf32>
})mlir";
  MLIRContext ctx(registry());
  OwningOpRef<ModuleOp> m = parseSourceString<ModuleOp>(ln, &ctx);
  ASSERT_TRUE(m);
  func::FuncOp task = *m->getOps<func::FuncOp>().begin();
  FailureOr<TaskFamily> family = classifyTask(task);
  ASSERT_TRUE(succeeded(family));
  EXPECT_EQ(*family, TaskFamily::Rows);
  std::optional<std::pair<int64_t, int64_t>> extent = rowProgramExtent(task);
  ASSERT_TRUE(extent);
  EXPECT_EQ(*extent, (std::pair<int64_t, int64_t>{16, 65536}));
  std::vector<Genome> seeds =
      seedGenomes(Genome(), TaskFamily::Rows, traits(16 * 65536, 0, extent->first, extent->second));
  ASSERT_FALSE(seeds.empty());
  EXPECT_EQ(seeds.front().knobs.rowSplit, 16);
  EXPECT_EQ(seeds.front().knobs.reduction, ReductionStrategy::Block);
  EXPECT_TRUE(llvm::any_of(seeds, [](const Genome &g) { return g.knobs.rowSplit == 32; }));
  EXPECT_TRUE(llvm::all_of(seeds, [](const Genome &g) { return g.knobs.rowSplit > 1; }));
  EXPECT_TRUE(seedGenomes(Genome(), TaskFamily::Rows, traits(0, 0, 4096, 65536)).empty());
  EXPECT_TRUE(seedGenomes(Genome(), TaskFamily::Rows, traits(0, 0, 16, 1024)).empty());
  EXPECT_TRUE(seedGenomes(Genome(), TaskFamily::Rows).empty());
  // 128 rows (a GroupNorm's groups): 2 and 4 slices.
  EXPECT_EQ(seedGenomes(Genome(), TaskFamily::Rows, traits(0, 0, 128, 1 << 21)).front().knobs.rowSplit, 2);

  // Every seed but one is legal (32 slices of 512 chunks leave no whole chunk in registers for
  // each of 1024 threads: cache_row is refused), and each lowers to three launches.
  LegalityCache legal(task, TaskFamily::Rows);
  PTXOptions ptx;
  unsigned legalSeeds = 0;
  for (const Genome &g : seeds) {
    if (!legal.isLegal(g))
      continue;
    ++legalSeeds;
    CompiledVariant v = compileVariant(registry(), ln, TaskFamily::Rows, g, ptx, "");
    ASSERT_TRUE(v.ok) << g.key(TaskFamily::Rows) << "\n" << v.diagnostics;
    EXPECT_EQ(v.launches.size(), 3u) << g.key(TaskFamily::Rows);
  }
  EXPECT_EQ(legalSeeds, seeds.size() - 1);
  // cache_row counts the registers of a slice: 2 slices of 32768 over 256 threads would keep
  // 128 elements per thread, which is illegal (not lowered some other way).
  Genome cached = seeds.front();
  cached.knobs.rowSplit = 2;
  cached.knobs.blockSize = 256;
  cached.knobs.cacheRow = true;
  EXPECT_FALSE(legal.isLegal(cached));
  cached.knobs.rowSplit = 16;
  EXPECT_TRUE(legal.isLegal(cached));
  // The mutators draw row_split for row programs.
  std::vector<std::string> names;
  for (const KnobDimension &d : knobDimensions(TaskFamily::Rows))
    names.push_back(d.name);
  EXPECT_TRUE(llvm::is_contained(names, "row_split"));
}

TEST(GenomeTest, StridedRowsAreSeededWithAThreadPerCachedRow) {
  // RMSNorm over the channels of NCHW: a row program only with its loops interchanged
  // (strided rows of 64 channels, 16 * 32 * 32 of them).
  const char *rms = R"mlir(
#x = affine_map<(n, c, h, w) -> (n, c, h, w)>
#s = affine_map<(n, c, h, w) -> (n, h, w)>
func.func @rms(%x: tensor<16x64x32x32xf32>) -> tensor<16x64x32x32xf32> {
  %zero = arith.constant 0.0 : f32
  %c = arith.constant 64.0 : f32
  %e = tensor.empty() : tensor<16x32x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x32x32xf32>) -> tensor<16x32x32xf32>
  %ss = linalg.generic {indexing_maps = [#x, #s], iterator_types = ["parallel", "reduction", "parallel", "parallel"]}
      ins(%x : tensor<16x64x32x32xf32>) outs(%f : tensor<16x32x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    %t = arith.addf %m, %o : f32
    linalg.yield %t : f32
  } -> tensor<16x32x32xf32>
  %e4 = tensor.empty() : tensor<16x64x32x32xf32>
  %y = linalg.generic {indexing_maps = [#x, #s, #x], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %ss : tensor<16x64x32x32xf32>, tensor<16x32x32xf32>) outs(%e4 : tensor<16x64x32x32xf32>) {
  ^bb0(%a: f32, %q: f32, %o: f32):
    %mean = arith.divf %q, %c : f32
    %r = math.sqrt %mean : f32
    %v = arith.divf %a, %r : f32
    linalg.yield %v : f32
  } -> tensor<16x64x32x32xf32>
  return %y : tensor<16x64x32x32xf32>
})mlir";
  MLIRContext ctx(registry());
  OwningOpRef<ModuleOp> m = parseSourceString<ModuleOp>(rms, &ctx);
  ASSERT_TRUE(m);
  func::FuncOp task = *m->getOps<func::FuncOp>().begin();
  FailureOr<TaskFamily> family = classifyTask(task);
  ASSERT_TRUE(succeeded(family));
  EXPECT_EQ(*family, TaskFamily::Rows);
  EXPECT_TRUE(rowProgramIsStrided(task));
  std::optional<std::pair<int64_t, int64_t>> extent = rowProgramExtent(task);
  ASSERT_TRUE(extent);
  EXPECT_EQ(*extent, (std::pair<int64_t, int64_t>{16 * 32 * 32, 64}));
  // Matching does not change the function (the lowering interchanges its own copy).
  mlir::linalg::GenericOp first = *task.getBody().getOps<mlir::linalg::GenericOp>().begin();
  EXPECT_EQ(first.getIteratorTypesArray()[1], mlir::utils::IteratorType::reduction);
  std::vector<Genome> seeds = seedGenomes(Genome(), TaskFamily::Rows, traits(16 * 64 * 32 * 32, 0,
                                          extent->first, extent->second, /*stridedRows=*/true));
  ASSERT_FALSE(seeds.empty());
  EXPECT_TRUE(llvm::all_of(seeds, [](const Genome &g) {
    return g.knobs.reduction == ReductionStrategy::Thread && g.knobs.vectorWidth == 1;
  }));
  EXPECT_TRUE(seeds.front().knobs.cacheRow);
  // Each is legal and lowers to one launch.
  LegalityCache legal(task, TaskFamily::Rows);
  PTXOptions ptx;
  for (const Genome &g : seeds) {
    ASSERT_TRUE(legal.isLegal(g)) << g.key(TaskFamily::Rows);
    CompiledVariant v = compileVariant(registry(), rms, TaskFamily::Rows, g, ptx, "");
    ASSERT_TRUE(v.ok) << g.key(TaskFamily::Rows) << "\n" << v.diagnostics;
    EXPECT_EQ(v.launches.size(), 1u) << g.key(TaskFamily::Rows);
  }
  // Contiguous rows get no such seeds.
  EXPECT_TRUE(seedGenomes(Genome(), TaskFamily::Rows, traits(0, 0, 4096, 64)).empty());
}

// A softmax over long rows is seeded with the fast forms of exp (fast_math) and one seed
// without; the fast kernel calls __nv_fast_expf (ex2.approx of x * log2 e), the accurate one
// libdevice's range-reduced expf. A row program without exponentials gets no such seeds.
TEST(GenomeTest, RowProgramsWithExponentialsAreSeededWithFastMath) {
  const char *softmax = R"mlir(
func.func @softmax(%x: tensor<64x65536xf32>) -> tensor<64x65536xf32> {
  %e = tensor.empty() : tensor<64x65536xf32>
  %y = linalg.softmax dimension(1) ins(%x : tensor<64x65536xf32>) outs(%e : tensor<64x65536xf32>) -> tensor<64x65536xf32>
  return %y : tensor<64x65536xf32>
})mlir";
  const char *rowSum = R"mlir(
func.func @norm(%x: tensor<64x65536xf32>) -> tensor<64x65536xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(r, c) -> (r, c)>, affine_map<(r, c) -> (r)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<64x65536xf32>) outs(%f : tensor<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.addf %a, %o : f32
    linalg.yield %t : f32
  } -> tensor<64xf32>
  %e2 = tensor.empty() : tensor<64x65536xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(r, c) -> (r, c)>, affine_map<(r, c) -> (r)>, affine_map<(r, c) -> (r, c)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : tensor<64x65536xf32>, tensor<64xf32>) outs(%e2 : tensor<64x65536xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = math.rsqrt %b : f32
    %t = arith.mulf %a, %r : f32
    linalg.yield %t : f32
  } -> tensor<64x65536xf32>
  return %y : tensor<64x65536xf32>
})mlir";
  MLIRContext ctx(registry());
  OwningOpRef<ModuleOp> m = parseSourceString<ModuleOp>(softmax, &ctx);
  OwningOpRef<ModuleOp> n = parseSourceString<ModuleOp>(rowSum, &ctx);
  ASSERT_TRUE(m && n);
  func::FuncOp task = *m->getOps<func::FuncOp>().begin();
  EXPECT_TRUE(hasFastMathForms(task));
  EXPECT_FALSE(hasFastMathForms(*n->getOps<func::FuncOp>().begin()));
  // Many rows (4096: no row_split seeds): the five fast-math seeds, four with it.
  std::vector<Genome> seeds = seedGenomes(Genome(), TaskFamily::Rows, traits(4096 * 65536, 0, 4096,
                                          65536, /*stridedRows=*/false, /*fastMathForms=*/true));
  ASSERT_EQ(seeds.size(), 5u);
  EXPECT_EQ(llvm::count_if(seeds, [](const Genome &g) { return g.knobs.fastMath; }), 4);
  EXPECT_TRUE(seedGenomes(Genome(), TaskFamily::Rows, traits(4096 * 65536, 0, 4096, 65536)).empty());
  // Few long rows: the row_split seeds first, then these.
  std::vector<Genome> few = seedGenomes(Genome(), TaskFamily::Rows, traits(64 * 65536, 0, 64, 65536,
                                        /*stridedRows=*/false, /*fastMathForms=*/true));
  EXPECT_GT(few.front().knobs.rowSplit, 1);
  EXPECT_TRUE(few.back().knobs.fastMath == false && few.back().knobs.vectorWidth == 4);
  LegalityCache legal(task, TaskFamily::Rows);
  PTXOptions ptx;
  for (const Genome &g : seeds) {
    ASSERT_TRUE(legal.isLegal(g)) << g.key(TaskFamily::Rows);
    CompiledVariant v = compileVariant(registry(), softmax, TaskFamily::Rows, g, ptx, "");
    ASSERT_TRUE(v.ok) << g.key(TaskFamily::Rows) << "\n" << v.diagnostics;
    EXPECT_NE(v.ptx.find("ex2.approx"), std::string::npos);
    // libdevice's accurate expf rounds x * log2 e downwards to split it (fma.rm); the fast form
    // is one multiplication and ex2.approx.
    EXPECT_EQ(v.ptx.find("fma.rm.f32") == std::string::npos, g.knobs.fastMath)
        << g.key(TaskFamily::Rows);
  }
}
