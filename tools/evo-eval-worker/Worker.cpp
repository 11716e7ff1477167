//===- Worker.cpp - evo-eval-worker: runs candidate kernels in isolation ----===//
//
//   evo-eval-worker REQUEST.json RESULTS.jsonl
//
// The GPU half of the verifier (docs/verification.md). It is a separate process so that a kernel
// that faults, traps, hangs or corrupts its context takes down only this process: the parent
// (evo-opt's Supervisor) reads the results written so far, records why the worker died, and
// starts a fresh one, with a fresh CUDA context, for the remaining candidates.
//
// Modes: "probe" (device facts), "ceilings" (copy, read and write bandwidth, FP32 FMA and f16
// mma.sync rates, and on compute capability 9.0 the f16/bf16 wgmma rates), "evaluate"
// (candidates: correctness checks, a fresh module load, then timing with checked launches;
// more may stream in through a queue file), "time" (interleaved
// re-measurement of validated finalists against the reference, every launch accountable).
// Results are JSON lines, flushed as they happen:
// {"event": "device" | "begin" | "result" | "fatal" | "ceilings" | "done", ...}.
// Every key, event and exit code is a constant of evo/Evaluation/WorkerProtocol.h.
//
// Plain C++ on the dlopen'ed driver (evo/Runtime/CudaDriver.h) and nlohmann/json: no LLVM, so it
// starts in milliseconds and can be copied to any GPU host.
//
// Why one file of ~2200 lines: the worker is a standalone program (no LLVM; built on GPU hosts
// with only a C++ compiler and nvcc), and its four modes share the request, the CUDA state and
// the result writer; the protocol itself lives in include/evo/Evaluation/WorkerProtocol.h.
//
//===----------------------------------------------------------------------===//

#include "evo/Evaluation/LaunchSelection.h"
#include "evo/Evaluation/PackedValues.h"
#include "evo/Evaluation/WorkerProtocol.h"
#include "evo/Runtime/BufferContract.h"
#include "evo/Runtime/CudaDriver.h"
#include "evo/Runtime/ParentWatch.h"
#include "evo/Runtime/TensorMap.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <vector>

using json = nlohmann::json;
using namespace evo::cuda;
namespace contract = evo::contract;
namespace P = evo::protocol;
using contract::ElementKind;
using contract::FillParams;

namespace {

const char kHelperPtx[] =
#include "WorkerKernels.inc"
    ;
/// KernelsSm90.cu for compute_90a: loaded only for the wgmma ceiling, on compute capability 9.0.
const char kHelperPtxSm90[] =
#include "WorkerKernelsSm90.inc"
    ;

/// Exit codes the Supervisor understands (WorkerProtocol.h).
constexpr int kOk = P::kExitOk, kBadRequest = P::kExitBadRequest, kFatalCuda = P::kExitFatalCuda,
              kNoGpu = P::kExitNoGpu;
static_assert(P::kExitParentGone == evo::kWorkerParentGone, "one exit code per meaning");

FILE *gOut = stdout;
Driver *D = nullptr;

void emit(const json &j) {
  std::string line = j.dump(-1, ' ', false, json::error_handler_t::replace);
  std::fwrite(line.data(), 1, line.size(), gOut);
  std::fputc('\n', gOut);
  std::fflush(gOut);
}

[[noreturn]] void finish(int code) {
  std::fflush(gOut);
  // No static destructors or driver teardown: after a sticky error they can block.
  _exit(code);
}

/// Errors after which the context is unusable: the worker must end.
bool isSticky(CUresult rc) {
  return (rc >= 700 && rc <= 719 && rc != 701) || rc == 999;
}

std::string explain(CUresult rc) {
  switch (rc) {
  case 2: return "out of device memory";
  case 700: return "illegal memory access";
  case 701: return "too many resources requested for the launch";
  case 702: return "kernel exceeded the driver's time limit";
  case 710: return "device-side assert or trap";
  case 714: return "hardware stack error";
  case 715: return "illegal instruction";
  case 716: return "misaligned address";
  case 717: return "invalid address space";
  case 718: return "invalid program counter";
  case 719: return "launch failure (the kernel crashed or trapped)";
  default: return "";
  }
}

std::string describe(const char *what, CUresult rc) {
  std::string s = D->describe(what, rc);
  std::string e = explain(rc);
  return e.empty() ? s : s + ": " + e;
}

/// A non-sticky CUDA error: the current candidate is invalid, the worker goes on.
struct CudaFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};
/// A candidate failing a check.
struct Invalid : std::runtime_error {
  using std::runtime_error::runtime_error;
};

int gCandidate = -1;

void check(CUresult rc, const char *what) {
  if (rc == CUDA_SUCCESS)
    return;
  if (isSticky(rc)) {
    emit({{P::kEvent, P::kEventFatal}, {P::kCandidate, gCandidate}, {P::kCode, rc},
          {P::kReason, describe(what, rc)}});
    finish(kFatalCuda);
  }
  throw CudaFailure(describe(what, rc));
}

// --- device memory ----------------------------------------------------------------------

/// A device buffer with red zones on both sides (filled with the canary byte).
struct DeviceBuffer {
  CUdeviceptr base = 0;
  size_t bytes = 0;
  bool redZones = true;
  CUdeviceptr ptr() const { return base + (redZones ? contract::kRedZoneBytes : 0); }
  size_t total() const { return bytes + (redZones ? 2 * contract::kRedZoneBytes : 0); }
  DeviceBuffer() = default;
  DeviceBuffer(size_t bytes, bool redZones = true) : bytes(bytes), redZones(redZones) {
    check(D->cuMemAlloc(&base, std::max<size_t>(total(), 8)), "cuMemAlloc");
  }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  ~DeviceBuffer() {
    if (base)
      D->cuMemFree(base);
  }
};

struct Helpers {
  CUmodule module = nullptr;
  CUfunction fill, poison, countNotEqual, checksum, scan, sumSquares, compare, checkLaunch,
      capture, gather, copy, read, write, fmaPeak, mmaPeak;
};
Helpers H;
CUstream gStream = nullptr;
int gSmCount = 132;
/// The device's L2 size (0 when unknown): the L2 flush after poisoning can be shorter.
uint64_t gL2Bytes = 0;
/// The device's compute capability (the wgmma ceiling needs 9.0).
int gCcMajor = 0, gCcMinor = 0;

void loadHelpers() {
  check(D->cuModuleLoadData(&H.module, kHelperPtx), "cuModuleLoadData(helpers)");
  auto get = [](CUfunction &f, const char *name) {
    check(D->cuModuleGetFunction(&f, H.module, name), name);
  };
  get(H.fill, "evo_fill");
  get(H.poison, "evo_poison");
  get(H.countNotEqual, "evo_count_not_equal");
  get(H.checksum, "evo_checksum");
  get(H.scan, "evo_scan");
  get(H.sumSquares, "evo_sum_squares");
  get(H.compare, "evo_compare");
  get(H.checkLaunch, "evo_check_launch");
  get(H.capture, "evo_capture");
  get(H.gather, "evo_gather");
  get(H.copy, "evo_copy");
  get(H.read, "evo_read");
  get(H.write, "evo_write");
  get(H.fmaPeak, "evo_fma_peak");
  get(H.mmaPeak, "evo_mma_peak");
}

template <typename... Args>
void launchHelper(CUfunction f, unsigned grid, unsigned block, Args... args) {
  void *params[] = {static_cast<void *>(&args)...};
  check(D->cuLaunchKernel(f, grid, 1, 1, block, 1, 1, 0, gStream, params, nullptr),
        "cuLaunchKernel(helper)");
}

unsigned gridFor(uint64_t n) {
  uint64_t blocks = (n + 255) / 256;
  return static_cast<unsigned>(std::max<uint64_t>(1, std::min<uint64_t>(blocks, gSmCount * 16)));
}

/// One 64-bit scratch word on the device for counters and sums.
struct Counters {
  DeviceBuffer buf;
  explicit Counters(size_t n) : buf(n * 8, false) {}
  void reset(uint64_t value = 0) {
    if (value == 0)
      check(D->cuMemsetD8Async(buf.ptr(), 0, buf.bytes, gStream), "cuMemsetD8Async");
    else
      check(D->cuMemsetD8Async(buf.ptr(), 0xFF, buf.bytes, gStream), "cuMemsetD8Async");
  }
  std::vector<uint64_t> read() {
    std::vector<uint64_t> v(buf.bytes / 8);
    check(D->cuStreamSynchronize(gStream), "cuStreamSynchronize");
    check(D->cuMemcpyDtoH(v.data(), buf.ptr(), buf.bytes), "cuMemcpyDtoH");
    return v;
  }
};

/// Page-locked host memory: asynchronous copies into it are ordered on the stream and need no
/// host synchronization.
struct PinnedWords {
  uint64_t *data = nullptr;
  size_t words = 0;
  PinnedWords() = default;
  PinnedWords(const PinnedWords &) = delete;
  PinnedWords &operator=(const PinnedWords &) = delete;
  void reserve(size_t n) {
    if (n <= words)
      return;
    release();
    size_t bytes = ((n * 8 + 4095) / 4096) * 4096;
    data = static_cast<uint64_t *>(std::aligned_alloc(4096, bytes));
    if (!data)
      throw std::bad_alloc();
    std::memset(data, 0, bytes);
    words = bytes / 8;
    check(D->cuMemHostRegister(data, bytes, 0), "cuMemHostRegister");
  }
  void release() {
    if (data) {
      D->cuMemHostUnregister(data);
      std::free(data);
    }
    data = nullptr;
    words = 0;
  }
  ~PinnedWords() { release(); }
};

double bitsToDouble(uint64_t bits) {
  double d;
  std::memcpy(&d, &bits, 8);
  return d;
}

double halfToDouble(uint16_t h) {
  int sign = h >> 15, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  double v;
  if (exp == 0)
    v = std::ldexp(mant, -24);
  else if (exp == 31)
    v = mant ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  else
    v = std::ldexp(mant + 1024, exp - 25);
  return sign ? -v : v;
}

double decode(uint64_t bits, ElementKind k) {
  switch (k) {
  case ElementKind::F64: return bitsToDouble(bits);
  case ElementKind::F32: {
    float f;
    uint32_t b = static_cast<uint32_t>(bits);
    std::memcpy(&f, &b, 4);
    return f;
  }
  case ElementKind::F16: return halfToDouble(static_cast<uint16_t>(bits));
  case ElementKind::BF16: {
    float f;
    uint32_t b = static_cast<uint32_t>(bits) << 16;
    std::memcpy(&f, &b, 4);
    return f;
  }
  case ElementKind::I64: return static_cast<double>(static_cast<int64_t>(bits));
  case ElementKind::I32: return static_cast<int32_t>(bits);
  case ElementKind::I16: return static_cast<int16_t>(bits);
  case ElementKind::I8: return static_cast<int8_t>(bits);
  case ElementKind::I1: return static_cast<uint8_t>(bits); // 0 or 1; anything else is wrong
  default: return 0;
  }
}

ElementKind kindFromName(const std::string &s) {
  static const std::map<std::string, ElementKind> m = {
      {"f64", ElementKind::F64}, {"f32", ElementKind::F32}, {"f16", ElementKind::F16},
      {"bf16", ElementKind::BF16}, {"i64", ElementKind::I64}, {"i32", ElementKind::I32},
      {"i16", ElementKind::I16}, {"i8", ElementKind::I8}, {"i1", ElementKind::I1}};
  auto it = m.find(s);
  if (it == m.end())
    throw std::invalid_argument("unsupported element kind '" + s + "'");
  return it->second;
}

/// 64 bits of OS entropy; a worker without entropy cannot choose unpredictable checks: it ends.
uint64_t entropy() {
  uint64_t v = 0;
  if (!evo::osEntropy(v)) {
    emit({{P::kEvent, P::kEventFatal}, {P::kCandidate, -1},
          {P::kReason, "no OS entropy (getrandom and /dev/urandom failed)"}});
    finish(kFatalCuda);
  }
  return v;
}

std::string kindName(ElementKind k) {
  static const char *names[] = {"f64", "f32", "f16", "bf16", "i64", "i32", "i16", "i8", "i1"};
  return names[static_cast<int>(k)];
}

/// NaN and infinities travel as strings in JSON.
double jsonNumber(const json &v) {
  if (v.is_number())
    return v.get<double>();
  std::string s = v.get<std::string>();
  if (s == "nan")
    return std::numeric_limits<double>::quiet_NaN();
  if (s == "inf")
    return std::numeric_limits<double>::infinity();
  if (s == "-inf")
    return -std::numeric_limits<double>::infinity();
  throw std::invalid_argument("bad number '" + s + "'");
}

