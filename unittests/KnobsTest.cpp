//===- KnobsTest.cpp - schedule knob parsing and validation -----------------===//

#include "evo/Dialect/Evo/IR/Knobs.h"
#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringExtras.h"
#include "gtest/gtest.h"

using namespace mlir;
using namespace evo;
namespace json = llvm::json;

namespace {
class KnobsTest : public ::testing::Test {
protected:
  KnobsTest() : b(&ctx), handler(&ctx, [this](Diagnostic &d) {
                  messages.push_back(d.str());
                  return success();
                }) {
    ctx.loadDialect<EvoDialect>();
  }
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
  KnobsAttr ew = k.toAttr(&ctx, TaskFamily::Elementwise);
  EXPECT_TRUE(ew.getElementsPerThread().has_value());
  EXPECT_FALSE(ew.getReduction().has_value());
  EXPECT_EQ(ew.getVectorWidth(), std::optional<int64_t>(4));

  KnobsAttr red = k.toAttr(&ctx, TaskFamily::Reduction);
  EXPECT_TRUE(red.getReduction().has_value());
  EXPECT_TRUE(red.getAccumulators().has_value());
  EXPECT_FALSE(red.getElementsPerThread().has_value());

  KnobsAttr soft = k.toAttr(&ctx, TaskFamily::Softmax);
  EXPECT_FALSE(soft.getAccumulators().has_value());
  EXPECT_FALSE(soft.getCacheRow().has_value());

  KnobsAttr rows = k.toAttr(&ctx, TaskFamily::Rows);
  EXPECT_TRUE(rows.getCacheRow().has_value());
  EXPECT_TRUE(rows.getReduction().has_value());
  EXPECT_FALSE(rows.getAccumulators().has_value());

  KnobsAttr scan = k.toAttr(&ctx, TaskFamily::Scan);
  EXPECT_TRUE(scan.getReduction().has_value());
  EXPECT_TRUE(scan.getElementsPerThread().has_value());
  EXPECT_EQ(scan.getVectorWidth(), std::optional<int64_t>(4));
  EXPECT_FALSE(scan.getAccumulators().has_value());
  EXPECT_FALSE(scan.getSplit().has_value());

  KnobsAttr naive = k.toAttr(&ctx, TaskFamily::Matmul);
  EXPECT_TRUE(naive.getBlockSize().has_value());
  EXPECT_TRUE(naive.getTileSizes().empty());
  k.tileSizes = {128, 128, 8};
  k.threadTile = {8, 8};
  KnobsAttr tiled = k.toAttr(&ctx, TaskFamily::Matmul);
  EXPECT_FALSE(tiled.getBlockSize().has_value());
  EXPECT_EQ(tiled.getTileSizes(), ArrayRef<int64_t>({128, 128, 8}));
  // The attribute and the JSON of the run store list the same knobs.
  EXPECT_EQ(json::Value(tiled.toJson()), json::Value(k.toJson(TaskFamily::Matmul)));

