//===- OracleTest.cpp - the float64 reference interpreter ---------------------===//
//
// Elementwise chains, reductions, contractions, convolutions and row programs: every case
// parses a small function, evaluates it with the oracle and compares with the same
// computation written directly in C++. Inputs are multiples of 1/64 in [-2, 2), so sums of
// products are exact in doubles and those comparisons use exact equality; chains with
// transcendental functions use EXPECT_DOUBLE_EQ (4 ulps). The tensor ops, integer and NaN
// semantics, scalar arguments and diagnostics are in OracleOpsTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "OracleTestFixture.h"
#include <chrono>
#include <cmath>
#include <limits>

using namespace mlir;
using namespace evo;
using evo::unittest::inputValue;
using evo::unittest::kLayerNorm;
using evo::unittest::OracleTest;

TEST_F(OracleTest, ElementwiseWithBroadcast) {
  auto oracle = compile(R"mlir(
    func.func @f(%x: tensor<4x8xf32>, %bias: tensor<8xf32>, %col: tensor<4xf32>) -> tensor<4x8xf32> {
      %e = tensor.empty() : tensor<4x8xf32>
      %b = linalg.broadcast ins(%bias : tensor<8xf32>) outs(%e : tensor<4x8xf32>) dimensions = [0]
      %s = linalg.add ins(%x, %b : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
      %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>,
                                            affine_map<(i, j) -> (i, j)>],
                           iterator_types = ["parallel", "parallel"]}
          ins(%s, %col : tensor<4x8xf32>, tensor<4xf32>) outs(%e : tensor<4x8xf32>) {
      ^bb0(%a: f32, %c: f32, %o: f32):
        %m = arith.mulf %a, %c : f32
        linalg.yield %m : f32
      } -> tensor<4x8xf32>
      %two = arith.constant dense<2.0> : tensor<4x8xf32>
      %z = arith.subf %y, %two : tensor<4x8xf32>
      return %z : tensor<4x8xf32>
    })mlir");
  ASSERT_TRUE(oracle) << joinedMessages();
  ASSERT_EQ(oracle->getNumResults(), 1u);
  EXPECT_EQ(oracle->getResultShape(0), (ArrayRef<int64_t>{4, 8}));
  EXPECT_EQ(oracle->getNumArguments(), 3u);
  Oracle::Session s = oracle->session(inputValue);
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 8; ++j) {
      double expected = (inputValue(0, i * 8 + j) + inputValue(1, j)) * inputValue(2, i) - 2.0;
      EXPECT_EQ(s.valueAt(0, i * 8 + j), expected) << i << "," << j;
      EXPECT_EQ(s.valueAt(0, {i, j}), expected);
    }
}

TEST_F(OracleTest, ReluGeluChain) {
  auto oracle = compile(R"mlir(
    func.func @f(%x: tensor<16x32xf32>) -> tensor<16x32xf32> {
      %zeros = arith.constant dense<0.0> : tensor<16x32xf32>
      %r = arith.maximumf %x, %zeros : tensor<16x32xf32>
      %e = tensor.empty() : tensor<16x32xf32>
      %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                           iterator_types = ["parallel", "parallel"]}
          ins(%r : tensor<16x32xf32>) outs(%e : tensor<16x32xf32>) {
      ^bb0(%v: f32, %out: f32):
        %half = arith.constant 0.5 : f32
        %one = arith.constant 1.0 : f32
        %c0 = arith.constant 0.7978845608 : f32
        %c1 = arith.constant 0.044715 : f32
        %v2 = arith.mulf %v, %v : f32
        %v3 = arith.mulf %v2, %v : f32
        %t0 = arith.mulf %c1, %v3 : f32
        %t1 = arith.addf %v, %t0 : f32
        %t2 = arith.mulf %c0, %t1 : f32
        %t3 = math.tanh %t2 : f32
        %t4 = arith.addf %one, %t3 : f32
        %t5 = arith.mulf %half, %v : f32
        %g = arith.mulf %t5, %t4 : f32
        linalg.yield %g : f32
      } -> tensor<16x32xf32>
      return %y : tensor<16x32xf32>
    })mlir");
  ASSERT_TRUE(oracle) << joinedMessages();
  Oracle::Session s = oracle->session(inputValue);
  const double c0 = static_cast<double>(0.7978845608f), c1 = static_cast<double>(0.044715f);
  for (uint64_t i = 0; i < 16 * 32; ++i) {
    double v = std::max(inputValue(0, i), 0.0);
    double t = std::tanh(c0 * (v + c1 * (v * v * v)));
    EXPECT_DOUBLE_EQ(s.valueAt(0, i), 0.5 * v * (1.0 + t)) << i;
  }
  // relu then gelu: the gelu payload has 9 arithmetic ops, relu one.
  EXPECT_EQ(oracle->costPerElement(0), 10.0);
  EXPECT_EQ(s.getNumPayloadOps(), 10u * 16 * 32);
}

