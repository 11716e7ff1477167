//===- RuntimeFakeDriverTest.cpp - libevo_runtime's launch path, in CI -----===//
//
// libevo_runtime against FakeCuda.c (loaded through $EVO_LIBCUDA), which logs every call: the
// launches' order, grids, streams, contexts and parameter values, the zeroing of zero_init
// buffers, one module per context, context push/pop around launches on another device's stream,
// errors from the driver as values, and no synchronization anywhere.
//
//===----------------------------------------------------------------------===//

#include "RuntimeFakeDriverFixture.h"
#include "ScalarManifest.h"
#include "Sha256.h"
#include "evo-runtime/Module.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

using evo::runtime::DType;
using evo::runtime::Error;
using evo::runtime::Module;
using evo::runtime::Status;
using evo::runtime::Stream;
using evo::runtime::TensorRef;
using evo::runtime::WorkspaceRef;
using evo::runtime::testing::Args;
using evo::runtime::testing::at;
using evo::runtime::testing::count;
using evo::runtime::testing::FakeDriver;
using evo::runtime::testing::joined;
using evo::runtime::testing::kImage;
using evo::runtime::testing::manifest;
using evo::runtime::testing::stream;
using evo::runtime::testing::takeLog;

TEST_F(FakeDriver, LaunchesInOrderWithTheRightPointersAndNoSync) {
  auto mod = Module::fromMemory(manifest(), kImage);
  ASSERT_TRUE(mod.ok()) << mod.error().message();
  Args a;
  ASSERT_TRUE(mod->launch(stream(0x5000), a.in, a.out, a.ws).ok());
  ASSERT_TRUE(mod->launch(stream(0x5000), a.in, a.out, a.ws).ok());
  std::vector<std::string> log = takeLog();
  ASSERT_EQ(log.size(), 7u) << joined(log);
  EXPECT_EQ(log[0], "load ctx=0xc000");
  // tmp1 is zeroed at its workspace offset on the caller's stream, then the launches in order.
  EXPECT_EQ(log[1], "memset 0x420000 12 value=0 stream=0x5000 ctx=0xc000");
  EXPECT_EQ(log[2], "launch mm_relu_k0 grid=128,1,1 block=256,1,1 smem=0 stream=0x5000 ctx=0xc000 "
                    "args=0x100000,0x200000,0x400000,0x420000");
  EXPECT_EQ(log[3], "launch mm_relu_k1 grid=64,2,1 block=256,1,1 smem=0 stream=0x5000 ctx=0xc000 "
                    "args=0x400000,0x300000");
  // The second call reuses the module loaded in this context.
  EXPECT_EQ(count(log, "load"), 1u);
  EXPECT_EQ(count(log, "SYNC"), 0u);
}

TEST_F(FakeDriver, ModulesPerContextAndTheCallersContextKept) {
  auto mod = Module::fromMemory(manifest(), kImage);
  ASSERT_TRUE(mod.ok());
  Args a;
  // The null stream: the current context (none on this thread yet: device 0's is made current).
  auto ws = mod->allocateWorkspace();
  ASSERT_TRUE(ws.ok());
  EXPECT_EQ(ws->bytes(), 131072u + 256u);
  std::vector<std::string> log = takeLog();
  ASSERT_EQ(log.size(), 1u) << joined(log);
  EXPECT_EQ(log[0].rfind("alloc ctx=0xc000 ", 0), 0u) << log[0];
  // Device 1's stream while device 0's context is current: pushed for the call, popped after.
  ASSERT_TRUE(mod->launch(stream(0x5000), a.in, a.out, a.ws).ok());
  ASSERT_TRUE(mod->launch(stream(0x100010), a.in, a.out, a.ws).ok());
  ASSERT_TRUE(mod->launch(stream(0x100010), a.in, a.out, a.ws).ok());
  log = takeLog();
  EXPECT_EQ(count(log, "load ctx=0xc000"), 1u) << joined(log);
  EXPECT_EQ(count(log, "load ctx=0xc001"), 1u) << joined(log);
  EXPECT_EQ(count(log, "launch mm_relu_k1 grid=64,2,1 block=256,1,1 smem=0 stream=0x100010 ctx=0xc001"), 2u);
  EXPECT_EQ(count(log, "SYNC"), 0u);
  // Device 0's context is current again: the next null-stream allocation lands in it.
  auto ws2 = mod->allocateWorkspace();
  ASSERT_TRUE(ws2.ok());
  log = takeLog();
  ASSERT_EQ(log.size(), 1u) << joined(log);
  EXPECT_EQ(log[0].rfind("alloc ctx=0xc000 ", 0), 0u) << log[0];
  { auto gone = std::move(*ws2); }
  takeLog();
  { auto gone = std::move(*ws); }
  log = takeLog();
  ASSERT_EQ(log.size(), 1u) << joined(log);
  EXPECT_EQ(log[0].rfind("free ctx=0xc000 ", 0), 0u) << log[0];
  // The module is unloaded in every context when it goes.
  { Module dropped = std::move(*mod); }
  log = takeLog();
  EXPECT_EQ(count(log, "unload ctx=0xc000"), 1u) << joined(log);
  EXPECT_EQ(count(log, "unload ctx=0xc001"), 1u) << joined(log);
}

