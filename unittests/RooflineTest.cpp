//===- RooflineTest.cpp - the floor and the cost of a task --------------------===//

#include "evo/Evaluation/Roofline.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "gtest/gtest.h"

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

TEST(RooflineTest, UnknownCeilingsGiveNoFloor) {
  TaskCost cost;
  cost.readBytes = cost.writeBytes = cost.bytes = 1e9;
  cost.flops = 1e12;
  RooflineVerdict v = judge(cost, Ceilings(), 1e-6);
  EXPECT_DOUBLE_EQ(v.floorMs, 0.0);
  EXPECT_FALSE(v.belowFloor);
}

TEST(RooflineTest, CostCountsBuffersAndPayloadArithmetic) {
  MLIRContext ctx;
  ctx.loadDialect<func::FuncDialect, arith::ArithDialect, linalg::LinalgDialect,
                  tensor::TensorDialect, math::MathDialect>();
  const char *src = R"mlir(
    func.func @mm(%a: tensor<64x32xf16>, %b: tensor<32x16xf16>, %c: tensor<64x16xf32>) -> tensor<64x16xf32> {
      %r = linalg.matmul ins(%a, %b : tensor<64x32xf16>, tensor<32x16xf16>) outs(%c : tensor<64x16xf32>) -> tensor<64x16xf32>
      return %r : tensor<64x16xf32>
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
  TaskCost sm = estimateCost(m->lookupSymbol<func::FuncOp>("sm"), plan);
  EXPECT_DOUBLE_EQ(sm.flops, 5.0 * 800);
  EXPECT_FALSE(sm.halfPrecisionContraction);
  EXPECT_FALSE(sm.contraction);
  EXPECT_FALSE(sm.halfPrecisionMath);
}