// --- the request ------------------------------------------------------------------------

/// A tensor map's arguments (role "tensor_map"; WorkerProtocol.h, evo/Runtime/TensorMap.h).
struct TensorMapSpec {
  unsigned source = 0;
  std::string elementType;
  std::vector<int64_t> dims, strides, box;
  int64_t swizzle = 0;
};

struct BufferSpec {
  std::string name, role;
  ElementKind kind;
  uint64_t elements = 0;
  double lo = -1, hi = 1;
  bool zeroInit = false;
  /// An input that launches pass by value (a scalar argument; one element of at most 8 bytes).
  bool byValue = false;
  /// Role tensor_map: 128 bytes (kind i8) the worker encodes before launches.
  bool isTensorMap = false;
  TensorMapSpec tensorMap;
  size_t bytes() const { return elements * contract::elementBytes(kind); }
};

struct Launch {
  std::string kernel;
  unsigned grid[3], block[3];
  unsigned smem = 0;
  std::vector<unsigned> args;
};

struct Candidate {
  std::string id;
  /// PTX text, or a cubin when `binary`.
  std::string image;
  bool binary = false;
  std::vector<Launch> launches;
  bool reference = false;
  /// Timed when the request's timing is enabled (false: checked only, e.g. evo-verify's
  /// naive baseline, which is the reference of the timed launches but not timed itself).
  bool timeIt = true;
  /// Scratch buffers of this candidate only (numbered after the request's buffers).
  std::vector<BufferSpec> scratch;
};

struct Sample {
  unsigned buffer;
  std::vector<uint64_t> indices;
  std::vector<double> expected;
};

/// One set of inputs: how each input buffer is filled, and the oracle's values at sampled
/// output elements for them.
struct Trial {
  uint64_t seed = 0;
  /// Per request buffer (only input buffers' entries are used).
  std::vector<FillParams> fills;
  std::vector<std::string> dists;
  std::vector<Sample> samples;
};

struct Request {
  std::string mode;
  int device = 0;
  std::vector<BufferSpec> buffers;
  std::vector<Candidate> candidates;
  std::vector<Trial> trials;
  /// The inputs of every timed launch (own seed; never only a check trial's, unless an old-style
  /// request gives none: then trial 0's).
  Trial timingInputs;
  bool haveTimingInputs = false;
  /// The second timing input set (same distributions, a fresh seed of OS entropy, no oracle
  /// samples): timed launches alternate between the two, so the outputs a launch finds are the
  /// answer for the other inputs, never its own.
  Trial timingInputsB;
  std::map<std::string, double> rtol;
  bool timing = true;
  int warmup = 10, runs = 100, repeats = 2;
  /// Timed runs stop early once a repeat has spent this long (slow kernels: at least 5 runs).
  double maxMsPerRepeat = 1500;
  uint64_t flushBytes = 256ull << 20;
  /// Poison outputs (and reset scratch) before every timed launch, compare after a random subset
  /// (always the last two). Off only to measure what the checks cost.
  bool checkLaunches = true;
  double checkFraction = 0.25;
  unsigned minChecked = 4;
  /// "evaluate": a file the parent appends more candidates to (one JSON object per line, then
  /// {"end": true}); "time": interleaved timing rounds.
  std::string queue;
  int rounds = 1;
};

/// A tensor map entry: {"name", "role": "tensor_map", "bytes": 128, "tensor_map": {...}}; its
/// source must index one of the first `numBuffers` buffers.
BufferSpec parseTensorMap(const json &b, size_t numBuffers) {
  BufferSpec s;
  s.name = b.value(P::kName, "tensor_map");
  s.role = P::kRoleTensorMap;
  s.kind = ElementKind::I8;
  s.elements = evo::tensormap::kDescriptorBytes;
  s.isTensorMap = true;
  if (b.value(P::kBytes, evo::tensormap::kDescriptorBytes) != evo::tensormap::kDescriptorBytes)
    throw std::invalid_argument("tensor map '" + s.name + "' must be 128 bytes");
  const json &m = b.at(P::kTensorMap);
  TensorMapSpec &t = s.tensorMap;
  namespace K = evo::tensormap::key;
  t.source = m.at(K::kSource).get<unsigned>();
  t.elementType = m.at(K::kElementType).get<std::string>();
  t.dims = m.at(K::kDims).get<std::vector<int64_t>>();
  t.strides = m.at(K::kStrides).get<std::vector<int64_t>>();
  t.box = m.at(K::kBox).get<std::vector<int64_t>>();
  t.swizzle = m.value(K::kSwizzle, int64_t(0));
  if (t.source >= numBuffers)
    throw std::invalid_argument("tensor map '" + s.name + "' names buffer " +
                                std::to_string(t.source));
  return s;
}

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::invalid_argument("cannot read '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Candidate parseCandidate(const json &c, size_t numBuffers) {
  // numBuffers grows by the candidate's own scratch buffers below.
  Candidate k;
  k.id = c.at(P::kId).get<std::string>();
  if (c.contains(P::kCubinFile)) {
    k.image = readFile(c[P::kCubinFile].get<std::string>());
    k.binary = true;
  } else {
    k.image = c.contains(P::kPtxFile) ? readFile(c[P::kPtxFile].get<std::string>())
                                      : c.at(P::kPtx).get<std::string>();
  }
  k.reference = c.value(P::kReference, false);
  k.timeIt = c.value(P::kTimeIt, true);
  size_t withScratch = numBuffers + c.value(P::kScratch, json::array()).size();
  for (const json &b : c.value(P::kScratch, json::array())) {
    if (b.value(P::kRole, "") == std::string(P::kRoleTensorMap)) {
      k.scratch.push_back(parseTensorMap(b, withScratch));
      continue;
    }
    BufferSpec s;
    s.name = b.value(P::kName, "scratch");
    s.role = P::kRoleScratch;
    s.kind = kindFromName(b.at(P::kKind).get<std::string>());
    s.elements = b.at(P::kElements).get<uint64_t>();
    s.zeroInit = b.value(P::kZeroInit, false);
    k.scratch.push_back(s);
  }
  numBuffers += k.scratch.size();
  for (const json &l : c.at(P::kLaunches)) {
    Launch L;
    L.kernel = l.at(P::kKernel).get<std::string>();
    for (int d = 0; d < 3; ++d) {
      L.grid[d] = l.at(P::kGrid)[d].get<unsigned>();
      L.block[d] = l.at(P::kBlock)[d].get<unsigned>();
    }
    L.smem = l.value(P::kDynamicSharedMemory, 0u);
    for (const json &a : l.at(P::kArgs)) {
      unsigned idx = a.get<unsigned>();
      if (idx >= numBuffers)
        throw std::invalid_argument("launch of '" + L.kernel + "' names buffer " +
                                    std::to_string(idx));
      L.args.push_back(idx);
    }
    k.launches.push_back(L);
  }
  return k;
}

double finiteNumber(const json &j, const char *key, double fallback) {
  double v = j.contains(key) ? jsonNumber(j[key]) : fallback;
  if (!std::isfinite(v))
    throw std::invalid_argument(std::string("input '") + key + "' must be finite");
  return v;
}

Trial parseTrial(const json &t, const std::vector<BufferSpec> &buffers) {
  Trial tr;
  tr.seed = t.at(P::kSeed).get<uint64_t>();
  for (size_t i = 0; i < buffers.size(); ++i) {
    const BufferSpec &b = buffers[i];
    tr.fills.push_back(contract::uniformFill(tr.seed, static_cast<uint32_t>(i), b.kind, b.lo, b.hi));
    tr.dists.push_back(P::kDistUniform);
  }
  for (const json &in : t.value(P::kInputs, json::array())) {
    unsigned b = in.at(P::kBuffer).get<unsigned>();
    if (b >= buffers.size() || buffers[b].role != P::kRoleInput)
      throw std::invalid_argument("inputs names buffer " + std::to_string(b) +
                                  ", which is not an input");
    FillParams &p = tr.fills[b];
    std::string dist = in.value(P::kDist, std::string(P::kDistUniform));
    if (dist == P::kDistUniform)
      p.dist = static_cast<int32_t>(contract::Distribution::Uniform);
    else if (dist == P::kDistNormal)
      p.dist = static_cast<int32_t>(contract::Distribution::Normal);
    else if (dist == P::kDistWide)
      p.dist = static_cast<int32_t>(contract::Distribution::Wide);
    else if (dist == P::kDistSpecial)
      p.dist = static_cast<int32_t>(contract::Distribution::Special);
    else
      throw std::invalid_argument("unknown input distribution '" + dist + "'");
    tr.dists[b] = dist;
    p.lo = finiteNumber(in, P::kLo, p.lo);
    p.hi = finiteNumber(in, P::kHi, p.hi);
    if (!(p.lo <= p.hi))
      throw std::invalid_argument("input range with lo > hi");
    p.center = finiteNumber(in, P::kCenter, 0.5 * (p.lo + p.hi));
    p.scale = finiteNumber(in, P::kScale, 1.0);
    p.emin = in.value(P::kEmin, -12);
    p.emax = in.value(P::kEmax, 6);
    if (p.emin > p.emax || p.emin < -1074 || p.emax > 1023)
      throw std::invalid_argument("wide inputs need -1074 <= emin <= emax <= 1023");
    const json special = in.value(P::kSpecial, json::array());
    if (special.size() > static_cast<size_t>(contract::kMaxSpecialValues))
      throw std::invalid_argument("at most " + std::to_string(contract::kMaxSpecialValues) +
                                  " special values");
    p.numSpecial = static_cast<int32_t>(special.size());
    for (size_t k = 0; k < special.size(); ++k) {
      p.special[k] = jsonNumber(special[k]);
      if (!std::isfinite(p.special[k]))
        throw std::invalid_argument("special input values must be finite");
    }
  }
  for (const json &s : t.value(P::kSamples, json::array())) {
    Sample sm;
    sm.buffer = s.at(P::kBuffer).get<unsigned>();
    if (sm.buffer >= buffers.size())
      throw std::invalid_argument("malformed samples");
    if (s.value(P::kAll, false)) { // every element, in order
      sm.indices.resize(buffers[sm.buffer].elements);
      for (uint64_t i = 0; i < sm.indices.size(); ++i)
        sm.indices[i] = i;
    } else {
      sm.indices = s.at(P::kIndices).get<std::vector<uint64_t>>();
    }
    if (s.contains(P::kExpectedF64)) {
      std::optional<std::vector<double>> v =
          evo::packed::unpackF64(s.at(P::kExpectedF64).get_ref<const std::string &>());
      if (!v)
        throw std::invalid_argument("malformed packed expected values");
      sm.expected = std::move(*v);
    } else {
      for (const json &e : s.at(P::kExpected))
        sm.expected.push_back(jsonNumber(e));
    }
    if (sm.indices.size() != sm.expected.size())
      throw std::invalid_argument("malformed samples");
    if (buffers[sm.buffer].role != P::kRoleOutput)
      throw std::invalid_argument("samples of a buffer that is not an output");
    for (uint64_t i : sm.indices)
      if (i >= buffers[sm.buffer].elements)
        throw std::invalid_argument("sample index out of range");
    tr.samples.push_back(std::move(sm));
  }
  return tr;
}

