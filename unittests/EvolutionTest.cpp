//===- EvolutionTest.cpp - population, mutators and the engine, without a GPU ---===//
//
// The population's selection, genomes' JSON, mutators and unrolling, the LLM reply contract
// and the engine; the seeds each task family gets are in SeedsTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "EvolutionFixture.h"
#include "evo/Evolution/Engine.h"
#include "evo/Evolution/Genome.h"
#include "evo/Evolution/LLMMutator.h"
#include "evo/Evolution/Population.h"
#include "evo/Evolution/RunStore.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FileSystem.h"
#include "ScratchDir.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "gtest/gtest.h"
#include <map>
#include <set>

using namespace mlir;
using namespace evo;

using evo::unittest::kElementwise;
using evo::unittest::kMatmul;
using evo::unittest::kReduction;
using evo::unittest::kScan;
using evo::unittest::kSoftmax;
using evo::unittest::registry;

namespace {
std::string tempDir(const char *name) { return evo::test::scratchDir(name); }
} // namespace

TEST(PopulationTest, RankSelectionFollowsOneOverRankPlusN) {
  Population p(4);
  for (int i = 0; i < 6; ++i)
    p.add({i, 10.0 - i, true, i});
  // Elitism: the 4 fastest (ids 5, 4, 3, 2), fastest first.
  ASSERT_EQ(p.members().size(), 4u);
  EXPECT_EQ(p.members()[0].id, 5);
  EXPECT_EQ(p.members()[3].id, 2);
  std::vector<double> prob = p.selectionProbabilities();
  double z = 1.0 / 4 + 1.0 / 5 + 1.0 / 6 + 1.0 / 7;
  for (int r = 0; r < 4; ++r)
    EXPECT_NEAR(prob[r], (1.0 / (r + 4)) / z, 1e-12);
  std::mt19937_64 rng(7);
  std::map<int64_t, int> counts;
  for (int i = 0; i < 40000; ++i)
    ++counts[p.select(rng)->id];
  for (int r = 0; r < 4; ++r)
    EXPECT_NEAR(counts[p.members()[r].id] / 40000.0, prob[r], 0.01);
}

TEST(PopulationTest, InvalidMembersFillOnlyEmptySlotsNewestFirst) {
  Population p(3);
  p.add({1, 5.0, true, 0});
  p.add({2, 0, false, 1});
  p.add({3, 0, false, 2});
  p.add({4, 0, false, 3});
  ASSERT_EQ(p.members().size(), 3u);
  EXPECT_EQ(p.members()[0].id, 1);
  EXPECT_EQ(p.members()[1].id, 4);
  EXPECT_EQ(p.members()[2].id, 3);
  // Selection ignores invalid members while a valid one exists.
  std::mt19937_64 rng(1);
  for (int i = 0; i < 100; ++i)
    EXPECT_EQ(p.select(rng)->id, 1);
  p.add({5, 4.0, true, 4});
  p.add({6, 3.0, true, 5});
  p.add({7, 6.0, true, 6});
  EXPECT_EQ(p.numValid(), 3u);
  EXPECT_EQ(p.best()->id, 6);
  p.add({6, 3.0, true, 7}); // the same candidate twice counts once
  EXPECT_EQ(p.members().size(), 3u);
}

TEST(GenomeTest, KnobsAndRewritesRoundTripThroughJson) {
  MLIRContext ctx;
  Genome g;
  g.knobs.blockSize = 128;
  g.knobs.reduction = ReductionStrategy::Block;
  g.knobs.vectorWidth = 4;
  g.rewrites.push_back({"unroll", 4});
  std::string knobs, rewrites;
  llvm::raw_string_ostream(knobs) << llvm::json::Value(g.knobsJson(TaskFamily::Reduction));
  llvm::raw_string_ostream(rewrites) << llvm::json::Value(g.rewritesJson());
  FailureOr<Genome> back = Genome::fromJson(knobs, rewrites, &ctx);
  ASSERT_TRUE(succeeded(back));
  EXPECT_EQ(back->key(TaskFamily::Reduction), g.key(TaskFamily::Reduction));
  EXPECT_EQ(back->rewrites.front().factor, 4);
  EXPECT_TRUE(failed(Genome::fromJson("{\"block_size\": 7}", "[]", &ctx)));
}

