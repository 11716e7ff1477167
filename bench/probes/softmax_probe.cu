// Long-row softmax probe (issue 14): x 4096 x 65536 f32 (256 KiB rows), softmax over each row.
// A block per row: pass 1 folds (max, sum of exp) online, pass 2 re-reads the row and writes.
// Whether pass 2 hits L2 depends on how many rows are in flight at once: the variants limit the
// blocks resident per SM with unused dynamic shared memory. Timed like evo-eval-worker: one
// launch between events after an L2 flush, median of 15; checked against a CPU loop on sampled
// rows. Build: nvcc -O3 -arch=sm_90 -std=c++17 softmax_probe.cu -o softmax_probe
#include "probe_common.cuh"
#include <cmath>

constexpr int ROWS = 4096, COLS = 65536;

__device__ __forceinline__ void step(float &m, float &s, float x) {
  float d = x - m, e = __expf(-fabsf(d));
  if (d > 0) { s = s * e + 1.f; m = x; } else s += e;
}
__device__ __forceinline__ void merge(float &m, float &s, float m2, float s2) {
  float mm = fmaxf(m, m2);
  s = s * __expf(m - mm) + s2 * __expf(m2 - mm);
  m = mm;
}

template <int BS>
__global__ void __launch_bounds__(BS) softmax(const float4 *__restrict__ x, float4 *__restrict__ y, int padded) {
  extern __shared__ float pad[];
  __shared__ float sm[BS / 32], ss[BS / 32];
  const float4 *xr = x + size_t(blockIdx.x) * (COLS / 4);
  float4 *yr = y + size_t(blockIdx.x) * (COLS / 4);
  float m = -INFINITY, s = 0.f;
  for (int i = threadIdx.x; i < COLS / 4; i += BS) {
    float4 v = xr[i];
    step(m, s, v.x); step(m, s, v.y); step(m, s, v.z); step(m, s, v.w);
  }
  for (int o = 16; o; o /= 2) merge(m, s, __shfl_xor_sync(~0u, m, o), __shfl_xor_sync(~0u, s, o));
  if (threadIdx.x % 32 == 0) { sm[threadIdx.x / 32] = m; ss[threadIdx.x / 32] = s; }
  __syncthreads();
  m = -INFINITY; s = 0.f;
  for (int w = 0; w < BS / 32; ++w) merge(m, s, sm[w], ss[w]);
  float inv = 1.f / s;
  if (padded && threadIdx.x == 0 && pad[0] == 12345.f) inv = 0; // keep the padding
  for (int i = threadIdx.x; i < COLS / 4; i += BS) {
    float4 v = xr[i];
    v.x = __expf(v.x - m) * inv; v.y = __expf(v.y - m) * inv; v.z = __expf(v.z - m) * inv; v.w = __expf(v.w - m) * inv;
    yr[i] = v;
  }
}

int main() {
  size_t n = size_t(ROWS) * COLS, bytes = n * 4;
  float *x, *y, *flush;
  CK(cudaMalloc(&x, bytes)); CK(cudaMalloc(&y, bytes)); CK(cudaMalloc(&flush, 256 << 20));
  std::vector<float> h(n);
  for (size_t i = 0; i < n; ++i) h[i] = float((i * 2654435761u) % 2001) / 1000.f - 1.f;
  CK(cudaMemcpy(x, h.data(), bytes, cudaMemcpyHostToDevice));
  auto time = [&](std::function<void()> launch) { return probeTime(launch, flush); };
  auto check = [&] {
    std::vector<float> out(COLS);
    double worst = 0;
    for (int r = 0; r < ROWS; r += 511) {
      CK(cudaMemcpy(out.data(), y + size_t(r) * COLS, COLS * 4, cudaMemcpyDeviceToHost));
      double m = -1e30, s = 0;
      for (int c = 0; c < COLS; ++c) m = std::max(m, double(h[size_t(r) * COLS + c]));
      for (int c = 0; c < COLS; ++c) s += std::exp(h[size_t(r) * COLS + c] - m);
      for (int c = 0; c < COLS; ++c) {
        double ref = std::exp(h[size_t(r) * COLS + c] - m) / s;
        worst = std::max(worst, std::fabs(out[c] - ref) / ref);
      }
    }
    return worst;
  };
  int smPerBlockMax = 227 * 1024 - 1024; // leaves room for the static shared arrays
  auto run = [&](auto kernel, int bs, int perSm) {
    // Unused dynamic shared memory so that at most perSm blocks fit on an SM (0: no limit).
    int dyn = perSm ? 228 * 1024 / perSm - 2048 : 0;
    if (dyn > smPerBlockMax) dyn = smPerBlockMax;
    CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smPerBlockMax));
    int occ = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, kernel, bs, dyn));
    float ms = time([&] { kernel<<<ROWS, bs, dyn>>>((const float4 *)x, (float4 *)y, dyn > 0); });
    double err = check();
    printf("block %4d, %d blocks/SM (%2d rows in flight per SM): %.4f ms  %.0f GB/s (3 x 1 GiB)  err %.1e\n", bs, occ,
           occ, ms, 3.0 * bytes / ms / 1e6, err);
  };
  for (int perSm : {0, 1, 2, 3, 4}) {
    run(softmax<256>, 256, perSm);
    run(softmax<512>, 512, perSm);
    run(softmax<1024>, 1024, perSm);
  }
  return 0;
}