Request parseRequest(const json &j) {
  Request r;
  if (j.value(P::kFormat, "") != std::string(P::kRequestFormat))
    throw std::invalid_argument(std::string("not an ") + P::kRequestFormat +
                                " (evo-opt and evo-eval-worker are from different builds?)");
  r.mode = j.at(P::kMode).get<std::string>();
  r.device = j.value(P::kDevice, 0);
  const json requestBuffers = j.value(P::kBuffers, json::array());
  for (const json &b : requestBuffers) {
    if (b.value(P::kRole, "") == std::string(P::kRoleTensorMap)) {
      r.buffers.push_back(parseTensorMap(b, requestBuffers.size()));
      continue;
    }
    BufferSpec s;
    s.name = b.at(P::kName).get<std::string>();
    s.role = b.at(P::kRole).get<std::string>();
    s.kind = kindFromName(b.at(P::kKind).get<std::string>());
    s.elements = b.at(P::kElements).get<uint64_t>();
    if (b.contains(P::kRange)) {
      s.lo = b[P::kRange][0].get<double>();
      s.hi = b[P::kRange][1].get<double>();
    }
    s.zeroInit = b.value(P::kZeroInit, false);
    s.byValue = b.value(P::kByValue, false);
    if (s.role != P::kRoleInput && s.role != P::kRoleOutput && s.role != P::kRoleScratch)
      throw std::invalid_argument("buffer '" + s.name + "' has unknown role '" + s.role + "'");
    if (s.byValue && (s.role != P::kRoleInput || s.elements != 1 || s.bytes() > 8))
      throw std::invalid_argument("buffer '" + s.name +
                                  "' is by_value: it must be an input of one element");
    r.buffers.push_back(s);
  }
  for (const json &c : j.value(P::kCandidates, json::array()))
    r.candidates.push_back(parseCandidate(c, r.buffers.size()));
  r.queue = j.value(P::kQueue, "");
  r.rounds = std::max(1, j.value(P::kRounds, 1));
  for (const json &t : j.value(P::kTrials, json::array()))
    r.trials.push_back(parseTrial(t, r.buffers));
  // The tolerance table belongs to the Verifier and comes with the request: no defaults here.
  // Named: items() of the temporary value() returns would dangle (it ends with the statement).
  const json rtolTable = j.value(P::kRtol, json::object());
  for (auto &[k, v] : rtolTable.items()) {
    double x = jsonNumber(v);
    if (!(x >= 0) || !std::isfinite(x))
      throw std::invalid_argument("rtol for '" + k + "' must be a finite number >= 0");
    r.rtol[k] = x;
  }
  if (r.mode == P::kModeEvaluate || r.mode == P::kModeTime)
    for (const BufferSpec &b : r.buffers)
      if (b.role == P::kRoleOutput && !r.rtol.count(kindName(b.kind)))
        throw std::invalid_argument("the request's rtol has no tolerance for output kind '" +
                                    kindName(b.kind) + "'");
  if (j.contains(P::kTiming)) {
    const json &t = j[P::kTiming];
    r.timing = t.value(P::kEnabled, true);
    r.warmup = t.value(P::kWarmup, r.warmup);
    // At least two timed launches: the checks always take the last two, one of each input set
    // when timing alternates them (LaunchSelection.h); one launch would check one set only.
    r.runs = std::max(2, t.value(P::kRuns, r.runs));
    r.repeats = std::max(1, t.value(P::kRepeats, r.repeats));
    r.flushBytes = t.value(P::kFlushBytes, r.flushBytes);
    r.maxMsPerRepeat = t.value(P::kMaxMsPerRepeat, r.maxMsPerRepeat);
    r.checkLaunches = t.value(P::kCheckLaunches, true);
    r.checkFraction = t.value(P::kCheckFraction, r.checkFraction);
    r.minChecked = t.value(P::kMinChecked, r.minChecked);
    if (t.contains(P::kInputs)) {
      r.timingInputs = parseTrial(t[P::kInputs], r.buffers);
      r.haveTimingInputs = true;
    }
  }
  if (!r.haveTimingInputs && !r.trials.empty()) {
    r.timingInputs = r.trials.front();
    r.haveTimingInputs = true;
  }
  if (r.mode == P::kModeTime && !r.haveTimingInputs)
    throw std::invalid_argument("a time request needs timing inputs (timing.inputs)");
  if (r.haveTimingInputs) {
    r.timingInputsB = r.timingInputs;
    r.timingInputsB.seed = entropy();
    if (r.timingInputsB.seed == r.timingInputs.seed)
      ++r.timingInputsB.seed;
    for (FillParams &f : r.timingInputsB.fills)
      f.seed = r.timingInputsB.seed;
    r.timingInputsB.samples.clear();
  }
  return r;
}

// --- evaluation ---------------------------------------------------------------------------

/// Copies of a validated run's outputs (the reference of later comparisons), with their RMS
/// (which scales atol) and checksums (a wild write into them stops the worker).
struct OutputSet {
  std::vector<std::unique_ptr<DeviceBuffer>> copies;
  std::vector<double> rms;
  std::vector<uint64_t> sums;
  /// Per output: what the reference itself may be off by, twice its largest distance from the
  /// oracle's samples on these inputs (0: unknown). A naive baseline that accumulates a bf16
  /// matmul in bf16 can be 256 away from an f32-accumulating kernel where both are within 0.4 %
  /// of the oracle (docs/verification.md): the comparison must not reject the better kernel.
  std::vector<double> slack;
  bool empty() const { return copies.empty(); }
};

/// The reference's outputs on both timing input sets (`b` empty when launches do not alternate).
/// Where elements off the reference were found, for the oracle to say which side is right:
/// a trial (its index) or a timing input set (0: A, 1: B). None: not arbitrable.
struct DisputeSource {
  enum Kind { None, Trial, Timing } kind = None;
  int index = 0;
};

struct TimingRef {
  OutputSet a, b;
  bool empty() const { return a.empty(); }
};

using Functions = std::map<std::string, CUfunction>;

struct Evaluator {
  Request &req;
  std::vector<std::unique_ptr<DeviceBuffer>> buffers;
  /// Per trial: the reference candidate's outputs.
  std::vector<OutputSet> refOutputs;
  /// Per output, the largest distance from the oracle's samples in the last checkRun.
  std::vector<double> lastSampleAbsErr;
  /// This candidate's elements off the reference, for the oracle (see dispute()).
  json disputes = json::array();
  std::string firstDispute;
  /// The reference's outputs on the two timing input sets: every checked timed launch is
  /// compared with those of its set.
  TimingRef timingRef;
  /// Input buffers of the second timing input set (null for other buffers, or when timed
  /// launches are not checked).
  std::vector<std::unique_ptr<DeviceBuffer>> inputsB;
  /// Per trial and input buffer: the checksum right after filling (and for the timing inputs).
  std::vector<std::vector<uint64_t>> inputChecksums;
  std::vector<uint64_t> timingInputChecksums, timingInputChecksumsB;
  Counters counters{8};
  /// The running candidate's own scratch buffers (after the request's buffers).
  std::vector<std::unique_ptr<DeviceBuffer>> candidateScratch;
  std::vector<BufferSpec> candidateScratchSpecs;
  /// A gap of random size in the address space, so that the reference copies and check slots
  /// allocated after it are not at offsets a kernel could predict.
  std::unique_ptr<DeviceBuffer> gap;
  /// Check results, copied out after every checked launch (a later launch cannot alter them).
  PinnedWords hostSlots;
  /// The tensor maps of the request and of the running candidate, encoded for both input sets
  /// (their sources may be inputs, which set B binds elsewhere): set A's descriptor lives in the
  /// map's own buffer, set B's in `b`. Uploaded before every run, compared after every checked
  /// run and at the end of timing: a kernel that rewrites its descriptor is invalid.
  struct TensorMapSlot {
    size_t index = 0;
    CUtensorMap host[2];
    std::unique_ptr<DeviceBuffer> b;
  };
  std::vector<TensorMapSlot> tensorMaps;
  /// Per input set and request buffer: the value of a by-value input as last filled.
  std::vector<uint64_t> byValueBits[2];

  DeviceBuffer &buffer(unsigned i) {
    return i < buffers.size() ? *buffers[i] : *candidateScratch[i - buffers.size()];
  }
  const BufferSpec &spec(size_t i) const {
    return i < req.buffers.size() ? req.buffers[i] : candidateScratchSpecs[i - req.buffers.size()];
  }
  size_t numBuffers() const { return req.buffers.size() + candidateScratch.size(); }
  /// Input buffer `i` of input set `set` (0: the trials' and timing set A, 1: timing set B).
  DeviceBuffer &inputBuf(size_t i, int set) {
    return set == 1 && inputsB[i] ? *inputsB[i] : *buffers[i];
  }
  const Trial &timingInputs(int set) const {
    return set == 1 ? req.timingInputsB : req.timingInputs;
  }
  std::vector<uint64_t> &timingSums(int set) {
    return set == 1 ? timingInputChecksumsB : timingInputChecksums;
  }

  void setCandidateScratch(const Candidate &c) {
    // Earlier uploads read the old descriptors' host copies: let them finish first.
    check(D->cuStreamSynchronize(gStream), "cuStreamSynchronize");
    tensorMaps.clear();
    candidateScratch.clear();
    candidateScratchSpecs = c.scratch;
    for (const BufferSpec &s : c.scratch) {
      candidateScratch.push_back(std::make_unique<DeviceBuffer>(s.bytes()));
      DeviceBuffer &b = *candidateScratch.back();
      check(D->cuMemsetD8Async(b.base, contract::kCanaryByte, b.total(), gStream),
            "cuMemsetD8Async");
    }
    encodeTensorMaps();
  }

  /// The device address bound to argument buffer `a` when the inputs are set `set`'s.
  CUdeviceptr argPtr(unsigned a, int set) {
    if (a < req.buffers.size() && req.buffers[a].role == P::kRoleInput)
      return inputBuf(a, set).ptr();
    if (set == 1 && spec(a).isTensorMap)
      for (const TensorMapSlot &t : tensorMaps)
        if (t.index == a)
          return t.b->ptr();
    return buffer(a).ptr();
  }

  /// Encodes every tensor map over the buffers its source is bound to in each input set
  /// (re-encoded whenever the bound buffers change: per candidate). A map that cannot be
  /// encoded (TensorMap.h's checks against the bound buffer, or the driver) makes the candidate
  /// invalid.
  void encodeTensorMaps() {
    for (size_t i = 0; i < numBuffers(); ++i) {
      const BufferSpec &s = spec(i);
      if (!s.isTensorMap)
        continue;
      const TensorMapSpec &t = s.tensorMap;
      const std::string what = "tensor map '" + s.name + "'";
      if (t.source >= numBuffers() || spec(t.source).isTensorMap)
        throw Invalid(what + ": its source is not a buffer");
      const BufferSpec &src = spec(t.source);
      if (t.elementType != kindName(src.kind))
        throw Invalid(what + ": element type " + t.elementType + " is not its source '" +
                      src.name + "''s (" + kindName(src.kind) + ")");
      TensorMapSlot slot;
      slot.index = i;
      for (int set = 0; set < 2; ++set) {
        std::string error;
        if (!evo::cuda::encodeTensorMap(*D, slot.host[set], t.elementType,
                                        argPtr(t.source, set), src.bytes(), t.dims.data(),
                                        t.strides.data(), t.box.data(), t.dims.size(), t.swizzle,
                                        error))
          throw Invalid(what + " over '" + src.name + "' cannot be encoded: " + error);
      }
      slot.b = std::make_unique<DeviceBuffer>(evo::tensormap::kDescriptorBytes);
      check(D->cuMemsetD8Async(slot.b->base, contract::kCanaryByte, slot.b->total(), gStream),
            "cuMemsetD8Async");
      tensorMaps.push_back(std::move(slot));
    }
  }

  /// Every tensor map's descriptors of both input sets onto the device (before every run).
  void uploadTensorMaps() {
    for (TensorMapSlot &t : tensorMaps)
      for (int set = 0; set < 2; ++set)
        check(D->cuMemcpyHtoDAsync(set == 1 ? t.b->ptr() : buffer(t.index).ptr(), &t.host[set],
                                   sizeof(CUtensorMap), gStream),
              "cuMemcpyHtoDAsync");
  }

  /// The descriptors of input set `set` as uploaded (after runs on that set).
  void checkTensorMaps(int set) {
    if (tensorMaps.empty())
      return;
    std::vector<CUtensorMap> now(tensorMaps.size());
    for (size_t k = 0; k < tensorMaps.size(); ++k) {
      const TensorMapSlot &t = tensorMaps[k];
      check(D->cuMemcpyDtoHAsync(&now[k], set == 1 ? t.b->ptr() : buffer(t.index).ptr(),
                                 sizeof(CUtensorMap), gStream),
            "cuMemcpyDtoHAsync");
    }
    check(D->cuStreamSynchronize(gStream), "cuStreamSynchronize");
    for (size_t k = 0; k < tensorMaps.size(); ++k)
      if (std::memcmp(&now[k], &tensorMaps[k].host[set], sizeof(CUtensorMap)) != 0)
        throw Invalid("the kernel rewrote its tensor map '" + spec(tensorMaps[k].index).name +
                      "'" + (set == 1 ? " (timing inputs B)" : ""));
  }

  explicit Evaluator(Request &r) : req(r) {
    byValueBits[0].assign(req.buffers.size(), 0);
    byValueBits[1].assign(req.buffers.size(), 0);
    for (const BufferSpec &b : req.buffers) {
      buffers.push_back(std::make_unique<DeviceBuffer>(b.bytes()));
      restoreRedZones(buffers.size() - 1);
    }
    for (const BufferSpec &b : req.buffers) {
      inputsB.emplace_back();
      if (b.role == P::kRoleInput && (req.timing || req.mode == P::kModeTime) &&
          req.checkLaunches && req.haveTimingInputs) {
        inputsB.back() = std::make_unique<DeviceBuffer>(b.bytes());
        DeviceBuffer &d = *inputsB.back();
        check(D->cuMemsetD8Async(d.base, contract::kCanaryByte, d.total(), gStream),
              "cuMemsetD8Async");
      }
    }
    inputChecksums.assign(req.trials.size(), {});
    gap = std::make_unique<DeviceBuffer>((1 + entropy() % 1024) * 65536, false);
  }

