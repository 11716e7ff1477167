// GEMV / nn.Linear probe (issue 14): which warp schedule reads W at the read ceiling, and what
// the read ceiling is for a stream of the same size. y[b][n] = sum_k W[n][k] * x[b][k], W N x K
// row-major, f32 or f16 (f32 accumulation). Each warp computes R consecutive outputs n for all B
// batch rows; a lane loads U 16-byte chunks of each of its R rows (and of each x row) per
// iteration. Timed like evo-eval-worker: one launch between events after an L2 flush, median of
// 15. Build: nvcc -O3 -arch=sm_90 -std=c++17 gemv_probe.cu -o gemv_probe
#include "probe_common.cuh"
#include <cuda_fp16.h>

__device__ __forceinline__ float dot16(uint4 a, uint4 b, float acc, float) {
  const float *x = reinterpret_cast<const float *>(&a), *y = reinterpret_cast<const float *>(&b);
  for (int i = 0; i < 4; ++i) acc = fmaf(x[i], y[i], acc);
  return acc;
}
__device__ __forceinline__ float dot16(uint4 a, uint4 b, float acc, __half) {
  const __half2 *x = reinterpret_cast<const __half2 *>(&a), *y = reinterpret_cast<const __half2 *>(&b);
  for (int i = 0; i < 4; ++i) {
    float2 p = __half22float2(x[i]), q = __half22float2(y[i]);
    acc = fmaf(p.x, q.x, acc);
    acc = fmaf(p.y, q.y, acc);
  }
  return acc;
}

template <typename T, int B, int R, int U, int NC, int XNC = 0>
__global__ void gemv(const T *__restrict__ W, const T *__restrict__ X, T *__restrict__ Y, int N, int K) {
  constexpr int V = 16 / sizeof(T);
  int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
  int n0 = warp * R;
  if (n0 >= N) return;
  float acc[B][R];
  for (int b = 0; b < B; ++b) for (int r = 0; r < R; ++r) acc[b][r] = 0.f;
  for (int k = lane * V; k < K; k += 32 * V * U) {
    uint4 w[U][R], x[U][B];
#pragma unroll
    for (int u = 0; u < U; ++u) {
#pragma unroll
      for (int r = 0; r < R; ++r) w[u][r] = ld16<NC>(W + size_t(n0 + r) * K + k + u * 32 * V);
#pragma unroll
      for (int b = 0; b < B; ++b) x[u][b] = ld16<XNC>(X + size_t(b) * K + k + u * 32 * V);
    }
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
      for (int b = 0; b < B; ++b)
#pragma unroll
        for (int r = 0; r < R; ++r) acc[b][r] = dot16(w[u][r], x[u][b], acc[b][r], T());
  }
#pragma unroll
  for (int b = 0; b < B; ++b)
#pragma unroll
    for (int r = 0; r < R; ++r) {
      float v = acc[b][r];
      for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(~0u, v, o);
      if (lane == 0) Y[size_t(b) * N + n0 + r] = T(v);
    }
}


static void *gFlush;
static float timeIt(std::function<void()> f) { return probeTime(f, gFlush); }

static int gSms;
static double gRead1G;
template <typename T, int B, int R, int U, int NC, int XNC = 0> void run(const char *tn, const T *W, const T *X, T *Y, int N, int K, int threads) {
  int warps = N / R, grid = (warps * 32 + threads - 1) / threads;
  float ms = timeIt([&] { gemv<T, B, R, U, NC, XNC><<<grid, threads>>>(W, X, Y, N, K); });
  double bytes = double(N) * K * sizeof(T);
  printf("gemv %s B=%d R=%d U=%d nc=%d xnc=%d threads=%d: %.4f ms  %.0f GB/s  %.3f of read(1GiB)\n", tn, B, R, U, NC, XNC, threads, ms,
         bytes / ms / 1e6, bytes / ms / 1e6 / gRead1G);
}

template <typename T, int B> void sweep(const char *tn, const T *W, const T *X, T *Y, int N, int K) {
  for (int threads : {128, 256}) {
#define V(R, U) run<T, B, R, U, 1>(tn, W, X, Y, N, K, threads); run<T, B, R, U, 0>(tn, W, X, Y, N, K, threads); \
  run<T, B, R, U, 2>(tn, W, X, Y, N, K, threads); run<T, B, R, U, 2, 2>(tn, W, X, Y, N, K, threads);
    V(1, 1) V(1, 2) V(1, 4) V(2, 1) V(2, 2) V(2, 4) V(4, 1) V(4, 2)
#undef V
  }
}

int main() {
  cudaDeviceGetAttribute(&gSms, cudaDevAttrMultiProcessorCount, 0);
  CK(cudaMalloc(&gFlush, 256 << 20));
  unsigned *sink; CK(cudaMalloc(&sink, 4096));
  size_t big = 1ull << 30;
  void *buf; CK(cudaMalloc(&buf, big)); CK(cudaMemset(buf, 1, big));
  for (size_t bytes : {size_t(1) << 30, size_t(256) << 20, size_t(128) << 20}) {
    double best = readCeiling(buf, bytes, gFlush, sink);
    if (bytes == big) gRead1G = best;
    printf("read %zu MiB: best %.0f GB/s (%.3f of the 1 GiB rate)\n", bytes >> 20, best, best / gRead1G);
  }
  int N = 8192, K = 8192;
  float *Wf, *Xf, *Yf; __half *Wh, *Xh, *Yh;
  CK(cudaMalloc(&Wf, size_t(N) * K * 4)); CK(cudaMalloc(&Xf, 8 * K * 4)); CK(cudaMalloc(&Yf, 8 * N * 4));
  CK(cudaMemset(Wf, 0, size_t(N) * K * 4)); CK(cudaMemset(Xf, 0, 8 * K * 4));
  Wh = (__half *)Wf; Xh = (__half *)Xf; Yh = (__half *)Yf;
  sweep<float, 1>("f32", Wf, Xf, Yf, N, K);
  sweep<__half, 1>("f16", Wh, Xh, Yh, N, K);
  sweep<float, 4>("f32", Wf, Xf, Yf, N, K);
  sweep<float, 8>("f32", Wf, Xf, Yf, N, K);
  sweep<__half, 8>("f16", Wh, Xh, Yh, N, K);
  return 0;
}
