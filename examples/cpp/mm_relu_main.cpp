//===- mm_relu_main.cpp - scratch buffers, CUDA graphs and threads with libevo_runtime -===//
//
//   evo-opt test/GPU/Inputs/mm_relu.mlir --evo-pipeline=output-dir=out -o /dev/null
//   mm_relu_main out/mm_relu.json
//
// relu(A @ B) lowered to two kernels joined by a scratch buffer. Shows (and checks against a CPU
// loop in double precision):
//   1. a launch with a workspace for the scratch buffer;
//   2. the launch captured in a CUDA graph (after Module::prepare: loading a module is not allowed
//      while capturing) and replayed on new inputs;
//   3. two threads launching the same Module at once, each on its own stream with its own
//      workspace (a workspace serves one stream at a time).
//
// Exit codes: 0 checked, 1 wrong results or an error, 77 no usable GPU here.
//
//===----------------------------------------------------------------------===//

#include <evo-runtime/Module.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace rt = evo::runtime;

namespace {

bool cudaOk(cudaError_t e, const char *what) {
  if (e != cudaSuccess)
    std::fprintf(stderr, "mm_relu_main: %s failed: %s\n", what, cudaGetErrorString(e));
  return e == cudaSuccess;
}
#define CUDA_OK(call)                                                                              \
  if (!cudaOk((call), #call))                                                                      \
  return 1

struct Problem {
  int64_t m, k, n;
  std::vector<float> a, b;
  void fill(unsigned seed) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (float &v : a)
      v = dist(gen);
    for (float &v : b)
      v = dist(gen);
  }
  /// The worst error of `c` against relu(A @ B) in double, relative to sum |a||b| per element.
  double check(const std::vector<float> &c) const {
    double worst = 0;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0, mag = 0;
        for (int64_t p = 0; p < k; ++p) {
          s += double(a[i * k + p]) * b[p * n + j];
          mag += std::fabs(double(a[i * k + p]) * b[p * n + j]);
        }
        double err = std::fabs(c[i * n + j] - std::max(s, 0.0)) / std::max(mag, 1e-30);
        if (!(err <= 1e-5))
          return INFINITY; // also NaN: an unwritten element
        worst = std::max(worst, err);
      }
    return worst;
  }
};

/// The device side of the problem: A, B and C on one stream.
struct Device {
  Problem &p;
  cudaStream_t stream = nullptr;
  void *da = nullptr, *db = nullptr, *dc = nullptr;
  size_t bytesA = 0, bytesB = 0, bytesC = 0;
  std::vector<float> c;
  rt::TensorRef ta, tb, tc;

