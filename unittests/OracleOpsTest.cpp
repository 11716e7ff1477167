//===- OracleOpsTest.cpp - the oracle's tensor ops, semantics and diagnostics --===//
//
// The float64 reference interpreter on integer and NaN semantics, indexing maps, tensor ops
// (pad, gather, concat, reshape, slice), scalar arguments, and what it refuses.
//
//===----------------------------------------------------------------------===//

#include "OracleTestFixture.h"
#include <cmath>
#include <limits>

using namespace mlir;
using namespace evo;
using evo::unittest::inputValue;
using evo::unittest::kLayerNorm;
using evo::unittest::OracleTest;

TEST_F(OracleTest, IntegerSemanticsWrapAndSaturate) {
  auto oracle = compile(R"mlir(
    func.func @f(%a: tensor<6xi8>, %b: tensor<6xi8>, %x: tensor<6xf32>)
        -> (tensor<6xi8>, tensor<6xi32>, tensor<6xf32>, tensor<6xi8>, tensor<6xi8>) {
      %e8 = tensor.empty() : tensor<6xi8>
      %e32 = tensor.empty() : tensor<6xi32>
      %ef = tensor.empty() : tensor<6xf32>
      %r:5 = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>,
                             affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>,
                             affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                             iterator_types = ["parallel"]}
          ins(%a, %b, %x : tensor<6xi8>, tensor<6xi8>, tensor<6xf32>)
          outs(%e8, %e32, %ef, %e8, %e8 : tensor<6xi8>, tensor<6xi32>, tensor<6xf32>, tensor<6xi8>, tensor<6xi8>) {
      ^bb0(%va: i8, %vb: i8, %vx: f32, %o0: i8, %o1: i32, %o2: f32, %o3: i8, %o4: i8):
        %sum = arith.addi %va, %vb : i8
        %ua = arith.extui %va : i8 to i32
        %one = arith.constant 1 : i32
        %sh = arith.shrui %ua, %one : i32
        %sa = arith.extsi %va : i8 to i32
        %mix = arith.addi %sh, %sa : i32
        %fa = arith.sitofp %va : i8 to f32
        %fb = arith.uitofp %vb : i8 to f32
        %f = arith.addf %fa, %fb : f32
        %sat = arith.fptosi %vx : f32 to i8
        %lt = arith.cmpi ult, %va, %vb : i8
        %ltx = arith.extui %lt : i1 to i8
        linalg.yield %sum, %mix, %f, %sat, %ltx : i8, i32, f32, i8, i8
      } -> (tensor<6xi8>, tensor<6xi32>, tensor<6xf32>, tensor<6xi8>, tensor<6xi8>)
      return %r#0, %r#1, %r#2, %r#3, %r#4 : tensor<6xi8>, tensor<6xi32>, tensor<6xf32>, tensor<6xi8>, tensor<6xi8>
    })mlir");
  ASSERT_TRUE(oracle) << joinedMessages();
  const double a[6] = {100, -128, 127, -1, 0, 5};
  const double b[6] = {100, -1, 1, -1, 7, -3};
  const double x[6] = {300.7, -1e9, NAN, -3.9, 126.99, 0.5};
  Oracle::Session s = oracle->session([&](unsigned arg, uint64_t i) {
    return arg == 0 ? a[i] : arg == 1 ? b[i] : x[i];
  });
  for (uint64_t i = 0; i < 6; ++i) {
    int8_t ai = static_cast<int8_t>(a[i]), bi = static_cast<int8_t>(b[i]);
    EXPECT_EQ(s.valueAt(0, i),
              static_cast<int8_t>(static_cast<uint8_t>(ai) + static_cast<uint8_t>(bi)));
    EXPECT_EQ(s.valueAt(1, i), static_cast<double>((static_cast<uint8_t>(ai) >> 1) + ai));
    EXPECT_EQ(s.valueAt(2, i),
              static_cast<double>(ai) + static_cast<double>(static_cast<uint8_t>(bi)));
    EXPECT_EQ(s.valueAt(4, i), static_cast<uint8_t>(ai) < static_cast<uint8_t>(bi) ? 1.0 : 0.0);
  }
  // fptosi saturates and maps NaN to 0 (PTX cvt.rzi semantics; MLIR leaves it poison).
  EXPECT_EQ(s.valueAt(3, 0), 127.0);
  EXPECT_EQ(s.valueAt(3, 1), -128.0);
  EXPECT_EQ(s.valueAt(3, 2), 0.0);
  EXPECT_EQ(s.valueAt(3, 3), -3.0);
  EXPECT_EQ(s.valueAt(3, 4), 126.0);
  EXPECT_EQ(s.valueAt(3, 5), 0.0);
}

