//===- row_sum_main.cpp - run an emitted row-sum kernel through libevo_runtime -===//
//
//   evo-opt examples/row_sum.mlir --evo-pipeline=output-dir=out -o /dev/null
//   row_sum_main out/row_sum.json
//
// Loads the manifest and its PTX with evo::runtime::Module, runs it on the GPU on a stream of its
// own, and checks every row sum against a CPU loop in double precision. Device memory comes from
// the CUDA runtime (cudaMalloc), as in any CUDA program: libevo_runtime takes pointers and a
// stream and allocates nothing but the optional workspace.
//
// Exit codes: 0 checked, 1 wrong results or an error, 77 no usable GPU here (the manifest was
// still loaded and validated).
//
//===----------------------------------------------------------------------===//

#include <evo-runtime/Module.h>

#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

namespace rt = evo::runtime;

#define CUDA_OK(call)                                                                              \
  do {                                                                                             \
    cudaError_t e_ = (call);                                                                       \
    if (e_ != cudaSuccess) {                                                                       \
      std::fprintf(stderr, "row_sum_main: %s failed: %s\n", #call, cudaGetErrorString(e_));        \
      return 1;                                                                                    \
    }                                                                                              \
  } while (0)

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: row_sum_main <row_sum.json>\n");
    return 1;
  }
  rt::Expected<rt::Module> mod = rt::Module::load(argv[1]);
  if (!mod) {
    std::fprintf(stderr, "row_sum_main: %s\n", mod.error().message().c_str());
    return 1;
  }
  const rt::Manifest &m = mod->manifest();
  std::printf("loaded %s: %zu input(s), %zu output(s), %zu launch(es), workspace %zu bytes "
              "(libevo_runtime %s)\n",
              m.name.c_str(), m.inputs.size(), m.outputs.size(), m.launches.size(),
              mod->workspaceBytes(), rt::version());
  // A row sum: x f32[rows, cols] -> y f32[rows].
  if (m.inputs.size() != 1 || m.outputs.size() != 1) {
    std::fprintf(stderr, "row_sum_main: %s is not a row sum (1 input, 1 output)\n", argv[1]);
    return 1;
  }
  const rt::BufferInfo &in = m.buffers[m.inputs[0]], &out = m.buffers[m.outputs[0]];
  if (in.dtype != rt::DType::F32 || out.dtype != rt::DType::F32 || in.shape.size() != 2 ||
      out.shape.size() != 1 || out.shape[0] != in.shape[0]) {
    std::fprintf(stderr, "row_sum_main: %s is not a row sum of a 2-D f32 tensor\n", argv[1]);
    return 1;
  }
  const int64_t rows = in.shape[0], cols = in.shape[1];

  int devices = 0;
  if (cudaError_t e = cudaGetDeviceCount(&devices); e != cudaSuccess || devices == 0) {
    std::printf("no usable GPU here (%s): the manifest and its PTX were loaded and validated only\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "no device");
    return 77;
  }

  std::vector<float> x(static_cast<size_t>(rows * cols)), y(static_cast<size_t>(rows), NAN);
  std::mt19937 gen(42);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (float &v : x)
    v = dist(gen);

  cudaStream_t stream;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  void *dx = nullptr, *dy = nullptr;
  CUDA_OK(cudaMalloc(&dx, x.size() * sizeof(float)));
  CUDA_OK(cudaMalloc(&dy, y.size() * sizeof(float)));
  CUDA_OK(cudaMemcpyAsync(dx, x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice, stream));
  CUDA_OK(cudaMemsetAsync(dy, 0xff, y.size() * sizeof(float), stream)); // NaN: unwritten shows

  // Scratch buffers (if the plan has any) live in a workspace owned by the caller.
  rt::Expected<rt::Workspace> ws = mod->allocateWorkspace(stream);
  if (!ws) {
    std::fprintf(stderr, "row_sum_main: %s\n", ws.error().message().c_str());
    return 1;
  }
  rt::TensorRef tx(dx, rt::DType::F32, {rows, cols}), ty(dy, rt::DType::F32, {rows});

  // Errors are values: a wrong shape is refused before anything reaches the GPU.
  rt::TensorRef wrong(dx, rt::DType::F32, {rows, cols + 1});
  rt::Status refused = mod->launch(stream, {wrong}, {ty}, ws->ref());
  if (refused.ok() || refused.error().code() != rt::Error::Code::InvalidArgument) {
    std::fprintf(stderr, "row_sum_main: a wrong shape was not refused\n");
    return 1;
  }
  std::printf("refused as expected: %s\n", refused.message().c_str());

  if (rt::Status s = mod->launch(stream, {tx}, {ty}, ws->ref()); !s) {
    std::fprintf(stderr, "row_sum_main: %s\n", s.message().c_str());
    return 1;
  }
  CUDA_OK(cudaMemcpyAsync(y.data(), dy, y.size() * sizeof(float), cudaMemcpyDeviceToHost, stream));
  CUDA_OK(cudaStreamSynchronize(stream));

  double worst = 0;
  for (int64_t r = 0; r < rows; ++r) {
    double want = 0, mag = 0;
    for (int64_t c = 0; c < cols; ++c) {
      want += x[static_cast<size_t>(r * cols + c)];
      mag += std::fabs(x[static_cast<size_t>(r * cols + c)]);
    }
    double err = std::fabs(y[static_cast<size_t>(r)] - want) / std::max(mag, 1e-30);
    if (!(err <= 1e-5)) { // also catches NaN: an unwritten row
      std::printf("row_sum_main: row %lld: got %.9g, expected %.9g: FAIL\n",
                  static_cast<long long>(r), y[static_cast<size_t>(r)], want);
      return 1;
    }
    worst = std::max(worst, err);
  }
  std::printf("row_sum: %lld rows of %lld checked against the CPU, worst error %.2e "
              "(relative to the sum of magnitudes): OK\n",
              static_cast<long long>(rows), static_cast<long long>(cols), worst);
  cudaFree(dx);
  cudaFree(dy);
  cudaStreamDestroy(stream);
  return 0;
}
