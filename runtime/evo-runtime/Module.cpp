//===- Module.cpp - loading a kernel image and launching a manifest's plan -===//
//
// The CUDA driver comes from evo::cuda::Driver (lib/Runtime/CudaDriver.cpp, dlopen'ed, no
// LLVM). A CUmodule is created lazily in each context a launch targets (the stream's context, or
// the current one), with device copies of the manifest's constant buffers, and kept until the
// Module is destroyed (or another is moved over it).
//
// Why one file of ~1000 lines: Module::Impl keeps all per-context state (the CUmodule, the
// constants' device copies, the tensor-map slots of eager calls, the capture-slot pool of CUDA
// graph captures) under one lock and tears it down together in ~Impl; in one place, which state
// that lock guards can be checked by reading one class.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"
#include "Sha256.h"
#include "evo/Runtime/ChipRules.h"
#include "evo/Runtime/CudaDriver.h"
#include "evo/Runtime/TensorMap.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <dlfcn.h>
#include <fcntl.h>
#include <mutex>
#include <unistd.h>

#ifndef EVO_RUNTIME_VERSION
#define EVO_RUNTIME_VERSION "unknown"
#endif

namespace evo::runtime {

using namespace evo::cuda;

namespace {

// The driver's handle types as CudaDriver.h declares them (its own, namespaced structs).
CUstream cu(Stream s) { return reinterpret_cast<CUstream>(s); }
CUcontext cu(Context c) { return reinterpret_cast<CUcontext>(c); }
Context api(CUcontext c) { return reinterpret_cast<Context>(c); }

// CUfunction_attribute / CUdevice_attribute / CUjit_option values not in CudaDriver.h.
constexpr int kFuncMaxThreadsPerBlock = 0;
constexpr int kFuncNumRegs = 4;
constexpr uintptr_t kStreamLegacy = 0x1, kStreamPerThread = 0x2;
constexpr uint32_t kDefaultSharedMemoryLimit = 48 * 1024;
/// Capture slots per context (a 32-layer model captures one launch per layer); more with
/// $EVO_RUNTIME_CAPTURE_SLOTS or Module::reserveCaptureSlots.
constexpr size_t kDefaultCaptureSlots = 256, kMaxCaptureSlots = size_t(1) << 20;
constexpr const char *kCaptureSlotsVar = "EVO_RUNTIME_CAPTURE_SLOTS";
/// Launches outside capture that skip the refill after it failed, so that a driver out of
/// memory is not asked again at every launch (a capture that finds no slot ends the wait).
constexpr size_t kRefillBackoff = 64;

/// Entry points CudaDriver.h does not bind, looked up in the library it loaded (null when the
/// driver lacks them: the checks that use them are then skipped).
struct ExtraEntryPoints {
  CUresult (*cuStreamGetCtx)(CUstream, CUcontext *) = nullptr;
  CUresult (*cuFuncGetAttribute)(int *, int, CUfunction) = nullptr;
  CUresult (*cuCtxGetDevice)(CUdevice *) = nullptr;
  /// (CUstream, CUstreamCaptureStatus *): 0 none, 1 active, 2 invalidated.
  CUresult (*cuStreamIsCapturing)(CUstream, int *) = nullptr;
  /// Pinned host memory for the tensor maps of captured launches.
  CUresult (*cuMemAllocHost)(void **, size_t) = nullptr;
  CUresult (*cuMemFreeHost)(void *) = nullptr;
};

const ExtraEntryPoints &extra() {
  static const ExtraEntryPoints e = [] {
    ExtraEntryPoints x;
    const char *name = std::getenv("EVO_LIBCUDA");
    if (!name || !*name)
      name = "libcuda.so.1";
    if (void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD)) {
      x.cuStreamGetCtx = reinterpret_cast<decltype(x.cuStreamGetCtx)>(dlsym(lib, "cuStreamGetCtx"));
      x.cuFuncGetAttribute =
          reinterpret_cast<decltype(x.cuFuncGetAttribute)>(dlsym(lib, "cuFuncGetAttribute"));
      x.cuCtxGetDevice = reinterpret_cast<decltype(x.cuCtxGetDevice)>(dlsym(lib, "cuCtxGetDevice"));
      x.cuStreamIsCapturing =
          reinterpret_cast<decltype(x.cuStreamIsCapturing)>(dlsym(lib, "cuStreamIsCapturing"));
      x.cuMemAllocHost =
          reinterpret_cast<decltype(x.cuMemAllocHost)>(dlsym(lib, "cuMemAllocHost_v2"));
      x.cuMemFreeHost = reinterpret_cast<decltype(x.cuMemFreeHost)>(dlsym(lib, "cuMemFreeHost"));
      dlclose(lib); // Driver::get keeps its own reference
    }
    return x;
  }();
  return e;
}

Expected<Driver *> driver(const std::string &prefix) {
  std::string why;
  Driver *d = Driver::get(&why);
  if (!d)
    return Error(Error::Code::NoDevice, prefix + why);
  return d;
}

/// Makes `ctx` current for the guard's lifetime when it is not already.
class ContextGuard {
public:
  ContextGuard(Driver &d, CUcontext ctx) : d_(d) {
    CUcontext current = nullptr;
    d.cuCtxGetCurrent(&current);
    if (current != ctx)
      pushed_ = d.cuCtxPushCurrent(ctx) == CUDA_SUCCESS;
  }
  ContextGuard(const ContextGuard &) = delete;
  ContextGuard &operator=(const ContextGuard &) = delete;
  ~ContextGuard() {
    if (pushed_) {
      CUcontext ignored;
      d_.cuCtxPopCurrent(&ignored);
    }
  }

private:
  Driver &d_;
  bool pushed_ = false;
};

bool isElf(const std::string &image) { return image.size() >= 4 && image.compare(0, 4, "\x7f" "ELF") == 0; }
bool isFatbin(const std::string &image) {
  return image.size() >= 4 && static_cast<unsigned char>(image[0]) == 0x50 &&
         static_cast<unsigned char>(image[1]) == 0xed &&
         static_cast<unsigned char>(image[2]) == 0x55 &&
         static_cast<unsigned char>(image[3]) == 0xba;
}

} // namespace