TEST_F(OracleTest, NaNFollowsIEEEAndTheOpKind) {
  auto oracle = compile(R"mlir(
    func.func @f(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xi8>) {
      %m = arith.maximumf %x, %y : tensor<4xf32>
      %n = arith.maxnumf %x, %y : tensor<4xf32>
      %c = arith.cmpf une, %x, %y : tensor<4xf32>
      %e = tensor.empty() : tensor<4xi8>
      %ci = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                            iterator_types = ["parallel"]} ins(%c : tensor<4xi1>) outs(%e : tensor<4xi8>) {
      ^bb0(%v: i1, %o: i8):
        %z = arith.extui %v : i1 to i8
        linalg.yield %z : i8
      } -> tensor<4xi8>
      return %m, %n, %ci : tensor<4xf32>, tensor<4xf32>, tensor<4xi8>
    })mlir");
  ASSERT_TRUE(oracle) << joinedMessages();
  const double x[4] = {NAN, 1.0, -0.0, INFINITY};
  const double y[4] = {2.0, NAN, 0.0, 3.0};
  Oracle::Session s =
      oracle->session([&](unsigned arg, uint64_t i) { return arg == 0 ? x[i] : y[i]; });
  EXPECT_TRUE(std::isnan(s.valueAt(0, 0)));
  EXPECT_TRUE(std::isnan(s.valueAt(0, 1)));
  EXPECT_EQ(s.valueAt(0, 2), 0.0);
  EXPECT_FALSE(std::signbit(s.valueAt(0, 2)));
  EXPECT_EQ(s.valueAt(0, 3), INFINITY);
  EXPECT_EQ(s.valueAt(1, 0), 2.0);
  EXPECT_EQ(s.valueAt(1, 1), 1.0);
  EXPECT_EQ(s.valueAt(2, 0), 1.0); // unordered
  EXPECT_EQ(s.valueAt(2, 1), 1.0);
  EXPECT_EQ(s.valueAt(2, 2), 0.0); // -0 == +0
  EXPECT_EQ(s.valueAt(2, 3), 1.0);
}

TEST_F(OracleTest, NonLinearIndexingMap) {
  auto oracle = compile(R"mlir(
    func.func @f(%x: tensor<4x6xf32>) -> tensor<24xf32> {
      %e = tensor.empty() : tensor<24xf32>
      %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0 floordiv 6, d0 mod 6)>,
                                            affine_map<(d0) -> (d0)>],
                           iterator_types = ["parallel"]}
          ins(%x : tensor<4x6xf32>) outs(%e : tensor<24xf32>) {
      ^bb0(%v: f32, %o: f32):
        linalg.yield %v : f32
      } -> tensor<24xf32>
      return %y : tensor<24xf32>
    })mlir");
  ASSERT_TRUE(oracle) << joinedMessages();
  Oracle::Session s = oracle->session(inputValue);
  for (uint64_t i = 0; i < 24; ++i)
    EXPECT_EQ(s.valueAt(0, i), inputValue(0, i));
  EXPECT_EQ(oracle->costPerElement(0), 1.0); // a copy counts one evaluation per point
}