TEST_F(OracleTest, RowAndColumnReductions) {
  auto oracle = compile(R"mlir(
    func.func @f(%x: tensor<6x10xf32>) -> (tensor<6xf32>, tensor<10xf32>, tensor<10xf32>) {
      %zero = arith.constant 0.0 : f32
      %ninf = arith.constant 0xFF800000 : f32
      %e6 = tensor.empty() : tensor<6xf32>
      %e10 = tensor.empty() : tensor<10xf32>
      %acc6 = linalg.fill ins(%zero : f32) outs(%e6 : tensor<6xf32>) -> tensor<6xf32>
      %acc10 = linalg.fill ins(%zero : f32) outs(%e10 : tensor<10xf32>) -> tensor<10xf32>
      %max10 = linalg.fill ins(%ninf : f32) outs(%e10 : tensor<10xf32>) -> tensor<10xf32>
      %rows = linalg.reduce ins(%x : tensor<6x10xf32>) outs(%acc6 : tensor<6xf32>) dimensions = [1]
        (%in: f32, %init: f32) {
          %s = arith.addf %in, %init : f32
          linalg.yield %s : f32
        }
      %cols = linalg.reduce ins(%x : tensor<6x10xf32>) outs(%acc10 : tensor<10xf32>) dimensions = [0]
        (%in: f32, %init: f32) {
          %sq = arith.mulf %in, %in : f32
          %s = arith.addf %sq, %init : f32
          linalg.yield %s : f32
        }
      %colmax = linalg.generic {indexing_maps = [affine_map<(j, i) -> (i, j)>, affine_map<(j, i) -> (j)>],
                                iterator_types = ["parallel", "reduction"]}
          ins(%x : tensor<6x10xf32>) outs(%max10 : tensor<10xf32>) {
      ^bb0(%in: f32, %m: f32):
        %r = arith.maximumf %in, %m : f32
        linalg.yield %r : f32
      } -> tensor<10xf32>
      return %rows, %cols, %colmax : tensor<6xf32>, tensor<10xf32>, tensor<10xf32>
    })mlir");
  ASSERT_TRUE(oracle) << joinedMessages();
  ASSERT_EQ(oracle->getNumResults(), 3u);
  Oracle::Session s = oracle->session(inputValue);
  for (int64_t i = 0; i < 6; ++i) {
    double sum = 0;
    for (int64_t j = 0; j < 10; ++j)
      sum = inputValue(0, i * 10 + j) + sum;
    EXPECT_EQ(s.valueAt(0, i), sum) << i;
  }
  for (int64_t j = 0; j < 10; ++j) {
    double sum = 0, max = -std::numeric_limits<double>::infinity();
    for (int64_t i = 0; i < 6; ++i) {
      double v = inputValue(0, i * 10 + j);
      sum = v * v + sum;
      max = std::max(max, v);
    }
    EXPECT_EQ(s.valueAt(1, j), sum) << j;
    EXPECT_EQ(s.valueAt(2, j), max) << j;
  }
  EXPECT_EQ(oracle->costPerElement(0), 10.0);
  EXPECT_EQ(oracle->costPerElement(1), 12.0);
}

TEST_F(OracleTest, MatmulMatchesTripleLoop) {
  auto oracle = compile(R"mlir(
    func.func @f(%a: tensor<13x17xf32>, %b: tensor<17x11xf32>) -> tensor<13x11xf32> {
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<13x11xf32>
      %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<13x11xf32>) -> tensor<13x11xf32>
      %c = linalg.matmul ins(%a, %b : tensor<13x17xf32>, tensor<17x11xf32>)
                         outs(%acc : tensor<13x11xf32>) -> tensor<13x11xf32>
      return %c : tensor<13x11xf32>
    })mlir");
  ASSERT_TRUE(oracle) << joinedMessages();
  Oracle::Session s = oracle->session(inputValue);
  for (int64_t i = 0; i < 13; ++i)
    for (int64_t j = 0; j < 11; ++j) {
      double acc = 0;
      for (int64_t k = 0; k < 17; ++k)
        acc += inputValue(0, i * 17 + k) * inputValue(1, k * 11 + j);
      EXPECT_EQ(s.valueAt(0, {i, j}), acc) << i << "," << j;
    }
  EXPECT_EQ(oracle->costPerElement(0), 2.0 * 17);
  EXPECT_EQ(oracle->costOfAllElements(0), 2.0 * 17 * 13 * 11);
}

