//===- ManifestTest.cpp - manifest JSON --------------------------------------===//

#include "evo/Target/Manifest.h"
#include "evo/Target/OutputFiles.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
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

TEST(ManifestTest, TensorMapsRoundTrip) {
  MLIRContext ctx;
  Builder b(&ctx);
  ManifestInfo info;
  info.name = "g";
  LaunchPlan plan;
  plan.funcName = "g";
  plan.buffers = {{"arg0", BufferRole::Input, MemRefType::get({256, 512}, b.getBF16Type())},
                  {"result0", BufferRole::Output, MemRefType::get({256}, b.getF32Type())}};
  TensorMapDesc map{0, {512, 256}, {1024}, {64, 128}, 128};
  plan.buffers.push_back(tensorMapBuffer(&ctx, "tmap0", map));
  info.plan = plan;
  json::Value v = buildManifest(info);
  // Through text, as a runtime reads it.
  llvm::Expected<json::Value> parsed = json::parse(llvm::formatv("{0}", v).str());
  ASSERT_TRUE(bool(parsed));
  json::Object *m = parsed->getAsObject();
  EXPECT_EQ(*m->getString("format"), "evo-manifest/1");
  json::Array *buffers = m->getArray("buffers");
  ASSERT_EQ(buffers->size(), 3u);
  EXPECT_FALSE((*buffers)[0].getAsObject()->get("tensor_map"));
  json::Object *t = (*buffers)[2].getAsObject();
  EXPECT_EQ(*t->getString("role"), "tensor_map");
  EXPECT_EQ(*t->getInteger("bytes"), 128);
  EXPECT_EQ(*t->getString("dtype"), "i8");
  const json::Value *tm = t->get("tensor_map");
  ASSERT_TRUE(tm);
  EXPECT_EQ(*tm->getAsObject()->getString("element_type"), "bf16");
  TensorMapDesc back;
  std::string elt;
  json::Path::Root root;
  ASSERT_TRUE(fromJSON(*tm, back, elt, root));
  EXPECT_EQ(elt, "bf16");
  EXPECT_EQ(back.source, 0u);
  EXPECT_EQ(back.dims, map.dims);
  EXPECT_EQ(back.strides, map.strides);
  EXPECT_EQ(back.box, map.box);
  EXPECT_EQ(back.swizzle, 128);

  // Malformed maps are refused with the field.
  auto errorOf = [](StringRef text) {
    TensorMapDesc d;
    std::string e;
    json::Path::Root r("tensor_map");
    llvm::Expected<json::Value> j = json::parse(text);
    EXPECT_TRUE(bool(j));
    if (!j) {
      llvm::consumeError(j.takeError());
      return std::string();
    }
    EXPECT_FALSE(fromJSON(*j, d, e, r));
    return llvm::toString(r.getError());
  };
  EXPECT_NE(errorOf(R"({"element_type":"f16","dims":[8],"strides":[],"box":[8]})").find("source"),
            std::string::npos);
  EXPECT_NE(errorOf(R"({"source":-1,"element_type":"f16","dims":[8],"strides":[],"box":[8]})")
                .find("source"),
            std::string::npos);
  EXPECT_NE(errorOf(R"({"source":0,"element_type":"f16","dims":[8,1,1,1,1,1],"strides":[],"box":[8]})")
                .find("dims"),
            std::string::npos);
  EXPECT_NE(errorOf(R"({"source":0,"element_type":"f16","dims":[8],"strides":[],"box":[0]})")
                .find("box"),
            std::string::npos);
  EXPECT_NE(errorOf(R"({"source":0,"dims":[8],"strides":[],"box":[8]})").find("element_type"),
            std::string::npos);
}

