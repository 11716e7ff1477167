//===- evo-runtime/Module.h - load and launch evo-opt's kernels ---*- C++ -*-===//
//
// libevo_runtime: the C++ loader for what `evo-opt --evo-emit-ptx` writes (<name>.json, the
// evo-manifest/1 manifest, and <name>.ptx). Plain C++17; the CUDA driver (libcuda.so.1) is
// loaded at run time, so programs linked against it start on machines without a GPU and get an
// error value there. Nothing here throws or aborts: every failure is an `Error` value.
//
//   #include <evo-runtime/Module.h>
//   auto mod = evo::runtime::Module::load("out/row_sum.json");
//   if (!mod) { fprintf(stderr, "%s\n", mod.error().message().c_str()); return 1; }
//   evo::runtime::TensorRef x(xDev, evo::runtime::DType::F32, {8192, 2048});
//   evo::runtime::TensorRef y(yDev, evo::runtime::DType::F32, {8192});
//   evo::runtime::Status s = mod->launch(stream, {x}, {y});   // + a workspace if it has scratch
//
// docs/runtime.md describes the API; docs/architecture.md the manifest.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_RUNTIME_MODULE_H
#define EVO_RUNTIME_MODULE_H

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#define EVO_RUNTIME_API __attribute__((visibility("default")))

// The CUDA handle types, declared as cuda.h and cuda_runtime.h declare them (global structs).
struct CUstream_st;
struct CUctx_st;