TEST_F(OracleTest, BatchMatmul) {
  auto oracle = compile(R"mlir(
    func.func @f(%a: tensor<3x5x7xf32>, %b: tensor<3x7x4xf32>) -> tensor<3x5x4xf32> {
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<3x5x4xf32>
      %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<3x5x4xf32>) -> tensor<3x5x4xf32>
      %c = linalg.batch_matmul ins(%a, %b : tensor<3x5x7xf32>, tensor<3x7x4xf32>)
                               outs(%acc : tensor<3x5x4xf32>) -> tensor<3x5x4xf32>
      return %c : tensor<3x5x4xf32>
    })mlir");
  ASSERT_TRUE(oracle) << joinedMessages();
  Oracle::Session s = oracle->session(inputValue);
  for (int64_t b = 0; b < 3; ++b)
    for (int64_t i = 0; i < 5; ++i)
      for (int64_t j = 0; j < 4; ++j) {
        double acc = 0;
        for (int64_t k = 0; k < 7; ++k)
          acc += inputValue(0, (b * 5 + i) * 7 + k) * inputValue(1, (b * 7 + k) * 4 + j);
        EXPECT_EQ(s.valueAt(0, {b, i, j}), acc);
      }
}

TEST_F(OracleTest, MixedF16ToF32Contraction) {
  // extf is the identity: the f16 inputs are already exact doubles.
  auto oracle = compile(R"mlir(
    func.func @f(%a: tensor<8x24xf16>, %b: tensor<24x6xf16>) -> tensor<8x6xf32> {
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<8x6xf32>
      %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8x6xf32>) -> tensor<8x6xf32>
      %c = linalg.matmul ins(%a, %b : tensor<8x24xf16>, tensor<24x6xf16>)
                         outs(%acc : tensor<8x6xf32>) -> tensor<8x6xf32>
      return %c : tensor<8x6xf32>
    })mlir");
  ASSERT_TRUE(oracle) << joinedMessages();
  Oracle::Session s = oracle->session(inputValue);
  for (int64_t i = 0; i < 8; ++i)
    for (int64_t j = 0; j < 6; ++j) {
      double acc = 0;
      for (int64_t k = 0; k < 24; ++k)
        acc += inputValue(0, i * 24 + k) * inputValue(1, k * 6 + j);
      EXPECT_EQ(s.valueAt(0, {i, j}), acc);
    }
}

TEST_F(OracleTest, SoftmaxAlongEitherDimension) {
  auto oracle = compile(R"mlir(
    func.func @f(%x: tensor<5x7xf32>) -> (tensor<5x7xf32>, tensor<5x7xf32>) {
      %e = tensor.empty() : tensor<5x7xf32>
      %d0 = linalg.softmax dimension(0) ins(%x : tensor<5x7xf32>) outs(%e : tensor<5x7xf32>) -> tensor<5x7xf32>
      %d1 = linalg.softmax dimension(1) ins(%x : tensor<5x7xf32>) outs(%e : tensor<5x7xf32>) -> tensor<5x7xf32>
      return %d0, %d1 : tensor<5x7xf32>, tensor<5x7xf32>
    })mlir");
  ASSERT_TRUE(oracle) << joinedMessages();
  auto x = [](int64_t i, int64_t j) { return inputValue(0, i * 7 + j); };
  Oracle::Session s = oracle->session(inputValue);
  for (int64_t i = 0; i < 5; ++i)
    for (int64_t j = 0; j < 7; ++j) {
      double max0 = -INFINITY, sum0 = 0, max1 = -INFINITY, sum1 = 0;
      for (int64_t k = 0; k < 5; ++k)
        max0 = std::max(max0, x(k, j));
      for (int64_t k = 0; k < 5; ++k)
        sum0 += std::exp(x(k, j) - max0);
      for (int64_t k = 0; k < 7; ++k)
        max1 = std::max(max1, x(i, k));
      for (int64_t k = 0; k < 7; ++k)
        sum1 += std::exp(x(i, k) - max1);
      EXPECT_DOUBLE_EQ(s.valueAt(0, {i, j}), std::exp(x(i, j) - max0) / sum0);
      EXPECT_DOUBLE_EQ(s.valueAt(1, {i, j}), std::exp(x(i, j) - max1) / sum1);
    }
  // Every column (dim 0) sums to one.
  for (int64_t j = 0; j < 7; ++j) {
    double total = 0;
    for (int64_t i = 0; i < 5; ++i)
      total += s.valueAt(0, {i, j});
    EXPECT_NEAR(total, 1.0, 1e-15);
  }
}

TEST_F(OracleTest, SoftmaxRowStatisticsAreMemoized) {
  auto oracle = compile(R"mlir(
    func.func @f(%x: tensor<3x1000xf32>) -> tensor<3x1000xf32> {
      %e = tensor.empty() : tensor<3x1000xf32>
      %y = linalg.softmax dimension(1) ins(%x : tensor<3x1000xf32>) outs(%e : tensor<3x1000xf32>) -> tensor<3x1000xf32>
      return %y : tensor<3x1000xf32>
    })mlir");
  ASSERT_TRUE(oracle) << joinedMessages();
  uint64_t reads = 0;
  Oracle::Session s = oracle->session([&](unsigned arg, uint64_t i) {
    ++reads;
    return inputValue(arg, i);
  });
  for (uint64_t i = 0; i < 1000; ++i)
    s.valueAt(0, 1000 + i);
  // Two passes for the row statistics, then one read per element: O(row), not O(row^2).
  EXPECT_EQ(reads, 3000u);
  EXPECT_EQ(s.getNumPayloadOps(), 4u * 1000 + 3 * 1000);
  EXPECT_EQ(oracle->costPerElement(0), 3.0 + 4 * 1000);
  EXPECT_EQ(oracle->costOfAllElements(0), 3.0 * 3000 + 4 * 3000);
}

