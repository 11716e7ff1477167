"""EvoModule's launch path without a GPU: a stand-in torch (below) and the stand-in driver
runtime/unittests/FakeCuda.c ($EVO_FAKE_CUDA, loaded through $EVO_LIBCUDA), which logs every call.
Checks the pointers, streams, contexts, zeroing and allocations of a call, and that nothing
synchronizes (issue 14: the old loader synchronized whenever a plan had scratch buffers).

    EVO_FAKE_CUDA=build/lib/libevo-fake-cuda.so python3 python/tests/test_fake_driver.py
"""

import contextlib
import hashlib
import json
import os
import re
import shutil
import struct
import sys
import tempfile
import threading
import types
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

FAKE = os.environ.get("EVO_FAKE_CUDA", "")
LOG = os.path.join(tempfile.gettempdir(), f"evo-fake-cuda-py-{os.getpid()}.log")


# A stand-in for the parts of torch that EvoModule uses --------------------------------------
def make_fake_torch():
    torch = types.ModuleType("torch")
    sizes = {}

    class dtype:
        def __init__(self, name, size):
            self.name = name
            sizes[name] = size

        def __str__(self):
            return "torch." + self.name
        __repr__ = __str__

    for name, size in [("float32", 4), ("float16", 2), ("bfloat16", 2), ("float64", 8),
                       ("int8", 1), ("int16", 2), ("int32", 4), ("int64", 8), ("uint8", 1)]:
        setattr(torch, name, dtype(name, size))

    class device:
        def __init__(self, kind, index=None):
            if isinstance(kind, device):
                kind, index = kind.type, kind.index
            if ":" in kind:
                kind, index = kind.split(":")[0], int(kind.split(":")[1])
            self.type = kind
            self.index = index if index is not None or kind != "cuda" else torch.cuda.current_device()

        def __str__(self):
            return self.type if self.index is None else f"{self.type}:{self.index}"

    class Tensor:
        def __init__(self, shape, dt, dev, ptr, contiguous=True):
            self.shape, self.dtype, self.device = tuple(shape), dt, dev
            self._ptr, self._contiguous = ptr, contiguous

        def data_ptr(self):
            return self._ptr

        def is_contiguous(self):
            return self._contiguous

        @property
        def is_cuda(self):
            return self.device.type == "cuda"

        def numel(self):
            n = 1
            for d in self.shape:
                n *= d
            return n

        def element_size(self):
            return sizes[self.dtype.name]

        def fill_(self, value):
            return self

        def item(self):  # a 0-d tensor's value: set `value` on it
            return self.value

    torch.dtype, torch.device, torch.Tensor = dtype, device, Tensor
    torch.allocations = []  # (address, bytes, stream handle current on its device)
    state = {"next": 0x10000000, "device": 0, "capturing": False}
    local = threading.local()

    def empty(shape, dtype=None, device=None):
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        dev = torch.device(device if device is not None else "cuda")
        t = Tensor(shape, dtype or torch.float32, dev, state["next"])
        nbytes = t.numel() * t.element_size()
        state["next"] += (nbytes + 511) // 512 * 512 + 512
        torch.allocations.append((t.data_ptr(), nbytes, torch.cuda.current_stream(dev.index).cuda_stream))
        return t
    torch.empty = empty

    cuda = types.ModuleType("torch.cuda")

    class Stream:
        def __init__(self, handle, dev):
            self.cuda_stream, self.device = handle, torch.device("cuda", dev)

    class ExternalStream(Stream):
        def __init__(self, handle, device=None):
            super().__init__(handle, torch.device(device).index if device is not None else state["device"])

    def current_stream(dev=None):
        dev = state["device"] if dev is None else dev
        streams = local.__dict__.setdefault("streams", {})
        # Device d's default stream: a handle the fake driver maps to device d.
        return streams.get(dev) or Stream((dev << 20) + 0x10, dev)

    @contextlib.contextmanager
    def stream(s):
        streams = local.__dict__.setdefault("streams", {})
        dev = s.device.index
        old = streams.get(dev)
        streams[dev] = s
        try:
            yield s
        finally:
            if old is None:
                del streams[dev]
            else:
                streams[dev] = old

    cuda.Stream, cuda.ExternalStream = Stream, ExternalStream
    cuda.current_stream, cuda.stream = current_stream, stream
    cuda.is_available = lambda: True
    cuda.current_device = lambda: state["device"]
    cuda.is_current_stream_capturing = lambda: state["capturing"]
    torch.cuda, torch.state = cuda, state
    return torch


PTX = (b"//\n.version 8.0\n.target sm_90\n"
       b".visible .entry mm_relu_k0(\n.param .u64 a,\n.param .u64 b,\n.param .u64 c,\n.param .u64 d\n)\n{}\n"
       b".visible .entry mm_relu_k1(\n.param .u64 a,\n.param .u64 b\n)\n{}\n")


def manifest():
    def buf(i, name, role, shape, zero=False):
        n = 4
        for d in shape:
            n *= d
        return {"index": i, "name": name, "role": role, "dtype": "f32", "shape": shape,
                "bytes": n, "zero_init": zero}

    def par(shape):
        return {"dtype": "f32", "shape": shape}
    return {
        "format": "evo-manifest/1", "name": "mm_relu",
        "ptx": {"file": "mm_relu.ptx", "bytes": len(PTX), "sha256": hashlib.sha256(PTX).hexdigest()},
        "buffers": [buf(0, "arg0", "input", [256, 64]), buf(1, "arg1", "input", [64, 128]),
                    buf(2, "result0", "output", [256, 128]), buf(3, "tmp0", "scratch", [256, 128]),
                    buf(4, "tmp1", "scratch", [3], True)],
        "kernels": [{"name": "mm_relu_k0", "params": [par([256, 64]), par([64, 128]),
                                                      par([256, 128]), par([3])]},
                    {"name": "mm_relu_k1", "params": [par([256, 128]), par([256, 128])]}],
        "launches": [{"kernel": "mm_relu_k0", "grid": [128, 1, 1], "block": [256, 1, 1],
                      "dynamic_shared_memory": 0, "args": [0, 1, 3, 4]},
                     {"kernel": "mm_relu_k1", "grid": [64, 2, 1], "block": [256, 1, 1],
                      "dynamic_shared_memory": 0, "args": [3, 2]}],
    }


def take_log():
    try:
        with open(LOG) as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        lines = []
    with contextlib.suppress(FileNotFoundError):
        os.remove(LOG)
    return lines


class FakeDriverBase(unittest.TestCase):
    """The stand-in driver and torch, and mm_relu's files in a temporary directory."""

    @classmethod
    def setUpClass(cls):
        os.environ.update(EVO_LIBCUDA=FAKE, EVO_FAKE_CUDA_LOG=LOG, EVO_FAKE_CUDA_DEVICES="2")
        cls.torch = make_fake_torch()
        sys.modules["torch"] = cls.torch
        import evo_runtime.module
        cls.EvoModule = evo_runtime.module.EvoModule
        cls.dir = tempfile.mkdtemp()
        with open(os.path.join(cls.dir, "mm_relu.json"), "w") as f:
            json.dump(manifest(), f)
        with open(os.path.join(cls.dir, "mm_relu.ptx"), "wb") as f:
            f.write(PTX)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)
        del sys.modules["torch"]