/// Every operator, on every family, gives genomes that lower, verify and compile to PTX.
TEST(GenomeTest, MutatorsOnlyProposeVariantsThatLowerAndCompile) {
  MLIRContext ctx(registry());
  std::mt19937_64 rng(3);
  PTXOptions ptx;
  for (auto [src, family] : {std::pair{kElementwise, TaskFamily::Elementwise},
                             std::pair{kReduction, TaskFamily::Reduction},
                             std::pair{kSoftmax, TaskFamily::Rows},
                             std::pair{kMatmul, TaskFamily::Matmul},
                             std::pair{kScan, TaskFamily::Scan}}) {
    OwningOpRef<ModuleOp> m = parseSourceString<ModuleOp>(src, &ctx);
    ASSERT_TRUE(m);
    func::FuncOp task = *m->getOps<func::FuncOp>().begin();
    LegalityCache legal(task, family);
    std::vector<Genome> pool = {Genome()};
    std::set<std::string> keys = {Genome().key(family)};
    for (int i = 0; i < 4; ++i) {
      const Genome &a = pool[rng() % pool.size()];
      const Genome &b = pool[rng() % pool.size()];
      std::optional<Genome> g = i % 3 == 0   ? mutateKnob(a, family, legal, rng)
                                : i % 3 == 1 ? mutateUnroll(a, family, legal, rng)
                                             : crossoverKnobs(a, b, family, legal, rng);
      if (!g)
        g = mutateKnob(a, family, legal, rng);
      ASSERT_TRUE(g.has_value()) << stringifyTaskFamily(family).str();
      CompiledVariant v = compileVariant(registry(), src, family, *g, ptx, "");
      EXPECT_TRUE(v.ok) << g->key(family) << "\n" << v.diagnostics;
      EXPECT_NE(v.ptx.find(".entry"), std::string::npos);
      // The variant's IR parses back and verifies.
      Block block;
      EXPECT_TRUE(succeeded(parseSourceString(v.ir, &block, ParserConfig(&ctx))));
      pool.push_back(*g);
    }
  }
}

TEST(GenomeTest, UnrollingChangesTheLoopsOfAKernel) {
  MLIRContext ctx(registry());
  PTXOptions ptx;
  Genome plain, unrolled;
  unrolled.rewrites.push_back({"unroll", 4});
  CompiledVariant a = compileVariant(registry(), kReduction, TaskFamily::Reduction, plain, ptx, "");
  CompiledVariant b = compileVariant(registry(), kReduction, TaskFamily::Reduction, unrolled, ptx, "");
  ASSERT_TRUE(a.ok && b.ok);
  EXPECT_NE(a.ptxHash, b.ptxHash);
  // 256 elements per row, unrolled by 4: the loop body holds four additions.
  size_t adds = 0;
  for (size_t p = b.ir.find("arith.addf"); p != std::string::npos; p = b.ir.find("arith.addf", p + 1))
    ++adds;
  EXPECT_GE(adds, 4u);
  // An elementwise kernel has no loop: the rewrite changes nothing, and the PTX hash says so.
  CompiledVariant c = compileVariant(registry(), kElementwise, TaskFamily::Elementwise, plain, ptx, "");
  CompiledVariant d = compileVariant(registry(), kElementwise, TaskFamily::Elementwise, unrolled, ptx, "");
  EXPECT_EQ(c.ptxHash, d.ptxHash);
}

namespace {
/// An LLM reply for the relu task's kernel @k0 (64 blocks of 256 threads over 64x256):
/// `globals` at the module's top level, then `body` with %x (input), %y (output), %b, %t,
/// %v = x[b, t], %m = max(v, 0) and %c0 defined; the body writes the output itself.
std::string reluReply(const std::string &globals, const std::string &body,
                      const std::string &attributions = "") {
  return "gpu.module @m {\n" + globals +
         "\n  gpu.func @k0(%x: memref<64x256xf32>, %y: memref<64x256xf32>) " + attributions +
         " kernel attributes {known_block_size = array<i32: 256, 1, 1>} {\n"
         "    %c0 = arith.constant 0 : index\n"
         "    %z = arith.constant 0.0 : f32\n"
         "    %t = gpu.thread_id x\n"
         "    %b = gpu.block_id x\n"
         "    %v = memref.load %x[%b, %t] : memref<64x256xf32>\n"
         "    %m = arith.maximumf %v, %z : f32\n" +
         body + "\n    gpu.return\n  }\n}\n";
}
const char *kStoreY = "    memref.store %m, %y[%b, %t] : memref<64x256xf32>";

CompiledVariant compileReluReply(const std::string &code) {
  PTXOptions ptx;
  CompiledVariant parent =
      compileVariant(registry(), kElementwise, TaskFamily::Elementwise, Genome(), ptx, "");
  EXPECT_TRUE(parent.ok) << parent.diagnostics;
  EXPECT_EQ(parent.numInputs, 1);
  return compileLLMVariant(registry(), code, VariantInfo::of(parent), ptx, "");
}
} // namespace

