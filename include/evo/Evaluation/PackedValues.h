//===- PackedValues.h - expected values packed for the worker request -*- C++ -*-===//
//
// A trial's expected values travel to evo-eval-worker in its request. As JSON numbers, a full
// check of a 1M-element output was ~12 MB of text per trial and ~3 GB of llvm::json values in
// evo-opt (20 s of CPU before the first launch); packed, they are one base64 string of
// little-endian IEEE-754 doubles (NaN and infinities included, bit-exact). Shared by the
// Verifier (evo-opt) and the worker: header-only, plain C++.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_EVALUATION_PACKEDVALUES_H
#define EVO_EVALUATION_PACKEDVALUES_H

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace evo::packed {

inline constexpr char kAlphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Base64 (RFC 4648, with padding) of the values' little-endian bytes.
inline std::string packF64(const std::vector<double> &values) {
  std::vector<uint8_t> bytes(values.size() * 8);
  for (size_t i = 0; i < values.size(); ++i) {
    uint64_t bits;
    std::memcpy(&bits, &values[i], 8);
    for (int b = 0; b < 8; ++b)
      bytes[i * 8 + b] = static_cast<uint8_t>(bits >> (8 * b));
  }
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t n = uint32_t(bytes[i]) << 16;
    if (i + 1 < bytes.size())
      n |= uint32_t(bytes[i + 1]) << 8;
    if (i + 2 < bytes.size())
      n |= bytes[i + 2];
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += i + 1 < bytes.size() ? kAlphabet[(n >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? kAlphabet[n & 63] : '=';
  }
  return out;
}

/// The values of packF64's output; nullopt when `text` is not canonical base64 of a whole
/// number of doubles.
inline std::optional<std::vector<double>> unpackF64(std::string_view text) {
  if (text.size() % 4)
    return std::nullopt;
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z')
      return c - 'A';
    if (c >= 'a' && c <= 'z')
      return c - 'a' + 26;
    if (c >= '0' && c <= '9')
      return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : -1;
  };
  std::vector<uint8_t> bytes;
  bytes.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    bool last = i + 4 == text.size();
    int pad = last ? (text[i + 3] == '=') + (text[i + 2] == '=') : 0;
    if (pad == 1 && text[i + 2] == '=')
      return std::nullopt; // "x=y=" is not padding
    uint32_t n = 0;
    for (int k = 0; k < 4; ++k) {
      int v = k >= 4 - pad ? 0 : value(text[i + k]);
      if (v < 0)
        return std::nullopt;
      n = n << 6 | uint32_t(v);
    }
    bytes.push_back(uint8_t(n >> 16));
    if (pad < 2)
      bytes.push_back(uint8_t(n >> 8));
    if (pad < 1)
      bytes.push_back(uint8_t(n));
  }
  if (bytes.size() % 8)
    return std::nullopt;
  std::vector<double> values(bytes.size() / 8);
  for (size_t i = 0; i < values.size(); ++i) {
    uint64_t bits = 0;
    for (int b = 0; b < 8; ++b)
      bits |= uint64_t(bytes[i * 8 + b]) << (8 * b);
    std::memcpy(&values[i], &bits, 8);
  }
  return values;
}

} // namespace evo::packed

#endif