TEST_F(OracleTest, MatmulReluChainEvaluatesEachProductOnce) {
  auto oracle = compile(R"mlir(
    func.func @f(%a: tensor<9x12xf32>, %b: tensor<12x10xf32>) -> tensor<9x10xf32> {
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<9x10xf32>
      %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<9x10xf32>) -> tensor<9x10xf32>
      %c = linalg.matmul ins(%a, %b : tensor<9x12xf32>, tensor<12x10xf32>)
                         outs(%acc : tensor<9x10xf32>) -> tensor<9x10xf32>
      %zeros = arith.constant dense<0.0> : tensor<9x10xf32>
      %r = arith.maximumf %c, %zeros : tensor<9x10xf32>
      return %r : tensor<9x10xf32>
    })mlir");
  ASSERT_TRUE(oracle) << joinedMessages();
  uint64_t reads = 0;
  Oracle::Session s = oracle->session([&](unsigned arg, uint64_t i) {
    ++reads;
    return inputValue(arg, i);
  });
  for (int64_t i = 0; i < 9; ++i)
    for (int64_t j = 0; j < 10; ++j) {
      double acc = 0;
      for (int64_t k = 0; k < 12; ++k)
        acc += inputValue(0, i * 12 + k) * inputValue(1, k * 10 + j);
      EXPECT_EQ(s.valueAt(0, {i, j}), std::max(acc, 0.0));
    }
  EXPECT_EQ(reads, 2u * 9 * 10 * 12);
  // A second pass is served from the memo.
  for (uint64_t i = 0; i < 90; ++i)
    s.valueAt(0, i);
  EXPECT_EQ(reads, 2u * 9 * 10 * 12);
  EXPECT_EQ(s.getNumMemoizedElements(), 2u * 90);
  EXPECT_EQ(oracle->costPerElement(0), 1.0 + 2 * 12);
}

TEST_F(OracleTest, LayerNormChain) {
  auto oracle = compile(kLayerNorm);
  ASSERT_TRUE(oracle) << joinedMessages();
  uint64_t reads = 0;
  Oracle::Session s = oracle->session([&](unsigned arg, uint64_t i) {
    ++reads;
    return inputValue(arg, i);
  });
  // One element: the row's sum (16 reads), then x - mean for the whole row (16 reads).
  (void)s.valueAt(0, {2, 5});
  EXPECT_EQ(reads, 32u);
  EXPECT_EQ(static_cast<double>(s.getNumPayloadOps()), oracle->costPerElement(0));
  for (int64_t i = 0; i < 4; ++i) {
    double sum = 0, sq = 0;
    for (int64_t j = 0; j < 16; ++j)
      sum = inputValue(0, i * 16 + j) + sum;
    double mean = sum / 16.0;
    for (int64_t j = 0; j < 16; ++j) {
      double c = inputValue(0, i * 16 + j) - mean;
      sq = c * c + sq;
    }
    double rs = 1.0 / std::sqrt(sq / 16.0 + static_cast<double>(1.0e-5f));
    for (int64_t j = 0; j < 16; ++j)
      EXPECT_EQ(s.valueAt(0, {i, j}), (inputValue(0, i * 16 + j) - mean) * rs) << i << "," << j;
  }
  // Each x element is read twice in all: once for the mean, once for x - mean.
  EXPECT_EQ(reads, 2u * 64);
  // One element: the row's sum (16) and mean, the row of the broadcast mean, of x - mean, of its
  // square (16 each), the row's sum of squares (16), var, + eps, rsqrt, and one element of the
  // broadcast and the scale.
  EXPECT_EQ(oracle->costPerElement(0), 16.0 + 1 + 16 + 16 + 16 + 16 + 1 + 1 + 1 + 1 + 1);
  // Full evaluation: sum (16 per row), mean, broadcast, x - mean, square, sum of squares, var,
  // + eps, rsqrt, broadcast, scale; a broadcast (a copy) counts one evaluation per element.
  EXPECT_EQ(oracle->costOfAllElements(0),
            4.0 * 16 + 4 + 64 + 64 + 64 + 4 * 16 + 4 + 4 + 4 + 64 + 64);
}

