//===- Internal.h - libevo_runtime's private helpers and limits -----------===//

#ifndef EVO_RUNTIME_INTERNAL_H
#define EVO_RUNTIME_INTERNAL_H

#include "evo-runtime/Module.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace evo::runtime::detail {

// Limits on an untrusted manifest (evo-opt's own are in include/evo/Conversion/InputChecks.h).
inline constexpr uint64_t kMaxBufferBytes = uint64_t(1) << 40;
inline constexpr uint64_t kMaxManifestBytes = 16u << 20;
inline constexpr uint64_t kMaxImageBytes = 256u << 20;
/// A constants file (read into host memory whole).
inline constexpr int64_t kMaxConstantsBytes = int64_t(1) << 40;
inline constexpr size_t kMaxNesting = 64;
inline constexpr int64_t kMaxBuffers = 4096;
inline constexpr int64_t kMaxKernels = 4096;
inline constexpr int64_t kMaxLaunches = 65536;
/// Cubins (one per chip) a manifest may list.
inline constexpr size_t kMaxBinaries = 64;
/// Kernel parameters are 8-byte pointers in at most 4 KiB of parameter space.
inline constexpr int64_t kMaxParams = 512;
inline constexpr int64_t kMaxGridX = 2147483647, kMaxGridYZ = 65535;
inline constexpr int64_t kMaxDynamicSharedMemory = 227 * 1024;
/// The ABI's alignment of every buffer (vector accesses rely on it).
inline constexpr uintptr_t kBufferAlignment = 16;

/// `[A-Za-z_][A-Za-z0-9_$]*`, at most 200 bytes: what evo-opt accepts as a PTX symbol.
bool isSymbol(std::string_view s);
/// A name of a file directly in a directory: not empty, no '/', no control bytes, not . or ..
bool isPlainFileName(std::string_view s);
/// "f32[8192, 2048]"
std::string describe(DType dtype, const std::vector<int64_t> &shape);
/// Reads a regular file (openat on `dirFd`, O_NOFOLLOW when `noFollow`) of at most `maxBytes`;
/// `size`, when given, receives its size as soon as it is known (a larger file is not read).
Expected<std::string> readFile(int dirFd, const std::string &name, const std::string &display,
                               uint64_t maxBytes, bool noFollow, uint64_t *size = nullptr);

} // namespace evo::runtime::detail

#endif
