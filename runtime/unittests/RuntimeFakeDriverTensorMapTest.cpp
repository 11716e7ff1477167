//===- RuntimeFakeDriverTensorMapTest.cpp - tensor maps, in CI ------------===//
//
// libevo_runtime's tensor maps against FakeCuda.c: encoded over the caller's buffers and
// uploaded on its stream, the pinned slots of graph captures (reserved, refilled, exhausted),
// encode failures as error values, and threads.
//
//===----------------------------------------------------------------------===//

#include "RuntimeFakeDriverFixture.h"
#include "TensorMapManifest.h"
#include "evo-runtime/Module.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

using evo::runtime::DType;
using evo::runtime::Error;
using evo::runtime::Module;
using evo::runtime::Status;
using evo::runtime::Stream;
using evo::runtime::TensorRef;
using evo::runtime::WorkspaceRef;
using evo::runtime::testing::Args;
using evo::runtime::testing::at;
using evo::runtime::testing::count;
using evo::runtime::testing::FakeDriver;
using evo::runtime::testing::joined;
using evo::runtime::testing::kImage;
using evo::runtime::testing::manifest;
using evo::runtime::testing::stream;
using evo::runtime::testing::takeLog;

namespace {

struct TmArgs {
  std::vector<TensorRef> in = {TensorRef(at(0x100000), DType::F16, {256, 64}),
                               TensorRef(at(0x200000), DType::F16, {64, 128})};
  std::vector<TensorRef> out = {TensorRef(at(0x300000), DType::F32, {256, 128})};
  WorkspaceRef ws{at(0x400000), 16384};
};

std::string hex(uintptr_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%#lx", static_cast<unsigned long>(v));
  return buf;
}

/// The address of the one "alloc ctx=C P N" line of `log` with N bytes.
uintptr_t allocated(const std::vector<std::string> &log, size_t bytes) {
  uintptr_t found = 0;
  for (const std::string &l : log) {
    unsigned long p = 0;
    size_t n = 0;
    if (std::sscanf(l.c_str(), "alloc ctx=%*s %lx %zu", &p, &n) == 2 && n == bytes) {
      EXPECT_EQ(found, 0u) << "two allocations of " << bytes << " bytes";
      found = p;
    }
  }
  return found;
}

/// How many "alloc ctx=C P N" lines of `log` have N bytes.
size_t allocations(const std::vector<std::string> &log, size_t bytes) {
  size_t found = 0;
  for (const std::string &l : log) {
    unsigned long p = 0;
    size_t n = 0;
    found += std::sscanf(l.c_str(), "alloc ctx=%*s %lx %zu", &p, &n) == 2 && n == bytes;
  }
  return found;
}

/// The address of the one "hostalloc P N" line of `log` with N bytes (pinned memory).
uintptr_t hostAllocated(const std::vector<std::string> &log, size_t bytes) {
  uintptr_t found = 0;
  for (const std::string &l : log) {
    unsigned long p = 0;
    size_t n = 0;
    if (std::sscanf(l.c_str(), "hostalloc %lx %zu", &p, &n) == 2 && n == bytes) {
      EXPECT_EQ(found, 0u) << "two pinned allocations of " << bytes << " bytes";
      found = p;
    }
  }
  return found;
}

/// The default capture pool of the tensor-map manifest: 256 slots of two 128-byte maps.
constexpr size_t kPoolBytes = 256 * 256;

/// Sets an environment variable for a scope.
struct ScopedEnv {
  const char *name;
  ScopedEnv(const char *name, const char *value) : name(name) { setenv(name, value, 1); }
  ~ScopedEnv() { unsetenv(name); }
};

const char kEncodeA[] = "tensormap dtype=6 rank=2 addr=0x100000 dims=64,256 strides=128 box=64,128 "
                        "estrides=1,1 interleave=0 swizzle=3 l2=3 oob=0";
const char kEncodeBt[] = "tensormap dtype=6 rank=2 addr=0x400000 dims=128,64 strides=256 box=32,64 "
                         "estrides=1,1 interleave=0 swizzle=2 l2=3 oob=0";

} // namespace