TEST_F(OracleTest, Conv2dNchwFchwMatchesDirectLoops) {
  auto oracle = compile(R"mlir(
    func.func @f(%in: tensor<2x3x9x9xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<2x4x4x4xf32> {
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<2x4x4x4xf32>
      %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32>
      %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
             ins(%in, %w : tensor<2x3x9x9xf32>, tensor<4x3x3x3xf32>)
             outs(%acc : tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32>
      return %c : tensor<2x4x4x4xf32>
    })mlir");
  ASSERT_TRUE(oracle) << joinedMessages();
  Oracle::Session s = oracle->session(inputValue);
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t f = 0; f < 4; ++f)
      for (int64_t oh = 0; oh < 4; ++oh)
        for (int64_t ow = 0; ow < 4; ++ow) {
          double acc = 0;
          for (int64_t c = 0; c < 3; ++c)
            for (int64_t kh = 0; kh < 3; ++kh)
              for (int64_t kw = 0; kw < 3; ++kw)
                acc += inputValue(0, ((n * 3 + c) * 9 + 2 * oh + kh) * 9 + 2 * ow + kw) *
                       inputValue(1, ((f * 3 + c) * 3 + kh) * 3 + kw);
          EXPECT_EQ(s.valueAt(0, {n, f, oh, ow}), acc);
        }
  EXPECT_EQ(oracle->costPerElement(0), 2.0 * 3 * 3 * 3);
}

TEST_F(OracleTest, PoolingNchwMaxNeverReadsTheWindow) {
  auto oracle = compile(R"mlir(
    func.func @f(%in: tensor<1x2x8x8xf32>) -> tensor<1x2x3x3xf32> {
      %ninf = arith.constant 0xFF800000 : f32
      %window = tensor.empty() : tensor<3x3xf32>
      %e = tensor.empty() : tensor<1x2x3x3xf32>
      %acc = linalg.fill ins(%ninf : f32) outs(%e : tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
      %p = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
             ins(%in, %window : tensor<1x2x8x8xf32>, tensor<3x3xf32>)
             outs(%acc : tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
      return %p : tensor<1x2x3x3xf32>
    })mlir");
  ASSERT_TRUE(oracle) << joinedMessages();
  Oracle::Session s = oracle->session(inputValue);
  for (int64_t c = 0; c < 2; ++c)
    for (int64_t oh = 0; oh < 3; ++oh)
      for (int64_t ow = 0; ow < 3; ++ow) {
        double m = -INFINITY;
        for (int64_t kh = 0; kh < 3; ++kh)
          for (int64_t kw = 0; kw < 3; ++kw)
            m = std::max(m, inputValue(0, (c * 8 + 2 * oh + kh) * 8 + 2 * ow + kw));
        EXPECT_EQ(s.valueAt(0, {0, c, oh, ow}), m);
      }
}

TEST_F(OracleTest, LinalgIndexInParallelAndReductionLoops) {
  auto oracle = compile(R"mlir(
    func.func @f(%x: tensor<3x5xf32>) -> (tensor<3x5xf32>, tensor<3xf32>) {
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<3x5xf32>
      %e3 = tensor.empty() : tensor<3xf32>
      %acc = linalg.fill ins(%zero : f32) outs(%e3 : tensor<3xf32>) -> tensor<3xf32>
      %ij = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                            iterator_types = ["parallel", "parallel"]}
          ins(%x : tensor<3x5xf32>) outs(%e : tensor<3x5xf32>) {
      ^bb0(%v: f32, %o: f32):
        %i = linalg.index 0 : index
        %j = linalg.index 1 : index
        %c10 = arith.constant 10 : index
        %t = arith.muli %i, %c10 : index
        %s = arith.addi %t, %j : index
        %si = arith.index_cast %s : index to i32
        %f = arith.sitofp %si : i32 to f32
        %r = arith.addf %f, %v : f32
        linalg.yield %r : f32
      } -> tensor<3x5xf32>
      // Sum over j of j * x[i, j].
      %w = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                           iterator_types = ["parallel", "reduction"]}
          ins(%x : tensor<3x5xf32>) outs(%acc : tensor<3xf32>) {
      ^bb0(%v: f32, %a: f32):
        %j = linalg.index 1 : index
        %ji = arith.index_cast %j : index to i64
        %jf = arith.sitofp %ji : i64 to f32
        %p = arith.mulf %jf, %v : f32
        %r = arith.addf %p, %a : f32
        linalg.yield %r : f32
      } -> tensor<3xf32>
      return %ij, %w : tensor<3x5xf32>, tensor<3xf32>
    })mlir");
  ASSERT_TRUE(oracle) << joinedMessages();
  Oracle::Session s = oracle->session(inputValue);
  for (int64_t i = 0; i < 3; ++i) {
    double w = 0;
    for (int64_t j = 0; j < 5; ++j) {
      EXPECT_EQ(s.valueAt(0, {i, j}), static_cast<double>(10 * i + j) + inputValue(0, i * 5 + j));
      w = static_cast<double>(j) * inputValue(0, i * 5 + j) + w;
    }
    EXPECT_EQ(s.valueAt(1, i), w);
  }
}

TEST_F(OracleTest, ArgmaxSelectPayloadWithTwoResults) {
  auto oracle = compile(R"mlir(
    func.func @f(%x: tensor<4x9xf32>) -> (tensor<4xf32>, tensor<4xi32>) {
      %ninf = arith.constant 0xFF800000 : f32
      %c0 = arith.constant 0 : i32
      %ef = tensor.empty() : tensor<4xf32>
      %ei = tensor.empty() : tensor<4xi32>
      %m0 = linalg.fill ins(%ninf : f32) outs(%ef : tensor<4xf32>) -> tensor<4xf32>
      %i0 = linalg.fill ins(%c0 : i32) outs(%ei : tensor<4xi32>) -> tensor<4xi32>
      %r:2 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>,
                                              affine_map<(i, j) -> (i)>],
                             iterator_types = ["parallel", "reduction"]}
          ins(%x : tensor<4x9xf32>) outs(%m0, %i0 : tensor<4xf32>, tensor<4xi32>) {
      ^bb0(%v: f32, %m: f32, %idx: i32):
        %j = linalg.index 1 : index
        %ji = arith.index_cast %j : index to i32
        %gt = arith.cmpf ogt, %v, %m : f32
        %nm = arith.select %gt, %v, %m : f32
        %ni = arith.select %gt, %ji, %idx : i32
        linalg.yield %nm, %ni : f32, i32
      } -> (tensor<4xf32>, tensor<4xi32>)
      return %r#0, %r#1 : tensor<4xf32>, tensor<4xi32>
    })mlir");
  ASSERT_TRUE(oracle) << joinedMessages();
  Oracle::Session s = oracle->session(inputValue);
  for (int64_t i = 0; i < 4; ++i) {
    double best = -INFINITY;
    int64_t arg = 0;
    for (int64_t j = 0; j < 9; ++j)
      if (inputValue(0, i * 9 + j) > best) {
        best = inputValue(0, i * 9 + j);
        arg = j;
      }
    // Reading the index first also memoizes the value (one evaluation for both results).
    uint64_t before = s.getNumPayloadOps();
    EXPECT_EQ(s.valueAt(1, i), static_cast<double>(arg));
    EXPECT_EQ(s.valueAt(0, i), best);
    EXPECT_EQ(s.getNumPayloadOps() - before, 9u * 5);
  }
}

