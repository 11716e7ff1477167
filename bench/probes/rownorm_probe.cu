// Channel-dim RMSNorm probe (issue 14/16): y = x / sqrt(mean_c(x^2) + eps) over dim 1 of NCHW
// (16 x 64 x 256 x 256 f32), the "strided row program" shape. Which thread mapping reaches the
// copy ceiling? Each thread keeps V adjacent (h, w) positions (one V-wide vector load per
// channel) for C/S channels; S threads (adjacent in the warp, lane = s + S * group) share a row
// group and combine their partial sums with shuffles. The row values stay in registers: x is
// read once, y written once. Timed like evo-eval-worker: one launch between events after an L2
// flush, median of 15. Build: nvcc -O3 -arch=sm_90 -std=c++17 rownorm_probe.cu -o rownorm_probe
#include "probe_common.cuh"
#include <cmath>

constexpr int N = 16, C = 64, HW = 256 * 256;

template <int V> struct Vec;
template <> struct Vec<1> { using T = float; };
template <> struct Vec<2> { using T = float2; };
template <> struct Vec<4> { using T = float4; };

__device__ __forceinline__ float &at(float &v, int) { return v; }
__device__ __forceinline__ float &at(float2 &v, int i) { return (&v.x)[i]; }
__device__ __forceinline__ float &at(float4 &v, int i) { return (&v.x)[i]; }

// S threads per group of V positions; the group's C channels are split lane-interleaved
// (thread s has channels s, s + S, ...), so a warp instruction reads 32/S groups x V floats
// contiguous per channel.
template <int V, int S>
__global__ void rmsnorm(const float *__restrict__ x, float *__restrict__ y) {
  using T = typename Vec<V>::T;
  constexpr int CS = C / S;
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int s = t % S, g = t / S;
  int pos = g * V; // over N * HW positions
  if (pos >= N * HW) return;
  int n = pos / HW, hw = pos % HW;
  const float *xp = x + size_t(n) * C * HW + hw;
  float *yp = y + size_t(n) * C * HW + hw;
  T v[CS];
  float acc[V];
#pragma unroll
  for (int i = 0; i < V; ++i) acc[i] = 0.f;
#pragma unroll
  for (int c = 0; c < CS; ++c) {
    v[c] = *reinterpret_cast<const T *>(xp + size_t(c * S + s) * HW);
#pragma unroll
    for (int i = 0; i < V; ++i) acc[i] = fmaf(at(v[c], i), at(v[c], i), acc[i]);
  }
#pragma unroll
  for (int i = 0; i < V; ++i) {
#pragma unroll
    for (int o = 1; o < S; o *= 2) acc[i] += __shfl_xor_sync(0xffffffffu, acc[i], o);
    acc[i] = 1.f / sqrtf(acc[i] / C + 1e-5f);
  }
#pragma unroll
  for (int c = 0; c < CS; ++c) {
    T o = v[c];
#pragma unroll
    for (int i = 0; i < V; ++i) at(o, i) *= acc[i];
    *reinterpret_cast<T *>(yp + size_t(c * S + s) * HW) = o;
  }
}

// What evo's row program did before (evo-opt 98fe9dc): x reloaded for the output (its loads
// were not shared between the passes: the interchanged maps took the uncached path), and a
// precise division by the row's sqrt per element (div.rn.f32) instead of one reciprocal.
template <bool RELOAD, bool DIV>
__global__ void rmsnorm_evo(const float *x, float *y) {
  int pos = blockIdx.x * blockDim.x + threadIdx.x;
  if (pos >= N * HW) return;
  int n = pos / HW, hw = pos % HW;
  const float *xp = x + size_t(n) * C * HW + hw;
  float *yp = y + size_t(n) * C * HW + hw;
  float v[C];
  float acc = 0.f;
#pragma unroll
  for (int c = 0; c < C; ++c) { v[c] = xp[size_t(c) * HW]; acc = fmaf(v[c], v[c], acc); }
  float r = sqrtf(acc / C + 1e-5f), inv = 1.f / r;
#pragma unroll
  for (int c = 0; c < C; ++c) {
    float a = RELOAD ? xp[size_t(c) * HW] : v[c];
    yp[size_t(c) * HW] = DIV ? a / r : a * inv;
  }
}