// A scalar argument (docs/lowering.md, "Scalar arguments"): an input buffer of rank 0 marked
// by_value, and the kernels' parameter for it the value (dtype, empty shape, by_value), through
// the JSON text as a runtime reads it. Buffers and parameters that are pointers carry no key.
TEST(ManifestTest, ScalarArgumentsRoundTripAsByValue) {
  MLIRContext ctx;
  Builder b(&ctx);
  ManifestInfo info;
  info.name = "leaky";
  LaunchPlan plan;
  plan.funcName = "leaky";
  auto t = MemRefType::get({1024}, b.getF32Type());
  plan.buffers = {{"arg0", BufferRole::Input, t},
                  *argumentBuffer(b.getF64Type(), "arg1", BufferRole::Input),
                  *argumentBuffer(b.getI1Type(), "arg2", BufferRole::Input),
                  {"result0", BufferRole::Output, t}};
  KernelLaunch l;
  l.kernel = "leaky_k0";
  l.args = {0, 1, 2, 3};
  plan.launches.push_back(l);
  info.plan = plan;
  info.kernels.push_back({"leaky_k0", {t, b.getF64Type(), b.getI1Type(), t}, {}});
  llvm::Expected<json::Value> parsed =
      json::parse(llvm::formatv("{0}", buildManifest(info)).str());
  ASSERT_TRUE(bool(parsed));
  json::Object *m = parsed->getAsObject();
  EXPECT_NE(m->getString("abi")->find("'by_value'"), StringRef::npos);
  json::Array *buffers = m->getArray("buffers");
  ASSERT_EQ(buffers->size(), 4u);
  struct Want {
    const char *dtype;
    int64_t bytes;
    bool byValue;
  };
  for (auto [i, want] : llvm::enumerate(
           std::vector<Want>{{"f32", 4096, false}, {"f64", 8, true}, {"i1", 1, true},
                             {"f32", 4096, false}})) {
    json::Object *buf = (*buffers)[i].getAsObject();
    EXPECT_EQ(*buf->getString("dtype"), want.dtype) << i;
    EXPECT_EQ(*buf->getInteger("bytes"), want.bytes) << i;
    EXPECT_EQ(buf->getBoolean("by_value").value_or(false), want.byValue) << i;
    EXPECT_EQ(buf->get("by_value") != nullptr, want.byValue) << i; // only where true
    EXPECT_EQ(buf->getArray("shape")->empty(), want.byValue) << i;
    EXPECT_EQ(*buf->getString("role"), i < 3 ? "input" : "output") << i;
  }
  json::Array *params = (*m->getArray("kernels"))[0].getAsObject()->getArray("params");
  ASSERT_EQ(params->size(), 4u);
  for (auto [i, p] : llvm::enumerate(*params)) {
    json::Object *o = p.getAsObject();
    bool scalar = i == 1 || i == 2;
    EXPECT_EQ(o->getBoolean("by_value").value_or(false), scalar) << i;
    EXPECT_EQ(o->getArray("shape")->empty(), scalar) << i;
  }
  EXPECT_EQ(*(*params)[1].getAsObject()->getString("dtype"), "f64");
  EXPECT_EQ(*(*params)[2].getAsObject()->getString("dtype"), "i1");
  // The launch names the scalar's buffer like any other argument.
  KernelLaunch back;
  json::Path::Root root;
  ASSERT_TRUE(fromJSON((*m->getArray("launches"))[0], back, root));
  EXPECT_EQ(back.args, (SmallVector<unsigned>{0, 1, 2, 3}));
}

TEST(ManifestTest, WithoutPtxasTheReportIsNull) {
  ManifestInfo info;
  info.name = "g";
  json::Value v = buildManifest(info);
  json::Object *m = v.getAsObject();
  EXPECT_EQ(m->get("ptxas")->kind(), json::Value::Null);
  EXPECT_TRUE(m->getArray("launches")->empty());
}

namespace {
/// A fresh directory under the system temp dir, removed with everything in it.
class OutputFilesTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("evo-output-files", root));
  }
  void TearDown() override { llvm::sys::fs::remove_directories(root); }
  std::string path(llvm::StringRef rel) const {
    llvm::SmallString<256> p(root);
    llvm::sys::path::append(p, rel);
    return std::string(p);
  }
  /// The names in `dir`, hidden ones included, sorted.
  std::vector<std::string> list(llvm::StringRef rel = "") const {
    std::vector<std::string> names;
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(rel.empty() ? std::string(root) : path(rel), ec),
         end;
         !ec && it != end; it.increment(ec))
      names.push_back(llvm::sys::path::filename(it->path()).str());
    llvm::sort(names);
    return names;
  }
  std::string read(llvm::StringRef rel) const {
    auto buf = llvm::MemoryBuffer::getFile(path(rel));
    return buf ? (*buf)->getBuffer().str() : "<missing>";
  }
  void write(llvm::StringRef rel, llvm::StringRef text) const {
    std::error_code ec;
    llvm::raw_fd_ostream os(path(rel), ec);
    ASSERT_FALSE(ec);
    os << text;
  }
  static auto text(llvm::StringRef t) {
    return [t](llvm::raw_ostream &os) { os << t; };
  }
  llvm::SmallString<256> root;
};
} // namespace

