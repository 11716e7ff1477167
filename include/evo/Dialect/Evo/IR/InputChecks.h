//===- InputChecks.h - limits on what an input module may ask for -*- C++ -*-===//
//
// Every input module, hand-written gpu.module and evo.plan is untrusted. These checks run before
// a name becomes a file name or a PTX symbol, before a shape becomes a buffer size or a grid, and
// before the parser sees deeply nested text, so that hostile input ends in a diagnostic, never in
// a write outside the output directory, an LLVM ERROR, a wrapped size or a stack overflow.
// docs/reliability.md ("Input modules and output files") lists what each check promises.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_DIALECT_EVO_IR_INPUTCHECKS_H
#define EVO_DIALECT_EVO_IR_INPUTCHECKS_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringRef.h"
#include <array>
#include <optional>
#include <string>

namespace evo {

/// The longest symbol evo accepts (a file name is the symbol plus ".json", well under the 255
/// bytes of NAME_MAX).
inline constexpr size_t kMaxSymbolLength = 200;
/// The longest function name evo-lower-to-gpu accepts: its kernels are `<name>_k<n>` and its
/// gpu.module `<name>_kernels`, which must stay within kMaxSymbolLength.
inline constexpr size_t kMaxFunctionNameLength = kMaxSymbolLength - 16;

/// A name that may become a PTX symbol and a file name: `[A-Za-z_][A-Za-z0-9_$]*`, at most
/// `maxLength` bytes. This excludes '/', '.', '-', spaces, control characters and non-ASCII bytes:
/// every character PTX or a file system might read differently.
bool isValidSymbolName(llvm::StringRef name, size_t maxLength = kMaxSymbolLength);

/// `name` quoted for a diagnostic: escapes '"', '\\' and every byte outside printable ASCII
/// (control characters, invalid UTF-8) as \XX, and shortens it to its first 64 bytes.
std::string quoteName(llvm::StringRef name);

/// Emits "<what> "<name>" cannot be a PTX symbol or a file name: ..." unless the name is valid.
mlir::LogicalResult checkSymbolName(llvm::StringRef name, llvm::StringRef what,
                                    llvm::function_ref<mlir::InFlightDiagnostic()> emitError,
                                    size_t maxLength = kMaxSymbolLength);

/// The largest buffer evo accepts, in bytes (1 TiB: more than any GPU's memory, small enough that
/// no index, size or grid computed from it can overflow 64 bits).
inline constexpr int64_t kMaxBufferBytes = int64_t(1) << 40;

/// Checks a tensor or memref type that becomes a kernel buffer: ranked, statically shaped, no
/// encoding (sparse or otherwise), every dimension at least 1, and an element count and byte
/// size that fit kMaxBufferBytes.
mlir::LogicalResult checkBufferType(mlir::Type type,
                                    llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

/// Whether `type` can be a scalar argument passed to kernels by value: f16, bf16, f32, f64 or an
/// integer of at most 64 bits (i1 is a byte holding 0 or 1, as in buffers). The same element
/// types the kernels compute on; `index` (its width is the target's) and everything else
/// (f80, complex, vectors, memrefs) are not.
bool isScalarArgumentType(mlir::Type type);
/// Emits "... supports scalar arguments of f16, bf16, f32, f64 and integers up to 64 bits, got
/// <type>" (with a hint for index) unless isScalarArgumentType.
mlir::LogicalResult checkScalarArgumentType(
    mlir::Type type, llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

/// Multiplies sizes without overflow: nullopt when the product exceeds INT64_MAX (or a size is
/// negative).
std::optional<int64_t> checkedProduct(llvm::ArrayRef<int64_t> sizes);

/// CUDA's launch limits (every architecture since sm_30): grid x < 2^31, y and z <= 65535;
/// block x, y <= 1024, z <= 64, x*y*z <= 1024; dynamic shared memory <= 227 KiB, the most any
/// GPU lets a block opt into (sm_90, sm_100).
inline constexpr int64_t kMaxGridX = 2147483647, kMaxGridYZ = 65535;
inline constexpr int64_t kMaxBlockXY = 1024, kMaxBlockZ = 64, kMaxBlockThreads = 1024;
inline constexpr int64_t kMaxDynamicSharedMemory = 227 * 1024;
mlir::LogicalResult checkLaunchDims(llvm::StringRef kernel, const std::array<int64_t, 3> &grid,
                                    const std::array<int64_t, 3> &block,
                                    int64_t dynamicSharedMemory,
                                    llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

/// The deepest nesting of brackets ('{', '(', '[', '<') that evo-opt's parser accepts by default.
/// Parsing, verifying and printing recurse once per level; deeper text would exhaust the stack
/// (and costs quadratic time well before that).
inline constexpr unsigned kDefaultMaxNesting = 1000;

/// Where textual MLIR nests brackets deeper than `limit`: the byte offset of the first bracket
/// past the limit, or nullopt. Skips string literals and `//` comments; `->` and `>=` are not
/// brackets. Brackets of any kind count together, so the depth bounds the parser's recursion.
std::optional<size_t> findExcessiveNesting(llvm::StringRef text, unsigned limit);

} // namespace evo

#endif // EVO_DIALECT_EVO_IR_INPUTCHECKS_H
