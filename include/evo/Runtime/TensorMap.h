//===- TensorMap.h - the rules of a TMA tensor map, once ----------*- C++ -*-===//
//
// A plan buffer of role `tensor_map` is a 128-byte CUtensorMap in device global memory (64-byte
// aligned) that the host encodes with the driver's cuTensorMapEncodeTiled against the device
// address of another plan buffer (its source), and that kernels receive as a pointer, like any
// other buffer (docs/architecture.md, "Tensor maps"). Fixed by the contract: element strides 1,
// interleave none, L2 promotion 256 B, out-of-bounds fill none (TMA loads zeros outside `dims`).
//
// The checks here are shared by the evo dialect's plan verifier (with diagnostics), by
// evo-eval-worker and by the C++ runtime (against the buffer they actually bind): header-only and
// dependency-free (plain C++17, no CUDA headers: the driver's enum values are spelled out).
// python/evo_runtime/manifest.py repeats them.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_RUNTIME_TENSORMAP_H
#define EVO_RUNTIME_TENSORMAP_H

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace evo::tensormap {

/// sizeof(CUtensorMap) and its alignment.
inline constexpr uint64_t kDescriptorBytes = 128;
inline constexpr uint64_t kDescriptorAlign = 64;
inline constexpr unsigned kMaxRank = 5;
/// Limits of cuTensorMapEncodeTiled.
inline constexpr uint64_t kMaxDim = 1ull << 32;
inline constexpr uint64_t kStrideLimit = 1ull << 40; // exclusive
inline constexpr int64_t kMaxBox = 256;
/// The source's address must be aligned to this many bytes.
inline constexpr uint64_t kSourceAlign = 16;

/// The keys of a tensor map's JSON form (manifests, worker requests; python/evo_runtime spells
/// the same): {"source", "element_type", "dims", "strides", "box", "swizzle"}.
namespace key {
inline constexpr const char kSource[] = "source";
inline constexpr const char kElementType[] = "element_type";
inline constexpr const char kDims[] = "dims";
inline constexpr const char kStrides[] = "strides";
inline constexpr const char kBox[] = "box";
inline constexpr const char kSwizzle[] = "swizzle";
} // namespace key

// CUtensorMapDataType (cuda.h).
enum DataType : int {
  kUInt8 = 0,
  kUInt16 = 1,
  kUInt32 = 2,
  kInt32 = 3,
  kUInt64 = 4,
  kInt64 = 5,
  kFloat16 = 6,
  kFloat32 = 7,
  kFloat64 = 8,
  kBFloat16 = 9,
};
// The fixed arguments (CUtensorMapInterleave, CUtensorMapL2promotion, CUtensorMapFloatOOBfill).
inline constexpr int kInterleaveNone = 0;
inline constexpr int kL2Promotion256B = 3;
inline constexpr int kOobFillNone = 0;

/// CUtensorMapSwizzle for a swizzle of `bytes` (0, 32, 64, 128), or -1.
inline int swizzleEnum(int64_t bytes) {
  switch (bytes) {
  case 0: return 0;
  case 32: return 1;
  case 64: return 2;
  case 128: return 3;
  default: return -1;
  }
}

struct ElementInfo {
  DataType dataType;
  unsigned bytes;
};

namespace detail {
struct ElementEntry {
  const char *name;
  DataType type;
  unsigned bytes;
};
inline constexpr ElementEntry kElements[] = {{"f16", kFloat16, 2}, {"bf16", kBFloat16, 2},
                                             {"f32", kFloat32, 4}, {"f64", kFloat64, 8},
                                             {"i8", kUInt8, 1},    {"i16", kUInt16, 2},
                                             {"i32", kInt32, 4},   {"i64", kInt64, 8}};
} // namespace detail

/// The TMA data type of a manifest element type name ("f16", "bf16", "f32", "f64", "i8", "i16",
/// "i32", "i64"); false for any other.
inline bool elementInfo(std::string_view name, ElementInfo &out) {
  for (const detail::ElementEntry &e : detail::kElements)
    if (name == e.name) {
      out = {e.type, e.bytes};
      return true;
    }
  return false;
}

/// The element type name of a TMA data type evo uses, or null.
inline const char *elementName(int dataType) {
  for (const detail::ElementEntry &e : detail::kElements)
    if (e.type == dataType)
      return e.name;
  return nullptr;
}
inline constexpr const char kSupportedElementTypes[] = "f16, bf16, f32, f64, i8, i16, i32, i64";

/// One past the highest byte the map addresses, relative to the source's start:
/// dims[0] * elementBytes + sum over i >= 1 of (dims[i] - 1) * strides[i - 1]. False when the
/// arguments are not a checked shape or the sum does not fit 64 bits.
inline bool extentBytes(const std::vector<int64_t> &dims, const std::vector<int64_t> &strides,
                        unsigned elementBytes, uint64_t &out) {
  if (dims.empty() || strides.size() + 1 != dims.size())
    return false;
  unsigned __int128 sum = static_cast<unsigned __int128>(static_cast<uint64_t>(dims[0])) *
                          elementBytes;
  for (size_t i = 1; i < dims.size(); ++i) {
    if (dims[i] < 1 || strides[i - 1] < 0)
      return false;
    sum += static_cast<unsigned __int128>(static_cast<uint64_t>(dims[i] - 1)) *
           static_cast<uint64_t>(strides[i - 1]);
  }
  if (sum > UINT64_MAX)
    return false;
  out = static_cast<uint64_t>(sum);
  return true;
}

/// The checks that need no element type: "" when the shape is one cuTensorMapEncodeTiled accepts,
/// else a sentence saying what is wrong.
inline std::string checkShape(const std::vector<int64_t> &dims,
                              const std::vector<int64_t> &strides,
                              const std::vector<int64_t> &box, int64_t swizzle) {
  auto str = [](int64_t v) { return std::to_string(v); };
  if (dims.empty() || dims.size() > kMaxRank)
    return "rank " + std::to_string(dims.size()) + " is not in 1..5";
  if (strides.size() + 1 != dims.size())
    return "needs rank - 1 = " + std::to_string(dims.size() - 1) + " strides, got " +
           std::to_string(strides.size());
  if (box.size() != dims.size())
    return "needs " + std::to_string(dims.size()) + " box sizes (one per dimension), got " +
           std::to_string(box.size());
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] < 1 || static_cast<uint64_t>(dims[i]) > kMaxDim)
      return "dims[" + std::to_string(i) + "] = " + str(dims[i]) + " is not in [1, 2^32]";
  for (size_t i = 0; i < strides.size(); ++i)
    if (strides[i] < 16 || strides[i] % 16 != 0 ||
        static_cast<uint64_t>(strides[i]) >= kStrideLimit)
      return "strides[" + std::to_string(i) + "] = " + str(strides[i]) +
             " bytes is not a positive multiple of 16 below 2^40";
  for (size_t i = 0; i < box.size(); ++i)
    if (box[i] < 1 || box[i] > kMaxBox)
      return "box[" + std::to_string(i) + "] = " + str(box[i]) + " is not in [1, 256]";
  if (swizzleEnum(swizzle) < 0)
    return "swizzle " + str(swizzle) + " is not 0, 32, 64 or 128 bytes";
  return "";
}

