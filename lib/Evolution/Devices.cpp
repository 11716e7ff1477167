//===- Devices.cpp - the GPUs of an evo-evolve run --------------------------===//
//
// devices= read and checked against the host and the chip, each GPU's ceilings, and which GPU
// searches which task when (docs/evolution.md, "Several GPUs: devices="). Plain settings in,
// no pass: EvolvePass.cpp keeps the run's state.
//
//===----------------------------------------------------------------------===//

#include "EvolveSteps.h"
#include "evo/Evaluation/TargetGpu.h"
#include "evo/Runtime/CudaDriver.h"
#include "evo/Target/PTXAssembler.h"
#include "llvm/Support/thread.h"
#include <algorithm>
#include <atomic>
#include <numeric>
#include <thread>

using namespace mlir;

namespace evo {

FailureOr<SmallVector<int>> parseDevices(Location loc, StringRef option, int device,
                                         bool standIn) {
  SmallVector<int> devices;
  StringRef ds = option.trim();
  if (ds.empty())
    return SmallVector<int>{device};
  if (ds == "all") {
    if (standIn)
      return emitError(loc) << "evo-evolve: devices=all counts this host's GPUs; with the "
                               "stand-in worker name them (devices=0,1)";
    return devices;
  }
  SmallVector<StringRef> parts;
  ds.split(parts, ',');
  for (StringRef part : parts) {
    int d = -1;
    if (part.trim().getAsInteger(10, d) || d < 0)
      return emitError(loc) << "evo-evolve: devices must be 'all' or GPU ordinals like 0,1; '"
                            << part.trim() << "' is not one";
    if (llvm::is_contained(devices, d))
      return emitError(loc) << "evo-evolve: devices names GPU " << d << " twice";
    devices.push_back(d);
  }
  return devices;
}

LogicalResult checkDevices(Location loc, StringRef option, SmallVectorImpl<int> &devices,
                           StringRef chip, StringRef ptxas) {
  std::string why;
  cuda::Driver *driver = cuda::Driver::get(&why);
  if (!driver)
    return emitError(loc) << "evo-evolve: no GPU to run on: " << why;
  int count = 0;
  if (driver->cuDeviceGetCount(&count) != cuda::CUDA_SUCCESS)
    count = 0;
  if (option.trim() == "all" && devices.empty())
    for (int d = 0; d < count; ++d)
      devices.push_back(d);
  for (int d : devices)
    if (d >= count)
      return emitError(loc) << "evo-evolve: there is no GPU " << d << " on this host (" << count
                            << " GPU(s))";
  // What the search makes for `chip` (cubins when ptxas is found) must run on every GPU it uses.
  llvm::Expected<std::optional<std::string>> assembler = findPtxas(ptxas);
  bool cubins = assembler && assembler->has_value();
  if (!assembler)
    llvm::consumeError(assembler.takeError());
  for (int d : devices) {
    GpuMatch match = matchGpuToChip(*driver, d, chip, cubins);
    if (!match.error.empty())
      return emitError(loc) << "evo-evolve: " << match.error;
    if (!match.warning.empty())
      emitWarning(loc) << "evo-evolve: " << match.warning;
  }
  return success();
}

FailureOr<std::vector<Ceilings>> measureCeilings(Location loc, const WorkerOptions &worker,
                                                 ArrayRef<int> devices) {
  std::vector<std::optional<llvm::Expected<Ceilings>>> measured(devices.size());
  {
    std::vector<std::thread> threads;
    for (unsigned i = 0; i < devices.size(); ++i)
      threads.emplace_back([&, i] { measured[i].emplace(deviceCeilings(worker, devices[i])); });
    for (std::thread &t : threads)
      t.join();
  }
  std::vector<Ceilings> ceilings;
  bool failedGpu = false;
  for (auto [i, d] : llvm::enumerate(devices)) {
    llvm::Expected<Ceilings> &c = *measured[i];
    if (!c) {
      emitError(loc) << "evo-evolve: GPU " << d << ": " << llvm::toString(c.takeError());
      failedGpu = true;
      continue;
    }
    ceilings.push_back(*c);
  }
  if (failedGpu)
    return failure();
  return ceilings;
}

void onGpuThreads(unsigned count, llvm::function_ref<void(unsigned)> fn) {
  std::vector<llvm::thread> threads;
  for (unsigned s = 0; s < count; ++s)
    threads.emplace_back(std::optional<unsigned>(64u << 20), [fn, s] { fn(s); });
  for (llvm::thread &t : threads)
    t.join();
}

void runOnSlots(size_t count, ArrayRef<double> work, unsigned slots, unsigned searching,
                llvm::function_ref<bool(size_t)> finished,
                llvm::function_ref<bool(size_t, unsigned, ArrayRef<unsigned>)> run) {
  std::vector<size_t> order(count);
  std::iota(order.begin(), order.end(), 0);
  if (!work.empty())
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return work[a] > work[b]; });
  std::atomic<size_t> next{0};
  std::atomic<bool> stop{false};
  std::vector<SmallVector<unsigned>> spread(slots);
  auto runTask = [&](size_t k, unsigned slot) {
    if (!run(k, slot, spread[slot]))
      stop = true;
  };
  auto takeNext = [&](unsigned slot) {
    for (size_t n; !stop && (n = next++) < count;)
      runTask(order[n], slot);
  };
  if (slots == 1) {
    takeNext(0);
    return;
  }
  if (searching > 0 && searching < slots) {
    // Fewer tasks to search than GPUs: thread s searches the s-th biggest with GPU s and the
    // spare GPUs s + J, s + 2J, ... (the biggest get the spares first); tasks finished by an
    // earlier run are rebuilt afterwards (no GPU).
    std::vector<size_t> search, rebuilt;
    for (size_t k : order)
      (finished(k) ? rebuilt : search).push_back(k);
    unsigned n = search.size();
    if (n > 0 && n < slots) { // (else `searching` miscounted: one task per GPU below)
      for (unsigned s = n; s < slots; ++s)
        spread[(s - n) % n].push_back(s);
      onGpuThreads(n, [&](unsigned s) { runTask(search[s], s); });
      for (size_t k : rebuilt)
        if (!stop)
          runTask(k, 0);
      return;
    }
  }
  onGpuThreads(slots, takeNext);
}

} // namespace evo
