//===- TensorMapManifest.h - a manifest with TMA tensor maps, for the tests -===//
//
// A matmul-shaped plan whose second kernel takes two tensor maps (docs/architecture.md, "Tensor
// maps"): one over an input, one over a scratch buffer that the first kernel writes:
//
//   0 a      input   f16[256, 64]      3 map_a  tensor_map over a  (dims 64,256; box 64,128; swizzle 128)
//   1 b      input   f16[64, 128]      4 bt     scratch  f16[64, 128]
//   2 c      output  f32[256, 128]     5 map_bt tensor_map over bt (dims 128,64; box 32,64; swizzle 64)
//
//   tm_k0(b, bt); tm_k1(a, map_a, map_bt, c)
//
//===----------------------------------------------------------------------===//

#ifndef EVO_RUNTIME_UNITTESTS_TENSORMAPMANIFEST_H
#define EVO_RUNTIME_UNITTESTS_TENSORMAPMANIFEST_H

#include "Sha256.h"

#include <string>

namespace evo::runtime::testing {

inline const std::string kTensorMapImage =
    ".version 8.0\n.target sm_90a\n"
    ".visible .entry tm_k0(\n.param .u64 a,\n.param .u64 b\n)\n{ ret; }\n"
    ".visible .entry tm_k1(\n.param .u64 a,\n.param .u64 b,\n.param .u64 c,\n.param .u64 d\n)\n"
    "{ ret; }\n";

inline std::string tensorMapManifest() {
  return R"({"format": "evo-manifest/1", "name": "tm",
    "ptx": {"file": "tm.ptx", "bytes": )" +
         std::to_string(kTensorMapImage.size()) + R"(, "sha256": ")" +
         detail::sha256Hex(kTensorMapImage) + R"("},
    "buffers": [
      {"index": 0, "name": "a", "role": "input", "dtype": "f16", "shape": [256, 64], "bytes": 32768},
      {"index": 1, "name": "b", "role": "input", "dtype": "f16", "shape": [64, 128], "bytes": 16384},
      {"index": 2, "name": "c", "role": "output", "dtype": "f32", "shape": [256, 128], "bytes": 131072},
      {"index": 3, "name": "map_a", "role": "tensor_map", "dtype": "i8", "shape": [128], "bytes": 128,
       "zero_init": false,
       "tensor_map": {"source": 0, "element_type": "f16", "dims": [64, 256], "strides": [128],
                      "box": [64, 128], "swizzle": 128}},
      {"index": 4, "name": "bt", "role": "scratch", "dtype": "f16", "shape": [64, 128], "bytes": 16384},
      {"index": 5, "name": "map_bt", "role": "tensor_map", "dtype": "i8", "shape": [128], "bytes": 128,
       "tensor_map": {"source": 4, "element_type": "f16", "dims": [128, 64], "strides": [256],
                      "box": [32, 64], "swizzle": 64}}],
    "kernels": [
      {"name": "tm_k0", "params": [{"dtype": "f16", "shape": [64, 128]}, {"dtype": "f16", "shape": [64, 128]}]},
      {"name": "tm_k1", "params": [{"dtype": "f16", "shape": [256, 64]}, {"dtype": "i8", "shape": [128]},
                                   {"dtype": "i8", "shape": [128]}, {"dtype": "f32", "shape": [256, 128]}]}],
    "launches": [
      {"kernel": "tm_k0", "grid": [4, 1, 1], "block": [128, 1, 1], "dynamic_shared_memory": 0, "args": [1, 4]},
      {"kernel": "tm_k1", "grid": [2, 1, 1], "block": [384, 1, 1], "dynamic_shared_memory": 100000,
       "args": [0, 3, 5, 2]}]})";
}

} // namespace evo::runtime::testing

#endif