/// The checks that need the element size and the source's size in bytes (all of checkShape
/// first): "" when valid.
inline std::string check(const std::vector<int64_t> &dims, const std::vector<int64_t> &strides,
                         const std::vector<int64_t> &box, int64_t swizzle, unsigned elementBytes,
                         uint64_t sourceBytes) {
  std::string err = checkShape(dims, strides, box, swizzle);
  if (!err.empty())
    return err;
  uint64_t inner = static_cast<uint64_t>(box[0]) * elementBytes;
  if (inner % 16 != 0)
    return "the box's inner extent box[0] * " + std::to_string(elementBytes) + " = " +
           std::to_string(inner) + " bytes is not a multiple of 16";
  if (swizzle > 0 && inner > static_cast<uint64_t>(swizzle))
    return "the box's inner extent of " + std::to_string(inner) +
           " bytes exceeds the swizzle of " + std::to_string(swizzle) + " bytes";
  uint64_t extent = 0;
  if (!extentBytes(dims, strides, elementBytes, extent) || extent > sourceBytes)
    return "addresses bytes up to " +
           (extent ? std::to_string(extent) : std::string("beyond 2^64")) +
           " of its source, which has " + std::to_string(sourceBytes);
  return "";
}

} // namespace evo::tensormap

#endif // EVO_RUNTIME_TENSORMAP_H
