// f16 GEMV / nn.Linear at batch 1-8 on tensor cores, fed straight from global memory (issue 14):
// y[b][n] = sum_k W[n][k] * x[b][k], W N x K f16 row-major, f32 accumulation. A warp owns 16 * MT
// rows of W; each lane loads 16 contiguous bytes of row g and of row g + 8 (g = lane / 4) per 32
// k and the same 16 bytes of x row g (the batch row), and two mma.sync.m16n8k16 consume them:
// the sum over k does not care in which order k is visited, so A and B take the same
// permutation of each 32-k chunk and no shuffle or shared memory is needed. The batch is the n
// of the mma (8 wide; rows >= B are zeros and never stored). KW warps of a block split K and
// add their tiles through shared memory. Timed like evo-eval-worker: one launch between events
// after an L2 flush, median of 15; checked against a CPU loop on sampled rows.
// Build: nvcc -O3 -arch=sm_90 -std=c++17 gemv_mma_probe.cu -o gemv_mma_probe
#include "probe_common.cuh"
#include <cuda_fp16.h>
#include <cstdint>
#include <cmath>

__device__ __forceinline__ void mma(float (&c)[4], unsigned a0, unsigned a1, unsigned a2, unsigned a3, unsigned b0, unsigned b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

template <int B, int MT, int KW, int U, int NC>
__global__ void gemv_mma(const __half *__restrict__ W, const __half *__restrict__ X, __half *__restrict__ Y, int N, int K) {
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  int row0 = blockIdx.x * 16 * MT;
  int kPer = K / KW, kBegin = warp * kPer, kEnd = kBegin + kPer;
  float c[MT][4] = {};
  for (int k = kBegin; k < kEnd; k += 32 * U) {
    uint4 a[U][MT][2], x[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      int k0 = k + u * 32 + 8 * t;
#pragma unroll
      for (int m = 0; m < MT; ++m) {
        a[u][m][0] = ld16<NC>(W + size_t(row0 + m * 16 + g) * K + k0);
        a[u][m][1] = ld16<NC>(W + size_t(row0 + m * 16 + g + 8) * K + k0);
      }
      x[u] = g < B ? ld16<0>(X + size_t(g) * K + k0) : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
      for (int m = 0; m < MT; ++m) {
        mma(c[m], a[u][m][0].x, a[u][m][1].x, a[u][m][0].y, a[u][m][1].y, x[u].x, x[u].y);
        mma(c[m], a[u][m][0].z, a[u][m][1].z, a[u][m][0].w, a[u][m][1].w, x[u].z, x[u].w);
      }
  }
  if (KW > 1) {
    __shared__ float part[KW][MT][4][32];
#pragma unroll
    for (int m = 0; m < MT; ++m)
#pragma unroll
      for (int i = 0; i < 4; ++i) part[warp][m][i][lane] = c[m][i];
    __syncthreads();
    if (warp) return;
#pragma unroll
    for (int m = 0; m < MT; ++m)
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        float s = 0;
        for (int w = 0; w < KW; ++w) s += part[w][m][i][lane];
        c[m][i] = s;
      }
  }
  // c0, c1: rows g, batch 2t, 2t + 1; c2, c3: row g + 8.
#pragma unroll
  for (int m = 0; m < MT; ++m) {
    int r = row0 + m * 16 + g;
    if (2 * t < B) { Y[size_t(2 * t) * N + r] = __float2half(c[m][0]); Y[size_t(2 * t) * N + r + 8] = __float2half(c[m][2]); }
    if (2 * t + 1 < B) { Y[size_t(2 * t + 1) * N + r] = __float2half(c[m][1]); Y[size_t(2 * t + 1) * N + r + 8] = __float2half(c[m][3]); }
  }
}


static void *gFlush;
static float timeIt(std::function<void()> f) { return probeTime(f, gFlush); }

static const int N = 8192, K = 8192;
static std::vector<__half> hW, hX;
static double gRead;

template <int B, int MT, int KW, int U, int NC>
void run(const __half *W, const __half *X, __half *Y) {
  CK(cudaMemset(Y, 0xFF, size_t(8) * N * 2));
  auto launch = [&] { gemv_mma<B, MT, KW, U, NC><<<N / (16 * MT), 32 * KW>>>(W, X, Y, N, K); };
  launch();
  CK(cudaDeviceSynchronize());
  std::vector<__half> y(size_t(B) * N);
  CK(cudaMemcpy(y.data(), Y, y.size() * 2, cudaMemcpyDeviceToHost));
  double worst = 0;
  for (int b = 0; b < B; ++b)
    for (int n = b; n < N; n += 257) {
      double s = 0;
      for (int k = 0; k < K; ++k) s += double(__half2float(hW[size_t(n) * K + k])) * __half2float(hX[size_t(b) * K + k]);
      double got = __half2float(y[size_t(b) * N + n]);
      worst = std::max(worst, std::fabs(got - s) / (1 + std::fabs(s)));
    }
  float ms = timeIt(launch);
  double bytes = double(N) * K * 2;
  printf("mma B=%d MT=%d KW=%d U=%d nc=%d: %.4f ms  %.0f GB/s  %.3f of read@size  err %.1e%s\n", B, MT, KW, U, NC, ms,
         bytes / ms / 1e6, bytes / ms / 1e6 / gRead, worst, worst > 2e-2 ? "  WRONG" : "");
}

template <int B> void sweep(const __half *W, const __half *X, __half *Y) {
#define V(MT, KW, U) run<B, MT, KW, U, 1>(W, X, Y); run<B, MT, KW, U, 0>(W, X, Y);
  V(1, 1, 2) V(1, 1, 4) V(1, 2, 2) V(1, 4, 2) V(1, 4, 4) V(1, 8, 2)
  V(2, 1, 2) V(2, 2, 2) V(2, 4, 1) V(2, 4, 2) V(2, 8, 1)
  V(4, 2, 1) V(4, 4, 1) V(4, 1, 2)
#undef V
}

int main() {
  CK(cudaMalloc(&gFlush, 256 << 20));
  unsigned *sink; CK(cudaMalloc(&sink, 4096));
  size_t bytes = size_t(N) * K * 2;
  __half *W, *X, *Y;
  CK(cudaMalloc(&W, bytes)); CK(cudaMalloc(&X, size_t(8) * K * 2)); CK(cudaMalloc(&Y, size_t(8) * N * 2));
  hW.resize(size_t(N) * K); hX.resize(size_t(8) * K);
  uint64_t s = 1;
  auto rnd = [&] { s = s * 6364136223846793005ull + 1442695040888963407ull; return float((s >> 33) % 2001) / 1000.f - 1.f; };
  for (auto &v : hW) v = __float2half(rnd());
  for (auto &v : hX) v = __float2half(rnd());
  CK(cudaMemcpy(W, hW.data(), bytes, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(X, hX.data(), hX.size() * 2, cudaMemcpyHostToDevice));
  double best = readCeiling(W, bytes, gFlush, sink);
  gRead = best;
  printf("read %zu MiB: %.0f GB/s (%.4f ms)\n", bytes >> 20, best, bytes / best / 1e6);
  sweep<8>(W, X, Y);
  sweep<4>(W, X, Y);
  sweep<1>(W, X, Y);
  return 0;
}