TEST_F(OracleTest, TransposeMapElementwiseMatvecAndRankZero) {
  auto oracle = compile(R"mlir(
    func.func @f(%x: tensor<4x8xf32>, %v: tensor<4xf32>) -> (tensor<8x4xf32>, tensor<8xf32>, tensor<f32>) {
      %zero = arith.constant 0.0 : f32
      %e84 = tensor.empty() : tensor<8x4xf32>
      %e8 = tensor.empty() : tensor<8xf32>
      %e0 = tensor.empty() : tensor<f32>
      %t = linalg.transpose ins(%x : tensor<4x8xf32>) outs(%e84 : tensor<8x4xf32>) permutation = [1, 0]
      %m = linalg.map { arith.mulf } ins(%t, %t : tensor<8x4xf32>, tensor<8x4xf32>) outs(%e84 : tensor<8x4xf32>)
      %d = linalg.elementwise kind=#linalg.elementwise_kind<sub>
             ins(%m, %t : tensor<8x4xf32>, tensor<8x4xf32>) outs(%e84 : tensor<8x4xf32>) -> tensor<8x4xf32>
      %acc8 = linalg.fill ins(%zero : f32) outs(%e8 : tensor<8xf32>) -> tensor<8xf32>
      %mv = linalg.matvec ins(%d, %v : tensor<8x4xf32>, tensor<4xf32>) outs(%acc8 : tensor<8xf32>) -> tensor<8xf32>
      %acc0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
      %total = linalg.reduce ins(%x : tensor<4x8xf32>) outs(%acc0 : tensor<f32>) dimensions = [0, 1]
        (%in: f32, %init: f32) {
          %s = arith.addf %in, %init : f32
          linalg.yield %s : f32
        }
      return %d, %mv, %total : tensor<8x4xf32>, tensor<8xf32>, tensor<f32>
    })mlir");
  ASSERT_TRUE(oracle) << joinedMessages();
  EXPECT_TRUE(oracle->getResultShape(2).empty());
  EXPECT_EQ(oracle->getResultNumElements(2), 1u);
  Oracle::Session s = oracle->session(inputValue);
  auto x = [](int64_t i, int64_t j) { return inputValue(0, i * 8 + j); };
  double total = 0;
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 8; ++j)
      total = x(i, j) + total;
  for (int64_t j = 0; j < 8; ++j) {
    double mv = 0;
    for (int64_t i = 0; i < 4; ++i) {
      double d = x(i, j) * x(i, j) - x(i, j);
      EXPECT_EQ(s.valueAt(0, {j, i}), d);
      mv += d * inputValue(1, i);
    }
    EXPECT_EQ(s.valueAt(1, j), mv);
  }
  EXPECT_EQ(s.valueAt(2, uint64_t(0)), total);
  EXPECT_EQ(s.valueAt(2, ArrayRef<int64_t>{}), total);
}

TEST_F(OracleTest, UnsupportedPayloadOpIsADiagnosticAtTheOp) {
  auto oracle = compile(R"mlir(
    func.func @f(%x: tensor<8xf32>) -> tensor<8xi32> {
      %e = tensor.empty() : tensor<8xi32>
      %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                           iterator_types = ["parallel"]}
          ins(%x : tensor<8xf32>) outs(%e : tensor<8xi32>) {
      ^bb0(%v: f32, %o: i32):
        %b = arith.bitcast %v : f32 to i32
        linalg.yield %b : i32
      } -> tensor<8xi32>
      return %y : tensor<8xi32>
    })mlir");
  EXPECT_FALSE(oracle);
  ASSERT_EQ(messages.size(), 1u) << joinedMessages();
  EXPECT_TRUE(hasMessage("the oracle cannot interpret 'arith.bitcast'")) << joinedMessages();
  // At the payload op itself (line 8 of the snippet).
  auto loc = dyn_cast<FileLineColLoc>(locations[0]);
  ASSERT_TRUE(loc);
  EXPECT_EQ(loc.getLine(), 8u);
}

TEST_F(OracleTest, UnsupportedTensorOpIsADiagnostic) {
  auto oracle = compile(R"mlir(
    func.func @f(%x: tensor<8xf32>, %y: tensor<4xf32>) -> tensor<8xf32> {
      %s = tensor.insert_slice %y into %x[0] [4] [1] : tensor<4xf32> into tensor<8xf32>
      return %s : tensor<8xf32>
    })mlir");
  EXPECT_FALSE(oracle);
  EXPECT_TRUE(hasMessage("the oracle cannot interpret 'tensor.insert_slice'")) << joinedMessages();
}

