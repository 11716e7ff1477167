//===- CudaDriver.h - the CUDA driver API, loaded at run time -----*- C++ -*-===//
//
// evo-opt, its runtime library and its GPU worker never link libcuda: they dlopen
// libcuda.so.1 on first use, so every binary starts on machines without a GPU and says clearly
// why GPU work is impossible there. Plain C++ (no LLVM), shared by libevo_cuda_runtime.so and
// evo-eval-worker.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_RUNTIME_CUDADRIVER_H
#define EVO_RUNTIME_CUDADRIVER_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace evo::cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUevent = struct CUevent_st *;

inline constexpr CUresult CUDA_SUCCESS = 0;
inline constexpr CUresult CUDA_ERROR_NOT_READY = 600;
inline constexpr CUresult CUDA_ERROR_DEINITIALIZED = 4;
// CUdevice_attribute values used by evo.
inline constexpr int CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
inline constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
inline constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
inline constexpr int CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38;
inline constexpr int CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13;
inline constexpr int CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 36;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97;
// CUfunction_attribute
inline constexpr int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;
inline constexpr int CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 14;
// CUjit_option
inline constexpr int CU_JIT_ERROR_LOG_BUFFER = 5;
inline constexpr int CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6;
inline constexpr int CU_JIT_OPTIMIZATION_LEVEL = 7;
// CUlaunchAttributeID
inline constexpr int CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4;
// Flags
inline constexpr unsigned CU_MEMHOSTREGISTER_PORTABLE = 1;
inline constexpr unsigned CU_MEMHOSTREGISTER_DEVICEMAP = 2;
inline constexpr unsigned CU_MEM_ATTACH_GLOBAL = 1;
inline constexpr unsigned CU_STREAM_NON_BLOCKING = 1;
inline constexpr unsigned CU_EVENT_DEFAULT = 0;
inline constexpr unsigned CU_EVENT_DISABLE_TIMING = 2;

/// cuda.h's CUlaunchAttribute: the id padded to 8 bytes, then a 64-byte value union of which evo
/// only uses the cluster dimensions.
struct CUlaunchAttribute {
  int id = 0;
  char pad[4] = {};
  union {
    char bytes[64];
    struct {
      unsigned x, y, z;
    } clusterDim;
  } value = {};
};
static_assert(sizeof(CUlaunchAttribute) == 72, "layout of cuda.h's CUlaunchAttribute");

/// cuda.h's CUlaunchConfig (the argument of cuLaunchKernelEx).
struct CUlaunchConfig {
  unsigned gridDimX = 1, gridDimY = 1, gridDimZ = 1;
  unsigned blockDimX = 1, blockDimY = 1, blockDimZ = 1;
  unsigned sharedMemBytes = 0;
  CUstream hStream = nullptr;
  CUlaunchAttribute *attrs = nullptr;
  unsigned numAttrs = 0;
};
static_assert(sizeof(CUlaunchConfig) == 56, "layout of cuda.h's CUlaunchConfig");

