//===- Worker.cpp - evo-eval-worker: runs candidate kernels in isolation ----===//
//
//   evo-eval-worker REQUEST.json RESULTS.jsonl
//
// The GPU half of the verifier (docs/verification.md). It is a separate process so that a kernel
// that faults, traps, hangs or corrupts its context takes down only this process: the parent
// (evo-opt's Supervisor) reads the results written so far, records why the worker died, and
// starts a fresh one, with a fresh CUDA context, for the remaining candidates.
//
// Modes: "probe" (device facts), "ceilings" (copy bandwidth, FP32 FMA and f16 mma.sync rates),
// "evaluate" (candidates: correctness checks, then timing; more may stream in through a queue
// file), "time" (interleaved re-measurement of validated finalists). Results are JSON lines, flushed as they happen:
// {"event": "device" | "begin" | "result" | "fatal" | "ceilings" | "done", ...}.
//
// Plain C++ on the dlopen'ed driver (evo/Runtime/CudaDriver.h) and nlohmann/json: no LLVM, so it
// starts in milliseconds and can be copied to any GPU host.
//
//===----------------------------------------------------------------------===//

#include "evo/Runtime/BufferContract.h"
#include "evo/Runtime/CudaDriver.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
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
using contract::ElementKind;

namespace {

const char kHelperPtx[] =
#include "WorkerKernels.inc"
    ;

/// Exit codes the Supervisor understands.
enum ExitCode { kOk = 0, kBadRequest = 2, kFatalCuda = 3, kNoGpu = 4 };

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
    emit({{"event", "fatal"}, {"candidate", gCandidate}, {"code", rc},
          {"reason", describe(what, rc)}});
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
  CUfunction fill, poison, countNotEqual, checksum, scan, sumSquares, compare, gather, copy,
      fmaPeak, mmaPeak;
};
Helpers H;
CUstream gStream = nullptr;
int gSmCount = 132;

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
  get(H.gather, "evo_gather");
  get(H.copy, "evo_copy");
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
  default: return 0;
  }
}

