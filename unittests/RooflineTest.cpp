//===- RooflineTest.cpp - the floor and the cost of a task --------------------===//

#include "evo/Evaluation/Roofline.h"
#include "evo/Evaluation/Verifier.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "gtest/gtest.h"
#include <cstdlib>

using namespace evo;
using namespace mlir;

namespace {
Ceilings h200() {
  Ceilings c;
  c.copyGBps = 4000;
  c.readGBps = 4400;
  c.writeGBps = 4000;
  c.l2Bytes = 0;
  c.fp32TFlops = 50;
  c.f16MmaTFlops = 500;
  return c;
}
} // namespace

TEST(RooflineTest, MemoryFloorIsTheSlowerOfReadingAndWriting) {
  TaskCost cost;
  cost.readBytes = 4.4e9; // 1 ms at 4400 GB/s
  cost.writeBytes = 2e9;  // 0.5 ms at 4000 GB/s
  cost.bytes = cost.readBytes + cost.writeBytes;
  cost.flops = 1e9;
  RooflineVerdict v = judge(cost, h200(), 2.0);
  EXPECT_DOUBLE_EQ(v.readMs, 1.0);
  EXPECT_DOUBLE_EQ(v.writeMs, 0.5);
  EXPECT_DOUBLE_EQ(v.floorMs, 1.0); // the larger term, not the sum (which is no bound)
  EXPECT_DOUBLE_EQ(v.achievedGBps, 3200);
  EXPECT_DOUBLE_EQ(v.fractionOfCopy, 0.8);
  EXPECT_FALSE(v.belowFloor);
  EXPECT_TRUE(judge(cost, h200(), 0.5).belowFloor);
  // Noise just under the floor is tolerated.
  EXPECT_FALSE(judge(cost, h200(), 0.95).belowFloor);
  cost.writeBytes = 8e9; // now writing dominates: 2 ms
  EXPECT_DOUBLE_EQ(judge(cost, h200(), 3.0).floorMs, 2.0);
}

TEST(RooflineTest, AnHonestReadOnlyKernelAboveTheCopyCeilingIsNeverFlagged) {
  // Measured on the H200: a GEMV reading 1.07 GB ran at 4.43 TB/s, above copy (4.24 TB/s
  // read + write). The floor from the copy ceiling (bytes / copy) would have called it
  // impossible; the read ceiling does not.
  Ceilings c = h200();
  c.copyGBps = 4240;
  c.readGBps = 4450;
  TaskCost gemv;
  gemv.readBytes = 1.07e9 + 16384 * 4;
  gemv.writeBytes = 65536 * 4;
  gemv.bytes = gemv.readBytes + gemv.writeBytes;
  gemv.flops = 2 * 1.07e9 / 4;
  double ms = gemv.readBytes / (4430 * 1e6); // 1.07 GB at 4.43 TB/s, in ms
  RooflineVerdict v = judge(gemv, c, ms);
  EXPECT_FALSE(v.belowFloor);
  EXPECT_GT(v.fractionOfCopy, 1.0);
  // Even at the measured read ceiling itself, with the default slack.
  EXPECT_FALSE(judge(gemv, c, v.readMs).belowFloor);
  EXPECT_TRUE(judge(gemv, c, 0.8 * v.readMs).belowFloor);
}

TEST(RooflineTest, WritesTheL2CanHoldAreNotCounted) {
  Ceilings c = h200();
  c.l2Bytes = 50e6;
  TaskCost cost;
  cost.writeBytes = 40e6;
  cost.bytes = cost.writeBytes;
  EXPECT_DOUBLE_EQ(judge(cost, c, 1e-3).writeMs, 0.0);
  cost.writeBytes = 4.05e9;
  EXPECT_DOUBLE_EQ(judge(cost, c, 2.0).writeMs, 1.0);
}

TEST(RooflineTest, ComputeFloorUsesTheFastestApplicableUnit) {
  TaskCost cost;
  cost.readBytes = 1e6;
  cost.bytes = 1e6;
  cost.flops = 5e13; // 1 s at 50 TFLOP/s
  EXPECT_DOUBLE_EQ(judge(cost, h200(), 2000).floorMs, 1000);
  // f16/bf16 payloads: packed half2 math at twice the FP32 rate.
  cost.halfPrecisionMath = true;
  EXPECT_DOUBLE_EQ(judge(cost, h200(), 2000).floorMs, 500);
  cost.halfPrecisionMath = false;
  // A contraction could run on tensor cores (TF32 for f32, with wgmma's headroom over the
  // measured mma.sync rate): 5e13 / (2 * 500 TFLOP/s) = 50 ms.
  cost.contraction = true;
  EXPECT_DOUBLE_EQ(judge(cost, h200(), 2000).floorMs, 1000.0 / (kTensorCoreHeadroom * 10));
  cost.halfPrecisionContraction = true;
  RooflineVerdict v = judge(cost, h200(), 200);
  EXPECT_DOUBLE_EQ(v.floorMs, 1000.0 / (kTensorCoreHeadroom * 10));
  EXPECT_DOUBLE_EQ(v.fractionOfPeak, 0.5); // reported against the measured mma.sync rate
}

