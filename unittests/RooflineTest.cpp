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
  c.fp32TFlops = 50;
  c.f16MmaTFlops = 500;
  return c;
}
} // namespace

TEST(RooflineTest, MemoryBoundFloorIsBytesOverBandwidth) {
  TaskCost cost;
  cost.bytes = 4e9; // 4 GB at 4000 GB/s = 1 ms
  cost.flops = 1e9;
  RooflineVerdict v = judge(cost, h200(), 2.0);
  EXPECT_DOUBLE_EQ(v.floorMs, 1.0);
  EXPECT_DOUBLE_EQ(v.achievedGBps, 2000);
  EXPECT_DOUBLE_EQ(v.fractionOfCopy, 0.5);
  EXPECT_FALSE(v.belowFloor);
  EXPECT_TRUE(judge(cost, h200(), 0.5).belowFloor);
  // Noise just under the floor is tolerated.
  EXPECT_FALSE(judge(cost, h200(), 0.95).belowFloor);
}

TEST(RooflineTest, ComputeBoundFloorUsesTheFastestApplicableUnit) {
  TaskCost cost;
  cost.bytes = 1e6;
  cost.flops = 5e13; // 1 s at 50 TFLOP/s
  EXPECT_DOUBLE_EQ(judge(cost, h200(), 2000).floorMs, 1000);
  cost.halfPrecisionContraction = true; // tensor cores: 0.1 s at 500 TFLOP/s
  RooflineVerdict v = judge(cost, h200(), 200);
  EXPECT_DOUBLE_EQ(v.floorMs, 100);
  EXPECT_DOUBLE_EQ(v.fractionOfPeak, 0.5);
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
  EXPECT_DOUBLE_EQ(mm.flops, 2.0 * 64 * 16 * 32); // mulf + addf per point; extf is free
  EXPECT_TRUE(mm.halfPrecisionContraction);
  TaskCost sm = estimateCost(m->lookupSymbol<func::FuncOp>("sm"), plan);
  EXPECT_DOUBLE_EQ(sm.flops, 5.0 * 800);
  EXPECT_FALSE(sm.halfPrecisionContraction);
}
