//===- RuntimeFakeDriverNoTmapTest.cpp - a driver without cuTensorMapEncodeTiled ===//
//
// libevo_runtime against FakeCuda.c built without cuTensorMapEncodeTiled (a driver older than
// CUDA 12; libevo-fake-cuda-notmap.so, a process of its own since the driver is loaded once per
// process): a manifest with tensor maps is an Unsupported error value at prepare and launch,
// before anything is loaded or enqueued; a manifest without them still runs.
//
//===----------------------------------------------------------------------===//

#include "Sha256.h"
#include "TensorMapManifest.h"
#include "evo-runtime/Module.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

using evo::runtime::DType;
using evo::runtime::Error;
using evo::runtime::Module;
using evo::runtime::Status;
using evo::runtime::TensorRef;
using evo::runtime::WorkspaceRef;

namespace {

std::string logPath() {
  static std::string path = "/tmp/evo-fake-cuda-notmap-" + std::to_string(getpid()) + ".log";
  return path;
}

const bool kEnvironment = [] {
  setenv("EVO_LIBCUDA", EVO_FAKE_CUDA, 1);
  setenv("EVO_FAKE_CUDA_LOG", logPath().c_str(), 1);
  // The log of the calls after the last takeLog() would stay in /tmp.
  std::atexit([] { std::remove(logPath().c_str()); });
  return true;
}();

std::string takeLog() {
  std::ifstream in(logPath());
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::remove(logPath().c_str());
  return s;
}

void *at(uintptr_t p) { return reinterpret_cast<void *>(p); }

} // namespace

TEST(FakeDriverNoTensorMaps, ManifestsWithTensorMapsAreUnsupported) {
  takeLog();
  auto mod = Module::fromMemory(evo::runtime::testing::tensorMapManifest(),
                                evo::runtime::testing::kTensorMapImage);
  ASSERT_TRUE(mod.ok()) << mod.error().message(); // parsing needs no driver
  const std::string why = "evo-runtime: tm: the manifest has tensor maps, but the CUDA driver has "
                          "no cuTensorMapEncodeTiled (TMA needs a CUDA 12 driver)";
  Status s = mod->prepare();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code(), Error::Code::Unsupported);
  EXPECT_EQ(s.message(), why);
  std::vector<TensorRef> in = {TensorRef(at(0x100000), DType::F16, {256, 64}),
                               TensorRef(at(0x200000), DType::F16, {64, 128})};
  std::vector<TensorRef> out = {TensorRef(at(0x300000), DType::F32, {256, 128})};
  s = mod->launch(nullptr, in, out, WorkspaceRef{at(0x400000), 16384});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code(), Error::Code::Unsupported);
  EXPECT_EQ(s.message(), why);
  EXPECT_EQ(takeLog(), ""); // nothing loaded, allocated or launched
}

TEST(FakeDriverNoTensorMaps, ManifestsWithoutTensorMapsStillRun) {
  takeLog();
  const std::string image = ".version 8.0\n.target sm_80\n"
                            ".visible .entry copy_k0(\n.param .u64 a,\n.param .u64 b\n)\n{ ret; }\n";
  const std::string manifest =
      R"({"format": "evo-manifest/1", "name": "copy", "ptx": {"file": "copy.ptx", "bytes": )" +
      std::to_string(image.size()) + R"(, "sha256": ")" + evo::runtime::detail::sha256Hex(image) +
      R"("}, "buffers": [
        {"index": 0, "name": "x", "role": "input", "dtype": "f32", "shape": [64], "bytes": 256},
        {"index": 1, "name": "y", "role": "output", "dtype": "f32", "shape": [64], "bytes": 256}],
      "kernels": [{"name": "copy_k0", "params": [{"dtype": "f32", "shape": [64]}, {"dtype": "f32", "shape": [64]}]}],
      "launches": [{"kernel": "copy_k0", "grid": [1, 1, 1], "block": [64, 1, 1],
                    "dynamic_shared_memory": 0, "args": [0, 1]}]})";
  auto mod = Module::fromMemory(manifest, image);
  ASSERT_TRUE(mod.ok()) << mod.error().message();
  Status s = mod->launch(nullptr, {TensorRef(at(0x100000), DType::F32, {64})},
                         {TensorRef(at(0x200000), DType::F32, {64})});
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_NE(takeLog().find("launch copy_k0 grid=1,1,1 block=64,1,1 smem=0 stream=(nil) ctx=0xc000 "
                           "args=0x100000,0x200000"),
            std::string::npos);
}
