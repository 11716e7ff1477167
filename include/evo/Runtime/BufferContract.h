//===- BufferContract.h - what the verifier writes into buffers ---*- C++ -*-===//
//
// Shared, bit for bit, by the CPU side (oracle inputs, lib/Evaluation) and the GPU side
// (evo-eval-worker's fill/check kernels, CUDA C): how input element i of buffer b gets its value
// for a seed, the poison pattern written into outputs before every run, and the canary pattern of
// the red zones around every buffer. Header-only and dependency-free so nvcc can include it.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_RUNTIME_BUFFERCONTRACT_H
#define EVO_RUNTIME_BUFFERCONTRACT_H

#include <cmath>
#include <cstdint>

#ifdef __CUDACC__
#define EVO_HD __host__ __device__ __forceinline__
#else
#define EVO_HD inline
#endif

namespace evo::contract {

/// Element types the verifier can fill and check. I1 is a boolean stored as one byte holding 0
/// or 1 (torch.bool's layout; LLVM's i1 in memory).
enum class ElementKind : int { F64 = 0, F32, F16, BF16, I64, I32, I16, I8, I1, Unsupported };

EVO_HD int elementBytes(ElementKind k) {
  switch (k) {
  case ElementKind::F64:
  case ElementKind::I64:
    return 8;
  case ElementKind::F32:
  case ElementKind::I32:
    return 4;
  case ElementKind::F16:
  case ElementKind::BF16:
  case ElementKind::I16:
    return 2;
  case ElementKind::I8:
  case ElementKind::I1:
    return 1;
  default:
    return 0;
  }
}

EVO_HD bool isFloat(ElementKind k) { return static_cast<int>(k) <= 3; }

/// The spacing of a float kind's subnormals (0 for integers): the finest step a stored value
/// has. Every comparison's absolute tolerance includes one such step, since a result below the
/// normal range is exact only to it (an f16 softmax element of 7.9e-8 is stored as 5.96e-8 =
/// 2^-24 by a correct rounding: 25% off, yet right).
EVO_HD double outputQuantum(ElementKind k) {
  switch (k) {
  case ElementKind::F16:
    return 5.9604644775390625e-08; // 2^-24
  case ElementKind::BF16:
    return 9.183549615799121e-41; // 2^-133
  case ElementKind::F32:
    return 1.401298464324817e-45; // 2^-149
  case ElementKind::F64:
    return 4.9406564584124654e-324; // 2^-1074
  default:
    return 0;
  }
}

/// splitmix64's finalizer over a mix of (seed, buffer, index): independent streams per buffer,
/// random access to any element (the oracle reads only the elements it needs).
EVO_HD uint64_t hashElement(uint64_t seed, uint32_t buffer, uint64_t index) {
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + (uint64_t(buffer) + 1) * 0xBF58476D1CE4E5B9ull +
               index * 0x94D049BB133111EBull;
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 31;
  return x;
}

/// A uniform double in [0, 1) with 53 random bits (exact).
EVO_HD double unitInterval(uint64_t h) { return double(h >> 11) * (1.0 / 9007199254740992.0); }

/// A second, independent stream of hashes for the same element (stream 0 is hashElement).
EVO_HD uint64_t hashStream(uint64_t seed, uint32_t buffer, uint64_t index, uint32_t stream) {
  return hashElement(seed + uint64_t(stream) * 0xD1B54A32D192ED03ull, buffer, index);
}

/// How an input buffer is filled for one trial (docs/verification.md, "Inputs"). Every
/// distribution is clamped to [lo, hi]; the verifier chooses the parameters (from `evo.range`
/// and the op's domain), the worker and the CPU generator only evaluate them.
enum class Distribution : int32_t {
  /// lo + (hi - lo) * u, u uniform in [0, 1) with 53 bits.
  Uniform = 0,
  /// center + scale * z, z = (u1 + u2 + u3 + u4 - 2) * sqrt(3) (Irwin-Hall: mean 0, variance 1,
  /// |z| <= 3.47), u_k uniform 32-bit fractions (their sum is exact).
  Normal = 1,
  /// Magnitudes spread over binades: (1 + u) * 2^e, e uniform in [emin, emax]; the sign is random
  /// when lo < 0 < hi, else that of the range. Integers: floor of that magnitude.
  Wide = 2,
  /// With probability 1/4 one of `special` (exact values such as 0, +-1, the range's ends; used
  /// as given, not clamped: the verifier lists only values the input may take), otherwise
  /// Uniform.
  Special = 3,
};

inline constexpr int kMaxSpecialValues = 8;

/// The parameters of one input buffer's fill. Passed by value to the GPU fill kernel, so the
/// layout is fixed: 8-byte fields first, no padding (static_assert below).
struct FillParams {
  uint64_t seed;
  uint32_t buffer;
  int32_t kind;       // ElementKind
  int32_t dist;       // Distribution
  int32_t numSpecial; // entries of `special` in use
  int32_t emin, emax; // Wide
  double lo, hi;      // the clamp range (Uniform: [lo, hi))
  double center, scale; // Normal
  double special[kMaxSpecialValues];
};
static_assert(sizeof(FillParams) == 64 + 8 * kMaxSpecialValues, "FillParams must not be padded");

/// Uniform parameters over [lo, hi] (the classic fill).
EVO_HD FillParams uniformFill(uint64_t seed, uint32_t buffer, ElementKind kind, double lo,
                              double hi) {
  FillParams p{};
  p.seed = seed;
  p.buffer = buffer;
  p.kind = static_cast<int32_t>(kind);
  p.dist = static_cast<int32_t>(Distribution::Uniform);
  p.lo = lo;
  p.hi = hi;
  p.center = 0;
  p.scale = 1;
  p.emin = 0;
  p.emax = 0;
  return p;
}

/// Separately rounded double operations: the GPU never contracts them into an FMA (__dadd_rn,
/// __dmul_rn); the CPU side (lib/Evaluation/InputGenerator.cpp) is compiled with
/// -ffp-contract=off for the same reason.
EVO_HD double addRn(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
EVO_HD double mulRn(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}

/// Exact operations (the same result on both sides).
EVO_HD double floorX(double x) {
#ifdef __CUDA_ARCH__
  return floor(x);
#else
  return std::floor(x);
#endif
}
EVO_HD double ceilX(double x) {
#ifdef __CUDA_ARCH__
  return ceil(x);
#else
  return std::ceil(x);
#endif
}
EVO_HD double ldexpX(double x, int e) {
#ifdef __CUDA_ARCH__
  return ldexp(x, e);
#else
  return std::ldexp(x, e);
#endif
}

/// The value of element `index` before it is rounded to the element type: for float kinds a
/// double (then rounded to f32, and from f32 to f16/bf16, round to nearest even; f64 keeps it),
/// for integer kinds an integer-valued double in [ceil(lo), floor(hi)].
/// The CPU and GPU implementations must agree exactly: every verified kernel depends on it
/// (test/Evaluation/verify.mlir covers each element kind and distribution on the GPU).
EVO_HD double fillValue(const FillParams &p, uint64_t index) {
  const ElementKind k = static_cast<ElementKind>(p.kind);
  const Distribution dist = static_cast<Distribution>(p.dist);
  const uint64_t h0 = hashElement(p.seed, p.buffer, index);
  const double u = unitInterval(h0);
  double v;
  if (!isFloat(k)) {
    const double ilo = ceilX(p.lo), ihi = floorX(p.hi);
    if (dist == Distribution::Normal) {
      const uint64_t h1 = hashStream(p.seed, p.buffer, index, 1);
      const uint64_t sum = (h0 >> 32) + (h0 & 0xFFFFFFFFull) + (h1 >> 32) + (h1 & 0xFFFFFFFFull);
      const double z = mulRn(addRn(double(sum) * (1.0 / 4294967296.0), -2.0), 1.7320508075688772);
      v = floorX(addRn(addRn(p.center, mulRn(p.scale, z)), 0.5));
    } else if (dist == Distribution::Wide) {
      // floor((1 + u) * 2^e) with e uniform in [emin, emax]: the integer magnitudes of a binade.
      const uint64_t h1 = hashStream(p.seed, p.buffer, index, 1);
      int span = p.emax - p.emin + 1;
      int e = p.emin + static_cast<int>(floorX(mulRn(unitInterval(h1), double(span > 0 ? span : 1))));
      if (e > p.emax)
        e = p.emax;
      const double mag = floorX(ldexpX(addRn(1.0, u), e < 0 ? 0 : e));
      v = (p.hi <= 0 || (p.lo < 0 && (h1 & 1))) ? -mag : mag;
    } else if (dist == Distribution::Special && p.numSpecial > 0 &&
               unitInterval(hashStream(p.seed, p.buffer, index, 1)) < 0.25) {
      int j = static_cast<int>(floorX(mulRn(u, double(p.numSpecial))));
      return p.special[j < p.numSpecial ? j : p.numSpecial - 1]; // as given, never clamped
    } else {
      v = addRn(ilo, floorX(mulRn(u, addRn(addRn(ihi, -ilo), 1.0))));
    }
    if (v < ilo)
      v = ilo;
    if (v > ihi)
      v = ihi;
    return v;
  }
  switch (dist) {
  case Distribution::Normal: {
    const uint64_t h1 = hashStream(p.seed, p.buffer, index, 1);
    const uint64_t sum = (h0 >> 32) + (h0 & 0xFFFFFFFFull) + (h1 >> 32) + (h1 & 0xFFFFFFFFull);
    const double z = mulRn(addRn(double(sum) * (1.0 / 4294967296.0), -2.0), 1.7320508075688772);
    v = addRn(p.center, mulRn(p.scale, z));
    break;
  }
  case Distribution::Wide: {
    const uint64_t h1 = hashStream(p.seed, p.buffer, index, 1);
    int span = p.emax - p.emin + 1;
    int e = p.emin + static_cast<int>(floorX(mulRn(unitInterval(h1), double(span > 0 ? span : 1))));
    if (e > p.emax)
      e = p.emax;
    double mag = ldexpX(addRn(1.0, u), e);
    bool negative = p.hi <= 0 || (p.lo < 0 && (h1 & 1));
    v = negative ? -mag : mag;
    break;
  }
  case Distribution::Special:
    if (p.numSpecial > 0 && unitInterval(hashStream(p.seed, p.buffer, index, 1)) < 0.25) {
      int j = static_cast<int>(floorX(mulRn(u, double(p.numSpecial))));
      return p.special[j < p.numSpecial ? j : p.numSpecial - 1]; // as given, never clamped
    }
    [[fallthrough]];
  default:
    v = addRn(p.lo, mulRn(addRn(p.hi, -p.lo), u));
    break;
  }
  if (v < p.lo)
    v = p.lo;
  if (v > p.hi)
    v = p.hi;
  return v;
}

/// Poison written into every output element before each run: signalling NaNs with a recognizable
/// payload, which arithmetic never produces (it yields quiet NaNs), so an element still holding
/// it was never written. Integers get a recognizable constant.
inline constexpr uint64_t kPoisonF64 = 0x7FF4BADBADBADBADull;
inline constexpr uint32_t kPoisonF32 = 0x7FBADBADu;
inline constexpr uint16_t kPoisonF16 = 0x7D5Bu;
inline constexpr uint16_t kPoisonBF16 = 0x7FA5u;
inline constexpr uint64_t kPoisonI64 = 0x5A5A5A5A5A5A5A5Aull;
inline constexpr uint32_t kPoisonI32 = 0x5A5A5A5Au;
inline constexpr uint16_t kPoisonI16 = 0x5A5Au;
inline constexpr uint8_t kPoisonI8 = 0x5Au;

/// Every buffer is surrounded by red zones of this many bytes filled with kCanaryByte; any
/// change after a run is an out-of-bounds write.
inline constexpr uint64_t kRedZoneBytes = 64 * 1024;
inline constexpr uint8_t kCanaryByte = 0xA5u;

} // namespace evo::contract

#endif