// A keep-dim sum as torch-mlir writes it: the output map has 0 for the kept dimension.
TEST_F(OracleTest, KeepDimReductionOutputMap) {
  auto oracle = compile(R"mlir(
    func.func @f(%x: tensor<3x5x4xf32>) -> tensor<3x1x4xf32> {
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<3x1x4xf32>
      %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<3x1x4xf32>) -> tensor<3x1x4xf32>
      %s = linalg.generic {indexing_maps = [affine_map<(a, b, c) -> (a, b, c)>, affine_map<(a, b, c) -> (a, 0, c)>],
                           iterator_types = ["parallel", "reduction", "parallel"]}
          ins(%x : tensor<3x5x4xf32>) outs(%acc : tensor<3x1x4xf32>) {
        ^bb0(%in: f32, %out: f32):
          %t = arith.addf %in, %out : f32
          linalg.yield %t : f32
      } -> tensor<3x1x4xf32>
      return %s : tensor<3x1x4xf32>
    })mlir");
  ASSERT_TRUE(oracle) << joinedMessages();
  Oracle::Session s = oracle->session(inputValue);
  for (int64_t a = 0; a < 3; ++a)
    for (int64_t c = 0; c < 4; ++c) {
      double acc = 0;
      for (int64_t b = 0; b < 5; ++b)
        acc += inputValue(0, (a * 5 + b) * 4 + c);
      EXPECT_EQ(s.valueAt(0, {a, 0, c}), acc);
    }
}

