// Device helpers of evo-eval-worker: filling inputs per the buffer contract, poisoning outputs,
// checking red zones, checksums, comparison with a reference, sampling, and the ceiling
// microbenchmarks. Written in CUDA C and compiled by nvcc (not by evo-opt's own lowering), so the
// harness shares no code with what it verifies. Built to PTX and embedded in the worker.

#include "evo/Runtime/BufferContract.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

using namespace evo::contract;

namespace {

__device__ double loadAsDouble(const void *p, uint64_t i, int kind) {
  switch (static_cast<ElementKind>(kind)) {
  case ElementKind::F64: return static_cast<const double *>(p)[i];
  case ElementKind::F32: return static_cast<const float *>(p)[i];
  case ElementKind::F16: return __half2float(static_cast<const __half *>(p)[i]);
  case ElementKind::BF16: return __bfloat162float(static_cast<const __nv_bfloat16 *>(p)[i]);
  case ElementKind::I64: return static_cast<double>(static_cast<const int64_t *>(p)[i]);
  case ElementKind::I32: return static_cast<const int32_t *>(p)[i];
  case ElementKind::I16: return static_cast<const int16_t *>(p)[i];
  case ElementKind::I8: return static_cast<const int8_t *>(p)[i];
  case ElementKind::I1: return static_cast<const uint8_t *>(p)[i]; // 0 or 1; anything else is wrong
  default: return 0.0;
  }
}

__device__ uint64_t loadBits(const void *p, uint64_t i, int kind) {
  switch (elementBytes(static_cast<ElementKind>(kind))) {
  case 8: return static_cast<const uint64_t *>(p)[i];
  case 4: return static_cast<const uint32_t *>(p)[i];
  case 2: return static_cast<const uint16_t *>(p)[i];
  default: return static_cast<const uint8_t *>(p)[i];
  }
}

__device__ uint64_t poisonBits(int kind) {
  switch (static_cast<ElementKind>(kind)) {
  case ElementKind::F64: return kPoisonF64;
  case ElementKind::F32: return kPoisonF32;
  case ElementKind::F16: return kPoisonF16;
  case ElementKind::BF16: return kPoisonBF16;
  case ElementKind::I64: return kPoisonI64;
  case ElementKind::I32: return kPoisonI32;
  case ElementKind::I16: return kPoisonI16;
  default: return kPoisonI8;
  }
}

__device__ uint64_t globalThread() { return uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ uint64_t globalStride() { return uint64_t(gridDim.x) * blockDim.x; }

// Non-negative doubles order like their bit patterns: atomicMax on the bits.
__device__ void atomicMaxNonNegative(unsigned long long *slot, double v) {
  atomicMax(slot, static_cast<unsigned long long>(__double_as_longlong(v)));
}

/// Element i of `out` against `ref`: the rule of evo_compare and evo_check_launch.
struct ElementCheck {
  bool bad = false;    // poison, |o - r| > atol + rtol*|r| for finite r, a class mismatch otherwise
  bool poison = false; // `out` holds the poison bits (never written)
  double err = -1;     // |o - r| when both are finite, else -1
  double refSq = 0;    // r^2 when r is finite, else 0
};

__device__ ElementCheck checkElement(const void *out, const void *ref, uint64_t i, int kind,
                                     uint64_t poison, double rtol, double atol) {
  ElementCheck c;
  if (loadBits(out, i, kind) == poison) {
    c.bad = c.poison = true;
    return c;
  }
  double o = loadAsDouble(out, i, kind), r = loadAsDouble(ref, i, kind);
  if (!isfinite(r)) {
    c.bad = !(isnan(r) ? isnan(o) : o == r);
    return c;
  }
  double d = fabs(o - r);
  c.bad = !isfinite(o) || d > atol + rtol * fabs(r);
  if (isfinite(o))
    c.err = d;
  c.refSq = r * r;
  return c;
}

} // namespace

extern "C" {

/// Inputs per the buffer contract (evo/Runtime/BufferContract.h, fillValue): the value in double,
/// then rounded to f32 and from f32 to the narrow float type; integer kinds get the integer.
__global__ void evo_fill(void *dst, uint64_t n, FillParams p) {
  ElementKind k = static_cast<ElementKind>(p.kind);
  for (uint64_t i = globalThread(); i < n; i += globalStride()) {
    double v = fillValue(p, i);
    if (isFloat(k)) {
      float f = __double2float_rn(v);
      switch (k) {
      case ElementKind::F64: static_cast<double *>(dst)[i] = v; break;
      case ElementKind::F32: static_cast<float *>(dst)[i] = f; break;
      case ElementKind::F16: static_cast<__half *>(dst)[i] = __float2half_rn(f); break;
      default: static_cast<__nv_bfloat16 *>(dst)[i] = __float2bfloat16_rn(f); break;
      }
    } else {
      int64_t x = static_cast<int64_t>(v);
      switch (k) {
      case ElementKind::I64: static_cast<int64_t *>(dst)[i] = x; break;
      case ElementKind::I32: static_cast<int32_t *>(dst)[i] = static_cast<int32_t>(x); break;
      case ElementKind::I16: static_cast<int16_t *>(dst)[i] = static_cast<int16_t>(x); break;
      default: static_cast<int8_t *>(dst)[i] = static_cast<int8_t>(x); break;
      }
    }
  }
}

/// Writes the kind's poison pattern into every element.
__global__ void evo_poison(void *dst, uint64_t n, int kind) {
  uint64_t bits = poisonBits(kind);
  int bytes = elementBytes(static_cast<ElementKind>(kind));
  for (uint64_t i = globalThread(); i < n; i += globalStride()) {
    switch (bytes) {
    case 8: static_cast<uint64_t *>(dst)[i] = bits; break;
    case 4: static_cast<uint32_t *>(dst)[i] = static_cast<uint32_t>(bits); break;
    case 2: static_cast<uint16_t *>(dst)[i] = static_cast<uint16_t>(bits); break;
    default: static_cast<uint8_t *>(dst)[i] = static_cast<uint8_t>(bits); break;
    }
  }
}

/// Counts bytes that differ from `byte` (red-zone check).
__global__ void evo_count_not_equal(const uint8_t *p, uint64_t n, uint8_t byte,
                                    unsigned long long *count) {
  unsigned long long local = 0;
  for (uint64_t i = globalThread(); i < n; i += globalStride())
    local += p[i] != byte;
  if (local)
    atomicAdd(count, local);
}

/// A position-dependent checksum of `nbytes` bytes: sum of word_i * (2i + 1) mod 2^64 over 8-byte
/// words, the tail bytes folded in by thread 0.
__global__ void evo_checksum(const uint8_t *p, uint64_t nbytes, unsigned long long *sum) {
  const uint64_t *words = reinterpret_cast<const uint64_t *>(p);
  uint64_t nwords = nbytes / 8;
  unsigned long long local = 0;
  for (uint64_t i = globalThread(); i < nwords; i += globalStride())
    local += words[i] * (2 * i + 1);
  if (globalThread() == 0)
    for (uint64_t b = nwords * 8; b < nbytes; ++b)
      local += uint64_t(p[b]) * (2 * (nwords + b) + 1);
  atomicAdd(sum, local);
}

/// counts[0] poison (never written), counts[1] NaN, counts[2] +-Inf.
__global__ void evo_scan(const void *out, uint64_t n, int kind, unsigned long long *counts) {
  uint64_t poison = poisonBits(kind);
  unsigned long long c[3] = {0, 0, 0};
  for (uint64_t i = globalThread(); i < n; i += globalStride()) {
    if (loadBits(out, i, kind) == poison) {
      ++c[0];
      continue;
    }
    double v = loadAsDouble(out, i, kind);
    c[1] += isnan(v);
    c[2] += isinf(v);
  }
  for (int j = 0; j < 3; ++j)
    if (c[j])
      atomicAdd(&counts[j], c[j]);
}

/// Sum of squares of the finite elements (for the reference's RMS, which scales atol).
__global__ void evo_sum_squares(const void *p, uint64_t n, int kind, double *sum) {
  double local = 0;
  for (uint64_t i = globalThread(); i < n; i += globalStride()) {
    double v = loadAsDouble(p, i, kind);
    if (isfinite(v))
      local += v * v;
  }
  atomicAdd(sum, local);
}

/// Element-wise comparison of `out` with `ref` (same kind):
///   stats[0] failing elements   (|o - r| > atol + rtol*|r| for finite r; class mismatch otherwise)
///   stats[1] poison elements in `out`
///   stats[2] first failing index (initialized to ~0 by the host)
///   stats[3] max |o - r| over finite pairs (double bits)
///   stats[4] sum (o - r)^2 over finite pairs (double)
///   stats[5] sum r^2 over finite r (double)
///   stats[6] failing elements listed so far; stats[7 .. 7+cap) their indices (in no order; the
///            first `cap` to fail): the elements the oracle may arbitrate
__global__ void evo_compare(const void *out, const void *ref, uint64_t n, int kind, double rtol,
                            double atol, unsigned long long *stats, unsigned long long cap) {
  uint64_t poison = poisonBits(kind);
  unsigned long long fails = 0, poisoned = 0;
  double maxErr = 0, sq = 0, refSq = 0;
  for (uint64_t i = globalThread(); i < n; i += globalStride()) {
    ElementCheck c = checkElement(out, ref, i, kind, poison, rtol, atol);
    poisoned += c.poison;
    if (c.err >= 0) {
      maxErr = fmax(maxErr, c.err);
      sq += c.err * c.err;
    }
    refSq += c.refSq;
    if (c.bad) {
      ++fails;
      atomicMin(&stats[2], static_cast<unsigned long long>(i));
      unsigned long long slot = atomicAdd(&stats[6], 1ull);
      if (slot < cap)
        stats[7 + slot] = i;
    }
  }
  if (fails)
    atomicAdd(&stats[0], fails);
  if (poisoned)
    atomicAdd(&stats[1], poisoned);
  atomicMaxNonNegative(&stats[3], maxErr);
  atomicAdd(reinterpret_cast<double *>(&stats[4]), sq);
  atomicAdd(reinterpret_cast<double *>(&stats[5]), refSq);
}

/// The check after a timed launch: every element of `out` against `ref` with the same rule as
/// evo_compare, no statistics (it runs after a random subset of the timed launches, outside the
/// events). slot[0] failing elements, slot[1] poison elements, slot[2] first failing index
/// (initialized to ~0 by the host); evo_capture then fills slot[3], slot[4].
__global__ void evo_check_launch(const void *out, const void *ref, uint64_t n, int kind,
                                 double rtol, double atol, unsigned long long *slot) {
  uint64_t poison = poisonBits(kind);
  unsigned long long fails = 0, poisoned = 0, first = ~0ull;
  for (uint64_t i = globalThread(); i < n; i += globalStride()) {
    ElementCheck c = checkElement(out, ref, i, kind, poison, rtol, atol);
    poisoned += c.poison;
    if (c.bad) {
      ++fails;
      if (i < first)
        first = i;
    }
  }
  if (fails) {
    atomicAdd(&slot[0], fails);
    atomicMin(&slot[2], first);
  }
  if (poisoned)
    atomicAdd(&slot[1], poisoned);
}

/// One thread, after evo_check_launch: the raw bits of the first failing element and of the
/// reference there (before the next launch overwrites them).
__global__ void evo_capture(const void *out, const void *ref, int kind, unsigned long long *slot) {
  if (globalThread() == 0 && slot[0]) {
    uint64_t i = slot[2];
    slot[3] = loadBits(out, i, kind);
    slot[4] = loadBits(ref, i, kind);
  }
}

/// Raw bits of the elements at `indices` (decoded on the host, which can tell poison apart).
__global__ void evo_gather(const void *p, int kind, const uint64_t *indices, uint64_t m,
                           uint64_t *bits) {
  for (uint64_t j = globalThread(); j < m; j += globalStride())
    bits[j] = loadBits(p, indices[j], kind);
}

// --- ceilings ---------------------------------------------------------------------------

/// Device-memory copy bandwidth: 16-byte loads and stores, `unroll` independent ones in flight
/// per thread, grid-stride. The worker tries several shapes and keeps the best.
__global__ void evo_copy(const float4 *in, float4 *out, uint64_t n, int unroll) {
  uint64_t stride = globalStride();
  uint64_t i = globalThread();
  if (unroll == 4) {
    for (; i + 3 * stride < n; i += 4 * stride) {
      float4 a = in[i], b = in[i + stride], c = in[i + 2 * stride], d = in[i + 3 * stride];
      out[i] = a;
      out[i + stride] = b;
      out[i + 2 * stride] = c;
      out[i + 3 * stride] = d;
    }
  }
  for (; i < n; i += stride)
    out[i] = in[i];
}

/// Device-memory read bandwidth: 16-byte loads only, folded into a sum that is stored only in
/// the (practically impossible) case that it equals a magic number, so no load is dead.
__global__ void evo_read(const float4 *in, uint64_t n, int unroll, float *sink) {
  uint64_t stride = globalStride();
  uint64_t i = globalThread();
  float acc = 0;
  if (unroll == 4) {
    for (; i + 3 * stride < n; i += 4 * stride) {
      float4 a = in[i], b = in[i + stride], c = in[i + 2 * stride], d = in[i + 3 * stride];
      acc += ((a.x + a.y) + (a.z + a.w)) + ((b.x + b.y) + (b.z + b.w)) +
             ((c.x + c.y) + (c.z + c.w)) + ((d.x + d.y) + (d.z + d.w));
    }
  }
  for (; i < n; i += stride) {
    float4 a = in[i];
    acc += (a.x + a.y) + (a.z + a.w);
  }
  if (acc == 12345.678f)
    sink[globalThread() & 1023] = acc;
}

/// Device-memory write bandwidth: 16-byte stores only.
__global__ void evo_write(float4 *out, uint64_t n, int unroll, float value) {
  uint64_t stride = globalStride();
  uint64_t i = globalThread();
  float4 v = make_float4(value, value, value, value);
  if (unroll == 4) {
    for (; i + 3 * stride < n; i += 4 * stride) {
      out[i] = v;
      out[i + stride] = v;
      out[i + 2 * stride] = v;
      out[i + 3 * stride] = v;
    }
  }
  for (; i < n; i += stride)
    out[i] = v;
}

/// FP32 FMA rate: 8 independent dependency chains per thread.
__global__ void evo_fma_peak(float *out, int iterations, float seed) {
  float a[8];
  for (int j = 0; j < 8; ++j)
    a[j] = seed + j + threadIdx.x;
  const float m = 0.999999f, c = 1e-7f;
  for (int it = 0; it < iterations; ++it) {
#pragma unroll
    for (int j = 0; j < 8; ++j)
      a[j] = fmaf(a[j], m, c);
  }
  float s = 0;
  for (int j = 0; j < 8; ++j)
    s += a[j];
  if (s == 12345.678f) // practically never: keeps the chains alive
    out[globalThread()] = s;
}

/// f16 tensor-core rate through mma.sync m16n8k16 (f32 accumulate), 4 independent accumulators
/// per warp. (wgmma can go faster on Hopper; evo does not emit it.)
__global__ void evo_mma_peak(float *out, int iterations) {
  unsigned a[4] = {0x3c003c00u ^ threadIdx.x, 0x3c003c00u, 0x3c003c00u, 0x3c003c00u};
  unsigned b[2] = {0x3c003c00u, 0x3c003c00u ^ threadIdx.x};
  float acc[4][4] = {};
  for (int it = 0; it < iterations; ++it) {
#pragma unroll
    for (int j = 0; j < 4; ++j)
      asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                   "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                   : "+f"(acc[j][0]), "+f"(acc[j][1]), "+f"(acc[j][2]), "+f"(acc[j][3])
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
  float s = 0;
  for (int j = 0; j < 4; ++j)
    s += acc[j][0] + acc[j][1] + acc[j][2] + acc[j][3];
  if (s == 12345.678f)
    out[globalThread()] = s;
}

} // extern "C"
