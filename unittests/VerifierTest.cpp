//===- VerifierTest.cpp - what the verifier asks the GPU worker, without a GPU ===//

#include "evo/Conversion/LowerToGPU.h"
#include "evo/Evaluation/InputGenerator.h"
#include "evo/Evaluation/Oracle.h"
#include "evo/Evaluation/Verifier.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "gtest/gtest.h"
#include <cmath>

using namespace mlir;
using namespace evo;
namespace json = llvm::json;

namespace {
/// Lowers `src` with evo-lower-to-gpu's entry point and returns the plan.
LaunchPlan lower(MLIRContext &ctx, const char *src, OwningOpRef<ModuleOp> &m) {
  m = parseSourceString<ModuleOp>(src, &ctx);
  EXPECT_TRUE(m);
  func::FuncOp f = *m->getOps<func::FuncOp>().begin();
  EXPECT_TRUE(succeeded(lowerFunction(f, LowerOptions())));
  auto gm = *m->getOps<gpu::GPUModuleOp>().begin();
  FailureOr<LaunchPlan> plan = LaunchPlan::fromModule(gm);
  EXPECT_TRUE(succeeded(plan));
  return *plan;
}

void load(MLIRContext &ctx) {
  ctx.loadDialect<func::FuncDialect, arith::ArithDialect, linalg::LinalgDialect,
                  tensor::TensorDialect, math::MathDialect, gpu::GPUDialect, scf::SCFDialect,
                  memref::MemRefDialect, vector::VectorDialect>();
}
} // namespace

TEST(VerifierTest, TheRequestCarriesBuffersRangesSeedsAndTheOraclesValues) {
  MLIRContext ctx;
  load(ctx);
  OwningOpRef<ModuleOp> m;
  LaunchPlan plan = lower(ctx, R"mlir(
    func.func @f(%x: tensor<16x8xf32> {evo.range = [0.5, 2.0]}, %b: tensor<8xf16>) -> tensor<16x8xf32> {
      %e = tensor.empty() : tensor<16x8xf32>
      %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                           iterator_types = ["parallel", "parallel"]}
          ins(%x, %b : tensor<16x8xf32>, tensor<8xf16>) outs(%e : tensor<16x8xf32>) {
      ^bb0(%u: f32, %v: f16, %o: f32):
        %w = arith.extf %v : f16 to f32
        %l = math.log %u : f32
        %s = arith.addf %l, %w : f32
        linalg.yield %s : f32
      } -> tensor<16x8xf32>
      return %r : tensor<16x8xf32>
    })mlir", m);
  VerifyOptions opts;
  opts.trials = 3;
  opts.seed = 40;
  FailureOr<std::unique_ptr<FunctionVerifier>> v =
      FunctionVerifier::create(plan, &ctx, UnknownLoc::get(&ctx), opts);
  ASSERT_TRUE(succeeded(v));
  const json::Object &req = (*v)->getRequestTemplate();
  EXPECT_EQ(req.getString("mode"), llvm::StringRef("evaluate"));

  const json::Array &buffers = *req.getArray("buffers");
  ASSERT_EQ(buffers.size(), 3u);
  const json::Object &x = *buffers[0].getAsObject();
  EXPECT_EQ(x.getString("kind"), llvm::StringRef("f32"));
  EXPECT_EQ(x.getInteger("elements"), 128);
  EXPECT_EQ(*(*x.getArray("range"))[0].getAsNumber(), 0.5);
  const json::Object &b = *buffers[1].getAsObject();
  EXPECT_EQ(b.getString("kind"), llvm::StringRef("f16"));
  EXPECT_EQ(*(*b.getArray("range"))[1].getAsNumber(), 1.0);
  EXPECT_EQ(buffers[2].getAsObject()->getString("role"), llvm::StringRef("output"));

  // 128 elements are cheap: every one is checked, in every trial, with the oracle's value
  // computed from the generator's inputs for that trial's seed.
  EXPECT_EQ((*v)->getNumChecked(), 128u);
  const json::Array &trials = *req.getArray("trials");
  ASSERT_EQ(trials.size(), 3u);
  for (unsigned t = 0; t < 3; ++t) {
    const json::Object &trial = *trials[t].getAsObject();
    uint64_t seed = *trial.getInteger("seed");
    EXPECT_EQ(seed, 40u + t);
    const json::Object &s = *(*trial.getArray("samples"))[0].getAsObject();
    EXPECT_EQ(s.getInteger("buffer"), 2);
    const json::Array &idx = *s.getArray("indices");
    const json::Array &exp = *s.getArray("expected");
    ASSERT_EQ(idx.size(), 128u);
    for (size_t k = 0; k < idx.size(); k += 17) {
      int64_t i = *idx[k].getAsInteger();
      double xv = generatedValue(seed, 0, i, ElementKind::F32, {0.5, 2.0});
      double bv = generatedValue(seed, 1, i % 8, ElementKind::F16, {-1, 1});
      EXPECT_DOUBLE_EQ(*exp[k].getAsNumber(), std::log(xv) + bv) << "trial " << t << " index " << i;
    }
  }
}

TEST(VerifierTest, ExpensiveOutputsAreSampledWithinTheBudget) {
  MLIRContext ctx;
  load(ctx);
  OwningOpRef<ModuleOp> m;
  LaunchPlan plan = lower(ctx, R"mlir(
    func.func @mm(%a: tensor<512x512xf32>, %b: tensor<512x512xf32>) -> tensor<512x512xf32> {
      %z = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<512x512xf32>
      %f = linalg.fill ins(%z : f32) outs(%e : tensor<512x512xf32>) -> tensor<512x512xf32>
      %r = linalg.matmul ins(%a, %b : tensor<512x512xf32>, tensor<512x512xf32>) outs(%f : tensor<512x512xf32>) -> tensor<512x512xf32>
      return %r : tensor<512x512xf32>
    })mlir", m);
  VerifyOptions opts;
  opts.trials = 1;
  opts.maxSamples = 1000;
  FailureOr<std::unique_ptr<FunctionVerifier>> v =
      FunctionVerifier::create(plan, &ctx, UnknownLoc::get(&ctx), opts);
  ASSERT_TRUE(succeeded(v));
  EXPECT_LE((*v)->getNumChecked(), 1000u);
  EXPECT_GT((*v)->getNumChecked(), 900u);
  const json::Object &s = *(*(*(*v)->getRequestTemplate().getArray("trials"))[0]
                                  .getAsObject()
                                  ->getArray("samples"))[0]
                               .getAsObject();
  const json::Array &idx = *s.getArray("indices");
  EXPECT_EQ(*idx.front().getAsInteger(), 0);
  EXPECT_EQ(*idx.back().getAsInteger(), 512 * 512 - 1);
  EXPECT_DOUBLE_EQ((*v)->getCost().flops, 2.0 * 512 * 512 * 512);
  EXPECT_DOUBLE_EQ((*v)->getCost().bytes, 3.0 * 512 * 512 * 4);
}

TEST(VerifierTest, ASourceTheOracleCannotReadIsADiagnostic) {
  MLIRContext ctx;
  load(ctx);
  LaunchPlan plan;
  plan.funcName = "f";
  plan.source = "func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> ";
  std::string msg;
  ScopedDiagnosticHandler h(&ctx, [&](Diagnostic &d) {
    msg += d.str() + "\n";
    return success();
  });
  EXPECT_TRUE(failed(FunctionVerifier::create(plan, &ctx, UnknownLoc::get(&ctx), VerifyOptions())));
  EXPECT_NE(msg.find("has no parseable source function"), std::string::npos) << msg;
}