ElementKind kindFromName(const std::string &s) {
  static const std::map<std::string, ElementKind> m = {
      {"f64", ElementKind::F64}, {"f32", ElementKind::F32}, {"f16", ElementKind::F16},
      {"bf16", ElementKind::BF16}, {"i64", ElementKind::I64}, {"i32", ElementKind::I32},
      {"i16", ElementKind::I16}, {"i8", ElementKind::I8}};
  auto it = m.find(s);
  if (it == m.end())
    throw std::invalid_argument("unsupported element kind '" + s + "'");
  return it->second;
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

struct BufferSpec {
  std::string name, role;
  ElementKind kind;
  uint64_t elements = 0;
  double lo = -1, hi = 1;
  bool zeroInit = false;
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
  /// Scratch buffers of this candidate only (numbered after the request's buffers).
  std::vector<BufferSpec> scratch;
};

struct Sample {
  unsigned buffer;
  std::vector<uint64_t> indices;
  std::vector<double> expected;
};

struct Trial {
  uint64_t seed;
  std::vector<Sample> samples;
};

struct Request {
  std::string mode;
  int device = 0;
  std::vector<BufferSpec> buffers;
  std::vector<Candidate> candidates;
  std::vector<Trial> trials;
  std::map<std::string, double> rtol;
  bool timing = true;
  int warmup = 10, runs = 100, repeats = 2;
  /// Timed runs stop early once a repeat has spent this long (slow kernels: at least 5 runs).
  double maxMsPerRepeat = 1500;
  uint64_t flushBytes = 256ull << 20;
  /// "evaluate": a file the parent appends more candidates to (one JSON object per line, then
  /// {"end": true}); "time": interleaved timing rounds.
  std::string queue;
  int rounds = 1;
  json raw;
};

std::string readFile(const std::string &path);

Candidate parseCandidate(const json &c, size_t numBuffers) {
  // numBuffers grows by the candidate's own scratch buffers below.
  Candidate k;
  k.id = c.at("id").get<std::string>();
  if (c.contains("cubin_file")) {
    k.image = readFile(c["cubin_file"].get<std::string>());
    k.binary = true;
  } else {
    k.image = c.contains("ptx_file") ? readFile(c["ptx_file"].get<std::string>())
                                     : c.at("ptx").get<std::string>();
  }
  k.reference = c.value("reference", false);
  for (const json &b : c.value("scratch", json::array())) {
    BufferSpec s;
    s.name = b.value("name", "scratch");
    s.role = "scratch";
    s.kind = kindFromName(b.at("kind").get<std::string>());
    s.elements = b.at("elements").get<uint64_t>();
    s.zeroInit = b.value("zero_init", false);
    k.scratch.push_back(s);
  }
  numBuffers += k.scratch.size();
  for (const json &l : c.at("launches")) {
    Launch L;
    L.kernel = l.at("kernel").get<std::string>();
    for (int d = 0; d < 3; ++d) {
      L.grid[d] = l.at("grid")[d].get<unsigned>();
      L.block[d] = l.at("block")[d].get<unsigned>();
    }
    L.smem = l.value("dynamic_shared_memory", 0u);
    for (const json &a : l.at("args")) {
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

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::invalid_argument("cannot read '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Request parseRequest(const json &j) {
  Request r;
  r.raw = j;
  if (j.value("format", "") != "evo-eval-request/1")
    throw std::invalid_argument("not an evo-eval-request/1");
  r.mode = j.at("mode").get<std::string>();
  r.device = j.value("device", 0);
  for (const json &b : j.value("buffers", json::array())) {
    BufferSpec s;
    s.name = b.at("name").get<std::string>();
    s.role = b.at("role").get<std::string>();
    s.kind = kindFromName(b.at("kind").get<std::string>());
    s.elements = b.at("elements").get<uint64_t>();
    if (b.contains("range")) {
      s.lo = b["range"][0].get<double>();
      s.hi = b["range"][1].get<double>();
    }
    s.zeroInit = b.value("zero_init", false);
    if (s.role != "input" && s.role != "output" && s.role != "scratch")
      throw std::invalid_argument("buffer '" + s.name + "' has unknown role '" + s.role + "'");
    r.buffers.push_back(s);
  }
  for (const json &c : j.value("candidates", json::array()))
    r.candidates.push_back(parseCandidate(c, r.buffers.size()));
  r.queue = j.value("queue", "");
  r.rounds = std::max(1, j.value("rounds", 1));
  for (const json &t : j.value("trials", json::array())) {
    Trial tr;
    tr.seed = t.at("seed").get<uint64_t>();
    for (const json &s : t.value("samples", json::array())) {
      Sample sm;
      sm.buffer = s.at("buffer").get<unsigned>();
      sm.indices = s.at("indices").get<std::vector<uint64_t>>();
      for (const json &e : s.at("expected"))
        sm.expected.push_back(jsonNumber(e));
      if (sm.buffer >= r.buffers.size() || sm.indices.size() != sm.expected.size())
        throw std::invalid_argument("malformed samples");
      for (uint64_t i : sm.indices)
        if (i >= r.buffers[sm.buffer].elements)
          throw std::invalid_argument("sample index out of range");
      tr.samples.push_back(std::move(sm));
    }
    r.trials.push_back(std::move(tr));
  }
  r.rtol = {{"f64", 1e-7}, {"f32", 1e-4}, {"f16", 1e-2}, {"bf16", 1e-2},
            {"i64", 0},    {"i32", 0},    {"i16", 0},    {"i8", 0}};
  for (auto &[k, v] : j.value("rtol", json::object()).items())
    r.rtol[k] = v.get<double>();
  if (j.contains("timing")) {
    const json &t = j["timing"];
    r.timing = t.value("enabled", true);
    r.warmup = t.value("warmup", r.warmup);
    r.runs = std::max(1, t.value("runs", r.runs));
    r.repeats = std::max(1, t.value("repeats", r.repeats));
    r.flushBytes = t.value("flush_bytes", r.flushBytes);
    r.maxMsPerRepeat = t.value("max_ms_per_repeat", r.maxMsPerRepeat);
  }
  return r;
}

std::string kindName(ElementKind k) {
  static const char *names[] = {"f64", "f32", "f16", "bf16", "i64", "i32", "i16", "i8"};
  return names[static_cast<int>(k)];
}

// --- evaluation ---------------------------------------------------------------------------

struct Evaluator {
  Request &req;
  std::vector<std::unique_ptr<DeviceBuffer>> buffers;
  /// Per trial: copies of the reference candidate's outputs, their RMS and checksums.
  std::vector<std::vector<std::unique_ptr<DeviceBuffer>>> refOutputs;
  std::vector<std::vector<double>> refRms;
  std::vector<std::vector<uint64_t>> refChecksums;
  /// Per trial and input buffer: the checksum right after filling.
  std::vector<std::vector<uint64_t>> inputChecksums;
  Counters counters{8};
  /// The running candidate's own scratch buffers (after the request's buffers).
  std::vector<std::unique_ptr<DeviceBuffer>> candidateScratch;
  std::vector<BufferSpec> candidateScratchSpecs;

  DeviceBuffer &buffer(unsigned i) {
    return i < buffers.size() ? *buffers[i] : *candidateScratch[i - buffers.size()];
  }

  void setCandidateScratch(const Candidate &c) {
    candidateScratch.clear();
    candidateScratchSpecs = c.scratch;
    for (const BufferSpec &s : c.scratch) {
      candidateScratch.push_back(std::make_unique<DeviceBuffer>(s.bytes()));
      DeviceBuffer &b = *candidateScratch.back();
      check(D->cuMemsetD8Async(b.base, contract::kCanaryByte, b.total(), gStream),
            "cuMemsetD8Async");
    }
  }

  explicit Evaluator(Request &r) : req(r) {
    for (const BufferSpec &b : req.buffers) {
      buffers.push_back(std::make_unique<DeviceBuffer>(b.bytes()));
      restoreRedZones(buffers.size() - 1);
    }
    inputChecksums.assign(req.trials.size(), {});
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

  void fillInput(size_t i, uint64_t seed) {
    const BufferSpec &s = req.buffers[i];
    double span = s.hi - s.lo;
    double ilo = std::ceil(s.lo), ihi = std::floor(s.hi);
    double ispan = ihi - ilo + 1.0;
    int kind = static_cast<int>(s.kind);
    uint32_t index = static_cast<uint32_t>(i);
    launchHelper(H.fill, gridFor(s.elements), 256, buffers[i]->ptr(), s.elements, kind, seed, index,
                 s.lo, span, ilo, ihi, ispan);
  }

  void poison(size_t i) {
    const BufferSpec &s = req.buffers[i];
    launchHelper(H.poison, gridFor(s.elements), 256, buffers[i]->ptr(), s.elements,
                 static_cast<int>(s.kind));
  }

  /// Inputs per the contract, outputs and scratch poisoned (zero_init scratch zeroed).
  void prepare(size_t trial) {
    for (size_t k = 0; k < candidateScratchSpecs.size(); ++k) {
      const BufferSpec &s = candidateScratchSpecs[k];
      if (s.zeroInit)
        check(D->cuMemsetD8Async(candidateScratch[k]->ptr(), 0, s.bytes(), gStream),
              "cuMemsetD8Async");
      else
        launchHelper(H.poison, gridFor(s.elements), 256, candidateScratch[k]->ptr(), s.elements,
                     static_cast<int>(s.kind));
    }
    bool record = inputChecksums[trial].empty();
    for (size_t i = 0; i < req.buffers.size(); ++i) {
      const BufferSpec &s = req.buffers[i];
      if (s.role == "input") {
        fillInput(i, req.trials[trial].seed);
        if (record)
          inputChecksums[trial].push_back(checksum(buffers[i]->ptr(), s.bytes()));
      } else if (s.role == "scratch" && s.zeroInit) {
        check(D->cuMemsetD8Async(buffers[i]->ptr(), 0, s.bytes(), gStream), "cuMemsetD8Async");
      } else {
        poison(i);
      }
    }
  }

  std::map<std::string, CUfunction> loadCandidate(const Candidate &c, CUmodule &module) {
    // The JIT's own error log makes PTX problems readable.
    std::vector<char> log(16384, 0);
    int options[] = {5 /*CU_JIT_ERROR_LOG_BUFFER*/, 6 /*..._SIZE_BYTES*/};
    void *values[] = {log.data(), reinterpret_cast<void *>(static_cast<uintptr_t>(log.size()))};
    CUresult rc = D->cuModuleLoadDataEx(&module, c.image.c_str(), c.binary ? 0 : 2, options,
                                        values);
    if (rc != CUDA_SUCCESS) {
      if (isSticky(rc))
        check(rc, "cuModuleLoadDataEx");
      throw Invalid(std::string(c.binary ? "the cubin" : "the PTX") + " does not load: " +
                    describe("cuModuleLoadDataEx", rc) +
                    (log[0] ? std::string(": ") + log.data() : std::string()));
    }
    std::map<std::string, CUfunction> fns;
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

  void run(const Candidate &c, std::map<std::string, CUfunction> &fns) {
    for (const Launch &l : c.launches) {
      std::vector<CUdeviceptr> ptrs;
      for (unsigned a : l.args)
        ptrs.push_back(buffer(a).ptr());
      std::vector<void *> params;
      for (CUdeviceptr &p : ptrs)
        params.push_back(&p);
      check(D->cuLaunchKernel(fns[l.kernel], l.grid[0], l.grid[1], l.grid[2], l.block[0],
                              l.block[1], l.block[2], l.smem, gStream, params.data(), nullptr),
            ("cuLaunchKernel(" + l.kernel + ")").c_str());
    }
  }

  uint64_t changedRedZoneBytes(size_t i) {
    DeviceBuffer &b = buffer(i);
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

  std::vector<uint64_t> gather(size_t i, const std::vector<uint64_t> &indices) {
    if (indices.empty())
      return {};
    DeviceBuffer idx(indices.size() * 8, false), out(indices.size() * 8, false);
    // Copies go through gStream: it is a non-blocking stream, so a copy on the legacy stream
    // (cuMemcpyHtoD) would not be ordered before the gather and could race with it.
    check(D->cuMemcpyHtoDAsync(idx.ptr(), indices.data(), idx.bytes, gStream), "cuMemcpyHtoDAsync");
    uint64_t m = indices.size();
    launchHelper(H.gather, gridFor(m), 256, buffers[i]->ptr(), static_cast<int>(req.buffers[i].kind),
                 idx.ptr(), m, out.ptr());
    std::vector<uint64_t> bits(m);
    check(D->cuMemcpyDtoHAsync(bits.data(), out.ptr(), out.bytes, gStream), "cuMemcpyDtoHAsync");
    check(D->cuStreamSynchronize(gStream), "cuStreamSynchronize");
    return bits;
  }

  static std::string fmt(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    return buf;
  }

  /// All checks of one trial; throws Invalid with the first problem found.
  void checkTrial(size_t t, const Candidate &c, json &trialOut) {
    const Trial &trial = req.trials[t];
    for (size_t i = 0; i < req.buffers.size() + candidateScratch.size(); ++i)
      if (uint64_t n = changedRedZoneBytes(i)) {
        restoreRedZones(i);
        std::string name = i < req.buffers.size() ? req.buffers[i].name
                                                  : candidateScratchSpecs[i - req.buffers.size()].name;
        throw Invalid("out-of-bounds write: " + std::to_string(n) +
                      " bytes changed in the red zones around buffer '" + name + "'");
      }
    size_t inputIndex = 0;
    for (size_t i = 0; i < req.buffers.size(); ++i)
      if (req.buffers[i].role == "input") {
        if (checksum(buffers[i]->ptr(), req.buffers[i].bytes()) !=
            inputChecksums[t][inputIndex])
          throw Invalid("the kernel modified input buffer '" + req.buffers[i].name + "'");
        ++inputIndex;
      }
    bool haveReference = !c.reference && !refOutputs.empty();
    size_t outIndex = 0;
    for (size_t i = 0; i < req.buffers.size(); ++i) {
      const BufferSpec &s = req.buffers[i];
      if (s.role != "output")
        continue;
      double rtol = req.rtol[kindName(s.kind)];
      std::vector<uint64_t> counts = scan(i);
      if (counts[0])
        throw Invalid(std::to_string(counts[0]) + " of " + std::to_string(s.elements) +
                      " elements of '" + s.name + "' were never written (trial " +
                      std::to_string(t) + ")");
      // Samples against the oracle.
      bool samplesFinite = true;
      double maxSampleErr = 0;
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
        double atol = rtol * rms;
        for (size_t j = 0; j < bits.size(); ++j) {
          double got = decode(bits[j], s.kind), want = sm.expected[j];
          bool bad = std::isfinite(want)
                         ? !std::isfinite(got) || std::fabs(got - want) > atol + rtol * std::fabs(want)
                         : !(std::isnan(want) ? std::isnan(got) : got == want);
          if (std::isfinite(want) && std::isfinite(got))
            maxSampleErr = std::max(maxSampleErr, std::fabs(got - want) / (std::fabs(want) + atol + 1e-300));
          if (bad)
            throw Invalid("'" + s.name + "'[" + std::to_string(sm.indices[j]) + "] = " + fmt(got) +
                          " but the oracle says " + fmt(want) + " (trial " + std::to_string(t) +
                          ", seed " + std::to_string(trial.seed) + ")");
        }
        trialOut["sampled"] = trialOut.value("sampled", 0) + static_cast<int>(bits.size());
      }
      trialOut["max_sample_rel_err"] = maxSampleErr;
      if (haveReference) {
        DeviceBuffer &ref = *refOutputs[t][outIndex];
        if (checksum(ref.ptr(), s.bytes()) != refChecksums[t][outIndex]) {
          emit({{"event", "fatal"}, {"candidate", gCandidate}, {"code", 0},
                {"reason", "the kernel wrote outside its buffers: the reference copy of '" +
                               s.name + "' changed"}});
          finish(kFatalCuda);
        }
        double atol = rtol * refRms[t][outIndex];
        Counters stats(6);
        check(D->cuMemsetD8Async(stats.buf.ptr(), 0, 48, gStream), "cuMemsetD8Async");
        check(D->cuMemsetD8Async(stats.buf.ptr() + 16, 0xFF, 8, gStream), "cuMemsetD8Async");
        launchHelper(H.compare, gridFor(s.elements), 256, buffers[i]->ptr(), ref.ptr(), s.elements,
                     static_cast<int>(s.kind), rtol, atol, stats.buf.ptr());
        std::vector<uint64_t> v = stats.read();
        double relL2 = v[5] ? std::sqrt(bitsToDouble(v[4]) / bitsToDouble(v[5])) : 0;
        trialOut["rel_l2_err"] = relL2;
        trialOut["max_abs_err"] = bitsToDouble(v[3]);
        if (v[0]) {
          uint64_t first = v[2];
          std::vector<uint64_t> got = gather(i, {first});
          uint64_t refBits;
          {
            DeviceBuffer idx(8, false), out(8, false);
            check(D->cuMemcpyHtoDAsync(idx.ptr(), &first, 8, gStream), "cuMemcpyHtoDAsync");
            uint64_t one = 1;
            launchHelper(H.gather, 1, 32, ref.ptr(), static_cast<int>(s.kind), idx.ptr(), one,
                         out.ptr());
            check(D->cuStreamSynchronize(gStream), "cuStreamSynchronize");
            check(D->cuMemcpyDtoH(&refBits, out.ptr(), 8), "cuMemcpyDtoH");
          }
          throw Invalid(std::to_string(v[0]) + " of " + std::to_string(s.elements) +
                        " elements of '" + s.name + "' differ from the validated reference; first '" +
                        s.name + "'[" + std::to_string(first) + "] = " + fmt(decode(got[0], s.kind)) +
                        ", expected " + fmt(decode(refBits, s.kind)) + " (trial " +
                        std::to_string(t) + ")");
        }
      } else if (samplesFinite && (counts[1] || counts[2])) {
        throw Invalid(std::to_string(counts[1]) + " NaN and " + std::to_string(counts[2]) +
                      " infinite elements in '" + s.name + "' where the oracle's samples are all "
                      "finite (trial " + std::to_string(t) + ")");
      }
      ++outIndex;
    }
  }

  void keepReference(size_t t) {
    if (refOutputs.size() <= t) {
      refOutputs.resize(t + 1);
      refRms.resize(t + 1);
      refChecksums.resize(t + 1);
    }
    refOutputs[t].clear();
    refRms[t].clear();
    refChecksums[t].clear();
    for (size_t i = 0; i < req.buffers.size(); ++i) {
      const BufferSpec &s = req.buffers[i];
      if (s.role != "output")
        continue;
      auto copy = std::make_unique<DeviceBuffer>(s.bytes(), false);
      check(D->cuMemcpyAsync(copy->ptr(), buffers[i]->ptr(), s.bytes(), gStream), "cuMemcpyAsync");
      uint64_t finite = s.elements;
      refRms[t].push_back(std::sqrt(sumSquares(copy->ptr(), s) / std::max<uint64_t>(finite, 1)));
      refChecksums[t].push_back(checksum(copy->ptr(), s.bytes()));
      refOutputs[t].push_back(std::move(copy));
    }
  }

  json time(const Candidate &c, std::map<std::string, CUfunction> &fns) {
    return time(c, fns, req.repeats);
  }

  json time(const Candidate &c, std::map<std::string, CUfunction> &fns, int repeats) {
    prepare(0);
    DeviceBuffer flush(req.flushBytes, false);
    std::vector<CUevent> start(req.runs), stop(req.runs);
    for (int r = 0; r < req.runs; ++r) {
      check(D->cuEventCreate(&start[r], CU_EVENT_DEFAULT), "cuEventCreate");
      check(D->cuEventCreate(&stop[r], CU_EVENT_DEFAULT), "cuEventCreate");
    }
    json out;
    std::vector<double> medians;
    std::vector<double> all;
    // Slow kernels get fewer runs: one timed warm-up says how many fit in the time allowed.
    int runs = req.runs;
    {
      run(c, fns);
      check(D->cuEventRecord(start[0], gStream), "cuEventRecord");
      run(c, fns);
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
      for (int w = 0; w < warmup && (rep == 0 || w < 2); ++w)
        run(c, fns);
      for (int r = 0; r < runs; ++r) {
        // Evict L2 between runs (the write keeps the GPU busy while the host enqueues the next
        // launches, so host overhead stays outside the events).
        check(D->cuMemsetD32Async(flush.ptr(), static_cast<unsigned>(r), flush.bytes / 4, gStream),
              "cuMemsetD32Async");
        check(D->cuEventRecord(start[r], gStream), "cuEventRecord");
        run(c, fns);
        check(D->cuEventRecord(stop[r], gStream), "cuEventRecord");
      }
      check(D->cuStreamSynchronize(gStream), "cuStreamSynchronize");
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
    for (int r = 0; r < req.runs; ++r) {
      D->cuEventDestroy(start[r]);
      D->cuEventDestroy(stop[r]);
    }
    std::sort(all.begin(), all.end());
    auto pct = [&](double p) { return all[std::min(all.size() - 1, size_t(p * all.size()))]; };
    out["median_ms"] = all[all.size() / 2];
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

  /// Returns false when the candidate was the reference and is not valid: the rest is moot.
  bool evaluate(size_t ci) {
    Candidate &c = req.candidates[ci];
    gCandidate = static_cast<int>(ci);
    emit({{"event", "begin"}, {"candidate", ci}, {"id", c.id}});
    json result = {{"event", "result"}, {"candidate", ci}, {"id", c.id}};
    CUmodule module = nullptr;
    try {
      setCandidateScratch(c);
      auto fns = loadCandidate(c, module);
      json trials = json::array();
      for (size_t t = 0; t < req.trials.size(); ++t) {
        prepare(t);
        run(c, fns);
        check(D->cuStreamSynchronize(gStream), "cuStreamSynchronize");
        json trialOut = {{"seed", req.trials[t].seed}};
        checkTrial(t, c, trialOut);
        if (c.reference)
          keepReference(t);
        trials.push_back(trialOut);
      }
      result["trials"] = trials;
      result["verdict"] = "valid";
      result["reason"] = "";
      if (req.timing)
        result["timing"] = time(c, fns);
    } catch (const Invalid &e) {
      result["verdict"] = "invalid";
      result["reason"] = e.what();
    } catch (const CudaFailure &e) {
      result["verdict"] = "invalid";
      result["reason"] = e.what();
    }
    if (module)
      D->cuModuleUnload(module);
    emit(result);
    return !c.reference || result["verdict"] == "valid";
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
  return {{"event", "device"}, {"name", name}, {"ordinal", ordinal}, {"sm_count", sms},
          {"compute_capability", std::to_string(major) + "." + std::to_string(minor)},
          {"l2_bytes", l2}, {"memory_bytes", mem}, {"driver_version", driver}, {"uuid", hex}};
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

json measureCeilings() {
  json out = {{"event", "ceilings"}};
  {
    uint64_t n4 = 1ull << 26; // 1 GiB each way
    DeviceBuffer in(n4 * 16, false), o(n4 * 16, false);
    check(D->cuMemsetD32Async(in.ptr(), 0x3f800000u, n4 * 4, gStream), "cuMemsetD32Async");
    // The ceiling is the best of a few launch shapes (blocks per SM, threads, unroll).
    struct Shape { unsigned perSm, threads; int unroll; };
    double best = 0;
    json tried = json::array();
    // perSm 0: one 16-byte element per thread, no grid-stride loop (what simple elementwise
    // kernels do, and on Hopper often the fastest).
    for (Shape s : {Shape{8, 256, 1}, Shape{16, 256, 4}, Shape{32, 256, 4}, Shape{4, 1024, 4},
                    Shape{2, 1024, 1}, Shape{0, 256, 1}, Shape{0, 512, 1}, Shape{0, 128, 1}}) {
      unsigned grid = s.perSm ? gSmCount * s.perSm : static_cast<unsigned>(n4 / s.threads);
      int unroll = s.unroll;
      double ms = medianMs(20, [&] { launchHelper(H.copy, grid, s.threads, in.ptr(), o.ptr(), n4, unroll); });
      double gbps = 2.0 * n4 * 16 / (ms * 1e6);
      tried.push_back({{"blocks", grid}, {"threads", s.threads}, {"unroll", unroll}, {"gbps", gbps}});
      best = std::max(best, gbps);
    }
    out["copy_gbps"] = best;
    out["copy_shapes"] = tried;
  }
  {
    DeviceBuffer sink(64 << 20, false);
    int iterations = 8192;
    unsigned grid = gSmCount * 16, block = 256;
    float seed = 1.0f;
    double ms = medianMs(5, [&] { launchHelper(H.fmaPeak, grid, block, sink.ptr(), iterations, seed); });
    double flops = 2.0 * 8 * iterations * double(grid) * block;
    out["fp32_tflops"] = flops / (ms * 1e9);
  }
  {
    DeviceBuffer sink(64 << 20, false);
    int iterations = 4096;
    unsigned grid = gSmCount * 8, block = 128;
    double ms = medianMs(5, [&] { launchHelper(H.mmaPeak, grid, block, sink.ptr(), iterations); });
    double flops = double(grid) * (block / 32) * iterations * 4 * (2.0 * 16 * 8 * 16);
    out["f16_mma_tflops"] = flops / (ms * 1e9);
  }
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
      if (j.value("end", false))
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
/// them alike. Each candidate's time is the median of its round medians.
void timeInterleaved(Evaluator &ev, Request &req) {
  size_t n = req.candidates.size();
  std::vector<CUmodule> modules(n, nullptr);
  std::vector<std::map<std::string, CUfunction>> fns(n);
  std::vector<std::vector<double>> medians(n);
  std::vector<std::string> failed(n);
  for (size_t i = 0; i < n; ++i) {
    gCandidate = static_cast<int>(i);
    try {
      fns[i] = ev.loadCandidate(req.candidates[i], modules[i]);
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
        json t = ev.time(req.candidates[i], fns[i], 1);
        medians[i].push_back(t["median_ms"].get<double>());
      } catch (const std::exception &e) {
        failed[i] = e.what();
      }
    }
  for (size_t i = 0; i < n; ++i) {
    json result = {{"event", "result"}, {"candidate", i}, {"id", req.candidates[i].id}};
    if (!failed[i].empty() || medians[i].empty()) {
      result["verdict"] = "invalid";
      result["reason"] = failed[i];
    } else {
      std::vector<double> m = medians[i];
      std::sort(m.begin(), m.end());
      result["verdict"] = "valid";
      result["reason"] = "";
      result["timing"] = {{"median_ms", m[m.size() / 2]}, {"round_medians_ms", medians[i]},
                          {"runs_per_round", req.runs}};
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
    req = parseRequest(j);
  } catch (const std::exception &e) {
    emit({{"event", "fatal"}, {"candidate", -1}, {"reason", std::string("bad request: ") + e.what()}});
    finish(kBadRequest);
  }
  std::string why;
  D = Driver::get(&why);
  if (!D) {
    emit({{"event", "fatal"}, {"candidate", -1}, {"reason", why}});
    finish(kNoGpu);
  }
  try {
    std::string err;
    if (makePrimaryContextCurrent(*D, req.device, &err) != CUDA_SUCCESS) {
      emit({{"event", "fatal"}, {"candidate", -1}, {"reason", err}});
      finish(kNoGpu);
    }
    emit(deviceFacts(req.device));
    check(D->cuStreamCreate(&gStream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    loadHelpers();
    if (req.mode == "probe") {
    } else if (req.mode == "ceilings") {
      emit(measureCeilings());
    } else if (req.mode == "evaluate") {
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
    } else if (req.mode == "time") {
      Evaluator ev(req);
      timeInterleaved(ev, req);
    } else {
      emit({{"event", "fatal"}, {"candidate", -1}, {"reason", "unknown mode '" + req.mode + "'"}});
      finish(kBadRequest);
    }
  } catch (const std::exception &e) {
    emit({{"event", "fatal"}, {"candidate", gCandidate}, {"reason", e.what()}});
    finish(kFatalCuda);
  }
  emit({{"event", "done"}});
  finish(kOk);
}
