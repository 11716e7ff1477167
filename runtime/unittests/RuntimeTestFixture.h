//===- RuntimeTestFixture.h - what libevo_runtime's manifest tests share --*- C++ -*-===//
//
// A valid manifest as evo-emit-ptx writes it for mm_relu and its PTX, the parse error of a
// mutation of it, hostile mutations with the message they must produce, and a temporary
// directory to load modules from.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_RUNTIME_UNITTESTS_RUNTIMETESTFIXTURE_H
#define EVO_RUNTIME_UNITTESTS_RUNTIMETESTFIXTURE_H

#include "Sha256.h"
#include "evo-runtime/Module.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <unistd.h>
#include <vector>

namespace evo::runtime::testing {

using json = nlohmann::json;

inline const std::string kPtx = "//\n.version 8.0\n.target sm_90\n.address_size 64\n// kernels\n";

/// A manifest as evo-emit-ptx writes it for `mm_relu` (test/GPU/Inputs/mm_relu.mlir): two
/// inputs, one output, a scratch buffer between two launches; plus a zero_init scratch.
inline json validManifest() {
  auto buffer = [](int i, const char *name, const char *role, std::vector<int64_t> shape,
                   bool zero = false) {
    int64_t n = 4;
    for (int64_t d : shape)
      n *= d;
    return json{{"index", i},   {"name", name},  {"role", role},      {"dtype", "f32"},
                {"shape", shape}, {"bytes", n},  {"zero_init", zero}};
  };
  auto param = [](std::vector<int64_t> shape) { return json{{"dtype", "f32"}, {"shape", shape}}; };
  return json{
      {"format", "evo-manifest/1"},
      {"name", "mm_relu"},
      {"function", "mm_relu"},
      {"generator", "evo-opt 0.1.0 (MLIR/LLVM 22.1.8)"},
      {"abi", "bare-pointer"},
      {"target", {{"chip", "sm_90"}, {"features", "+ptx80"}}},
      {"ptx", {{"file", "mm_relu.ptx"}, {"bytes", kPtx.size()},
               {"sha256", evo::runtime::detail::sha256Hex(kPtx)}}},
      {"ptxas", nullptr},
      {"buffers",
       {buffer(0, "arg0", "input", {256, 64}), buffer(1, "arg1", "input", {64, 128}),
        buffer(2, "result0", "output", {256, 128}), buffer(3, "tmp0", "scratch", {256, 128}),
        buffer(4, "tmp1", "scratch", {3}, true)}},
      {"tasks", {{{"name", "t0"}}, {{"name", "t1"}}}},
      {"kernels",
       {{{"name", "mm_relu_k0"},
         {"params", {param({256, 64}), param({64, 128}), param({256, 128}), param({3})}},
         {"knobs", json::object()},
         {"resources", nullptr}},
        {{"name", "mm_relu_k1"}, {"params", {param({256, 128}), param({256, 128})}}}}},
      {"launches",
       {{{"kernel", "mm_relu_k0"}, {"task", 0}, {"grid", {128, 1, 1}}, {"block", {256, 1, 1}},
         {"dynamic_shared_memory", 0}, {"args", {0, 1, 3, 4}}},
        {{"kernel", "mm_relu_k1"}, {"task", 1}, {"grid", {128, 1, 1}}, {"block", {256, 1, 1}},
         {"dynamic_shared_memory", 0}, {"args", {3, 2}}}}}};
}

inline std::string parseError(const std::string &text) {
  evo::runtime::Expected<Manifest> m = Manifest::parse(text);
  if (m)
    return "(accepted)";
  EXPECT_EQ(m.error().code(), Error::Code::InvalidManifest) << m.error().message();
  return m.error().message();
}

inline std::string mutated(const std::function<void(json &)> &mutate) {
  json j = validManifest();
  mutate(j);
  return parseError(j.dump());
}

class TempDir {
public:
  TempDir() {
    char tmpl[] = "/tmp/evo-runtime-test-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
  void write(const std::string &name, const std::string &text) const {
    std::ofstream(path + "/" + name, std::ios::binary) << text;
  }
  std::string path;
};

struct Hostile {
  const char *name;
  std::function<void(json &)> mutate;
  const char *expect; ///< a piece of the message
};

} // namespace evo::runtime::testing

#endif // EVO_RUNTIME_UNITTESTS_RUNTIMETESTFIXTURE_H