TEST(RooflineTest, Tf32ContractionsReportAgainstTheTf32Rate) {
  // An f32 contraction of 5e13 flops with f32-matmul=tf32: the floor stays on the f16 tensor-core
  // bound (TF32 runs at half that rate, so an honest TF32 kernel is never below it); the fraction
  // of peak is against the derived TF32 rate, half the measured f16 one (250 TFLOP/s here).
  TaskCost cost;
  cost.readBytes = cost.bytes = 1e6;
  cost.flops = 5e13;
  cost.contraction = true;
  RooflineVerdict ieee = judge(cost, h200(), 200);
  cost.f32Matmul = F32Matmul::TF32;
  RooflineVerdict tf32 = judge(cost, h200(), 200); // 250 TFLOP/s achieved
  EXPECT_DOUBLE_EQ(h200().tf32TFlops(), 250);
  EXPECT_DOUBLE_EQ(tf32.floorMs, ieee.floorMs);
  EXPECT_FALSE(tf32.belowFloor);
  EXPECT_DOUBLE_EQ(ieee.fractionOfPeak, 5.0); // against FP32: meaningless for a TF32 kernel
  EXPECT_DOUBLE_EQ(tf32.fractionOfPeak, 1.0);
  // A kernel at the TF32 peak is above the floor by the tensor-core headroom and the f16/TF32
  // ratio: never rejected.
  EXPECT_GE(h200().tf32TFlops() * 2 * kTensorCoreHeadroom, tensorCoreBoundTFlops(h200()));
  // 3xTF32: three tensor-core products per f32 product, a third of the TF32 rate.
  cost.f32Matmul = F32Matmul::TF32x3;
  EXPECT_DOUBLE_EQ(judge(cost, h200(), 600).fractionOfPeak, 1.0);
}

TEST(F32MatmulTest, ToleranceFollowsThePlansMode) {
  // share/evo-opt/tolerances.json, "f32_matmul": looser for TF32 than for 3xTF32, both looser
  // than f32's own, which an IEEE plan keeps.
  const double f32 = defaultTolerances().at("f32");
  EXPECT_EQ(f32MatmulTolerance(F32Matmul::Ieee), f32);
  EXPECT_EQ(f32MatmulTolerance(F32Matmul::TF32), 8e-3);
  EXPECT_EQ(f32MatmulTolerance(F32Matmul::TF32x3), 2e-4);

  MLIRContext ctx;
  ctx.loadDialect<EvoDialect>();
  auto task = [&](F32Matmul mode) {
    ScheduleKnobs k;
    k.f32Matmul = mode;
    TaskDesc t;
    t.family = TaskFamily::Matmul;
    t.knobs = k.toAttr(&ctx, TaskFamily::Matmul);
    return t;
  };
  LaunchPlan plan;
  plan.tasks.push_back(task(F32Matmul::Ieee));
  EXPECT_EQ(planF32Matmul(plan), F32Matmul::Ieee);
  std::map<std::string, double> rtol = defaultTolerances();
  applyF32MatmulTolerance(plan, rtol);
  EXPECT_EQ(rtol, defaultTolerances()); // never loosened without the opt-in

  plan.tasks.push_back(task(F32Matmul::TF32x3));
  EXPECT_EQ(planF32Matmul(plan), F32Matmul::TF32x3);
  applyF32MatmulTolerance(plan, rtol);
  EXPECT_EQ(rtol.at("f32"), 2e-4);
  EXPECT_EQ(rtol.at("f16"), defaultTolerances().at("f16"));
  EXPECT_EQ(rtol.at("bf16"), defaultTolerances().at("bf16"));

  // The least accurate task decides; a larger tolerance given by the user stays.
  plan.tasks.push_back(task(F32Matmul::TF32));
  EXPECT_EQ(planF32Matmul(plan), F32Matmul::TF32);
  applyF32MatmulTolerance(plan, rtol);
  EXPECT_EQ(rtol.at("f32"), 8e-3);
  rtol["f32"] = 0.05;
  applyF32MatmulTolerance(plan, rtol);
  EXPECT_EQ(rtol.at("f32"), 0.05);
}

