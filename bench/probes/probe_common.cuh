// What the probes share: error checks, 16-byte loads (plain or past L1), the read-only stream
// that measures the read ceiling at a size, and the timing (one launch between events after an
// L2 flush, as evo-eval-worker times a candidate; median of 15 after a warm-up launch).
#pragma once
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1); } } while (0)

// NC 0: ld.global; 1: ld.global.nc.L1::no_allocate; 2: ld.global.nc (what LLVM emits for a
// noalias readonly kernel parameter).
template <int NC> __device__ __forceinline__ uint4 ld16(const void *p) {
  uint4 v;
  if (NC == 1)
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  else if (NC == 2)
    asm volatile("ld.global.nc.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  else
    v = *reinterpret_cast<const uint4 *>(p);
  return v;
}

// Read-only stream: every 16-byte element once, grid-stride, U loads in flight.
template <int U> __global__ void readk(const uint4 *p, size_t n, unsigned *sink) {
  unsigned s = 0;
  size_t stride = size_t(gridDim.x) * blockDim.x;
  size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + (U - 1) * stride < n; i += U * stride) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = ld16<1>(p + i + u * stride);
#pragma unroll
    for (int u = 0; u < U; ++u) s ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; i < n; i += stride) { uint4 v = ld16<1>(p + i); s ^= v.x ^ v.y ^ v.z ^ v.w; }
  if (s == 0x12345678) sink[0] = s;
}

// The median time of `launch` in ms: a checked warm-up launch, then 15 launches, each after a
// 256 MiB memset of `flush` (so nothing of the inputs stays in L2) and between two events.
inline float probeTime(const std::function<void()> &launch, void *flush) {
  static cudaEvent_t a, b;
  static bool made = false;
  if (!made) { CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b)); made = true; }
  launch(); CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
  std::vector<float> ms;
  for (int i = 0; i < 15; ++i) {
    CK(cudaMemsetAsync(flush, i, 256 << 20));
    CK(cudaEventRecord(a)); launch(); CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b));
    float t; CK(cudaEventElapsedTime(&t, a, b)); ms.push_back(t);
  }
  CK(cudaGetLastError());
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// The best read rate (GB/s) of `bytes` at `p` over grid shapes: grid-stride with 4 loads in
// flight, and one pass of a thread per 16 bytes.
inline double readCeiling(const void *p, size_t bytes, void *flush, unsigned *sink) {
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  double best = 0;
  size_t n = bytes / 16;
  for (int perSm : {4, 8, 16, 32}) for (int threads : {256, 512, 1024}) {
    float a = probeTime([&] { readk<4><<<sms * perSm, threads>>>((const uint4 *)p, n, sink); }, flush);
    float c = probeTime([&] { readk<1><<<(n + threads - 1) / threads, threads>>>((const uint4 *)p, n, sink); }, flush);
    best = std::max(best, bytes / std::min(a, c) / 1e6);
  }
  return best;
}