TEST_F(FakeDriver, DriverProblemsAreErrorValues) {
  Args a;
  // A kernel the image lacks: the module is unloaded again and the error names the kernel.
  auto missing = Module::fromMemory(manifest("mm_relu_k9"), kImage);
  ASSERT_TRUE(missing.ok());
  Status s = missing->launch(stream(0x5000), a.in, a.out, a.ws);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code(), Error::Code::Cuda);
  EXPECT_NE(s.message().find("kernel 'mm_relu_k9': cuModuleGetFunction failed: CUDA_ERROR_NOT_FOUND"),
            std::string::npos)
      << s.message();
  std::vector<std::string> log = takeLog();
  EXPECT_EQ(count(log, "unload"), 1u) << joined(log);
  EXPECT_EQ(count(log, "launch"), 0u);

  // PTX that does not load: the JIT log is part of the message.
  std::string bad = kImage + "// FAIL_LOAD\n";
  auto broken = Module::fromMemory(manifest(), bad, /*trustedImage=*/true);
  ASSERT_TRUE(broken.ok());
  s = broken->prepare(stream(0x5000));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("CUDA_ERROR_INVALID_PTX"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("ptxas fatal: fake syntax error"), std::string::npos) << s.message();

  // More threads per block than the kernel's registers allow.
  std::string heavyImage = kImage + ".visible .entry heavy_k1(\n.param .u64 a,\n.param .u64 b\n)\n";
  auto heavy = Module::fromMemory(manifest("heavy_k1", 512), heavyImage, /*trustedImage=*/true);
  ASSERT_TRUE(heavy.ok());
  s = heavy->launch(stream(0x5000), a.in, a.out, a.ws);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("kernel 'heavy_k1' is launched with 512 threads per block, but with 64 "
                             "registers per thread it can run at most 256"),
            std::string::npos)
      << s.message();
  takeLog();

  // Dynamic shared memory above 48 KiB is opted into.
  auto big = Module::fromMemory(manifest("mm_relu_k1", 256, 100000), kImage);
  ASSERT_TRUE(big.ok()) << big.error().message();
  ASSERT_TRUE(big->launch(stream(0x5000), a.in, a.out, a.ws).ok());
  log = takeLog();
  EXPECT_EQ(count(log, "attr mm_relu_k1 8=100000"), 1u) << joined(log);
  EXPECT_EQ(count(log, "launch mm_relu_k1 grid=64,2,1 block=256,1,1 smem=100000"), 1u) << joined(log);
}

TEST_F(FakeDriver, ThreadsShareOneModulePerContext) {
  auto mod = Module::fromMemory(manifest(), kImage);
  ASSERT_TRUE(mod.ok());
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      Args a;
      // Threads that never made a context current: the stream's context is used.
      for (int i = 0; i < 50; ++i)
        failures[t] += !mod->launch(stream((t % 2) * 0x100000 + 0x1000 * (t + 1)), a.in, a.out, a.ws).ok();
    });
  for (std::thread &t : threads)
    t.join();
  for (int f : failures)
    EXPECT_EQ(f, 0);
  std::vector<std::string> log = takeLog();
  EXPECT_EQ(count(log, "load"), 2u) << joined(log);
  EXPECT_EQ(count(log, "launch"), 4u * 50u * 2u);
  EXPECT_EQ(count(log, "SYNC"), 0u);
}

