//===- ReplyCheckTest.cpp - the parent variant a mailbox prompt carries ---------===//
//
// `evo-opt llm-check` rebuilds a reply's parent from the prompt's sidecar (ReplyCheck.h): the
// JSON form must give back the variant the run compiles against, and, being someone else's
// file, must refuse fields that could not have come from a run. The reply is then judged like
// the run judges it, gpu.func(s) alone included.
//
//===----------------------------------------------------------------------===//

#include "evo/Evolution/ReplyCheck.h"
#include "EvolutionFixture.h"
#include "llvm/Support/FormatVariadic.h"
#include "gtest/gtest.h"
#include <functional>
#include <string>

using namespace evo;
using evo::unittest::kElementwise;
using evo::unittest::registry;
namespace json = llvm::json;

namespace {
CompiledVariant reluParent() {
  CompiledVariant parent =
      compileVariant(registry(), kElementwise, TaskFamily::Elementwise, Genome(), PTXOptions(), "");
  EXPECT_TRUE(parent.ok) << parent.diagnostics;
  return parent;
}

/// `object` printed and parsed again, as it travels through a sidecar.
json::Value throughText(json::Object object) {
  llvm::Expected<json::Value> v =
      json::parse(llvm::formatv("{0:2}", json::Value(std::move(object))).str());
  EXPECT_TRUE(bool(v));
  return v ? std::move(*v) : json::Value(nullptr);
}

const char *kReluFunc =
    "gpu.func @k0(%x: memref<64x256xf32>, %y: memref<64x256xf32>) kernel attributes "
    "{known_block_size = array<i32: 256, 1, 1>} {\n"
    "  %zero = arith.constant 0.0 : f32\n"
    "  %t = gpu.thread_id x\n"
    "  %b = gpu.block_id x\n"
    "  %v = memref.load %x[%b, %t] : memref<64x256xf32>\n"
    "  %m = arith.maximumf %v, %zero : f32\n"
    "  memref.store %m, %y[%b, %t] : memref<64x256xf32>\n"
    "  gpu.return\n"
    "}\n";
} // namespace

/// Everything the check uses comes back: kernels, launches, scratch (tensor maps too), inputs and
/// the PTX options; the CUDA path is never taken from the file.
TEST(ReplyCheckTest, ParentVariantRoundTrips) {
  VariantInfo v = VariantInfo::of(reluParent());
  v.launches.push_back({"k1", 0, {8, 4, 2}, {128, 2, 1}, 4096, {0, 1, 2}});
  ScratchSpec plain{"partials", {64, 3}, "f32", true, nullptr, ""};
  ScratchSpec map{
      "map_a",
      {128},
      "i8",
      false,
      std::make_shared<const TensorMapDesc>(TensorMapDesc{0, {256, 64}, {1024}, {64, 16}, 128}),
      "f32"};
  v.scratch = {plain, map};
  PTXOptions ptx;
  ptx.chip = "sm_90a";
  ptx.features = "+ptx84";
  ptx.optLevel = 2;
  ptx.cudaPath = "/somewhere/else";

  llvm::Expected<ReplyTarget> t = replyTargetFromJson(throughText(replyTargetJson(v, ptx)));
  ASSERT_TRUE(bool(t)) << llvm::toString(t.takeError());
  EXPECT_EQ(t->parent.ir, v.ir);
  EXPECT_EQ(t->parent.numInputs, 1);
  ASSERT_EQ(t->parent.launches.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(t->parent.launches[i].kernel, v.launches[i].kernel);
    EXPECT_EQ(t->parent.launches[i].grid, v.launches[i].grid);
    EXPECT_EQ(t->parent.launches[i].block, v.launches[i].block);
    EXPECT_EQ(t->parent.launches[i].dynamicSharedMemory, v.launches[i].dynamicSharedMemory);
    EXPECT_EQ(t->parent.launches[i].args, v.launches[i].args);
  }
  ASSERT_EQ(t->parent.scratch.size(), 2u);
  EXPECT_EQ(t->parent.scratch[0].name, "partials");
  EXPECT_EQ(t->parent.scratch[0].shape, plain.shape);
  EXPECT_EQ(t->parent.scratch[0].elementType, "f32");
  EXPECT_TRUE(t->parent.scratch[0].zeroInit);
  EXPECT_FALSE(t->parent.scratch[0].tensorMap);
  ASSERT_TRUE(t->parent.scratch[1].tensorMap);
  EXPECT_EQ(t->parent.scratch[1].tensorMap->dims, map.tensorMap->dims);
  EXPECT_EQ(t->parent.scratch[1].tensorMap->strides, map.tensorMap->strides);
  EXPECT_EQ(t->parent.scratch[1].tensorMap->box, map.tensorMap->box);
  EXPECT_EQ(t->parent.scratch[1].tensorMap->swizzle, 128);
  EXPECT_EQ(t->parent.scratch[1].tensorMapElementType, "f32");
  EXPECT_EQ(t->ptx.chip, "sm_90a");
  EXPECT_EQ(t->ptx.features, "+ptx84");
  EXPECT_EQ(t->ptx.optLevel, 2);
  EXPECT_EQ(t->ptx.cudaPath, "");
}