struct Module::Impl {
  Manifest manifest;
  std::string image; ///< PTX text NUL-terminated, or a cubin / fatbin
  /// `image` on every GPU (fromMemory, LoadOptions::image); else load() read the manifest's PTX
  /// into `image` and its cubins into `cubins` (one per manifest.binaries entry).
  bool onlyImage = true;
  std::vector<std::string> cubins;
  /// The constants file, checked against the manifest by load(): each context's device copies of
  /// the constant buffers are uploaded from it when the module is loaded there.
  std::string constantsData;
  std::string prefix; ///< "evo-runtime: <name>: "

  /// The tensor maps of eager launches on one stream: 128 bytes of device memory per map (one
  /// cuMemAlloc, so 256-byte aligned), the encoded bytes they were copied from (kept here, so the
  /// asynchronous copy never reads freed memory), and the source addresses they encode.
  struct MapSlot {
    CUstream stream = nullptr;
    CUdeviceptr device = 0;
    std::vector<CUtensorMap> host;
    std::vector<CUdeviceptr> sources; ///< empty: nothing valid on the device
  };
  /// Room for one captured launch's maps: device memory and the pinned host bytes its copy
  /// reads. A copy from pinned memory is captured as a memcpy node that every replay runs again,
  /// so once captured a slot is never rewritten, reused or freed.
  struct CaptureSlot {
    CUdeviceptr device = 0;
    CUtensorMap *host = nullptr; ///< cuMemAllocHost memory, page-aligned
    size_t block = 0;            ///< into MapState::blocks
  };
  /// One allocation of capture slots (a cuMemAlloc and a cuMemAllocHost).
  struct CaptureBlock {
    CUdeviceptr device = 0;
    void *host = nullptr;
    bool captured = false; ///< a slot of it is in a graph: kept for the process
  };
  struct MapState {
    std::mutex mutex; ///< held from the maps' upload to the last launch of a call
    std::deque<MapSlot> slots;
    /// The capture pool: allocated outside capture (cuMemAlloc and cuMemAllocHost are not
    /// allowed during a global-mode capture), at the first launch with tensor maps and topped
    /// up at later launches outside capture; each captured launch takes a slot for good.
    std::vector<CaptureBlock> blocks;
    std::deque<CaptureSlot> freeSlots;
    size_t capturedSlots = 0;
    /// Why the pool's last allocation failed ("" when it did not), for the capture that then
    /// finds no slot.
    std::string poolError;
    /// Refills to skip before the next try, after one failed (kRefillBackoff).
    size_t refillWait = 0;
  };

  struct Loaded {
    CUcontext ctx = nullptr;
    CUmodule module = nullptr;
    std::vector<CUfunction> functions; ///< per Manifest::kernels entry
    std::unique_ptr<MapState> maps;    ///< when the manifest has tensor maps
    std::vector<CUdeviceptr> constants; ///< per Manifest::constants entry: its device copy
  };
  mutable std::mutex mutex;
  mutable std::deque<Loaded> loaded; ///< a deque: pointers to entries stay valid

  Impl() = default;
  Impl(const Impl &) = delete;
  Impl &operator=(const Impl &) = delete;
  /// Frees what the module holds in each context when the Module is destroyed or another is
  /// moved over it (release).
  ~Impl() {
    Driver *d = loaded.empty() ? nullptr : Driver::get();
    if (!d)
      return;
    for (const Loaded &l : loaded) {
      // Errors are ignored: the context may be gone already (e.g. at process exit).
      ContextGuard guard(*d, l.ctx);
      release(*d, l);
    }
  }

  /// Frees what `l` holds in its context (current): the streams' map slots, the capture blocks
  /// no capture took a slot of, the constants' device copies and the CUmodule. A block with a
  /// captured slot stays (a replay of its graph copies from it; it is freed with the process).
  static void release(Driver &d, const Loaded &l) {
    if (l.maps) {
      for (const MapSlot &slot : l.maps->slots)
        d.cuMemFree(slot.device);
      for (const CaptureBlock &block : l.maps->blocks)
        if (!block.captured) {
          d.cuMemFree(block.device);
          extra().cuMemFreeHost(block.host);
        }
    }
    for (CUdeviceptr p : l.constants)
      d.cuMemFree(p);
    if (l.module)
      d.cuModuleUnload(l.module);
  }

  Error err(Error::Code code, const std::string &message) const {
    return Error(code, prefix + message);
  }

  /// The image for a GPU of compute capability major.minor (evo/Runtime/ChipRules.h): an index
  /// into `cubins`, or -1 for `image`.
  Expected<int> chooseFor(int major, int minor) const {
    if (onlyImage || manifest.binaries.empty())
      return -1;
    std::vector<std::string> chipsOf;
    for (const BinaryInfo &b : manifest.binaries)
      chipsOf.push_back(b.chip);
    chips::ImageChoice c = chips::chooseImage(chipsOf, manifest.chip, major, minor);
    if (!c.ok)
      return err(Error::Code::Unsupported, c.why);
    return c.binary;
  }
  Error cudaErr(Driver &d, const char *call, CUresult rc, const std::string &what = "") const {
    return Error(Error::Code::Cuda, prefix + (what.empty() ? "" : what + ": ") + d.describe(call, rc));
  }

  /// The context launches on `stream` run in: the stream's own, else the current one, else
  /// device 0's primary context (made current, as the CUDA runtime API would).
  Expected<CUcontext> contextFor(Driver &d, Stream stream) const {
    CUcontext ctx = nullptr;
    auto raw = reinterpret_cast<uintptr_t>(stream);
    if (raw != 0 && raw != kStreamLegacy && raw != kStreamPerThread && extra().cuStreamGetCtx) {
      if (CUresult rc = extra().cuStreamGetCtx(cu(stream), &ctx); rc != CUDA_SUCCESS)
        return cudaErr(d, "cuStreamGetCtx", rc, "the stream");
      if (ctx)
        return ctx;
    }
    if (CUresult rc = d.cuCtxGetCurrent(&ctx); rc != CUDA_SUCCESS)
      return cudaErr(d, "cuCtxGetCurrent", rc);
    if (!ctx) {
      std::string why;
      if (makePrimaryContextCurrent(d, 0, &why) != CUDA_SUCCESS)
        return err(Error::Code::Cuda, why);
      d.cuCtxGetCurrent(&ctx);
    }
    return ctx;
  }