  void restoreRedZones(size_t i) {
    DeviceBuffer &b = buffer(i);
    check(D->cuMemsetD8Async(b.base, contract::kCanaryByte, b.total(), gStream), "cuMemsetD8Async");
  }

  uint64_t checksum(CUdeviceptr p, uint64_t bytes) {
    counters.reset();
    launchHelper(H.checksum, gridFor(bytes / 8 + 1), 256, p, bytes, counters.buf.ptr());
    return counters.read()[0];
  }

  void fillInput(size_t i, const Trial &tr, int set = 0) {
    const BufferSpec &s = req.buffers[i];
    FillParams p = tr.fills[i];
    launchHelper(H.fill, gridFor(s.elements), 256, inputBuf(i, set).ptr(), s.elements, p);
    if (s.byValue) {
      // Launches pass the value the fill wrote (the oracle reads the same element).
      uint64_t &bits = byValueBits[set].at(i);
      bits = 0;
      check(D->cuMemcpyDtoHAsync(&bits, inputBuf(i, set).ptr(), s.bytes(), gStream),
            "cuMemcpyDtoHAsync");
      check(D->cuStreamSynchronize(gStream), "cuStreamSynchronize");
    }
  }

  /// The kind's poison in every element (memsets where the pattern allows).
  void poisonAt(CUdeviceptr p, const BufferSpec &s) {
    if (s.elements == 0)
      return;
    auto d32 = [&](uint32_t v) {
      check(D->cuMemsetD32Async(p, v, s.elements, gStream), "cuMemsetD32Async");
    };
    auto d16 = [&](uint16_t v) {
      check(D->cuMemsetD16Async(p, v, s.elements, gStream), "cuMemsetD16Async");
    };
    switch (s.kind) {
    case ElementKind::F32:
      return d32(contract::kPoisonF32);
    case ElementKind::I32:
      return d32(contract::kPoisonI32);
    case ElementKind::F16:
      return d16(contract::kPoisonF16);
    case ElementKind::BF16:
      return d16(contract::kPoisonBF16);
    case ElementKind::I16:
      return d16(contract::kPoisonI16);
    case ElementKind::I8:
    case ElementKind::I1:
      check(D->cuMemsetD8Async(p, contract::kPoisonI8, s.elements, gStream), "cuMemsetD8Async");
      return;
    default:
      launchHelper(H.poison, gridFor(s.elements), 256, p, s.elements, static_cast<int>(s.kind));
      return;
    }
  }

  /// Outputs and scratch as every run starts: poisoned, zero_init scratch zeroed. With
  /// `keepScratch`, other scratch keeps what the previous run (on other inputs) left there: a
  /// kernel that carries results from launch to launch in scratch is then wrong.
  void resetOutputs(bool keepScratch = false) {
    uploadTensorMaps();
    for (size_t i = 0; i < numBuffers(); ++i) {
      const BufferSpec &s = spec(i);
      if (s.role == P::kRoleInput || s.isTensorMap)
        continue;
      if (s.role == P::kRoleScratch && s.zeroInit)
        check(D->cuMemsetD8Async(buffer(i).ptr(), 0, s.bytes(), gStream), "cuMemsetD8Async");
      else if (s.role != P::kRoleScratch || !keepScratch)
        poisonAt(buffer(i).ptr(), s);
    }
  }

  /// Scratch as every launch starts when outputs are not poisoned: zero_init zeroed, the rest
  /// poisoned (scratch kept from launch to launch could hold the answer for these inputs from
  /// two launches ago, on the same set).
  void resetScratch() {
    for (size_t i = 0; i < numBuffers(); ++i) {
      const BufferSpec &s = spec(i);
      if (s.role == P::kRoleScratch && s.zeroInit)
        check(D->cuMemsetD8Async(buffer(i).ptr(), 0, s.bytes(), gStream), "cuMemsetD8Async");
      else if (s.role == P::kRoleScratch)
        poisonAt(buffer(i).ptr(), s);
    }
  }

  /// Bytes resetOutputs() writes.
  uint64_t resetBytes() const {
    uint64_t n = 0;
    for (size_t i = 0; i < numBuffers(); ++i)
      if (spec(i).role != P::kRoleInput && !spec(i).isTensorMap)
        n += spec(i).bytes();
    return n;
  }

  /// Inputs of `tr` (their checksums recorded the first time), outputs poisoned.
  void prepare(const Trial &tr, std::vector<uint64_t> &sums, bool keepScratch = false,
               int set = 0) {
    resetOutputs(keepScratch);
    fillInputs(tr, sums, set);
  }

  /// Inputs of `tr` into input set `set` (their checksums recorded the first time).
  void fillInputs(const Trial &tr, std::vector<uint64_t> &sums, int set) {
    bool record = sums.empty();
    for (size_t i = 0; i < req.buffers.size(); ++i)
      if (req.buffers[i].role == P::kRoleInput) {
        fillInput(i, tr, set);
        if (record)
          sums.push_back(checksum(inputBuf(i, set).ptr(), req.buffers[i].bytes()));
      }
  }

