//===- RuntimeTest.cpp - libevo_runtime without a GPU ---------------------===//
//
// The manifest is untrusted: every mutation of a valid one below must be refused with a message
// that names the problem, never crash, hang or reach the GPU. File resolution must not leave the
// manifest's directory. Launch arguments are checked before the driver is touched.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestFixture.h"
#include "Sha256.h"
#include "ScalarManifest.h"
#include "TensorMapManifest.h"
#include "evo-runtime/Module.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

using evo::runtime::DType;
using evo::runtime::Error;
using evo::runtime::Manifest;
using evo::runtime::Module;
using evo::runtime::Role;
using evo::runtime::Status;
using evo::runtime::TensorRef;
using evo::runtime::WorkspaceRef;
using evo::runtime::testing::Hostile;
using evo::runtime::testing::kPtx;
using evo::runtime::testing::mutated;
using evo::runtime::testing::parseError;
using evo::runtime::testing::TempDir;
using evo::runtime::testing::validManifest;
using json = nlohmann::json;

TEST(RuntimeSha256, KnownVectors) {
  using evo::runtime::detail::sha256Hex;
  EXPECT_EQ(sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // 56 bytes: the padding needs a second block.
  EXPECT_EQ(sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256Hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  EXPECT_EQ(sha256Hex(std::string(64, 'a')),
            "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}

TEST(RuntimeManifest, ParsesAValidManifest) {
  evo::runtime::Expected<Manifest> m = Manifest::parse(validManifest().dump());
  ASSERT_TRUE(m.ok()) << m.error().message();
  EXPECT_EQ(m->name, "mm_relu");
  EXPECT_EQ(m->chip, "sm_90");
  EXPECT_EQ(m->ptxFile, "mm_relu.ptx");
  ASSERT_EQ(m->buffers.size(), 5u);
  EXPECT_EQ(m->inputs, (std::vector<unsigned>{0, 1}));
  EXPECT_EQ(m->outputs, (std::vector<unsigned>{2}));
  EXPECT_EQ(m->scratch, (std::vector<unsigned>{3, 4}));
  EXPECT_EQ(m->buffers[3].workspaceOffset, 0u);
  EXPECT_EQ(m->buffers[4].workspaceOffset, 131072u);
  EXPECT_TRUE(m->buffers[4].zeroInit);
  // 12 bytes of tmp1 rounded up to the 256-byte alignment.
  EXPECT_EQ(m->workspaceBytes, 131072u + 256u);
  ASSERT_EQ(m->launches.size(), 2u);
  EXPECT_EQ(m->launches[1].kernelIndex, 1u);
  EXPECT_EQ(m->launches[0].grid[0], 128u);
  EXPECT_EQ(m->launches[0].args, (std::vector<unsigned>{0, 1, 3, 4}));
  EXPECT_EQ(m->buffers[2].role, Role::Output);
  EXPECT_EQ(m->buffers[0].shape, (std::vector<int64_t>{256, 64}));
}

TEST(RuntimeManifest, AcceptsZeroDimensionalBuffersAndOtherDtypes) {
  json j = validManifest();
  j["buffers"][4]["shape"] = json::array();
  j["buffers"][4]["bytes"] = 4;
  j["kernels"][0]["params"][3]["shape"] = json::array();
  evo::runtime::Expected<Manifest> m = Manifest::parse(j.dump());
  ASSERT_TRUE(m.ok()) << m.error().message();
  EXPECT_TRUE(m->buffers[4].shape.empty());
  const std::pair<const char *, size_t> dtypes[] = {{"f16", 2}, {"bf16", 2}, {"f64", 8},
                                                     {"i8", 1},  {"i16", 2},  {"i32", 4},
                                                     {"i64", 8}, {"ui8", 1}, {"i1", 1}};
  for (auto [dt, size] : dtypes) {
    json k = validManifest();
    k["buffers"][4]["dtype"] = dt;
    k["buffers"][4]["bytes"] = 3 * size;
    k["kernels"][0]["params"][3]["dtype"] = dt;
    evo::runtime::Expected<Manifest> mk = Manifest::parse(k.dump());
    ASSERT_TRUE(mk.ok()) << dt << ": " << mk.error().message();
    EXPECT_STREQ(evo::runtime::dtypeName(mk->buffers[4].dtype), dt);
    EXPECT_EQ(evo::runtime::dtypeSize(mk->buffers[4].dtype), size);
  }
}

TEST(RuntimeManifest, IgnoresUnknownInformationalKeys) {
  json j = validManifest();
  j["something_new"] = {{"a", 1}};
  j["kernels"][0]["resources"] = {{"registers", 30}};
  EXPECT_EQ(parseError(j.dump()), "(accepted)");
}
TEST(RuntimeManifest, RefusesHostileManifests) {
  const Hostile cases[] = {
      {"format", [](json &j) { j["format"] = "evo-manifest/2"; }, "not an evo manifest"},
      {"format type", [](json &j) { j["format"] = 1; }, "'format' must be a string"},
      {"name", [](json &j) { j["name"] = "../etc"; }, "not a valid symbol"},
      {"name unicode", [](json &j) { j["name"] = "na\xc3\xa9me"; }, "not a valid symbol"},
      {"no ptx", [](json &j) { j.erase("ptx"); }, "missing 'ptx'"},
      {"ptx escapes", [](json &j) { j["ptx"]["file"] = "../secret.ptx"; }, "plain file name"},
      {"ptx absolute", [](json &j) { j["ptx"]["file"] = "/etc/passwd"; }, "plain file name"},
      {"ptx subdir", [](json &j) { j["ptx"]["file"] = "a/b.ptx"; }, "plain file name"},
      {"ptx dotdot", [](json &j) { j["ptx"]["file"] = ".."; }, "plain file name"},
      {"ptx empty", [](json &j) { j["ptx"]["file"] = ""; }, "plain file name"},
      {"ptx control", [](json &j) { j["ptx"]["file"] = "a\nb"; }, "plain file name"},
      {"ptx backslash", [](json &j) { j["ptx"]["file"] = "..\\x"; }, "plain file name"},
      {"ptx bytes float", [](json &j) { j["ptx"]["bytes"] = 1.5; }, "must be an integer"},
      {"ptx bytes negative", [](json &j) { j["ptx"]["bytes"] = -1; }, "out of range"},
      {"ptx bytes huge", [](json &j) { j["ptx"]["bytes"] = 1ull << 62; }, "out of range"},
      {"ptx bytes u64", [](json &j) { j["ptx"]["bytes"] = ~0ull; }, "out of range"},
      {"sha upper", [](json &j) { j["ptx"]["sha256"] = std::string(64, 'A'); }, "64 lowercase hex"},
      {"sha short", [](json &j) { j["ptx"]["sha256"] = "abc"; }, "64 lowercase hex"},
      {"buffers not array", [](json &j) { j["buffers"] = json::object(); }, "must be an array"},
      {"buffer not object", [](json &j) { j["buffers"][0] = 3; }, "must be an object"},
      {"buffer index", [](json &j) { j["buffers"][1]["index"] = 0; }, "must equal its position"},
      {"buffer unknown key", [](json &j) { j["buffers"][0]["strides"] = {1, 2}; }, "unknown key 'strides'"},
      {"buffer role", [](json &j) { j["buffers"][0]["role"] = "inout"; }, "not input, output, scratch, tensor_map or constant"},
      {"buffer dtype", [](json &j) { j["buffers"][0]["dtype"] = "f128"; }, "unsupported dtype"},
      {"buffer name", [](json &j) { j["buffers"][0]["name"] = "a b"; }, "not a valid symbol"},
      {"dim zero", [](json &j) { j["buffers"][0]["shape"] = {0, 64}; }, "out of range"},
      {"dim negative", [](json &j) { j["buffers"][0]["shape"] = {-256, 64}; }, "out of range"},
      {"dim string", [](json &j) { j["buffers"][0]["shape"] = {"256", 64}; }, "must be an integer"},
      {"rank 17", [](json &j) { j["buffers"][0]["shape"] = std::vector<int>(17, 1); }, "more than 16"},
      {"elements overflow",
       [](json &j) { j["buffers"][0]["shape"] = {1ll << 30, 1ll << 30, 1ll << 30}; },
       "more than 2^40 elements"},
      {"bytes overflow", [](json &j) { j["buffers"][0]["shape"] = {1ll << 39}; }, "larger than 1 TiB"},
      {"bytes mismatch", [](json &j) { j["buffers"][0]["bytes"] = 4; }, "not the size of its shape"},
      {"zero_init input", [](json &j) { j["buffers"][0]["zero_init"] = true; }, "cannot be zero_init"},
      {"zero_init type", [](json &j) { j["buffers"][3]["zero_init"] = 1; }, "must be a boolean"},
      {"kernel dup", [](json &j) { j["kernels"][1]["name"] = "mm_relu_k0"; }, "listed twice"},
      {"kernel name", [](json &j) { j["kernels"][0]["name"] = std::string("k\0x", 3); }, "not a valid PTX symbol"},
      {"kernel param key", [](json &j) { j["kernels"][0]["params"][0]["tensor_map"] = {{"box", {64, 64}}}; },
       "unknown key 'tensor_map'"},
      {"no launches", [](json &j) { j["launches"] = json::array(); }, "no launches"},
      {"launch kernel", [](json &j) { j["launches"][0]["kernel"] = "evil"; }, "not listed in 'kernels'"},
      {"launch key", [](json &j) { j["launches"][0]["tensor_maps"] = json::array(); }, "unknown key 'tensor_maps'"},
      {"launch cluster", [](json &j) { j["launches"][0]["cluster"] = {2, 1, 1}; }, "unknown key 'cluster'"},
      {"grid 2-d", [](json &j) { j["launches"][0]["grid"] = {1, 1}; }, "need 3 dimensions"},
      {"grid zero", [](json &j) { j["launches"][0]["grid"] = {0, 1, 1}; }, "grid x"},
      {"grid x", [](json &j) { j["launches"][0]["grid"] = {1ll << 31, 1, 1}; }, "grid x"},
      {"grid y", [](json &j) { j["launches"][0]["grid"] = {1, 65536, 1}; }, "grid y"},
      {"block x", [](json &j) { j["launches"][0]["block"] = {1025, 1, 1}; }, "block x"},
      {"block z", [](json &j) { j["launches"][0]["block"] = {1, 1, 65}; }, "block z"},
      {"block threads", [](json &j) { j["launches"][0]["block"] = {64, 64, 1}; }, "more than 1024 threads"},
      {"smem", [](json &j) { j["launches"][0]["dynamic_shared_memory"] = 227 * 1024 + 1; }, "dynamic_shared_memory"},
      {"smem negative", [](json &j) { j["launches"][0]["dynamic_shared_memory"] = -1; }, "out of range"},
      {"arg index", [](json &j) { j["launches"][1]["args"] = {3, 5}; }, "args[1]"},
      {"arg negative", [](json &j) { j["launches"][1]["args"] = {-1, 2}; }, "args[0]"},
      {"arg count", [](json &j) { j["launches"][1]["args"] = {3}; }, "passes 1 buffers to a kernel of 2"},
      {"arg type", [](json &j) { j["launches"][1]["args"] = {0, 2}; }, "parameter 0 is f32[256, 128] but buffer 'arg0' is f32[256, 64]"},
      {"task", [](json &j) { j["launches"][1]["task"] = 2; }, "'task'"},
      {"output unwritten",
       [](json &j) { j["launches"][1]["args"] = {3, 3}; },
       "output buffer 'result0' is passed to no launch"},
      {"not an object", [](json &j) { j = json::array({1, 2}); }, "manifest must be an object"},
  };
  for (const Hostile &c : cases) {
    std::string msg = mutated(c.mutate);
    EXPECT_NE(msg.find(c.expect), std::string::npos)
        << c.name << ": expected '" << c.expect << "' in: " << msg;
  }
}

TEST(RuntimeManifest, RefusesMalformedText) {
  EXPECT_NE(parseError("").find("not valid JSON"), std::string::npos);
  EXPECT_NE(parseError("{\"format\": ").find("not valid JSON"), std::string::npos);
  EXPECT_NE(parseError("{\"format\": \"\xff\"}").find("not valid JSON"), std::string::npos);
  // Deep nesting is refused before the parser recurses, quickly.
  std::string deep(1 << 20, '[');
  EXPECT_NE(parseError(deep).find("nests deeper than 64"), std::string::npos);
  // Brackets inside strings do not count.
  json j = validManifest();
  j["generator"] = std::string(100, '[');
  EXPECT_EQ(parseError(j.dump()), "(accepted)");
  std::string huge(17u << 20, ' ');
  EXPECT_NE(parseError(huge).find("larger than"), std::string::npos);
}

TEST(RuntimeManifest, LargeManifestsParseInLinearTime) {
  // The most kernels, and many launches of the last one: lookups must not be quadratic.
  json j = validManifest();
  json kernels = json::array(), launches = json::array();
  for (int i = 0; i < 4096; ++i)
    kernels.push_back({{"name", "k" + std::to_string(i)},
                       {"params", {{{"dtype", "f32"}, {"shape", {256, 128}}}, {{"dtype", "f32"}, {"shape", {256, 128}}}}}});
  for (int i = 0; i < 60000; ++i)
    launches.push_back({{"kernel", "k4095"}, {"grid", {1, 1, 1}}, {"block", {1, 1, 1}},
                        {"dynamic_shared_memory", 0}, {"args", {3, 2}}});
  j["kernels"] = kernels;
  j["launches"] = launches;
  j.erase("tasks");
  std::string text = j.dump();
  ASSERT_LT(text.size(), size_t(16) << 20);
  auto start = std::chrono::steady_clock::now();
  evo::runtime::Expected<Manifest> m = Manifest::parse(text);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(m.ok()) << m.error().message();
  EXPECT_EQ(m->launches.size(), 60000u);
  EXPECT_EQ(m->launches.back().kernelIndex, 4095u);
  EXPECT_LT(seconds, 10.0);
}

TEST(RuntimeModule, LoadsFromItsDirectoryOnly) {
  TempDir dir;
  json j = validManifest();
  dir.write("mm_relu.json", j.dump());
  dir.write("mm_relu.ptx", kPtx);
  evo::runtime::Expected<Module> mod = Module::load(dir.path + "/mm_relu.json");
  ASSERT_TRUE(mod.ok()) << mod.error().message();
  EXPECT_EQ(mod->workspaceBytes(), 131072u + 256u);

  // The PTX is looked up beside the manifest, not in the working directory.
  TempDir other;
  other.write("mm_relu.ptx", "// something else\n");
  ASSERT_EQ(chdir(other.path.c_str()), 0);
  EXPECT_TRUE(Module::load(dir.path + "/mm_relu.json").ok());

  // Relative manifest path without a directory.
  ASSERT_EQ(chdir(dir.path.c_str()), 0);
  EXPECT_TRUE(Module::load("mm_relu.json").ok());
  ASSERT_EQ(chdir("/"), 0);

  // Changed PTX: size, then content.
  dir.write("mm_relu.ptx", kPtx + " ");
  auto r = Module::load(dir.path + "/mm_relu.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("the manifest says"), std::string::npos) << r.error().message();
  std::string flipped = kPtx;
  flipped[3] = 'X';
  dir.write("mm_relu.ptx", flipped);
  r = Module::load(dir.path + "/mm_relu.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("does not match the manifest"), std::string::npos);

  // A symbolic link, even to the right content, is refused.
  other.write("real.ptx", kPtx);
  ASSERT_EQ(unlink((dir.path + "/mm_relu.ptx").c_str()), 0);
  ASSERT_EQ(symlink((other.path + "/real.ptx").c_str(), (dir.path + "/mm_relu.ptx").c_str()), 0);
  r = Module::load(dir.path + "/mm_relu.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), Error::Code::Io);
  EXPECT_NE(r.error().message().find("symbolic link"), std::string::npos) << r.error().message();

  // Missing, a directory, a FIFO (must not block).
  ASSERT_EQ(unlink((dir.path + "/mm_relu.ptx").c_str()), 0);
  r = Module::load(dir.path + "/mm_relu.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("No such file"), std::string::npos);
  ASSERT_EQ(mkdir((dir.path + "/mm_relu.ptx").c_str(), 0700), 0);
  r = Module::load(dir.path + "/mm_relu.json");
  ASSERT_FALSE(r.ok());
  ASSERT_EQ(rmdir((dir.path + "/mm_relu.ptx").c_str()), 0);
  ASSERT_EQ(mkfifo((dir.path + "/mm_relu.ptx").c_str(), 0600), 0);
  r = Module::load(dir.path + "/mm_relu.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("not a regular file"), std::string::npos);

  // A manifest that is not there.
  r = Module::load(dir.path + "/nothing.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), Error::Code::Io);
}

TEST(RuntimeModule, TrustedImagesSkipTheDigest) {
  std::string cubin = std::string("\x7f" "ELF", 4) + std::string(60, '\0');
  EXPECT_TRUE(Module::fromMemory(validManifest().dump(), cubin, /*trustedImage=*/true).ok());
  EXPECT_FALSE(Module::fromMemory(validManifest().dump(), cubin, /*trustedImage=*/false).ok());
  EXPECT_TRUE(Module::fromMemory(validManifest().dump(), kPtx, /*trustedImage=*/false).ok());
  EXPECT_FALSE(Module::fromMemory(validManifest().dump(), "", /*trustedImage=*/true).ok());
}

TEST(RuntimeModule, ChecksLaunchArguments) {
  evo::runtime::Expected<Module> mod = Module::fromMemory(validManifest().dump(), kPtx);
  ASSERT_TRUE(mod.ok()) << mod.error().message();
  // Fake device addresses: never dereferenced by the checks.
  auto at = [](uintptr_t p) { return reinterpret_cast<void *>(p); };
  TensorRef a(at(0x100000), DType::F32, {256, 64}), b(at(0x200000), DType::F32, {64, 128});
  TensorRef y(at(0x300000), DType::F32, {256, 128});
  WorkspaceRef ws{at(0x400000), 131072 + 256};
  auto check = [&](std::vector<TensorRef> in, std::vector<TensorRef> out, WorkspaceRef w) {
    Status s = mod->checkArguments(in.data(), in.size(), out.data(), out.size(), w);
    if (!s.ok()) {
      EXPECT_EQ(s.error().code(), Error::Code::InvalidArgument);
    }
    return s.message();
  };
  EXPECT_EQ(check({a, b}, {y}, ws), "");
  EXPECT_NE(check({a}, {y}, ws).find("takes 2 inputs, got 1"), std::string::npos);
  EXPECT_NE(check({a, b}, {}, ws).find("writes 1 outputs, got 0"), std::string::npos);
  EXPECT_NE(check({b, a}, {y}, ws).find("input 0 ('arg0'): expected f32[256, 64], got f32[64, 128]"),
            std::string::npos);
  EXPECT_NE(check({a, TensorRef(at(0x200000), DType::F16, {64, 128})}, {y}, ws)
                .find("expected f32[64, 128], got f16[64, 128]"),
            std::string::npos);
  EXPECT_NE(check({a, b}, {TensorRef(nullptr, DType::F32, {256, 128})}, ws).find("null device pointer"),
            std::string::npos);
  EXPECT_NE(check({TensorRef(at(0x100004), DType::F32, {256, 64}), b}, {y}, ws).find("not 16-byte aligned"),
            std::string::npos);
  std::vector<int64_t> tooLong(17, 1);
  EXPECT_NE(check({TensorRef(at(0x100000), DType::F32, tooLong), b}, {y}, ws).find("more than 16"),
            std::string::npos);
  // The output overlaps an input / the workspace; inputs may overlap each other.
  EXPECT_NE(check({a, b}, {TensorRef(at(0x100000 + 1024), DType::F32, {256, 128})}, ws).find("overlap"),
            std::string::npos);
  EXPECT_NE(check({a, b}, {y}, WorkspaceRef{at(0x300000 + 4096), 131072 + 256}).find("overlap"),
            std::string::npos);
  EXPECT_EQ(check({a, TensorRef(at(0x100000), DType::F32, {64, 128})}, {y}, ws), "");
  // The workspace: missing, too small, misaligned.
  EXPECT_NE(check({a, b}, {y}, {}).find("needs a workspace of 131328 bytes"), std::string::npos);
  EXPECT_NE(check({a, b}, {y}, WorkspaceRef{at(0x400000), 131072}).find("it needs 131328"),
            std::string::npos);
  EXPECT_NE(check({a, b}, {y}, WorkspaceRef{at(0x400010), 1 << 20}).find("256-byte aligned"),
            std::string::npos);
  // Address ranges that wrap.
  EXPECT_NE(check({a, b}, {TensorRef(at(UINTPTR_MAX - 15), DType::F32, {256, 128})}, ws).find("wraps"),
            std::string::npos);
  // Null arrays with non-zero counts.
  Status s = mod->checkArguments(nullptr, 2, nullptr, 1, ws);
  EXPECT_FALSE(s.ok());
}

TEST(RuntimeModule, WithoutAGpuLaunchIsAnErrorValue) {
  evo::runtime::Expected<Module> mod = Module::fromMemory(validManifest().dump(), kPtx);
  ASSERT_TRUE(mod.ok());
  auto at = [](uintptr_t p) { return reinterpret_cast<void *>(p); };
  std::vector<TensorRef> in = {TensorRef(at(0x100000), DType::F32, {256, 64}),
                               TensorRef(at(0x200000), DType::F32, {64, 128})};
  std::vector<TensorRef> out = {TensorRef(at(0x300000), DType::F32, {256, 128})};
  Status s = mod->launch(nullptr, in, out, WorkspaceRef{at(0x400000), 1 << 20});
  if (s.ok() || s.error().code() != Error::Code::NoDevice)
    GTEST_SKIP() << "a CUDA driver is present: " << s.message();
  EXPECT_NE(s.message().find("evo-runtime: mm_relu: no CUDA driver"), std::string::npos) << s.message();
  EXPECT_EQ(mod->prepare().error().code(), Error::Code::NoDevice);
  EXPECT_EQ(mod->allocateWorkspace().error().code(), Error::Code::NoDevice);
}

//===----------------------------------------------------------------------===//
// Tensor maps (docs/architecture.md, "Tensor maps")
//===----------------------------------------------------------------------===//

TEST(RuntimeManifest, ParsesTensorMaps) {
  auto m = Manifest::parse(evo::runtime::testing::tensorMapManifest());
  ASSERT_TRUE(m.ok()) << m.error().message();
  EXPECT_EQ(m->tensorMaps, (std::vector<unsigned>{3, 5}));
  EXPECT_EQ(m->inputs, (std::vector<unsigned>{0, 1}));
  EXPECT_EQ(m->outputs, (std::vector<unsigned>{2}));
  EXPECT_EQ(m->scratch, (std::vector<unsigned>{4}));
  EXPECT_EQ(m->workspaceBytes, 16384u); // tensor maps live in the module, not the workspace
  const evo::runtime::BufferInfo &map = m->buffers[5];
  EXPECT_EQ(map.role, Role::TensorMap);
  EXPECT_STREQ(evo::runtime::roleName(map.role), "tensor_map");
  EXPECT_EQ(map.tensorMap.source, 4u);
  EXPECT_EQ(map.tensorMap.elementType, "f16");
  EXPECT_EQ(map.tensorMap.dims, (std::vector<int64_t>{128, 64}));
  EXPECT_EQ(map.tensorMap.strides, (std::vector<int64_t>{256}));
  EXPECT_EQ(map.tensorMap.box, (std::vector<int64_t>{32, 64}));
  EXPECT_EQ(map.tensorMap.swizzle, 64);
  // The caller passes the inputs and outputs only.
  auto mod = Module::fromMemory(evo::runtime::testing::tensorMapManifest(),
                                evo::runtime::testing::kTensorMapImage);
  ASSERT_TRUE(mod.ok()) << mod.error().message();
  auto at = [](uintptr_t p) { return reinterpret_cast<void *>(p); };
  Status s = mod->checkArguments(
      std::vector<TensorRef>{TensorRef(at(0x100000), DType::F16, {256, 64}),
                             TensorRef(at(0x200000), DType::F16, {64, 128})}
          .data(),
      2, std::vector<TensorRef>{TensorRef(at(0x300000), DType::F32, {256, 128})}.data(), 1,
      WorkspaceRef{at(0x400000), 16384});
  EXPECT_TRUE(s.ok()) << s.message();
}

TEST(RuntimeManifest, RefusesHostileTensorMaps) {
  const Hostile cases[] = {
      {"unknown key", [](json &j) { j["buffers"][3]["tensor_map"]["interleave"] = 1; },
       "unknown key 'interleave'"},
      {"missing key", [](json &j) { j["buffers"][3]["tensor_map"].erase("swizzle"); },
       "missing 'swizzle'"},
      {"missing map", [](json &j) { j["buffers"][3].erase("tensor_map"); }, "missing 'tensor_map'"},
      {"map on an input", [](json &j) { j["buffers"][0]["tensor_map"] = j["buffers"][3]["tensor_map"]; },
       "has a 'tensor_map' but its role is not tensor_map"},
      {"not an object", [](json &j) { j["buffers"][3]["tensor_map"] = 3; }, "tensor_map must be an object"},
      {"wrong size", [](json &j) { j["buffers"][3]["shape"] = {64}; j["buffers"][3]["bytes"] = 64; },
       "a tensor map must be i8[128]"},
      {"wrong dtype", [](json &j) { j["buffers"][3]["dtype"] = "f32"; j["buffers"][3]["shape"] = {32};
                                    j["buffers"][3]["bytes"] = 128; }, "a tensor map must be i8[128]"},
      {"zero_init", [](json &j) { j["buffers"][3]["zero_init"] = true; }, "cannot be zero_init"},
      {"source range", [](json &j) { j["buffers"][3]["tensor_map"]["source"] = 6; }, "'source' is 6, out of range"},
      {"source negative", [](json &j) { j["buffers"][3]["tensor_map"]["source"] = -1; }, "out of range"},
      {"source bool", [](json &j) { j["buffers"][3]["tensor_map"]["source"] = true; }, "must be an integer"},
      {"source is a map", [](json &j) { j["buffers"][3]["tensor_map"]["source"] = 5; },
       "its source 'map_bt' is a tensor map itself"},
      {"element type", [](json &j) { j["buffers"][3]["tensor_map"]["element_type"] = "bf16"; },
       "element_type 'bf16' is not the dtype of its source 'a' (f16)"},
      {"ui8 source", [](json &j) { j["buffers"][0]["dtype"] = "ui8"; j["buffers"][0]["bytes"] = 16384;
                                   j["kernels"][1]["params"][0]["dtype"] = "ui8";
                                   j["buffers"][3]["tensor_map"]["element_type"] = "ui8"; },
       "is not one TMA supports"},
      {"rank 0", [](json &j) { j["buffers"][3]["tensor_map"]["dims"] = json::array(); }, "rank 0 is not in 1..5"},
      {"rank 6", [](json &j) { j["buffers"][3]["tensor_map"]["dims"] = {1, 1, 1, 1, 1, 1}; }, "more than 5"},
      {"strides count", [](json &j) { j["buffers"][3]["tensor_map"]["strides"] = {128, 128}; },
       "needs rank - 1 = 1 strides, got 2"},
      {"stride align", [](json &j) { j["buffers"][3]["tensor_map"]["strides"] = {120}; },
       "strides[0] = 120 bytes is not a positive multiple of 16"},
      {"box count", [](json &j) { j["buffers"][3]["tensor_map"]["box"] = {64}; }, "needs 2 box sizes"},
      {"box big", [](json &j) { j["buffers"][3]["tensor_map"]["box"] = {64, 257}; }, "box[1] = 257 is not in [1, 256]"},
      {"dim zero", [](json &j) { j["buffers"][3]["tensor_map"]["dims"] = {0, 256}; }, "dims[0] = 0 is not in [1, 2^32]"},
      {"dim float", [](json &j) { j["buffers"][3]["tensor_map"]["dims"] = {64.0, 256}; }, "must be an integer"},
      {"swizzle", [](json &j) { j["buffers"][3]["tensor_map"]["swizzle"] = 48; }, "swizzle 48 is not 0, 32, 64 or 128"},
      {"inner box", [](json &j) { j["buffers"][3]["tensor_map"]["box"] = {4, 128}; },
       "box[0] * 2 = 8 bytes is not a multiple of 16"},
      {"inner box swizzle", [](json &j) { j["buffers"][3]["tensor_map"]["swizzle"] = 32; },
       "inner extent of 128 bytes exceeds the swizzle of 32 bytes"},
      // 64 x 257 f16 with rows of 128 bytes reach byte 32896 of a 32768-byte source.
      {"beyond source", [](json &j) { j["buffers"][3]["tensor_map"]["dims"] = {64, 257}; },
       "addresses bytes up to 32896 of its source, which has 32768"},
      {"row stride beyond", [](json &j) { j["buffers"][3]["tensor_map"]["strides"] = {144}; },
       "addresses bytes up to 36848 of its source, which has 32768"},
      {"wraps", [](json &j) { j["buffers"][3]["tensor_map"]["dims"] = {64, 1, 1, 1, 1ll << 32};
                              j["buffers"][3]["tensor_map"]["strides"] = {128, 128, 128, (1ll << 40) - 16};
                              j["buffers"][3]["tensor_map"]["box"] = {64, 1, 1, 1, 1}; },
       "addresses bytes up to beyond 2^64"},
  };
  for (const Hostile &c : cases) {
    json j = json::parse(evo::runtime::testing::tensorMapManifest());
    c.mutate(j);
    auto m = Manifest::parse(j.dump());
    ASSERT_FALSE(m.ok()) << c.name;
    EXPECT_EQ(m.error().code(), Error::Code::InvalidManifest) << c.name;
    EXPECT_NE(m.error().message().find(c.expect), std::string::npos)
        << c.name << ": expected '" << c.expect << "' in: " << m.error().message();
  }
}
//===----------------------------------------------------------------------===//
// Scalar arguments (docs/architecture.md, "Scalar arguments")
//===----------------------------------------------------------------------===//

TEST(RuntimeManifest, ParsesScalarArgumentsPassedByValue) {
  evo::runtime::Expected<Manifest> m = Manifest::parse(evo::runtime::testing::scalarManifest());
  ASSERT_TRUE(m.ok()) << m.error().message();
  EXPECT_EQ(m->inputs, (std::vector<unsigned>{0, 1, 2}));
  EXPECT_FALSE(m->buffers[0].byValue);
  EXPECT_TRUE(m->buffers[1].byValue);
  EXPECT_TRUE(m->buffers[2].byValue);
  EXPECT_TRUE(m->buffers[1].shape.empty());
  EXPECT_EQ(m->buffers[2].dtype, DType::F16);
  EXPECT_EQ(m->workspaceBytes, 0u);
}

TEST(RuntimeManifest, RefusesMalformedScalarArguments) {
  auto error = [](const std::function<void(json &)> &mutate) {
    json j = json::parse(evo::runtime::testing::scalarManifest());
    mutate(j);
    return parseError(j.dump());
  };
  auto expect = [](const std::string &got, const char *piece) {
    EXPECT_NE(got.find(piece), std::string::npos) << got;
  };
  expect(error([](json &j) { j["buffers"][3]["by_value"] = true; }),
         "buffer 3 ('result0'): 'by_value' (a scalar argument, passed by value) needs an input "
         "of shape [], not output f32[1024]");
  expect(error([](json &j) { j["buffers"][0]["by_value"] = true; }),
         "needs an input of shape [], not input f32[1024]");
  expect(error([](json &j) { j["buffers"][1]["by_value"] = "yes"; }),
         "buffer 1 ('arg1'): 'by_value' must be a boolean");
  // A value where the kernel takes a pointer, and a pointer where it takes a value.
  expect(error([](json &j) { j["kernels"][0]["params"][1].erase("by_value"); }),
         "launch 0 ('leaky_k0'): parameter 1 is a pointer but buffer 'arg1' is a scalar argument "
         "passed by value");
  expect(error([](json &j) { j["buffers"][2].erase("by_value"); }),
         "parameter 2 is a value (by_value) but buffer 'arg2' is a buffer");
  expect(error([](json &j) {
           j["kernels"][0]["params"][1]["shape"] = {1};
         }),
         "kernel 'leaky_k0': param 1: a value (by_value) has shape [], not f32[1]");
  expect(error([](json &j) { j["kernels"][0]["params"][1]["by_value"] = 1; }),
         "'by_value' must be a boolean");
  // No tensor map over a value.
  json t = json::parse(evo::runtime::testing::tensorMapManifest());
  t["buffers"][0]["by_value"] = true;
  t["buffers"][0]["shape"] = json::array();
  t["buffers"][0]["bytes"] = 2;
  expect(parseError(t.dump()), "its source 'a' is a scalar argument (by_value)");
  // Passing false is the same as leaving it out.
  json j = json::parse(evo::runtime::testing::scalarManifest());
  j["buffers"][0]["by_value"] = false;
  j["kernels"][0]["params"][0]["by_value"] = false;
  EXPECT_EQ(parseError(j.dump()), "(accepted)");
}

TEST(RuntimeModule, ChecksScalarArguments) {
  evo::runtime::Expected<Module> mod = Module::fromMemory(evo::runtime::testing::scalarManifest(),
                                                          evo::runtime::testing::kScalarImage);
  ASSERT_TRUE(mod.ok()) << mod.error().message();
  auto at = [](uintptr_t p) { return reinterpret_cast<void *>(p); };
  TensorRef x(at(0x100000), DType::F32, {1024}), y(at(0x200000), DType::F32, {1024});
  auto check = [&](std::vector<TensorRef> in) {
    std::vector<TensorRef> out = {y};
    Status s = mod->checkArguments(in.data(), in.size(), out.data(), out.size());
    if (!s.ok()) {
      EXPECT_EQ(s.error().code(), Error::Code::InvalidArgument);
    }
    return s.message();
  };
  TensorRef alpha = TensorRef::scalar(DType::F32, 0.01), shift = TensorRef::scalar(DType::F16, -1);
  EXPECT_EQ(check({x, alpha, shift}), "");
  // A scalar's value needs no address (a 0-d tensor is not one).
  EXPECT_NE(check({x, TensorRef(at(0x300000), DType::F32, {}), shift})
                .find("input 1 ('arg1'): a scalar argument, passed by value: expected a scalar of "
                      "f32 (TensorRef::scalar), got a tensor"),
            std::string::npos);
  EXPECT_NE(check({x, TensorRef::scalar(DType::F64, 0.01), shift})
                .find("expected a scalar of f32 (TensorRef::scalar), got a scalar of f64"),
            std::string::npos);
  EXPECT_NE(check({alpha, alpha, shift}).find("input 0 ('arg0'): expected f32[1024], got a scalar of f32"),
            std::string::npos);
  EXPECT_NE(check({x, alpha}).find("takes 3 inputs, got 2"), std::string::npos);
}

TEST(RuntimeScalars, ValuesAreTheBytesOfTheirDtype) {
  auto bits = [](DType d, double v) { return TensorRef::scalar(d, v).bits; };
  EXPECT_TRUE(TensorRef::scalar(DType::F32, 1).byValue);
  EXPECT_EQ(TensorRef::scalar(DType::F32, 1).data, nullptr);
  EXPECT_EQ(bits(DType::F32, 0.5), 0x3f000000u);
  EXPECT_EQ(bits(DType::F64, -2.0), 0xc000000000000000u);
  // f16: exact values, ties to even, the largest finite value, overflow, subnormals, NaN.
  EXPECT_EQ(bits(DType::F16, 1.0), 0x3c00u);
  EXPECT_EQ(bits(DType::F16, -0.5), 0xb800u);
  EXPECT_EQ(bits(DType::F16, 1.0 + 1.0 / 2048), 0x3c00u); // halfway: to even
  EXPECT_EQ(bits(DType::F16, 1.0 + 3.0 / 2048), 0x3c02u); // halfway: to even (up)
  EXPECT_EQ(bits(DType::F16, 65504), 0x7bffu);
  EXPECT_EQ(bits(DType::F16, 65519), 0x7bffu);
  EXPECT_EQ(bits(DType::F16, 65520), 0x7c00u);
  EXPECT_EQ(bits(DType::F16, -1e9), 0xfc00u);
  EXPECT_EQ(bits(DType::F16, 5.9604644775390625e-8), 0x0001u); // the smallest subnormal
  EXPECT_EQ(bits(DType::F16, 6.103515625e-05), 0x0400u);        // the smallest normal
  EXPECT_EQ(bits(DType::F16, 2e-8), 0x0000u);
  EXPECT_EQ(bits(DType::F16, std::nan("")) & 0x7e00u, 0x7e00u);
  // bf16: f32's exponent, 7 mantissa bits.
  EXPECT_EQ(bits(DType::BF16, 1.0), 0x3f80u);
  EXPECT_EQ(bits(DType::BF16, 3.140625), 0x4049u);
  EXPECT_EQ(bits(DType::BF16, 1.0 + 1.0 / 256), 0x3f80u); // halfway: to even
  EXPECT_EQ(bits(DType::BF16, 1e39), 0x7f80u);
  // Integers: toward zero, saturated; i1: nonzero is 1.
  EXPECT_EQ(bits(DType::I32, -2.7), 0xfffffffeu);
  EXPECT_EQ(bits(DType::I8, 300), 0x7fu);
  EXPECT_EQ(bits(DType::I8, -300), 0x80u);
  EXPECT_EQ(bits(DType::U8, -1), 0u);
  EXPECT_EQ(bits(DType::I64, 1e30), 0x7ffffffffffffc00u);
  EXPECT_EQ(bits(DType::I16, std::nan("")), 0u);
  EXPECT_EQ(bits(DType::Bool, 2), 1u);
  EXPECT_EQ(bits(DType::Bool, 0), 0u);
  // scalarInt keeps the low bits as a C cast does; scalarBits takes them as they are.
  EXPECT_EQ(TensorRef::scalarInt(DType::I64, -3).bits, 0xfffffffffffffffdu);
  EXPECT_EQ(TensorRef::scalarInt(DType::I8, 257).bits, 1u);
  EXPECT_EQ(TensorRef::scalarInt(DType::Bool, -5).bits, 1u);
  EXPECT_EQ(TensorRef::scalarInt(DType::F32, 3).bits, 0x40400000u);
  EXPECT_EQ(TensorRef::scalarBits(DType::F16, 0x3555).bits, 0x3555u);
  EXPECT_EQ(TensorRef::scalarBits(DType::F16, 0x3555).dtype, DType::F16);
}