  /// The image for the device of the current context (a cubin made for it, else the PTX, for a
  /// manifest of several chips), named for messages in `name`.
  Expected<const std::string *> imageForDevice(Driver &d, bool haveDevice, CUdevice dev,
                                               std::string &name) const {
    name = "the kernel image";
    int major = 0, minor = 0;
    if (onlyImage || manifest.binaries.empty() || !haveDevice ||
        d.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev) !=
            CUDA_SUCCESS ||
        d.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev) !=
            CUDA_SUCCESS)
      return &image;
    Expected<int> which = chooseFor(major, minor);
    if (!which)
      return which.error();
    if (*which < 0) {
      name = "the PTX '" + manifest.ptxFile + "'";
      return &image;
    }
    name = "the " + manifest.binaries[*which].chip + " cubin '" + manifest.binaries[*which].file +
           "'";
    return &cubins[*which];
  }

  /// Creates l.module from `img` and looks up every kernel of the manifest in it.
  Status loadImage(Driver &d, Loaded &l, const std::string &img, const std::string &name) const {
    char log[8192] = {};
    int options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *values[] = {log, reinterpret_cast<void *>(uintptr_t(sizeof(log) - 1))};
    if (CUresult rc = d.cuModuleLoadDataEx(&l.module, img.data(), 2, options, values);
        rc != CUDA_SUCCESS) {
      l.module = nullptr;
      std::string what = "loading " + name;
      if (log[0])
        what += " (" + std::string(log, strnlen(log, sizeof(log))) + ")";
      return cudaErr(d, "cuModuleLoadDataEx", rc, what);
    }
    for (const std::string &k : manifest.kernels) {
      CUfunction fn = nullptr;
      if (CUresult rc = d.cuModuleGetFunction(&fn, l.module, k.c_str()); rc != CUDA_SUCCESS)
        return cudaErr(d, "cuModuleGetFunction", rc, "kernel '" + k + "'");
      l.functions.push_back(fn);
    }
    return Status();
  }

  /// Per kernel, the most dynamic shared memory and threads any launch asks of it against what
  /// the device and the kernel's registers allow (errors now rather than launch failures); the
  /// shared memory above the default limit is opted into.
  Status checkKernels(Driver &d, const Loaded &l, bool haveDevice, CUdevice dev) const {
    std::vector<uint32_t> smem(manifest.kernels.size(), 0), threads(manifest.kernels.size(), 0);
    for (const LaunchInfo &launch : manifest.launches) {
      smem[launch.kernelIndex] = std::max(smem[launch.kernelIndex], launch.dynamicSharedMemory);
      threads[launch.kernelIndex] = std::max(
          threads[launch.kernelIndex], launch.block[0] * launch.block[1] * launch.block[2]);
    }
    int optin = -1;
    if (haveDevice)
      d.cuDeviceGetAttribute(&optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev);
    for (size_t k = 0; k < manifest.kernels.size(); ++k) {
      const std::string &name = manifest.kernels[k];
      if (optin >= 0 && smem[k] > static_cast<uint32_t>(optin))
        return err(Error::Code::Cuda, "kernel '" + name + "' asks for " + std::to_string(smem[k]) +
                                          " bytes of dynamic shared memory; this GPU allows " +
                                          std::to_string(optin));
      if (smem[k] > kDefaultSharedMemoryLimit)
        if (CUresult rc = d.cuFuncSetAttribute(l.functions[k],
                                               CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                               static_cast<int>(smem[k]));
            rc != CUDA_SUCCESS)
          return cudaErr(d, "cuFuncSetAttribute", rc, "kernel '" + name + "'");
      int maxThreads = 0, regs = 0;
      if (extra().cuFuncGetAttribute &&
          extra().cuFuncGetAttribute(&maxThreads, kFuncMaxThreadsPerBlock, l.functions[k]) ==
              CUDA_SUCCESS &&
          maxThreads > 0 && threads[k] > static_cast<uint32_t>(maxThreads)) {
        extra().cuFuncGetAttribute(&regs, kFuncNumRegs, l.functions[k]);
        return err(Error::Code::Cuda,
                   "kernel '" + name + "' is launched with " + std::to_string(threads[k]) +
                       " threads per block, but with " + std::to_string(regs) +
                       " registers per thread it can run at most " + std::to_string(maxThreads));
      }
    }
    return Status();
  }

  /// Copies every constant buffer into device memory of the current context (l.constants, one
  /// cuMemAlloc each): cuMemcpyHtoDAsync on a non-blocking stream of its own, which it waits for,
  /// so that the bytes are in place before any stream of any thread launches with them (a
  /// synchronous cuMemcpyHtoD from pageable memory may return before its DMA ends) and no stream
  /// of the caller is waited for.
  Status uploadConstants(Driver &d, Loaded &l) const {
    for (unsigned c : manifest.constants) {
      const BufferInfo &b = manifest.buffers[c];
      CUdeviceptr p = 0;
      if (CUresult rc = d.cuMemAlloc(&p, b.bytes); rc != CUDA_SUCCESS)
        return cudaErr(d, "cuMemAlloc", rc,
                       "constant '" + b.name + "' (" + std::to_string(b.bytes) + " bytes)");
      l.constants.push_back(p);
    }
    if (manifest.constants.empty())
      return Status();
    CUstream s = nullptr;
    if (CUresult rc = d.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING); rc != CUDA_SUCCESS)
      return cudaErr(d, "cuStreamCreate", rc, "uploading the constants");
    Status status;
    for (size_t k = 0; k < manifest.constants.size() && status; ++k) {
      const BufferInfo &b = manifest.buffers[manifest.constants[k]];
      if (CUresult rc = d.cuMemcpyHtoDAsync(l.constants[k], constantsData.data() + b.constantOffset,
                                            b.bytes, s);
          rc != CUDA_SUCCESS)
        status = cudaErr(d, "cuMemcpyHtoDAsync", rc, "uploading constant '" + b.name + "'");
    }
    // Waited for even after a failed copy: the earlier ones read constantsData.
    if (CUresult rc = d.cuStreamSynchronize(s); rc != CUDA_SUCCESS && status)
      status = cudaErr(d, "cuStreamSynchronize", rc, "uploading the constants");
    d.cuStreamDestroy(s);
    return status;
  }

  /// The module loaded in `ctx` (current), loading it on first use: the image, its kernels
  /// checked against the launches, and the constants uploaded; on failure nothing stays.
  Expected<const Loaded *> loadedIn(Driver &d, CUcontext ctx) const {
    std::lock_guard<std::mutex> lock(mutex);
    for (const Loaded &l : loaded)
      if (l.ctx == ctx)
        return &l;
    Loaded l;
    l.ctx = ctx;
    if (!manifest.tensorMaps.empty()) {
      // Optional in CudaDriver (CUDA 12.0+): without it no launch of this manifest can work.
      if (!d.cuTensorMapEncodeTiled)
        return err(Error::Code::Unsupported,
                   "the manifest has tensor maps, but the CUDA driver has no "
                   "cuTensorMapEncodeTiled (TMA needs a CUDA 12 driver)");
      l.maps = std::make_unique<MapState>();
    }
    CUdevice dev = 0;
    bool haveDevice = extra().cuCtxGetDevice && extra().cuCtxGetDevice(&dev) == CUDA_SUCCESS;
    std::string imageName;
    Expected<const std::string *> img = imageForDevice(d, haveDevice, dev, imageName);
    if (!img)
      return img.error();
    Status s = loadImage(d, l, **img, imageName);
    if (s)
      s = checkKernels(d, l, haveDevice, dev);
    if (s)
      s = uploadConstants(d, l);
    if (!s) {
      release(d, l);
      return s.error();
    }
    loaded.push_back(std::move(l));
    return &loaded.back();
  }

  /// Runs `body(driver, loaded)` with the module loaded in the context of `stream` and that
  /// context current for the call (prepare, reserveCaptureSlots).
  template <typename Body> Status withLoaded(Stream stream, Body body) const {
    Expected<Driver *> d = driver(prefix);
    if (!d)
      return d.error();
    Expected<CUcontext> ctx = contextFor(**d, stream);
    if (!ctx)
      return ctx.error();
    ContextGuard guard(**d, *ctx);
    Expected<const Loaded *> l = loadedIn(**d, *ctx);
    if (!l)
      return l.error();
    return body(**d, **l);
  }

  /// Whether work enqueued on `stream` now is captured into a CUDA graph (an invalidated
  /// capture counts: nothing may be allocated then either).
  static bool isCapturing(CUstream stream) {
    int status = 0;
    return extra().cuStreamIsCapturing &&
           extra().cuStreamIsCapturing(stream, &status) == CUDA_SUCCESS && status != 0;
  }

  /// The source address of each tensor map for the buffers' addresses `addr`.
  std::vector<CUdeviceptr> mapSources(const std::vector<CUdeviceptr> &addr) const {
    std::vector<CUdeviceptr> sources(manifest.tensorMaps.size());
    for (size_t k = 0; k < sources.size(); ++k)
      sources[k] = addr[manifest.buffers[manifest.tensorMaps[k]].tensorMap.source];
    return sources;
  }

  /// Encodes every map over `sources` into out[0..n).
  Status encodeMaps(Driver &d, CUtensorMap *out, const std::vector<CUdeviceptr> &sources) const {
    for (size_t k = 0; k < sources.size(); ++k) {
      const BufferInfo &map = manifest.buffers[manifest.tensorMaps[k]];
      const TensorMapInfo &t = map.tensorMap;
      const BufferInfo &src = manifest.buffers[t.source];
      std::string why;
      if (!encodeTensorMap(d, out[k], t.elementType, sources[k], src.bytes, t.dims.data(),
                           t.strides.data(), t.box.data(), t.dims.size(), t.swizzle, why))
        return err(Error::Code::Cuda, "tensor map '" + map.name + "' over '" + src.name +
                                          "' cannot be encoded: " + why);
    }
    return Status();
  }

  /// The capture pool's size: $EVO_RUNTIME_CAPTURE_SLOTS, else kDefaultCaptureSlots. A value
  /// that is not a count fails only what needs the pool (a captured launch, reserveCaptureSlots);
  /// launches outside capture then skip the refill.
  Expected<size_t> captureSlotTarget() const {
    const char *v = std::getenv(kCaptureSlotsVar);
    if (!v || !*v)
      return kDefaultCaptureSlots;
    char *end = nullptr;
    errno = 0;
    unsigned long long n = std::strtoull(v, &end, 10);
    if (errno || *end || *v < '0' || *v > '9' || n < 1 || n > kMaxCaptureSlots)
      return err(Error::Code::InvalidArgument, std::string("$") + kCaptureSlotsVar + "='" + v +
                                                   "' is not a number of slots from 1 to " +
                                                   std::to_string(kMaxCaptureSlots));
    return static_cast<size_t>(n);
  }

  /// Adds `count` capture slots to the pool of the current context: one cuMemAlloc and one
  /// cuMemAllocHost. Never during a capture (both are refused then).
  Status addCaptureSlots(Driver &d, MapState &st, size_t count) const {
    namespace tm = evo::tensormap;
    if (!extra().cuMemAllocHost || !extra().cuMemFreeHost)
      return err(Error::Code::Unsupported,
                 "the CUDA driver has no cuMemAllocHost_v2 / cuMemFreeHost (pinned memory for "
                 "the tensor maps of CUDA graph captures)");
    const size_t bytes = manifest.tensorMaps.size() * tm::kDescriptorBytes; // a multiple of 128
    std::string what = std::to_string(count) + " capture slots for its tensor maps";
    CaptureBlock block;
    if (CUresult rc = d.cuMemAlloc(&block.device, count * bytes); rc != CUDA_SUCCESS)
      return cudaErr(d, "cuMemAlloc", rc, what);
    if (CUresult rc = extra().cuMemAllocHost(&block.host, count * bytes); rc != CUDA_SUCCESS) {
      d.cuMemFree(block.device);
      return cudaErr(d, "cuMemAllocHost", rc, what);
    }
    st.blocks.push_back(block);
    auto *host = static_cast<unsigned char *>(block.host);
    for (size_t i = 0; i < count; ++i)
      st.freeSlots.push_back(CaptureSlot{block.device + i * bytes,
                                         reinterpret_cast<CUtensorMap *>(host + i * bytes),
                                         st.blocks.size() - 1});
    return Status();
  }

  /// Outside capture: fills the pool back to its size when fewer than half of it are free. It
  /// never fails the launch, which needs no capture slot: a pool size that is not a count is
  /// left to what needs the pool (captures, reserveCaptureSlots) to report, and a failed
  /// allocation (e.g. another thread's global-mode capture refuses allocations for a while) is
  /// remembered for the capture that then finds no slot, and not tried again before
  /// kRefillBackoff more launches want it, or a capture finds no slot.
  void topUpCaptureSlots(Driver &d, MapState &st) const {
    Expected<size_t> target = captureSlotTarget();
    if (!target)
      return;
    if (st.freeSlots.size() * 2 >= *target && !st.freeSlots.empty())
      return;
    if (st.refillWait) {
      --st.refillWait;
      return;
    }
    Status added = addCaptureSlots(d, st, *target - st.freeSlots.size());
    st.poolError = added ? "" : added.message().substr(prefix.size());
    st.refillWait = added ? 0 : kRefillBackoff;
  }

  /// Makes `count` capture slots free in the current context (Module::reserveCaptureSlots).
  Status reserveCaptureSlots(Driver &d, MapState &st, size_t count) const {
    if (count > kMaxCaptureSlots)
      return err(Error::Code::InvalidArgument, "at most " + std::to_string(kMaxCaptureSlots) +
                                                   " capture slots can be reserved at once");
    if (Expected<size_t> target = captureSlotTarget(); !target)
      return target.error();
    if (st.freeSlots.size() >= count)
      return Status();
    return addCaptureSlots(d, st, count - st.freeSlots.size());
  }

  /// During a capture: the call's maps are encoded into a fresh slot's pinned bytes and copied
  /// to its device memory by one cuMemcpyHtoDAsync on the capturing stream (a memcpy node of the
  /// graph, run again at every replay, before the launches). The slot is the graph's for good.
  Expected<CUdeviceptr> bindForCapture(Driver &d, MapState &st, CUstream s,
                                       const std::vector<CUdeviceptr> &sources) const {
    namespace tm = evo::tensormap;
    if (Expected<size_t> target = captureSlotTarget(); !target)
      return target.error();
    if (st.freeSlots.empty()) {
      st.refillWait = 0; // the pool is wanted: the next launch outside capture refills it
      std::string failed =
          st.poolError.empty()
              ? ""
              : " (the last allocation of capture slots failed: " + st.poolError + ")";
      if (st.blocks.empty())
        return err(Error::Code::InvalidArgument,
                   "its tensor maps need a capture slot in this context and none is allocated "
                   "yet (they cannot be allocated during CUDA graph capture): launch it once "
                   "outside capture first, or call Module::reserveCaptureSlots before capturing" +
                       failed);
      return err(Error::Code::InvalidArgument,
                 "no capture slot is left for its tensor maps: the " +
                     std::to_string(st.capturedSlots) +
                     " slots of this context are held by earlier captured launches (one each, "
                     "for good); reserve more before capturing (Module::reserveCaptureSlots, or $" +
                     kCaptureSlotsVar + " above " + std::to_string(kDefaultCaptureSlots) +
                     ": the pool is refilled to that size at launches outside capture)" + failed);
    }
    CaptureSlot slot = st.freeSlots.front();
    // A slot whose maps cannot be encoded stays free: nothing was enqueued that reads it.
    if (Status s = encodeMaps(d, slot.host, sources); !s)
      return s.error();
    st.freeSlots.pop_front();
    st.blocks[slot.block].captured = true;
    ++st.capturedSlots;
    if (CUresult rc =
            d.cuMemcpyHtoDAsync(slot.device, slot.host, sources.size() * tm::kDescriptorBytes, s);
        rc != CUDA_SUCCESS)
      return cudaErr(d, "cuMemcpyHtoDAsync", rc, "the tensor maps (captured)");
    return slot.device;
  }

  /// The device address of this call's tensor maps (map k at + 128 k). During a CUDA graph
  /// capture: a fresh capture slot (bindForCapture). Otherwise those already uploaded on
  /// `stream` over the same source addresses, else encoded now over `addr` and copied with
  /// cuMemcpyHtoDAsync on `stream` into the stream's slot (ordered before the launches; no
  /// synchronization); the capture pool is topped up first. The caller holds st.mutex until its
  /// launches are enqueued.
  Expected<CUdeviceptr> bindTensorMaps(Driver &d, MapState &st, Stream stream,
                                       const std::vector<CUdeviceptr> &addr) const {
    namespace tm = evo::tensormap;
    const size_t n = manifest.tensorMaps.size();
    std::vector<CUdeviceptr> sources = mapSources(addr);
    CUstream s = cu(stream);
    if (isCapturing(s))
      return bindForCapture(d, st, s, sources);
    topUpCaptureSlots(d, st);
    MapSlot *slot = nullptr;
    for (MapSlot &candidate : st.slots)
      if (candidate.stream == s)
        slot = &candidate;
    if (slot && slot->sources == sources)
      return slot->device;
    if (!slot) {
      CUdeviceptr p = 0;
      if (CUresult rc = d.cuMemAlloc(&p, n * tm::kDescriptorBytes); rc != CUDA_SUCCESS)
        return cudaErr(d, "cuMemAlloc", rc, "tensor maps");
      st.slots.push_back(MapSlot{s, p, std::vector<CUtensorMap>(n), {}});
      slot = &st.slots.back();
    }
    slot->sources.clear(); // nothing valid until every map is encoded and its copy enqueued
    if (Status e = encodeMaps(d, slot->host.data(), sources); !e)
      return e.error();
    for (size_t k = 0; k < n; ++k)
      if (CUresult rc = d.cuMemcpyHtoDAsync(slot->device + k * tm::kDescriptorBytes, &slot->host[k],
                                            tm::kDescriptorBytes, s);
          rc != CUDA_SUCCESS)
        return cudaErr(d, "cuMemcpyHtoDAsync", rc,
                       "tensor map '" + manifest.buffers[manifest.tensorMaps[k]].name + "'");
    slot->sources = std::move(sources);
    return slot->device;
  }
};