namespace evo::runtime {

/// A `cudaStream_t` or a `CUstream`. Null is the legacy default stream of the current context.
using Stream = ::CUstream_st *;
using Context = ::CUctx_st *;

//===----------------------------------------------------------------------===//
// Errors as values
//===----------------------------------------------------------------------===//

class EVO_RUNTIME_API Error {
public:
  enum class Code {
    InvalidManifest, ///< the manifest or its PTX is malformed, inconsistent or out of limits
    Io,              ///< a file cannot be read
    InvalidArgument, ///< a launch's tensors or workspace do not match the manifest
    NoDevice,        ///< no CUDA driver or no GPU on this machine
    Cuda,            ///< a driver call failed (the message has the CUDA error name)
    Unsupported,     ///< the driver lacks an entry point the manifest needs (tensor maps: CUDA 12)
  };
  Error(Code code, std::string message) : code_(code), message_(std::move(message)) {}
  Code code() const { return code_; }
  const std::string &message() const { return message_; }

private:
  Code code_;
  std::string message_;
};

/// Success, or an `Error`.
class EVO_RUNTIME_API Status {
public:
  Status() = default;
  Status(Error error) : error_(std::make_shared<Error>(std::move(error))) {}
  bool ok() const { return !error_; }
  explicit operator bool() const { return ok(); }
  /// Precondition: !ok().
  const Error &error() const { return *error_; }
  /// The error's message, or "" when ok.
  const std::string &message() const {
    static const std::string empty;
    return error_ ? error_->message() : empty;
  }

private:
  std::shared_ptr<Error> error_;
};

/// A value or an `Error` (std::expected's shape, in C++17).
template <typename T> class Expected {
public:
  Expected(T value) : v_(std::in_place_index<0>, std::move(value)) {}
  Expected(Error error) : v_(std::in_place_index<1>, std::move(error)) {}
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  /// Preconditions: ok().
  T &value() & { return *std::get_if<0>(&v_); }
  const T &value() const & { return *std::get_if<0>(&v_); }
  T &&value() && { return std::move(*std::get_if<0>(&v_)); }
  T &operator*() & { return value(); }
  const T &operator*() const & { return value(); }
  T *operator->() { return std::get_if<0>(&v_); }
  const T *operator->() const { return std::get_if<0>(&v_); }
  /// Precondition: !ok().
  const Error &error() const { return *std::get_if<1>(&v_); }
  Status status() const { return ok() ? Status() : Status(error()); }

private:
  std::variant<T, Error> v_;
};

//===----------------------------------------------------------------------===//
// The manifest
//===----------------------------------------------------------------------===//

/// Element types a manifest may name ("f32", "bf16", "i8", "ui8", ..., "i1": a boolean, one
/// byte holding 0 or 1, as torch.bool).
enum class DType : uint8_t { F16, BF16, F32, F64, I8, I16, I32, I64, U8, Bool };
EVO_RUNTIME_API const char *dtypeName(DType dtype);
EVO_RUNTIME_API size_t dtypeSize(DType dtype);

/// TensorMap: a 128-byte TMA descriptor the library encodes and owns (not a launch argument).
/// Constant: bytes of the manifest's constants file, uploaded by the library once per context and
/// owned by the Module (not a launch argument either: callers never pass constants).
enum class Role : uint8_t { Input, Output, Scratch, TensorMap, Constant };
EVO_RUNTIME_API const char *roleName(Role role);

/// A buffer of role TensorMap: the arguments of cuTensorMapEncodeTiled over buffer `source`
/// (docs/architecture.md, "Tensor maps"; checked by evo/Runtime/TensorMap.h's rules).
struct TensorMapInfo {
  unsigned source = 0;
  std::string elementType;              ///< the source's dtype name ("f16", ...)
  std::vector<int64_t> dims, strides, box; ///< elements / bytes, innermost first
  int64_t swizzle = 0;                  ///< bytes: 0, 32, 64 or 128
};

struct BufferInfo {
  unsigned index = 0;
  std::string name;
  Role role = Role::Input;
  DType dtype = DType::F32;
  std::vector<int64_t> shape; ///< empty for a 0-d buffer (one element)
  uint64_t bytes = 0;
  bool zeroInit = false;       ///< zeroed on the launch stream before the first launch
  /// A scalar argument of the function (an input of shape [], "by_value" in the manifest):
  /// launches pass its value (a TensorRef::scalar), not a pointer; nothing is allocated for it.
  bool byValue = false;
  uint64_t workspaceOffset = 0; ///< scratch buffers: where they lie in the workspace
  TensorMapInfo tensorMap;      ///< role TensorMap only
  /// Role Constant only ("data": {"offset", "bytes"}): where its `bytes` lie in the constants
  /// file (a multiple of Manifest::kConstantAlignment).
  uint64_t constantOffset = 0;
};

struct LaunchInfo {
  std::string kernel;
  unsigned kernelIndex = 0; ///< into Manifest::kernels
  std::array<uint32_t, 3> grid{1, 1, 1}, block{1, 1, 1};
  uint32_t dynamicSharedMemory = 0;
  /// Buffer indices, one device pointer (a by-value input's value) per kernel parameter.
  std::vector<unsigned> args;
};

/// A cubin of a manifest made for several chips (evo-opt's `chips=`): assembled from the manifest's
/// PTX for one chip, in a file beside the manifest.
struct BinaryInfo {
  std::string chip; ///< "sm_90a"
  std::string file, sha256;
  uint64_t bytes = 0;
};

/// The file of a manifest's constant buffers ("constants": {"file", "bytes", "sha256"}): their
/// bytes, each at its BufferInfo::constantOffset, beside the manifest.
struct ConstantsInfo {
  std::string file, sha256; ///< file "": the manifest has no constants
  uint64_t bytes = 0;
};

/// The kernel image the launches on one GPU use (Module::imageFor).
struct ImageInfo {
  bool cubin = false; ///< a cubin of `binaries`, else the PTX (JIT-compiled by the driver)
  std::string chip;   ///< the cubin's chip, or the PTX's (the manifest's target chip; may be "")
  std::string file;   ///< its file name ("" for an image given to fromMemory or LoadOptions)
};

/// A parsed and validated evo-manifest/1 (docs/architecture.md). Every field of an untrusted
/// manifest is checked: types, names (PTX symbols), sizes (no overflow, at most 1 TiB per
/// buffer), counts, indices, launch limits, and each launch's buffers against its kernel's
/// parameters. Keys of buffers, launches and kernel parameters that this runtime does not know
/// are refused (they could change how a kernel must be launched); other unknown keys are ignored.
struct Manifest {
  static constexpr uint64_t kWorkspaceAlignment = 256;
  /// Of every constant's offset in the constants file.
  static constexpr uint64_t kConstantAlignment = 256;
  static constexpr size_t kMaxRank = 16;

  std::string name, function, chip, features; ///< `chip`: the PTX's target
  std::string ptxFile, ptxSha256;
  uint64_t ptxBytes = 0;
  std::vector<std::string> chips;     ///< target.chips: every chip a cubin was made for
  std::vector<BinaryInfo> binaries;   ///< a cubin per chip (empty: PTX only)
  std::vector<BufferInfo> buffers;
  std::vector<std::string> kernels;
  std::vector<LaunchInfo> launches;
  std::vector<unsigned> inputs, outputs, scratch; ///< buffer indices per role, in ABI order
  std::vector<unsigned> tensorMaps; ///< buffers of role TensorMap (built by Module::launch)
  std::vector<unsigned> constants;  ///< buffers of role Constant (uploaded by the Module)
  ConstantsInfo constantsFile;      ///< where their bytes are (when `constants` is not empty)
  /// Bytes of one workspace: every scratch buffer at a kWorkspaceAlignment-aligned offset.
  uint64_t workspaceBytes = 0;