// tensor.pad read by a pooling and a convolution: points outside the input read the padding
// value (-inf for the max, 0 for the sum), never an input element.
TEST_F(OracleTest, PaddedPoolingAndConvolutionMatchDirectLoops) {
  auto oracle = compile(R"mlir(
    func.func @f(%in: tensor<1x2x6x6xf32>, %w: tensor<3x2x3x3xf32>)
        -> (tensor<1x2x3x3xf32>, tensor<1x3x6x6xf32>) {
      %ninf = arith.constant 0xFF800000 : f32
      %zero = arith.constant 0.0 : f32
      %p = tensor.pad %in low[0, 0, 1, 1] high[0, 0, 1, 1] {
      ^bb0(%a: index, %b: index, %c: index, %d: index):
        tensor.yield %ninf : f32
      } : tensor<1x2x6x6xf32> to tensor<1x2x8x8xf32>
      %window = tensor.empty() : tensor<3x3xf32>
      %e = tensor.empty() : tensor<1x2x3x3xf32>
      %acc = linalg.fill ins(%ninf : f32) outs(%e : tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
      %pool = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
             ins(%p, %window : tensor<1x2x8x8xf32>, tensor<3x3xf32>)
             outs(%acc : tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
      %z = tensor.pad %in low[0, 0, 1, 1] high[0, 0, 1, 1] {
      ^bb0(%a: index, %b: index, %c: index, %d: index):
        %k = arith.constant 0.0 : f32
        tensor.yield %k : f32
      } : tensor<1x2x6x6xf32> to tensor<1x2x8x8xf32>
      %e2 = tensor.empty() : tensor<1x3x6x6xf32>
      %acc2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x3x6x6xf32>) -> tensor<1x3x6x6xf32>
      %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
             ins(%z, %w : tensor<1x2x8x8xf32>, tensor<3x2x3x3xf32>)
             outs(%acc2 : tensor<1x3x6x6xf32>) -> tensor<1x3x6x6xf32>
      return %pool, %conv : tensor<1x2x3x3xf32>, tensor<1x3x6x6xf32>
    })mlir");
  ASSERT_TRUE(oracle) << joinedMessages();
  Oracle::Session s = oracle->session(inputValue);
  auto x = [](int64_t c, int64_t h, int64_t w, double pad) {
    return h < 0 || h >= 6 || w < 0 || w >= 6 ? pad : inputValue(0, (c * 6 + h) * 6 + w);
  };
  for (int64_t c = 0; c < 2; ++c)
    for (int64_t oh = 0; oh < 3; ++oh)
      for (int64_t ow = 0; ow < 3; ++ow) {
        double m = -INFINITY;
        for (int64_t kh = 0; kh < 3; ++kh)
          for (int64_t kw = 0; kw < 3; ++kw)
            m = std::max(m, x(c, 2 * oh + kh - 1, 2 * ow + kw - 1, -INFINITY));
        EXPECT_EQ(s.valueAt(0, {0, c, oh, ow}), m);
      }
  for (int64_t f = 0; f < 3; ++f)
    for (int64_t oh = 0; oh < 6; ++oh)
      for (int64_t ow = 0; ow < 6; ++ow) {
        double acc = 0;
        for (int64_t c = 0; c < 2; ++c)
          for (int64_t kh = 0; kh < 3; ++kh)
            for (int64_t kw = 0; kw < 3; ++kw)
              acc += x(c, oh + kh - 1, ow + kw - 1, 0.0) *
                     inputValue(1, ((f * 2 + c) * 3 + kh) * 3 + kw);
        EXPECT_EQ(s.valueAt(1, {0, f, oh, ow}), acc);
      }
}

// A gather (tensor.extract in a payload of a tensor defined outside it), as torch-mlir writes
// nll_loss and embeddings: indices from an integer input, clamped into the table.
TEST_F(OracleTest, GatherFromAnArgumentClampsItsIndices) {
  auto oracle = compile(R"mlir(
    func.func @f(%x: tensor<6x5xf32>, %t: tensor<6xi64>) -> tensor<6xf32> {
      %e = tensor.empty() : tensor<6xf32>
      %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                           iterator_types = ["parallel"]}
          ins(%t : tensor<6xi64>) outs(%e : tensor<6xf32>) {
        ^bb0(%ti: i64, %o: f32):
          %i = linalg.index 0 : index
          %c = arith.index_cast %ti : i64 to index
          %v = tensor.extract %x[%i, %c] : tensor<6x5xf32>
          %n = arith.negf %v : f32
          linalg.yield %n : f32
      } -> tensor<6xf32>
      return %r : tensor<6xf32>
    })mlir");
  ASSERT_TRUE(oracle) << joinedMessages();
  const int64_t targets[6] = {0, 4, 2, -3, 9, 1}; // -3 and 9 are outside [0, 4]
  Oracle::Session s = oracle->session([&](unsigned arg, uint64_t i) {
    return arg == 1 ? static_cast<double>(targets[i]) : inputValue(0, i);
  });
  for (int64_t i = 0; i < 6; ++i) {
    int64_t c = std::clamp<int64_t>(targets[i], 0, 4);
    EXPECT_EQ(s.valueAt(0, {i}), -inputValue(0, i * 5 + c)) << i;
  }
}