TEST_F(FakeDriver, NullStreamWithoutACurrentContextUsesDeviceZero) {
  auto mod = Module::fromMemory(manifest(), kImage);
  ASSERT_TRUE(mod.ok());
  std::thread t([&] {
    Args a;
    EXPECT_TRUE(mod->launch(nullptr, a.in, a.out, a.ws).ok());
  });
  t.join();
  std::vector<std::string> log = takeLog();
  EXPECT_EQ(count(log, "launch mm_relu_k0 grid=128,1,1 block=256,1,1 smem=0 stream=(nil) ctx=0xc000"), 1u)
      << joined(log);
}
//===----------------------------------------------------------------------===//
// Cubins per chip (evo-opt's chips=): each GPU loads the image made for it
//===----------------------------------------------------------------------===//

namespace {

/// A stand-in image with the manifest's kernels, tagged for the log ("image ctx=C <tag>").
std::string taggedImage(const std::string &magic, const std::string &tag) {
  return magic + "// fake-image: " + tag + "\n" + kImage;
}

struct MultiChipFiles {
  std::string dir;
  MultiChipFiles() {
    char tmpl[] = "/tmp/evo-fake-chips-XXXXXX";
    dir = mkdtemp(tmpl);
    std::string ptx = taggedImage("", "ptx sm_80");
    std::string c80 = taggedImage("\x7f" "ELF", "cubin sm_80");
    std::string c90 = taggedImage("\x7f" "ELF", "cubin sm_90a");
    auto entry = [](const std::string &chip, const std::string &image) {
      return R"({"chip": ")" + chip + R"(", "file": "mm_relu.)" + chip + R"(.cubin", "bytes": )" +
             std::to_string(image.size()) + R"(, "sha256": ")" +
             evo::runtime::detail::sha256Hex(image) + R"("})";
    };
    std::string m = manifest();
    // The PTX of the fake manifest is kImage: give it this directory's PTX instead.
    std::string oldPtx = R"("bytes": )" + std::to_string(kImage.size()) + R"(, "sha256": ")" +
                         evo::runtime::detail::sha256Hex(kImage) + R"(")";
    std::string newPtx = R"("bytes": )" + std::to_string(ptx.size()) + R"(, "sha256": ")" +
                         evo::runtime::detail::sha256Hex(ptx) + R"(")";
    m.replace(m.find(oldPtx), oldPtx.size(), newPtx);
    m.insert(m.find('{') + 1, R"("target": {"chip": "sm_80", "features": "+ptx80", "chips": ["sm_80", "sm_90a"]},
      "binaries": [)" + entry("sm_80", c80) + ", " + entry("sm_90a", c90) + "],\n");
    write("mm_relu.json", m);
    write("mm_relu.ptx", ptx);
    write("mm_relu.sm_80.cubin", c80);
    write("mm_relu.sm_90a.cubin", c90);
  }
  ~MultiChipFiles() {
    std::system(("rm -rf '" + dir + "'").c_str());
    unsetenv("EVO_FAKE_CUDA_CC");
  }
  void write(const std::string &name, const std::string &text) const {
    std::ofstream(dir + "/" + name, std::ios::binary) << text;
  }
  std::string manifestPath() const { return dir + "/mm_relu.json"; }
};

} // namespace