namespace {
/// An f16 matmul of 2e15 flops (1 s at 2000 TFLOP/s), whose bytes give no floor worth noting.
TaskCost halfMatmul() {
  TaskCost cost;
  cost.readBytes = cost.bytes = 1e6;
  cost.flops = 2e15;
  cost.contraction = cost.halfPrecisionContraction = true;
  return cost;
}
/// Milliseconds of `cost` at `tflops`.
double msAt(const TaskCost &cost, double tflops) { return cost.flops / (tflops * 1e9); }
} // namespace

TEST(RooflineTest, AMeasuredWgmmaRateRaisesTheTensorCoreBound) {
  // A Hopper whose wgmma runs at 1.8x mma.sync: twice mma.sync (1000) would be no bound for it.
  Ceilings c = h200();
  c.f16WgmmaTFlops = 900;
  c.bf16WgmmaTFlops = 880;
  EXPECT_DOUBLE_EQ(c.wgmmaTFlops(), 900);
  EXPECT_DOUBLE_EQ(c.tensorCoreTFlops(), 900);
  EXPECT_DOUBLE_EQ(tensorCoreBoundTFlops(c), 900 * kWgmmaHeadroom);
  TaskCost cost = halfMatmul();
  RooflineVerdict v = judge(cost, c, msAt(cost, 0.95 * 900));
  EXPECT_DOUBLE_EQ(v.mathMs, msAt(cost, 900 * kWgmmaHeadroom));
  EXPECT_NEAR(v.fractionOfPeak, 0.95, 1e-12); // against the fastest measured unit
  EXPECT_FALSE(v.belowFloor);
  // At the measured peak, and a little above it (a warmer clock than when it was measured):
  // still possible.
  EXPECT_FALSE(judge(cost, c, msAt(cost, 900)).belowFloor);
  EXPECT_FALSE(judge(cost, c, msAt(cost, 1.3 * 900)).belowFloor);
  // Twice the wgmma peak is not.
  EXPECT_TRUE(judge(cost, c, msAt(cost, 2 * 900)).belowFloor);
  // Without the wgmma rate, mma.sync's guess (2 x 500) would have flagged the honest kernel at
  // 1.3x the wgmma peak: the measured rate is what keeps the floor a bound.
  Ceilings old = h200();
  EXPECT_TRUE(judge(cost, old, msAt(cost, 1.3 * 900)).belowFloor);
}

TEST(RooflineTest, TheTensorCoreBoundIsNeverBelowMmaSyncsGuess) {
  // A wgmma rate measured under 1.6x mma.sync (here under mma.sync itself: a microbenchmark gone
  // wrong) must not make the floor tighter than mma.sync's rate with its headroom.
  Ceilings c = h200();
  c.f16WgmmaTFlops = 400;
  EXPECT_DOUBLE_EQ(c.tensorCoreTFlops(), 500);
  EXPECT_DOUBLE_EQ(tensorCoreBoundTFlops(c), 500 * kTensorCoreHeadroom);
  TaskCost cost = halfMatmul();
  EXPECT_DOUBLE_EQ(judge(cost, c, 1000).mathMs, msAt(cost, 500 * kTensorCoreHeadroom));
  // A bf16-only measurement counts the same.
  Ceilings b = h200();
  b.bf16WgmmaTFlops = 1000;
  EXPECT_DOUBLE_EQ(tensorCoreBoundTFlops(b), 1000 * kWgmmaHeadroom);
}

TEST(RooflineTest, WithoutWgmmaTheFloorRestsOnMmaSync) {
  // Not compute capability 9.0, or the sm_90a module did not load: 0 and a status.
  Ceilings c = h200();
  c.wgmmaStatus = "unavailable: compute capability 8.0 (wgmma needs 9.0, sm_90a)";
  EXPECT_DOUBLE_EQ(c.wgmmaTFlops(), 0);
  EXPECT_DOUBLE_EQ(tensorCoreBoundTFlops(c), 500 * kTensorCoreHeadroom);
  TaskCost cost = halfMatmul();
  RooflineVerdict v = judge(cost, c, msAt(cost, 475));
  EXPECT_DOUBLE_EQ(v.mathMs, msAt(cost, 500 * kTensorCoreHeadroom));
  EXPECT_NEAR(v.fractionOfPeak, 0.95, 1e-12); // against mma.sync
  EXPECT_FALSE(v.belowFloor);
}