// tensor.concat (torch.cat) along a middle dimension, three operands, then an elementwise op:
// every element comes from the operand that holds its position, at its position there.
TEST_F(OracleTest, ConcatTakesEachPositionFromItsOperand) {
  auto oracle = compile(R"mlir(
    func.func @f(%a: tensor<2x3x4xf32>, %b: tensor<2x1x4xf32>, %c: tensor<2x2x4xf32>) -> tensor<2x6x4xf32> {
      %cat = tensor.concat dim(1) %a, %b, %c : (tensor<2x3x4xf32>, tensor<2x1x4xf32>, tensor<2x2x4xf32>) -> tensor<2x6x4xf32>
      %e = tensor.empty() : tensor<2x6x4xf32>
      %r = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, j, k)>, affine_map<(i, j, k) -> (i, j, k)>],
                           iterator_types = ["parallel", "parallel", "parallel"]}
          ins(%cat : tensor<2x6x4xf32>) outs(%e : tensor<2x6x4xf32>) {
        ^bb0(%x: f32, %o: f32):
          %n = arith.negf %x : f32
          linalg.yield %n : f32
      } -> tensor<2x6x4xf32>
      return %r : tensor<2x6x4xf32>
    })mlir");
  ASSERT_TRUE(oracle) << joinedMessages();
  Oracle::Session s = oracle->session(inputValue);
  const int64_t starts[3] = {0, 3, 4}, sizes[3] = {3, 1, 2};
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 6; ++j)
      for (int64_t k = 0; k < 4; ++k) {
        unsigned arg = j < 3 ? 0 : j < 4 ? 1 : 2;
        uint64_t at = (i * sizes[arg] + (j - starts[arg])) * 4 + k;
        EXPECT_EQ(s.valueAt(0, {i, j, k}), -inputValue(arg, at)) << i << "," << j << "," << k;
      }
}

// Concat operands that are not arguments: another op's result, a splat constant and a reshape.
TEST_F(OracleTest, ConcatOfResultsConstantsAndReshapes) {
  auto oracle = compile(R"mlir(
    func.func @f(%a: tensor<4x3xf32>, %v: tensor<8xf32>) -> tensor<4x7xf32> {
      %e = tensor.empty() : tensor<4x3xf32>
      %n = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                           iterator_types = ["parallel", "parallel"]}
          ins(%a : tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) {
        ^bb0(%x: f32, %o: f32):
          %y = arith.negf %x : f32
          linalg.yield %y : f32
      } -> tensor<4x3xf32>
      %one = arith.constant dense<1.5> : tensor<4x2xf32>
      %r2 = tensor.expand_shape %v [[0, 1]] output_shape [4, 2] : tensor<8xf32> into tensor<4x2xf32>
      %cat = tensor.concat dim(1) %n, %one, %r2 : (tensor<4x3xf32>, tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x7xf32>
      return %cat : tensor<4x7xf32>
    })mlir");
  ASSERT_TRUE(oracle) << joinedMessages();
  Oracle::Session s = oracle->session(inputValue);
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 7; ++j) {
      double want = j < 3 ? -inputValue(0, i * 3 + j) : j < 5 ? 1.5 : inputValue(1, i * 2 + j - 5);
      EXPECT_EQ(s.valueAt(0, {i, j}), want) << i << "," << j;
    }
}

