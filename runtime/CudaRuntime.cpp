//===- CudaRuntime.cpp - the mgpu* ABI that gpu-to-llvm code calls ------------===//
//
// libevo_cuda_runtime.so: the functions that upstream MLIR's `gpu-to-llvm` lowering (LLVM 22)
// emits calls to, implemented on the CUDA driver API that EvoRuntime loads with dlopen. Debian's
// MLIR ships no mlir_cuda_runtime; this is evo's, usable with mlir-runner and evo-runner
// (`--shared-libs=`) and with ahead-of-time compiled code alike.
//
// Conventions (docs/runtime.md):
//  * every entry point makes the primary context of the default device (mgpuSetDefaultDevice,
//    0 unless set; per thread) current first;
//  * a failing driver call prints `evo_cuda_runtime: <call> failed: <NAME> (<text>)` to stderr
//    and the entry point returns (null where it returns a handle), like upstream's wrappers;
//  * without a usable driver or GPU the first call prints `evo_cuda_runtime: no CUDA driver: ...`
//    and ends the process with exit code 1: every handle would be null and the program could only
//    go on to crash or print wrong results.
//
//===----------------------------------------------------------------------===//

#include "evo/Runtime/CudaDriver.h"
#include "evo/Runtime/TensorMap.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#define EVO_EXPORT extern "C" __attribute__((visibility("default")))

using namespace evo::cuda;

namespace {

/// The device whose primary context the entry points make current (mgpuSetDefaultDevice).
thread_local int defaultDevice = 0;

/// Dynamic shared memory above this needs an explicit opt-in per function.
constexpr int32_t kDefaultDynamicSharedLimit = 48 * 1024;

[[noreturn]] void exitWithoutDriver(const char *entry, std::string why) {
  // Driver::get's reason may already start with the marker; say it once.
  const std::string marker = "no CUDA driver: ";
  if (why.compare(0, marker.size(), marker) == 0)
    why.erase(0, marker.size());
  std::fflush(stdout);
  std::fprintf(stderr, "evo_cuda_runtime: no CUDA driver: %s (first call: %s)\n", why.c_str(),
               entry);
  std::fflush(stderr);
  // Not abort(): no core file and no crash report from the JIT's signal handlers for what is a
  // property of the machine. Not exit(): this may run inside a global constructor of JIT'ed code.
  std::_Exit(1);
}

/// The loaded driver, or the end of the process.
Driver &driver(const char *entry) {
  static std::string why;
  static Driver *loaded = Driver::get(&why);
  if (!loaded)
    exitWithoutDriver(entry, why);
  return *loaded;
}

/// Prints a failed driver call; returns whether `rc` is success.
bool check(Driver &d, const std::string &call, CUresult rc) {
  if (rc == CUDA_SUCCESS)
    return true;
  std::fprintf(stderr, "evo_cuda_runtime: %s\n", d.describe(call.c_str(), rc).c_str());
  return false;
}

/// Like check(), but silent about CUDA_ERROR_DEINITIALIZED: releases that run from global
/// destructors after the driver has shut down at process exit have nothing left to release.
bool checkRelease(Driver &d, const char *call, CUresult rc) {
  return rc == CUDA_ERROR_DEINITIALIZED || check(d, call, rc);
}

/// The start of every entry point: the driver, with the default device's primary context current.
Driver &enter(const char *entry) {
  Driver &d = driver(entry);
  std::string error;
  CUresult rc = makePrimaryContextCurrent(d, defaultDevice, &error);
  if (rc != CUDA_SUCCESS && rc != CUDA_ERROR_DEINITIALIZED) {
    if (error.empty())
      error = d.describe("cuDeviceGet", rc);
    std::fprintf(stderr, "evo_cuda_runtime: %s (device %d)\n", error.c_str(), defaultDevice);
  }
  return d;
}

/// Checks that launch dimensions fit the driver's unsigned ints (the ABI passes index values).
bool toDims(const char *entry, const char *what, int64_t x, int64_t y, int64_t z,
            unsigned (&out)[3]) {
  const int64_t in[3] = {x, y, z};
  for (int i = 0; i < 3; ++i) {
    if (in[i] < 1 || in[i] > int64_t(UINT32_MAX)) {
      std::fprintf(stderr,
                   "evo_cuda_runtime: %s: %s size (%lld, %lld, %lld) is out of range; "
                   "kernel not launched\n",
                   entry, what, (long long)x, (long long)y, (long long)z);
      return false;
    }
    out[i] = unsigned(in[i]);
  }
  return true;
}

/// Opts `function` in to `bytes` of dynamic shared memory when that is above the default limit.
bool prepareSharedMemory(Driver &d, const char *entry, CUfunction function, int32_t bytes) {
  if (bytes < 0) {
    std::fprintf(stderr,
                 "evo_cuda_runtime: %s: negative dynamic shared memory size %d; kernel not "
                 "launched\n",
                 entry, bytes);
    return false;
  }
  if (bytes <= kDefaultDynamicSharedLimit)
    return true;
  if (check(d, "cuFuncSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)",
            d.cuFuncSetAttribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes)))
    return true;
  CUdevice device;
  int optIn = 0;
  if (d.cuDeviceGet(&device, defaultDevice) == CUDA_SUCCESS &&
      d.cuDeviceGetAttribute(&optIn, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                             device) == CUDA_SUCCESS)
    std::fprintf(stderr,
                 "evo_cuda_runtime: %s: %d bytes of dynamic shared memory requested, device %d "
                 "allows at most %d per block (static shared memory included); kernel not "
                 "launched\n",
                 entry, bytes, defaultDevice, optIn);
  return false;
}