  Functions loadCandidate(const Candidate &c, CUmodule &module) {
    // The JIT's own error log makes PTX problems readable.
    std::vector<char> log(16384, 0);
    int options[] = {5 /*CU_JIT_ERROR_LOG_BUFFER*/, 6 /*..._SIZE_BYTES*/};
    void *values[] = {log.data(), reinterpret_cast<void *>(static_cast<uintptr_t>(log.size()))};
    CUresult rc = D->cuModuleLoadDataEx(&module, c.image.c_str(), c.binary ? 0 : 2, options,
                                        values);
    if (rc != CUDA_SUCCESS) {
      module = nullptr;
      if (isSticky(rc))
        check(rc, "cuModuleLoadDataEx");
      throw Invalid(std::string(c.binary ? "the cubin" : "the PTX") + " does not load: " +
                    describe("cuModuleLoadDataEx", rc) +
                    (log[0] ? std::string(": ") + log.data() : std::string()));
    }
    Functions fns;
    for (const Launch &l : c.launches) {
      if (fns.count(l.kernel))
        continue;
      CUfunction f;
      if (D->cuModuleGetFunction(&f, module, l.kernel.c_str()) != CUDA_SUCCESS)
        throw Invalid("the PTX has no kernel '" + l.kernel + "'");
      fns[l.kernel] = f;
      unsigned maxSmem = 0;
      for (const Launch &m : c.launches)
        if (m.kernel == l.kernel)
          maxSmem = std::max(maxSmem, m.smem);
      if (maxSmem > 48 * 1024)
        check(D->cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, maxSmem),
              "cuFuncSetAttribute");
    }
    return fns;
  }

  /// Unloads `module` and loads the candidate again: no device state (module globals, anything
  /// a kernel left in its module's memory) survives from the checks into the timing.
  Functions reload(const Candidate &c, CUmodule &module) {
    check(D->cuStreamSynchronize(gStream), "cuStreamSynchronize");
    if (module)
      check(D->cuModuleUnload(module), "cuModuleUnload");
    module = nullptr;
    return loadCandidate(c, module);
  }

  /// The candidate's launches with input set `set` bound to its input arguments: a device
  /// address per parameter, or a by-value input's bits (the driver copies the parameter's size
  /// from the start of the 8-byte word: its low bytes, little-endian).
  void run(const Candidate &c, Functions &fns, int set = 0) {
    for (const Launch &l : c.launches) {
      std::vector<uint64_t> words;
      for (unsigned a : l.args)
        words.push_back(a < req.buffers.size() && req.buffers[a].byValue
                            ? byValueBits[set][a]
                            : static_cast<uint64_t>(argPtr(a, set)));
      std::vector<void *> params;
      for (uint64_t &w : words)
        params.push_back(&w);
      check(D->cuLaunchKernel(fns[l.kernel], l.grid[0], l.grid[1], l.grid[2], l.block[0],
                              l.block[1], l.block[2], l.smem, gStream, params.data(), nullptr),
            ("cuLaunchKernel(" + l.kernel + ")").c_str());
    }
  }

  uint64_t changedRedZoneBytes(size_t i) { return changedRedZoneBytes(buffer(i)); }
  uint64_t changedRedZoneBytes(DeviceBuffer &b) {
    counters.reset();
    launchHelper(H.countNotEqual, gridFor(contract::kRedZoneBytes), 256, b.base,
                 contract::kRedZoneBytes, contract::kCanaryByte, counters.buf.ptr());
    CUdeviceptr tail = b.ptr() + b.bytes;
    launchHelper(H.countNotEqual, gridFor(contract::kRedZoneBytes), 256, tail,
                 contract::kRedZoneBytes, contract::kCanaryByte, counters.buf.ptr());
    return counters.read()[0];
  }

  /// counts: poison, NaN, Inf.
  std::vector<uint64_t> scan(size_t i) {
    const BufferSpec &s = req.buffers[i];
    counters.reset();
    launchHelper(H.scan, gridFor(s.elements), 256, buffers[i]->ptr(), s.elements,
                 static_cast<int>(s.kind), counters.buf.ptr());
    auto v = counters.read();
    return {v[0], v[1], v[2]};
  }

  double sumSquares(CUdeviceptr p, const BufferSpec &s) {
    counters.reset();
    launchHelper(H.sumSquares, gridFor(s.elements), 256, p, s.elements, static_cast<int>(s.kind),
                 counters.buf.ptr());
    return bitsToDouble(counters.read()[0]);
  }

  std::vector<uint64_t> gatherAt(CUdeviceptr p, ElementKind kind,
                                 const std::vector<uint64_t> &indices) {
    if (indices.empty())
      return {};
    DeviceBuffer idx(indices.size() * 8, false), out(indices.size() * 8, false);
    // Copies go through gStream: it is a non-blocking stream, so a copy on the legacy stream
    // (cuMemcpyHtoD) would not be ordered before the gather and could race with it.
    check(D->cuMemcpyHtoDAsync(idx.ptr(), indices.data(), idx.bytes, gStream), "cuMemcpyHtoDAsync");
    uint64_t m = indices.size();
    launchHelper(H.gather, gridFor(m), 256, p, static_cast<int>(kind), idx.ptr(), m, out.ptr());
    std::vector<uint64_t> bits(m);
    check(D->cuMemcpyDtoHAsync(bits.data(), out.ptr(), out.bytes, gStream), "cuMemcpyDtoHAsync");
    check(D->cuStreamSynchronize(gStream), "cuStreamSynchronize");
    return bits;
  }

  std::vector<uint64_t> gather(size_t i, const std::vector<uint64_t> &indices) {
    return gatherAt(buffers[i]->ptr(), req.buffers[i].kind, indices);
  }

  static std::string fmt(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    return buf;
  }

  static bool isPoison(uint64_t bits, ElementKind k) {
    switch (k) {
    case ElementKind::F64: return bits == contract::kPoisonF64;
    case ElementKind::F32: return bits == contract::kPoisonF32;
    case ElementKind::F16: return bits == contract::kPoisonF16;
    case ElementKind::BF16: return bits == contract::kPoisonBF16;
    case ElementKind::I64: return bits == contract::kPoisonI64;
    case ElementKind::I32: return bits == contract::kPoisonI32;
    case ElementKind::I16: return bits == contract::kPoisonI16;
    default: return bits == contract::kPoisonI8;
    }
  }

  static std::string show(uint64_t bits, ElementKind k) {
    return isPoison(bits, k) ? std::string("poison (never written)") : fmt(decode(bits, k));
  }

  /// Stops the worker when a reference copy changed: a kernel wrote outside its buffers (into
  /// memory that later comparisons trust).
  void checkReferenceIntact(const OutputSet &ref) {
    size_t outIndex = 0;
    for (size_t i = 0; i < req.buffers.size(); ++i) {
      const BufferSpec &s = req.buffers[i];
      if (s.role != P::kRoleOutput)
        continue;
      if (outIndex < ref.copies.size() &&
          checksum(ref.copies[outIndex]->ptr(), s.bytes()) != ref.sums[outIndex]) {
        emit({{P::kEvent, P::kEventFatal}, {P::kCandidate, gCandidate}, {P::kCode, 0},
              {P::kReason, "the kernel wrote outside its buffers: the reference copy of '" +
                               s.name + "' changed"}});
        finish(kFatalCuda);
      }
      ++outIndex;
    }
  }

  /// Red zones and inputs after runs on inputs with checksums `inputSums`.
  /// (Red zones of both input sets are checked whatever `set` is.)
  void checkIntegrity(const std::vector<uint64_t> &inputSums, int set = 0) {
    for (size_t i = 0; i < numBuffers(); ++i)
      if (uint64_t n = changedRedZoneBytes(i)) {
        restoreRedZones(i);
        throw Invalid("out-of-bounds write: " + std::to_string(n) +
                      " bytes changed in the red zones around buffer '" + spec(i).name + "'");
      }
    for (size_t i = 0; i < inputsB.size(); ++i)
      if (inputsB[i])
        if (uint64_t n = changedRedZoneBytes(*inputsB[i])) {
          DeviceBuffer &b = *inputsB[i];
          check(D->cuMemsetD8Async(b.base, contract::kCanaryByte, b.total(), gStream),
                "cuMemsetD8Async");
          throw Invalid("out-of-bounds write: " + std::to_string(n) +
                        " bytes changed in the red zones around buffer '" + spec(i).name +
                        "' (timing inputs B)");
        }
    for (const TensorMapSlot &t : tensorMaps)
      if (uint64_t n = changedRedZoneBytes(*t.b)) {
        check(D->cuMemsetD8Async(t.b->base, contract::kCanaryByte, t.b->total(), gStream),
              "cuMemsetD8Async");
        throw Invalid("out-of-bounds write: " + std::to_string(n) +
                      " bytes changed in the red zones around tensor map '" +
                      spec(t.index).name + "' (timing inputs B)");
      }
    checkTensorMaps(set);
    size_t inputIndex = 0;
    for (size_t i = 0; i < req.buffers.size(); ++i)
      if (req.buffers[i].role == P::kRoleInput) {
        if (inputIndex < inputSums.size() &&
            checksum(inputBuf(i, set).ptr(), req.buffers[i].bytes()) != inputSums[inputIndex])
          throw Invalid("the kernel modified input buffer '" + req.buffers[i].name + "'" +
                        (set == 1 ? " (timing inputs B)" : ""));
        ++inputIndex;
      }
  }

  /// All checks of one run on the inputs of `trial`; throws Invalid with the first problem
  /// found. `where` names the inputs in messages ("trial 2", "timing inputs"). `ref`: the
  /// reference's outputs on the same inputs (every element compared), or null.
  void checkRun(const Trial &trial, const std::string &where, const OutputSet *ref,
                const std::vector<uint64_t> &inputSums, json &out, int set = 0,
                DisputeSource source = {}) {
    checkIntegrity(inputSums, set);
    size_t outIndex = 0;
    for (size_t i = 0; i < req.buffers.size(); ++i) {
      const BufferSpec &s = req.buffers[i];
      if (s.role != P::kRoleOutput)
        continue;
      double rtol = req.rtol.at(kindName(s.kind));
      std::vector<uint64_t> counts = scan(i);
      if (counts[0])
        throw Invalid(std::to_string(counts[0]) + " of " + std::to_string(s.elements) +
                      " elements of '" + s.name + "' were never written (" + where + ")");
      // Samples against the oracle.
      bool samplesFinite = true;
      double maxSampleErr = 0, maxSampleAbsErr = 0;
      for (const Sample &sm : trial.samples) {
        if (sm.buffer != i)
          continue;
        std::vector<uint64_t> bits = gather(i, sm.indices);
        double rms = 0;
        size_t finite = 0;
        for (double e : sm.expected)
          if (std::isfinite(e)) {
            rms += e * e;
            ++finite;
          } else {
            samplesFinite = false;
          }
        rms = finite ? std::sqrt(rms / finite) : 0;
        double atol = rtol * rms + contract::outputQuantum(s.kind);
        for (size_t j = 0; j < bits.size(); ++j) {
          double got = decode(bits[j], s.kind), want = sm.expected[j];
          bool bad = std::isfinite(want)
                         ? !std::isfinite(got) || std::fabs(got - want) > atol + rtol * std::fabs(want)
                         : !(std::isnan(want) ? std::isnan(got) : got == want);
          if (std::isfinite(want) && std::isfinite(got)) {
            maxSampleErr = std::max(maxSampleErr, std::fabs(got - want) / (std::fabs(want) + atol + 1e-300));
            maxSampleAbsErr = std::max(maxSampleAbsErr, std::fabs(got - want));
          }
          if (bad)
            throw Invalid("'" + s.name + "'[" + std::to_string(sm.indices[j]) + "] = " + fmt(got) +
                          " but the oracle says " + fmt(want) + " (" + where + ", seed " +
                          std::to_string(trial.seed) + ")");
        }
        out["sampled"] = out.value("sampled", 0) + static_cast<int>(bits.size());
      }
      out["max_sample_rel_err"] = maxSampleErr;
      if (lastSampleAbsErr.size() <= outIndex)
        lastSampleAbsErr.resize(outIndex + 1, 0);
      lastSampleAbsErr[outIndex] = maxSampleAbsErr;
      if (ref && outIndex < ref->copies.size()) {
        DeviceBuffer &r = *ref->copies[outIndex];
        checkReferenceIntact(*ref);
        double slack = outIndex < ref->slack.size() ? ref->slack[outIndex] : 0;
        double atol = rtol * ref->rms[outIndex] + slack + contract::outputQuantum(s.kind);
        Counters stats(7 + P::kMaxDisputed);
        check(D->cuMemsetD8Async(stats.buf.ptr(), 0, stats.buf.bytes, gStream), "cuMemsetD8Async");
        check(D->cuMemsetD8Async(stats.buf.ptr() + 16, 0xFF, 8, gStream), "cuMemsetD8Async");
        launchHelper(H.compare, gridFor(s.elements), 256, buffers[i]->ptr(), r.ptr(), s.elements,
                     static_cast<int>(s.kind), rtol, atol, stats.buf.ptr(),
                     static_cast<unsigned long long>(P::kMaxDisputed));
        std::vector<uint64_t> v = stats.read();
        double relL2 = v[5] ? std::sqrt(bitsToDouble(v[4]) / bitsToDouble(v[5])) : 0;
        out["rel_l2_err"] = relL2;
        out["max_abs_err"] = bitsToDouble(v[3]);
        out["compared"] = s.elements;
        if (v[0]) {
          uint64_t first = v[2];
          uint64_t got = gather(i, {first})[0];
          uint64_t want = gatherAt(r.ptr(), s.kind, {first})[0];
          std::string message =
              std::to_string(v[0]) + " of " + std::to_string(s.elements) + " elements of '" +
              s.name + "' differ from the validated reference; first '" + s.name + "'[" +
              std::to_string(first) + "] = " + show(got, s.kind) + ", expected " +
              fmt(decode(want, s.kind)) + " (" + where + ")";
          if (!dispute(source, outIndex, i, r, v, message))
            throw Invalid(message);
        }
      } else if (samplesFinite && set != 1 && (counts[1] || counts[2])) {
        // (Set B has no oracle samples: nothing says its outputs must be finite.)
        throw Invalid(std::to_string(counts[1]) + " NaN and " + std::to_string(counts[2]) +
                      " infinite elements in '" + s.name + "' where the oracle's samples are all "
                      "finite (" + where + ")");
      }
      ++outIndex;
    }
  }

  /// A few finite elements of output `i` (ordinal `outIndex`) off the reference on a trial or a
  /// timing input set (`source`), all listed by evo_compare (`v`): recorded for the oracle to
  /// arbitrate (the verdict stays invalid unless evo-opt's oracle sides with the candidate at
  /// every one). False when they cannot be arbitrated (too many, no source, not finite).
  bool dispute(DisputeSource source, size_t outIndex, size_t i, const DeviceBuffer &r,
               const std::vector<uint64_t> &v, const std::string &message) {
    if (source.kind == DisputeSource::None || v[0] > P::kMaxDisputed || v[6] != v[0])
      return false;
    const BufferSpec &s = req.buffers[i];
    std::vector<uint64_t> idx(v.begin() + 7, v.begin() + 7 + v[0]);
    std::sort(idx.begin(), idx.end());
    std::vector<uint64_t> got = gather(i, idx), want = gatherAt(r.ptr(), s.kind, idx);
    json listed = json::array();
    for (size_t j = 0; j < idx.size(); ++j) {
      double g = decode(got[j], s.kind), w = decode(want[j], s.kind);
      if (!std::isfinite(g) || !std::isfinite(w))
        return false;
      json item = {{P::kOutput, outIndex}, {P::kIndex, idx[j]}, {P::kGot, g}, {P::kRef, w}};
      if (source.kind == DisputeSource::Trial) {
        item[P::kTrial] = source.index;
      } else {
        item[P::kTimingSet] = source.index;
        item[P::kSeed] = timingInputs(source.index).seed;
      }
      listed.push_back(std::move(item));
    }
    for (json &d : listed)
      disputes.push_back(std::move(d));
    if (firstDispute.empty())
      firstDispute = message;
    return true;
  }

  /// Copies the outputs now in the buffers.
  OutputSet keepOutputs() {
    OutputSet set;
    for (size_t i = 0; i < req.buffers.size(); ++i) {
      const BufferSpec &s = req.buffers[i];
      if (s.role != P::kRoleOutput)
        continue;
      auto copy = std::make_unique<DeviceBuffer>(s.bytes(), false);
      check(D->cuMemcpyAsync(copy->ptr(), buffers[i]->ptr(), s.bytes(), gStream), "cuMemcpyAsync");
      set.rms.push_back(std::sqrt(sumSquares(copy->ptr(), s) / std::max<uint64_t>(s.elements, 1)));
      set.sums.push_back(checksum(copy->ptr(), s.bytes()));
      set.copies.push_back(std::move(copy));
    }
    return set;
  }

  static std::string trialName(size_t t) { return "trial " + std::to_string(t); }
  static constexpr const char *kTimingName = "timing inputs";
  static constexpr const char *kTimingNameB = "timing inputs B";
  static const char *timingName(int set) { return set == 1 ? kTimingNameB : kTimingName; }

  /// One untimed run on timing input set `set`, checked like a trial (against the oracle's
  /// samples for them, set A only, and against `ref` when given); returns its outputs.
  OutputSet runOnTimingInputs(const Candidate &c, Functions &fns, const OutputSet *ref,
                              json &out, int set = 0, DisputeSource source = {}) {
    prepare(timingInputs(set), timingSums(set), false, set);
    run(c, fns, set);
    check(D->cuStreamSynchronize(gStream), "cuStreamSynchronize");
    out = {{P::kSeed, timingInputs(set).seed}};
    checkRun(timingInputs(set), timingName(set), ref, timingSums(set), out, set, source);
    return keepOutputs();
  }

  /// A candidate's untimed run on each timing input set the reference ran on, checked against
  /// the reference's outputs there like a trial (and against the oracle's samples, set A): a
  /// few elements off the reference are disputed (the oracle arbitrates them, as on trials)
  /// rather than failing every checked timed launch. What the timed launches are then compared
  /// with is returned in `patched` for each set with disputes: the reference's outputs with the
  /// candidate's own values at its disputed elements (at every other element a timed launch
  /// must still agree with the reference; at those, with the run the oracle judges).
  void checkOnTimingSets(const Candidate &c, Functions &fns, json &out, OutputSet &patchedA,
                         OutputSet &patchedB) {
    for (int set = 0; set < 2; ++set) {
      const OutputSet &ref = set == 1 ? timingRef.b : timingRef.a;
      // Set B only where timed launches run on it (it has no oracle samples: under the poison
      // guard nothing compares a candidate with the reference there).
      if (ref.empty() || (set == 1 && !alternates(timingRef)))
        continue;
      size_t before = disputes.size();
      json where;
      OutputSet own = runOnTimingInputs(c, fns, &ref, where, set, {DisputeSource::Timing, set});
      if (set == 1)
        out["b"] = where;
      else
        out = where;
      if (disputes.size() == before)
        continue;
      OutputSet &patched = set == 1 ? patchedB : patchedA;
      size_t o = 0;
      for (size_t i = 0; i < req.buffers.size(); ++i) {
        const BufferSpec &s = req.buffers[i];
        if (s.role != P::kRoleOutput)
          continue;
        auto copy = std::make_unique<DeviceBuffer>(s.bytes(), false);
        check(D->cuMemcpyAsync(copy->ptr(), ref.copies[o]->ptr(), s.bytes(), gStream),
              "cuMemcpyAsync");
        const size_t width = contract::elementBytes(s.kind);
        for (size_t d = before; d < disputes.size(); ++d) {
          if (disputes[d].value(P::kOutput, size_t(0)) != o)
            continue;
          uint64_t at = disputes[d].value(P::kIndex, uint64_t(0)) * width;
          check(D->cuMemcpyAsync(copy->ptr() + at, own.copies[o]->ptr() + at, width, gStream),
                "cuMemcpyAsync");
        }
        patched.rms.push_back(ref.rms[o]);
        patched.slack.push_back(o < ref.slack.size() ? ref.slack[o] : 0);
        patched.sums.push_back(checksum(copy->ptr(), s.bytes()));
        patched.copies.push_back(std::move(copy));
        ++o;
      }
    }
  }

  /// The reference outputs of both timing sets: set B only when timed launches are checked.
  TimingRef runOnBothTimingSets(const Candidate &c, Functions &fns, json &out) {
    TimingRef r;
    r.a = runOnTimingInputs(c, fns, nullptr, out, 0);
    if (req.checkLaunches) {
      json outB;
      r.b = runOnTimingInputs(c, fns, nullptr, outB, 1);
      out["b"] = outB;
    }
    return r;
  }

  /// Whether timed launches alternate between the two timing sets with these reference outputs.
  bool alternates(const TimingRef &ref) const {
    return req.checkLaunches && !ref.b.empty() && !sameOutputs(ref.a, ref.b) &&
           ref.b.copies.size() == ref.a.copies.size();
  }

  /// Whether some output is bitwise the same on the two timing sets (checksums: a collision
  /// only selects the slower, safe guard): it does not depend on the inputs, and alternating
  /// them would leave each launch its answer in that output.
  static bool sameOutputs(const OutputSet &a, const OutputSet &b) {
    if (a.sums.size() != b.sums.size())
      return true;
    for (size_t o = 0; o < a.sums.size(); ++o)
      if (a.sums[o] == b.sums[o])
        return true;
    return false;
  }

  /// Enqueues the comparison of every output of checked timed launch `k` with `want` (the
  /// reference's outputs for the launch's input set) and the copy of its verdict into hostSlots.
  void enqueueLaunchCheck(size_t k, const std::vector<size_t> &outputs, const OutputSet &want,
                          const DeviceBuffer &slot) {
    for (size_t o = 0; o < outputs.size(); ++o) {
      const BufferSpec &s = req.buffers[outputs[o]];
      CUdeviceptr sl = slot.ptr() + o * 64;
      check(D->cuMemsetD8Async(sl, 0, 64, gStream), "cuMemsetD8Async");
      check(D->cuMemsetD8Async(sl + 16, 0xFF, 8, gStream), "cuMemsetD8Async");
      double rtol = req.rtol.at(kindName(s.kind));
      double atol = rtol * want.rms[o] + contract::outputQuantum(s.kind);
      int kind = static_cast<int>(s.kind);
      launchHelper(H.checkLaunch, gridFor(s.elements), 256, buffers[outputs[o]]->ptr(),
                   want.copies[o]->ptr(), s.elements, kind, rtol, atol, sl);
      launchHelper(H.capture, 1, 32, buffers[outputs[o]]->ptr(), want.copies[o]->ptr(), kind,
                   sl);
      check(D->cuMemcpyDtoHAsync(hostSlots.data + (k * outputs.size() + o) * 8, sl, 40,
                                 gStream),
            "cuMemcpyDtoHAsync");
    }
  }

  /// Throws Invalid for the first checked timed launch of a repeat whose verdict in hostSlots
  /// says an output differs from the reference.
  void throwOnFailedCheck(const std::vector<size_t> &outputs, const std::vector<int> &checkedRuns,
                          const std::vector<int> &checkedSets, int runs, int rep) {
    for (size_t k = 0; k < checkedRuns.size(); ++k)
      for (size_t o = 0; o < outputs.size(); ++o) {
        const uint64_t *v = hostSlots.data + (k * outputs.size() + o) * 8;
        if (!v[0])
          continue;
        const BufferSpec &s = req.buffers[outputs[o]];
        throw Invalid("'" + s.name + "' is wrong on timed launch " +
                      std::to_string(checkedRuns[k] + 1) + " of " + std::to_string(runs) +
                      " (repeat " + std::to_string(rep + 1) + "): " + std::to_string(v[0]) +
                      " of " + std::to_string(s.elements) +
                      " elements differ from the reference (" + std::to_string(v[1]) +
                      " never written); first '" + s.name + "'[" + std::to_string(v[2]) +
                      "] = " + show(v[3], s.kind) + ", expected " +
                      fmt(decode(v[4], s.kind)) + " (" + timingName(checkedSets[k]) +
                      ", seed " + std::to_string(timingInputs(checkedSets[k]).seed) + ")");
      }
  }

  /// The statistics of all timed runs and of the repeats' medians.
  static json timingSummary(std::vector<double> all, const std::vector<double> &medians) {
    json out;
    std::sort(all.begin(), all.end());
    auto pct = [&](double p) { return all[std::min(all.size() - 1, size_t(p * all.size()))]; };
    out[P::kMedianMs] = all[all.size() / 2];
    out["min_ms"] = all.front();
    out["p10_ms"] = pct(0.10);
    out["p90_ms"] = pct(0.90);
    out["max_ms"] = all.back();
    out["runs"] = static_cast<int>(all.size());
    out["repeat_medians_ms"] = medians;
    double lo = *std::min_element(medians.begin(), medians.end());
    double hi = *std::max_element(medians.begin(), medians.end());
    out["repeat_spread"] = lo > 0 ? (hi - lo) / lo : 0.0;
    return out;
  }

  /// The timed runs of a candidate on the timing inputs: `repeats` blocks of warm-ups and runs.
  /// With checkLaunches, no launch may find its answer already in its outputs. Launches
  /// alternate between the two timing input sets (every launch, warm-ups and the calibration
  /// included, so that all look alike): the outputs a launch finds are the answer for the other
  /// set. Only when the reference's outputs on the two sets are equal (an op constant in its
  /// inputs) does every launch start from poisoned outputs instead. Scratch is reset before every
  /// launch (zero_init zeroed, the rest poisoned), before the L2 flush and outside the events. After a random subset of
  /// the timed launches, always the last two, every output element is compared with the
  /// reference's outputs for that launch's set on the GPU and the result copied out (no host
  /// synchronization per launch). Any failing checked launch makes the candidate invalid.
  json time(const Candidate &c, Functions &fns, int repeats, const TimingRef &ref) {
    return time(c, fns, repeats, ref.a, ref.b, ref);
  }
  /// Launches on set A (B) are compared with `refA` (`refB`): the reference's outputs, or
  /// those with the candidate's values at its disputed elements (checkOnTimingSets). The guard
  /// is chosen from `guard`, the reference's own outputs, never from values a candidate chose.
  json time(const Candidate &c, Functions &fns, int repeats, const OutputSet &refA,
            const OutputSet &refB, const TimingRef &guard) {
    struct {
      const OutputSet &a, &b;
    } ref{refA, refB};
    const bool checks = req.checkLaunches;
    const bool alternate = checks && alternates(guard) && ref.b.copies.size() == ref.a.copies.size();
    const bool poison = checks && !alternate;
    prepare(req.timingInputs, timingInputChecksums);
    if (alternate)
      fillInputs(req.timingInputsB, timingInputChecksumsB, 1);
    // The L2 flush: the poison already writes resetBytes() before it; what follows must still
    // evict the L2 (at least twice its size) and bring the total to flush_bytes.
    uint64_t flushBytes = req.flushBytes;
    if (poison && gL2Bytes) {
      uint64_t reset = resetBytes();
      uint64_t rest = req.flushBytes > reset ? req.flushBytes - reset : 0;
      flushBytes = std::max(rest, std::min<uint64_t>(req.flushBytes, 2 * gL2Bytes));
    }
    DeviceBuffer flush(std::max<uint64_t>(flushBytes, 4), false);
    // Every launch of this phase, in order: its input set is launchNo % 2 when alternating.
    int launchNo = 0;
    auto before = [&](int r) {
      if (poison)
        resetOutputs();
      else if (alternate)
        resetScratch();
      check(D->cuMemsetD32Async(flush.ptr(), static_cast<unsigned>(r), flush.bytes / 4, gStream),
            "cuMemsetD32Async");
    };
    // Runs the candidate; returns the input set it ran on.
    auto launch = [&]() {
      int set = alternate ? launchNo % 2 : 0;
      ++launchNo;
      run(c, fns, set);
      return set;
    };
    std::vector<CUevent> start(req.runs, nullptr), stop(req.runs, nullptr);
    struct Events {
      std::vector<CUevent> &a, &b;
      ~Events() {
        for (size_t r = 0; r < a.size(); ++r) {
          if (a[r])
            D->cuEventDestroy(a[r]);
          if (b[r])
            D->cuEventDestroy(b[r]);
        }
      }
    } events{start, stop};
    for (int r = 0; r < req.runs; ++r) {
      check(D->cuEventCreate(&start[r], CU_EVENT_DEFAULT), "cuEventCreate");
      check(D->cuEventCreate(&stop[r], CU_EVENT_DEFAULT), "cuEventCreate");
    }
    std::vector<size_t> outputs;
    for (size_t i = 0; i < req.buffers.size(); ++i)
      if (req.buffers[i].role == P::kRoleOutput)
        outputs.push_back(i);
    if (checks && ref.a.copies.size() != outputs.size())
      throw CudaFailure("no reference outputs to check the timed launches against");
    // One 8-word slot per output, reset right before each check (after the candidate's launch).
    DeviceBuffer slot(std::max<size_t>(outputs.size(), 1) * 64, false);

    std::vector<double> medians;
    std::vector<double> all;
    int checkedTotal = 0, launchesTotal = 0;
    // Slow kernels get fewer runs: one timed warm-up says how many fit in the time allowed.
    int runs = req.runs;
    {
      before(0);
      launch();
      before(1);
      check(D->cuEventRecord(start[0], gStream), "cuEventRecord");
      launch();
      check(D->cuEventRecord(stop[0], gStream), "cuEventRecord");
      check(D->cuEventSynchronize(stop[0]), "cuEventSynchronize");
      float once = 0;
      check(D->cuEventElapsedTime(&once, start[0], stop[0]), "cuEventElapsedTime");
      if (once > 0)
        runs = std::max(5, std::min(runs, static_cast<int>(req.maxMsPerRepeat / once)));
      runs = std::min(runs, req.runs);
    }
    for (int rep = 0; rep < repeats; ++rep) {
      int warmup = std::min(req.warmup, std::max(1, runs / 5));
      for (int w = 0; w < warmup && (rep == 0 || w < 2); ++w) {
        before(w);
        launch();
      }
      std::vector<bool> checked(runs, false);
      if (checks)
        checked = evo::chooseCheckedLaunches(static_cast<unsigned>(runs), req.checkFraction,
                                             req.minChecked, entropy());
      std::vector<int> checkedRuns, checkedSets;
      for (int r = 0; r < runs; ++r)
        if (checked[r])
          checkedRuns.push_back(r);
      hostSlots.reserve(std::max<size_t>(checkedRuns.size() * outputs.size() * 8, 1));
      std::memset(hostSlots.data, 0, hostSlots.words * 8);
      size_t k = 0;
      for (int r = 0; r < runs; ++r) {
        // Evict L2 between runs (the write keeps the GPU busy while the host enqueues the next
        // launches, so host overhead stays outside the events).
        before(r);
        check(D->cuEventRecord(start[r], gStream), "cuEventRecord");
        int set = launch();
        check(D->cuEventRecord(stop[r], gStream), "cuEventRecord");
        if (!checked[r])
          continue;
        checkedSets.push_back(set);
        enqueueLaunchCheck(k, outputs, set == 1 ? ref.b : ref.a, slot);
        ++k;
      }
      check(D->cuStreamSynchronize(gStream), "cuStreamSynchronize");
      launchesTotal += runs;
      checkedTotal += static_cast<int>(checkedRuns.size());
      if (checks) {
        checkReferenceIntact(ref.a);
        if (alternate)
          checkReferenceIntact(ref.b);
        throwOnFailedCheck(outputs, checkedRuns, checkedSets, runs, rep);
      }
      std::vector<double> ms(runs);
      for (int r = 0; r < runs; ++r) {
        float f = 0;
        check(D->cuEventElapsedTime(&f, start[r], stop[r]), "cuEventElapsedTime");
        ms[r] = f;
      }
      std::sort(ms.begin(), ms.end());
      medians.push_back(ms[ms.size() / 2]);
      all.insert(all.end(), ms.begin(), ms.end());
    }
    // Whatever the timed launches did outside their outputs (both input sets).
    checkIntegrity(timingInputChecksums);
    if (alternate)
      checkIntegrity(timingInputChecksumsB, 1);
    json out = timingSummary(std::move(all), medians);
    out[P::kCheckLaunches] = checks;
    out[P::kCheckedLaunches] = checkedTotal;
    out[P::kTimedLaunches] = launchesTotal;
    out[P::kTimingSeed] = req.timingInputs.seed;
    out[P::kLaunchGuard] = alternate ? P::kGuardAlternating : poison ? P::kGuardPoison : P::kGuardNone;
    if (alternate)
      out[P::kTimingSeedB] = req.timingInputsB.seed;
    return out;
  }

  static json describeInputs(const Trial &tr, const Request &req) {
    json d = json::object();
    for (size_t i = 0; i < req.buffers.size(); ++i)
      if (req.buffers[i].role == P::kRoleInput)
        d[req.buffers[i].name] = tr.dists[i];
    return d;
  }

  /// Returns false when the candidate was the reference and is not valid: the rest is moot.
  bool evaluate(size_t ci) {
    Candidate &c = req.candidates[ci];
    gCandidate = static_cast<int>(ci);
    emit({{P::kEvent, P::kEventBegin}, {P::kCandidate, ci}, {P::kId, c.id}});
    json result = {{P::kEvent, P::kEventResult}, {P::kCandidate, ci}, {P::kId, c.id}};
    // Wall time of the whole evaluation and of its timing phase (what the launch checks cost is
    // measured from these: scripts/gpu_check.py, section "overhead").
    auto started = std::chrono::steady_clock::now();
    auto msSince = [](std::chrono::steady_clock::time_point t) {
      return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
    };
    CUmodule module = nullptr;
    disputes = json::array();
    firstDispute.clear();
    try {
      setCandidateScratch(c);
      Functions fns = loadCandidate(c, module);
      json trials = json::array();
      for (size_t t = 0; t < req.trials.size(); ++t) {
        const Trial &tr = req.trials[t];
        // Odd trials find in scratch what the previous trial (other inputs) left there; even
        // ones find poison: neither stale state nor uninitialized reads go unnoticed.
        prepare(tr, inputChecksums[t], /*keepScratch=*/t % 2 == 1);
        run(c, fns);
        check(D->cuStreamSynchronize(gStream), "cuStreamSynchronize");
        json trialOut = {{P::kSeed, tr.seed}, {P::kDist, describeInputs(tr, req)}};
        const OutputSet *ref = !c.reference && t < refOutputs.size() && !refOutputs[t].empty()
                                   ? &refOutputs[t]
                                   : nullptr;
        checkRun(tr, trialName(t), ref, inputChecksums[t], trialOut, 0,
                 {DisputeSource::Trial, static_cast<int>(t)});
        if (c.reference) {
          if (refOutputs.size() <= t)
            refOutputs.resize(t + 1);
          refOutputs[t] = keepOutputs();
          for (double e : lastSampleAbsErr)
            refOutputs[t].slack.push_back(2 * e);
        }
        trials.push_back(trialOut);
      }
      result["trials"] = trials;
      // The timing phase starts from a fresh load of the module.
      bool timeIt = req.timing && c.timeIt;
      if (req.timing && req.haveTimingInputs && (timeIt || c.reference)) {
        auto timingStarted = std::chrono::steady_clock::now();
        fns = reload(c, module);
        json timingCheck;
        if (c.reference) {
          // The reference's own run on the timing inputs (checked against the oracle) is what
          // every timed launch, its own included, is compared with.
          timingRef = runOnBothTimingSets(c, fns, timingCheck);
          result["timing_inputs"] = timingCheck;
          if (timeIt)
            result[P::kTiming] = time(c, fns, req.repeats, timingRef);
        } else if (!timingRef.empty()) {
          OutputSet patchedA, patchedB;
          if (req.checkLaunches) {
            checkOnTimingSets(c, fns, timingCheck, patchedA, patchedB);
            result["timing_inputs"] = timingCheck;
          }
          result[P::kTiming] =
              time(c, fns, req.repeats, patchedA.empty() ? timingRef.a : patchedA,
                   patchedB.empty() ? timingRef.b : patchedB, timingRef);
          // time() checks the copies it compared with; the reference's own ones too.
          checkReferenceIntact(timingRef.a);
          checkReferenceIntact(timingRef.b);
        } else {
          // No reference in this request: the candidate's own checked run stands in.
          TimingRef own = runOnBothTimingSets(c, fns, timingCheck);
          result["timing_inputs"] = timingCheck;
          result[P::kTiming] = time(c, fns, req.repeats, own);
        }
        result[P::kTimingWallMs] = msSince(timingStarted);
      }
      result[P::kVerdict] = P::kVerdictValid;
      result[P::kReason] = "";
      if (!disputes.empty()) {
        result[P::kVerdict] = P::kVerdictInvalid;
        result[P::kReason] = firstDispute;
        result[P::kDisputed] = std::move(disputes);
      }
    } catch (const Invalid &e) {
      result[P::kVerdict] = P::kVerdictInvalid;
      result[P::kReason] = e.what();
    } catch (const CudaFailure &e) {
      result[P::kVerdict] = P::kVerdictInvalid;
      result[P::kReason] = e.what();
    }
    if (module)
      D->cuModuleUnload(module);
    result[P::kEvalMs] = msSince(started);
    emit(result);
    return !c.reference || result[P::kVerdict] == P::kVerdictValid;
  }
};

