//===- KnobsTest.cpp - schedule knob parsing and validation -----------------===//

#include "evo/Conversion/Knobs.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "gtest/gtest.h"

using namespace mlir;
using namespace evo;

namespace {
class KnobsTest : public ::testing::Test {
protected:
  KnobsTest() : b(&ctx), handler(&ctx, [this](Diagnostic &d) {
                  messages.push_back(d.str());
                  return success();
                }) {}
  InFlightDiagnostic err() { return emitError(UnknownLoc::get(&ctx)); }
  DictionaryAttr dict(ArrayRef<NamedAttribute> entries) { return b.getDictionaryAttr(entries); }

  MLIRContext ctx;
  Builder b;
  ScopedDiagnosticHandler handler;
  std::vector<std::string> messages;
};
} // namespace

TEST_F(KnobsTest, DefaultsAreTheNaiveBaselineAndValid) {
  ScheduleKnobs k;
  EXPECT_TRUE(succeeded(k.verify([&] { return err(); })));
  EXPECT_EQ(k.blockSize, 256);
  EXPECT_EQ(k.vectorWidth, 1);
  EXPECT_EQ(k.reduction, ReductionStrategy::Thread);
  EXPECT_TRUE(k.tileSizes.empty());
  EXPECT_TRUE(messages.empty());
}

TEST_F(KnobsTest, MergeOverridesOnlyGivenKnobs) {
  ScheduleKnobs k;
  ASSERT_TRUE(succeeded(k.merge(dict({b.getNamedAttr("block_size", b.getI64IntegerAttr(128)),
                                      b.getNamedAttr("reduction", b.getStringAttr("warp")),
                                      b.getNamedAttr("tile_sizes", b.getI64ArrayAttr({64, 32, 8}))}),
                                [&] { return err(); })));
  EXPECT_EQ(k.blockSize, 128);
  EXPECT_EQ(k.reduction, ReductionStrategy::Warp);
  EXPECT_EQ(k.tileSizes, (SmallVector<int64_t, 3>{64, 32, 8}));
  EXPECT_EQ(k.vectorWidth, 1);
  EXPECT_EQ(k.elementsPerThread, 1);
}

TEST_F(KnobsTest, UnknownKnobIsAnErrorNamingTheKnownOnes) {
  ScheduleKnobs k;
  EXPECT_TRUE(failed(k.merge(dict({b.getNamedAttr("blocksize", b.getI64IntegerAttr(64))}),
                             [&] { return err(); })));
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_NE(messages[0].find("unknown knob 'blocksize'"), std::string::npos);
  EXPECT_NE(messages[0].find("block_size"), std::string::npos);
  EXPECT_EQ(k.blockSize, 256);
}

TEST_F(KnobsTest, IllTypedAndOutOfRangeValuesAreErrors) {
  struct Case {
    NamedAttribute entry;
    const char *message;
  } cases[] = {
      {b.getNamedAttr("block_size", b.getStringAttr("big")), "must be an integer"},
      {b.getNamedAttr("block_size", b.getI64IntegerAttr(48)), "multiple of 32"},
      {b.getNamedAttr("block_size", b.getI64IntegerAttr(2048)), "multiple of 32"},
      {b.getNamedAttr("vector_width", b.getI64IntegerAttr(3)), "vector_width must be 1, 2, 4 or 8"},
      {b.getNamedAttr("elements_per_thread", b.getI64IntegerAttr(0)), "elements_per_thread"},
      {b.getNamedAttr("accumulators", b.getI64IntegerAttr(5)), "accumulators"},
      {b.getNamedAttr("reduction", b.getStringAttr("tree")), "knob 'reduction' must be"},
      {b.getNamedAttr("tile_sizes", b.getI64ArrayAttr({64, 64})), "3 entries"},
      {b.getNamedAttr("thread_tile", b.getI64ArrayAttr({0, 4})), "thread_tile entries"},
  };
  for (const Case &c : cases) {
    messages.clear();
    ScheduleKnobs k;
    EXPECT_TRUE(failed(k.merge(dict({c.entry}), [&] { return err(); })))
        << c.entry.getName().str();
    ASSERT_EQ(messages.size(), 1u) << c.entry.getName().str();
    EXPECT_NE(messages[0].find(c.message), std::string::npos) << messages[0];
  }
}