/// cuModuleLoadDataEx with the JIT's error log, printed when loading fails. `optLevel` < 0 leaves
/// the optimization level at the driver's default.
CUmodule loadModule(Driver &d, const void *image, int optLevel) {
  static constexpr unsigned kLogBytes = 16 * 1024;
  std::string log(kLogBytes, '\0');
  int options[3];
  void *values[3];
  unsigned count = 0;
  options[count] = CU_JIT_ERROR_LOG_BUFFER;
  values[count++] = &log[0];
  options[count] = CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES;
  values[count++] = reinterpret_cast<void *>(uintptr_t(kLogBytes));
  if (optLevel >= 0) {
    options[count] = CU_JIT_OPTIMIZATION_LEVEL;
    values[count++] = reinterpret_cast<void *>(uintptr_t(std::min(optLevel, 4)));
  }
  CUmodule module = nullptr;
  if (!check(d, "cuModuleLoadDataEx",
             d.cuModuleLoadDataEx(&module, image, count, options, values))) {
    log.resize(log.find('\0') == std::string::npos ? log.size() : log.find('\0'));
    if (!log.empty())
      std::fprintf(stderr, "evo_cuda_runtime: JIT log:\n%s\n", log.c_str());
    return nullptr;
  }
  return module;
}

/// The bytes that a strided memref spans, from MLIR's descriptor
/// {allocated, aligned, offset, sizes[rank], strides[rank]}; empty for a memref without elements.
struct Span {
  char *begin = nullptr;
  uint64_t bytes = 0;
};

Span memrefSpan(int64_t rank, const void *descriptor, int64_t elementBytes) {
  struct Header {
    void *allocated;
    void *aligned;
    int64_t offset;
  };
  if (!descriptor || rank < 0 || elementBytes <= 0)
    return {};
  const auto *header = static_cast<const Header *>(descriptor);
  const auto *sizes = reinterpret_cast<const int64_t *>(header + 1);
  const int64_t *strides = sizes + rank;
  // Lowest and highest element reached, relative to the offset (strides may be negative).
  int64_t lo = 0, hi = 0;
  for (int64_t i = 0; i < rank; ++i) {
    if (sizes[i] <= 0)
      return {};
    int64_t reach = (sizes[i] - 1) * strides[i];
    (reach < 0 ? lo : hi) += reach;
  }
  Span span;
  span.begin = static_cast<char *>(header->aligned) + (header->offset + lo) * elementBytes;
  span.bytes = uint64_t(hi - lo + 1) * uint64_t(elementBytes);
  return span;
}

CUdeviceptr devicePtr(const void *p) { return CUdeviceptr(reinterpret_cast<uintptr_t>(p)); }

} // namespace

//===----------------------------------------------------------------------===//
// Modules and launches
//===----------------------------------------------------------------------===//

/// PTX text (NUL-terminated), JIT-compiled by the driver at `optLevel` (0-4).
EVO_EXPORT void *mgpuModuleLoadJIT(void *data, int32_t optLevel) {
  Driver &d = enter("mgpuModuleLoadJIT");
  return loadModule(d, data, std::max(optLevel, 0));
}