/// Each field that could not have come from a run is refused, with a reason naming it.
TEST(ReplyCheckTest, RefusesWhatNoRunWrites) {
  VariantInfo v = VariantInfo::of(reluParent());
  json::Object good = replyTargetJson(v, PTXOptions());
  struct Case {
    const char *what;
    std::function<void(json::Object &)> edit;
    const char *reason;
  };
  const Case cases[] = {
      {"another format", [](json::Object &o) { o["format"] = "evo-variant/2"; }, "format is not"},
      {"no ir", [](json::Object &o) { o.erase("ir"); }, "holds no \"ir\""},
      {"deep ir",
       [](json::Object &o) { o["ir"] = std::string(5000, '[') + std::string(5000, ']'); },
       "nests brackets deeper than 1000 levels"},
      {"no launches", [](json::Object &o) { o["launches"] = json::Array(); },
       "holds no \"launches\""},
      {"a zero block",
       [](json::Object &o) {
         (*(*o.getArray("launches"))[0].getAsObject())["block"] = json::Array{0, 1, 1};
       },
       "parent_variant.launches[0].block[0]"},
      {"a negative scratch size",
       [](json::Object &o) {
         o["scratch"] = json::Array{
             json::Object{{"name", "s"}, {"shape", json::Array{-1}}, {"element_type", "f32"}}};
       },
       "expected sizes in [0, 2^40]"},
      {"a scratch without a type",
       [](json::Object &o) {
         o["scratch"] = json::Array{json::Object{{"name", "s"}, {"shape", json::Array{4}}}};
       },
       "expected {\"name\", \"shape\", \"element_type\"}"},
      {"negative inputs", [](json::Object &o) { o["num_inputs"] = -1; },
       "\"num_inputs\" is not a count"},
      {"a chip with an option", [](json::Object &o) { o["chip"] = "sm_90 --output-file=/x"; },
       "\"chip\" is not sm_<digits>[a-z]"},
      {"a path as chip", [](json::Object &o) { o["chip"] = "../../sm_90"; },
       "\"chip\" is not sm_<digits>[a-z]"},
      {"features with a space", [](json::Object &o) { o["features"] = "+ptx80 -o x"; },
       "\"features\" are not a list"},
      {"level 9", [](json::Object &o) { o["opt_level"] = 9; }, "\"opt_level\" is not 0 to 3"},
  };
  for (const Case &c : cases) {
    json::Object o = good;
    c.edit(o);
    llvm::Expected<ReplyTarget> t = replyTargetFromJson(throughText(std::move(o)));
    ASSERT_FALSE(bool(t)) << c.what;
    std::string why = llvm::toString(t.takeError());
    EXPECT_NE(why.find(c.reason), std::string::npos) << c.what << ": " << why;
  }
  EXPECT_FALSE(bool(replyTargetFromJson(json::Value("not an object")))) << "a string";
  llvm::Expected<ReplyTarget> ok = replyTargetFromJson(throughText(std::move(good)));
  EXPECT_TRUE(bool(ok)) << llvm::toString(ok.takeError());
}

/// A reply judged as the run judges it: no code, a contract break, and a good kernel sent as a
/// gpu.func alone (it replaces the parent's kernel of that name; the docs promise this form,
/// which verifies only inside a gpu.module).
TEST(ReplyCheckTest, JudgesLikeTheRun) {
  ReplyTarget target{VariantInfo::of(reluParent()), PTXOptions()};
  ReplyCheck none = checkReply(registry(), "  I'm sorry.  ", target, "");
  EXPECT_FALSE(none.ok);
  EXPECT_EQ(none.diagnostics, "the reply holds no MLIR code block (it begins: \"I'm sorry.\")");

  std::string reply = std::string("name: relu\n```mlir\n") + kReluFunc + "```\nthought: rows.\n";
  ReplyCheck func = checkReply(registry(), reply, target, "");
  EXPECT_TRUE(func.ok) << func.diagnostics;
  EXPECT_FALSE(func.compiled.ptx.empty());
  EXPECT_NE(func.compiled.ir.find("gpu.block_id"), std::string::npos) << func.compiled.ir;

  std::string renamed = reply;
  renamed.replace(renamed.find("@k0"), 3, "@k9");
  ReplyCheck extra = checkReply(registry(), renamed, target, "");
  EXPECT_FALSE(extra.ok);
  EXPECT_NE(extra.diagnostics.find("unexpected kernel @k9"), std::string::npos)
      << extra.diagnostics;

  // A type error inside a gpu.func alone keeps the reply's line numbers.
  std::string typo = reply;
  typo.replace(typo.find("%m = arith.maximumf %v, %zero"), 29, "%m = arith.maximumf %v, %t");
  ReplyCheck bad = checkReply(registry(), typo, target, "");
  EXPECT_FALSE(bad.ok);
  EXPECT_NE(bad.diagnostics.find("the code does not parse as MLIR\nloc(\"-\":6:"),
            std::string::npos)
      << bad.diagnostics;
}