//===----------------------------------------------------------------------===//
// Workspace
//===----------------------------------------------------------------------===//

Workspace &Workspace::operator=(Workspace &&other) noexcept {
  if (this != &other) {
    this->~Workspace();
    ctx_ = other.ctx_;
    ptr_ = other.ptr_;
    bytes_ = other.bytes_;
    other.ctx_ = nullptr;
    other.ptr_ = 0;
    other.bytes_ = 0;
  }
  return *this;
}

Workspace::~Workspace() {
  if (!ptr_)
    return;
  if (Driver *d = Driver::get()) {
    ContextGuard guard(*d, cu(ctx_));
    d->cuMemFree(static_cast<CUdeviceptr>(ptr_));
  }
  ptr_ = 0;
  bytes_ = 0;
}

//===----------------------------------------------------------------------===//
// Module
//===----------------------------------------------------------------------===//

Module::Module(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Module::Module(Module &&) noexcept = default;
Module &Module::operator=(Module &&) noexcept = default;

Module::~Module() = default;

const Manifest &Module::manifest() const { return impl_->manifest; }

Expected<ImageInfo> Module::imageFor(int ccMajor, int ccMinor) const {
  Expected<int> which = impl_->chooseFor(ccMajor, ccMinor);
  if (!which)
    return which.error();
  const Manifest &m = impl_->manifest;
  ImageInfo info;
  if (*which >= 0) {
    info.cubin = true;
    info.chip = m.binaries[*which].chip;
    info.file = m.binaries[*which].file;
  } else {
    info.chip = m.chip;
    info.file = impl_->onlyImage ? "" : m.ptxFile;
  }
  return info;
}

namespace {

/// The state of a module of `m` with the one image `image` (PTX text checked against the
/// manifest's size and sha256 unless `trustedImage`).
Expected<std::unique_ptr<Module::Impl>> makeImpl(Manifest m, std::string image, bool trustedImage) {
  auto impl = std::make_unique<Module::Impl>();
  impl->manifest = std::move(m);
  impl->prefix = "evo-runtime: " + impl->manifest.name + ": ";
  if (!trustedImage) {
    const Manifest &man = impl->manifest;
    if (image.size() != man.ptxBytes)
      return impl->err(Error::Code::InvalidManifest,
                       "the PTX has " + std::to_string(image.size()) + " bytes, the manifest says " +
                           std::to_string(man.ptxBytes));
    std::string digest = detail::sha256Hex(image);
    if (digest != man.ptxSha256)
      return impl->err(Error::Code::InvalidManifest,
                       "the PTX does not match the manifest (sha256 " + digest + ", the manifest says " +
                           man.ptxSha256 + ")");
  }
  if (image.empty())
    return impl->err(Error::Code::InvalidManifest, "the kernel image is empty");
  if (!isElf(image) && !isFatbin(image) && image.back() != '\0')
    image.push_back('\0'); // PTX text: cuModuleLoadData reads up to the NUL
  impl->image = std::move(image);
  return Expected<std::unique_ptr<Module::Impl>>(std::move(impl));
}

/// The cubins of the manifest's `binaries` (chips=), read from `dirFd` and checked like the PTX;
/// the device chooses among them at load. `shown(file)` is a file's name for messages.
template <typename Shown> Status readCubins(Module::Impl &impl, int dirFd, Shown shown) {
  for (const BinaryInfo &b : impl.manifest.binaries) {
    std::string name = shown(b.file);
    Expected<std::string> cubin =
        detail::readFile(dirFd, b.file, name, detail::kMaxImageBytes, /*noFollow=*/true);
    if (!cubin)
      return cubin.error();
    if (cubin->size() != b.bytes)
      return Error(Error::Code::InvalidManifest,
                   name + ": " + impl.prefix + "the " + b.chip + " cubin has " +
                       std::to_string(cubin->size()) + " bytes, the manifest says " +
                       std::to_string(b.bytes));
    std::string digest = detail::sha256Hex(*cubin);
    if (digest != b.sha256)
      return Error(Error::Code::InvalidManifest,
                   name + ": " + impl.prefix + "the " + b.chip +
                       " cubin does not match the manifest (sha256 " + digest +
                       ", the manifest says " + b.sha256 + ")");
    impl.cubins.push_back(std::move(*cubin));
  }
  return Status();
}

/// The constants file (when the manifest has constant buffers), read from `dirFd` like the PTX
/// (a file larger than stated is not read) and checked against its size and sha256.
template <typename Shown> Status readConstants(Module::Impl &impl, int dirFd, Shown shown) {
  const ConstantsInfo &c = impl.manifest.constantsFile;
  if (impl.manifest.constants.empty())
    return Status();
  std::string name = shown(c.file);
  uint64_t size = 0;
  Expected<std::string> data =
      detail::readFile(dirFd, c.file, name, c.bytes, /*noFollow=*/true, &size);
  if (!data && size <= c.bytes)
    return data.error();
  if (data)
    size = data->size();
  if (size != c.bytes)
    return Error(Error::Code::InvalidManifest,
                 name + ": " + impl.prefix + "the constants file has " + std::to_string(size) +
                     " bytes, the manifest says " + std::to_string(c.bytes));
  std::string digest = detail::sha256Hex(*data);
  if (digest != c.sha256)
    return Error(Error::Code::InvalidManifest,
                 name + ": " + impl.prefix + "the constants file does not match the manifest "
                                             "(sha256 " + digest + ", the manifest says " +
                     c.sha256 + ")");
  impl.constantsData = std::move(*data);
  return Status();
}

} // namespace

Expected<Module> Module::fromMemory(std::string_view manifestJson, std::string image,
                                    bool trustedImage) {
  Expected<Manifest> m = Manifest::parse(manifestJson);
  if (!m)
    return m.error();
  if (!m->constants.empty())
    return Error(Error::Code::InvalidManifest,
                 "evo-runtime: " + m->name + ": its " + std::to_string(m->constants.size()) +
                     " constant buffers are in the file '" + m->constantsFile.file +
                     "' beside the manifest, which only Module::load(path) reads (a manifest "
                     "given as text has no directory)");
  Expected<std::unique_ptr<Impl>> impl = makeImpl(std::move(*m), std::move(image), trustedImage);
  if (!impl)
    return impl.error();
  return Module(std::move(*impl));
}

Expected<Module> Module::load(const std::string &manifestPath, const LoadOptions &options) {
  Expected<std::string> text = detail::readFile(AT_FDCWD, manifestPath, manifestPath,
                                                detail::kMaxManifestBytes, /*noFollow=*/false);
  if (!text)
    return text.error();
  Expected<Manifest> m = Manifest::parse(*text);
  if (!m)
    return Error(m.error().code(), manifestPath + ": " + m.error().message());
  // The files are looked up in the manifest's own directory, by a plain file name (checked by the
  // parser), never through a symbolic link.
  size_t slash = manifestPath.rfind('/');
  std::string dir = slash == std::string::npos ? "." : manifestPath.substr(0, slash + 1);
  auto shown = [&](const std::string &file) {
    return (slash == std::string::npos ? "" : dir) + file;
  };
  int dirFd = -1;
  if (options.image.empty() || !m->constants.empty()) {
    dirFd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirFd < 0)
      return Error(Error::Code::Io, dir + ": " + std::strerror(errno));
  }
  struct Closer {
    int fd;
    ~Closer() {
      if (fd >= 0)
        ::close(fd);
    }
  } closer{dirFd};
  std::unique_ptr<Impl> impl;
  if (!options.image.empty()) {
    Expected<std::unique_ptr<Impl>> made =
        makeImpl(std::move(*m), options.image, /*trustedImage=*/true);
    if (!made)
      return Error(made.error().code(), manifestPath + ": " + made.error().message());
    impl = std::move(*made);
  } else {
    std::string display = shown(m->ptxFile);
    Expected<std::string> image =
        detail::readFile(dirFd, m->ptxFile, display, detail::kMaxImageBytes, /*noFollow=*/true);
    if (!image)
      return image.error();
    Expected<std::unique_ptr<Impl>> made =
        makeImpl(std::move(*m), std::move(*image), /*trustedImage=*/false);
    if (!made)
      return Error(made.error().code(), display + ": " + made.error().message());
    impl = std::move(*made);
    if (Status s = readCubins(*impl, dirFd, shown); !s)
      return s.error();
    impl->onlyImage = false;
  }
  if (Status s = readConstants(*impl, dirFd, shown); !s)
    return s.error();
  return Module(std::move(impl));
}