TEST_F(FakeDriver, TensorMapsAreEncodedOverTheCallersBuffersAndUploadedOnItsStream) {
  auto mod = Module::fromMemory(evo::runtime::testing::tensorMapManifest(),
                                evo::runtime::testing::kTensorMapImage);
  ASSERT_TRUE(mod.ok()) << mod.error().message();
  TmArgs a;
  Status s = mod->launch(stream(0x7000), a.in, a.out, a.ws);
  ASSERT_TRUE(s.ok()) << s.message();
  std::vector<std::string> log = takeLog();
  uintptr_t maps = allocated(log, 256); // 128 bytes per map, allocated once
  ASSERT_NE(maps, 0u) << joined(log);
  EXPECT_EQ(maps % 64, 0u);
  // The capture pool, allocated at the first launch with tensor maps (device and pinned memory).
  uintptr_t pool = allocated(log, kPoolBytes), poolHost = hostAllocated(log, kPoolBytes);
  ASSERT_NE(pool, 0u) << joined(log);
  ASSERT_NE(poolHost, 0u) << joined(log);
  std::vector<std::string> want = {
      "load ctx=0xc000", "attr tm_k1 8=100000",
      "alloc ctx=0xc000 " + hex(pool) + " " + std::to_string(kPoolBytes),
      "hostalloc " + hex(poolHost) + " " + std::to_string(kPoolBytes),
      "alloc ctx=0xc000 " + hex(maps) + " 256",
      // dtype f16 (6), rank 2, the manifest's dims/strides/box, element strides 1, interleave
      // none (0), swizzle 128 B (3) / 64 B (2), L2 256 B (3), OOB fill none (0); map_bt over the
      // scratch buffer at its workspace offset.
      kEncodeA, kEncodeBt, "htodasync " + hex(maps) + " 128 stream=0x7000 ctx=0xc000",
      "htod128 " + hex(maps) + " first=0x100000",
      "htodasync " + hex(maps + 128) + " 128 stream=0x7000 ctx=0xc000",
      "htod128 " + hex(maps + 128) + " first=0x400000",
      "launch tm_k0 grid=4,1,1 block=128,1,1 smem=0 stream=0x7000 ctx=0xc000 "
      "args=0x200000,0x400000",
      "launch tm_k1 grid=2,1,1 block=384,1,1 smem=100000 stream=0x7000 ctx=0xc000 args=0x100000," +
          hex(maps) + "," + hex(maps + 128) + ",0x300000"};
  EXPECT_EQ(joined(log), joined(want));

  // The same buffers again on the same stream: nothing re-encoded or copied.
  ASSERT_TRUE(mod->launch(stream(0x7000), a.in, a.out, a.ws).ok());
  log = takeLog();
  EXPECT_EQ(log.size(), 2u) << joined(log);
  EXPECT_EQ(count(log, "launch tm_k1"), 1u) << joined(log);

  // Another input address: both maps encoded again into the same memory, on the stream.
  a.in[0].data = at(0x500000);
  ASSERT_TRUE(mod->launch(stream(0x7000), a.in, a.out, a.ws).ok());
  log = takeLog();
  EXPECT_EQ(count(log, "alloc"), 0u) << joined(log);
  EXPECT_EQ(count(log, "tensormap dtype=6 rank=2 addr=0x500000 dims=64,256"), 1u) << joined(log);
  EXPECT_EQ(count(log, kEncodeBt), 1u) << joined(log);
  EXPECT_EQ(count(log, "htod128 " + hex(maps) + " first=0x500000"), 1u) << joined(log);
  EXPECT_EQ(count(log, "launch tm_k1 grid=2,1,1 block=384,1,1 smem=100000 stream=0x7000 ctx=0xc000 "
                       "args=0x500000," + hex(maps) + ","),
            1u)
      << joined(log);

  // Another stream has maps of its own (a launch there cannot overwrite this stream's).
  ASSERT_TRUE(mod->launch(stream(0x8000), a.in, a.out, a.ws).ok());
  log = takeLog();
  uintptr_t other = allocated(log, 256);
  EXPECT_NE(other, 0u) << joined(log);
  EXPECT_NE(other, maps);
  EXPECT_EQ(count(log, "htodasync " + hex(other) + " 128 stream=0x8000 ctx=0xc000"), 1u) << joined(log);
  EXPECT_EQ(count(log, "SYNC"), 0u);

  // The Module frees its tensor maps with it, and the capture pool (no slot of it captured).
  { Module dropped = std::move(*mod); }
  log = takeLog();
  EXPECT_EQ(count(log, "free ctx=0xc000 " + hex(maps)), 1u) << joined(log);
  EXPECT_EQ(count(log, "free ctx=0xc000 " + hex(other)), 1u) << joined(log);
  EXPECT_EQ(count(log, "free ctx=0xc000 " + hex(pool)), 1u) << joined(log);
  EXPECT_EQ(count(log, "hostfree " + hex(poolHost)), 1u) << joined(log);
}