TEST(RooflineTest, OnlyContractionsGetTheTensorCoreBound) {
  Ceilings c = h200();
  c.f16WgmmaTFlops = 900;
  TaskCost cost = halfMatmul();
  // f32 contractions: TF32 could run them, at most at the f16 rate (the bound, not the report).
  cost.halfPrecisionContraction = false;
  RooflineVerdict f32 = judge(cost, c, 1000);
  EXPECT_DOUBLE_EQ(f32.mathMs, msAt(cost, 900 * kWgmmaHeadroom));
  EXPECT_DOUBLE_EQ(f32.fractionOfPeak, msAt(cost, 1) / 1000 / 50); // against FP32 FMA
  // Elementwise f32 arithmetic stays on the FMA rate, wgmma or not.
  cost.contraction = false;
  EXPECT_DOUBLE_EQ(judge(cost, c, 1000).mathMs, msAt(cost, 50));
}

TEST(RooflineTest, UnknownCeilingsGiveNoFloor) {
  TaskCost cost;
  cost.readBytes = cost.writeBytes = cost.bytes = 1e9;
  cost.flops = 1e12;
  RooflineVerdict v = judge(cost, Ceilings(), 1e-6);
  EXPECT_DOUBLE_EQ(v.floorMs, 0.0);
  EXPECT_FALSE(v.belowFloor);
}

#ifdef EVO_FAKE_WORKER
namespace {
/// Sets $EVO_CACHE_DIR to a fresh directory for the test's lifetime (the ceilings cache).
struct ScopedCacheDir {
  llvm::SmallString<128> dir;
  std::optional<std::string> old;
  ScopedCacheDir() {
    EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("evo-ceilings", dir));
    if (const char *o = std::getenv("EVO_CACHE_DIR"))
      old = o;
    ::setenv("EVO_CACHE_DIR", dir.c_str(), 1);
  }
  ~ScopedCacheDir() {
    if (old)
      ::setenv("EVO_CACHE_DIR", old->c_str(), 1);
    else
      ::unsetenv("EVO_CACHE_DIR");
    llvm::sys::fs::remove_directories(dir);
  }
};
WorkerOptions standIn() {
  WorkerOptions w;
  w.workerPath = EVO_FAKE_WORKER;
  return w;
}
} // namespace

TEST(RooflineTest, DeviceCeilingsCarryTheWgmmaRateThroughTheWorkerAndTheCache) {
  // The stand-in worker's device 0 is a Hopper whose wgmma rates were measured.
  ScopedCacheDir cache;
  llvm::Expected<Ceilings> c = deviceCeilings(standIn(), 0);
  ASSERT_TRUE(static_cast<bool>(c)) << llvm::toString(c.takeError());
  EXPECT_FALSE(c->fromCache);
  EXPECT_DOUBLE_EQ(c->f16MmaTFlops, 600);
  EXPECT_DOUBLE_EQ(c->f16WgmmaTFlops, 1000);
  EXPECT_DOUBLE_EQ(c->bf16WgmmaTFlops, 1010);
  EXPECT_EQ(c->wgmmaStatus, "measured");
  // 1.25 x 1010 is above 2 x 600: the measured wgmma rate sets the bound.
  EXPECT_DOUBLE_EQ(tensorCoreBoundTFlops(*c), 1010 * kWgmmaHeadroom);
  // The cache file (v4) keeps the wgmma keys, and a second call reads them back.
  llvm::SmallString<128> file(cache.dir);
  llvm::sys::path::append(file, "ceilings-v4-00.json");
  auto buf = llvm::MemoryBuffer::getFile(file);
  ASSERT_TRUE(static_cast<bool>(buf)) << file.str().str();
  llvm::Expected<llvm::json::Value> doc = llvm::json::parse((*buf)->getBuffer());
  ASSERT_TRUE(static_cast<bool>(doc)) << llvm::toString(doc.takeError());
  const llvm::json::Object *o = doc->getAsObject();
  ASSERT_TRUE(o);
  EXPECT_EQ(o->getNumber("f16_wgmma_tflops"), 1000);
  EXPECT_EQ(o->getNumber("bf16_wgmma_tflops"), 1010);
  EXPECT_EQ(o->getString("wgmma_status"), llvm::StringRef("measured"));
  EXPECT_FALSE(o->get("from_cache"));
  llvm::Expected<Ceilings> again = deviceCeilings(standIn(), 0);
  ASSERT_TRUE(static_cast<bool>(again)) << llvm::toString(again.takeError());
  EXPECT_TRUE(again->fromCache);
  EXPECT_DOUBLE_EQ(again->f16WgmmaTFlops, 1000);
  EXPECT_DOUBLE_EQ(again->bf16WgmmaTFlops, 1010);
  EXPECT_EQ(again->wgmmaStatus, "measured");
}