@unittest.skipUnless(FAKE and os.path.exists(FAKE), "set $EVO_FAKE_CUDA to FakeCuda.c's library")
class FakeDriverTest(FakeDriverBase):
    def setUp(self):
        take_log()
        self.torch.allocations.clear()
        self.torch.state.update(device=0, capturing=False)
        self.mod = self.EvoModule(os.path.join(self.dir, "mm_relu.json"))

    def inputs(self, dev=0):
        t = self.torch
        return (t.empty((256, 64), dtype=t.float32, device=f"cuda:{dev}"),
                t.empty((64, 128), dtype=t.float32, device=f"cuda:{dev}"))

    def test_launches_pointers_zeroing_and_no_sync(self):
        self.assertEqual(take_log(), ["load ctx=0xc000"])  # loaded on the current device at once
        a, b = self.inputs()
        self.torch.allocations.clear()
        (y,) = self.mod(a, b)
        log = take_log()
        (out, _, s_out), (ws, ws_bytes, s_ws) = self.torch.allocations
        self.assertEqual((out, ws_bytes), (y.data_ptr(), 131072 + 256))
        self.assertEqual(s_out, 0x10)
        self.assertEqual(s_ws, 0x10)
        self.assertEqual(log, [
            f"memset {ws + 131072:#x} 12 value=0 stream=0x10 ctx=0xc000",
            f"launch mm_relu_k0 grid=128,1,1 block=256,1,1 smem=0 stream=0x10 ctx=0xc000 "
            f"args={a.data_ptr():#x},{b.data_ptr():#x},{ws:#x},{ws + 131072:#x}",
            f"launch mm_relu_k1 grid=64,2,1 block=256,1,1 smem=0 stream=0x10 ctx=0xc000 "
            f"args={ws:#x},{y.data_ptr():#x}"])

    def test_stream_argument(self):
        t = self.torch
        a, b = self.inputs()
        take_log()
        t.allocations.clear()
        s = t.cuda.Stream(0x7000, 0)
        (y,) = self.mod(a, b, stream=s)
        log = take_log()
        self.assertTrue(all("stream=0x7000" in line for line in log), log)
        self.assertFalse(any(line.startswith("SYNC") for line in log))
        # Outputs and the workspace come from the caching allocator on that stream.
        self.assertEqual([st for _, _, st in t.allocations], [0x7000, 0x7000])
        self.assertEqual(t.cuda.current_stream(0).cuda_stream, 0x10)  # restored
        # The current stream, when it is s.
        with t.cuda.stream(s):
            self.mod(a, b)
        self.assertTrue(all("stream=0x7000" in line for line in take_log()))
        # A raw handle: checked to belong to the tensors' device.
        self.mod(a, b, stream=0x7000)
        self.assertTrue(all("stream=0x7000" in line for line in take_log()))
        with self.assertRaisesRegex(ValueError, "does not belong to cuda:0"):
            self.mod(a, b, stream=0x100020)
        with self.assertRaisesRegex(ValueError, "stream is on cuda:1"):
            self.mod(a, b, stream=t.cuda.Stream(0x100030, 1))

    def test_other_device_and_given_buffers(self):
        t = self.torch
        a, b = self.inputs(dev=1)
        take_log()
        y = t.empty((256, 128), dtype=t.float32, device="cuda:1")
        w = t.empty(1 << 20, dtype=t.uint8, device="cuda:1")
        (y2,) = self.mod(a, b, outputs=[y], workspace=w)
        self.assertIs(y2, y)
        log = take_log()
        self.assertEqual(log[0], "load ctx=0xc001")
        self.assertIn(f"launch mm_relu_k1 grid=64,2,1 block=256,1,1 smem=0 stream=0x100010 ctx=0xc001 "
                      f"args={w.data_ptr():#x},{y.data_ptr():#x}", log)
        # Loaded once per device.
        self.mod(a, b)
        self.assertEqual(sum(line.startswith("load") for line in take_log()), 0)

    def test_refused(self):
        t = self.torch
        a, b = self.inputs()
        cases = [
            ((b, a), {}, r"input 0 \('arg0'\) needs a contiguous CUDA tensor f32\[256, 64\], got f32\[64, 128\]"),
            ((a,), {}, "takes 2 inputs, got 1"),
            ((t.Tensor((256, 64), t.float32, t.device("cuda:0"), a.data_ptr() + 4), b), {},
             "not 16-byte aligned"),
            ((t.Tensor((256, 64), t.float32, t.device("cuda:0"), a.data_ptr(), False), b), {},
             "not contiguous"),
            ((t.Tensor((256, 64), t.float32, t.device("cpu"), 0), b), {}, "on cpu"),
            ((a, t.empty((64, 128), dtype=t.float32, device="cuda:1")), {}, "is on cuda:1"),
            ((a, b), {"outputs": [t.Tensor((256, 128), t.float32, t.device("cuda:0"), a.data_ptr())]},
             "overlap"),
            ((a, b), {"workspace": t.empty(100, dtype=t.uint8)}, "at least 131328 bytes"),
        ]
        take_log()
        for args, kwargs, expect in cases:
            with self.subTest(expect):
                with self.assertRaisesRegex(ValueError, expect):
                    self.mod(*args, **kwargs)
        self.assertEqual([line for line in take_log() if line.startswith("launch")], [])

    def test_no_loading_during_capture(self):
        a, b = self.inputs(dev=1)
        self.torch.state["capturing"] = True
        with self.assertRaisesRegex(RuntimeError, "call prepare\\(device\\) before capturing"):
            self.mod(a, b)
        self.torch.state["capturing"] = False
        self.mod.prepare(1)
        self.torch.state["capturing"] = True
        self.mod(a, b)  # loaded ahead: fine while capturing

    def test_threads(self):
        a, b = self.inputs()
        take_log()
        errors = []

        def work():
            try:
                for _ in range(20):
                    self.mod(a, b)
            except Exception as e:
                errors.append(e)
        threads = [threading.Thread(target=work) for _ in range(4)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        self.assertEqual(errors, [])
        log = take_log()
        self.assertEqual(sum(line.startswith("launch") for line in log), 4 * 20 * 2)
        self.assertFalse(any(line.startswith(("SYNC", "load")) for line in log))


# Tensor maps ---------------------------------------------------------------------------------
TM_PTX = (b"//\n.version 8.0\n.target sm_90a\n"
          b".visible .entry tm_k0(\n.param .u64 a,\n.param .u64 b\n)\n{}\n"
          b".visible .entry tm_k1(\n.param .u64 a,\n.param .u64 b,\n.param .u64 c,\n.param .u64 d\n)\n{}\n")


def tm_manifest():
    """A matmul-shaped plan whose second kernel takes two tensor maps: one over input a, one over
    the scratch buffer bt that the first kernel writes (runtime/unittests/TensorMapManifest.h)."""
    def buf(i, name, role, dtype, shape, nbytes, tmap=None):
        b = {"index": i, "name": name, "role": role, "dtype": dtype, "shape": shape, "bytes": nbytes}
        if tmap:
            b["tensor_map"] = tmap
        return b
    return {
        "format": "evo-manifest/1", "name": "tm",
        "ptx": {"file": "tm.ptx", "bytes": len(TM_PTX), "sha256": hashlib.sha256(TM_PTX).hexdigest()},
        "buffers": [
            buf(0, "a", "input", "f16", [256, 64], 32768),
            buf(1, "b", "input", "f16", [64, 128], 16384),
            buf(2, "c", "output", "f32", [256, 128], 131072),
            buf(3, "map_a", "tensor_map", "i8", [128], 128,
                {"source": 0, "element_type": "f16", "dims": [64, 256], "strides": [128],
                 "box": [64, 128], "swizzle": 128}),
            buf(4, "bt", "scratch", "f16", [64, 128], 16384),
            buf(5, "map_bt", "tensor_map", "i8", [128], 128,
                {"source": 4, "element_type": "f16", "dims": [128, 64], "strides": [256],
                 "box": [32, 64], "swizzle": 64})],
        "kernels": [
            {"name": "tm_k0", "params": [{"dtype": "f16", "shape": [64, 128]}] * 2},
            {"name": "tm_k1", "params": [{"dtype": "f16", "shape": [256, 64]},
                                         {"dtype": "i8", "shape": [128]}, {"dtype": "i8", "shape": [128]},
                                         {"dtype": "f32", "shape": [256, 128]}]}],
        "launches": [
            {"kernel": "tm_k0", "grid": [4, 1, 1], "block": [128, 1, 1], "dynamic_shared_memory": 0,
             "args": [1, 4]},
            {"kernel": "tm_k1", "grid": [2, 1, 1], "block": [384, 1, 1],
             "dynamic_shared_memory": 100000, "args": [0, 3, 5, 2]}],
    }


POOL_BYTES = 256 * 256  # the default capture pool of tm: 256 slots of two 128-byte maps
ENCODE_A = ("tensormap dtype=6 rank=2 addr={:#x} dims=64,256 strides=128 box=64,128 estrides=1,1 "
            "interleave=0 swizzle=3 l2=3 oob=0")
ENCODE_BT = ("tensormap dtype=6 rank=2 addr={:#x} dims=128,64 strides=256 box=32,64 estrides=1,1 "
             "interleave=0 swizzle=2 l2=3 oob=0")


@unittest.skipUnless(FAKE and os.path.exists(FAKE), "set $EVO_FAKE_CUDA to FakeCuda.c's library")
class FakeDriverTensorMapTest(FakeDriverBase):
    """EvoModule with tensor maps: encoded over the call's buffers with the contract's arguments,
    copied on the call's stream into memory of the loaded module, reused for the same buffers;
    under capture copied from pinned slots of their own (the capture pool); refusals and driver
    errors."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        with open(os.path.join(cls.dir, "tm.json"), "w") as f:
            json.dump(tm_manifest(), f)
        with open(os.path.join(cls.dir, "tm.ptx"), "wb") as f:
            f.write(TM_PTX)

    def setUp(self):
        take_log()
        self.torch.allocations.clear()
        self.torch.state.update(device=0, capturing=False)
        self.mod = self.EvoModule(os.path.join(self.dir, "tm.json"))

    def tearDown(self):
        # Freed now, not whenever the garbage collector gets to it (in a later test's log).
        if hasattr(self, "mod"):
            self.mod.close()

    def tm_inputs(self):
        t = self.torch
        return (t.empty((256, 64), dtype=t.float16), t.empty((64, 128), dtype=t.float16))

    @staticmethod
    def allocated(log, nbytes=256):
        """Addresses of the driver allocations of `nbytes` (256: a stream's two maps)."""
        return [int(line.split()[2], 16) for line in log
                if line.startswith("alloc ") and line.endswith(f" {nbytes}")]

    @staticmethod
    def host_allocated(log, nbytes):
        """Addresses of the pinned host allocations of `nbytes`."""
        return [int(line.split()[1], 16) for line in log
                if line.startswith("hostalloc ") and line.endswith(f" {nbytes}")]

    def capture(self, *args, **kwargs):
        """A call while the fake driver captures its stream (the current one, 0x10)."""
        os.environ["EVO_FAKE_CUDA_CAPTURING"] = "0x10"
        try:
            return self.mod(*args, **kwargs)
        finally:
            del os.environ["EVO_FAKE_CUDA_CAPTURING"]

    def test_encoded_over_the_callers_buffers_on_its_stream(self):
        t = self.torch
        self.assertEqual(take_log(), ["load ctx=0xc000", "attr tm_k1 8=100000"])
        a, b = self.tm_inputs()
        t.allocations.clear()
        s = t.cuda.Stream(0x7000, 0)
        (c,) = self.mod(a, b, stream=s)
        log = take_log()
        (maps,) = self.allocated(log)
        self.assertEqual(maps % 64, 0)
        # The capture pool first (256 slots of two maps: device and pinned memory), then the
        # stream's own slot.
        (pool,) = self.allocated(log, POOL_BYTES)
        (pool_host,) = self.host_allocated(log, POOL_BYTES)
        self.assertEqual(log[:3], [f"alloc ctx=0xc000 {pool:#x} {POOL_BYTES}",
                                   f"hostalloc {pool_host:#x} {POOL_BYTES}",
                                   f"alloc ctx=0xc000 {maps:#x} 256"])
        # Outputs and workspace from the caching allocator; the maps are not caller-visible.
        (_, _, _), (ws, ws_bytes, _) = t.allocations
        self.assertEqual(ws_bytes, 16384)
        self.assertEqual(log[3:], [
            ENCODE_A.format(a.data_ptr()),
            ENCODE_BT.format(ws),
            f"htodasync {maps:#x} 128 stream=0x7000 ctx=0xc000",
            f"htod128 {maps:#x} first={a.data_ptr():#x}",
            f"htodasync {maps + 128:#x} 128 stream=0x7000 ctx=0xc000",
            f"htod128 {maps + 128:#x} first={ws:#x}",
            f"launch tm_k0 grid=4,1,1 block=128,1,1 smem=0 stream=0x7000 ctx=0xc000 "
            f"args={b.data_ptr():#x},{ws:#x}",
            f"launch tm_k1 grid=2,1,1 block=384,1,1 smem=100000 stream=0x7000 ctx=0xc000 "
            f"args={a.data_ptr():#x},{maps:#x},{maps + 128:#x},{c.data_ptr():#x}"])
        # Same buffers (given workspace, so bt stays put), same stream: nothing re-encoded.
        w = t.empty(16384, dtype=t.uint8)
        self.mod(a, b, stream=s, workspace=w)
        log = take_log()
        self.assertEqual(sum(line.startswith("tensormap") for line in log), 2)  # bt moved
        self.mod(a, b, stream=s, workspace=w)
        log = take_log()
        self.assertEqual([line.split()[0] for line in log], ["launch", "launch"], log)
        # The current stream (0x10) has maps of its own.
        self.mod(a, b, workspace=w)
        log = take_log()
        (other,) = self.allocated(log)
        self.assertNotEqual(other, maps)
        self.assertIn(f"htodasync {other:#x} 128 stream=0x10 ctx=0xc000", log)
        self.assertFalse(any(line.startswith("SYNC") for line in log))

    def test_graph_capture_gets_pinned_slots_of_its_own(self):
        t = self.torch
        a, b = self.tm_inputs()
        w = t.empty(16384, dtype=t.uint8)
        c = t.empty((256, 128), dtype=t.float32)
        take_log()
        # Capturing before any call outside capture: no capture slot exists and none can be
        # allocated now; refused with the way out, nothing allocated or enqueued.
        with self.assertRaisesRegex(
                RuntimeError, r"none is allocated yet \(they cannot be allocated during CUDA graph "
                r"capture\): call it once outside capture first, or reserve_capture_slots\(n\) "
                "before capturing"):
            self.capture(a, b, workspace=w, outputs=[c])
        self.assertEqual(take_log(), [])
        # A call outside capture allocates the pool (and the stream's own slot).
        self.mod(a, b, workspace=w, outputs=[c])
        log = take_log()
        (eager,) = self.allocated(log)
        (pool,) = self.allocated(log, POOL_BYTES)
        self.assertEqual(len(self.host_allocated(log, POOL_BYTES)), 1, log)

        def captured(slot):
            # Encoded into the slot's pinned bytes, one copy from them on the capturing stream (a
            # memcpy node), the launches given that slot; nothing allocated.
            self.capture(a, b, workspace=w, outputs=[c])
            self.assertEqual(take_log(), [
                ENCODE_A.format(a.data_ptr()),
                ENCODE_BT.format(w.data_ptr()),
                f"htodasync {slot:#x} 256 stream=0x10 ctx=0xc000 pinned",
                f"htod128 {slot:#x} first={a.data_ptr():#x}",
                f"htod128 {slot + 128:#x} first={w.data_ptr():#x}",
                f"launch tm_k0 grid=4,1,1 block=128,1,1 smem=0 stream=0x10 ctx=0xc000 "
                f"args={b.data_ptr():#x},{w.data_ptr():#x}",
                f"launch tm_k1 grid=2,1,1 block=384,1,1 smem=100000 stream=0x10 ctx=0xc000 "
                f"args={a.data_ptr():#x},{slot:#x},{slot + 128:#x},{c.data_ptr():#x}"])
        captured(pool)
        # A second capture (another graph, or the same one) gets the next slot: the first one's
        # device bytes exist only when its graph replays.
        captured(pool + 256)
        # Outside capture again: the stream's own slot, never a captured one.
        self.mod(a, b, workspace=w, outputs=[c])
        log = take_log()
        self.assertEqual([line.split()[0] for line in log], ["launch", "launch"], log)
        self.assertIn(f"args={a.data_ptr():#x},{eager:#x},", log[1])
        a2, _ = self.tm_inputs()
        self.mod(a2, b, workspace=w, outputs=[c])
        log = take_log()
        self.assertEqual([line for line in log if line.startswith("htodasync")], [
            f"htodasync {eager:#x} 128 stream=0x10 ctx=0xc000",
            f"htodasync {eager + 128:#x} 128 stream=0x10 ctx=0xc000"])
        self.assertFalse(any(line.startswith("alloc") for line in log), log)

    def test_capture_slots_reserved_refilled_and_exhausted(self):
        t = self.torch
        a, b = self.tm_inputs()
        w = t.empty(16384, dtype=t.uint8)
        take_log()
        # Reserved ahead, without a call: a capture can come first.
        self.assertIs(self.mod.reserve_capture_slots(1), self.mod)
        log = take_log()
        (reserved,) = self.allocated(log)  # one slot of two maps
        self.assertEqual(len(self.host_allocated(log, 256)), 1, log)
        self.capture(a, b, workspace=w)
        log = take_log()
        self.assertIn(f"htodasync {reserved:#x} 256 stream=0x10 ctx=0xc000 pinned", log)
        self.assertFalse(any(line.startswith(("alloc", "ALLOC-IN-CAPTURE")) for line in log), log)
        # A pool of 2 ($EVO_RUNTIME_CAPTURE_SLOTS): filled by the next call outside capture.
        os.environ["EVO_RUNTIME_CAPTURE_SLOTS"] = "2"
        self.addCleanup(os.environ.pop, "EVO_RUNTIME_CAPTURE_SLOTS", None)
        self.mod(a, b, workspace=w)
        (pool,) = self.allocated(take_log(), 2 * 256)
        self.capture(a, b, workspace=w)
        self.capture(a, b, workspace=w)
        log = take_log()
        self.assertIn(f"htodasync {pool:#x} 256 stream=0x10 ctx=0xc000 pinned", log)
        self.assertIn(f"htodasync {pool + 256:#x} 256 stream=0x10 ctx=0xc000 pinned", log)
        # None left: refused, naming the cause and the ways out; nothing allocated or enqueued.
        with self.assertRaises(RuntimeError) as cm:
            self.capture(a, b, workspace=w)
        self.assertEqual(str(cm.exception),
                         "tm: no capture slot is left for its tensor maps: the 3 slots of this "
                         "device are held by earlier captured calls (one each, for good); reserve "
                         "more before capturing (reserve_capture_slots(n), or "
                         "$EVO_RUNTIME_CAPTURE_SLOTS above 256: the pool is refilled to that size "
                         "by calls outside capture)")
        self.assertEqual(take_log(), [])
        # Refilled outside capture, then a capture works again.
        self.mod(a, b, workspace=w)
        (refill,) = self.allocated(take_log(), 2 * 256)
        self.capture(a, b, workspace=w)
        self.assertIn(f"htodasync {refill:#x} 256 stream=0x10 ctx=0xc000 pinned", take_log())
        # Reserving tops up to the count asked for (one slot is free: three more).
        self.mod.reserve_capture_slots(4)
        self.assertEqual(len(self.allocated(take_log(), 3 * 256)), 1)
        # Without tensor maps there is nothing to reserve.
        mm = self.EvoModule(os.path.join(self.dir, "mm_relu.json"))
        take_log()
        mm.reserve_capture_slots(8)
        self.assertEqual(take_log(), [])

    def test_capture_slots_that_cannot_be_allocated_fail_only_the_capture(self):
        from evo_runtime.driver import CudaError
        t = self.torch
        a, b = self.tm_inputs()
        w = t.empty(16384, dtype=t.uint8)
        take_log()
        # The pool's pinned memory is refused: the call outside capture runs all the same (it
        # needs no capture slot), the device half of the block is given back.
        os.environ["EVO_FAKE_CUDA_HOSTALLOC_FAIL"] = "1"
        try:
            self.mod(a, b, workspace=w)
            # An explicit reservation reports it.
            with self.assertRaises(CudaError) as cm:
                self.mod.reserve_capture_slots(4)
            self.assertEqual(str(cm.exception), "tm: 4 capture slots for its tensor maps: "
                             "cuMemAllocHost failed: CUDA_ERROR_OUT_OF_MEMORY (fake driver)")
        finally:
            del os.environ["EVO_FAKE_CUDA_HOSTALLOC_FAIL"]
        log = take_log()
        (pool,) = self.allocated(log, POOL_BYTES)
        self.assertIn(f"free ctx=0xc000 {pool:#x}", log)
        self.assertEqual(sum(line.startswith("launch tm_k1") for line in log), 1, log)
        # The capture that finds no slot says why.
        with self.assertRaisesRegex(RuntimeError, re.escape(
                "before capturing (the last allocation of capture slots failed: 256 capture "
                "slots for its tensor maps: cuMemAllocHost failed: CUDA_ERROR_OUT_OF_MEMORY "
                "(fake driver))")):
            self.capture(a, b, workspace=w)
        # The next call outside capture allocates the pool, and captures work.
        self.mod(a, b, workspace=w)
        self.capture(a, b, workspace=w)

    def test_malformed_pool_size_fails_only_what_needs_the_pool(self):
        t = self.torch
        a, b = self.tm_inputs()
        w = t.empty(16384, dtype=t.uint8)
        self.mod.reserve_capture_slots(1)
        take_log()
        why = ("tm: $EVO_RUNTIME_CAPTURE_SLOTS='lots' is not a number of slots from 1 to "
               "1048576")
        os.environ["EVO_RUNTIME_CAPTURE_SLOTS"] = "lots"
        try:
            # A call outside capture needs no capture slot: it runs, and leaves the pool alone.
            self.mod(a, b, workspace=w)
            log = take_log()
            self.assertEqual(sum(line.startswith("launch tm_k1") for line in log), 1, log)
            self.assertFalse(any(line.startswith("hostalloc") for line in log), log)
            # What needs the pool says why it cannot go on: a reservation, and a capture (even
            # with a slot free); nothing allocated or enqueued.
            with self.assertRaises(ValueError) as cm:
                self.mod.reserve_capture_slots(4)
            self.assertEqual(str(cm.exception), why)
            with self.assertRaises(ValueError) as cm:
                self.capture(a, b, workspace=w)
            self.assertEqual(str(cm.exception), why)
            self.assertEqual(take_log(), [])
        finally:
            del os.environ["EVO_RUNTIME_CAPTURE_SLOTS"]
        # Mended: the slot reserved before serves the capture.
        self.capture(a, b, workspace=w)

    def test_failed_refill_waits_before_it_is_tried_again(self):
        t = self.torch
        a, b = self.tm_inputs()
        w = t.empty(16384, dtype=t.uint8)
        take_log()
        os.environ["EVO_FAKE_CUDA_HOSTALLOC_FAIL"] = "1"
        self.addCleanup(os.environ.pop, "EVO_FAKE_CUDA_HOSTALLOC_FAIL", None)
        self.mod(a, b, workspace=w)
        self.assertEqual(len(self.allocated(take_log(), POOL_BYTES)), 1)
        # The next 64 calls outside capture do not ask the driver again...
        for _ in range(64):
            self.mod(a, b, workspace=w)
        log = take_log()
        self.assertEqual(sum(line.startswith("launch tm_k1") for line in log), 64)
        self.assertFalse(any(line.startswith(("alloc", "free")) for line in log), log)
        # ...the one after them does.
        self.mod(a, b, workspace=w)
        self.assertEqual(len(self.allocated(take_log(), POOL_BYTES)), 1)
        self.mod(a, b, workspace=w)
        self.assertEqual(len(self.allocated(take_log(), POOL_BYTES)), 0)
        # A capture that finds no slot ends the wait: the next call outside capture tries again.
        with self.assertRaisesRegex(RuntimeError, re.escape(
                "(the last allocation of capture slots failed: 256 capture slots for its tensor "
                "maps: cuMemAllocHost failed: CUDA_ERROR_OUT_OF_MEMORY (fake driver))")):
            self.capture(a, b, workspace=w)
        self.mod(a, b, workspace=w)
        self.assertEqual(len(self.allocated(take_log(), POOL_BYTES)), 1)

    def test_close_frees_the_capture_slots_no_graph_holds(self):
        import gc
        t = self.torch
        a, b = self.tm_inputs()
        w = t.empty(16384, dtype=t.uint8)
        self.mod.reserve_capture_slots(1)
        log = take_log()
        (held,) = self.allocated(log)
        (held_host,) = self.host_allocated(log, 256)
        self.capture(a, b, workspace=w)  # the reserved slot is the graph's now
        self.mod(a, b, workspace=w)
        log = take_log()
        (pool,) = self.allocated(log, POOL_BYTES)
        (pool_host,) = self.host_allocated(log, POOL_BYTES)
        # Not while the current stream is being captured (a cuMemFree would invalidate it).
        self.torch.state["capturing"] = True
        self.mod.close()
        self.torch.state["capturing"] = False
        self.assertEqual(take_log(), [])
        # close(): the pool no capture took is freed (device and pinned memory); the block with
        # the captured slot stays, a replay of its graph copies from it.
        self.mod.close()
        log = take_log()
        self.assertEqual(sorted(log), sorted([f"free ctx=0xc000 {pool:#x}",
                                              f"hostfree {pool_host:#x}"]))
        # The module still works: the next call outside capture allocates a new pool.
        self.mod(a, b, workspace=w)
        (again,) = self.allocated(take_log(), POOL_BYTES)
        # Garbage collection does the same.
        del self.mod
        gc.collect()
        log = take_log()
        self.assertIn(f"free ctx=0xc000 {again:#x}", log)
        self.assertEqual(sum(line.startswith("hostfree") for line in log), 1, log)
        self.assertFalse(any(f"{p:#x}" in line for p in (held, held_host) for line in log), log)

    def test_encode_failure_and_refusals(self):
        a, b = self.tm_inputs()
        take_log()
        os.environ["EVO_FAKE_CUDA_TMAP_FAIL"] = "1"
        try:
            with self.assertRaisesRegex(Exception, "tm: tensor map 'map_a' over 'a' cannot be "
                                                   "encoded: cuTensorMapEncodeTiled failed: "
                                                   "CUDA_ERROR_FAKE"):
                self.mod(a, b)
        finally:
            del os.environ["EVO_FAKE_CUDA_TMAP_FAIL"]
        log = take_log()
        self.assertFalse(any(line.startswith(("htod", "launch")) for line in log), log)
        # Nothing half-made is reused.
        self.mod(a, b)
        self.assertEqual(sum(line.startswith("htodasync") for line in take_log()), 2)
        # Maps are not arguments.
        with self.assertRaisesRegex(ValueError, "takes 2 inputs, got 3"):
            self.mod(a, b, self.torch.empty(128, dtype=self.torch.int8))

    def test_threads_get_their_own_maps(self):
        t = self.torch
        pairs = [self.tm_inputs() for _ in range(2)]
        b = pairs[0][1]
        take_log()
        errors = []

        def work(k):
            try:
                s = t.cuda.Stream(0x1000 * (k + 1), 0)
                w = t.empty(16384, dtype=t.uint8)
                for i in range(20):
                    self.mod(pairs[i % 2][0], b, stream=s, workspace=w)
            except Exception as e:
                errors.append(e)
        threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        self.assertEqual(errors, [])
        held, checked = {}, 0
        log = take_log()
        self.assertEqual(len(self.allocated(log)), 4)
        for line in log:
            if line.startswith("htod128 "):
                _, p, first = line.split()
                held[p] = first[len("first="):]
            elif line.startswith("launch tm_k1 "):
                args = line.split("args=")[1].split(",")
                self.assertEqual(held[args[1]], args[0], line)
                checked += 1
        self.assertEqual(checked, 80)

    def test_driver_without_tensor_maps(self):
        import evo_runtime.driver as drv
        notmap = os.path.join(os.path.dirname(FAKE),
                              os.path.basename(FAKE).replace("evo-fake-cuda", "evo-fake-cuda-notmap"))
        if not os.path.exists(notmap):
            self.skipTest(f"{notmap} is not built")
        os.environ["EVO_LIBCUDA"] = notmap
        try:
            old = drv.CudaDriver._instance
            drv.CudaDriver._instance = drv.CudaDriver()
            self.assertFalse(drv.CudaDriver._instance.has_tensor_maps)
            with self.assertRaisesRegex(drv.CudaError, "tm: the manifest has tensor maps, but the "
                                                       "CUDA driver has no cuTensorMapEncodeTiled "
                                                       r"\(TMA needs a CUDA 12 driver\)"):
                self.EvoModule(os.path.join(self.dir, "tm.json"))
            # Manifests without tensor maps still run there.
            mm = self.EvoModule(os.path.join(self.dir, "mm_relu.json"))
            a = self.torch.empty((256, 64), dtype=self.torch.float32)
            bb = self.torch.empty((64, 128), dtype=self.torch.float32)
            mm(a, bb)
        finally:
            drv.CudaDriver._instance = old
            os.environ["EVO_LIBCUDA"] = FAKE


# Scalar arguments passed by value ----------------------------------------------------------
SC_PTX = (b"//\n.version 8.0\n.target sm_90\n.visible .entry leaky_k0(\n.param .u64 .ptr a,\n"
          b".param .f32 b,\n.param .align 2 .b8 c[2],\n.param .u64 .ptr d\n)\n{}\n")


def sc_manifest():
    """leaky_relu with two scalar arguments passed by value (runtime/unittests/ScalarManifest.h)."""
    def sc(i, name, dtype, nbytes):
        return {"index": i, "name": name, "role": "input", "dtype": dtype, "shape": [],
                "bytes": nbytes, "by_value": True}
    vec = {"dtype": "f32", "shape": [1024]}
    return {
        "format": "evo-manifest/1", "name": "leaky",
        "ptx": {"file": "leaky.ptx", "bytes": len(SC_PTX), "sha256": hashlib.sha256(SC_PTX).hexdigest()},
        "buffers": [dict(vec, index=0, name="arg0", role="input", bytes=4096), sc(1, "arg1", "f32", 4),
                    sc(2, "arg2", "f16", 2), dict(vec, index=3, name="result0", role="output", bytes=4096)],
        "kernels": [{"name": "leaky_k0", "params": [
            vec, {"dtype": "f32", "shape": [], "by_value": True},
            {"dtype": "f16", "shape": [], "by_value": True}, vec]}],
        "launches": [{"kernel": "leaky_k0", "grid": [4, 1, 1], "block": [256, 1, 1],
                      "dynamic_shared_memory": 0, "args": [0, 1, 2, 3]}],
    }


@unittest.skipUnless(FAKE and os.path.exists(FAKE), "set $EVO_FAKE_CUDA to FakeCuda.c's library")
class FakeDriverScalarTest(FakeDriverBase):
    """Scalar arguments (docs/architecture.md, "Scalar arguments"): a Python number or a 0-d
    tensor, whose value is the kernel's parameter (the stand-in driver logs each parameter as
    the 8 bytes it points to); as RuntimeFakeDriverTest.cpp."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        with open(os.path.join(cls.dir, "leaky.json"), "w") as f:
            json.dump(sc_manifest(), f)
        with open(os.path.join(cls.dir, "leaky.ptx"), "wb") as f:
            f.write(SC_PTX)

    def setUp(self):
        take_log()
        self.torch.allocations.clear()
        self.torch.state.update(device=0, capturing=False)
        self.mod = self.EvoModule(os.path.join(self.dir, "leaky.json"))
        take_log()

    def launches(self):
        return [line for line in take_log() if line.startswith("launch")]

    def test_values_are_the_parameters(self):
        t = self.torch
        x = t.empty((1024,), dtype=t.float32)
        (y,) = self.mod(x, 0.5, -2)
        self.assertEqual(self.launches(), [
            f"launch leaky_k0 grid=4,1,1 block=256,1,1 smem=0 stream=0x10 ctx=0xc000 "
            f"args={x.data_ptr():#x},0x3f000000,0xc000,{y.data_ptr():#x}"])
        # Nothing allocated for them: the output only.
        self.assertEqual(len(t.allocations), 2)
        # An int for a float, and 0-d tensors of the scalars' dtypes (read with .item()).
        alpha = t.Tensor((), t.float32, t.device("cpu"), 0)
        alpha.value = -1.0
        shift = t.Tensor((), t.float16, t.device("cuda:0"), 0)
        shift.value = 65520.0  # beyond f16: infinity, as the C++ loader rounds it
        self.mod(x, 1, shift, outputs=[y])
        self.mod(x, alpha, 0.25, outputs=[y])
        self.assertEqual([line.split("args=")[1] for line in self.launches()], [
            f"{x.data_ptr():#x},0x3f800000,0x7c00,{y.data_ptr():#x}",
            f"{x.data_ptr():#x},0xbf800000,0x3400,{y.data_ptr():#x}"])

    def test_refused(self):
        t = self.torch
        x = t.empty((1024,), dtype=t.float32)
        wide = t.Tensor((), t.float64, t.device("cpu"), 0)
        wide.value = 0.5
        vector = t.empty((1,), dtype=t.float32)
        cases = [
            ((x, "0.5", 1.0), TypeError, r"leaky: input 1 \('arg1'\) is an f32 scalar: expected a "
                                         r"float or an int, got str"),
            ((x, True, 1.0), TypeError, "got bool"),
            ((x, wide, 1.0), TypeError, r"input 1 \('arg1'\) is an f32 scalar: expected a number or "
                                        r"a 0-d torch.float32 tensor, got a f64\[\] tensor"),
            ((x, vector, 1.0), TypeError, r"got a f32\[1\] tensor"),
            ((0.5, 0.5, 1.0), TypeError, r"input 0 \('arg0'\) must be a torch.Tensor, got float"),
            ((x, 0.5), ValueError, "takes 3 inputs, got 2"),
        ]
        for args, error, expect in cases:
            with self.subTest(expect):
                with self.assertRaisesRegex(error, expect):
                    self.mod(*args)
        # A CUDA 0-d tensor cannot be read while the stream is captured.
        shift = t.Tensor((), t.float16, t.device("cuda:0"), 0)
        shift.value = 1.0
        self.torch.state["capturing"] = True
        with self.assertRaisesRegex(RuntimeError, "cannot be read during CUDA graph capture: pass "
                                                  "a Python number"):
            self.mod(x, 0.5, shift)
        self.assertEqual(self.launches(), [])


# Constant buffers -----------------------------------------------------------------------------
CST_PTX = (b"//\n.version 8.0\n.target sm_90a\n"
           b".visible .entry cst_k0(\n.param .u64 a,\n.param .u64 b,\n.param .u64 c,\n"
           b".param .u64 d,\n.param .u64 e\n)\n{}\n")
# w: 1.0, 2.0, ... at 0; b: -1.0, -2.0, ... at 256 (128 bytes each: the stand-in driver logs the
# first 8 bytes of every 128-byte copy, "htod128 ADDR first=...").
CST_W = struct.pack("<32f", *[float(i + 1) for i in range(32)])
CST_B = struct.pack("<32f", *[-float(i + 1) for i in range(32)])
CST_DATA = CST_W + bytes(128) + CST_B
CST_W_FIRST = "0x400000003f800000"  # 2.0f, 1.0f
CST_B_FIRST = "0xc0000000bf800000"  # -2.0f, -1.0f
ENCODE_W = ("tensormap dtype=7 rank=1 addr={:#x} dims=32 strides= box=32 estrides=1 "
            "interleave=0 swizzle=0 l2=3 oob=0")


def cst_manifest():
    """y = x * w + b with the weights w and b constant buffers (their bytes in cst.constants.bin)
    and a tensor map over w (TMA over weights)."""
    def buf(i, name, role, offset=None):
        b = {"index": i, "name": name, "role": role, "dtype": "f32", "shape": [32], "bytes": 128}
        if offset is not None:
            b["data"] = {"offset": offset, "bytes": 128}
        return b
    f32 = {"dtype": "f32", "shape": [32]}
    return {
        "format": "evo-manifest/1", "name": "cst",
        "ptx": {"file": "cst.ptx", "bytes": len(CST_PTX), "sha256": hashlib.sha256(CST_PTX).hexdigest()},
        "constants": {"file": "cst.constants.bin", "bytes": len(CST_DATA),
                      "sha256": hashlib.sha256(CST_DATA).hexdigest()},
        "buffers": [buf(0, "arg0", "input"), buf(1, "w", "constant", 0),
                    buf(2, "result0", "output"), buf(3, "b", "constant", 256),
                    {"index": 4, "name": "map_w", "role": "tensor_map", "dtype": "i8",
                     "shape": [128], "bytes": 128,
                     "tensor_map": {"source": 1, "element_type": "f32", "dims": [32], "strides": [],
                                    "box": [32], "swizzle": 0}}],
        "kernels": [{"name": "cst_k0", "params": [f32, f32, f32, {"dtype": "i8", "shape": [128]},
                                                  f32]}],
        "launches": [{"kernel": "cst_k0", "grid": [1, 1, 1], "block": [32, 1, 1],
                      "dynamic_shared_memory": 0, "args": [0, 1, 3, 4, 2]}],
    }


@unittest.skipUnless(FAKE and os.path.exists(FAKE), "set $EVO_FAKE_CUDA to FakeCuda.c's library")
class FakeDriverConstantTest(FakeDriverBase):
    """Constant buffers: uploaded once per device at load (cuMemAlloc and a copy each, waited
    for at load, never in a call), bound in every launch and as a tensor map's source, captured
    as static addresses, freed by close() unless a graph used them."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        for name, data in [("cst.json", json.dumps(cst_manifest()).encode()), ("cst.ptx", CST_PTX),
                           ("cst.constants.bin", CST_DATA)]:
            with open(os.path.join(cls.dir, name), "wb") as f:
                f.write(data)
        cls.path = os.path.join(cls.dir, "cst.json")

    def setUp(self):
        take_log()
        self.torch.allocations.clear()
        self.torch.state.update(device=0, capturing=False)
        self.mods = []

    def tearDown(self):
        for mod in self.mods:
            mod.close()
        self.torch.state.update(device=0, capturing=False)
        os.environ.pop("EVO_FAKE_CUDA_CAPTURING", None)

    def module(self):
        mod = self.EvoModule(self.path)
        self.mods.append(mod)
        return mod

    def x(self, dev=0):
        return self.torch.empty((32,), dtype=self.torch.float32, device=f"cuda:{dev}")

    def uploads(self, log, ctx="0xc000"):
        """(w, b): the addresses of the two constants uploaded in `log`, checked to be the whole
        upload: an allocation and a copy of the right bytes each, one wait at the end."""
        w = int(log[1].split()[2], 16)
        b = int(log[4].split()[2], 16)
        self.assertEqual(log, [
            f"load ctx={ctx}",
            f"alloc ctx={ctx} {w:#x} 128", "SYNC cuMemcpyHtoD", f"htod128 {w:#x} first={CST_W_FIRST}",
            f"alloc ctx={ctx} {b:#x} 128", "SYNC cuMemcpyHtoD", f"htod128 {b:#x} first={CST_B_FIRST}",
            "SYNC cuStreamSynchronize (nil)"])
        self.assertNotEqual(w, b)
        self.assertEqual((w % 256, b % 256), (0, 0))
        return w, b

    def launch_args(self, log):
        return [line.split("args=")[1] for line in log if line.startswith("launch")]

    def test_uploaded_at_load_and_bound_in_every_launch(self):
        mod = self.module()
        w, b = self.uploads(take_log())  # at load, on the current device
        x = self.x()
        (y,) = mod(x)
        log = take_log()
        # The tensor map is encoded over the device copy of w; launches get both copies; the
        # call uploads nothing again and waits for nothing.
        self.assertIn(ENCODE_W.format(w), log)
        (maps,) = [int(line.split()[1], 16) for line in log if line.startswith("htod128")]
        self.assertEqual(self.launch_args(log),
                         [f"{x.data_ptr():#x},{w:#x},{b:#x},{maps:#x},{y.data_ptr():#x}"])
        self.assertFalse(any(line.startswith("SYNC") for line in log), log)
        # Allocated: the capture pool and the stream's tensor-map slot, no constant.
        self.assertEqual([int(line.split()[2], 16) for line in log
                          if line.startswith("alloc") and line.endswith(" 128")], [maps])
        # The same at the next call, on another stream too (same addresses: no re-encoding).
        (y2,) = mod(x)
        mod(x, stream=self.torch.cuda.Stream(0x7000, 0))
        log = take_log()
        self.assertEqual(self.launch_args(log)[0],
                         f"{x.data_ptr():#x},{w:#x},{b:#x},{maps:#x},{y2.data_ptr():#x}")
        self.assertEqual(sum(line.startswith("tensormap") for line in log), 1, log)  # 0x7000's
        self.assertIn(ENCODE_W.format(w), log)
        self.assertFalse(any(line.startswith("SYNC") for line in log), log)
        # Constants are not arguments: a call passes its inputs only.
        with self.assertRaisesRegex(ValueError, "cst takes 1 inputs, got 3"):
            mod(x, self.x(), self.x())

    def test_each_device_gets_its_own_copies(self):
        mod = self.module()
        w0, b0 = self.uploads(take_log())
        x1 = self.x(dev=1)
        (y1,) = mod(x1)  # loads on device 1 (its context): uploads there
        log = take_log()
        w1, b1 = self.uploads(log[:8], ctx="0xc001")
        self.assertNotIn(w1, (w0, b0))
        self.assertIn(ENCODE_W.format(w1), log)
        self.assertEqual(len(self.launch_args(log)), 1)
        self.assertTrue(self.launch_args(log)[0].startswith(f"{x1.data_ptr():#x},{w1:#x},{b1:#x},"))
        self.assertTrue(self.launch_args(log)[0].endswith(f",{y1.data_ptr():#x}"))
        self.assertIn("ctx=0xc001", [line for line in log if line.startswith("launch")][0])
        # Device 0 still uses its own.
        mod(self.x())
        self.assertTrue(self.launch_args(take_log())[0].split(",")[1:3] == [f"{w0:#x}", f"{b0:#x}"])
        # prepare(device) uploads ahead, once.
        mod2 = self.module()
        take_log()
        mod2.prepare(1)
        self.uploads(take_log(), ctx="0xc001")
        mod2.prepare(1)
        self.assertEqual(take_log(), [])

    def test_captured_calls_keep_them_and_close_frees_the_others(self):
        import gc
        t = self.torch
        x = self.x()
        mod = self.module()
        w, b = self.uploads(take_log())
        mod.reserve_capture_slots(1)  # for the tensor map
        take_log()
        # Captured: the same static addresses, nothing allocated or uploaded.
        os.environ["EVO_FAKE_CUDA_CAPTURING"] = "0x10"
        t.state["capturing"] = True
        c = t.empty((32,), dtype=t.float32)
        mod(x, outputs=[c])
        os.environ.pop("EVO_FAKE_CUDA_CAPTURING")
        t.state["capturing"] = False
        log = take_log()
        self.assertEqual(self.launch_args(log)[0].split(",")[:3], [f"{x.data_ptr():#x}", f"{w:#x}",
                                                                   f"{b:#x}"])
        self.assertIn(ENCODE_W.format(w), log)
        self.assertFalse(any(line.startswith(("alloc", "SYNC", "ALLOC")) for line in log), log)
        # close(): a graph replays launches that read them, so they stay (for the process).
        mod.close()
        self.assertFalse(any(f"{w:#x}" in line or f"{b:#x}" in line for line in take_log()))
        mod(x)
        self.assertEqual(self.launch_args(take_log())[0].split(",")[1:3], [f"{w:#x}", f"{b:#x}"])

        # A module no capture used: close() frees them; it can still be called (uploaded again).
        other = self.module()
        w2, b2 = self.uploads(take_log())
        other(x)
        take_log()
        other.close()
        log = take_log()
        self.assertIn(f"free ctx=0xc000 {w2:#x}", log)
        self.assertIn(f"free ctx=0xc000 {b2:#x}", log)
        # ... not during a capture: refused with the way out, nothing enqueued.
        t.state["capturing"] = True
        with self.assertRaisesRegex(RuntimeError, r"cst: its constant buffers were freed by close\(\) "
                                                  "and cannot be uploaded to device 0 during CUDA "
                                                  r"graph capture: call prepare\(device\) before "
                                                  "capturing"):
            other(x)
        t.state["capturing"] = False
        self.assertEqual(take_log(), [])
        (y,) = other(x)
        log = take_log()
        w3 = int(log[0].split()[2], 16)
        b3 = int(log[3].split()[2], 16)
        self.assertEqual(log[:7], [
            f"alloc ctx=0xc000 {w3:#x} 128", "SYNC cuMemcpyHtoD", f"htod128 {w3:#x} first={CST_W_FIRST}",
            f"alloc ctx=0xc000 {b3:#x} 128", "SYNC cuMemcpyHtoD", f"htod128 {b3:#x} first={CST_B_FIRST}",
            "SYNC cuStreamSynchronize (nil)"])
        self.assertEqual(self.launch_args(log)[0].split(",")[1:3], [f"{w3:#x}", f"{b3:#x}"])
        self.assertIn(ENCODE_W.format(w3), log)  # the map follows the new copy
        # close() twice frees once; prepare() uploads again.
        other.close()
        other.close()
        self.assertEqual(sum(line.startswith("free") and (f"{w3:#x}" in line or f"{b3:#x}" in line)
                             for line in take_log()), 2)
        other.prepare(0)
        log = take_log()
        self.assertFalse(any(line.startswith("load") for line in log), log)  # the module stays
        w4, b4 = self.uploads(["load ctx=0xc000"] + log)
        # Garbage collection frees them too.
        self.mods.remove(other)
        del other
        gc.collect()
        self.assertEqual(sorted(take_log()), sorted([f"free ctx=0xc000 {w4:#x}",
                                                     f"free ctx=0xc000 {b4:#x}"]))

    def test_upload_failures(self):
        # The driver refuses the allocation (here: a global-mode capture in progress): the load
        # fails with the constant's name, and nothing stays loaded or allocated.
        os.environ["EVO_FAKE_CUDA_CAPTURING"] = "0x7000"
        try:
            with self.assertRaisesRegex(Exception, r"cst: constant 'w' \(128 bytes\) cannot be "
                                                   "uploaded to cuda:0: cuMemAlloc failed"):
                self.EvoModule(self.path)
        finally:
            os.environ.pop("EVO_FAKE_CUDA_CAPTURING")
        log = take_log()
        self.assertEqual([line for line in log if not line.startswith("ALLOC-IN-CAPTURE")],
                         ["load ctx=0xc000", "unload ctx=0xc000"])
        # A constants file that does not check out: refused before anything is loaded.
        bad = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, bad)
        for name in ("cst.json", "cst.ptx"):
            shutil.copy(os.path.join(self.dir, name), bad)
        with open(os.path.join(bad, "cst.constants.bin"), "wb") as f:
            f.write(CST_B + bytes(128) + CST_W)
        import evo_runtime
        with self.assertRaisesRegex(evo_runtime.ManifestError,
                                    "cst.constants.bin: the constants file does not match"):
            self.EvoModule(os.path.join(bad, "cst.json"))
        os.unlink(os.path.join(bad, "cst.constants.bin"))
        with self.assertRaisesRegex(evo_runtime.ManifestError, "cst.constants.bin: No such file"):
            self.EvoModule(os.path.join(bad, "cst.json"))
        self.assertEqual(take_log(), [])

    def test_given_image_still_gets_the_constants(self):
        mod = self.EvoModule(self.path, image=CST_PTX)
        self.mods.append(mod)
        w, b = self.uploads(take_log())
        mod(self.x())
        self.assertEqual(self.launch_args(take_log())[0].split(",")[1:3], [f"{w:#x}", f"{b:#x}"])

    def test_register_op_passes_inputs_only(self):
        # register_op on a stand-in torch.library: the schema, the fake implementation and the
        # CUDA implementation see the input only; the launch gets the constants.
        import evo_runtime.torch_ops as ops
        t = self.torch
        lib_mod = types.ModuleType("torch.library")
        registered = {}

        class Library:
            def __init__(self, ns, kind):
                self.ns = ns

            def define(self, schema):
                registered["schema"] = schema

            def impl(self, name, fn, key):
                registered[key] = fn
                setattr(t.ops, self.ns, types.SimpleNamespace(**{name: fn}))

        def register_fake(qualname, fn, lib=None):
            registered["fake"] = fn
        lib_mod.Library, lib_mod.register_fake = Library, register_fake
        t.library, t.ops = lib_mod, types.SimpleNamespace()
        try:
            op = ops.register_op("evotest::cst", self.path)
            mod = ops.registered_module("evotest::cst")
            self.mods.append(mod)
            w, b = self.uploads(take_log())
            self.assertEqual(registered["schema"], "cst(Tensor in0) -> Tensor")
            x = self.x()
            y = op(x)
            self.assertEqual(self.launch_args(take_log())[0].split(",")[:3],
                             [f"{x.data_ptr():#x}", f"{w:#x}", f"{b:#x}"])
            self.assertEqual((y.shape, str(y.dtype)), ((32,), "torch.float32"))
            fake = registered["fake"](x)
            self.assertEqual((fake.shape, str(fake.dtype)), ((32,), "torch.float32"))
            with self.assertRaisesRegex(ValueError, "takes 1 inputs, got 2"):
                registered["fake"](x, x)
        finally:
            del t.library, t.ops
            ops._registry.pop("evotest::cst", None)