TEST_F(OracleTest, SamplesElementsAtRealShapes) {
  // What the verifier does: a few elements of 16384x16384 results, never the whole tensors.
  auto oracle = compile(R"mlir(
    func.func @f(%a: tensor<16384x16384xf32>, %b: tensor<16384x16384xf32>)
        -> (tensor<16384x16384xf32>, tensor<16384x16384xf32>) {
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<16384x16384xf32>
      %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<16384x16384xf32>) -> tensor<16384x16384xf32>
      %c = linalg.matmul ins(%a, %b : tensor<16384x16384xf32>, tensor<16384x16384xf32>)
                         outs(%acc : tensor<16384x16384xf32>) -> tensor<16384x16384xf32>
      %zeros = arith.constant dense<0.0> : tensor<16384x16384xf32>
      %r = arith.maximumf %c, %zeros : tensor<16384x16384xf32>
      %sm = linalg.softmax dimension(1) ins(%a : tensor<16384x16384xf32>)
                                        outs(%e : tensor<16384x16384xf32>) -> tensor<16384x16384xf32>
      return %r, %sm : tensor<16384x16384xf32>, tensor<16384x16384xf32>
    })mlir");
  ASSERT_TRUE(oracle) << joinedMessages();
  constexpr int64_t n = 16384;
  EXPECT_EQ(oracle->costPerElement(0), 1.0 + 2 * n);
  EXPECT_EQ(oracle->costOfAllElements(0), (1.0 + 2 * n) * n * n);
  Oracle::Session s = oracle->session(inputValue);
  const int64_t rows[4] = {0, 77, 8191, n - 1}, cols[4] = {n - 1, 4095, 3, 0};
  for (int64_t i : rows)
    for (int64_t j : cols) {
      double acc = 0;
      for (int64_t k = 0; k < n; ++k)
        acc += inputValue(0, i * n + k) * inputValue(1, k * n + j);
      EXPECT_EQ(s.valueAt(0, {i, j}), std::max(acc, 0.0));
      double max = -INFINITY, sum = 0;
      for (int64_t k = 0; k < n; ++k)
        max = std::max(max, inputValue(0, i * n + k));
      for (int64_t k = 0; k < n; ++k)
        sum += std::exp(inputValue(0, i * n + k) - max);
      EXPECT_DOUBLE_EQ(s.valueAt(1, {i, j}), std::exp(inputValue(0, i * n + j) - max) / sum);
    }
  // 16 matmul and relu elements, 16 softmax elements.
  EXPECT_EQ(s.getNumMemoizedElements(), 3u * 16);
}

TEST_F(OracleTest, Throughput) {
  constexpr int64_t n = 192;
  auto oracle = compile(R"mlir(
    func.func @f(%a: tensor<192x192xf32>, %b: tensor<192x192xf32>) -> tensor<192x192xf32> {
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<192x192xf32>
      %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<192x192xf32>) -> tensor<192x192xf32>
      %c = linalg.matmul ins(%a, %b : tensor<192x192xf32>, tensor<192x192xf32>)
                         outs(%acc : tensor<192x192xf32>) -> tensor<192x192xf32>
      return %c : tensor<192x192xf32>
    })mlir");
  ASSERT_TRUE(oracle) << joinedMessages();
  std::vector<double> a(n * n), b(n * n);
  for (uint64_t i = 0; i < a.size(); ++i) {
    a[i] = inputValue(0, i);
    b[i] = inputValue(1, i);
  }
  Oracle::Session s =
      oracle->session([&](unsigned arg, uint64_t i) { return arg == 0 ? a[i] : b[i]; });
  auto start = std::chrono::steady_clock::now();
  double checksum = 0;
  for (uint64_t i = 0; i < n * n; ++i)
    checksum += s.valueAt(0, i);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(s.getNumPayloadOps(), 2u * n * n * n);
  EXPECT_TRUE(std::isfinite(checksum));
  double rate = static_cast<double>(s.getNumPayloadOps()) / seconds;
  std::printf("[ oracle   ] matmul %ldx%ldx%ld: %.1f M payload ops/s (%.3f s)\n", n, n, n,
              rate / 1e6, seconds);

  auto gelu = compile(R"mlir(
    func.func @g(%x: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
      %e = tensor.empty() : tensor<1024x1024xf32>
      %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                           iterator_types = ["parallel", "parallel"]}
          ins(%x : tensor<1024x1024xf32>) outs(%e : tensor<1024x1024xf32>) {
      ^bb0(%v: f32, %out: f32):
        %half = arith.constant 0.5 : f32
        %one = arith.constant 1.0 : f32
        %c0 = arith.constant 0.7978845608 : f32
        %c1 = arith.constant 0.044715 : f32
        %v2 = arith.mulf %v, %v : f32
        %v3 = arith.mulf %v2, %v : f32
        %t0 = arith.mulf %c1, %v3 : f32
        %t1 = arith.addf %v, %t0 : f32
        %t2 = arith.mulf %c0, %t1 : f32
        %t3 = math.tanh %t2 : f32
        %t4 = arith.addf %one, %t3 : f32
        %t5 = arith.mulf %half, %v : f32
        %g = arith.mulf %t5, %t4 : f32
        linalg.yield %g : f32
      } -> tensor<1024x1024xf32>
      return %y : tensor<1024x1024xf32>
    })mlir");
  ASSERT_TRUE(gelu) << joinedMessages();
  Oracle::Session g = gelu->session([&](unsigned, uint64_t i) { return a[i % a.size()]; });
  start = std::chrono::steady_clock::now();
  for (uint64_t i = 0; i < 1024 * 1024; ++i)
    checksum += g.valueAt(0, i);
  seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("[ oracle   ] gelu 1024x1024 (memoized, tanh): %.1f M payload ops/s, %.1f M "
              "elements/s\n",
              static_cast<double>(g.getNumPayloadOps()) / seconds / 1e6,
              1024.0 * 1024 / seconds / 1e6);
}

