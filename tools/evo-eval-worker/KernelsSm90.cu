// Hopper-only helper kernels of evo-eval-worker: the dense wgmma (warpgroup MMA) tensor-core
// ceiling. Compiled separately to PTX for compute_90a (wgmma exists only on the `a` target, and
// such PTX loads only on a compute capability 9.0 device) and embedded beside Kernels.cu's PTX;
// the worker loads it only on 9.0 and reports the ceiling as unavailable when it does not load.
//
// Each warpgroup (4 warps, 128 threads) issues back-to-back
// wgmma.mma_async.sync.aligned.m64n256k16.f32.{f16,bf16} on shared-memory descriptors into one
// 64x256 f32 accumulator (128 registers per thread), kWgmmaPerGroup of them per commit group.
// The operands are zero-filled shared memory (the rate does not depend on the values), laid out
// without swizzle; the descriptors stay inside the allocation whichever of LBO/SBO the hardware
// applies to which dimension. The sum of the accumulator is stored when it equals a magic value
// (never), so nothing is dead. FLOPs per wgmma per warpgroup: 2 * 64 * 256 * 16.

#include <stdint.h>

namespace {

/// wgmma instructions per commit group (and per loop iteration).
constexpr int kWgmmaPerGroup = 8;
/// A: 64x16 halves (2 KiB used), B: 256x16 halves (8 KiB used); each region twice the worst
/// span a descriptor below can reach.
constexpr int kABytes = 4096, kBBytes = 16384;

/// A shared-memory matrix descriptor (PTX ISA, "Matrix Descriptor Format"): start address,
/// leading- and stride-dimension byte offsets (all >> 4), no swizzle, base offset 0.
__device__ uint64_t smemDescriptor(const void *p, uint32_t leadingBytes, uint32_t strideBytes) {
  uint32_t addr = static_cast<uint32_t>(__cvta_generic_to_shared(p));
  return uint64_t((addr & 0x3FFFF) >> 4) | (uint64_t((leadingBytes >> 4) & 0x3FFF) << 16) |
         (uint64_t((strideBytes >> 4) & 0x3FFF) << 32);
}

} // namespace

// The 128 accumulator registers of one thread, declared and named in PTX: 16 groups of 8.
#define EVO_R8(g) #g "0," #g "1," #g "2," #g "3," #g "4," #g "5," #g "6," #g "7"
#define EVO_ACC                                                                                 \
  "{" EVO_R8(ra) "," EVO_R8(rb) "," EVO_R8(rc) "," EVO_R8(rd) "," EVO_R8(re) "," EVO_R8(rf) "," \
      EVO_R8(rg) "," EVO_R8(rh) "," EVO_R8(ri) "," EVO_R8(rj) "," EVO_R8(rk) "," EVO_R8(rl) ","  \
      EVO_R8(rm) "," EVO_R8(rn) "," EVO_R8(ro) "," EVO_R8(rp) "}"
#define EVO_DECL8(g) " " #g "<8>"
#define EVO_ZERO8(g)                                                                            \
  "mov.f32 " #g "0, 0f00000000; mov.f32 " #g "1, 0f00000000; mov.f32 " #g "2, 0f00000000; "     \
  "mov.f32 " #g "3, 0f00000000; mov.f32 " #g "4, 0f00000000; mov.f32 " #g "5, 0f00000000; "     \
  "mov.f32 " #g "6, 0f00000000; mov.f32 " #g "7, 0f00000000;\n"
#define EVO_SUM8(g)                                                                             \
  "add.f32 s, s, " #g "0; add.f32 s, s, " #g "1; add.f32 s, s, " #g "2; add.f32 s, s, " #g "3; " \
  "add.f32 s, s, " #g "4; add.f32 s, s, " #g "5; add.f32 s, s, " #g "6; add.f32 s, s, " #g "7;\n"
#define EVO_ALL16(M)                                                                            \
  M(ra) M(rb) M(rc) M(rd) M(re) M(rf) M(rg) M(rh) M(ri) M(rj) M(rk) M(rl) M(rm) M(rn) M(ro) M(rp)
// scale-d = true (accumulate), scale-a = scale-b = 1, A and B K-major (no transpose).
#define EVO_WGMMA(type)                                                                         \
  "wgmma.mma_async.sync.aligned.m64n256k16.f32." type "." type " " EVO_ACC                      \
  ", %1, %2, pacc, 1, 1, 0, 0;\n"
#define EVO_WGMMA8(type)                                                                        \
  EVO_WGMMA(type) EVO_WGMMA(type) EVO_WGMMA(type) EVO_WGMMA(type) EVO_WGMMA(type)               \
      EVO_WGMMA(type) EVO_WGMMA(type) EVO_WGMMA(type)