  // mma_sync ignores vector_width and thread_tile (not recorded with tiles), but means nothing
  // without tiles, where an untiled contraction's vector_width (its K loads) and group_outputs
  // stay recorded.
  ScheduleKnobs gemv;
  gemv.reduction = ReductionStrategy::Warp;
  gemv.vectorWidth = 4;
  gemv.groupOutputs = 2;
  gemv.mmaSync = true;
  KnobsAttr untiled = gemv.toAttr(&ctx, TaskFamily::Matmul);
  EXPECT_EQ(untiled.getVectorWidth(), std::optional<int64_t>(4));
  EXPECT_EQ(untiled.getGroupOutputs(), std::optional<int64_t>(2));
  EXPECT_FALSE(untiled.getMmaSync().has_value());
  gemv.tileSizes = {128, 128, 32};
  gemv.threadTile = {8, 8};
  KnobsAttr mma = gemv.toAttr(&ctx, TaskFamily::Matmul);
  EXPECT_FALSE(mma.getVectorWidth().has_value());
  EXPECT_FALSE(mma.getGroupOutputs().has_value());
  EXPECT_TRUE(mma.getThreadTile().empty());
  EXPECT_EQ(mma.getMmaSync(), std::optional<bool>(true));
}

TEST_F(KnobsTest, RecordedKnobsMergeBackToTheSameKnobs) {
  // A kernel's evo.knobs must be re-loweable: overlaying them reproduces the knobs.
  ScheduleKnobs k;
  k.blockSize = 512;
  k.reduction = ReductionStrategy::Block;
  k.vectorWidth = 2;
  k.accumulators = 4;
  ScheduleKnobs back;
  ASSERT_TRUE(succeeded(cast<KnobSetAttrInterface>(k.toAttr(&ctx, TaskFamily::Reduction))
                            .overlayKnobs(back, [&] { return err(); })));
  EXPECT_TRUE(back == k);

  ScheduleKnobs r;
  r.reduction = ReductionStrategy::Warp;
  r.vectorWidth = 4;
  r.cacheRow = true;
  EXPECT_TRUE(r.toAttr(&ctx, TaskFamily::Rows).getKnobs() == r);
  // And through JSON (the run store).
  ScheduleKnobs fromJson;
  ASSERT_TRUE(succeeded(fromJson.mergeJson(r.toJson(TaskFamily::Rows), nullptr)));
  EXPECT_TRUE(fromJson == r);
}

TEST_F(KnobsTest, KnobsAttrRoundTripsThroughItsAssembly) {
  Attribute a = parseAttribute(
      "#evo.knobs<block_size = 128, reduction = warp, tile_sizes = [64, 64, 16], cache_row = true>",
      &ctx);
  auto knobs = dyn_cast_or_null<KnobsAttr>(a);
  ASSERT_TRUE(knobs) << (messages.empty() ? "" : messages.front());
  EXPECT_EQ(knobs.getBlockSize(), std::optional<int64_t>(128));
  EXPECT_EQ(knobs.getReduction(), std::optional<ReductionStrategy>(ReductionStrategy::Warp));
  EXPECT_EQ(knobs.getCacheRow(), std::optional<bool>(true));
  EXPECT_FALSE(knobs.getSplit().has_value());
  std::string printed;
  llvm::raw_string_ostream os(printed);
  os << Attribute(knobs);
  EXPECT_EQ(parseAttribute(printed, &ctx), a) << printed;
  EXPECT_EQ(printed, "#evo.knobs<block_size = 128, reduction = warp, tile_sizes = [64, 64, 16], "
                     "cache_row = true>");
}

TEST_F(KnobsTest, KnobsAttrChecksValuesWhenParsed) {
  // The same checks as a dictionary merge, with the same messages.
  EXPECT_FALSE(parseAttribute("#evo.knobs<block_size = 100>", &ctx));
  ASSERT_FALSE(messages.empty());
  EXPECT_NE(messages.back().find("block_size must be a multiple of 32 in [32, 1024], got 100"),
            std::string::npos)
      << messages.back();
  messages.clear();
  EXPECT_FALSE(parseAttribute("#evo.knobs<thread_tile = [4]>", &ctx));
  ASSERT_FALSE(messages.empty());
  EXPECT_NE(messages.back().find("thread_tile must have 2 entries"), std::string::npos);
  messages.clear();
  EXPECT_FALSE(parseAttribute("#evo.knobs<blok_size = 64>", &ctx));
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages.front().rfind("#evo.knobs: unknown key 'blok_size' (expected one of ", 0), 0u)
      << messages.front();
  messages.clear();
  EXPECT_FALSE(parseAttribute("#evo.knobs<reduction = tree>", &ctx));
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages.front(), "#evo.knobs: 'reduction' expects one of thread, warp, block");
  // A boolean is not an integer knob (AsmParser would read `true` as the 1-bit integer -1).
  messages.clear();
  EXPECT_FALSE(parseAttribute("#evo.knobs<block_size = true>", &ctx));
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages.front(), "#evo.knobs: 'block_size' expects an integer, not a boolean");
}

TEST_F(KnobsTest, FamilyKnobSetsAndSearchValuesComeFromTheKnobList) {
  // Every knob a family searches is one it records for some knob values, and every value the
  // mutators propose passes the knob's check.
  for (TaskFamily f : {TaskFamily::Elementwise, TaskFamily::Reduction, TaskFamily::Softmax,
                       TaskFamily::Matmul, TaskFamily::Rows, TaskFamily::Scan}) {
    ASSERT_FALSE(familyKnobs(f).empty()) << stringifyTaskFamily(f).str();
    for (KnobId id : familyKnobs(f)) {
      ASSERT_FALSE(knobSearchValues(id).empty()) << knobName(id).str();
      for (const KnobList &v : knobSearchValues(id)) {
        ScheduleKnobs k;
        setKnobValue(k, id, v);
        EXPECT_TRUE(getKnobValue(k, id) == v || (v.empty() && id == KnobId::tile_sizes))
            << knobName(id).str();
        EXPECT_TRUE(succeeded(k.verify([&] { return err(); }))) << knobName(id).str();
      }
    }
  }
  EXPECT_EQ(symbolizeKnob("split"), std::optional<KnobId>(KnobId::split));
  EXPECT_FALSE(symbolizeKnob("splitt").has_value());
  EXPECT_TRUE(messages.empty());
}