TEST_F(OracleTest, MaskedTriangularScans) {
  // Scans have no op upstream: they are written as reductions over k of a mask of k against the
  // output's j (the forms the scan family recognizes). The oracle interprets them as written.
  auto oracle = compile(R"mlir(
    func.func @f(%x: tensor<3x6xf32>) -> (tensor<3x6xf32>, tensor<3x6xf32>, tensor<6x3xf32>, tensor<3x6xf32>) {
      %zero = arith.constant 0.0 : f32
      %one = arith.constant 1.0 : f32
      %ninf = arith.constant 0xFF800000 : f32
      %e = tensor.empty() : tensor<3x6xf32>
      %et = tensor.empty() : tensor<6x3xf32>
      %z = linalg.fill ins(%zero : f32) outs(%e : tensor<3x6xf32>) -> tensor<3x6xf32>
      %o = linalg.fill ins(%one : f32) outs(%e : tensor<3x6xf32>) -> tensor<3x6xf32>
      %m = linalg.fill ins(%ninf : f32) outs(%e : tensor<3x6xf32>) -> tensor<3x6xf32>
      %zt = linalg.fill ins(%zero : f32) outs(%et : tensor<6x3xf32>) -> tensor<6x3xf32>
      // Exclusive cumsum along rows: select(k < j, x, 0).
      %ex = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]}
          ins(%x : tensor<3x6xf32>) outs(%z : tensor<3x6xf32>) {
      ^bb0(%in: f32, %acc: f32):
        %j = linalg.index 1 : index
        %k = linalg.index 2 : index
        %keep = arith.cmpi ult, %k, %j : index
        %v = arith.select %keep, %in, %zero : f32
        %s = arith.addf %acc, %v : f32
        linalg.yield %s : f32
      } -> tensor<3x6xf32>
      // Reverse cumprod: select(k < j, 1, x) keeps k >= j.
      %rp = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]}
          ins(%x : tensor<3x6xf32>) outs(%o : tensor<3x6xf32>) {
      ^bb0(%in: f32, %acc: f32):
        %j = linalg.index 1 : index
        %k = linalg.index 2 : index
        %drop = arith.cmpi slt, %k, %j : index
        %v = arith.select %drop, %one, %in : f32
        %s = arith.mulf %acc, %v : f32
        linalg.yield %s : f32
      } -> tensor<3x6xf32>
      // Transposed result: a cumsum down the columns of x (dim 0 of the result), as a 0/1 mask.
      %cs = linalg.generic {indexing_maps = [affine_map<(j, i, k) -> (i, k)>, affine_map<(j, i, k) -> (j, i)>], iterator_types = ["parallel", "parallel", "reduction"]}
          ins(%x : tensor<3x6xf32>) outs(%zt : tensor<6x3xf32>) {
      ^bb0(%in: f32, %acc: f32):
        %j = linalg.index 0 : index
        %k = linalg.index 2 : index
        %keep = arith.cmpi uge, %j, %k : index
        %f = arith.uitofp %keep : i1 to f32
        %v = arith.mulf %in, %f : f32
        %s = arith.addf %acc, %v : f32
        linalg.yield %s : f32
      } -> tensor<6x3xf32>
      // Cummax.
      %cm = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]}
          ins(%x : tensor<3x6xf32>) outs(%m : tensor<3x6xf32>) {
      ^bb0(%in: f32, %acc: f32):
        %j = linalg.index 1 : index
        %k = linalg.index 2 : index
        %keep = arith.cmpi ule, %k, %j : index
        %v = arith.select %keep, %in, %ninf : f32
        %s = arith.maximumf %acc, %v : f32
        linalg.yield %s : f32
      } -> tensor<3x6xf32>
      return %ex, %rp, %cs, %cm : tensor<3x6xf32>, tensor<3x6xf32>, tensor<6x3xf32>, tensor<3x6xf32>
    })mlir");
  ASSERT_TRUE(oracle) << joinedMessages();
  Oracle::Session s = oracle->session(inputValue);
  auto x = [](int64_t i, int64_t k) { return inputValue(0, i * 6 + k); };
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 6; ++j) {
      double ex = 0, rp = 1, cs = 0, cm = -std::numeric_limits<double>::infinity();
      for (int64_t k = 0; k < 6; ++k) {
        if (k < j)
          ex += x(i, k);
        if (k >= j)
          rp *= x(i, k);
        if (k <= j) {
          cs += x(i, k);
          cm = std::max(cm, x(i, k));
        }
      }
      EXPECT_EQ(s.valueAt(0, {i, j}), ex);
      EXPECT_EQ(s.valueAt(1, {i, j}), rp);
      EXPECT_EQ(s.valueAt(2, {j, i}), cs);
      EXPECT_EQ(s.valueAt(3, {i, j}), cm);
    }
}
