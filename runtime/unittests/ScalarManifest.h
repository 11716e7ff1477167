//===- ScalarManifest.h - a manifest with scalar arguments, for the tests --===//
//
// leaky_relu with its negative slope a scalar argument passed by value (docs/architecture.md,
// "Scalar arguments"), as evo-emit-ptx writes it for
// `func.func @leaky(%x: tensor<1024xf32>, %alpha: f32, %shift: f16) -> tensor<1024xf32>`:
//
//   0 arg0    input   f32[1024]
//   1 arg1    input   f32 []     by_value
//   2 arg2    input   f16 []     by_value
//   3 result0 output  f32[1024]
//
//   leaky_k0(arg0, arg1 (a value), arg2 (a value), result0)
//
//===----------------------------------------------------------------------===//

#ifndef EVO_RUNTIME_UNITTESTS_SCALARMANIFEST_H
#define EVO_RUNTIME_UNITTESTS_SCALARMANIFEST_H

#include "Sha256.h"

#include <string>

namespace evo::runtime::testing {

inline const std::string kScalarImage =
    ".version 8.0\n.target sm_90\n"
    ".visible .entry leaky_k0(\n.param .u64 .ptr a,\n.param .f32 b,\n.param .align 2 .b8 c[2],\n"
    ".param .u64 .ptr d\n)\n{ ret; }\n";

inline std::string scalarManifest() {
  return R"({"format": "evo-manifest/1", "name": "leaky", "function": "leaky",
    "ptx": {"file": "leaky.ptx", "bytes": )" +
         std::to_string(kScalarImage.size()) + R"(, "sha256": ")" +
         detail::sha256Hex(kScalarImage) + R"("},
    "buffers": [
      {"index": 0, "name": "arg0", "role": "input", "dtype": "f32", "shape": [1024], "bytes": 4096, "zero_init": false},
      {"index": 1, "name": "arg1", "role": "input", "dtype": "f32", "shape": [], "bytes": 4, "zero_init": false, "by_value": true},
      {"index": 2, "name": "arg2", "role": "input", "dtype": "f16", "shape": [], "bytes": 2, "zero_init": false, "by_value": true},
      {"index": 3, "name": "result0", "role": "output", "dtype": "f32", "shape": [1024], "bytes": 4096, "zero_init": false}],
    "kernels": [{"name": "leaky_k0", "params": [
      {"dtype": "f32", "shape": [1024]}, {"dtype": "f32", "shape": [], "by_value": true},
      {"dtype": "f16", "shape": [], "by_value": true}, {"dtype": "f32", "shape": [1024]}]}],
    "launches": [{"kernel": "leaky_k0", "task": 0, "grid": [4, 1, 1], "block": [256, 1, 1],
                  "dynamic_shared_memory": 0, "args": [0, 1, 2, 3]}]})";
}

} // namespace evo::runtime::testing

#endif // EVO_RUNTIME_UNITTESTS_SCALARMANIFEST_H