  /// Parses and validates manifest text (does not read the PTX).
  EVO_RUNTIME_API static Expected<Manifest> parse(std::string_view json);
  /// Reads and parses a manifest file.
  EVO_RUNTIME_API static Expected<Manifest> load(const std::string &path);
};

//===----------------------------------------------------------------------===//
// Launch arguments
//===----------------------------------------------------------------------===//

/// A contiguous device tensor: its address, element type and shape (row-major, no strides: the
/// kernels index dense buffers). Checked against the manifest at every launch. Or, for an input
/// the manifest passes by value (a scalar argument: `%alpha: f32`), the scalar's value: made by
/// scalar(), scalarInt() or scalarBits(), with `data` null and rank 0.
struct TensorRef {
  void *data = nullptr;
  DType dtype = DType::F32;
  size_t rank = 0; ///< Manifest::kMaxRank + 1 marks a shape that was too long
  std::array<int64_t, Manifest::kMaxRank> shape{};
  /// A scalar's value: its bytes, little-endian, in the low dtypeSize(dtype) bytes of `bits`.
  bool byValue = false;
  uint64_t bits = 0;

  /// `value` as a scalar of `dtype`: floats rounded to the nearest value of the type (ties to
  /// even; f16 and bf16 too; beyond the largest finite value it is infinity), integers
  /// truncated toward zero and saturated to the type's range (NaN: 0), i1 true when nonzero.
  EVO_RUNTIME_API static TensorRef scalar(DType dtype, double value);
  /// An integer scalar, its low bits as a C cast keeps them (i1: true when nonzero); for a float
  /// dtype the nearest value, as scalar().
  EVO_RUNTIME_API static TensorRef scalarInt(DType dtype, int64_t value);
  /// `bits` as they are (the low dtypeSize(dtype) bytes), e.g. an f16 from a `__half`.
  static TensorRef scalarBits(DType dtype, uint64_t bits) {
    TensorRef t;
    t.dtype = dtype;
    t.byValue = true;
    t.bits = bits;
    return t;
  }

  TensorRef() = default;
  TensorRef(void *data, DType dtype, std::initializer_list<int64_t> dims)
      : data(data), dtype(dtype) {
    setShape(dims.begin(), dims.size());
  }
  TensorRef(void *data, DType dtype, const std::vector<int64_t> &dims) : data(data), dtype(dtype) {
    setShape(dims.data(), dims.size());
  }

private:
  void setShape(const int64_t *dims, size_t n) {
    if (n > Manifest::kMaxRank) {
      rank = Manifest::kMaxRank + 1;
      return;
    }
    rank = n;
    for (size_t i = 0; i < n; ++i)
      shape[i] = dims[i];
  }
};

/// Device memory for a module's scratch buffers: at least Module::workspaceBytes() bytes, 256-byte
/// aligned, in the launch stream's context. One workspace serves one stream at a time: launches
/// that may run concurrently need workspaces of their own.
struct WorkspaceRef {
  void *data = nullptr;
  size_t bytes = 0;
};

/// A workspace owned by the library (cuMemAlloc in a context, cuMemFree on destruction). Destroy
/// it only after the work that uses it has finished, as with cudaFree.
class EVO_RUNTIME_API Workspace {
public:
  Workspace() = default;
  Workspace(Workspace &&other) noexcept { *this = std::move(other); }
  Workspace &operator=(Workspace &&other) noexcept;
  Workspace(const Workspace &) = delete;
  Workspace &operator=(const Workspace &) = delete;
  ~Workspace();
  WorkspaceRef ref() const { return {reinterpret_cast<void *>(ptr_), bytes_}; }
  size_t bytes() const { return bytes_; }

private:
  friend class Module;
  Context ctx_ = nullptr;
  uintptr_t ptr_ = 0;
  size_t bytes_ = 0;
};

//===----------------------------------------------------------------------===//
// The module
//===----------------------------------------------------------------------===//

struct LoadOptions {
  /// A PTX, cubin or fatbin image to load instead of the manifest's PTX file and cubins (e.g. one
  /// compiled ahead of time with ptxas, or embedded in the program), on every GPU. Trusted as
  /// given: it is not checked against the manifest's sha256. Empty: read `ptx.file` and the
  /// files of `binaries` beside the manifest.
  std::string image;
};

/// A manifest and its kernel image. The CUDA module is created on first use in each context (the
/// stream's, else the current one) and cached; launches may come from several threads at once.
class EVO_RUNTIME_API Module {
public:
  /// Reads `manifestPath`, the PTX file it names, the cubins of its `binaries` and its constants
  /// file, each a plain file name in the manifest's directory (no '/', no "..", not a symbolic
  /// link) whose size and sha256 match. Needs no GPU. On each GPU the launches use the image
  /// imageFor() chooses. The constants' bytes stay in host memory for the Module's lifetime
  /// (each context a module is loaded in gets its own device copy of them).
  static Expected<Module> load(const std::string &manifestPath, const LoadOptions &options = {});
  /// The same from memory: manifest text and the image, used on every GPU (PTX text is checked
  /// against the manifest's size and sha256 unless `trustedImage`; `binaries` are not used). A
  /// manifest with constant buffers is refused: their file can only be read by load().
  static Expected<Module> fromMemory(std::string_view manifestJson, std::string image,
                                     bool trustedImage = false);