json deviceFacts(int ordinal) {
  CUdevice dev;
  check(D->cuDeviceGet(&dev, ordinal), "cuDeviceGet");
  char name[256] = {};
  D->cuDeviceGetName(name, sizeof name, dev);
  int sms = 0, major = 0, minor = 0, l2 = 0, driver = 0;
  D->cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
  D->cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  D->cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  D->cuDeviceGetAttribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, dev);
  D->cuDriverGetVersion(&driver);
  size_t mem = 0;
  D->cuDeviceTotalMem(&mem, dev);
  unsigned char uuid[16] = {};
  D->cuDeviceGetUuid(uuid, dev);
  char hex[33];
  for (int i = 0; i < 16; ++i)
    std::snprintf(hex + 2 * i, 3, "%02x", uuid[i]);
  gSmCount = sms > 0 ? sms : gSmCount;
  gL2Bytes = l2 > 0 ? static_cast<uint64_t>(l2) : 0;
  gCcMajor = major;
  gCcMinor = minor;
  return {{P::kEvent, P::kEventDevice}, {P::kName, name}, {"ordinal", ordinal}, {"sm_count", sms},
          {"compute_capability", std::to_string(major) + "." + std::to_string(minor)},
          {P::kL2Bytes, l2}, {"memory_bytes", mem}, {"driver_version", driver}, {P::kUuid, hex}};
}