/// The reply contract refuses state that survives a launch, clocks and everything that bypasses
/// it, each with a reason the repair prompt carries; honest kernels with constant tables,
/// workgroup memory and allocas pass.
TEST(ContractTest, RejectsStateClocksAndEscapes) {
  struct Case {
    const char *what;
    std::string code;
    const char *reason; // nullptr: accepted
  };
  const std::string table =
      "  memref.global \"private\" constant @tab : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>";
  const Case cases[] = {
      {"honest", reluReply("", kStoreY), nullptr},
      {"constant table", reluReply(table, "    %g = memref.get_global @tab : memref<4xf32>\n"
                                          "    %k = memref.load %g[%c0] : memref<4xf32>\n"
                                          "    %p = arith.mulf %m, %k : f32\n"
                                          "    memref.store %p, %y[%b, %t] : memref<64x256xf32>"),
       nullptr},
      {"workgroup memory and an alloca",
       reluReply("", "    memref.store %m, %w[%t] : memref<256xf32, #gpu.address_space<workgroup>>\n"
                     "    %a = memref.alloca() : memref<1xf32>\n"
                     "    memref.store %m, %a[%c0] : memref<1xf32>\n"
                     "    %r = memref.load %a[%c0] : memref<1xf32>\n"
                     "    memref.store %r, %y[%b, %t] : memref<64x256xf32>",
                 "workgroup(%w : memref<256xf32, #gpu.address_space<workgroup>>)"),
       nullptr},
      {"atomics on the output", reluReply("", "    %o = memref.atomic_rmw assign %m, %y[%b, %t] : "
                                              "(f32, memref<64x256xf32>) -> f32"),
       nullptr},
      {"a writable global counter",
       reluReply("  memref.global \"private\" @count : memref<1xi32> = dense<0>",
                 std::string("    %g = memref.get_global @count : memref<1xi32>\n"
                             "    %one = arith.constant 1 : i32\n"
                             "    %n = memref.atomic_rmw addi %one, %g[%c0] : (i32, memref<1xi32>) -> i32\n") +
                     kStoreY),
       "memref.global @count is not `constant`: writable module-level state"},
      {"an uninitialized constant",
       reluReply("  memref.global \"private\" constant @u : memref<1xi32> = uninitialized", kStoreY),
       "memref.global constant @u has no initial value"},
      {"a store into a constant table",
       reluReply(table, std::string("    %g = memref.get_global @tab : memref<4xf32>\n"
                                    "    memref.store %m, %g[%c0] : memref<4xf32>\n") +
                            kStoreY),
       "@k0: 'memref.store' writes the global @tab (globals are read-only tables)"},
      {"a store into a table through a cast",
       reluReply(table, std::string("    %g = memref.get_global @tab : memref<4xf32>\n"
                                    "    %d = memref.cast %g : memref<4xf32> to memref<?xf32>\n"
                                    "    memref.store %m, %d[%c0] : memref<?xf32>\n") +
                            kStoreY),
       "writes the global @tab"},
      {"an llvm global", reluReply("  llvm.mlir.global internal @state(0 : i32) : i32", kStoreY),
       "'llvm.mlir.global' at the gpu.module's top level is not accepted: llvm globals"},
      {"inline asm reading %globaltimer",
       reluReply("", std::string("    %g = llvm.inline_asm has_side_effects \"mov.u64 $0, %globaltimer;\", "
                                 "\"=l\" : () -> i64\n") +
                         kStoreY),
       "@k0: 'llvm.inline_asm' is not allowed: inline assembly is not accepted"},
      {"inline asm declaring .global state",
       reluReply("", std::string("    llvm.inline_asm has_side_effects \".global .u32 seen; "
                                 "atom.global.add.u32 %r1, [seen], 1;\", \"\" : () -> ()\n") +
                         kStoreY),
       "inline assembly is not accepted"},
      {"raw pointers",
       reluReply("", std::string("    %one = llvm.mlir.constant(1 : i64) : i64\n"
                                 "    %p = llvm.alloca %one x f32 : (i64) -> !llvm.ptr\n"
                                 "    llvm.store %m, %p : f32, !llvm.ptr\n") +
                         kStoreY),
       "'llvm.mlir.constant' is not allowed: llvm dialect ops are not accepted"},
      {"a cast to a pointer",
       reluReply("", std::string("    %p = builtin.unrealized_conversion_cast %y : memref<64x256xf32> to !llvm.ptr\n") +
                         kStoreY),
       "'builtin.unrealized_conversion_cast' is not allowed"},
      {"%globaltimer",
       reluReply("", std::string("    %g = nvvm.read.ptx.sreg.globaltimer : i64\n") + kStoreY),
       "'nvvm.read.ptx.sreg.globaltimer' is not allowed: reading clocks, timers"},
      {"%clock64", reluReply("", std::string("    %g = nvvm.read.ptx.sreg.clock64 : i64\n") + kStoreY),
       "'nvvm.read.ptx.sreg.clock64' is not allowed"},
      {"%clock", reluReply("", std::string("    %g = nvvm.read.ptx.sreg.clock : i32\n") + kStoreY),
       "'nvvm.read.ptx.sreg.clock' is not allowed"},
      {"%gridid", reluReply("", std::string("    %g = nvvm.read.ptx.sreg.gridid : i64\n") + kStoreY),
       "'nvvm.read.ptx.sreg.gridid' is not allowed"},
      {"an atomic on the input",
       reluReply("", std::string("    %o = memref.atomic_rmw addf %m, %x[%b, %t] : (f32, memref<64x256xf32>) -> f32\n") +
                         kStoreY),
       "@k0: 'memref.atomic_rmw' writes argument 0, an input buffer (inputs are read-only)"},
      {"a store into the input through a subview",
       reluReply("", std::string("    %s = memref.subview %x[0, 0] [1, 256] [1, 1] : memref<64x256xf32> to "
                                 "memref<256xf32, strided<[1]>>\n"
                                 "    memref.store %m, %s[%t] : memref<256xf32, strided<[1]>>\n") +
                         kStoreY),
       "'memref.store' writes argument 0, an input buffer"},
      {"a vector store into the input",
       reluReply("", std::string("    %vv = vector.broadcast %m : f32 to vector<4xf32>\n"
                                 "    vector.store %vv, %x[%b, %c0] : memref<64x256xf32>, vector<4xf32>\n") +
                         kStoreY),
       "'vector.store' writes argument 0, an input buffer"},
      {"a store through an untraceable memref",
       reluReply("", std::string("    %c = arith.cmpf olt, %v, %z : f32\n"
                                 "    %s = arith.select %c, %x, %y : memref<64x256xf32>\n"
                                 "    memref.store %m, %s[%b, %t] : memref<64x256xf32>\n") +
                         kStoreY),
       "writes a memref made by 'arith.select', which cannot be traced"},
      {"an address",
       reluReply("", std::string("    %p = memref.extract_aligned_pointer_as_index %y : memref<64x256xf32> -> index\n") +
                         kStoreY),
       "'memref.extract_aligned_pointer_as_index' is not allowed: reading a buffer's address"},
      {"a device heap", reluReply("", std::string("    %a = memref.alloc() : memref<4xf32>\n") + kStoreY),
       "'memref.alloc' is not allowed: device heap allocation"},
      {"printf", reluReply("", std::string("    gpu.printf \"%f\", %m : f32\n") + kStoreY),
       "'gpu.printf' is not allowed: printing"},
      {"a host function", reluReply("  func.func @f() { return }", kStoreY),
       "'func.func' at the gpu.module's top level is not accepted: host code"},
  };
  for (const Case &c : cases) {
    CompiledVariant v = compileReluReply(c.code);
    if (!c.reason) {
      EXPECT_TRUE(v.ok) << c.what << ":\n" << v.diagnostics;
      EXPECT_NE(v.ptx.find(".entry"), std::string::npos) << c.what;
      continue;
    }
    EXPECT_FALSE(v.ok) << c.what;
    EXPECT_NE(v.diagnostics.find(c.reason), std::string::npos)
        << c.what << ": expected \"" << c.reason << "\" in:\n" << v.diagnostics;
  }
}