TEST(RooflineTest, DeviceCeilingsWithoutWgmmaKeepTheMmaSyncBound) {
  // Device 1: compute capability 8.0; device 2: a Hopper whose sm_90a module did not load.
  ScopedCacheDir cache;
  for (int device : {1, 2}) {
    llvm::Expected<Ceilings> c = deviceCeilings(standIn(), device);
    ASSERT_TRUE(static_cast<bool>(c)) << llvm::toString(c.takeError());
    EXPECT_DOUBLE_EQ(c->f16WgmmaTFlops, 0) << device;
    EXPECT_DOUBLE_EQ(c->bf16WgmmaTFlops, 0) << device;
    EXPECT_TRUE(llvm::StringRef(c->wgmmaStatus).starts_with("unavailable: ")) << c->wgmmaStatus;
    EXPECT_DOUBLE_EQ(c->tensorCoreTFlops(), 600);
    EXPECT_DOUBLE_EQ(tensorCoreBoundTFlops(*c), 600 * kTensorCoreHeadroom);
  }
  // A v3 cache file (from before the wgmma ceiling) is not read: the device is measured again.
  llvm::SmallString<128> v3(cache.dir);
  llvm::sys::path::append(v3, "ceilings-v3-00.json");
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(v3, ec);
    ASSERT_FALSE(ec);
    os << R"({"copy_gbps":1,"read_gbps":1,"write_gbps":1,"fp32_tflops":1,"f16_mma_tflops":1})";
  }
  llvm::Expected<Ceilings> c = deviceCeilings(standIn(), 0);
  ASSERT_TRUE(static_cast<bool>(c)) << llvm::toString(c.takeError());
  EXPECT_FALSE(c->fromCache);
  EXPECT_DOUBLE_EQ(c->f16WgmmaTFlops, 1000);
}
#endif