TEST_F(FakeDriver, EachGpuLoadsTheCubinMadeForIt) {
  MultiChipFiles files;
  // Device 0 an H200 (9.0), device 1 an RTX A6000-like 8.6: the sm_90a cubin on the first, the
  // sm_80 one on the second (binary compatible within 8.x).
  setenv("EVO_FAKE_CUDA_CC", "9.0,8.6", 1);
  auto mod = Module::load(files.manifestPath());
  ASSERT_TRUE(mod.ok()) << mod.error().message();
  Args a;
  ASSERT_TRUE(mod->launch(stream(0x5000), a.in, a.out, a.ws).ok());
  ASSERT_TRUE(mod->launch(stream(0x100010), a.in, a.out, a.ws).ok());
  std::vector<std::string> log = takeLog();
  EXPECT_EQ(count(log, "image ctx=0xc000 cubin sm_90a"), 1u) << joined(log);
  EXPECT_EQ(count(log, "image ctx=0xc001 cubin sm_80"), 1u) << joined(log);
  EXPECT_EQ(count(log, "image"), 2u) << joined(log);
  EXPECT_EQ(count(log, "launch mm_relu_k1"), 2u) << joined(log);

  // A GPU newer than every cubin's major version gets the PTX (the driver JIT-compiles it).
  setenv("EVO_FAKE_CUDA_CC", "12.0", 1);
  auto newer = Module::load(files.manifestPath());
  ASSERT_TRUE(newer.ok());
  ASSERT_TRUE(newer->prepare(stream(0x5000)).ok());
  log = takeLog();
  EXPECT_EQ(count(log, "image ctx=0xc000 ptx sm_80"), 1u) << joined(log);

  // A GPU older than the PTX: a clear error, nothing loaded or launched.
  setenv("EVO_FAKE_CUDA_CC", "7.5", 1);
  auto older = Module::load(files.manifestPath());
  ASSERT_TRUE(older.ok());
  Status s = older->launch(stream(0x5000), a.in, a.out, a.ws);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code(), Error::Code::Unsupported);
  EXPECT_EQ(s.message(), "evo-runtime: mm_relu: no kernel image runs on this GPU (sm_75): the "
                         "cubins are for sm_80, sm_90a and the PTX is for sm_80 (needs sm_80 or "
                         "newer)");
  log = takeLog();
  EXPECT_EQ(count(log, "load"), 0u) << joined(log);
  EXPECT_EQ(count(log, "launch"), 0u) << joined(log);

  // An image given by the caller is loaded as it is, whatever the GPU.
  auto given = Module::load(files.manifestPath(), {taggedImage("", "given")});
  ASSERT_TRUE(given.ok());
  ASSERT_TRUE(given->prepare(stream(0x5000)).ok());
  log = takeLog();
  EXPECT_EQ(count(log, "image ctx=0xc000 given"), 1u) << joined(log);
}

// A scalar argument (docs/architecture.md, "Scalar arguments") is the value in the kernel's
// parameter list, where a buffer's address would be: its bytes in the low ones (the stand-in
// driver logs each parameter as the 8 bytes it points to). Nothing is allocated for it, and a
// captured launch keeps the value of its call (the driver copies parameters when it enqueues).
TEST_F(FakeDriver, ScalarArgumentsArePassedByValue) {
  auto mod = Module::fromMemory(evo::runtime::testing::scalarManifest(),
                                evo::runtime::testing::kScalarImage);
  ASSERT_TRUE(mod.ok()) << mod.error().message();
  std::vector<TensorRef> out = {TensorRef(at(0x300000), DType::F32, {1024})};
  std::vector<TensorRef> in = {TensorRef(at(0x100000), DType::F32, {1024}),
                               TensorRef::scalar(DType::F32, 0.5), TensorRef::scalar(DType::F16, -2)};
  ASSERT_TRUE(mod->launch(stream(0x5000), in, out).ok());
  in[1] = TensorRef::scalar(DType::F32, -1.0);
  ASSERT_TRUE(mod->launch(stream(0x5000), in, out).ok());
  std::vector<std::string> log = takeLog();
  ASSERT_EQ(log.size(), 3u) << joined(log);
  EXPECT_EQ(log[0], "load ctx=0xc000");
  EXPECT_EQ(log[1], "launch leaky_k0 grid=4,1,1 block=256,1,1 smem=0 stream=0x5000 ctx=0xc000 "
                    "args=0x100000,0x3f000000,0xc000,0x300000");
  EXPECT_EQ(log[2], "launch leaky_k0 grid=4,1,1 block=256,1,1 smem=0 stream=0x5000 ctx=0xc000 "
                    "args=0x100000,0xbf800000,0xc000,0x300000");
  EXPECT_EQ(count(log, "alloc"), 0u);
  EXPECT_EQ(count(log, "SYNC"), 0u);
  // A tensor where the manifest passes a value is refused before the driver is touched.
  in[1] = TensorRef(at(0x200000), DType::F32, {});
  Status s = mod->launch(stream(0x5000), in, out);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("a scalar argument, passed by value"), std::string::npos) << s.message();
  EXPECT_TRUE(takeLog().empty());
}