/// Whatever the lowering makes passes the device-code contract: the checker is not stricter
/// than our own kernels (LLM replies are often edits of them).
TEST(ContractTest, BuiltInVariantsComply) {
  MLIRContext ctx(registry());
  PTXOptions ptx;
  std::mt19937_64 rng(5);
  unsigned checked = 0;
  for (auto [src, family] : {std::pair{kElementwise, TaskFamily::Elementwise},
                             std::pair{kReduction, TaskFamily::Reduction},
                             std::pair{kSoftmax, TaskFamily::Rows},
                             std::pair{kMatmul, TaskFamily::Matmul},
                             std::pair{kScan, TaskFamily::Scan}}) {
    OwningOpRef<ModuleOp> m = parseSourceString<ModuleOp>(src, &ctx);
    ASSERT_TRUE(m);
    LegalityCache legal(*m->getOps<func::FuncOp>().begin(), family);
    std::vector<Genome> genomes = seedGenomes(Genome(), family);
    genomes.push_back(Genome());
    for (int i = 0; i < 6; ++i)
      if (std::optional<Genome> g = mutateKnob(genomes[rng() % genomes.size()], family, legal, rng))
        genomes.push_back(*g);
    for (const Genome &g : genomes) {
      if (!legal.isLegal(g))
        continue;
      CompiledVariant v = compileVariant(registry(), src, family, g, ptx, "");
      ASSERT_TRUE(v.ok) << v.diagnostics;
      Block block;
      ASSERT_TRUE(succeeded(parseSourceString(v.ir, &block, ParserConfig(&ctx))));
      auto gm = cast<gpu::GPUModuleOp>(block.front());
      EXPECT_EQ(checkDeviceCode(gm, v.launches, v.numInputs), "") << g.key(family);
      // Its kernels, sent back as an LLM reply, are accepted.
      CompiledVariant again = compileLLMVariant(registry(), v.ir, VariantInfo::of(v), ptx, "");
      EXPECT_TRUE(again.ok) << g.key(family) << "\n" << again.diagnostics;
      ++checked;
    }
  }
  EXPECT_GE(checked, 20u);
}

