//===- RuntimeFakeDriverFixture.h - what the fake-driver tests share ------*- C++ -*-===//
//
// The stand-in driver's environment (FakeCuda.c through $EVO_LIBCUDA, set before the driver is
// first loaded, its call log and two devices), reading that log back, the mm_relu manifest and
// image, and the FakeDriver fixture, which starts every test with an empty log.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_RUNTIME_UNITTESTS_RUNTIMEFAKEDRIVERFIXTURE_H
#define EVO_RUNTIME_UNITTESTS_RUNTIMEFAKEDRIVERFIXTURE_H

#include "Sha256.h"
#include "evo-runtime/Module.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

// A named namespace, not an anonymous one: GoogleTest requires every TEST_F of a suite to use
// the same fixture class, and FakeDriver's cases live in two files.
namespace evo::runtime::testing {

inline std::string logPath() {
  static std::string path = "/tmp/evo-fake-cuda-" + std::to_string(getpid()) + ".log";
  return path;
}

// Before anything asks for the driver (Driver::get loads it once per process).
inline const bool kEnvironment = [] {
  setenv("EVO_LIBCUDA", EVO_FAKE_CUDA, 1);
  setenv("EVO_FAKE_CUDA_LOG", logPath().c_str(), 1);
  // The log of the calls after the last takeLog() would stay in /tmp.
  std::atexit([] { std::remove(logPath().c_str()); });
  setenv("EVO_FAKE_CUDA_DEVICES", "2", 1);
  return true;
}();

inline std::vector<std::string> takeLog() {
  std::vector<std::string> lines;
  std::ifstream in(logPath());
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  std::remove(logPath().c_str());
  return lines;
}

inline std::string joined(const std::vector<std::string> &lines) {
  std::string s;
  for (const std::string &l : lines)
    s += l + "\n";
  return s;
}

inline size_t count(const std::vector<std::string> &lines, const std::string &prefix) {
  size_t n = 0;
  for (const std::string &l : lines)
    n += l.rfind(prefix, 0) == 0;
  return n;
}

inline const std::string kImage =
    ".version 8.0\n.target sm_90\n"
    ".visible .entry mm_relu_k0(\n.param .u64 a,\n.param .u64 b,\n"
    ".param .u64 c,\n.param .u64 d\n)\n{ ret; }\n"
    ".visible .entry mm_relu_k1(\n.param .u64 a,\n.param .u64 b\n)\n{ ret; }\n";

/// mm_relu with a zero_init scratch buffer, as in RuntimeTestFixture.h; `k1` and `block1`
/// change the second launch.
inline std::string manifest(const std::string &k1 = "mm_relu_k1", int block1 = 256, int smem1 = 0) {
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

inline void *at(uintptr_t p) { return reinterpret_cast<void *>(p); }
inline Stream stream(uintptr_t v) { return reinterpret_cast<Stream>(v); }

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

} // namespace evo::runtime::testing

#endif // EVO_RUNTIME_UNITTESTS_RUNTIMEFAKEDRIVERFIXTURE_H