TEST_F(KnobsTest, AttrListsOnlyTheFamilysKnobs) {
  ScheduleKnobs k;
  k.vectorWidth = 4;
  DictionaryAttr ew = k.toAttr(&ctx, TaskFamily::Elementwise);
  EXPECT_TRUE(ew.contains("elements_per_thread"));
  EXPECT_FALSE(ew.contains("reduction"));
  EXPECT_EQ(cast<IntegerAttr>(ew.get("vector_width")).getInt(), 4);

  DictionaryAttr red = k.toAttr(&ctx, TaskFamily::Reduction);
  EXPECT_TRUE(red.contains("reduction"));
  EXPECT_TRUE(red.contains("accumulators"));
  EXPECT_FALSE(red.contains("elements_per_thread"));

  DictionaryAttr soft = k.toAttr(&ctx, TaskFamily::Softmax);
  EXPECT_FALSE(soft.contains("accumulators"));
  EXPECT_FALSE(soft.contains("cache_row"));

  DictionaryAttr rows = k.toAttr(&ctx, TaskFamily::Rows);
  EXPECT_TRUE(rows.contains("cache_row"));
  EXPECT_TRUE(rows.contains("reduction"));
  EXPECT_FALSE(rows.contains("accumulators"));

  DictionaryAttr naive = k.toAttr(&ctx, TaskFamily::Matmul);
  EXPECT_TRUE(naive.contains("block_size"));
  EXPECT_FALSE(naive.contains("tile_sizes"));
  k.tileSizes = {128, 128, 8};
  k.threadTile = {8, 8};
  DictionaryAttr tiled = k.toAttr(&ctx, TaskFamily::Matmul);
  EXPECT_FALSE(tiled.contains("block_size"));
  EXPECT_EQ(cast<DenseI64ArrayAttr>(tiled.get("tile_sizes")).asArrayRef(),
            ArrayRef<int64_t>({128, 128, 8}));
}

TEST_F(KnobsTest, RecordedKnobsMergeBackToTheSameKnobs) {
  // A kernel's evo.knobs must be re-loweable: merging them reproduces the knobs.
  ScheduleKnobs k;
  k.blockSize = 512;
  k.reduction = ReductionStrategy::Block;
  k.vectorWidth = 2;
  k.accumulators = 4;
  ScheduleKnobs back;
  ASSERT_TRUE(succeeded(back.merge(k.toAttr(&ctx, TaskFamily::Reduction), [&] { return err(); })));
  EXPECT_TRUE(back == k);

  ScheduleKnobs r;
  r.reduction = ReductionStrategy::Warp;
  r.vectorWidth = 4;
  r.cacheRow = true;
  ScheduleKnobs rowsBack;
  ASSERT_TRUE(succeeded(rowsBack.merge(r.toAttr(&ctx, TaskFamily::Rows), [&] { return err(); })));
  EXPECT_TRUE(rowsBack == r);
}

TEST_F(KnobsTest, CacheRowIsABoolean) {
  ScheduleKnobs k;
  EXPECT_TRUE(failed(k.merge(dict({b.getNamedAttr("cache_row", b.getI64IntegerAttr(2))}),
                             [&] { return err(); })));
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_NE(messages[0].find("knob 'cache_row' must be 0 or 1"), std::string::npos);
  EXPECT_FALSE(k.cacheRow);
}

TEST(TaskFamilyTest, NamesRoundTrip) {
  for (TaskFamily f : {TaskFamily::Elementwise, TaskFamily::Reduction, TaskFamily::Softmax,
                       TaskFamily::Matmul, TaskFamily::Rows})
    EXPECT_EQ(symbolizeTaskFamily(stringifyTaskFamily(f)), f);
  EXPECT_FALSE(symbolizeTaskFamily("conv").has_value());
  for (ReductionStrategy s :
       {ReductionStrategy::Thread, ReductionStrategy::Warp, ReductionStrategy::Block})
    EXPECT_EQ(symbolizeReductionStrategy(stringifyReductionStrategy(s)), s);
}
