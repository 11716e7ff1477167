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

#include <cstdint>

#ifdef __CUDACC__
#define EVO_HD __host__ __device__ __forceinline__
#else
#define EVO_HD inline
#endif

namespace evo::contract {

/// Element types the verifier can fill and check.
enum class ElementKind : int { F64 = 0, F32, F16, BF16, I64, I32, I16, I8, Unsupported };

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
    return 1;
  default:
    return 0;
  }
}

EVO_HD bool isFloat(ElementKind k) { return static_cast<int>(k) <= 3; }

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

/// Float inputs: lo + span * u in double, as two separately rounded operations (no FMA), then
/// rounded to f32 (and from f32 to f16/bf16, round to nearest even). Integer inputs:
/// lo + floor(u * (hi - lo + 1)), clamped to hi.
/// The CPU and GPU implementations must agree exactly: every verified kernel depends on it
/// (test/Evaluation/verify.mlir covers each element kind on the GPU).

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