/// Median of `n` timed calls of `body`.
template <typename F>
double medianMs(int n, F body) {
  CUevent a, b;
  check(D->cuEventCreate(&a, CU_EVENT_DEFAULT), "cuEventCreate");
  check(D->cuEventCreate(&b, CU_EVENT_DEFAULT), "cuEventCreate");
  std::vector<double> ms;
  body(); // warm-up
  for (int i = 0; i < n; ++i) {
    check(D->cuEventRecord(a, gStream), "cuEventRecord");
    body();
    check(D->cuEventRecord(b, gStream), "cuEventRecord");
    check(D->cuEventSynchronize(b), "cuEventSynchronize");
    float f;
    check(D->cuEventElapsedTime(&f, a, b), "cuEventElapsedTime");
    ms.push_back(f);
  }
  D->cuEventDestroy(a);
  D->cuEventDestroy(b);
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

/// Bandwidth ceilings: the best of several launch shapes (blocks per SM, threads, unroll) and of
/// the driver's own copy and memset. The floor of every kernel is computed from these, so each
/// must be the most the device can do for that kind of traffic (docs/verification.md).
struct Shape {
  unsigned perSm, threads;
  int unroll;
};
// perSm 0: one 16-byte element per thread, no grid-stride loop (what simple elementwise kernels
// do, and on Hopper often the fastest).
const Shape kShapes[] = {{8, 256, 1}, {16, 256, 4}, {32, 256, 4}, {4, 1024, 4},
                         {2, 1024, 1}, {0, 256, 1}, {0, 512, 1}, {0, 128, 1}};

/// The dense wgmma (warpgroup MMA, Hopper) f16 and bf16 rates, from KernelsSm90.cu: the best of
/// a few warpgroups-per-SM shapes, each warpgroup issuing m64n256k16 (2*64*256*16 flops) back to
/// back. sm_90a PTX loads only on compute capability 9.0, so other devices are not asked; where
/// the module does not load, or a kernel cannot launch, the rates are 0 and kWgmmaStatus says
/// why: an unavailable ceiling, not an error (the floor then rests on mma.sync).
void measureWgmma(json &out) {
  out[P::kF16WgmmaTFlops] = 0.0;
  out[P::kBf16WgmmaTFlops] = 0.0;
  std::string cc = std::to_string(gCcMajor) + "." + std::to_string(gCcMinor);
  if (gCcMajor != 9 || gCcMinor != 0) {
    out[P::kWgmmaStatus] = "unavailable: compute capability " + cc + " (wgmma needs 9.0, sm_90a)";
    return;
  }
  std::vector<char> log(8192, 0);
  int options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {log.data(), reinterpret_cast<void *>(static_cast<uintptr_t>(log.size()))};
  CUmodule module = nullptr;
  CUresult rc = D->cuModuleLoadDataEx(&module, kHelperPtxSm90, 2, options, values);
  if (rc != CUDA_SUCCESS) {
    if (isSticky(rc))
      check(rc, "cuModuleLoadDataEx(sm_90a helpers)");
    out[P::kWgmmaStatus] = "unavailable: the sm_90a module does not load: " +
                           describe("cuModuleLoadDataEx", rc) +
                           (log[0] ? std::string(": ") + log.data() : std::string());
    return;
  }
  struct WgShape {
    unsigned blocksPerSm, warpgroups;
  };
  const WgShape shapes[] = {{1, 3}, {1, 2}, {3, 1}};
  const int iterations = 2048, wgmmaPerIteration = 8; // KernelsSm90.cu's kWgmmaPerGroup
  json tried = json::array();
  try {
    DeviceBuffer sink(16 << 20, false);
    for (auto [key, kernel] : {std::pair{P::kF16WgmmaTFlops, "evo_wgmma_peak_f16"},
                               std::pair{P::kBf16WgmmaTFlops, "evo_wgmma_peak_bf16"}}) {
      CUfunction f;
      check(D->cuModuleGetFunction(&f, module, kernel), kernel);
      double best = 0;
      for (WgShape s : shapes) {
        unsigned grid = gSmCount * s.blocksPerSm, block = 128 * s.warpgroups;
        double ms = medianMs(5, [&] { launchHelper(f, grid, block, sink.ptr(), iterations); });
        double flops = double(grid) * s.warpgroups * iterations * wgmmaPerIteration *
                       (2.0 * 64 * 256 * 16);
        double tflops = flops / (ms * 1e9);
        tried.push_back({{"kernel", kernel}, {"blocks", grid}, {"threads", block},
                         {"flops", flops}, {"tflops", tflops}});
        best = std::max(best, tflops);
      }
      out[key] = best;
    }
    out[P::kWgmmaStatus] = "measured";
  } catch (const CudaFailure &e) {
    out[P::kF16WgmmaTFlops] = 0.0;
    out[P::kBf16WgmmaTFlops] = 0.0;
    out[P::kWgmmaStatus] = std::string("unavailable: ") + e.what();
  }
  out["wgmma_shapes"] = tried;
  D->cuModuleUnload(module);
}

json measureCeilings() {
  json out = {{P::kEvent, P::kEventCeilings}};
  const uint64_t n4 = 1ull << 26; // 1 GiB of 16-byte elements
  const double bytes = double(n4) * 16;
  // Times `launch(grid, threads, unroll)` (moving `traffic` bytes) in every shape of kShapes,
  // records each in `tried` and returns the best GB/s.
  auto sweepShapes = [&](double traffic, json &tried, auto launch) {
    double best = 0;
    for (Shape s : kShapes) {
      unsigned grid = s.perSm ? gSmCount * s.perSm : static_cast<unsigned>(n4 / s.threads);
      double ms = medianMs(20, [&] { launch(grid, s.threads, s.unroll); });
      double gbps = traffic / (ms * 1e6);
      tried.push_back({{"blocks", grid}, {"threads", s.threads}, {"unroll", s.unroll}, {"gbps", gbps}});
      best = std::max(best, gbps);
    }
    return best;
  };
  {
    DeviceBuffer in(n4 * 16, false), o(n4 * 16, false);
    check(D->cuMemsetD32Async(in.ptr(), 0x3f800000u, n4 * 4, gStream), "cuMemsetD32Async");
    json tried = json::array();
    double best = sweepShapes(2.0 * bytes, tried, [&](unsigned grid, unsigned threads, int unroll) {
      launchHelper(H.copy, grid, threads, in.ptr(), o.ptr(), n4, unroll);
    });
    double ms = medianMs(20, [&] {
      check(D->cuMemcpyAsync(o.ptr(), in.ptr(), n4 * 16, gStream), "cuMemcpyAsync");
    });
    double gbps = 2.0 * bytes / (ms * 1e6);
    tried.push_back({{"method", "cuMemcpyAsync"}, {"gbps", gbps}});
    best = std::max(best, gbps);
    out[P::kCopyGBps] = best;
    out["copy_shapes"] = tried;
  }
  {
    DeviceBuffer in(n4 * 16, false), sink(4096 * 4, false);
    check(D->cuMemsetD32Async(in.ptr(), 0x3f800000u, n4 * 4, gStream), "cuMemsetD32Async");
    json tried = json::array();
    double best = sweepShapes(bytes, tried, [&](unsigned grid, unsigned threads, int unroll) {
      launchHelper(H.read, grid, threads, in.ptr(), n4, unroll, sink.ptr());
    });
    out[P::kReadGBps] = best;
    out["read_shapes"] = tried;
  }
  {
    DeviceBuffer o(n4 * 16, false);
    json tried = json::array();
    double best = sweepShapes(bytes, tried, [&](unsigned grid, unsigned threads, int unroll) {
      float value = 1.0f;
      launchHelper(H.write, grid, threads, o.ptr(), n4, unroll, value);
    });
    double ms = medianMs(20, [&] {
      check(D->cuMemsetD32Async(o.ptr(), 0x3f800000u, n4 * 4, gStream), "cuMemsetD32Async");
    });
    double gbps = bytes / (ms * 1e6);
    tried.push_back({{"method", "cuMemsetD32Async"}, {"gbps", gbps}});
    best = std::max(best, gbps);
    out[P::kWriteGBps] = best;
    out["write_shapes"] = tried;
  }
  {
    DeviceBuffer sink(64 << 20, false);
    int iterations = 8192;
    unsigned grid = gSmCount * 16, block = 256;
    float seed = 1.0f;
    double ms = medianMs(5, [&] { launchHelper(H.fmaPeak, grid, block, sink.ptr(), iterations, seed); });
    double flops = 2.0 * 8 * iterations * double(grid) * block;
    out[P::kFp32TFlops] = flops / (ms * 1e9);
  }
  {
    DeviceBuffer sink(64 << 20, false);
    int iterations = 4096;
    unsigned grid = gSmCount * 8, block = 128;
    double ms = medianMs(5, [&] { launchHelper(H.mmaPeak, grid, block, sink.ptr(), iterations); });
    double flops = double(grid) * (block / 32) * iterations * 4 * (2.0 * 16 * 8 * 16);
    out[P::kF16MmaTFlops] = flops / (ms * 1e9);
  }
  measureWgmma(out);
  out[P::kL2Bytes] = gL2Bytes;
  return out;
}

/// Evaluates candidates appended to the request's queue file until {"end": true}. Events number
/// them after the request's own candidates, in the order they were appended.
void serveQueue(Evaluator &ev, Request &req) {
  std::string pending;
  size_t offset = 0;
  while (true) {
    std::ifstream f(req.queue, std::ios::binary);
    std::string text;
    if (f) {
      f.seekg(static_cast<std::streamoff>(offset));
      std::stringstream ss;
      ss << f.rdbuf();
      text = ss.str();
    }
    offset += text.size();
    pending += text;
    size_t nl;
    bool any = false;
    while ((nl = pending.find('\n')) != std::string::npos) {
      std::string line = pending.substr(0, nl);
      pending.erase(0, nl + 1);
      if (line.empty())
        continue;
      any = true;
      json j = json::parse(line);
      if (j.value(P::kEnd, false))
        return;
      req.candidates.push_back(parseCandidate(j, req.buffers.size()));
      ev.evaluate(req.candidates.size() - 1);
    }
    if (!any)
      usleep(1000);
  }
}

/// Times already validated candidates in interleaved rounds (finalists): round r runs every
/// candidate once, starting at a rotating offset, so drifts in clocks or temperature hit all of
/// them alike. Each candidate's time is the median of its round medians. The reference (the
/// naive baseline) first runs once on the timing inputs, checked against the oracle; every timed
/// launch of every finalist is accountable to its outputs, exactly as in "evaluate".
void timeInterleaved(Evaluator &ev, Request &req) {
  size_t n = req.candidates.size();
  std::vector<CUmodule> modules(n, nullptr);
  std::vector<Functions> fns(n);
  std::vector<std::vector<double>> medians(n);
  std::vector<std::string> failed(n);
  std::vector<int> checkedLaunches(n, 0), launches(n, 0);
  std::vector<std::string> guard(n, P::kGuardNone);
  for (size_t i = 0; i < n; ++i) {
    gCandidate = static_cast<int>(i);
    try {
      fns[i] = ev.loadCandidate(req.candidates[i], modules[i]);
    } catch (const std::exception &e) {
      failed[i] = e.what();
    }
  }
  // What each finalist's launches are compared with: the reference's outputs, or (with no
  // reference in the request) the finalist's own checked run on the timing inputs.
  std::vector<TimingRef> own(n);
  std::string referenceProblem;
  for (size_t i = 0; i < n && req.checkLaunches; ++i) {
    if (!req.candidates[i].reference || !failed[i].empty())
      continue;
    gCandidate = static_cast<int>(i);
    try {
      ev.setCandidateScratch(req.candidates[i]);
      json check;
      ev.timingRef = ev.runOnBothTimingSets(req.candidates[i], fns[i], check);
    } catch (const std::exception &e) {
      referenceProblem = "the reference '" + req.candidates[i].id +
                         "' failed on the timing inputs: " + e.what();
    }
    break;
  }
  for (size_t i = 0; i < n; ++i) {
    if (!referenceProblem.empty() && failed[i].empty())
      failed[i] = referenceProblem;
    if (!failed[i].empty() || !ev.timingRef.empty() || !req.checkLaunches)
      continue;
    gCandidate = static_cast<int>(i);
    try {
      ev.setCandidateScratch(req.candidates[i]);
      json check;
      own[i] = ev.runOnBothTimingSets(req.candidates[i], fns[i], check);
    } catch (const std::exception &e) {
      failed[i] = e.what();
    }
  }
  // Each finalist's untimed run on the timing sets, checked against the reference's as in
  // "evaluate": a few elements off it are disputed (for evo-opt's oracle), and the finalist's
  // timed launches are compared with its own values there.
  std::vector<OutputSet> patchedA(n), patchedB(n);
  std::vector<json> disputed(n, json::array());
  std::vector<std::string> firstDisputed(n);
  for (size_t i = 0; i < n && !ev.timingRef.empty(); ++i) {
    if (!failed[i].empty() || req.candidates[i].reference)
      continue;
    gCandidate = static_cast<int>(i);
    try {
      ev.setCandidateScratch(req.candidates[i]);
      ev.disputes = json::array();
      ev.firstDispute.clear();
      json check;
      ev.checkOnTimingSets(req.candidates[i], fns[i], check, patchedA[i], patchedB[i]);
      disputed[i] = std::move(ev.disputes);
      firstDisputed[i] = ev.firstDispute;
    } catch (const std::exception &e) {
      failed[i] = e.what();
    }
  }
  for (int r = 0; r < req.rounds; ++r)
    for (size_t k = 0; k < n; ++k) {
      size_t i = (k + r) % n;
      if (!failed[i].empty())
        continue;
      gCandidate = static_cast<int>(i);
      try {
        ev.setCandidateScratch(req.candidates[i]);
        const TimingRef &ref = !ev.timingRef.empty() ? ev.timingRef : own[i];
        json t = ev.time(req.candidates[i], fns[i], 1, patchedA[i].empty() ? ref.a : patchedA[i],
                         patchedB[i].empty() ? ref.b : patchedB[i], ref);
        ev.checkReferenceIntact(ref.a);
        ev.checkReferenceIntact(ref.b);
        guard[i] = t[P::kLaunchGuard].get<std::string>();
        medians[i].push_back(t[P::kMedianMs].get<double>());
        checkedLaunches[i] += t[P::kCheckedLaunches].get<int>();
        launches[i] += t[P::kTimedLaunches].get<int>();
      } catch (const std::exception &e) {
        failed[i] = std::string(e.what()) + " (round " + std::to_string(r + 1) + ")";
      }
    }
  for (size_t i = 0; i < n; ++i) {
    json result = {{P::kEvent, P::kEventResult}, {P::kCandidate, i}, {P::kId, req.candidates[i].id}};
    if (!failed[i].empty() || medians[i].empty()) {
      result[P::kVerdict] = P::kVerdictInvalid;
      result[P::kReason] = failed[i];
    } else {
      std::vector<double> m = medians[i];
      std::sort(m.begin(), m.end());
      result[P::kVerdict] = P::kVerdictValid;
      result[P::kReason] = "";
      result[P::kTiming] = {{P::kMedianMs, m[m.size() / 2]},
                            {"round_medians_ms", medians[i]},
                            {"runs_per_round", req.runs},
                            {P::kCheckLaunches, req.checkLaunches},
                            {P::kCheckedLaunches, checkedLaunches[i]},
                            {P::kTimedLaunches, launches[i]},
                            {P::kTimingSeed, req.timingInputs.seed},
                            {P::kLaunchGuard, guard[i]}};
      if (guard[i] == P::kGuardAlternating)
        result[P::kTiming][P::kTimingSeedB] = req.timingInputsB.seed;
      if (!disputed[i].empty()) {
        // Valid only if evo-opt's oracle sides with the finalist at those elements.
        result[P::kVerdict] = P::kVerdictInvalid;
        result[P::kReason] = firstDisputed[i];
        result[P::kDisputed] = std::move(disputed[i]);
      }
    }
    if (modules[i])
      D->cuModuleUnload(modules[i]);
    emit(result);
  }
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: evo-eval-worker REQUEST.json RESULTS.jsonl\n");
    return kBadRequest;
  }
  if (std::string(argv[2]) != "-") {
    gOut = std::fopen(argv[2], "w");
    if (!gOut) {
      std::fprintf(stderr, "evo-eval-worker: cannot write '%s'\n", argv[2]);
      return kBadRequest;
    }
  }
  Request req;
  try {
    json j = json::parse(readFile(argv[1]));
    evo::exitWhenParentDies(j.value(P::kParentPid, 0L));
    req = parseRequest(j);
  } catch (const std::exception &e) {
    emit({{P::kEvent, P::kEventFatal}, {P::kCandidate, -1},
          {P::kReason, std::string("bad request: ") + e.what()}});
    finish(kBadRequest);
  }
  std::string why;
  D = Driver::get(&why);
  if (!D) {
    emit({{P::kEvent, P::kEventFatal}, {P::kCandidate, -1}, {P::kReason, why}});
    finish(kNoGpu);
  }
  try {
    std::string err;
    if (makePrimaryContextCurrent(*D, req.device, &err) != CUDA_SUCCESS) {
      emit({{P::kEvent, P::kEventFatal}, {P::kCandidate, -1}, {P::kReason, err}});
      finish(kNoGpu);
    }
    emit(deviceFacts(req.device));
    check(D->cuStreamCreate(&gStream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    loadHelpers();
    if (req.mode == P::kModeProbe) {
    } else if (req.mode == P::kModeCeilings) {
      emit(measureCeilings());
    } else if (req.mode == P::kModeEvaluate) {
      Evaluator ev(req);
      // The reference runs first: later candidates are compared with its outputs.
      std::vector<size_t> order;
      for (size_t i = 0; i < req.candidates.size(); ++i)
        if (req.candidates[i].reference)
          order.insert(order.begin(), i);
        else
          order.push_back(i);
      bool referenceValid = true;
      for (size_t i : order)
        if (!ev.evaluate(i)) {
          referenceValid = false;
          break;
        }
      if (referenceValid && !req.queue.empty())
        serveQueue(ev, req);
    } else if (req.mode == P::kModeTime) {
      Evaluator ev(req);
      timeInterleaved(ev, req);
    } else {
      emit({{P::kEvent, P::kEventFatal}, {P::kCandidate, -1},
            {P::kReason, "unknown mode '" + req.mode + "'"}});
      finish(kBadRequest);
    }
  } catch (const std::exception &e) {
    emit({{P::kEvent, P::kEventFatal}, {P::kCandidate, gCandidate}, {P::kReason, e.what()}});
    finish(kFatalCuda);
  }
  emit({{P::kEvent, P::kEventDone}});
  finish(kOk);
}
