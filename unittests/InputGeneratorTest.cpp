//===- InputGeneratorTest.cpp - the CPU side of the buffer contract ----------===//

#include "evo/Evaluation/InputGenerator.h"
#include "evo/Evaluation/Verifier.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/APFloat.h"
#include "gtest/gtest.h"
#include <cmath>
#include <set>

using namespace evo;
using namespace mlir;

TEST(InputGeneratorTest, ValuesAreDeterministicAndDependOnSeedBufferAndIndex) {
  double a = generatedValue(7, 0, 123, ElementKind::F32, {-1, 1});
  EXPECT_EQ(a, generatedValue(7, 0, 123, ElementKind::F32, {-1, 1}));
  EXPECT_NE(a, generatedValue(8, 0, 123, ElementKind::F32, {-1, 1}));
  EXPECT_NE(a, generatedValue(7, 1, 123, ElementKind::F32, {-1, 1}));
  EXPECT_NE(a, generatedValue(7, 0, 124, ElementKind::F32, {-1, 1}));
}

TEST(InputGeneratorTest, FloatsStayInRangeAndAreExactlyRepresentable) {
  double sum = 0;
  for (uint64_t i = 0; i < 20000; ++i) {
    double v = generatedValue(3, 2, i, ElementKind::F32, {0.5, 4.0});
    ASSERT_GE(v, 0.5);
    ASSERT_LE(v, 4.0);
    ASSERT_EQ(v, static_cast<double>(static_cast<float>(v)));
    sum += v;
  }
  EXPECT_NEAR(sum / 20000, 2.25, 0.05); // uniform: mean (lo + hi) / 2
  for (uint64_t i = 0; i < 2000; ++i) {
    double h = generatedValue(3, 2, i, ElementKind::F16, {-1, 1});
    llvm::APFloat f(h);
    bool lost = false;
    f.convert(llvm::APFloat::IEEEhalf(), llvm::APFloat::rmNearestTiesToEven, &lost);
    ASSERT_FALSE(lost) << h << " is not an f16 value";
    double b = generatedValue(3, 2, i, ElementKind::BF16, {-1, 1});
    llvm::APFloat g(b);
    g.convert(llvm::APFloat::BFloat(), llvm::APFloat::rmNearestTiesToEven, &lost);
    ASSERT_FALSE(lost) << b << " is not a bf16 value";
  }
}

TEST(InputGeneratorTest, IntegersCoverTheClosedRange) {
  std::set<double> seen;
  for (uint64_t i = 0; i < 5000; ++i) {
    double v = generatedValue(1, 0, i, ElementKind::I32, {-8, 8});
    ASSERT_EQ(v, std::floor(v));
    ASSERT_GE(v, -8);
    ASSERT_LE(v, 8);
    seen.insert(v);
  }
  EXPECT_EQ(seen.size(), 17u);
}

TEST(InputGeneratorTest, ArgumentRangesComeFromTheAttribute) {
  MLIRContext ctx;
  ctx.loadDialect<func::FuncDialect, tensor::TensorDialect>();
  const char *src = R"mlir(
    func.func @f(%a: tensor<4xf32> {evo.range = [0.1, 2.0]}, %b: tensor<4xi32>) -> tensor<4xf32> {
      return %a : tensor<4xf32>
    }
    func.func @g(%a: tensor<4xf32> {evo.range = [2.0, 1.0]}) -> tensor<4xf32> {
      return %a : tensor<4xf32>
    })mlir";
  OwningOpRef<ModuleOp> m = parseSourceString<ModuleOp>(src, &ctx);
  ASSERT_TRUE(m);
  auto ranges = argumentRanges(m->lookupSymbol<func::FuncOp>("f"));
  ASSERT_TRUE(succeeded(ranges));
  EXPECT_EQ((*ranges)[0], (InputRange{0.1, 2.0}));
  EXPECT_EQ((*ranges)[1], (InputRange{-8, 8}));
  std::string msg;
  ScopedDiagnosticHandler h(&ctx, [&](Diagnostic &d) {
    msg = d.str();
    return success();
  });
  EXPECT_TRUE(failed(argumentRanges(m->lookupSymbol<func::FuncOp>("g"))));
  EXPECT_NE(msg.find("finite lo < hi"), std::string::npos);
}

TEST(InputGeneratorTest, KindsOfTypes) {
  MLIRContext ctx;
  Builder b(&ctx);
  EXPECT_EQ(elementKindOf(b.getF32Type()), ElementKind::F32);
  EXPECT_EQ(elementKindOf(b.getBF16Type()), ElementKind::BF16);
  EXPECT_EQ(elementKindOf(b.getI8Type()), ElementKind::I8);
  EXPECT_EQ(elementKindOf(b.getI1Type()), ElementKind::Unsupported);
  EXPECT_EQ(symbolizeElementKind("f16"), ElementKind::F16);
  EXPECT_FALSE(symbolizeElementKind("f8").has_value());
}

TEST(SamplesTest, EdgesAreAlwaysCheckedAndTheRestIsSampled) {
  std::vector<uint64_t> s = chooseSamples(1 << 20, 1000, 5);
  EXPECT_LE(s.size(), 1000u);
  EXPECT_GT(s.size(), 900u);
  EXPECT_TRUE(std::is_sorted(s.begin(), s.end()));
  EXPECT_EQ(s.front(), 0u);
  EXPECT_EQ(s.back(), (1u << 20) - 1);
  EXPECT_TRUE(std::binary_search(s.begin(), s.end(), (1u << 20) - 32));
  EXPECT_EQ(chooseSamples(1 << 20, 1000, 5), s);
  std::vector<uint64_t> all = chooseSamples(100, 1000, 5);
  EXPECT_EQ(all.size(), 100u);
}