TEST(RooflineTest, CostCountsBuffersAndPayloadArithmetic) {
  MLIRContext ctx;
  ctx.loadDialect<func::FuncDialect, arith::ArithDialect, linalg::LinalgDialect,
                  tensor::TensorDialect, math::MathDialect>();
  const char *src = R"mlir(
    func.func @mm(%a: tensor<64x32xf16>, %b: tensor<32x16xf16>, %c: tensor<64x16xf32>) -> tensor<64x16xf32> {
      %r = linalg.matmul ins(%a, %b : tensor<64x32xf16>, tensor<32x16xf16>) outs(%c : tensor<64x16xf32>) -> tensor<64x16xf32>
      return %r : tensor<64x16xf32>
    }
    func.func @conv(%x: tensor<1x10x10x16xf16>, %w: tensor<8x3x3x16xf16>, %c: tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32> {
      %r = linalg.conv_2d_nhwc_fhwc ins(%x, %w : tensor<1x10x10x16xf16>, tensor<8x3x3x16xf16>) outs(%c : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
      return %r : tensor<1x8x8x8xf32>
    }
    func.func @sm(%x: tensor<8x100xf32>) -> tensor<8x100xf32> {
      %e = tensor.empty() : tensor<8x100xf32>
      %r = linalg.softmax dimension(1) ins(%x : tensor<8x100xf32>) outs(%e : tensor<8x100xf32>) -> tensor<8x100xf32>
      return %r : tensor<8x100xf32>
    })mlir";
  OwningOpRef<ModuleOp> m = parseSourceString<ModuleOp>(src, &ctx);
  ASSERT_TRUE(m);
  LaunchPlan plan;
  Builder b(&ctx);
  plan.buffers = {{"a", BufferRole::Input, MemRefType::get({64, 32}, b.getF16Type())},
                  {"b", BufferRole::Input, MemRefType::get({32, 16}, b.getF16Type())},
                  {"c", BufferRole::Input, MemRefType::get({64, 16}, b.getF32Type())},
                  {"r", BufferRole::Output, MemRefType::get({64, 16}, b.getF32Type())},
                  {"t", BufferRole::Scratch, MemRefType::get({1024}, b.getF32Type())}};
  TaskCost mm = estimateCost(m->lookupSymbol<func::FuncOp>("mm"), plan);
  EXPECT_DOUBLE_EQ(mm.bytes, 64 * 32 * 2 + 32 * 16 * 2 + 2 * 64 * 16 * 4);
  EXPECT_DOUBLE_EQ(mm.readBytes, 64 * 32 * 2 + 32 * 16 * 2 + 64 * 16 * 4);
  EXPECT_DOUBLE_EQ(mm.writeBytes, 64 * 16 * 4); // scratch counts neither way
  EXPECT_DOUBLE_EQ(mm.flops, 2.0 * 64 * 16 * 32); // mulf + addf per point; extf is free
  EXPECT_TRUE(mm.halfPrecisionContraction);
  EXPECT_TRUE(mm.contraction);
  // An f16 convolution is a tensor-core implicit GEMM: its fraction of peak is against the
  // tensor cores, not the FMA rate (a fraction above 1 was reported before).
  TaskCost conv = estimateCost(m->lookupSymbol<func::FuncOp>("conv"), plan);
  EXPECT_DOUBLE_EQ(conv.flops, 2.0 * 8 * 8 * 8 * 3 * 3 * 16);
  EXPECT_TRUE(conv.contraction);
  EXPECT_TRUE(conv.halfPrecisionContraction);
  TaskCost sm = estimateCost(m->lookupSymbol<func::FuncOp>("sm"), plan);
  EXPECT_DOUBLE_EQ(sm.flops, 5.0 * 800);
  EXPECT_FALSE(sm.halfPrecisionContraction);
  EXPECT_FALSE(sm.contraction);
  EXPECT_FALSE(sm.halfPrecisionMath);
}

TEST(RooflineTest, AScanWrittenAsATriangularSumCostsAScan) {
  // A cumsum over rows of 1024 written as a masked triangular reduction evaluates its payload
  // 1024 times per element, but a scan does O(1) work per element: counted as written, the math
  // floor (2^30 points x addf) would be far above the time of an honest scan kernel.
  MLIRContext ctx;
  ctx.loadDialect<func::FuncDialect, arith::ArithDialect, linalg::LinalgDialect,
                  tensor::TensorDialect>();
  const char *src = R"mlir(
    func.func @cumsum(%x: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<1024x1024xf32>
      %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
      %r = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]}
          ins(%x : tensor<1024x1024xf32>) outs(%acc : tensor<1024x1024xf32>) {
        ^bb0(%in: f32, %o: f32):
          %j = linalg.index 1 : index
          %k = linalg.index 2 : index
          %keep = arith.cmpi ule, %k, %j : index
          %v = arith.select %keep, %in, %zero : f32
          %s = arith.addf %o, %v : f32
          linalg.yield %s : f32
      } -> tensor<1024x1024xf32>
      return %r : tensor<1024x1024xf32>
    })mlir";
  OwningOpRef<ModuleOp> m = parseSourceString<ModuleOp>(src, &ctx);
  ASSERT_TRUE(m);
  LaunchPlan plan;
  Builder b(&ctx);
  plan.buffers = {{"x", BufferRole::Input, MemRefType::get({1024, 1024}, b.getF32Type())},
                  {"r", BufferRole::Output, MemRefType::get({1024, 1024}, b.getF32Type())}};
  TaskCost scan = estimateCost(m->lookupSymbol<func::FuncOp>("cumsum"), plan);
  EXPECT_DOUBLE_EQ(scan.flops, 1024.0 * 1024); // one addf per element (the fill is not counted)
  EXPECT_FALSE(scan.contraction);
}

