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
#include <limits>
#include <map>
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
  EXPECT_EQ(elementKindOf(b.getI1Type()), ElementKind::I1);
  EXPECT_EQ(elementKindOf(b.getIntegerType(4)), ElementKind::Unsupported);
  EXPECT_EQ(symbolizeElementKind("f16"), ElementKind::F16);
  EXPECT_EQ(symbolizeElementKind("i1"), ElementKind::I1);
  EXPECT_EQ(elementKindName(ElementKind::I1), "i1");
  EXPECT_FALSE(symbolizeElementKind("f8").has_value());
}

// A boolean buffer (torch.bool's layout: a byte per element) gets 0 and 1 only, both often.
TEST(InputGeneratorTest, BooleansAreZeroOrOne) {
  EXPECT_EQ(contract::elementBytes(ElementKind::I1), 1);
  EXPECT_FALSE(contract::isFloat(ElementKind::I1));
  EXPECT_EQ(maxFinite(ElementKind::I1), 1.0);
  InputRange r = defaultRange(ElementKind::I1);
  int counts[2] = {0, 0};
  for (uint64_t i = 0; i < 4096; ++i) {
    double v = generatedValue(/*seed=*/7, /*buffer=*/1, i, ElementKind::I1, r);
    ASSERT_TRUE(v == 0.0 || v == 1.0) << "element " << i << " is " << v;
    ++counts[static_cast<int>(v)];
  }
  EXPECT_GT(counts[0], 1500);
  EXPECT_GT(counts[1], 1500);
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

//===----------------------------------------------------------------------===//
// Input distributions (BufferContract.h's fillValue: the GPU fill evaluates the same function)
//===----------------------------------------------------------------------===//

namespace {
contract::FillParams fill(contract::Distribution d, ElementKind kind, double lo, double hi) {
  contract::FillParams p = contract::uniformFill(5, 3, kind, lo, hi);
  p.dist = static_cast<int32_t>(d);
  return p;
}
} // namespace

TEST(InputGeneratorTest, TheUniformStreamIsUnchanged) {
  // Seeds recorded by earlier runs keep reproducing their inputs: lo + (hi - lo) * u, two
  // roundings, then f32.
  for (uint64_t i = 0; i < 1000; ++i) {
    double u = contract::unitInterval(contract::hashElement(9, 2, i));
    double span = 4.0 - 0.5;
    double scaled = span * u;
    double v = 0.5 + scaled;
    ASSERT_EQ(generatedValue(9, 2, i, ElementKind::F32, {0.5, 4.0}),
              static_cast<double>(static_cast<float>(v)));
    ASSERT_EQ(generatedValue(contract::uniformFill(9, 2, ElementKind::F32, 0.5, 4.0), i),
              static_cast<double>(static_cast<float>(v)));
  }
}

TEST(InputGeneratorTest, NormalInputsHaveTheirCenterAndScale) {
  contract::FillParams p = fill(contract::Distribution::Normal, ElementKind::F32, -100, 100);
  p.center = 0.5;
  p.scale = 2;
  double sum = 0, sq = 0, maxDev = 0;
  const int n = 40000;
  for (int i = 0; i < n; ++i) {
    double x = generatedValue(p, i);
    ASSERT_EQ(x, static_cast<double>(static_cast<float>(x)));
    sum += x;
    sq += x * x;
    maxDev = std::max(maxDev, std::fabs(x - 0.5));
  }
  double mean = sum / n, sd = std::sqrt(sq / n - mean * mean);
  EXPECT_NEAR(mean, 0.5, 0.05);
  EXPECT_NEAR(sd, 2.0, 0.05);
  EXPECT_GT(maxDev, 2 * 2.5); // tails beyond 2.5 sigma exist
  EXPECT_LE(maxDev, 2 * 3.4642);
  // The clamp range bounds them.
  p.lo = 0;
  p.hi = 1;
  for (int i = 0; i < 2000; ++i) {
    double x = generatedValue(p, i);
    ASSERT_GE(x, 0.0);
    ASSERT_LE(x, 1.0);
  }
}

TEST(InputGeneratorTest, WideInputsSpreadOverBinades) {
  contract::FillParams p = fill(contract::Distribution::Wide, ElementKind::F32, -128, 128);
  p.emin = -12;
  p.emax = 6;
  std::set<int> binades;
  bool pos = false, neg = false;
  for (int i = 0; i < 20000; ++i) {
    double x = generatedValue(p, i);
    ASSERT_LT(std::fabs(x), 128.0);
    ASSERT_GE(std::fabs(x), std::ldexp(1.0, -12));
    binades.insert(std::ilogb(x));
    pos |= x > 0;
    neg |= x < 0;
  }
  EXPECT_EQ(binades.size(), 19u); // 2^-12 .. 2^6
  EXPECT_TRUE(pos && neg);
  // A positive range gives positive values only.
  p.lo = 0.1;
  p.hi = 4;
  for (int i = 0; i < 2000; ++i) {
    double x = generatedValue(p, i);
    ASSERT_GE(x, static_cast<double>(0.1f));
    ASSERT_LE(x, 4.0);
  }
}

TEST(InputGeneratorTest, SpecialValuesAreExactAndNotClamped) {
  contract::FillParams p = fill(contract::Distribution::Special, ElementKind::F16, -1, 1);
  p.numSpecial = 3;
  p.special[0] = 0;
  p.special[1] = 100;
  p.special[2] = -1;
  std::map<double, int> hits;
  const int n = 20000;
  int inRange = 0;
  for (int i = 0; i < n; ++i) {
    double x = generatedValue(p, i);
    if (x == 0 || x == 100 || x == -1)
      ++hits[x];
    inRange += x >= -1 && x <= 1;
  }
  for (double x : {0.0, 100.0, -1.0})
    EXPECT_NEAR(hits[x] / double(n), 0.25 / 3, 0.02) << x;
  EXPECT_NEAR(inRange / double(n), 1 - 0.25 / 3, 0.02); // the rest: uniform in [-1, 1)
}

TEST(InputGeneratorTest, IntegerDistributionsStayIntegralAndInRange) {
  for (contract::Distribution d :
       {contract::Distribution::Uniform, contract::Distribution::Normal,
        contract::Distribution::Wide, contract::Distribution::Special}) {
    contract::FillParams p = fill(d, ElementKind::I32, -8, 8);
    p.center = 0;
    p.scale = 4;
    p.numSpecial = 2;
    p.special[0] = 7;
    p.special[1] = -8;
    p.emin = 0; // wide: integer magnitudes in binades 1, 2-3, 4-7, 8-15 (clamped to 8)
    p.emax = 3;
    std::set<double> seen;
    for (int i = 0; i < 5000; ++i) {
      double x = generatedValue(p, i);
      ASSERT_EQ(x, std::floor(x));
      ASSERT_GE(x, -8);
      ASSERT_LE(x, 8);
      seen.insert(x);
    }
    EXPECT_GT(seen.size(), 10u) << static_cast<int>(d);
  }
}

TEST(InputGeneratorTest, MaxFiniteOfEachKind) {
  EXPECT_EQ(maxFinite(ElementKind::F16), 65504.0);
  EXPECT_EQ(maxFinite(ElementKind::F32), static_cast<double>(std::numeric_limits<float>::max()));
  EXPECT_EQ(maxFinite(ElementKind::I8), 127.0);
}