TEST_F(FakeDriver, TensorMapsInAGraphCaptureGetPinnedSlotsOfTheirOwn) {
  auto mod = Module::fromMemory(evo::runtime::testing::tensorMapManifest(),
                                evo::runtime::testing::kTensorMapImage);
  ASSERT_TRUE(mod.ok());
  TmArgs a;
  ASSERT_TRUE(mod->prepare(stream(0x9000)).ok());
  takeLog();
  // Capturing before any launch outside capture: no capture slot exists and none can be
  // allocated now; refused with the way out, nothing allocated or enqueued.
  {
    ScopedEnv capture("EVO_FAKE_CUDA_CAPTURING", "0x9000");
    Status s = mod->launch(stream(0x9000), a.in, a.out, a.ws);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().code(), Error::Code::InvalidArgument);
    EXPECT_NE(s.message().find("none is allocated yet (they cannot be allocated during CUDA graph "
                               "capture): launch it once outside capture first, or call "
                               "Module::reserveCaptureSlots before capturing"),
              std::string::npos)
        << s.message();
  }
  EXPECT_EQ(takeLog(), std::vector<std::string>{});
  // A launch outside capture allocates the pool (and the stream's own slot).
  ASSERT_TRUE(mod->launch(stream(0x9000), a.in, a.out, a.ws).ok());
  std::vector<std::string> log = takeLog();
  uintptr_t eager = allocated(log, 256), pool = allocated(log, kPoolBytes);
  ASSERT_NE(pool, 0u) << joined(log);
  ASSERT_NE(hostAllocated(log, kPoolBytes), 0u) << joined(log);

  // Captured: encoded into the first slot's pinned bytes, one copy from them on the capturing
  // stream (a memcpy node), the launches given that slot; nothing allocated.
  auto captured = [&](uintptr_t slot) {
    ScopedEnv capture("EVO_FAKE_CUDA_CAPTURING", "0x9000");
    Status s = mod->launch(stream(0x9000), a.in, a.out, a.ws);
    EXPECT_TRUE(s.ok()) << s.message();
    std::vector<std::string> want = {kEncodeA,
                                     kEncodeBt,
                                     "htodasync " + hex(slot) +
                                         " 256 stream=0x9000 ctx=0xc000 pinned",
                                     "htod128 " + hex(slot) + " first=0x100000",
                                     "htod128 " + hex(slot + 128) + " first=0x400000",
                                     "launch tm_k0 grid=4,1,1 block=128,1,1 smem=0 stream=0x9000 "
                                     "ctx=0xc000 args=0x200000,0x400000",
                                     "launch tm_k1 grid=2,1,1 block=384,1,1 smem=100000 "
                                     "stream=0x9000 ctx=0xc000 args=0x100000," +
                                         hex(slot) + "," + hex(slot + 128) + ",0x300000"};
    EXPECT_EQ(joined(takeLog()), joined(want));
  };
  captured(pool);
  // A second capture of the same call (another graph, or the same one) gets the next slot: the
  // first one's device bytes exist only when its graph replays.
  captured(pool + 256);

  // Outside capture again: the stream's own slot, never a captured one.
  ASSERT_TRUE(mod->launch(stream(0x9000), a.in, a.out, a.ws).ok());
  log = takeLog();
  EXPECT_EQ(log.size(), 2u) << joined(log); // same tensors: nothing encoded or copied
  EXPECT_EQ(count(log, "launch tm_k1 grid=2,1,1 block=384,1,1 smem=100000 stream=0x9000 ctx=0xc000 "
                       "args=0x100000," +
                           hex(eager) + ","),
            1u)
      << joined(log);
  a.in[0].data = at(0x600000);
  ASSERT_TRUE(mod->launch(stream(0x9000), a.in, a.out, a.ws).ok());
  log = takeLog();
  EXPECT_EQ(count(log, "htodasync " + hex(eager) + " 128 stream=0x9000"), 1u) << joined(log);
  EXPECT_EQ(count(log, "htodasync " + hex(eager + 128) + " 128 stream=0x9000"), 1u) << joined(log);
  EXPECT_EQ(count(log, "htodasync"), 2u) << joined(log);
  EXPECT_EQ(count(log, "alloc"), 0u) << joined(log);

  // The captured slots outlive the Module (a graph replays them); its other memory goes.
  { Module dropped = std::move(*mod); }
  log = takeLog();
  EXPECT_EQ(count(log, "free ctx=0xc000 " + hex(eager)), 1u) << joined(log);
  EXPECT_EQ(count(log, "free ctx=0xc000 " + hex(pool)), 0u) << joined(log);
  EXPECT_EQ(count(log, "hostfree"), 0u) << joined(log);
}