// Reshapes keep the row-major order; a strided, rank-reducing slice and a pad of a pad (the
// inner pad's value inside the outer pad's source, the outer's outside it).
TEST_F(OracleTest, ReshapesSlicesAndNestedPads) {
  auto oracle = compile(R"mlir(
    func.func @f(%x: tensor<4x6xf32>) -> (tensor<3x8xf32>, tensor<3xf32>, tensor<8x10xf32>) {
      %flat = tensor.collapse_shape %x [[0, 1]] : tensor<4x6xf32> into tensor<24xf32>
      %r = tensor.expand_shape %flat [[0, 1]] output_shape [3, 8] : tensor<24xf32> into tensor<3x8xf32>
      %e = tensor.empty() : tensor<3x8xf32>
      %neg = linalg.negf ins(%r : tensor<3x8xf32>) outs(%e : tensor<3x8xf32>) -> tensor<3x8xf32>
      %s = tensor.extract_slice %x[1, 5] [3, 1] [1, 1] : tensor<4x6xf32> to tensor<3xf32>
      %s2 = tensor.extract_slice %x[0, 1] [4, 3] [1, 2] : tensor<4x6xf32> to tensor<4x3xf32>
      %one = arith.constant 1.0 : f32
      %two = arith.constant 2.0 : f32
      %p = tensor.pad %s2 low[1, 2] high[0, 1] {
      ^bb0(%a: index, %b: index):
        tensor.yield %one : f32
      } : tensor<4x3xf32> to tensor<5x6xf32>
      %pp = tensor.pad %p low[2, 1] high[1, 3] {
      ^bb0(%a: index, %b: index):
        tensor.yield %two : f32
      } : tensor<5x6xf32> to tensor<8x10xf32>
      %e2 = tensor.empty() : tensor<3xf32>
      %sn = linalg.negf ins(%s : tensor<3xf32>) outs(%e2 : tensor<3xf32>) -> tensor<3xf32>
      %e3 = tensor.empty() : tensor<8x10xf32>
      %pn = linalg.negf ins(%pp : tensor<8x10xf32>) outs(%e3 : tensor<8x10xf32>) -> tensor<8x10xf32>
      return %neg, %sn, %pn : tensor<3x8xf32>, tensor<3xf32>, tensor<8x10xf32>
    })mlir");
  ASSERT_TRUE(oracle) << joinedMessages();
  Oracle::Session s = oracle->session(inputValue);
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 8; ++j)
      EXPECT_EQ(s.valueAt(0, {i, j}), -inputValue(0, i * 8 + j));
  for (int64_t i = 0; i < 3; ++i)
    EXPECT_EQ(s.valueAt(1, {i}), -inputValue(0, (1 + i) * 6 + 5));
  for (int64_t i = 0; i < 8; ++i)
    for (int64_t j = 0; j < 10; ++j) {
      int64_t pi = i - 2, pj = j - 1; // in %p
      double v;
      if (pi < 0 || pi >= 5 || pj < 0 || pj >= 6)
        v = 2.0;
      else if (pi - 1 < 0 || pi - 1 >= 4 || pj - 2 < 0 || pj - 2 >= 3)
        v = 1.0;
      else
        v = inputValue(0, (pi - 1) * 6 + 1 + 2 * (pj - 2));
      EXPECT_EQ(s.valueAt(2, {i, j}), -v) << i << "," << j;
    }
}

TEST_F(OracleTest, ReadingAnUninitializedEmptyIsADiagnostic) {
  auto oracle = compile(R"mlir(
    func.func @f(%x: tensor<4x8xf32>) -> tensor<4xf32> {
      %e = tensor.empty() : tensor<4xf32>
      %r = linalg.reduce ins(%x : tensor<4x8xf32>) outs(%e : tensor<4xf32>) dimensions = [1]
        (%in: f32, %init: f32) {
          %s = arith.addf %in, %init : f32
          linalg.yield %s : f32
        }
      return %r : tensor<4xf32>
    })mlir");
  EXPECT_FALSE(oracle);
  EXPECT_TRUE(hasMessage("the oracle cannot read init #0: it is an uninitialized tensor.empty"))
      << joinedMessages();
}

