//===- InputChecks.cpp - limits on what an input module may ask for ---------===//

#include "evo/Dialect/Evo/IR/InputChecks.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;

namespace evo {

bool isValidSymbolName(StringRef name, size_t maxLength) {
  if (name.empty() || name.size() > maxLength)
    return false;
  if (!llvm::isAlpha(name.front()) && name.front() != '_')
    return false;
  return llvm::all_of(name, [](char c) { return llvm::isAlnum(c) || c == '_' || c == '$'; });
}

std::string quoteName(StringRef name) {
  constexpr size_t kShown = 64;
  std::string out = "\"";
  for (unsigned char c : name.take_front(kShown)) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c >= 0x20 && c < 0x7f) {
      out += c;
    } else {
      out += '\\';
      out += llvm::hexdigit(c >> 4, /*LowerCase=*/false);
      out += llvm::hexdigit(c & 15, /*LowerCase=*/false);
    }
  }
  out += '"';
  if (name.size() > kShown)
    out += "... (" + std::to_string(name.size()) + " bytes)";
  return out;
}

LogicalResult checkSymbolName(StringRef name, StringRef what,
                              function_ref<InFlightDiagnostic()> emitError, size_t maxLength) {
  if (isValidSymbolName(name, maxLength))
    return success();
  return emitError() << what << " " << quoteName(name)
                     << " cannot be a PTX symbol or a file name: use letters, digits, '_' and "
                        "'$', starting with a letter or '_', at most "
                     << maxLength << " characters";
}

std::optional<int64_t> checkedProduct(ArrayRef<int64_t> sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) {
    if (s < 0)
      return std::nullopt;
    if (llvm::MulOverflow(n, s, n))
      return std::nullopt;
  }
  return n;
}

LogicalResult checkBufferType(Type type, function_ref<InFlightDiagnostic()> emitError) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped || !shaped.hasRank())
    return emitError() << "needs a ranked tensor or memref, got " << type;
  if (auto tensor = dyn_cast<RankedTensorType>(type); tensor && tensor.getEncoding())
    return emitError() << "does not support the tensor encoding " << tensor.getEncoding()
                       << " (only dense tensors are lowered), got " << type;
  if (!shaped.hasStaticShape())
    return emitError() << "needs static shapes, got " << type;
  if (llvm::any_of(shaped.getShape(), [](int64_t d) { return d < 1; }))
    return emitError() << "needs every dimension to be at least 1 (an empty buffer has no "
                          "kernel to launch), got "
                       << type;
  Type elt = shaped.getElementType();
  if (!elt.isIntOrFloat())
    return emitError() << "supports integer and float elements, got " << elt;
  int64_t bytesPerElement = (elt.getIntOrFloatBitWidth() + 7) / 8;
  std::optional<int64_t> elements = checkedProduct(shaped.getShape());
  int64_t bytes = 0;
  if (!elements || llvm::MulOverflow(*elements, bytesPerElement, bytes) || bytes > kMaxBufferBytes)
    return emitError() << "supports buffers of at most " << (kMaxBufferBytes >> 40)
                       << " TiB, got " << type;
  return success();
}

bool isScalarArgumentType(Type type) {
  return isa<Float16Type, BFloat16Type, Float32Type, Float64Type>(type) ||
         (type.isInteger() && type.getIntOrFloatBitWidth() <= 64);
}

LogicalResult checkScalarArgumentType(Type type, function_ref<InFlightDiagnostic()> emitError) {
  if (isScalarArgumentType(type))
    return success();
  InFlightDiagnostic diag = emitError()
                            << "supports scalar arguments of f16, bf16, f32, f64 and integers up "
                               "to 64 bits (passed to the kernels by value), got "
                            << type;
  if (type.isIndex())
    diag << " (use i64: an index's width is the target's)";
  return diag;
}

LogicalResult checkLaunchDims(StringRef kernel, const std::array<int64_t, 3> &grid,
                              const std::array<int64_t, 3> &block, int64_t smem,
                              function_ref<InFlightDiagnostic()> emitError) {
  auto fail = [&](StringRef what) {
    return emitError() << "launch of '" << kernel << "' exceeds CUDA's launch limits: " << what
                       << " (grid " << grid[0] << "x" << grid[1] << "x" << grid[2] << ", block "
                       << block[0] << "x" << block[1] << "x" << block[2] << ", " << smem
                       << " bytes of dynamic shared memory)";
  };
  if (llvm::any_of(grid, [](int64_t g) { return g < 1; }) ||
      llvm::any_of(block, [](int64_t b) { return b < 1; }))
    return fail("a grid or block dimension below 1");
  if (grid[0] > kMaxGridX || grid[1] > kMaxGridYZ || grid[2] > kMaxGridYZ)
    return fail("grid larger than 2^31-1 x 65535 x 65535");
  if (block[0] > kMaxBlockXY || block[1] > kMaxBlockXY || block[2] > kMaxBlockZ ||
      block[0] * block[1] * block[2] > kMaxBlockThreads)
    return fail("block larger than 1024 threads (x, y <= 1024, z <= 64)");
  if (smem < 0 || smem > kMaxDynamicSharedMemory)
    return fail("dynamic shared memory outside [0, 227 KiB]");
  return success();
}

std::optional<size_t> findExcessiveNesting(StringRef text, unsigned limit) {
  size_t depth = 0;
  enum { Code, String, Comment } state = Code;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    char c = text[i];
    switch (state) {
    case String:
      if (c == '\\')
        ++i; // the escaped character (a quote or a backslash) does not end the string
      else if (c == '"' || c == '\n')
        state = Code;
      continue;
    case Comment:
      if (c == '\n')
        state = Code;
      continue;
    case Code:
      break;
    }
    switch (c) {
    case '"':
      state = String;
      break;
    case '/':
      if (i + 1 < e && text[i + 1] == '/')
        state = Comment;
      break;
    case '{':
    case '(':
    case '[':
    case '<':
      if (++depth > limit)
        return i;
      break;
    case '>':
      // `->` (function types, affine maps) and `>=` (integer sets) are not brackets.
      if ((i > 0 && text[i - 1] == '-') || (i + 1 < e && text[i + 1] == '='))
        break;
      [[fallthrough]];
    case '}':
    case ')':
    case ']':
      if (depth > 0)
        --depth;
      break;
    default:
      break;
    }
  }
  return std::nullopt;
}

} // namespace evo