  explicit Device(Problem &p)
      : p(p), bytesA(p.a.size() * 4), bytesB(p.b.size() * 4), bytesC(p.m * p.n * 4),
        c(p.m * p.n) {}
  ~Device() {
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    if (stream)
      cudaStreamDestroy(stream);
  }
  int allocate() {
    CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CUDA_OK(cudaMalloc(&da, bytesA));
    CUDA_OK(cudaMalloc(&db, bytesB));
    CUDA_OK(cudaMalloc(&dc, bytesC));
    ta = rt::TensorRef(da, rt::DType::F32, {p.m, p.k});
    tb = rt::TensorRef(db, rt::DType::F32, {p.k, p.n});
    tc = rt::TensorRef(dc, rt::DType::F32, {p.m, p.n});
    return 0;
  }
  /// New inputs from `seed`, C poisoned with NaN.
  bool upload(unsigned seed) {
    p.fill(seed);
    return cudaOk(cudaMemcpyAsync(da, p.a.data(), bytesA, cudaMemcpyHostToDevice, stream), "copy A") &&
           cudaOk(cudaMemcpyAsync(db, p.b.data(), bytesB, cudaMemcpyHostToDevice, stream), "copy B") &&
           cudaOk(cudaMemsetAsync(dc, 0xff, bytesC, stream), "poison C");
  }
  bool download() {
    return cudaOk(cudaMemcpyAsync(c.data(), dc, bytesC, cudaMemcpyDeviceToHost, stream), "copy C") &&
           cudaOk(cudaStreamSynchronize(stream), "sync");
  }
};

/// 1. A launch with a workspace; without one it is refused.
int directLaunch(rt::Module &mod, Device &d, rt::Workspace &ws, double &err) {
  if (!d.upload(1))
    return 1;
  if (rt::Status s = mod.launch(d.stream, {d.ta, d.tb}, {d.tc}); s.ok()) {
    std::fprintf(stderr, "mm_relu_main: a launch without a workspace was not refused\n");
    return 1;
  }
  if (rt::Status s = mod.launch(d.stream, {d.ta, d.tb}, {d.tc}, ws.ref()); !s) {
    std::fprintf(stderr, "mm_relu_main: %s\n", s.message().c_str());
    return 1;
  }
  if (!d.download())
    return 1;
  err = d.p.check(d.c);
  if (!(err <= 1e-5)) {
    std::fprintf(stderr, "mm_relu_main: direct launch: wrong results\n");
    return 1;
  }
  return 0;
}

/// 2. Captured in a CUDA graph, replayed on new inputs.
int graphReplay(rt::Module &mod, Device &d, rt::Workspace &ws, double &err) {
  if (rt::Status s = mod.prepare(d.stream); !s) {
    std::fprintf(stderr, "mm_relu_main: %s\n", s.message().c_str());
    return 1;
  }
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CUDA_OK(cudaStreamBeginCapture(d.stream, cudaStreamCaptureModeGlobal));
  rt::Status captured = mod.launch(d.stream, {d.ta, d.tb}, {d.tc}, ws.ref());
  CUDA_OK(cudaStreamEndCapture(d.stream, &graph));
  if (!captured) {
    std::fprintf(stderr, "mm_relu_main: capture: %s\n", captured.message().c_str());
    return 1;
  }
  CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
  err = 0;
  for (unsigned seed : {2u, 3u}) {
    if (!d.upload(seed))
      return 1;
    CUDA_OK(cudaGraphLaunch(exec, d.stream));
    if (!d.download())
      return 1;
    err = std::max(err, d.p.check(d.c));
    if (!(err <= 1e-5)) {
      std::fprintf(stderr, "mm_relu_main: CUDA graph replay (seed %u): wrong results\n", seed);
      return 1;
    }
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  return 0;
}

/// 3. Two threads, each with its own stream, workspace and output, launching at once.
int twoThreads(rt::Module &mod, Device &d, double &err) {
  if (!d.upload(4) || !cudaOk(cudaStreamSynchronize(d.stream), "sync"))
    return 1;
  std::atomic<int> failures{0};
  std::vector<std::vector<float>> results(2, std::vector<float>(d.p.m * d.p.n));
  auto worker = [&](int t) {
    cudaStream_t s;
    void *out = nullptr;
    if (!cudaOk(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "stream") ||
        !cudaOk(cudaMalloc(&out, d.bytesC), "malloc")) {
      ++failures;
      return;
    }
    rt::Expected<rt::Workspace> w = mod.allocateWorkspace(s);
    rt::TensorRef to(out, rt::DType::F32, {d.p.m, d.p.n});
    for (int i = 0; i < 20 && w; ++i)
      if (rt::Status st = mod.launch(s, {d.ta, d.tb}, {to}, w->ref()); !st) {
        std::fprintf(stderr, "mm_relu_main: thread %d: %s\n", t, st.message().c_str());
        ++failures;
        break;
      }
    if (!w || !cudaOk(cudaMemcpyAsync(results[t].data(), out, d.bytesC, cudaMemcpyDeviceToHost, s), "copy") ||
        !cudaOk(cudaStreamSynchronize(s), "sync"))
      ++failures;
    cudaFree(out);
    cudaStreamDestroy(s);
  };
  std::thread t0(worker, 0), t1(worker, 1);
  t0.join();
  t1.join();
  err = std::max(d.p.check(results[0]), d.p.check(results[1]));
  if (failures || !(err <= 1e-5)) {
    std::fprintf(stderr, "mm_relu_main: two threads: %s\n", failures ? "errors" : "wrong results");
    return 1;
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: mm_relu_main <mm_relu.json>\n");
    return 1;
  }
  rt::Expected<rt::Module> mod = rt::Module::load(argv[1]);
  if (!mod) {
    std::fprintf(stderr, "mm_relu_main: %s\n", mod.error().message().c_str());
    return 1;
  }
  const rt::Manifest &man = mod->manifest();
  std::printf("loaded %s: %zu input(s), %zu output(s), %zu launch(es), %zu scratch buffer(s), "
              "workspace %zu bytes\n",
              man.name.c_str(), man.inputs.size(), man.outputs.size(), man.launches.size(),
              man.scratch.size(), mod->workspaceBytes());
  auto shapeOf = [&](unsigned i) { return man.buffers[i].shape; };
  if (man.inputs.size() != 2 || man.outputs.size() != 1 || shapeOf(man.inputs[0]).size() != 2 ||
      shapeOf(man.inputs[1]).size() != 2 || shapeOf(man.outputs[0]).size() != 2 ||
      man.scratch.empty()) {
    std::fprintf(stderr, "mm_relu_main: %s is not relu(A @ B) with a scratch buffer\n", argv[1]);
    return 1;
  }
  Problem p;
  p.m = shapeOf(man.inputs[0])[0];
  p.k = shapeOf(man.inputs[0])[1];
  p.n = shapeOf(man.inputs[1])[1];
  p.a.resize(p.m * p.k);
  p.b.resize(p.k * p.n);

  int devices = 0;
  if (cudaError_t e = cudaGetDeviceCount(&devices); e != cudaSuccess || devices == 0) {
    std::printf("no usable GPU here (%s): the manifest and its PTX were loaded and validated only\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "no device");
    return 77;
  }

  Device d(p);
  if (d.allocate())
    return 1;
  rt::Expected<rt::Workspace> ws = mod->allocateWorkspace(d.stream);
  if (!ws || ws->bytes() != mod->workspaceBytes()) {
    std::fprintf(stderr, "mm_relu_main: workspace: %s\n", ws ? "wrong size" : ws.error().message().c_str());
    return 1;
  }
  double e1 = 0, e2 = 0, e3 = 0;
  if (directLaunch(*mod, d, *ws, e1) || graphReplay(*mod, d, *ws, e2) || twoThreads(*mod, d, e3))
    return 1;
  std::printf("mm_relu: %lldx%lldx%lld checked against the CPU: a launch with a workspace, a CUDA "
              "graph replayed on new inputs, 2 threads x 20 launches on their own streams; worst "
              "error %.1e: OK\n",
              static_cast<long long>(p.m), static_cast<long long>(p.k), static_cast<long long>(p.n),
              std::max({e1, e2, e3}));
  return 0;
}