Status Module::prepare(Stream stream) const {
  return impl_->withLoaded(stream, [](Driver &, const Impl::Loaded &) { return Status(); });
}

Status Module::reserveCaptureSlots(size_t count, Stream stream) const {
  if (impl_->manifest.tensorMaps.empty())
    return Status();
  return impl_->withLoaded(stream, [&](Driver &d, const Impl::Loaded &l) {
    std::lock_guard<std::mutex> lock(l.maps->mutex);
    return impl_->reserveCaptureSlots(d, *l.maps, count);
  });
}

Expected<Workspace> Module::allocateWorkspace(Stream stream) const {
  Workspace ws;
  if (workspaceBytes() == 0)
    return Expected<Workspace>(std::move(ws));
  Expected<Driver *> d = driver(impl_->prefix);
  if (!d)
    return d.error();
  Expected<CUcontext> ctx = impl_->contextFor(**d, stream);
  if (!ctx)
    return ctx.error();
  ContextGuard guard(**d, *ctx);
  CUdeviceptr p = 0;
  if (CUresult rc = (*d)->cuMemAlloc(&p, workspaceBytes()); rc != CUDA_SUCCESS)
    return impl_->cudaErr(**d, "cuMemAlloc", rc,
                          "a workspace of " + std::to_string(workspaceBytes()) + " bytes");
  ws.ctx_ = api(*ctx);
  ws.ptr_ = static_cast<uintptr_t>(p);
  ws.bytes_ = workspaceBytes();
  return Expected<Workspace>(std::move(ws));
}