/// The entry points evo uses. Pointers are null until `Driver::get()` succeeds.
struct Driver {
  CUresult (*cuInit)(unsigned) = nullptr;
  CUresult (*cuDriverGetVersion)(int *) = nullptr;
  CUresult (*cuGetErrorString)(CUresult, const char **) = nullptr;
  CUresult (*cuGetErrorName)(CUresult, const char **) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice *, int) = nullptr;
  CUresult (*cuDeviceGetCount)(int *) = nullptr;
  CUresult (*cuDeviceGetName)(char *, int, CUdevice) = nullptr;
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice) = nullptr;
  CUresult (*cuDeviceGetUuid)(unsigned char *, CUdevice) = nullptr; // CUuuid is 16 bytes
  CUresult (*cuDeviceTotalMem)(size_t *, CUdevice) = nullptr;
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice) = nullptr;
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice) = nullptr;
  CUresult (*cuCtxSetCurrent)(CUcontext) = nullptr;
  CUresult (*cuCtxGetCurrent)(CUcontext *) = nullptr;
  CUresult (*cuCtxPushCurrent)(CUcontext) = nullptr;
  CUresult (*cuCtxPopCurrent)(CUcontext *) = nullptr;
  CUresult (*cuCtxSynchronize)() = nullptr;
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t) = nullptr;
  CUresult (*cuMemAllocManaged)(CUdeviceptr *, size_t, unsigned) = nullptr;
  CUresult (*cuMemFree)(CUdeviceptr) = nullptr;
  CUresult (*cuMemGetInfo)(size_t *, size_t *) = nullptr;
  CUresult (*cuMemcpy)(CUdeviceptr, CUdeviceptr, size_t) = nullptr;
  CUresult (*cuMemcpyAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream) = nullptr;
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t) = nullptr;
  CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t) = nullptr;
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream) = nullptr;
  CUresult (*cuMemcpyDtoHAsync)(void *, CUdeviceptr, size_t, CUstream) = nullptr;
  CUresult (*cuMemsetD8)(CUdeviceptr, unsigned char, size_t) = nullptr;
  CUresult (*cuMemsetD16Async)(CUdeviceptr, unsigned short, size_t, CUstream) = nullptr;
  CUresult (*cuMemsetD32Async)(CUdeviceptr, unsigned, size_t, CUstream) = nullptr;
  CUresult (*cuMemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream) = nullptr;
  CUresult (*cuMemHostRegister)(void *, size_t, unsigned) = nullptr;
  CUresult (*cuMemHostUnregister)(void *) = nullptr;
  CUresult (*cuModuleLoadData)(CUmodule *, const void *) = nullptr;
  CUresult (*cuModuleLoadDataEx)(CUmodule *, const void *, unsigned, int *, void **) = nullptr;
  CUresult (*cuModuleUnload)(CUmodule) = nullptr;
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *) = nullptr;
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int) = nullptr;
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, CUstream, void **, void **) = nullptr;
  CUresult (*cuStreamCreate)(CUstream *, unsigned) = nullptr;
  CUresult (*cuStreamDestroy)(CUstream) = nullptr;
  CUresult (*cuStreamSynchronize)(CUstream) = nullptr;
  CUresult (*cuStreamQuery)(CUstream) = nullptr;
  CUresult (*cuStreamWaitEvent)(CUstream, CUevent, unsigned) = nullptr;
  CUresult (*cuEventCreate)(CUevent *, unsigned) = nullptr;
  CUresult (*cuEventDestroy)(CUevent) = nullptr;
  CUresult (*cuEventRecord)(CUevent, CUstream) = nullptr;
  CUresult (*cuEventSynchronize)(CUevent) = nullptr;
  CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent) = nullptr;
  // Optional (null when the driver lacks them; `get()` still succeeds).
  CUresult (*cuLaunchKernelEx)(const CUlaunchConfig *, CUfunction, void **, void **) = nullptr;
  /// CUDA 12.0+: (CUtensorMap *, CUtensorMapDataType, rank, globalAddress, globalDim,
  /// globalStrides, boxDim, elementStrides, interleave, swizzle, l2Promotion, oobFill). The enums
  /// are passed as int (evo/Runtime/TensorMap.h has their values).
  CUresult (*cuTensorMapEncodeTiled)(void *, int, uint32_t, void *, const uint64_t *,
                                     const uint64_t *, const uint32_t *, const uint32_t *, int,
                                     int, int, int) = nullptr;

  /// Loads the driver once per process ($EVO_LIBCUDA overrides the library name). Returns null
  /// with the reason in `whyNot` when there is no usable driver or no device.
  static Driver *get(std::string *whyNot = nullptr);

  /// "cuXxx failed: CUDA_ERROR_... (text)" for a failed call.
  std::string describe(const char *call, CUresult rc) const;
};

/// cuda.h's CUtensorMap: 128 opaque bytes, 64-byte aligned.
struct alignas(64) CUtensorMap {
  uint64_t opaque[16];
};
static_assert(sizeof(CUtensorMap) == 128, "layout of cuda.h's CUtensorMap");

/// Encodes a tiled tensor map with evo's fixed arguments (element strides 1, interleave none, L2
/// promotion 256 B, OOB fill none) over `globalAddress`, after the checks of
/// evo/Runtime/TensorMap.h against `sourceBytes` and the address's alignment. `elementType` is a
/// manifest element type name. On failure returns false with a sentence in `error` (also when the
/// driver has no cuTensorMapEncodeTiled).
bool encodeTensorMap(Driver &d, CUtensorMap &out, const std::string &elementType,
                     CUdeviceptr globalAddress, uint64_t sourceBytes,
                     const int64_t *dims, const int64_t *strides, const int64_t *box, size_t rank,
                     int64_t swizzle, std::string &error);

/// Makes device `ordinal`'s primary context current on this thread (retaining it once).
CUresult makePrimaryContextCurrent(Driver &d, int ordinal, std::string *error = nullptr);

} // namespace evo::cuda

#endif