static_assert(kWgmmaPerGroup == 8, "EVO_WGMMA8 issues kWgmmaPerGroup wgmma per group");

// One PTX block per kernel: the loop keeps the accumulator in the block's own registers, so the
// compiler never sees (or moves) them between the asynchronous instructions.
#define EVO_WGMMA_LOOP(type)                                                                    \
  "{\n"                                                                                         \
  ".reg .f32" EVO_DECL8(ra) "," EVO_DECL8(rb) "," EVO_DECL8(rc) "," EVO_DECL8(rd) ","           \
      EVO_DECL8(re) "," EVO_DECL8(rf) "," EVO_DECL8(rg) "," EVO_DECL8(rh) "," EVO_DECL8(ri) "," \
      EVO_DECL8(rj) "," EVO_DECL8(rk) "," EVO_DECL8(rl) "," EVO_DECL8(rm) "," EVO_DECL8(rn) "," \
      EVO_DECL8(ro) "," EVO_DECL8(rp) ";\n"                                                     \
  ".reg .f32 s;\n"                                                                              \
  ".reg .pred pacc, pmore;\n"                                                                   \
  ".reg .s32 left;\n"                                                                           \
  "setp.eq.u32 pacc, 0, 0;\n"                                                                   \
  "mov.s32 left, %3;\n" EVO_ALL16(EVO_ZERO8)                                                    \
  "setp.gt.s32 pmore, left, 0;\n"                                                               \
  "@!pmore bra.uni EVO_WGMMA_DONE;\n"                                                           \
  "EVO_WGMMA_LOOP:\n"                                                                           \
  "wgmma.fence.sync.aligned;\n" EVO_WGMMA8(type)                                                \
  "wgmma.commit_group.sync.aligned;\n"                                                          \
  "wgmma.wait_group.sync.aligned 0;\n"                                                          \
  "sub.s32 left, left, 1;\n"                                                                    \
  "setp.gt.s32 pmore, left, 0;\n"                                                               \
  "@pmore bra.uni EVO_WGMMA_LOOP;\n"                                                            \
  "EVO_WGMMA_DONE:\n"                                                                           \
  "mov.f32 s, 0f00000000;\n" EVO_ALL16(EVO_SUM8)                                                \
  "mov.f32 %0, s;\n"                                                                            \
  "}\n"

namespace {

/// Zero-fills the operand tiles, makes them visible to the async proxy (wgmma reads shared
/// memory through it), and returns the A and B descriptors: K-major, no swizzle, core matrices
/// of 8 rows x 16 bytes stored contiguously (128 B), 128 B apart along K and 256 B apart along
/// M (A) or N (B).
__device__ void prepareOperands(unsigned char *a, unsigned char *b, uint64_t &da, uint64_t &db) {
  uint32_t *words = reinterpret_cast<uint32_t *>(a);
  for (int i = threadIdx.x; i < (kABytes + kBBytes) / 4; i += blockDim.x)
    words[i] = 0;
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();
  da = smemDescriptor(a, 128, 256);
  db = smemDescriptor(b, 128, 256);
}

struct __align__(128) Operands {
  unsigned char a[kABytes];
  unsigned char b[kBBytes];
};

/// The body of both peak kernels: wgmma on the tiles of `smem` with f16 (or, `kBf16`, bf16)
/// inputs.
template <bool kBf16>
__device__ __forceinline__ void wgmmaPeak(Operands &smem, float *out, int iterations) {
  uint64_t da, db;
  prepareOperands(smem.a, smem.b, da, db);
  float s;
  if constexpr (kBf16)
    asm volatile(EVO_WGMMA_LOOP("bf16") : "=f"(s) : "l"(da), "l"(db), "r"(iterations) : "memory");
  else
    asm volatile(EVO_WGMMA_LOOP("f16") : "=f"(s) : "l"(da), "l"(db), "r"(iterations) : "memory");
  if (s == 12345.678f) // practically never: keeps the accumulators alive
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

} // namespace

extern "C" {

/// f16 inputs, f32 accumulate: blockDim.x / 128 warpgroups per block, each running
/// `iterations` x kWgmmaPerGroup wgmma m64n256k16.
__global__ void __launch_bounds__(384, 1) evo_wgmma_peak_f16(float *out, int iterations) {
  __shared__ Operands smem;
  wgmmaPeak<false>(smem, out, iterations);
}

/// The same with bf16 inputs.
__global__ void __launch_bounds__(384, 1) evo_wgmma_peak_bf16(float *out, int iterations) {
  __shared__ Operands smem;
  wgmmaPeak<true>(smem, out, iterations);
}

} // extern "C"