  Module(Module &&) noexcept;
  Module &operator=(Module &&) noexcept;
  Module(const Module &) = delete;
  Module &operator=(const Module &) = delete;
  ~Module();

  const Manifest &manifest() const;
  size_t workspaceBytes() const { return manifest().workspaceBytes; }

  /// The image launches on a GPU of compute capability ccMajor.ccMinor use: the cubin of
  /// `binaries` made for exactly that GPU, else the newest one of its major version that runs on
  /// it (a cubin for sm_80 runs on sm_86, not on sm_90; one for sm_90a only on sm_90), else the
  /// PTX when the driver can JIT it for that GPU (PTX for sm_80 runs on any newer GPU); else
  /// `Unsupported`, saying what the manifest has. A module made from one image (fromMemory,
  /// LoadOptions::image) uses it everywhere, and a manifest without `binaries` its PTX (the
  /// driver then says whether it runs). Needs no GPU.
  Expected<ImageInfo> imageFor(int ccMajor, int ccMinor) const;

  /// Loads the CUDA module into the context of `stream` (null: the current context, or device 0's
  /// primary context when none is current) now rather than at the first launch, e.g. before a
  /// CUDA graph capture (loading a module is not allowed while capturing). Loading also uploads
  /// the constant buffers into device memory of that context (one cuMemAlloc each, copied on a
  /// stream of the library's own that it waits for: the one synchronization of the library),
  /// freed with the Module. A manifest with tensor maps also needs capture slots by then (see
  /// launch): from a launch outside capture, or reserveCaptureSlots().
  Status prepare(Stream stream = nullptr) const;

  /// Makes at least `count` capture slots free in the context of `stream` (see prepare and
  /// launch): one per launch with tensor maps that a CUDA graph capture will hold. Call it
  /// outside capture (allocation is not allowed during one); nothing to do without tensor maps.
  Status reserveCaptureSlots(size_t count, Stream stream = nullptr) const;

  /// Allocates a workspace of workspaceBytes() in the context of `stream` (see prepare). A
  /// module without scratch buffers gets an empty one.
  Expected<Workspace> allocateWorkspace(Stream stream = nullptr) const;

  /// Checks what launch() checks before it touches the GPU: input and output counts, each
  /// tensor's dtype and shape (a scalar of the dtype for an input passed by value, a tensor for
  /// every other), non-null 16-byte aligned addresses, outputs that overlap no other
  /// buffer, and a large enough, 256-byte aligned workspace when the module has scratch buffers.
  Status checkArguments(const TensorRef *inputs, size_t numInputs, const TensorRef *outputs,
                        size_t numOutputs, WorkspaceRef workspace = {}) const;

  /// Enqueues the manifest's launches on `stream` (zeroing the zero_init buffers first), with the
  /// module's device copies of its constant buffers where launches name them. Returns as soon as
  /// they are enqueued: it never synchronizes (but the first launch in a context loads the
  /// module there, see prepare()), so it may be captured in a CUDA graph (after prepare()).
  /// Kernel faults surface at the caller's next synchronization.
  /// Tensor maps (if the manifest has any) are encoded over the sources' addresses of this call
  /// and copied (cuMemcpyHtoDAsync) to device memory the Module owns before the launches: outside
  /// capture into one slot per stream, which a call with the same addresses on the same stream
  /// reuses; during CUDA graph capture into a fresh capture slot (pinned host bytes and device
  /// memory, so the copy is captured and replayed), which then belongs to the graph and is never
  /// rewritten, reused or freed. Capture slots come from a pool per context allocated outside
  /// capture: 256 ($EVO_RUNTIME_CAPTURE_SLOTS) at the first launch with tensor maps, refilled at
  /// later launches outside capture when half are used, or reserveCaptureSlots(). A capture
  /// with none left is refused with an InvalidArgument error that says so.
  Status launch(Stream stream, const TensorRef *inputs, size_t numInputs, const TensorRef *outputs,
                size_t numOutputs, WorkspaceRef workspace = {}) const;
  Status launch(Stream stream, const std::vector<TensorRef> &inputs,
                const std::vector<TensorRef> &outputs, WorkspaceRef workspace = {}) const {
    return launch(stream, inputs.data(), inputs.size(), outputs.data(), outputs.size(), workspace);
  }

  struct Impl;

private:
  explicit Module(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// "0.1.0": the version of the library (the evo-opt release it comes from).
EVO_RUNTIME_API const char *version();

} // namespace evo::runtime

#endif // EVO_RUNTIME_MODULE_H