TEST(RooflineTest, TablesAGatherOrASliceReadInPartAreNotInTheFloor) {
  // An embedding reads the rows its ids name, not the table; a slice reads a part of its source.
  // Counting those buffers whole made the floor of an honest embedding kernel (4 MiB read of a
  // 51 MB table) higher than its measured time on the H200. A padded source is read whole.
  MLIRContext ctx;
  ctx.loadDialect<func::FuncDialect, arith::ArithDialect, linalg::LinalgDialect,
                  tensor::TensorDialect>();
  const char *src = R"mlir(
    func.func @f(%table: tensor<1000x64xf32>, %ids: tensor<32xi32>, %x: tensor<64x64xf32>, %y: tensor<8x8xf32>)
        -> (tensor<32x64xf32>, tensor<16x64xf32>, tensor<10x10xf32>) {
      %e = tensor.empty() : tensor<32x64xf32>
      %g = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
          ins(%ids : tensor<32xi32>) outs(%e : tensor<32x64xf32>) {
        ^bb0(%id: i32, %o: f32):
          %j = linalg.index 1 : index
          %row = arith.index_cast %id : i32 to index
          %v = tensor.extract %table[%row, %j] : tensor<1000x64xf32>
          linalg.yield %v : f32
      } -> tensor<32x64xf32>
      %s = tensor.extract_slice %x[0, 0] [16, 64] [1, 1] : tensor<64x64xf32> to tensor<16x64xf32>
      %e2 = tensor.empty() : tensor<16x64xf32>
      %n = linalg.negf ins(%s : tensor<16x64xf32>) outs(%e2 : tensor<16x64xf32>) -> tensor<16x64xf32>
      %z = arith.constant 0.0 : f32
      %p = tensor.pad %y low[1, 1] high[1, 1] {
      ^bb0(%a: index, %b: index):
        tensor.yield %z : f32
      } : tensor<8x8xf32> to tensor<10x10xf32>
      %e3 = tensor.empty() : tensor<10x10xf32>
      %q = linalg.negf ins(%p : tensor<10x10xf32>) outs(%e3 : tensor<10x10xf32>) -> tensor<10x10xf32>
      return %g, %n, %q : tensor<32x64xf32>, tensor<16x64xf32>, tensor<10x10xf32>
    })mlir";
  OwningOpRef<ModuleOp> m = parseSourceString<ModuleOp>(src, &ctx);
  ASSERT_TRUE(m);
  LaunchPlan plan;
  Builder b(&ctx);
  plan.buffers = {{"table", BufferRole::Input, MemRefType::get({1000, 64}, b.getF32Type())},
                  {"ids", BufferRole::Input, MemRefType::get({32}, b.getI32Type())},
                  {"x", BufferRole::Input, MemRefType::get({64, 64}, b.getF32Type())},
                  {"y", BufferRole::Input, MemRefType::get({8, 8}, b.getF32Type())},
                  {"g", BufferRole::Output, MemRefType::get({32, 64}, b.getF32Type())}};
  TaskCost cost = estimateCost(m->lookupSymbol<func::FuncOp>("f"), plan);
  EXPECT_DOUBLE_EQ(cost.readBytes, 32 * 4 + 8 * 8 * 4); // the ids and the padded source
}

TEST(RooflineTest, AStridedConvolutionCountsTheRowsItReaches) {
  // A 1x1 convolution with stride 2 reads every other row and column of its image: counting the
  // whole image put the floor of an honest kernel at 4x what it must read. A stride-1 3x3
  // convolution reaches (at least) its output's extent of each dimension; a 1x1 conv with stride
  // 1 its whole image.
  MLIRContext ctx;
  ctx.loadDialect<func::FuncDialect, arith::ArithDialect, linalg::LinalgDialect,
                  tensor::TensorDialect>();
  const char *src = R"mlir(
    func.func @f(%x: tensor<1x8x64x64xf32>, %w: tensor<16x8x1x1xf32>, %y: tensor<1x8x64x64xf32>,
                 %v: tensor<16x8x3x3xf32>, %z: tensor<1x8x64x64xf32>)
        -> (tensor<1x16x32x32xf32>, tensor<1x16x62x62xf32>, tensor<1x16x64x64xf32>) {
      %c0 = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<1x16x32x32xf32>
      %f = linalg.fill ins(%c0 : f32) outs(%e : tensor<1x16x32x32xf32>) -> tensor<1x16x32x32xf32>
      %a = linalg.conv_2d_nchw_fchw {strides = dense<2> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
          ins(%x, %w : tensor<1x8x64x64xf32>, tensor<16x8x1x1xf32>) outs(%f : tensor<1x16x32x32xf32>) -> tensor<1x16x32x32xf32>
      %e2 = tensor.empty() : tensor<1x16x62x62xf32>
      %f2 = linalg.fill ins(%c0 : f32) outs(%e2 : tensor<1x16x62x62xf32>) -> tensor<1x16x62x62xf32>
      %b = linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
          ins(%y, %v : tensor<1x8x64x64xf32>, tensor<16x8x3x3xf32>) outs(%f2 : tensor<1x16x62x62xf32>) -> tensor<1x16x62x62xf32>
      %e3 = tensor.empty() : tensor<1x16x64x64xf32>
      %f3 = linalg.fill ins(%c0 : f32) outs(%e3 : tensor<1x16x64x64xf32>) -> tensor<1x16x64x64xf32>
      %c = linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
          ins(%z, %w : tensor<1x8x64x64xf32>, tensor<16x8x1x1xf32>) outs(%f3 : tensor<1x16x64x64xf32>) -> tensor<1x16x64x64xf32>
      return %a, %b, %c : tensor<1x16x32x32xf32>, tensor<1x16x62x62xf32>, tensor<1x16x64x64xf32>
    })mlir";
  OwningOpRef<ModuleOp> m = parseSourceString<ModuleOp>(src, &ctx);
  ASSERT_TRUE(m);
  LaunchPlan plan;
  Builder b(&ctx);
  auto f32 = b.getF32Type();
  plan.buffers = {{"x", BufferRole::Input, MemRefType::get({1, 8, 64, 64}, f32)},
                  {"w", BufferRole::Input, MemRefType::get({16, 8, 1, 1}, f32)},
                  {"y", BufferRole::Input, MemRefType::get({1, 8, 64, 64}, f32)},
                  {"v", BufferRole::Input, MemRefType::get({16, 8, 3, 3}, f32)},
                  {"z", BufferRole::Input, MemRefType::get({1, 8, 64, 64}, f32)}};
  TaskCost cost = estimateCost(m->lookupSymbol<func::FuncOp>("f"), plan);
  double image = 8 * 64 * 64 * 4;
  EXPECT_DOUBLE_EQ(cost.readBytes, image / 4 + 16 * 8 * 4 +        // x: every other row/column
                                       image * (62.0 / 64) * (62.0 / 64) + // y: 62 of 64 reached
                                       16 * 8 * 9 * 4 + image);           // v, z whole
}

