//===- Sha256.h - SHA-256 for checking a kernel image against its manifest -===//
//
// Part of libevo_runtime (no LLVM, so llvm::SHA256 is not available here).
//
//===----------------------------------------------------------------------===//

#ifndef EVO_RUNTIME_SHA256_H
#define EVO_RUNTIME_SHA256_H

#include <string>
#include <string_view>

namespace evo::runtime::detail {

/// The SHA-256 digest of `data` as 64 lowercase hex digits (FIPS 180-4).
std::string sha256Hex(std::string_view data);

} // namespace evo::runtime::detail

#endif