/// A cubin or fatbin image; `size` is implied by the image itself.
EVO_EXPORT void *mgpuModuleLoad(void *data, int64_t /*size*/) {
  Driver &d = enter("mgpuModuleLoad");
  return loadModule(d, data, /*optLevel=*/-1);
}

EVO_EXPORT void mgpuModuleUnload(void *module) {
  if (!module) // its load failed and said so
    return;
  Driver &d = enter("mgpuModuleUnload");
  checkRelease(d, "cuModuleUnload", d.cuModuleUnload(static_cast<CUmodule>(module)));
}

EVO_EXPORT void *mgpuModuleGetFunction(void *module, const char *name) {
  Driver &d = enter("mgpuModuleGetFunction");
  CUfunction function = nullptr;
  check(d, std::string("cuModuleGetFunction(") + (name ? name : "<null>") + ")",
        d.cuModuleGetFunction(&function, static_cast<CUmodule>(module), name));
  return function;
}

/// `params` points to `paramsCount` pointers to the argument values (cuLaunchKernel's layout).
EVO_EXPORT void mgpuLaunchKernel(void *function, int64_t gridX, int64_t gridY, int64_t gridZ,
                                 int64_t blockX, int64_t blockY, int64_t blockZ, int32_t smem,
                                 void *stream, void **params, void **extra,
                                 int64_t /*paramsCount*/) {
  const char *entry = "mgpuLaunchKernel";
  Driver &d = enter(entry);
  auto fn = static_cast<CUfunction>(function);
  unsigned grid[3], block[3];
  if (!toDims(entry, "grid", gridX, gridY, gridZ, grid) ||
      !toDims(entry, "block", blockX, blockY, blockZ, block) ||
      !prepareSharedMemory(d, entry, fn, smem))
    return;
  check(d, "cuLaunchKernel",
        d.cuLaunchKernel(fn, grid[0], grid[1], grid[2], block[0], block[1], block[2],
                         unsigned(smem), static_cast<CUstream>(stream), params, extra));
}

/// A launch with thread block clusters (sm_90+); the grid counts blocks, not clusters.
EVO_EXPORT void mgpuLaunchClusterKernel(void *function, int64_t clusterX, int64_t clusterY,
                                        int64_t clusterZ, int64_t gridX, int64_t gridY,
                                        int64_t gridZ, int64_t blockX, int64_t blockY,
                                        int64_t blockZ, int32_t smem, void *stream, void **params,
                                        void **extra) {
  const char *entry = "mgpuLaunchClusterKernel";
  Driver &d = enter(entry);
  if (!d.cuLaunchKernelEx) {
    std::fprintf(stderr,
                 "evo_cuda_runtime: %s: this CUDA driver has no cuLaunchKernelEx "
                 "(clusters need a CUDA 11.8 or newer driver); kernel not launched\n",
                 entry);
    return;
  }
  auto fn = static_cast<CUfunction>(function);
  unsigned cluster[3], grid[3], block[3];
  if (!toDims(entry, "cluster", clusterX, clusterY, clusterZ, cluster) ||
      !toDims(entry, "grid", gridX, gridY, gridZ, grid) ||
      !toDims(entry, "block", blockX, blockY, blockZ, block) ||
      !prepareSharedMemory(d, entry, fn, smem))
    return;
  // More than 8 blocks per cluster is non-portable and needs an opt-in (16 on sm_90).
  if (uint64_t(cluster[0]) * cluster[1] * cluster[2] > 8 &&
      !check(d, "cuFuncSetAttribute(CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED)",
             d.cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1)))
    return;
  CUlaunchAttribute attribute;
  attribute.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attribute.value.clusterDim.x = cluster[0];
  attribute.value.clusterDim.y = cluster[1];
  attribute.value.clusterDim.z = cluster[2];
  CUlaunchConfig config;
  config.gridDimX = grid[0];
  config.gridDimY = grid[1];
  config.gridDimZ = grid[2];
  config.blockDimX = block[0];
  config.blockDimY = block[1];
  config.blockDimZ = block[2];
  config.sharedMemBytes = unsigned(smem);
  config.hStream = static_cast<CUstream>(stream);
  config.attrs = &attribute;
  config.numAttrs = 1;
  check(d, "cuLaunchKernelEx", d.cuLaunchKernelEx(&config, fn, params, extra));
}