// Two kernels' worth of traffic in one: read the row for the sum, read it again for the
// output (what the uncached row program does).
__global__ void rmsnorm_reread(const float *__restrict__ x, float *__restrict__ y) {
  int pos = blockIdx.x * blockDim.x + threadIdx.x;
  if (pos >= N * HW) return;
  int n = pos / HW, hw = pos % HW;
  const float *xp = x + size_t(n) * C * HW + hw;
  float acc = 0.f;
  for (int c = 0; c < C; ++c) { float a = xp[size_t(c) * HW]; acc = fmaf(a, a, acc); }
  float r = 1.f / sqrtf(acc / C + 1e-5f);
  for (int c = 0; c < C; ++c) y[size_t(n) * C * HW + hw + size_t(c) * HW] = xp[size_t(c) * HW] * r;
}

__global__ void copy4(const float4 *__restrict__ a, float4 *__restrict__ b, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) b[i] = a[i];
}

int main() {
  size_t elems = size_t(N) * C * HW, bytes = elems * 4;
  float *x, *y, *flush;
  CK(cudaMalloc(&x, bytes)); CK(cudaMalloc(&y, bytes)); CK(cudaMalloc(&flush, 256 << 20));
  std::vector<float> h(elems);
  for (size_t i = 0; i < elems; ++i) h[i] = float((i * 2654435761u) % 1000) / 500.f - 1.f;
  CK(cudaMemcpy(x, h.data(), bytes, cudaMemcpyHostToDevice));
  // CPU reference on a sample of positions.
  auto check = [&](const char *name) {
    std::vector<float> out(elems);
    CK(cudaMemcpy(out.data(), y, bytes, cudaMemcpyDeviceToHost));
    double worst = 0;
    for (size_t p = 0; p < size_t(N) * HW; p += 997) {
      size_t n = p / HW, hw = p % HW;
      double s = 0;
      for (int c = 0; c < C; ++c) { double a = h[n * C * HW + c * HW + hw]; s += a * a; }
      double r = 1.0 / std::sqrt(s / C + 1e-5);
      for (int c = 0; c < C; ++c) {
        size_t i = n * C * HW + c * HW + hw;
        worst = std::max(worst, std::fabs(out[i] - h[i] * r));
      }
    }
    if (worst > 1e-4) { printf("%s WRONG: max err %g\n", name, worst); exit(1); }
  };
  auto time = [&](const char *name, std::function<void()> launch, size_t moved) {
    float ms = probeTime(launch, flush);
    printf("%-34s %.4f ms  %.0f GB/s\n", name, ms, moved / ms / 1e6);
  };
  time("copy (read+write 256 MiB)", [&] { copy4<<<132 * 8, 512>>>((const float4 *)x, (float4 *)y, elems / 4); }, 2 * bytes);
  time("reread V1 S1 b256", [&] { rmsnorm_reread<<<N * HW / 256, 256>>>(x, y); }, 2 * bytes);
  check("reread");
  auto run = [&](auto kernel, int V, int S, int block, const char *name) {
    int threads = N * HW / V * S;
    char label[64];
    snprintf(label, sizeof label, "%s V%d S%d b%d", name, V, S, block);
    time(label, [&] { kernel<<<(threads + block - 1) / block, block>>>(x, y); }, 2 * bytes);
    check(label);
  };
  run(rmsnorm_evo<false, false>, 1, 1, 256, "evo-like mul");
  run(rmsnorm_evo<false, true>, 1, 1, 256, "evo-like div");
  run(rmsnorm_evo<true, false>, 1, 1, 256, "evo-like reload mul");
  run(rmsnorm_evo<true, true>, 1, 1, 256, "evo-like reload div");
  for (int block : {128, 256}) {
    run(rmsnorm<1, 1>, 1, 1, block, "cached");
    run(rmsnorm<2, 1>, 2, 1, block, "cached");
    run(rmsnorm<4, 1>, 4, 1, block, "cached");
    run(rmsnorm<1, 2>, 1, 2, block, "cached");
    run(rmsnorm<2, 2>, 2, 2, block, "cached");
    run(rmsnorm<4, 2>, 4, 2, block, "cached");
    run(rmsnorm<1, 4>, 1, 4, block, "cached");
    run(rmsnorm<2, 4>, 2, 4, block, "cached");
    run(rmsnorm<4, 4>, 4, 4, block, "cached");
    run(rmsnorm<4, 8>, 4, 8, block, "cached");
    run(rmsnorm<2, 8>, 2, 8, block, "cached");
  }
  return 0;
}