TEST_F(OutputFilesTest, NothingIsVisibleUntilTheCommit) {
  evo::OutputTransaction tx;
  llvm::Expected<std::string> dir = tx.createDirectory(path("out/sub"));
  ASSERT_TRUE(bool(dir)) << llvm::toString(dir.takeError());
  write("out/sub/a.ptx", "old");
  ASSERT_FALSE(tx.claim(*dir, "a.ptx"));
  ASSERT_FALSE(tx.claim(*dir, "a.json"));
  ASSERT_FALSE(tx.stage(*dir, "a.ptx", text("new ptx")));
  ASSERT_FALSE(tx.stage(*dir, "a.json", text("{}")));
  // Staged files are hidden temporaries; the old file is untouched.
  EXPECT_EQ(read("out/sub/a.ptx"), "old");
  std::vector<std::string> names = list("out/sub");
  ASSERT_EQ(names.size(), 3u);
  EXPECT_EQ(names[2], "a.ptx");
  EXPECT_TRUE(llvm::StringRef(names[0]).starts_with(".a.json.tmp-"));
  EXPECT_TRUE(llvm::StringRef(names[1]).starts_with(".a.ptx.tmp-"));
  ASSERT_FALSE(tx.commit());
  EXPECT_EQ(list("out/sub"), (std::vector<std::string>{"a.json", "a.ptx"}));
  EXPECT_EQ(read("out/sub/a.ptx"), "new ptx");
  EXPECT_EQ(tx.committed().size(), 2u);
}

TEST_F(OutputFilesTest, ADiscardLeavesTheDirectoriesAsTheyWere) {
  write("keep.ptx", "old");
  {
    evo::OutputTransaction tx;
    llvm::Expected<std::string> dir = tx.createDirectory(path("new/deeper"));
    ASSERT_TRUE(bool(dir));
    ASSERT_FALSE(tx.claim(*dir, "x.ptx"));
    ASSERT_FALSE(tx.stage(*dir, "x.ptx", text("x")));
    llvm::Expected<std::string> top = tx.createDirectory(root);
    ASSERT_TRUE(bool(top));
    ASSERT_FALSE(tx.stage(*top, "keep.ptx", text("new")));
    tx.discard();
  }
  // The directories it created are gone, the one it found stays, with its file unchanged.
  EXPECT_EQ(list(), (std::vector<std::string>{"keep.ptx"}));
  EXPECT_EQ(read("keep.ptx"), "old");
  // The destructor discards too.
  {
    evo::OutputTransaction tx;
    llvm::Expected<std::string> dir = tx.createDirectory(path("d"));
    ASSERT_TRUE(bool(dir));
    ASSERT_FALSE(tx.stage(*dir, "y.ptx", text("y")));
  }
  EXPECT_EQ(list(), (std::vector<std::string>{"keep.ptx"}));
}

TEST_F(OutputFilesTest, APathIsClaimedOncePerInvocationIgnoringCase) {
  evo::OutputTransaction invocation, pass1, pass2, pass3;
  llvm::Expected<std::string> dir = pass1.createDirectory(root);
  ASSERT_TRUE(bool(dir));
  ASSERT_FALSE(pass1.claim(*dir, "relu.ptx"));
  llvm::Error twice = pass1.claim(*dir, "RELU.ptx");
  ASSERT_TRUE(bool(twice));
  EXPECT_NE(llvm::toString(std::move(twice)).find("written twice by this invocation"),
            std::string::npos);
  ASSERT_FALSE(pass1.stage(*dir, "relu.ptx", text("1")));
  ASSERT_FALSE(invocation.adopt(pass1));
  // A later pass (another --split-input-file chunk) may not write the same file.
  ASSERT_FALSE(pass2.claim(*dir, "Relu.ptx"));
  llvm::Error taken = invocation.checkClaim(*dir, "Relu.ptx");
  EXPECT_TRUE(bool(taken));
  llvm::consumeError(std::move(taken));
  llvm::Error clash = invocation.adopt(pass2);
  ASSERT_TRUE(bool(clash));
  llvm::consumeError(std::move(clash));
  pass2.discard();
  ASSERT_FALSE(pass3.claim(*dir, "other.ptx"));
  ASSERT_FALSE(pass3.stage(*dir, "other.ptx", text("3")));
  ASSERT_FALSE(invocation.adopt(pass3));
  ASSERT_FALSE(invocation.commit());
  EXPECT_EQ(list(), (std::vector<std::string>{"other.ptx", "relu.ptx"}));
  EXPECT_EQ(read("relu.ptx"), "1");
}

