//===- ManifestTest.cpp - manifest JSON --------------------------------------===//

#include "evo/Target/Manifest.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/MLIRContext.h"
#include "gtest/gtest.h"

using namespace mlir;
using namespace evo;
namespace json = llvm::json;

TEST(ManifestTest, DescribesBuffersKernelsAndLaunches) {
  MLIRContext ctx;
  Builder b(&ctx);
  ManifestInfo info;
  info.name = "f";
  info.chip = "sm_90";
  info.features = "+ptx80";
  info.ptxFile = "f.ptx";
  info.ptx = "// ptx";
  LaunchPlan plan;
  plan.funcName = "f";
  auto in = MemRefType::get({8, 4}, b.getF16Type());
  auto out = MemRefType::get({8}, b.getF32Type());
  plan.buffers = {{"arg0", BufferRole::Input, in}, {"result0", BufferRole::Output, out}};
  KernelLaunch l;
  l.kernel = "f_k0";
  l.grid = {2, 1, 1};
  l.block = {128, 1, 1};
  l.args = {0, 1};
  plan.launches.push_back(l);
  info.plan = plan;
  DictionaryAttr knobs = b.getDictionaryAttr(
      {b.getNamedAttr("reduction", b.getStringAttr("warp")),
       b.getNamedAttr("tile_sizes", b.getDenseI64ArrayAttr({64, 64, 8}))});
  info.kernels.push_back({"f_k0", {in, out}, knobs});
  info.ptxasPath = "/usr/local/cuda/bin/ptxas";
  info.resources["f_k0"] = KernelResources{40, 128, 0, 0, 0, 1};

  json::Value v = buildManifest(info);
  json::Object *m = v.getAsObject();
  ASSERT_TRUE(m);
  EXPECT_EQ(*m->getString("format"), "evo-manifest/1");
  EXPECT_EQ(*m->getString("function"), "f");
  // sha256 of "// ptx"
  EXPECT_EQ(*m->getObject("ptx")->getString("sha256"), sha256Hex("// ptx"));
  EXPECT_EQ(sha256Hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");

  json::Array *buffers = m->getArray("buffers");
  ASSERT_EQ(buffers->size(), 2u);
  json::Object *b0 = (*buffers)[0].getAsObject();
  EXPECT_EQ(*b0->getString("dtype"), "f16");
  EXPECT_EQ(*b0->getInteger("bytes"), 64);
  EXPECT_EQ(*b0->getString("role"), "input");

  json::Object *k = (*m->getArray("kernels"))[0].getAsObject();
  EXPECT_EQ(*k->getObject("knobs")->getString("reduction"), "warp");
  EXPECT_EQ(k->getObject("knobs")->getArray("tile_sizes")->size(), 3u);
  EXPECT_EQ(*k->getObject("resources")->getInteger("registers"), 40);
  EXPECT_EQ(*k->getObject("resources")->getInteger("shared_memory"), 128);

  json::Object *launch = (*m->getArray("launches"))[0].getAsObject();
  EXPECT_EQ(*(*launch->getArray("block"))[0].getAsInteger(), 128);
  EXPECT_EQ(launch->getArray("args")->size(), 2u);
}

TEST(ManifestTest, WithoutPtxasTheReportIsNull) {
  ManifestInfo info;
  info.name = "g";
  json::Value v = buildManifest(info);
  json::Object *m = v.getAsObject();
  EXPECT_EQ(m->get("ptxas")->kind(), json::Value::Null);
  EXPECT_TRUE(m->getArray("launches")->empty());
}