Status Module::checkArguments(const TensorRef *inputs, size_t numInputs, const TensorRef *outputs,
                              size_t numOutputs, WorkspaceRef workspace) const {
  const Manifest &m = impl_->manifest;
  auto bad = [&](const std::string &msg) {
    return Status(impl_->err(Error::Code::InvalidArgument, msg));
  };
  if (numInputs != m.inputs.size() || (numInputs && !inputs))
    return bad("takes " + std::to_string(m.inputs.size()) + " inputs, got " +
               std::to_string(inputs || !numInputs ? numInputs : 0));
  if (numOutputs != m.outputs.size() || (numOutputs && !outputs))
    return bad("writes " + std::to_string(m.outputs.size()) + " outputs, got " +
               std::to_string(outputs || !numOutputs ? numOutputs : 0));

  struct Range {
    uintptr_t begin, end;
    std::string what;
    bool written;
  };
  std::vector<Range> ranges;
  ranges.reserve(numInputs + numOutputs + 1);
  auto check = [&](const TensorRef &t, unsigned buffer, size_t i) -> Status {
    const BufferInfo &b = m.buffers[buffer];
    std::string what = std::string(roleName(b.role)) + " " + std::to_string(i) + " ('" + b.name + "')";
    // A scalar argument is its value (TensorRef::scalar), every other buffer a tensor.
    if (b.byValue || t.byValue) {
      std::string got = t.byValue ? std::string("a scalar of ") + dtypeName(t.dtype) : "a tensor";
      if (!b.byValue)
        return bad(what + ": expected " + detail::describe(b.dtype, b.shape) + ", got " + got);
      if (!t.byValue || t.dtype != b.dtype)
        return bad(what + ": a scalar argument, passed by value: expected a scalar of " +
                   dtypeName(b.dtype) + " (TensorRef::scalar), got " + got);
      return Status();
    }
    if (t.rank > Manifest::kMaxRank)
      return bad(what + ": a shape of more than " + std::to_string(Manifest::kMaxRank) +
                 " dimensions, expected " + detail::describe(b.dtype, b.shape));
    std::vector<int64_t> shape(t.shape.begin(), t.shape.begin() + t.rank);
    if (t.dtype != b.dtype || shape != b.shape)
      return bad(what + ": expected " + detail::describe(b.dtype, b.shape) + ", got " +
                 detail::describe(t.dtype, shape));
    auto p = reinterpret_cast<uintptr_t>(t.data);
    if (!p)
      return bad(what + ": null device pointer");
    if (p % detail::kBufferAlignment)
      return bad(what + ": address " + std::to_string(p) + " is not " +
                 std::to_string(detail::kBufferAlignment) + "-byte aligned");
    if (p > UINTPTR_MAX - b.bytes)
      return bad(what + ": address range wraps around");
    ranges.push_back({p, p + b.bytes, what, b.role == Role::Output});
    return Status();
  };
  for (size_t i = 0; i < numInputs; ++i)
    if (Status s = check(inputs[i], m.inputs[i], i); !s)
      return s;
  for (size_t i = 0; i < numOutputs; ++i)
    if (Status s = check(outputs[i], m.outputs[i], i); !s)
      return s;
  if (m.workspaceBytes) {
    auto p = reinterpret_cast<uintptr_t>(workspace.data);
    if (!p)
      return bad("needs a workspace of " + std::to_string(m.workspaceBytes) +
                 " bytes for its scratch buffers (Module::allocateWorkspace)");
    if (workspace.bytes < m.workspaceBytes)
      return bad("the workspace has " + std::to_string(workspace.bytes) + " bytes, it needs " +
                 std::to_string(m.workspaceBytes));
    if (p % Manifest::kWorkspaceAlignment)
      return bad("the workspace is not " + std::to_string(Manifest::kWorkspaceAlignment) +
                 "-byte aligned");
    if (p > UINTPTR_MAX - m.workspaceBytes)
      return bad("the workspace's address range wraps around");
    ranges.push_back({p, p + m.workspaceBytes, "the workspace", true});
  }
  // Kernels read their inputs while other threads write outputs and scratch: a buffer that is
  // written must share no byte with any other (inputs may overlap each other).
  for (size_t i = 0; i < ranges.size(); ++i)
    for (size_t j = i + 1; j < ranges.size(); ++j)
      if ((ranges[i].written || ranges[j].written) && ranges[i].begin < ranges[j].end &&
          ranges[j].begin < ranges[i].end)
        return bad(ranges[i].what + " and " + ranges[j].what + " overlap");
  return Status();
}

