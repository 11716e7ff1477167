//===- ConstantsManifest.h - a manifest with constant buffers, for the tests -===//
//
// A plan whose weights are constant buffers (docs/runtime.md, "Constant buffers"): their bytes
// come from cw.constants.bin beside the manifest, and a tensor map is encoded over one of them:
//
//   0 x     input     f16[64, 64]               3 y      output  f32[64, 64]
//   1 w     constant  f16[64, 64] at 0          4 map_w  tensor_map over w (dims 64,64; box 64,64)
//   2 bias  constant  f32[64]     at 8448 (a zero gap of 256 bytes before it)
//
//   cw_k0(x, w, bias, y); cw_k1(map_w, bias, y)
//
//===----------------------------------------------------------------------===//

#ifndef EVO_RUNTIME_UNITTESTS_CONSTANTSMANIFEST_H
#define EVO_RUNTIME_UNITTESTS_CONSTANTSMANIFEST_H

#include "Sha256.h"

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <unistd.h>

namespace evo::runtime::testing {

inline const std::string kConstantsImage =
    ".version 8.0\n.target sm_90a\n"
    ".visible .entry cw_k0(\n.param .u64 a,\n.param .u64 b,\n.param .u64 c,\n.param .u64 d\n)\n"
    "{ ret; }\n"
    ".visible .entry cw_k1(\n.param .u64 a,\n.param .u64 b,\n.param .u64 c\n)\n{ ret; }\n";

inline constexpr uint64_t kWOffset = 0, kWBytes = 8192, kBiasOffset = 8448, kBiasBytes = 256;

/// w's bytes: byte i is (7 i + 1) mod 256.
inline std::string wBytes() {
  std::string w(kWBytes, '\0');
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = static_cast<char>((7 * i + 1) & 255);
  return w;
}
/// bias's bytes: byte i is 255 - i.
inline std::string biasBytes() {
  std::string b(kBiasBytes, '\0');
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = static_cast<char>(255 - i);
  return b;
}
/// The constants file: w at 0, zeros up to 8448, bias there (8704 bytes).
inline std::string constantsFile() {
  return wBytes() + std::string(kBiasOffset - kWBytes, '\0') + biasBytes();
}

inline std::string constantsManifest() {
  std::string data = constantsFile();
  return R"({"format": "evo-manifest/1", "name": "cw",
    "target": {"chip": "sm_90a"},
    "ptx": {"file": "cw.ptx", "bytes": )" +
         std::to_string(kConstantsImage.size()) + R"(, "sha256": ")" +
         detail::sha256Hex(kConstantsImage) + R"("},
    "constants": {"file": "cw.constants.bin", "bytes": )" +
         std::to_string(data.size()) + R"(, "sha256": ")" + detail::sha256Hex(data) + R"("},
    "buffers": [
      {"index": 0, "name": "x", "role": "input", "dtype": "f16", "shape": [64, 64], "bytes": 8192},
      {"index": 1, "name": "w", "role": "constant", "dtype": "f16", "shape": [64, 64], "bytes": 8192,
       "zero_init": false, "data": {"offset": 0, "bytes": 8192}},
      {"index": 2, "name": "bias", "role": "constant", "dtype": "f32", "shape": [64], "bytes": 256,
       "data": {"offset": 8448, "bytes": 256}},
      {"index": 3, "name": "y", "role": "output", "dtype": "f32", "shape": [64, 64], "bytes": 16384},
      {"index": 4, "name": "map_w", "role": "tensor_map", "dtype": "i8", "shape": [128], "bytes": 128,
       "tensor_map": {"source": 1, "element_type": "f16", "dims": [64, 64], "strides": [128],
                      "box": [64, 64], "swizzle": 128}}],
    "kernels": [
      {"name": "cw_k0", "params": [{"dtype": "f16", "shape": [64, 64]}, {"dtype": "f16", "shape": [64, 64]},
                                   {"dtype": "f32", "shape": [64]}, {"dtype": "f32", "shape": [64, 64]}]},
      {"name": "cw_k1", "params": [{"dtype": "i8", "shape": [128]}, {"dtype": "f32", "shape": [64]},
                                   {"dtype": "f32", "shape": [64, 64]}]}],
    "launches": [
      {"kernel": "cw_k0", "grid": [4, 1, 1], "block": [128, 1, 1], "dynamic_shared_memory": 0,
       "args": [0, 1, 2, 3]},
      {"kernel": "cw_k1", "grid": [2, 1, 1], "block": [128, 1, 1], "dynamic_shared_memory": 0,
       "args": [4, 2, 3]}]})";
}

/// A directory holding cw.json, cw.ptx and cw.constants.bin (removed with it).
struct ConstantsFiles {
  std::string dir;
  explicit ConstantsFiles(const std::string &manifest = constantsManifest()) {
    char tmpl[] = "/tmp/evo-runtime-constants-XXXXXX";
    dir = mkdtemp(tmpl);
    write("cw.json", manifest);
    write("cw.ptx", kConstantsImage);
    write("cw.constants.bin", constantsFile());
  }
  ConstantsFiles(const ConstantsFiles &) = delete;
  ConstantsFiles &operator=(const ConstantsFiles &) = delete;
  ~ConstantsFiles() { std::system(("rm -rf '" + dir + "'").c_str()); }
  void write(const std::string &name, const std::string &bytes) const {
    std::ofstream(dir + "/" + name, std::ios::binary | std::ios::trunc) << bytes;
  }
  std::string path(const std::string &name = "cw.json") const { return dir + "/" + name; }
};

} // namespace evo::runtime::testing

#endif
