// maxpool1d (KernelBench level 1 #41 grown: x [16*32][262144] f32, window 4, stride 2 ->
// [16*32][131071]): what a 1-D pooling kernel reaches on this GPU, to tell whether the search
// space lacks a schedule. One thread per output (evo's naive and best schedule today) against G
// consecutive outputs per thread with the window's inputs read once, as 128-bit loads.
// nvcc -O3 -arch=sm_90a pool1d_probe.cu -o pool1d_probe && ./pool1d_probe
#include "probe_common.cuh"
#include <cfloat>

constexpr int L = 262144, O = (L - 4) / 2 + 1, R = 16 * 32;

__global__ void naive(const float *__restrict__ x, float *__restrict__ y) {
  size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= size_t(R) * O) return;
  size_t r = i / O, o = i % O;
  const float *p = x + r * L + 2 * o;
  y[i] = fmaxf(fmaxf(p[0], p[1]), fmaxf(p[2], p[3]));
}

// G outputs a thread: inputs 2*o0 .. 2*o0 + 2G + 1, as float4s and one float2 (o0 a multiple
// of G, so 2*o0 is 16-byte aligned for G >= 2). The last group of a row takes the scalar path.
template <int G> __global__ void grouped(const float *__restrict__ x, float *__restrict__ y) {
  constexpr int groups = (O + G - 1) / G;
  size_t t = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= size_t(R) * groups) return;
  size_t r = t / groups, g = t % groups;
  size_t o0 = g * G;
  const float *p = x + r * L + 2 * o0;
  float *q = y + r * O + o0;
  if (o0 + G > size_t(O)) {
    for (size_t o = o0; o < size_t(O); ++o) {
      const float *s = x + r * L + 2 * o;
      q[o - o0] = fmaxf(fmaxf(s[0], s[1]), fmaxf(s[2], s[3]));
    }
    return;
  }
  float v[2 * G + 2];
#pragma unroll
  for (int j = 0; j < G / 2; ++j) {
    float4 a = reinterpret_cast<const float4 *>(p)[j];
    v[4 * j] = a.x; v[4 * j + 1] = a.y; v[4 * j + 2] = a.z; v[4 * j + 3] = a.w;
  }
  float2 b = *reinterpret_cast<const float2 *>(p + 2 * G);
  v[2 * G] = b.x; v[2 * G + 1] = b.y;
#pragma unroll
  for (int j = 0; j < G; ++j)
    q[j] = fmaxf(fmaxf(v[2 * j], v[2 * j + 1]), fmaxf(v[2 * j + 2], v[2 * j + 3]));
}

int main() {
  float *x, *y, *ref, *flush; unsigned *sink;
  size_t nx = size_t(R) * L, ny = size_t(R) * O;
  CK(cudaMalloc(&x, nx * 4)); CK(cudaMalloc(&y, ny * 4)); CK(cudaMalloc(&ref, ny * 4));
  CK(cudaMalloc(&flush, 256 << 20)); CK(cudaMalloc(&sink, 4));
  std::vector<float> h(nx);
  for (size_t i = 0; i < nx; ++i) h[i] = float((i * 2654435761u) % 1000003) - 500000.f;
  CK(cudaMemcpy(x, h.data(), nx * 4, cudaMemcpyHostToDevice));
  const double bytes = nx * 4.0 + ny * 4.0;
  double read = readCeiling(x, nx * 4, flush, sink);
  printf("read ceiling %.0f GB/s; bytes moved %.0f MB\n", read, bytes / 1e6);
  int bs = 256;
  float tn = probeTime([&] { naive<<<(ny + bs - 1) / bs, bs>>>(x, ref); }, flush);
  printf("%-22s %.4f ms  %.0f GB/s\n", "naive (thread/output)", tn, bytes / tn / 1e6);
  std::vector<float> a(ny), b(ny);
  CK(cudaMemcpy(a.data(), ref, ny * 4, cudaMemcpyDeviceToHost));
  auto check = [&](const char *name, float ms) {
    CK(cudaMemcpy(b.data(), y, ny * 4, cudaMemcpyDeviceToHost));
    size_t bad = 0;
    for (size_t i = 0; i < ny; ++i) bad += a[i] != b[i];
    printf("%-22s %.4f ms  %.0f GB/s  %s\n", name, ms, bytes / ms / 1e6, bad ? "WRONG" : "ok");
    CK(cudaMemset(y, 0, ny * 4));
  };
  for (int b2 : {128, 256, 512}) {
    char n[64];
    size_t g2 = size_t(R) * ((O + 1) / 2), g4 = size_t(R) * ((O + 3) / 4), g8 = size_t(R) * ((O + 7) / 8);
    snprintf(n, sizeof n, "G=2 block %d", b2);
    check(n, probeTime([&] { grouped<2><<<(g2 + b2 - 1) / b2, b2>>>(x, y); }, flush));
    snprintf(n, sizeof n, "G=4 block %d", b2);
    check(n, probeTime([&] { grouped<4><<<(g4 + b2 - 1) / b2, b2>>>(x, y); }, flush));
    snprintf(n, sizeof n, "G=8 block %d", b2);
    check(n, probeTime([&] { grouped<8><<<(g8 + b2 - 1) / b2, b2>>>(x, y); }, flush));
  }
  return 0;
}
