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
import shutil
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


@unittest.skipUnless(FAKE and os.path.exists(FAKE), "set $EVO_FAKE_CUDA to FakeCuda.c's library")
class FakeDriverTest(unittest.TestCase):
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


if __name__ == "__main__":
    unittest.main()