TEST_F(OracleTest, TheInputFunctionIsNeverModified) {
  auto oracle = compile(kLayerNorm);
  ASSERT_TRUE(oracle) << joinedMessages();
  std::string printed;
  llvm::raw_string_ostream os(printed);
  module->print(os);
  EXPECT_NE(printed.find("linalg.broadcast"), std::string::npos);
  EXPECT_NE(printed.find("arith.subf %"), std::string::npos);
  EXPECT_EQ(printed.find("linalg.generic"), std::string::npos);
}

// Scalar arguments (docs/lowering.md, "Scalar arguments") are read through the input function
// as 0-d inputs: element 0 of their argument, once per session. Here in every way the lowering
// accepts them: captured by a payload (through an f64 -> f32 truncation outside it, as
// torch-mlir writes alpha), as a fill's value, as a linalg `ins` operand, and in a row program.
TEST_F(OracleTest, ScalarArgumentsAreZeroDimensionalInputs) {
  auto oracle = compile(R"mlir(
    func.func @f(%x: tensor<4x8xf32>, %alpha: f64, %fillv: f32, %k: i32) -> tensor<4x8xf32> {
      %a = arith.truncf %alpha : f64 to f32
      %e = tensor.empty() : tensor<4x8xf32>
      %f = linalg.fill ins(%fillv : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
      %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>,
                                            affine_map<(i, j) -> ()>, affine_map<(i, j) -> (i, j)>],
                           iterator_types = ["parallel", "parallel"]}
          ins(%x, %f, %k : tensor<4x8xf32>, tensor<4x8xf32>, i32) outs(%e : tensor<4x8xf32>) {
      ^bb0(%v: f32, %fv: f32, %kv: i32, %o: f32):
        %m = arith.mulf %v, %a : f32
        %s = arith.addf %m, %fv : f32
        %kf = arith.sitofp %kv : i32 to f32
        %r = arith.addf %s, %kf : f32
        linalg.yield %r : f32
      } -> tensor<4x8xf32>
      return %y : tensor<4x8xf32>
    })mlir");
  ASSERT_TRUE(oracle) << joinedMessages();
  ASSERT_EQ(oracle->getNumArguments(), 4u);
  EXPECT_EQ(oracle->getArgumentShape(1), ArrayRef<int64_t>());
  EXPECT_EQ(oracle->getArgumentShape(3), ArrayRef<int64_t>());
  auto read = [](unsigned arg, uint64_t i) {
    EXPECT_TRUE(arg == 0 || i == 0) << "scalar argument " << arg << " read at " << i;
    return arg == 3 ? 3.0 : inputValue(arg, i);
  };
  Oracle::Session s = oracle->session(read);
  for (int64_t i = 0; i < 32; ++i) {
    double expected = static_cast<double>(static_cast<float>(inputValue(1, 0))) *
                          inputValue(0, i) +
                      inputValue(2, 0) + 3.0;
    EXPECT_EQ(s.valueAt(0, i), expected) << i;
  }
  // Another value of the same argument in another session: nothing folded at compile time.
  Oracle::Session s2 = oracle->session([](unsigned arg, uint64_t i) {
    return arg == 1 ? 0.5 : arg == 3 ? -1.0 : inputValue(arg, i);
  });
  EXPECT_EQ(s2.valueAt(0, 5), 0.5 * inputValue(0, 5) + inputValue(2, 0) - 1.0);
}

TEST_F(OracleTest, AScalarArgumentReadOutsideLinalgIsADiagnostic) {
  auto oracle = compile(R"mlir(
    func.func @f(%x: tensor<8xf32>, %v: f32) -> tensor<9xf32> {
      %t = tensor.from_elements %v : tensor<1xf32>
      %c = tensor.concat dim(0) %x, %t : (tensor<8xf32>, tensor<1xf32>) -> tensor<9xf32>
      return %c : tensor<9xf32>
    })mlir");
  EXPECT_FALSE(oracle);
  EXPECT_TRUE(hasMessage("the oracle: scalar argument #1 ('f32') is read by "
                         "'tensor.from_elements'"))
      << joinedMessages();
}
