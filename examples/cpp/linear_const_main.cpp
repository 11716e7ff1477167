//===- linear_const_main.cpp - a kernel with a constant buffer through libevo_runtime -===//
//
//   evo-opt examples/linear_const.mlir \
//     --evo-pipeline="output-dir=out inline-constant-bytes=1024" -o /dev/null
//   linear_const_main out/linear_const.json
//
// y = relu(x @ W + b) with the weight W and the bias b constants of the function. W (8 KiB) is
// over inline-constant-bytes, so evo-opt wrote it to linear_const.constants.bin as a buffer of
// role "constant": Module::load reads that file beside the manifest (size and sha256 checked),
// Module::prepare uploads it (else the first launch does), and launches bind the device copy. The
// caller passes only x and y. The program recomputes W, b and x from the formulas of
// examples/linear_const.mlir and checks y against a CPU loop in double precision.
//
// Exit codes: 0 checked, 1 wrong results or an error, 77 no usable GPU here (the manifest, its
// PTX and its constants file were still loaded and validated).
//
//===----------------------------------------------------------------------===//

#include <evo-runtime/Module.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

namespace rt = evo::runtime;

namespace {

constexpr int64_t kRows = 256, kIn = 64, kOut = 32;

// The formulas of examples/linear_const.mlir (every value exact in f32).
double weight(int64_t i, int64_t j) { return double((i * 7 + j * 3) % 11 - 5) / 4.0; }
double bias(int64_t j) { return double((j * 5) % 9 - 4) / 8.0; }
float input(int64_t r, int64_t c) { return float((r * 13 + c * 17) % 23 - 11) / 16.0f; }

bool cudaOk(cudaError_t e, const char *what) {
  if (e != cudaSuccess)
    std::fprintf(stderr, "linear_const_main: %s failed: %s\n", what, cudaGetErrorString(e));
  return e == cudaSuccess;
}

bool isF32(const rt::BufferInfo &b, std::vector<int64_t> shape) {
  return b.dtype == rt::DType::F32 && b.shape == shape;
}

/// The manifest is x f32[256, 64] -> y f32[256, 32], W f32[64, 32] among its constants.
bool checkManifest(const rt::Manifest &m) {
  std::printf("loaded %s: %zu input(s), %zu output(s), %zu launch(es), %zu constant buffer(s)",
              m.name.c_str(), m.inputs.size(), m.outputs.size(), m.launches.size(),
              m.constants.size());
  if (!m.constants.empty())
    std::printf(" in %s (%llu bytes)", m.constantsFile.file.c_str(),
                static_cast<unsigned long long>(m.constantsFile.bytes));
  std::printf("\n");
  if (m.inputs.size() != 1 || !isF32(m.buffers[m.inputs[0]], {kRows, kIn}) ||
      m.outputs.size() != 1 || !isF32(m.buffers[m.outputs[0]], {kRows, kOut}))
    return false;
  return std::any_of(m.constants.begin(), m.constants.end(), [&](unsigned c) {
    return isF32(m.buffers[c], {kIn, kOut});
  });
}

/// Uploads x, launches (inputs then outputs: no constants), copies y back.
int run(const rt::Module &mod, const std::vector<float> &x, std::vector<float> &y) {
  cudaStream_t stream = nullptr;
  void *dx = nullptr, *dy = nullptr;
  const size_t bytesX = x.size() * sizeof(float), bytesY = y.size() * sizeof(float);
  bool ok =
      cudaOk(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream") &&
      cudaOk(cudaMalloc(&dx, bytesX), "malloc x") && cudaOk(cudaMalloc(&dy, bytesY), "malloc y") &&
      cudaOk(cudaMemcpyAsync(dx, x.data(), bytesX, cudaMemcpyHostToDevice, stream), "copy x") &&
      cudaOk(cudaMemsetAsync(dy, 0xff, bytesY, stream), "poison y"); // NaN: unwritten shows
  if (ok) {
    rt::TensorRef tx(dx, rt::DType::F32, {kRows, kIn}), ty(dy, rt::DType::F32, {kRows, kOut});
    if (rt::Status s = mod.launch(stream, {tx}, {ty}); !s) {
      std::fprintf(stderr, "linear_const_main: %s\n", s.message().c_str());
      ok = false;
    }
  }
  ok = ok &&
       cudaOk(cudaMemcpyAsync(y.data(), dy, bytesY, cudaMemcpyDeviceToHost, stream), "copy y") &&
       cudaOk(cudaStreamSynchronize(stream), "sync");
  cudaFree(dx);
  cudaFree(dy);
  if (stream)
    cudaStreamDestroy(stream);
  return ok ? 0 : 1;
}

/// The worst absolute error of `y` against relu(x @ W + b) in double, or infinity when an element
/// is off by more than 1e-4 relative to sum |x W| + |b| (or NaN: unwritten).
double check(const std::vector<float> &x, const std::vector<float> &y) {
  double worst = 0;
  for (int64_t r = 0; r < kRows; ++r)
    for (int64_t j = 0; j < kOut; ++j) {
      double s = bias(j), mag = std::fabs(bias(j));
      for (int64_t c = 0; c < kIn; ++c) {
        s += double(x[r * kIn + c]) * weight(c, j);
        mag += std::fabs(double(x[r * kIn + c]) * weight(c, j));
      }
      double got = y[r * kOut + j], err = std::fabs(got - std::max(s, 0.0));
      if (!(err <= 1e-4 * std::max(mag, 1e-30))) {
        std::fprintf(stderr, "linear_const_main: y[%lld][%lld] = %.9g, expected %.9g\n",
                     static_cast<long long>(r), static_cast<long long>(j), got, std::max(s, 0.0));
        return INFINITY;
      }
      worst = std::max(worst, err);
    }
  return worst;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: linear_const_main <linear_const.json>\n");
    return 1;
  }
  rt::Expected<rt::Module> mod = rt::Module::load(argv[1]);
  if (!mod) {
    std::fprintf(stderr, "linear_const_main: %s\n", mod.error().message().c_str());
    return 1;
  }
  const rt::Manifest &man = mod->manifest();
  if (!checkManifest(man)) {
    std::fprintf(stderr,
                 "linear_const_main: %s is not relu(x @ W + b) on f32[%lld, %lld] with W "
                 "f32[%lld, %lld] a constant buffer (emit it with inline-constant-bytes=1024)\n",
                 argv[1], static_cast<long long>(kRows), static_cast<long long>(kIn),
                 static_cast<long long>(kIn), static_cast<long long>(kOut));
    return 1;
  }
  // Loads the kernels and uploads the constants into device 0's primary context (the CUDA
  // runtime's too), where the launches on run()'s stream find them.
  if (rt::Status s = mod->prepare(); !s && s.error().code() == rt::Error::Code::NoDevice) {
    std::printf("no usable GPU here (%s): the manifest, its PTX and its constants file were loaded "
                "and validated only\n",
                s.message().c_str());
    return 77;
  } else if (!s) {
    std::fprintf(stderr, "linear_const_main: %s\n", s.message().c_str());
    return 1;
  }
  std::vector<float> x(kRows * kIn), y(kRows * kOut);
  for (int64_t r = 0; r < kRows; ++r)
    for (int64_t c = 0; c < kIn; ++c)
      x[r * kIn + c] = input(r, c);
  if (run(*mod, x, y))
    return 1;
  double err = check(x, y);
  if (!(err < INFINITY))
    return 1;
  std::printf("linear_const: relu(x @ W + b), %lldx%lldx%lld, W a constant buffer uploaded by the "
              "runtime (%zu constant buffer(s)); max abs error %.1e against the CPU: OK\n",
              static_cast<long long>(kRows), static_cast<long long>(kIn),
              static_cast<long long>(kOut), man.constants.size(), err);
  return 0;
}