TEST_F(FakeDriver, CaptureSlotsReservedRefilledAndExhausted) {
  auto mod = Module::fromMemory(evo::runtime::testing::tensorMapManifest(),
                                evo::runtime::testing::kTensorMapImage);
  ASSERT_TRUE(mod.ok());
  TmArgs a;
  auto capture = [&] {
    ScopedEnv capturing("EVO_FAKE_CUDA_CAPTURING", "0x9000");
    return mod->launch(stream(0x9000), a.in, a.out, a.ws);
  };
  // Reserved ahead, without a launch: a capture can come first.
  ASSERT_TRUE(mod->reserveCaptureSlots(1, stream(0x9000)).ok());
  std::vector<std::string> log = takeLog();
  uintptr_t reserved = allocated(log, 256); // one slot of two maps
  ASSERT_NE(reserved, 0u) << joined(log);
  ASSERT_NE(hostAllocated(log, 256), 0u) << joined(log);
  Status s = capture();
  ASSERT_TRUE(s.ok()) << s.message();
  log = takeLog();
  EXPECT_EQ(count(log, "htodasync " + hex(reserved) + " 256 stream=0x9000 ctx=0xc000 pinned"), 1u)
      << joined(log);
  EXPECT_EQ(count(log, "alloc"), 0u) << joined(log);
  EXPECT_EQ(count(log, "ALLOC-IN-CAPTURE"), 0u) << joined(log);

  // A pool of 2 ($EVO_RUNTIME_CAPTURE_SLOTS): filled by the next launch outside capture.
  ScopedEnv slots("EVO_RUNTIME_CAPTURE_SLOTS", "2");
  ASSERT_TRUE(mod->launch(stream(0x9000), a.in, a.out, a.ws).ok());
  log = takeLog();
  uintptr_t pool = allocated(log, 2 * 256);
  ASSERT_NE(pool, 0u) << joined(log);
  ASSERT_TRUE(capture().ok());
  ASSERT_TRUE(capture().ok());
  log = takeLog();
  EXPECT_EQ(count(log, "htodasync " + hex(pool) + " 256 stream=0x9000 ctx=0xc000 pinned"), 1u)
      << joined(log);
  EXPECT_EQ(count(log, "htodasync " + hex(pool + 256) + " 256 stream=0x9000 ctx=0xc000 pinned"), 1u)
      << joined(log);
  // None left: refused, naming the cause and the ways out; nothing allocated or enqueued.
  s = capture();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code(), Error::Code::InvalidArgument);
  EXPECT_EQ(s.message(),
            "evo-runtime: tm: no capture slot is left for its tensor maps: the 3 slots of this "
            "context are held by earlier captured launches (one each, for good); reserve more "
            "before capturing (Module::reserveCaptureSlots, or $EVO_RUNTIME_CAPTURE_SLOTS above "
            "256: the pool is refilled to that size at launches outside capture)");
  EXPECT_EQ(takeLog(), std::vector<std::string>{});
  // Refilled outside capture, then a capture works again.
  ASSERT_TRUE(mod->launch(stream(0x9000), a.in, a.out, a.ws).ok());
  log = takeLog();
  uintptr_t refill = allocated(log, 2 * 256);
  ASSERT_NE(refill, 0u) << joined(log);
  ASSERT_TRUE(capture().ok());
  EXPECT_EQ(count(takeLog(), "htodasync " + hex(refill) + " 256 stream=0x9000 ctx=0xc000 pinned"),
            1u);
  // Reserving tops up to the count asked for (one slot is free: three more).
  ASSERT_TRUE(mod->reserveCaptureSlots(4, stream(0x9000)).ok());
  log = takeLog();
  uintptr_t more = allocated(log, 3 * 256);
  ASSERT_NE(more, 0u) << joined(log);
  // Blocks with a captured slot stay; the block of slots reserved last (none captured) goes.
  { Module dropped = std::move(*mod); }
  log = takeLog();
  for (uintptr_t kept : {reserved, pool, refill})
    EXPECT_EQ(count(log, "free ctx=0xc000 " + hex(kept)), 0u) << joined(log);
  EXPECT_EQ(count(log, "free ctx=0xc000 " + hex(more)), 1u) << joined(log);
  EXPECT_EQ(count(log, "hostfree"), 1u) << joined(log);
}