TEST_F(KnobsTest, KnobsAttrOverlaysExactlyTheKnobsItSets) {
  // For every knob of the list, whatever its kind: #evo.knobs<that knob = v> over knobs that
  // differ from the defaults everywhere changes that knob to v and no other.
  static const char *const kinds[] = {
#define EVO_KNOB_KIND(name, cpp, kind, arg, doc) #kind,
      EVO_KNOB_LIST(EVO_KNOB_KIND)
#undef EVO_KNOB_KIND
  };
  ScheduleKnobs background;
  for (size_t i = 0; i < knownKnobNames().size(); ++i) {
    auto id = static_cast<KnobId>(i);
    ASSERT_FALSE(knobSearchValues(id).empty()) << knobName(id).str();
    setKnobValue(background, id, knobSearchValues(id).back());
  }
  ASSERT_TRUE(succeeded(background.verify([&] { return err(); })));
  for (size_t i = 0; i < knownKnobNames().size(); ++i) {
    auto id = static_cast<KnobId>(i);
    StringRef kind = kinds[i];
    KnobList want;
    for (const KnobList &v : knobSearchValues(id))
      if (!v.empty() && v != getKnobValue(background, id)) {
        want = v;
        break;
      }
    ASSERT_FALSE(want.empty()) << knobName(id).str();
    std::string text = ("#evo.knobs<" + knobName(id) + " = ").str();
    if (kind == "Int")
      text += std::to_string(want[0]);
    else if (kind == "Bool")
      text += want[0] ? "true" : "false";
    else if (kind == "Strategy")
      text += stringifyReductionStrategy(static_cast<ReductionStrategy>(want[0])).str();
    else if (kind == "F32Matmul")
      text += "\"" + stringifyF32Matmul(static_cast<F32Matmul>(want[0])).str() + "\"";
    else if (kind == "List")
      text += "[" + llvm::join(llvm::map_range(want, [](int64_t v) { return std::to_string(v); }),
                               ", ") +
              "]";
    else
      FAIL() << "knob kind " << kind.str() << " has no assembly in this test";
    text += ">";
    auto attr = dyn_cast_or_null<KnobsAttr>(parseAttribute(text, &ctx));
    ASSERT_TRUE(attr) << text << (messages.empty() ? "" : ": " + messages.back());
    ScheduleKnobs k = background;
    ASSERT_TRUE(succeeded(cast<KnobSetAttrInterface>(attr).overlayKnobs(k, [&] { return err(); })));
    ScheduleKnobs expected = background;
    setKnobValue(expected, id, want);
    EXPECT_TRUE(k == expected) << text;
  }
  // An empty set changes nothing.
  ScheduleKnobs k = background;
  auto empty = dyn_cast_or_null<KnobsAttr>(parseAttribute("#evo.knobs<>", &ctx));
  ASSERT_TRUE(empty);
  ASSERT_TRUE(succeeded(cast<KnobSetAttrInterface>(empty).overlayKnobs(k, [&] { return err(); })));
  EXPECT_TRUE(k == background);
  EXPECT_TRUE(messages.empty());
}

TEST_F(KnobsTest, CacheRowIsABoolean) {
  ScheduleKnobs k;
  EXPECT_TRUE(failed(k.merge(dict({b.getNamedAttr("cache_row", b.getI64IntegerAttr(2))}),
                             [&] { return err(); })));
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_NE(messages[0].find("knob 'cache_row' must be 0 or 1"), std::string::npos);
  EXPECT_FALSE(k.cacheRow);
}

TEST_F(KnobsTest, ChecksWithoutAContextSayWhatADiagnosticSays) {
  // verify(std::string &) and mergeJson need no MLIRContext; their messages are the diagnostic's.
  ScheduleKnobs k;
  std::string error;
  EXPECT_TRUE(succeeded(k.verify(error)));
  EXPECT_TRUE(error.empty());
  k.threadTile = {4};
  EXPECT_TRUE(failed(k.verify(error)));
  EXPECT_EQ(error, "thread_tile must have 2 entries (M, N), got 1");
  EXPECT_TRUE(failed(k.verify([&] { return err(); })));
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0], error);

  ScheduleKnobs fromJson;
  json::Object o{{"block_size", 128}, {"split", 3}};
  EXPECT_TRUE(failed(fromJson.mergeJson(o, &error)));
  EXPECT_EQ(error, "split must be a power of 2 in [1, 256], got 3");
  EXPECT_TRUE(failed(fromJson.mergeJson(json::Object{{"split", 3}}, nullptr)));
  ASSERT_TRUE(succeeded(fromJson.mergeJson(json::Object{{"split", 4}}, &error)));
  EXPECT_EQ(fromJson.split, 4);
  EXPECT_EQ(messages.size(), 1u); // nothing reached the context
}

TEST(TaskFamilyTest, NamesRoundTrip) {
  for (TaskFamily f : {TaskFamily::Elementwise, TaskFamily::Reduction, TaskFamily::Softmax,
                       TaskFamily::Matmul, TaskFamily::Rows, TaskFamily::Scan})
    EXPECT_EQ(symbolizeTaskFamily(stringifyTaskFamily(f)), f);
  EXPECT_FALSE(symbolizeTaskFamily("conv").has_value());
  for (ReductionStrategy s :
       {ReductionStrategy::Thread, ReductionStrategy::Warp, ReductionStrategy::Block})
    EXPECT_EQ(symbolizeReductionStrategy(stringifyReductionStrategy(s)), s);
}