Status Module::launch(Stream stream, const TensorRef *inputs, size_t numInputs,
                      const TensorRef *outputs, size_t numOutputs, WorkspaceRef workspace) const {
  if (Status s = checkArguments(inputs, numInputs, outputs, numOutputs, workspace); !s)
    return s;
  const Manifest &m = impl_->manifest;
  Expected<Driver *> dr = driver(impl_->prefix);
  if (!dr)
    return dr.error();
  Driver &d = **dr;
  Expected<CUcontext> ctx = impl_->contextFor(d, stream);
  if (!ctx)
    return ctx.error();
  ContextGuard guard(d, *ctx);
  Expected<const Impl::Loaded *> loaded = impl_->loadedIn(d, *ctx);
  if (!loaded)
    return loaded.error();

  // One device address per manifest buffer; kernel parameters point into this array (the driver
  // copies parameter values when the launch is enqueued, or captured).
  std::vector<CUdeviceptr> addr(m.buffers.size(), 0);
  for (size_t i = 0; i < numInputs; ++i) // a scalar argument: its bytes, in the low ones
    addr[m.inputs[i]] = inputs[i].byValue ? inputs[i].bits
                                          : reinterpret_cast<CUdeviceptr>(inputs[i].data);
  for (size_t i = 0; i < numOutputs; ++i)
    addr[m.outputs[i]] = reinterpret_cast<CUdeviceptr>(outputs[i].data);
  for (unsigned s : m.scratch)
    addr[s] = reinterpret_cast<CUdeviceptr>(workspace.data) + m.buffers[s].workspaceOffset;
  for (size_t k = 0; k < m.constants.size(); ++k)
    addr[m.constants[k]] = (*loaded)->constants[k];
  // Tensor maps: encoded over the addresses above, in memory of the loaded module.
  std::unique_lock<std::mutex> mapLock;
  if (!m.tensorMaps.empty()) {
    Impl::MapState &st = *(*loaded)->maps;
    mapLock = std::unique_lock<std::mutex>(st.mutex);
    Expected<CUdeviceptr> base = impl_->bindTensorMaps(d, st, stream, addr);
    if (!base)
      return base.error();
    for (size_t k = 0; k < m.tensorMaps.size(); ++k)
      addr[m.tensorMaps[k]] = *base + k * evo::tensormap::kDescriptorBytes;
  }
  for (const BufferInfo &b : m.buffers)
    if (b.zeroInit)
      if (CUresult rc = d.cuMemsetD8Async(addr[b.index], 0, b.bytes, cu(stream)); rc != CUDA_SUCCESS)
        return impl_->cudaErr(d, "cuMemsetD8Async", rc, "zeroing '" + b.name + "'");

  void *params[detail::kMaxParams];
  for (size_t i = 0; i < m.launches.size(); ++i) {
    const LaunchInfo &l = m.launches[i];
    for (size_t j = 0; j < l.args.size(); ++j)
      params[j] = &addr[l.args[j]];
    CUresult rc = d.cuLaunchKernel((*loaded)->functions[l.kernelIndex], l.grid[0], l.grid[1],
                                   l.grid[2], l.block[0], l.block[1], l.block[2],
                                   l.dynamicSharedMemory, cu(stream), params, nullptr);
    if (rc != CUDA_SUCCESS)
      return impl_->cudaErr(d, "cuLaunchKernel", rc,
                            "launch " + std::to_string(i) + " ('" + l.kernel + "')");
  }
  return Status();
}

const char *version() { return EVO_RUNTIME_VERSION; }

} // namespace evo::runtime