TEST_F(FakeDriver, CaptureSlotsThatCannotBeAllocatedFailOnlyTheCapture) {
  auto mod = Module::fromMemory(evo::runtime::testing::tensorMapManifest(),
                                evo::runtime::testing::kTensorMapImage);
  ASSERT_TRUE(mod.ok());
  TmArgs a;
  // The pool's pinned memory is refused: the launch outside capture runs all the same (it needs
  // no capture slot), the device half of the block is given back.
  {
    ScopedEnv fail("EVO_FAKE_CUDA_HOSTALLOC_FAIL", "1");
    Status s = mod->launch(stream(0x9000), a.in, a.out, a.ws);
    ASSERT_TRUE(s.ok()) << s.message();
    // An explicit reservation reports it.
    s = mod->reserveCaptureSlots(4, stream(0x9000));
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.message(), "evo-runtime: tm: 4 capture slots for its tensor maps: cuMemAllocHost "
                           "failed: CUDA_ERROR_OUT_OF_MEMORY (fake driver)");
  }
  std::vector<std::string> log = takeLog();
  uintptr_t pool = allocated(log, kPoolBytes);
  ASSERT_NE(pool, 0u) << joined(log);
  EXPECT_EQ(count(log, "free ctx=0xc000 " + hex(pool)), 1u) << joined(log);
  EXPECT_EQ(count(log, "launch tm_k1"), 1u) << joined(log);
  // The capture that finds no slot says why.
  {
    ScopedEnv capture("EVO_FAKE_CUDA_CAPTURING", "0x9000");
    Status s = mod->launch(stream(0x9000), a.in, a.out, a.ws);
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find("before capturing (the last allocation of capture slots failed: "
                               "256 capture slots for its tensor maps: cuMemAllocHost failed: "
                               "CUDA_ERROR_OUT_OF_MEMORY (fake driver))"),
              std::string::npos)
        << s.message();
  }
  // The next launch outside capture allocates the pool, and captures work.
  ASSERT_TRUE(mod->launch(stream(0x9000), a.in, a.out, a.ws).ok());
  takeLog();
  ScopedEnv capture("EVO_FAKE_CUDA_CAPTURING", "0x9000");
  Status s = mod->launch(stream(0x9000), a.in, a.out, a.ws);
  EXPECT_TRUE(s.ok()) << s.message();
}

