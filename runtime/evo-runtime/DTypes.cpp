//===- DTypes.cpp - element types, scalar values and buffer roles ---------===//
//
// The names and sizes of the element types a manifest declares, the bits of a scalar
// argument's value in its type (a runtime passes them in the launch's parameters), and the
// roles' names.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace evo::runtime {

const char *dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F16: return "f16";
  case DType::BF16: return "bf16";
  case DType::F32: return "f32";
  case DType::F64: return "f64";
  case DType::I8: return "i8";
  case DType::I16: return "i16";
  case DType::I32: return "i32";
  case DType::I64: return "i64";
  case DType::U8: return "ui8";
  case DType::Bool: return "i1";
  }
  return "?";
}

size_t dtypeSize(DType dtype) {
  switch (dtype) {
  case DType::I8:
  case DType::U8:
  case DType::Bool: return 1;
  case DType::F16:
  case DType::BF16:
  case DType::I16: return 2;
  case DType::F32:
  case DType::I32: return 4;
  case DType::F64:
  case DType::I64: return 8;
  }
  return 1;
}

namespace {
/// `v` rounded to the binary float with `expBits` exponent and `manBits` mantissa bits (ties to
/// even, subnormals kept, overflow to infinity, NaN quiet): f16 (5, 10) and bf16 (8, 7).
uint64_t roundToFloatBits(double v, int expBits, int manBits) {
  const uint64_t sign = std::signbit(v) ? 1 : 0, expMax = (uint64_t(1) << expBits) - 1;
  const int bias = (1 << (expBits - 1)) - 1, minExp = 1 - bias;
  uint64_t magnitude = 0;
  double a = std::fabs(v);
  if (std::isnan(v)) {
    magnitude = (expMax << manBits) | (uint64_t(1) << (manBits - 1));
  } else if (std::isinf(a)) {
    magnitude = expMax << manBits;
  } else if (a != 0) {
    int e = 0;
    (void)std::frexp(a, &e);
    int exp = std::max(e - 1, minExp); // a in [2^exp, 2^(exp+1)), or subnormal
    uint64_t q = static_cast<uint64_t>(std::nearbyint(std::ldexp(a, manBits - exp)));
    if (q >> (manBits + 1)) { // rounded up to the next binade
      q >>= 1;
      ++exp;
    }
    if (!(q >> manBits)) // subnormal
      magnitude = q;
    else if (exp + bias >= static_cast<int>(expMax))
      magnitude = expMax << manBits;
    else
      magnitude = (uint64_t(exp + bias) << manBits) | (q & ((uint64_t(1) << manBits) - 1));
  }
  return (sign << (expBits + manBits)) | magnitude;
}

/// `v` truncated toward zero and saturated to [lo, hi] (NaN: 0).
int64_t saturate(double v, double lo, double hi) {
  if (std::isnan(v))
    return 0;
  return v <= lo ? static_cast<int64_t>(lo) : v >= hi ? static_cast<int64_t>(hi) : static_cast<int64_t>(v);
}
} // namespace

TensorRef TensorRef::scalar(DType dtype, double value) {
  uint64_t bits = 0;
  switch (dtype) {
  case DType::F16: bits = roundToFloatBits(value, 5, 10); break;
  case DType::BF16: bits = roundToFloatBits(value, 8, 7); break;
  case DType::F32: {
    float f = static_cast<float>(value);
    uint32_t u;
    std::memcpy(&u, &f, 4);
    bits = u;
    break;
  }
  case DType::F64: std::memcpy(&bits, &value, 8); break;
  case DType::Bool: bits = value != 0; break;
  case DType::U8: bits = static_cast<uint64_t>(saturate(value, 0, 255)); break;
  case DType::I8: bits = static_cast<uint8_t>(saturate(value, -128, 127)); break;
  case DType::I16: bits = static_cast<uint16_t>(saturate(value, -32768, 32767)); break;
  case DType::I32: bits = static_cast<uint32_t>(saturate(value, -2147483648.0, 2147483647.0)); break;
  case DType::I64:
    // 2^63 is not an int64: the largest double below it is.
    bits = static_cast<uint64_t>(saturate(value, -9223372036854775808.0, 9223372036854774784.0));
    break;
  }
  return scalarBits(dtype, bits);
}

TensorRef TensorRef::scalarInt(DType dtype, int64_t value) {
  switch (dtype) {
  case DType::F16:
  case DType::BF16:
  case DType::F32:
  case DType::F64: return scalar(dtype, static_cast<double>(value));
  case DType::Bool: return scalarBits(dtype, value != 0);
  default: break;
  }
  size_t bytes = dtypeSize(dtype);
  uint64_t mask = bytes == 8 ? ~uint64_t(0) : (uint64_t(1) << (8 * bytes)) - 1;
  return scalarBits(dtype, static_cast<uint64_t>(value) & mask);
}

const char *roleName(Role role) {
  switch (role) {
  case Role::Input: return "input";
  case Role::Output: return "output";
  case Role::Scratch: return "scratch";
  case Role::TensorMap: return "tensor_map";
  case Role::Constant: return "constant";
  }
  return "?";
}

} // namespace evo::runtime