# Cubins per chip (evo-opt's chips=) ----------------------------------------------------------
def tagged(magic, tag):
    """A stand-in image with mm_relu's kernels that the fake driver logs as "image ctx=C <tag>"."""
    return magic + b"// fake-image: " + tag + b"\n" + PTX


@unittest.skipUnless(FAKE and os.path.exists(FAKE), "set $EVO_FAKE_CUDA to FakeCuda.c's library")
class MultiChipTest(FakeDriverBase):
    """Each device loads the cubin made for it, else the PTX; as RuntimeFakeDriverTest.cpp."""

    def setUp(self):
        take_log()
        self.torch.state.update(device=0, capturing=False)
        self.addCleanup(os.environ.pop, "EVO_FAKE_CUDA_CC", None)
        self.chips_dir = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.chips_dir)
        ptx = tagged(b"", b"ptx sm_80")
        images = {"sm_80": tagged(b"\x7fELF", b"cubin sm_80"),
                  "sm_90a": tagged(b"\x7fELF", b"cubin sm_90a")}
        m = manifest()
        m["ptx"] = {"file": "mm_relu.ptx", "bytes": len(ptx), "sha256": hashlib.sha256(ptx).hexdigest()}
        m["target"] = {"chip": "sm_80", "features": "+ptx80", "chips": ["sm_80", "sm_90a"]}
        m["binaries"] = [{"chip": c, "file": f"mm_relu.{c}.cubin", "bytes": len(img),
                          "sha256": hashlib.sha256(img).hexdigest()} for c, img in images.items()]
        files = {"mm_relu.json": json.dumps(m).encode(), "mm_relu.ptx": ptx}
        files.update({f"mm_relu.{c}.cubin": img for c, img in images.items()})
        for name, data in files.items():
            with open(os.path.join(self.chips_dir, name), "wb") as f:
                f.write(data)
        self.path = os.path.join(self.chips_dir, "mm_relu.json")

    def inputs(self, dev):
        t = self.torch
        return (t.empty((256, 64), dtype=t.float32, device=f"cuda:{dev}"),
                t.empty((64, 128), dtype=t.float32, device=f"cuda:{dev}"))

    def test_each_device_gets_its_cubin(self):
        os.environ["EVO_FAKE_CUDA_CC"] = "9.0,8.6"
        mod = self.EvoModule(self.path)
        self.assertEqual(mod.image_for(0), ("cubin", "sm_90a", "mm_relu.sm_90a.cubin"))
        self.assertEqual(mod.image_for(1), ("cubin", "sm_80", "mm_relu.sm_80.cubin"))
        mod(*self.inputs(0))
        mod(*self.inputs(1))
        log = take_log()
        self.assertEqual([line for line in log if line.startswith("image")],
                         ["image ctx=0xc000 cubin sm_90a", "image ctx=0xc001 cubin sm_80"])
        self.assertEqual(sum(line.startswith("launch mm_relu_k1") for line in log), 2)

    def test_newer_gpu_gets_the_ptx(self):
        os.environ["EVO_FAKE_CUDA_CC"] = "12.0"
        mod = self.EvoModule(self.path)
        self.assertEqual(mod.image_for(), ("ptx", "sm_80", "mm_relu.ptx"))
        self.assertEqual([line for line in take_log() if line.startswith("image")],
                         ["image ctx=0xc000 ptx sm_80"])

    def test_older_gpu_is_refused(self):
        import evo_runtime
        os.environ["EVO_FAKE_CUDA_CC"] = "7.5"
        with self.assertRaises(evo_runtime.UnsupportedDeviceError) as cm:
            self.EvoModule(self.path)  # loads on the current device at once
        self.assertEqual(str(cm.exception),
                         "mm_relu: no kernel image runs on this GPU (sm_75): the cubins are for "
                         "sm_80, sm_90a and the PTX is for sm_80 (needs sm_80 or newer)")
        self.assertFalse(any(line.startswith(("load", "launch")) for line in take_log()))

    def test_given_image_everywhere(self):
        os.environ["EVO_FAKE_CUDA_CC"] = "7.5"
        mod = self.EvoModule(self.path, image=tagged(b"", b"given"))
        self.assertEqual(mod.image_for(0), ("image", "", ""))
        self.assertEqual([line for line in take_log() if line.startswith("image")],
                         ["image ctx=0xc000 given"])


if __name__ == "__main__":
    unittest.main()