TEST_F(FakeDriver, AMalformedPoolSizeFailsOnlyWhatNeedsThePool) {
  auto mod = Module::fromMemory(evo::runtime::testing::tensorMapManifest(),
                                evo::runtime::testing::kTensorMapImage);
  ASSERT_TRUE(mod.ok());
  TmArgs a;
  auto capture = [&] {
    ScopedEnv capturing("EVO_FAKE_CUDA_CAPTURING", "0x9000");
    return mod->launch(stream(0x9000), a.in, a.out, a.ws);
  };
  ASSERT_TRUE(mod->reserveCaptureSlots(1, stream(0x9000)).ok());
  takeLog();
  {
    ScopedEnv bad("EVO_RUNTIME_CAPTURE_SLOTS", "lots");
    const std::string why = "evo-runtime: tm: $EVO_RUNTIME_CAPTURE_SLOTS='lots' is not a number "
                            "of slots from 1 to 1048576";
    // A launch outside capture needs no capture slot: it runs, and leaves the pool alone.
    Status s = mod->launch(stream(0x9000), a.in, a.out, a.ws);
    ASSERT_TRUE(s.ok()) << s.message();
    std::vector<std::string> log = takeLog();
    EXPECT_EQ(count(log, "launch tm_k1"), 1u) << joined(log);
    EXPECT_EQ(count(log, "hostalloc"), 0u) << joined(log);
    // What needs the pool says why it cannot go on: a reservation, and a capture (even with a
    // slot free); nothing allocated or enqueued.
    s = mod->reserveCaptureSlots(4, stream(0x9000));
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().code(), Error::Code::InvalidArgument);
    EXPECT_EQ(s.message(), why);
    s = capture();
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().code(), Error::Code::InvalidArgument);
    EXPECT_EQ(s.message(), why);
    EXPECT_EQ(takeLog(), std::vector<std::string>{});
  }
  // Mended: the slot reserved before serves the capture.
  Status s = capture();
  ASSERT_TRUE(s.ok()) << s.message();
}

TEST_F(FakeDriver, AFailedRefillWaitsBeforeItIsTriedAgain) {
  auto mod = Module::fromMemory(evo::runtime::testing::tensorMapManifest(),
                                evo::runtime::testing::kTensorMapImage);
  ASSERT_TRUE(mod.ok());
  TmArgs a;
  auto launch = [&] { return mod->launch(stream(0x9000), a.in, a.out, a.ws); };
  ScopedEnv fail("EVO_FAKE_CUDA_HOSTALLOC_FAIL", "1");
  ASSERT_TRUE(launch().ok());
  std::vector<std::string> log = takeLog();
  EXPECT_EQ(allocations(log, kPoolBytes), 1u) << joined(log);
  // The next 64 launches outside capture do not ask the driver again...
  for (int i = 0; i < 64; ++i)
    ASSERT_TRUE(launch().ok());
  log = takeLog();
  EXPECT_EQ(count(log, "launch tm_k1"), 64u);
  EXPECT_EQ(count(log, "alloc"), 0u) << joined(log);
  EXPECT_EQ(count(log, "free"), 0u) << joined(log);
  // ...the one after them does.
  ASSERT_TRUE(launch().ok());
  EXPECT_EQ(allocations(takeLog(), kPoolBytes), 1u);
  ASSERT_TRUE(launch().ok());
  EXPECT_EQ(allocations(takeLog(), kPoolBytes), 0u);
  // A capture that finds no slot ends the wait: the next launch outside capture tries again.
  {
    ScopedEnv capture("EVO_FAKE_CUDA_CAPTURING", "0x9000");
    Status s = launch();
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find("(the last allocation of capture slots failed: 256 capture slots "
                               "for its tensor maps: cuMemAllocHost failed: "
                               "CUDA_ERROR_OUT_OF_MEMORY (fake driver))"),
              std::string::npos)
        << s.message();
  }
  ASSERT_TRUE(launch().ok());
  EXPECT_EQ(allocations(takeLog(), kPoolBytes), 1u);
}

TEST_F(FakeDriver, AModuleMovedOverAnotherFreesWhatTheOtherHeld) {
  auto mod = Module::fromMemory(evo::runtime::testing::tensorMapManifest(),
                                evo::runtime::testing::kTensorMapImage);
  ASSERT_TRUE(mod.ok());
  TmArgs a;
  ASSERT_TRUE(mod->launch(stream(0x9000), a.in, a.out, a.ws).ok());
  std::vector<std::string> log = takeLog();
  uintptr_t maps = allocated(log, 256), pool = allocated(log, kPoolBytes),
            poolHost = hostAllocated(log, kPoolBytes);
  ASSERT_NE(pool, 0u) << joined(log);
  auto other = Module::fromMemory(manifest(), kImage);
  ASSERT_TRUE(other.ok());
  *mod = std::move(*other);
  log = takeLog();
  EXPECT_EQ(count(log, "free ctx=0xc000 " + hex(maps)), 1u) << joined(log);
  EXPECT_EQ(count(log, "free ctx=0xc000 " + hex(pool)), 1u) << joined(log);
  EXPECT_EQ(count(log, "hostfree " + hex(poolHost)), 1u) << joined(log);
  EXPECT_EQ(count(log, "unload ctx=0xc000"), 1u) << joined(log);
}

