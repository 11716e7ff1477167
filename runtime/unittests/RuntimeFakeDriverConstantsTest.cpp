//===- RuntimeFakeDriverConstantsTest.cpp - constant buffers, in CI -------===//
//
// libevo_runtime's constant buffers against FakeCuda.c ($EVO_FAKE_CUDA_UPLOADS logs the bytes
// of every copy to the device): uploaded once per context when the module is loaded there, on a
// stream of the library's own, with the bytes of the constants file at each one's offset; bound
// at their parameters in every launch and under a tensor map; freed with the Module (destroyed
// or moved over), and nothing left behind when loading fails.
//
//===----------------------------------------------------------------------===//

#include "ConstantsManifest.h"
#include "RuntimeFakeDriverFixture.h"
#include "evo-runtime/Module.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using evo::runtime::DType;
using evo::runtime::Error;
using evo::runtime::Module;
using evo::runtime::Status;
using evo::runtime::TensorRef;
using evo::runtime::testing::at;
using evo::runtime::testing::ConstantsFiles;
using evo::runtime::testing::count;
using evo::runtime::testing::FakeDriver;
using evo::runtime::testing::joined;
using evo::runtime::testing::stream;
using evo::runtime::testing::takeLog;

namespace {

/// Logs the bytes of copies to the device for the fixture's lifetime.
class FakeDriverConstants : public FakeDriver {
protected:
  void SetUp() override {
    setenv("EVO_FAKE_CUDA_UPLOADS", "1", 1);
    FakeDriver::SetUp();
  }
  void TearDown() override { unsetenv("EVO_FAKE_CUDA_UPLOADS"); }
};

std::string hex(uintptr_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%#lx", static_cast<unsigned long>(v));
  return buf;
}

/// The address of each "alloc ctx=C P N" line of `log` in context `ctx` with N bytes.
std::vector<uintptr_t> allocated(const std::vector<std::string> &log, const std::string &ctx,
                                 size_t bytes) {
  std::vector<uintptr_t> found;
  for (const std::string &l : log) {
    char c[32] = {};
    unsigned long p = 0;
    size_t n = 0;
    if (std::sscanf(l.c_str(), "alloc ctx=%31s %lx %zu", c, &p, &n) == 3 && c == ctx && n == bytes)
      found.push_back(p);
  }
  return found;
}

/// What FakeCuda.c logs for a copy of `bytes` to `p`: its first 64 bytes and FNV-1a hash.
std::string uploadLine(uintptr_t p, const std::string &bytes) {
  std::string h;
  char two[3];
  for (size_t i = 0; i < bytes.size() && i < 64; ++i) {
    std::snprintf(two, sizeof two, "%02x", static_cast<unsigned char>(bytes[i]));
    h += two;
  }
  if (bytes.size() > 64)
    h += "...";
  uint64_t fnv = 0xcbf29ce484222325ull;
  for (char c : bytes)
    fnv = (fnv ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  char tail[64];
  std::snprintf(tail, sizeof tail, " fnv=%016llx", static_cast<unsigned long long>(fnv));
  return "htodbytes " + hex(p) + " " + std::to_string(bytes.size()) + " hex=" + h + tail;
}

struct CwArgs {
  std::vector<TensorRef> in = {TensorRef(at(0x100000), DType::F16, {64, 64})};
  std::vector<TensorRef> out = {TensorRef(at(0x300000), DType::F32, {64, 64})};
};

} // namespace

TEST_F(FakeDriverConstants, UploadedOncePerContextAndBoundInEveryLaunch) {
  using namespace evo::runtime::testing;
  ConstantsFiles files;
  auto mod = Module::load(files.path());
  ASSERT_TRUE(mod.ok()) << mod.error().message();
  EXPECT_TRUE(takeLog().empty()); // loading the files needs no GPU
  CwArgs a;
  ASSERT_TRUE(mod->launch(stream(0x5000), a.in, a.out).ok());
  std::vector<std::string> log = takeLog();
  std::vector<uintptr_t> w = allocated(log, "0xc000", kWBytes),
                         bias = allocated(log, "0xc000", kBiasBytes);
  ASSERT_EQ(w.size(), 1u) << joined(log);
  ASSERT_EQ(bias.size(), 1u) << joined(log);
  // Copied on a non-blocking stream of the library's own (not the caller's), waited for once,
  // after the module is loaded and before anything is launched.
  const std::vector<std::string> upload = {
      "streamcreate 0x5c",
      "htodasync " + hex(w[0]) + " 8192 stream=0x5c",
      uploadLine(w[0], wBytes()),
      "htodasync " + hex(bias[0]) + " 256 stream=0x5c",
      uploadLine(bias[0], biasBytes()),
      "SYNC cuStreamSynchronize 0x5c",
      "streamdestroy 0x5c",
  };
  size_t first = 0;
  while (first < log.size() && log[first].rfind("streamcreate", 0) != 0)
    ++first;
  ASSERT_LE(first + upload.size(), log.size()) << joined(log);
  for (size_t i = 0; i < upload.size(); ++i)
    EXPECT_EQ(log[first + i].rfind(upload[i], 0), 0u) << "expected '" << upload[i] << "':\n"
                                                      << joined(log);
  EXPECT_NE(log[first].find("flags=1"), std::string::npos) << log[first]; // CU_STREAM_NON_BLOCKING
  EXPECT_EQ(count(log, "load ctx=0xc000"), 1u) << joined(log);
  EXPECT_LT(std::find(log.begin(), log.end(), "load ctx=0xc000") - log.begin(), long(first));
  // The tensor map over w is encoded over its device copy.
  EXPECT_EQ(count(log, "tensormap dtype=6 rank=2 addr=" + hex(w[0]) + " dims=64,64 strides=128 "
                       "box=64,64"),
            1u)
      << joined(log);
  // The launches get x, w's and bias's device copies, y; the map; bias again.
  const std::string k0 = "launch cw_k0 grid=4,1,1 block=128,1,1 smem=0 stream=0x5000 ctx=0xc000 "
                         "args=0x100000," + hex(w[0]) + "," + hex(bias[0]) + ",0x300000";
  EXPECT_EQ(count(log, k0), 1u) << joined(log);
  const std::string k1Tail = "," + hex(bias[0]) + ",0x300000"; // args=<map>,bias,y
  bool k1 = false;
  for (const std::string &l : log)
    k1 |= l.rfind("launch cw_k1 ", 0) == 0 && l.size() > k1Tail.size() &&
          l.compare(l.size() - k1Tail.size(), k1Tail.size(), k1Tail) == 0;
  EXPECT_TRUE(k1) << joined(log);

  // The next launch in this context uploads nothing and waits for nothing.
  ASSERT_TRUE(mod->launch(stream(0x5000), a.in, a.out).ok());
  log = takeLog();
  EXPECT_EQ(count(log, "alloc"), 0u) << joined(log);
  EXPECT_EQ(count(log, "htodbytes"), 0u) << joined(log);
  EXPECT_EQ(count(log, "SYNC"), 0u) << joined(log);
  EXPECT_EQ(count(log, k0), 1u) << joined(log);

  // Device 1 gets copies of its own, in its own context.
  ASSERT_TRUE(mod->prepare(stream(0x100010)).ok());
  log = takeLog();
  std::vector<uintptr_t> w1 = allocated(log, "0xc001", kWBytes),
                         bias1 = allocated(log, "0xc001", kBiasBytes);
  ASSERT_EQ(w1.size(), 1u) << joined(log);
  ASSERT_EQ(bias1.size(), 1u) << joined(log);
  EXPECT_EQ(count(log, uploadLine(w1[0], wBytes())), 1u) << joined(log);
  EXPECT_EQ(count(log, uploadLine(bias1[0], biasBytes())), 1u) << joined(log);
  ASSERT_TRUE(mod->launch(stream(0x100010), a.in, a.out).ok());
  log = takeLog();
  EXPECT_EQ(count(log, "launch cw_k0 grid=4,1,1 block=128,1,1 smem=0 stream=0x100010 ctx=0xc001 "
                       "args=0x100000," + hex(w1[0]) + "," + hex(bias1[0]) + ",0x300000"),
            1u)
      << joined(log);
  // (The tensor map's memory is allocated now, at the first launch on that stream: nothing else.)
  EXPECT_TRUE(allocated(log, "0xc001", kWBytes).empty()) << joined(log);
  EXPECT_TRUE(allocated(log, "0xc001", kBiasBytes).empty()) << joined(log);
  EXPECT_EQ(count(log, "htodbytes"), 1u) << joined(log); // the map
  EXPECT_EQ(count(log, "SYNC"), 0u) << joined(log);

  // Freed with the Module, in each context, once.
  { Module gone = std::move(*mod); }
  log = takeLog();
  for (auto [ctx, p] : {std::pair<std::string, uintptr_t>{"0xc000", w[0]}, {"0xc000", bias[0]},
                        {"0xc001", w1[0]}, {"0xc001", bias1[0]}})
    EXPECT_EQ(count(log, "free ctx=" + ctx + " " + hex(p)), 1u) << joined(log);
  EXPECT_EQ(count(log, "unload"), 2u) << joined(log);
  // Assigning over the moved-from Module frees nothing more.
  mod = Module::load(files.path());
  EXPECT_EQ(count(takeLog(), "free"), 0u);
}

TEST_F(FakeDriverConstants, AModuleMovedOverAnotherFreesTheOthersConstants) {
  ConstantsFiles files;
  auto first = Module::load(files.path()), second = Module::load(files.path());
  ASSERT_TRUE(first.ok() && second.ok());
  ASSERT_TRUE(first->prepare(stream(0x5000)).ok());
  std::vector<std::string> log = takeLog();
  std::vector<uintptr_t> mine = allocated(log, "0xc000", 8192);
  ASSERT_TRUE(second->prepare(stream(0x5000)).ok());
  log = takeLog();
  std::vector<uintptr_t> theirs = allocated(log, "0xc000", 8192);
  ASSERT_EQ(mine.size(), 1u);
  ASSERT_EQ(theirs.size(), 1u);
  // Moving `second` over `first` frees first's copies, not second's.
  *first = std::move(*second);
  log = takeLog();
  EXPECT_EQ(count(log, "free ctx=0xc000 " + hex(mine[0])), 1u) << joined(log);
  EXPECT_EQ(count(log, "free ctx=0xc000 " + hex(theirs[0])), 0u) << joined(log);
  EXPECT_EQ(count(log, "free"), 2u) << joined(log); // w and bias
  // The module now in `first` still launches with second's copies.
  CwArgs a;
  ASSERT_TRUE(first->launch(stream(0x5000), a.in, a.out).ok());
  log = takeLog();
  EXPECT_EQ(count(log, "launch cw_k0"), 1u) << joined(log);
  bool bound = false;
  for (const std::string &l : log)
    bound |= l.rfind("launch cw_k0", 0) == 0 && l.find("," + hex(theirs[0]) + ",") != std::string::npos;
  EXPECT_TRUE(bound) << joined(log);
  EXPECT_TRUE(allocated(log, "0xc000", 8192).empty()) << joined(log); // (only the map's memory)
  // Destroying both: second's copies are freed once (the moved-from `second` holds none).
  { Module a1 = std::move(*first); }
  { Module a2 = std::move(*second); }
  log = takeLog();
  EXPECT_EQ(count(log, "free ctx=0xc000 " + hex(theirs[0])), 1u) << joined(log);
  EXPECT_EQ(count(log, "free ctx=0xc000 " + hex(mine[0])), 0u) << joined(log);
  EXPECT_EQ(count(log, "unload"), 1u) << joined(log);
}

TEST_F(FakeDriverConstants, AFailedUploadLeavesNothingBehind) {
  ConstantsFiles files;
  auto mod = Module::load(files.path());
  ASSERT_TRUE(mod.ok());
  // While a global-mode capture runs the fake refuses cuMemAlloc: the module is loaded, then the
  // first constant cannot be allocated; the module is unloaded again and the error says which.
  setenv("EVO_FAKE_CUDA_CAPTURING", "0x7000", 1);
  Status s = mod->prepare(stream(0x5000));
  unsetenv("EVO_FAKE_CUDA_CAPTURING");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code(), Error::Code::Cuda);
  EXPECT_EQ(s.message(), "evo-runtime: cw: constant 'w' (8192 bytes): cuMemAlloc failed: "
                         "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED (fake driver)")
      << s.message();
  std::vector<std::string> log = takeLog();
  EXPECT_EQ(count(log, "load"), 1u) << joined(log);
  EXPECT_EQ(count(log, "unload"), 1u) << joined(log);
  EXPECT_EQ(count(log, "htod"), 0u) << joined(log);
  // Nothing was kept: the next prepare loads and uploads from scratch.
  ASSERT_TRUE(mod->prepare(stream(0x5000)).ok());
  log = takeLog();
  EXPECT_EQ(count(log, "load"), 1u) << joined(log);
  EXPECT_EQ(allocated(log, "0xc000", 8192).size(), 1u) << joined(log);
  EXPECT_EQ(allocated(log, "0xc000", 256).size(), 1u) << joined(log);
}