TEST_F(OutputFilesTest, AFailedRenamePutsBackWhatTheCommitReplaced) {
  write("a.ptx", "old a");
  evo::OutputTransaction tx;
  llvm::Expected<std::string> dir = tx.createDirectory(root);
  llvm::Expected<std::string> other = tx.createDirectory(path("other"));
  ASSERT_TRUE(dir && other);
  ASSERT_FALSE(tx.stage(*dir, "a.ptx", text("new a")));
  ASSERT_FALSE(tx.stage(*other, "b.ptx", text("new b")));
  // The second rename fails (its temporary and directory are gone) after the first replaced
  // a.ptx: the commit must put the old a.ptx back.
  ASSERT_FALSE(llvm::sys::fs::remove_directories(path("other")));
  llvm::Error e = tx.commit();
  ASSERT_TRUE(bool(e));
  EXPECT_NE(llvm::toString(std::move(e)).find("cannot write"), std::string::npos);
  EXPECT_EQ(list(), (std::vector<std::string>{"a.ptx"}));
  EXPECT_EQ(read("a.ptx"), "old a");
  EXPECT_TRUE(tx.committed().empty());
}

TEST_F(OutputFilesTest, ATargetThatIsADirectoryFailsTheCommitBeforeAnyChange) {
  write("a.ptx", "old a");
  ASSERT_FALSE(llvm::sys::fs::create_directory(path("b.ptx")));
  evo::OutputTransaction tx;
  llvm::Expected<std::string> dir = tx.createDirectory(root);
  ASSERT_TRUE(bool(dir));
  ASSERT_FALSE(tx.stage(*dir, "a.ptx", text("new a")));
  ASSERT_FALSE(tx.stage(*dir, "b.ptx", text("new b")));
  llvm::Error e = tx.commit();
  ASSERT_TRUE(bool(e));
  EXPECT_NE(llvm::toString(std::move(e)).find("it is a directory"), std::string::npos);
  EXPECT_EQ(list(), (std::vector<std::string>{"a.ptx", "b.ptx"}));
  EXPECT_EQ(read("a.ptx"), "old a");
  EXPECT_TRUE(llvm::sys::fs::is_directory(path("b.ptx")));
}

TEST_F(OutputFilesTest, AnOutputDirectoryThatIsAFileIsAnError) {
  write("file", "x");
  evo::OutputTransaction tx;
  llvm::Expected<std::string> dir = tx.createDirectory(path("file"));
  ASSERT_FALSE(bool(dir));
  llvm::consumeError(dir.takeError());
  EXPECT_EQ(read("file"), "x");
}

TEST_F(OutputFilesTest, ParentsOfTheOutputFileAreCreatedAndRemovable) {
  std::vector<std::string> created;
  ASSERT_FALSE(evo::createParentDirectories(path("x/y/out.mlir"), created));
  EXPECT_EQ(created, (std::vector<std::string>{path("x"), path("x/y")}));
  EXPECT_TRUE(llvm::sys::fs::is_directory(path("x/y")));
  evo::removeEmptyDirectories(created);
  EXPECT_TRUE(list().empty());
  created.clear();
  ASSERT_FALSE(evo::createParentDirectories("relative-file-without-parent", created));
  EXPECT_TRUE(created.empty());
}

TEST_F(OutputFilesTest, TheInvocationsTransactionIsCurrentWhileItsScopeLives) {
  EXPECT_EQ(evo::OutputTransaction::current(), nullptr);
  {
    evo::OutputTransaction tx;
    evo::OutputTransaction::Scope scope(tx);
    EXPECT_EQ(evo::OutputTransaction::current(), &tx);
  }
  EXPECT_EQ(evo::OutputTransaction::current(), nullptr);
}