TEST_F(FakeDriver, ReservingCaptureSlotsWithoutTensorMapsDoesNothing) {
  auto mod = Module::fromMemory(manifest(), kImage);
  ASSERT_TRUE(mod.ok());
  ASSERT_TRUE(mod->reserveCaptureSlots(8, stream(0x5000)).ok());
  EXPECT_EQ(takeLog(), std::vector<std::string>{});
}

TEST_F(FakeDriver, TensorMapEncodeFailuresAreErrorValues) {
  auto mod = Module::fromMemory(evo::runtime::testing::tensorMapManifest(),
                                evo::runtime::testing::kTensorMapImage);
  ASSERT_TRUE(mod.ok());
  TmArgs a;
  setenv("EVO_FAKE_CUDA_TMAP_FAIL", "1", 1);
  Status s = mod->launch(stream(0x7000), a.in, a.out, a.ws);
  unsetenv("EVO_FAKE_CUDA_TMAP_FAIL");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code(), Error::Code::Cuda);
  EXPECT_NE(s.message().find("evo-runtime: tm: tensor map 'map_a' over 'a' cannot be encoded: "
                             "cuTensorMapEncodeTiled failed: CUDA_ERROR_FAKE"),
            std::string::npos)
      << s.message();
  std::vector<std::string> log = takeLog();
  EXPECT_EQ(count(log, "htod"), 0u) << joined(log);
  EXPECT_EQ(count(log, "launch"), 0u) << joined(log);
  // Nothing half-made is reused: the next launch encodes and uploads both maps.
  ASSERT_TRUE(mod->launch(stream(0x7000), a.in, a.out, a.ws).ok());
  log = takeLog();
  EXPECT_EQ(count(log, "tensormap"), 2u) << joined(log);
  EXPECT_EQ(count(log, "htodasync"), 2u) << joined(log);
  EXPECT_EQ(count(log, "alloc"), 0u) << joined(log);
}

TEST_F(FakeDriver, TensorMapsWithThreads) {
  auto mod = Module::fromMemory(evo::runtime::testing::tensorMapManifest(),
                                evo::runtime::testing::kTensorMapImage);
  ASSERT_TRUE(mod.ok());
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      TmArgs a;
      for (int i = 0; i < 20; ++i) {
        a.in[0].data = at(0x100000 + 0x10000 * (i % 2)); // alternating sources: re-encoded
        failures[t] += !mod->launch(stream(0x1000 * (t + 1)), a.in, a.out, a.ws).ok();
      }
    });
  for (std::thread &t : threads)
    t.join();
  for (int f : failures)
    EXPECT_EQ(f, 0);
  std::vector<std::string> log = takeLog();
  EXPECT_EQ(count(log, "launch tm_k1"), 4u * 20u);
  EXPECT_EQ(allocations(log, 256), 4u) << joined(log);        // one slot per stream
  EXPECT_EQ(allocations(log, kPoolBytes), 1u) << joined(log); // one capture pool per context
  EXPECT_EQ(count(log, "SYNC"), 0u);
  // Every launch received the maps its own stream last uploaded for its own source.
  std::map<std::string, std::string> held; // map address -> the source it encodes
  std::map<std::string, std::string> streamOf;
  size_t checked = 0;
  for (const std::string &l : log) {
    char p[64], first[64];
    if (std::sscanf(l.c_str(), "htod128 %63s first=%63s", p, first) == 2)
      held[p] = first;
    size_t at = l.find("launch tm_k1 ");
    if (at != 0)
      continue;
    std::string args = l.substr(l.find("args=") + 5);
    std::string src = args.substr(0, args.find(','));
    std::string map = args.substr(src.size() + 1, args.find(',', src.size() + 1) - src.size() - 1);
    EXPECT_EQ(held[map], src) << l;
    ++checked;
  }
  EXPECT_EQ(checked, 80u);
}
