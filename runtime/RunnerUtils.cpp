//===- RunnerUtils.cpp - what vector.print lowers to -------------------------===//
//
// libevo_runner_utils.so: the print* functions that upstream's convert-vector-to-llvm emits for
// vector.print (LLVM 22), with the output of upstream's libmlir_c_runner_utils: integers in
// decimal, floats as printf's %g (f16 and bf16 widened to float first, NaN as "nan" or "-nan"
// by its sign on every libc), vectors as "( 1, 2 )". All output goes to stdout through stdio.
//
//===----------------------------------------------------------------------===//

#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

#define EVO_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

void printFloating(double value) {
  if (std::isnan(value))
    std::fputs(std::signbit(value) ? "-nan" : "nan", stdout);
  else
    std::printf("%g", value);
}

float fromBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

/// IEEE binary16 → binary32 (exact: every half is a float).
float halfToFloat(uint16_t half) {
  uint32_t sign = uint32_t(half & 0x8000u) << 16;
  uint32_t exponent = (half >> 10) & 0x1fu;
  uint32_t mantissa = half & 0x3ffu;
  if (exponent == 0x1f) // inf / nan, payload kept
    return fromBits(sign | 0x7f800000u | (mantissa << 13));
  if (exponent != 0)
    return fromBits(sign | ((exponent + 127 - 15) << 23) | (mantissa << 13));
  if (mantissa == 0)
    return fromBits(sign);
  // Subnormal half: mantissa * 2^-24, normal as a float.
  float magnitude = std::ldexp(float(mantissa), -24);
  return sign ? -magnitude : magnitude;
}

/// bfloat16 is the upper half of a binary32.
float bfloat16ToFloat(uint16_t bits) { return fromBits(uint32_t(bits) << 16); }

} // namespace

EVO_EXPORT void printI64(int64_t value) { std::printf("%" PRId64, value); }
EVO_EXPORT void printU64(uint64_t value) { std::printf("%" PRIu64, value); }
EVO_EXPORT void printF32(float value) { printFloating(value); }
EVO_EXPORT void printF64(double value) { printFloating(value); }
EVO_EXPORT void printF16(uint16_t bits) { printFloating(halfToFloat(bits)); }
EVO_EXPORT void printBF16(uint16_t bits) { printFloating(bfloat16ToFloat(bits)); }
EVO_EXPORT void printString(const char *text) { std::fputs(text, stdout); }
EVO_EXPORT void printOpen() { std::fputs("( ", stdout); }
EVO_EXPORT void printClose() { std::fputs(" )", stdout); }
EVO_EXPORT void printComma() { std::fputs(", ", stdout); }
EVO_EXPORT void printNewline() { std::fputc('\n', stdout); }