//===----------------------------------------------------------------------===//
// Streams and events
//===----------------------------------------------------------------------===//

EVO_EXPORT void *mgpuStreamCreate() {
  Driver &d = enter("mgpuStreamCreate");
  CUstream stream = nullptr;
  check(d, "cuStreamCreate", d.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  return stream;
}

EVO_EXPORT void mgpuStreamDestroy(void *stream) {
  if (!stream)
    return;
  Driver &d = enter("mgpuStreamDestroy");
  checkRelease(d, "cuStreamDestroy", d.cuStreamDestroy(static_cast<CUstream>(stream)));
}

EVO_EXPORT void mgpuStreamSynchronize(void *stream) {
  Driver &d = enter("mgpuStreamSynchronize");
  check(d, "cuStreamSynchronize", d.cuStreamSynchronize(static_cast<CUstream>(stream)));
}

EVO_EXPORT void mgpuStreamWaitEvent(void *stream, void *event) {
  Driver &d = enter("mgpuStreamWaitEvent");
  check(d, "cuStreamWaitEvent",
        d.cuStreamWaitEvent(static_cast<CUstream>(stream), static_cast<CUevent>(event), 0));
}

EVO_EXPORT void *mgpuEventCreate() {
  Driver &d = enter("mgpuEventCreate");
  CUevent event = nullptr;
  check(d, "cuEventCreate", d.cuEventCreate(&event, CU_EVENT_DISABLE_TIMING));
  return event;
}

EVO_EXPORT void mgpuEventDestroy(void *event) {
  if (!event)
    return;
  Driver &d = enter("mgpuEventDestroy");
  checkRelease(d, "cuEventDestroy", d.cuEventDestroy(static_cast<CUevent>(event)));
}

EVO_EXPORT void mgpuEventSynchronize(void *event) {
  Driver &d = enter("mgpuEventSynchronize");
  check(d, "cuEventSynchronize", d.cuEventSynchronize(static_cast<CUevent>(event)));
}

EVO_EXPORT void mgpuEventRecord(void *event, void *stream) {
  Driver &d = enter("mgpuEventRecord");
  check(d, "cuEventRecord",
        d.cuEventRecord(static_cast<CUevent>(event), static_cast<CUstream>(stream)));
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

/// Device memory, or managed memory (reachable from host and device) when `isHostShared`.
/// Allocation does not wait for `stream`.
EVO_EXPORT void *mgpuMemAlloc(uint64_t bytes, void * /*stream*/, int8_t isHostShared) {
  Driver &d = enter("mgpuMemAlloc");
  if (bytes == 0) // a memref without elements; never dereferenced
    return nullptr;
  CUdeviceptr ptr = 0;
  if (isHostShared)
    check(d, "cuMemAllocManaged", d.cuMemAllocManaged(&ptr, bytes, CU_MEM_ATTACH_GLOBAL));
  else
    check(d, "cuMemAlloc", d.cuMemAlloc(&ptr, bytes));
  return reinterpret_cast<void *>(uintptr_t(ptr));
}

/// Frees once the work queued on `stream` so far (which may still use `ptr`) has finished.
EVO_EXPORT void mgpuMemFree(void *ptr, void *stream) {
  if (!ptr)
    return;
  Driver &d = enter("mgpuMemFree");
  if (stream)
    check(d, "cuStreamSynchronize", d.cuStreamSynchronize(static_cast<CUstream>(stream)));
  checkRelease(d, "cuMemFree", d.cuMemFree(devicePtr(ptr)));
}

/// Any direction: with unified addressing the driver tells host from device pointers.
EVO_EXPORT void mgpuMemcpy(void *dst, void *src, uint64_t bytes, void *stream) {
  Driver &d = enter("mgpuMemcpy");
  if (bytes == 0)
    return;
  check(d, "cuMemcpyAsync",
        d.cuMemcpyAsync(devicePtr(dst), devicePtr(src), bytes, static_cast<CUstream>(stream)));
}

/// Encodes the TMA tensor map of a plan buffer (evo-lower-to-gpu's host functions call it, see
/// lib/Conversion/HostFunction.cpp): checks the arguments (evo/Runtime/TensorMap.h), encodes
/// with cuTensorMapEncodeTiled over `src` and copies the 128 bytes to the device buffer `dst`.
/// On failure it prints why and zeroes `dst` (an invalid descriptor: the kernel's TMA
/// operations fault instead of reading the wrong memory).
EVO_EXPORT void mgpuEvoTensorMapEncodeTiled(int64_t dst, int64_t src, int64_t dataType,
                                            int64_t elementBytes, int64_t rank, int64_t swizzle,
                                            int64_t sourceBytes, int64_t d0, int64_t d1,
                                            int64_t d2, int64_t d3, int64_t d4, int64_t s0,
                                            int64_t s1, int64_t s2, int64_t s3, int64_t b0,
                                            int64_t b1, int64_t b2, int64_t b3, int64_t b4) {
  Driver &d = enter("mgpuEvoTensorMapEncodeTiled");
  CUdeviceptr out = static_cast<CUdeviceptr>(dst);
  const int64_t dims[] = {d0, d1, d2, d3, d4}, strides[] = {s0, s1, s2, s3},
                box[] = {b0, b1, b2, b3, b4};
  const char *elt = evo::tensormap::elementName(static_cast<int>(dataType));
  std::string error;
  CUtensorMap map;
  if (!elt || rank < 1 || rank > 5 || sourceBytes < 0)
    error = "invalid arguments (data type " + std::to_string(dataType) + ", rank " +
            std::to_string(rank) + ")";
  else if (encodeTensorMap(d, map, elt, static_cast<CUdeviceptr>(src),
                           static_cast<uint64_t>(sourceBytes), dims, strides, box,
                           static_cast<size_t>(rank), swizzle, error) &&
           check(d, "cuMemcpyHtoD", d.cuMemcpyHtoD(out, &map, sizeof map)))
    return;
  (void)elementBytes;
  if (!error.empty())
    std::fprintf(stderr, "evo_cuda_runtime: mgpuEvoTensorMapEncodeTiled: %s\n", error.c_str());
  check(d, "cuMemsetD8", d.cuMemsetD8(out, 0, sizeof(CUtensorMap)));
}

/// Sets `count` 32-bit elements.
EVO_EXPORT void mgpuMemset32(void *dst, uint32_t value, uint64_t count, void *stream) {
  Driver &d = enter("mgpuMemset32");
  if (count == 0)
    return;
  check(d, "cuMemsetD32Async",
        d.cuMemsetD32Async(devicePtr(dst), value, count, static_cast<CUstream>(stream)));
}

/// Sets `count` 16-bit elements.
EVO_EXPORT void mgpuMemset16(void *dst, uint16_t value, uint64_t count, void *stream) {
  Driver &d = enter("mgpuMemset16");
  if (count == 0)
    return;
  check(d, "cuMemsetD16Async",
        d.cuMemsetD16Async(devicePtr(dst), value, count, static_cast<CUstream>(stream)));
}

/// Page-locks host memory and maps it for the devices (same address under unified addressing).
EVO_EXPORT void mgpuMemHostRegister(void *ptr, uint64_t bytes) {
  Driver &d = enter("mgpuMemHostRegister");
  if (!ptr || bytes == 0)
    return;
  check(
      d, "cuMemHostRegister",
      d.cuMemHostRegister(ptr, bytes, CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP));
}

EVO_EXPORT void mgpuMemHostUnregister(void *ptr) {
  if (!ptr)
    return;
  Driver &d = enter("mgpuMemHostUnregister");
  checkRelease(d, "cuMemHostUnregister", d.cuMemHostUnregister(ptr));
}

/// Registers the bytes that the ranked memref `descriptor` spans, from its aligned pointer and
/// offset (any strides, also non-contiguous ones).
EVO_EXPORT void mgpuMemHostRegisterMemRef(int64_t rank, void *descriptor, int64_t elementBytes) {
  Span span = memrefSpan(rank, descriptor, elementBytes);
  mgpuMemHostRegister(span.begin, span.bytes);
}

EVO_EXPORT void mgpuMemHostUnregisterMemRef(int64_t rank, void *descriptor, int64_t elementBytes) {
  Span span = memrefSpan(rank, descriptor, elementBytes);
  if (span.bytes)
    mgpuMemHostUnregister(span.begin);
}

/// Later calls on this thread use `device`'s primary context.
EVO_EXPORT void mgpuSetDefaultDevice(int32_t device) {
  defaultDevice = device;
  enter("mgpuSetDefaultDevice");
}