#ifdef EVO_FAKE_WORKER
TEST(EngineTest, EvolvesRecordsDeduplicatesAndResumes) {
  MLIRContext ctx(registry());
  std::string dir = tempDir("evo-engine-test");
  auto store = RunStore::open(dir, true);
  ASSERT_TRUE(static_cast<bool>(store)) << llvm::toString(store.takeError());
  TaskInput task{"relu_t0", "relu", TaskFamily::Elementwise, kElementwise, ScheduleKnobs()};
  EvolveOptions opts;
  opts.maxCandidates = 6;
  opts.samples = 3;
  opts.population = 3;
  opts.finalists = 2;
  opts.compileThreads = 2;
  opts.verify.trials = 2;
  opts.verify.worker.workerPath = EVO_FAKE_WORKER;
  opts.verify.worker.candidateTimeoutSeconds = 20;
  ProgressLine progress(true);
  llvm::Expected<TaskResult> r = evolveTask(task, &ctx, **store, opts, nullptr, progress);
  ASSERT_TRUE(static_cast<bool>(r)) << llvm::toString(r.takeError());

  std::vector<CandidateRecord> cands = (*store)->getCandidates("relu_t0");
  ASSERT_EQ(cands.front().op, "baseline");
  EXPECT_EQ(cands.front().verdict, "valid");
  EXPECT_EQ(cands.size(), 7u); // the baseline and 6 offspring
  std::set<std::string> evaluatedHashes;
  double bestFinal = INFINITY;
  for (const CandidateRecord &c : cands) {
    EXPECT_NE(c.verdict, "pending") << c.id;
    if (c.verdict == "valid" || c.verdict == "invalid")
      EXPECT_TRUE(evaluatedHashes.insert(c.ptxHash).second) << "PTX evaluated twice: " << c.id;
    if (c.verdict == "not-run")
      EXPECT_NE(c.reason.find("identical PTX"), std::string::npos);
    if (c.op != "baseline") {
      EXPECT_FALSE(c.parents.empty());
      EXPECT_FALSE(c.ir.empty());
    }
    if (std::isfinite(c.finalMedianMs))
      bestFinal = std::min(bestFinal, c.finalMedianMs);
  }
  EXPECT_EQ(r->bestMs, bestFinal);
  EXPECT_EQ((*store)->getTask("relu_t0")->status, "done");

  // Resuming with a larger budget continues where the run stopped.
  opts.maxCandidates = 10;
  llvm::Expected<TaskResult> again = evolveTask(task, &ctx, **store, opts, nullptr, progress);
  ASSERT_TRUE(static_cast<bool>(again)) << llvm::toString(again.takeError());
  std::vector<CandidateRecord> after = (*store)->getCandidates("relu_t0");
  EXPECT_LE(after.size(), 11u);
  EXPECT_GE(after.size(), cands.size());
  int baselines = 0;
  for (const CandidateRecord &c : after)
    baselines += c.op == "baseline";
  EXPECT_EQ(baselines, 1);
  llvm::sys::fs::remove_directories(dir);
}
#endif
