//===- RuntimeFakeDriverTest.cpp - libevo_runtime's launch path, in CI -----===//
//
// libevo_runtime against FakeCuda.c (loaded through $EVO_LIBCUDA), which logs every call: the
// launches' order, grids, streams, contexts and parameter values, the zeroing of zero_init
// buffers, one module per context, context push/pop around launches on another device's stream,
// errors from the driver as values, and no synchronization anywhere.
//
//===----------------------------------------------------------------------===//

#include "Sha256.h"
#include "evo-runtime/Module.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
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

namespace {

std::string logPath() {
  static std::string path = "/tmp/evo-fake-cuda-" + std::to_string(getpid()) + ".log";
  return path;
}

// Before anything asks for the driver (Driver::get loads it once per process).
const bool kEnvironment = [] {
  setenv("EVO_LIBCUDA", EVO_FAKE_CUDA, 1);
  setenv("EVO_FAKE_CUDA_LOG", logPath().c_str(), 1);
  setenv("EVO_FAKE_CUDA_DEVICES", "2", 1);
  return true;
}();

std::vector<std::string> takeLog() {
  std::vector<std::string> lines;
  std::ifstream in(logPath());
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  std::remove(logPath().c_str());
  return lines;
}

std::string joined(const std::vector<std::string> &lines) {
  std::string s;
  for (const std::string &l : lines)
    s += l + "\n";
  return s;
}

size_t count(const std::vector<std::string> &lines, const std::string &prefix) {
  size_t n = 0;
  for (const std::string &l : lines)
    n += l.rfind(prefix, 0) == 0;
  return n;
}

const std::string kImage = ".version 8.0\n.target sm_90\n"
                           ".visible .entry mm_relu_k0(\n.param .u64 a,\n.param .u64 b,\n"
                           ".param .u64 c,\n.param .u64 d\n)\n{ ret; }\n"
                           ".visible .entry mm_relu_k1(\n.param .u64 a,\n.param .u64 b\n)\n{ ret; }\n";

/// mm_relu with a zero_init scratch buffer, as in RuntimeTest.cpp; `k1` and `block1` change the
/// second launch.
std::string manifest(const std::string &k1 = "mm_relu_k1", int block1 = 256, int smem1 = 0) {
  std::ostringstream m;
  m << R"({"format": "evo-manifest/1", "name": "mm_relu",
    "ptx": {"file": "mm_relu.ptx", "bytes": )"
    << kImage.size() << R"(, "sha256": ")" << evo::runtime::detail::sha256Hex(kImage) << R"("},
    "buffers": [
      {"index": 0, "name": "arg0", "role": "input", "dtype": "f32", "shape": [256, 64], "bytes": 65536},
      {"index": 1, "name": "arg1", "role": "input", "dtype": "f32", "shape": [64, 128], "bytes": 32768},
      {"index": 2, "name": "result0", "role": "output", "dtype": "f32", "shape": [256, 128], "bytes": 131072},
      {"index": 3, "name": "tmp0", "role": "scratch", "dtype": "f32", "shape": [256, 128], "bytes": 131072},
      {"index": 4, "name": "tmp1", "role": "scratch", "dtype": "f32", "shape": [3], "bytes": 12, "zero_init": true}],
    "kernels": [
      {"name": "mm_relu_k0", "params": [{"dtype": "f32", "shape": [256, 64]}, {"dtype": "f32", "shape": [64, 128]},
                                        {"dtype": "f32", "shape": [256, 128]}, {"dtype": "f32", "shape": [3]}]},
      {"name": ")"
    << k1 << R"(", "params": [{"dtype": "f32", "shape": [256, 128]}, {"dtype": "f32", "shape": [256, 128]}]}],
    "launches": [
      {"kernel": "mm_relu_k0", "grid": [128, 1, 1], "block": [256, 1, 1], "dynamic_shared_memory": 0, "args": [0, 1, 3, 4]},
      {"kernel": ")"
    << k1 << R"(", "grid": [64, 2, 1], "block": [)" << block1
    << R"(, 1, 1], "dynamic_shared_memory": )" << smem1 << R"(, "args": [3, 2]}]})";
  return m.str();
}

void *at(uintptr_t p) { return reinterpret_cast<void *>(p); }
Stream stream(uintptr_t v) { return reinterpret_cast<Stream>(v); }

struct Args {
  std::vector<TensorRef> in = {TensorRef(at(0x100000), DType::F32, {256, 64}),
                               TensorRef(at(0x200000), DType::F32, {64, 128})};
  std::vector<TensorRef> out = {TensorRef(at(0x300000), DType::F32, {256, 128})};
  WorkspaceRef ws{at(0x400000), 131072 + 256};
};

class FakeDriver : public ::testing::Test {
protected:
  void SetUp() override { takeLog(); }
};

} // namespace

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