TEST(RooflineTest, APoolingWindowCountsTheGapsItFills) {
  // maxpool1d with stride 2, dilation 3 and window 4 reads 2*o + 3*w: o alone reaches every
  // other element, but the window's odd offsets reach the rest, so the whole input is read (the
  // floor counted half, and an evolved kernel at the read ceiling showed 0.66 of it on the
  // H200). Stride 4 with a window of 2 (dilation 1) reads half of every group of four.
  MLIRContext ctx;
  ctx.loadDialect<func::FuncDialect, arith::ArithDialect, linalg::LinalgDialect,
                  tensor::TensorDialect>();
  const char *src = R"mlir(
    func.func @f(%x: tensor<2x3x1000xf32>, %y: tensor<2x3x1000xf32>)
        -> (tensor<2x3x496xf32>, tensor<2x3x250xf32>) {
      %m = arith.constant 0xFF800000 : f32
      %e = tensor.empty() : tensor<2x3x496xf32>
      %f = linalg.fill ins(%m : f32) outs(%e : tensor<2x3x496xf32>) -> tensor<2x3x496xf32>
      %w = tensor.empty() : tensor<4xf32>
      %a = linalg.pooling_ncw_max {dilations = dense<3> : vector<1xi64>, strides = dense<2> : vector<1xi64>}
          ins(%x, %w : tensor<2x3x1000xf32>, tensor<4xf32>) outs(%f : tensor<2x3x496xf32>) -> tensor<2x3x496xf32>
      %e2 = tensor.empty() : tensor<2x3x250xf32>
      %f2 = linalg.fill ins(%m : f32) outs(%e2 : tensor<2x3x250xf32>) -> tensor<2x3x250xf32>
      %w2 = tensor.empty() : tensor<2xf32>
      %b = linalg.pooling_ncw_max {dilations = dense<1> : vector<1xi64>, strides = dense<4> : vector<1xi64>}
          ins(%y, %w2 : tensor<2x3x1000xf32>, tensor<2xf32>) outs(%f2 : tensor<2x3x250xf32>) -> tensor<2x3x250xf32>
      return %a, %b : tensor<2x3x496xf32>, tensor<2x3x250xf32>
    })mlir";
  OwningOpRef<ModuleOp> m = parseSourceString<ModuleOp>(src, &ctx);
  ASSERT_TRUE(m);
  LaunchPlan plan;
  Builder b(&ctx);
  auto f32 = b.getF32Type();
  plan.buffers = {{"x", BufferRole::Input, MemRefType::get({2, 3, 1000}, f32)},
                  {"y", BufferRole::Input, MemRefType::get({2, 3, 1000}, f32)}};
  TaskCost cost = estimateCost(m->lookupSymbol<func::FuncOp>("f"), plan);
  // x: 2 residues mod 2 x 496 outputs = 992 of 1000; y: 2 residues mod 4 x 250 = 500.
  EXPECT_DOUBLE_EQ(cost.readBytes, 6 * 992 * 4 + 6 * 500 * 4);
}
