//===- CudaDriver.cpp - dlopen'ing the CUDA driver -----------------------------===//

#include "evo/Runtime/CudaDriver.h"
#include "evo/Runtime/TensorMap.h"

#include <cstdlib>
#include <dlfcn.h>
#include <mutex>
#include <vector>

namespace evo::cuda {

namespace {
struct Loaded {
  Driver driver;
  bool ok = false;
  std::string why;
};

template <typename Fn>
bool bind(void *lib, Fn &slot, const char *name, std::string &missing) {
  slot = reinterpret_cast<Fn>(dlsym(lib, name));
  if (!slot)
    missing += std::string(missing.empty() ? "" : ", ") + name;
  return slot != nullptr;
}

Loaded load() {
  Loaded l;
  const char *name = std::getenv("EVO_LIBCUDA");
  if (!name || !*name)
    name = "libcuda.so.1";
  void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *err = dlerror();
    l.why = std::string("no CUDA driver: cannot load ") + name + " (" + (err ? err : "?") +
            "); is this a machine with an NVIDIA GPU?";
    return l;
  }
  Driver &d = l.driver;
  std::string missing;
  // Versioned names are the ones the current driver ABI exports for these calls.
  bind(lib, d.cuInit, "cuInit", missing);
  bind(lib, d.cuDriverGetVersion, "cuDriverGetVersion", missing);
  bind(lib, d.cuGetErrorString, "cuGetErrorString", missing);
  bind(lib, d.cuGetErrorName, "cuGetErrorName", missing);
  bind(lib, d.cuDeviceGet, "cuDeviceGet", missing);
  bind(lib, d.cuDeviceGetCount, "cuDeviceGetCount", missing);
  bind(lib, d.cuDeviceGetName, "cuDeviceGetName", missing);
  bind(lib, d.cuDeviceGetAttribute, "cuDeviceGetAttribute", missing);
  bind(lib, d.cuDeviceGetUuid, "cuDeviceGetUuid_v2", missing);
  bind(lib, d.cuDeviceTotalMem, "cuDeviceTotalMem_v2", missing);
  bind(lib, d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", missing);
  bind(lib, d.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", missing);
  bind(lib, d.cuCtxSetCurrent, "cuCtxSetCurrent", missing);
  bind(lib, d.cuCtxGetCurrent, "cuCtxGetCurrent", missing);
  bind(lib, d.cuCtxPushCurrent, "cuCtxPushCurrent_v2", missing);
  bind(lib, d.cuCtxPopCurrent, "cuCtxPopCurrent_v2", missing);
  bind(lib, d.cuCtxSynchronize, "cuCtxSynchronize", missing);
  bind(lib, d.cuMemAlloc, "cuMemAlloc_v2", missing);
  bind(lib, d.cuMemAllocManaged, "cuMemAllocManaged", missing);
  bind(lib, d.cuMemFree, "cuMemFree_v2", missing);
  bind(lib, d.cuMemGetInfo, "cuMemGetInfo_v2", missing);
  bind(lib, d.cuMemcpy, "cuMemcpy", missing);
  bind(lib, d.cuMemcpyAsync, "cuMemcpyAsync", missing);
  bind(lib, d.cuMemcpyHtoD, "cuMemcpyHtoD_v2", missing);
  bind(lib, d.cuMemcpyDtoH, "cuMemcpyDtoH_v2", missing);
  bind(lib, d.cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", missing);
  bind(lib, d.cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", missing);
  bind(lib, d.cuMemsetD8, "cuMemsetD8_v2", missing);
  bind(lib, d.cuMemsetD8Async, "cuMemsetD8Async", missing);
  bind(lib, d.cuMemsetD16Async, "cuMemsetD16Async", missing);
  bind(lib, d.cuMemsetD32Async, "cuMemsetD32Async", missing);
  bind(lib, d.cuMemHostRegister, "cuMemHostRegister_v2", missing);
  bind(lib, d.cuMemHostUnregister, "cuMemHostUnregister", missing);
  bind(lib, d.cuModuleLoadData, "cuModuleLoadData", missing);
  bind(lib, d.cuModuleLoadDataEx, "cuModuleLoadDataEx", missing);
  bind(lib, d.cuModuleUnload, "cuModuleUnload", missing);
  bind(lib, d.cuModuleGetFunction, "cuModuleGetFunction", missing);
  bind(lib, d.cuFuncSetAttribute, "cuFuncSetAttribute", missing);
  bind(lib, d.cuLaunchKernel, "cuLaunchKernel", missing);
  bind(lib, d.cuStreamCreate, "cuStreamCreate", missing);
  bind(lib, d.cuStreamDestroy, "cuStreamDestroy_v2", missing);
  bind(lib, d.cuStreamSynchronize, "cuStreamSynchronize", missing);
  bind(lib, d.cuStreamQuery, "cuStreamQuery", missing);
  bind(lib, d.cuStreamWaitEvent, "cuStreamWaitEvent", missing);
  bind(lib, d.cuEventCreate, "cuEventCreate", missing);
  bind(lib, d.cuEventDestroy, "cuEventDestroy_v2", missing);
  bind(lib, d.cuEventRecord, "cuEventRecord", missing);
  bind(lib, d.cuEventSynchronize, "cuEventSynchronize", missing);
  bind(lib, d.cuEventElapsedTime, "cuEventElapsedTime", missing);
  // Optional: thread block clusters (CUDA 11.8+ drivers).
  d.cuLaunchKernelEx =
      reinterpret_cast<decltype(d.cuLaunchKernelEx)>(dlsym(lib, "cuLaunchKernelEx"));
  // Optional: TMA tensor maps (CUDA 12.0+ drivers).
  d.cuTensorMapEncodeTiled = reinterpret_cast<decltype(d.cuTensorMapEncodeTiled)>(
      dlsym(lib, "cuTensorMapEncodeTiled"));
  if (!missing.empty()) {
    l.why = std::string(name) + " lacks entry points evo needs: " + missing;
    return l;
  }
  if (CUresult rc = d.cuInit(0); rc != CUDA_SUCCESS) {
    l.why = d.describe("cuInit", rc) + " (no usable GPU)";
    return l;
  }
  int count = 0;
  if (d.cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0) {
    l.why = "the CUDA driver sees no GPU";
    return l;
  }
  l.ok = true;
  return l;
}
} // namespace

Driver *Driver::get(std::string *whyNot) {
  static Loaded loaded = load();
  if (!loaded.ok) {
    if (whyNot)
      *whyNot = loaded.why;
    return nullptr;
  }
  return &loaded.driver;
}

std::string Driver::describe(const char *call, CUresult rc) const {
  const char *name = nullptr, *text = nullptr;
  if (cuGetErrorName)
    cuGetErrorName(rc, &name);
  if (cuGetErrorString)
    cuGetErrorString(rc, &text);
  return std::string(call) + " failed: " + (name ? name : "CUDA error " + std::to_string(rc)) +
         (text ? std::string(" (") + text + ")" : std::string());
}

bool encodeTensorMap(Driver &d, CUtensorMap &out, const std::string &elementType,
                     CUdeviceptr globalAddress, uint64_t sourceBytes, const int64_t *dims,
                     const int64_t *strides, const int64_t *box, size_t rank, int64_t swizzle,
                     std::string &error) {
  namespace tm = evo::tensormap;
  out = CUtensorMap{};
  tm::ElementInfo info;
  if (!tm::elementInfo(elementType, info)) {
    error = "element type '" + elementType + "' is not one TMA supports (" +
            tm::kSupportedElementTypes + ")";
    return false;
  }
  std::vector<int64_t> dv(dims, dims + rank), bv(box, box + rank);
  std::vector<int64_t> sv(strides, strides + (rank ? rank - 1 : 0));
  error = tm::check(dv, sv, bv, swizzle, info.bytes, sourceBytes);
  if (!error.empty())
    return false;
  if (globalAddress % tm::kSourceAlign != 0) {
    error = "the source's address is not 16-byte aligned";
    return false;
  }
  if (!d.cuTensorMapEncodeTiled) {
    error = "the CUDA driver has no cuTensorMapEncodeTiled (TMA needs a CUDA 12 driver)";
    return false;
  }
  uint64_t gdim[tm::kMaxRank], gstride[tm::kMaxRank];
  uint32_t boxDim[tm::kMaxRank], elementStrides[tm::kMaxRank];
  for (size_t i = 0; i < rank; ++i) {
    gdim[i] = static_cast<uint64_t>(dims[i]);
    boxDim[i] = static_cast<uint32_t>(box[i]);
    elementStrides[i] = 1;
    if (i + 1 < rank)
      gstride[i] = static_cast<uint64_t>(strides[i]);
  }
  CUresult rc = d.cuTensorMapEncodeTiled(
      &out, info.dataType, static_cast<uint32_t>(rank), reinterpret_cast<void *>(globalAddress),
      gdim, gstride, boxDim, elementStrides, tm::kInterleaveNone, tm::swizzleEnum(swizzle),
      tm::kL2Promotion256B, tm::kOobFillNone);
  if (rc != CUDA_SUCCESS) {
    error = d.describe("cuTensorMapEncodeTiled", rc);
    return false;
  }
  return true;
}

CUresult makePrimaryContextCurrent(Driver &d, int ordinal, std::string *error) {
  static std::mutex mutex;
  static CUcontext contexts[64] = {};
  if (ordinal < 0 || ordinal >= 64)
    return 101; // CUDA_ERROR_INVALID_DEVICE
  CUcontext ctx;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!contexts[ordinal]) {
      CUdevice dev;
      CUresult rc = d.cuDeviceGet(&dev, ordinal);
      if (rc == CUDA_SUCCESS)
        rc = d.cuDevicePrimaryCtxRetain(&contexts[ordinal], dev);
      if (rc != CUDA_SUCCESS) {
        if (error)
          *error = d.describe("cuDevicePrimaryCtxRetain", rc);
        return rc;
      }
    }
    ctx = contexts[ordinal];
  }
  CUresult rc = d.cuCtxSetCurrent(ctx);
  if (rc != CUDA_SUCCESS && error)
    *error = d.describe("cuCtxSetCurrent", rc);
  return rc;
}

} // namespace evo::cuda
