"""evo_runtime without a GPU or torch: manifest validation against hostile input, the PTX file's
resolution, the fake implementation's shapes, the op schema, the in-tree build backend.

    python3 -m unittest discover -s python/tests -t python        (ctest: python-evo-runtime)

With $EVO_OPT set, manifests emitted by evo-opt itself are parsed too.
"""

import contextlib
import copy
import hashlib
import io
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
PYROOT = os.path.dirname(HERE)
SRCROOT = os.path.dirname(PYROOT)
sys.path.insert(0, PYROOT)

import evo_runtime  # noqa: E402
from evo_runtime import Manifest, ManifestError  # noqa: E402
from evo_runtime.torch_ops import _split_qualname, output_specs, schema  # noqa: E402

PTX = b"//\n.version 8.0\n.target sm_90\n.address_size 64\n// kernels\n"


def buffer(i, name, role, shape, zero=False):
    n = 4
    for d in shape:
        n *= d
    return {"index": i, "name": name, "role": role, "dtype": "f32", "shape": list(shape),
            "bytes": n, "zero_init": zero}


def param(shape):
    return {"dtype": "f32", "shape": list(shape)}


def valid():
    """mm_relu as evo-emit-ptx writes it, plus a zero_init scratch buffer (as RuntimeTestFixture.h)."""
    return {
        "format": "evo-manifest/1", "name": "mm_relu", "function": "mm_relu",
        "generator": "evo-opt 0.1.0", "abi": "bare-pointer",
        "target": {"chip": "sm_90", "features": "+ptx80"},
        "ptx": {"file": "mm_relu.ptx", "bytes": len(PTX), "sha256": hashlib.sha256(PTX).hexdigest()},
        "ptxas": None,
        "buffers": [buffer(0, "arg0", "input", (256, 64)), buffer(1, "arg1", "input", (64, 128)),
                    buffer(2, "result0", "output", (256, 128)),
                    buffer(3, "tmp0", "scratch", (256, 128)),
                    buffer(4, "tmp1", "scratch", (3,), True)],
        "tasks": [{"name": "t0"}, {"name": "t1"}],
        "kernels": [{"name": "mm_relu_k0", "params": [param((256, 64)), param((64, 128)),
                                                      param((256, 128)), param((3,))],
                     "knobs": {}, "resources": None},
                    {"name": "mm_relu_k1", "params": [param((256, 128)), param((256, 128))]}],
        "launches": [{"kernel": "mm_relu_k0", "task": 0, "grid": [128, 1, 1], "block": [256, 1, 1],
                      "dynamic_shared_memory": 0, "args": [0, 1, 3, 4]},
                     {"kernel": "mm_relu_k1", "task": 1, "grid": [128, 1, 1], "block": [256, 1, 1],
                      "dynamic_shared_memory": 0, "args": [3, 2]}],
    }


def set_(path, value):
    def mutate(j):
        *keys, last = path
        for k in keys:
            j = j[k]
        j[last] = value
    return mutate


def delete(path):
    def mutate(j):
        *keys, last = path
        for k in keys:
            j = j[k]
        del j[last]
    return mutate


# (name, mutation, a piece of the message): the same cases as runtime/unittests/RuntimeTest.cpp.
HOSTILE = [
    ("format", set_(["format"], "evo-manifest/2"), "not an evo manifest"),
    ("format type", set_(["format"], 1), "'format' must be a string"),
    ("name", set_(["name"], "../etc"), "not a valid symbol"),
    ("name unicode", set_(["name"], "na\u00e9me"), "not a valid symbol"),
    ("no ptx", delete(["ptx"]), "missing 'ptx'"),
    ("ptx escapes", set_(["ptx", "file"], "../secret.ptx"), "plain file name"),
    ("ptx absolute", set_(["ptx", "file"], "/etc/passwd"), "plain file name"),
    ("ptx subdir", set_(["ptx", "file"], "a/b.ptx"), "plain file name"),
    ("ptx dotdot", set_(["ptx", "file"], ".."), "plain file name"),
    ("ptx empty", set_(["ptx", "file"], ""), "plain file name"),
    ("ptx control", set_(["ptx", "file"], "a\nb"), "plain file name"),
    ("ptx backslash", set_(["ptx", "file"], "..\\x"), "plain file name"),
    ("ptx bytes float", set_(["ptx", "bytes"], 1.5), "must be an integer"),
    ("ptx bytes bool", set_(["ptx", "bytes"], True), "must be an integer"),
    ("ptx bytes negative", set_(["ptx", "bytes"], -1), "out of range"),
    ("ptx bytes huge", set_(["ptx", "bytes"], 1 << 62), "out of range"),
    ("sha upper", set_(["ptx", "sha256"], "A" * 64), "64 lowercase hex"),
    ("sha short", set_(["ptx", "sha256"], "abc"), "64 lowercase hex"),
    ("buffers not array", set_(["buffers"], {}), "must be an array"),
    ("buffer not object", set_(["buffers", 0], 3), "must be an object"),
    ("buffer index", set_(["buffers", 1, "index"], 0), "must equal its position"),
    ("buffer unknown key", set_(["buffers", 0, "strides"], [1, 2]), "unknown key 'strides'"),
    ("buffer role", set_(["buffers", 0, "role"], "inout"),
     "not input, output, scratch, tensor_map or constant"),
    ("buffer dtype", set_(["buffers", 0, "dtype"], "f128"), "unsupported dtype"),
    ("buffer name", set_(["buffers", 0, "name"], "a b"), "not a valid symbol"),
    ("dim zero", set_(["buffers", 0, "shape"], [0, 64]), "out of range"),
    ("dim negative", set_(["buffers", 0, "shape"], [-256, 64]), "out of range"),
    ("dim string", set_(["buffers", 0, "shape"], ["256", 64]), "must be an integer"),
    ("rank 17", set_(["buffers", 0, "shape"], [1] * 17), "more than 16"),
    ("elements overflow", set_(["buffers", 0, "shape"], [1 << 30] * 3), "more than 2^40 elements"),
    ("bytes overflow", set_(["buffers", 0, "shape"], [1 << 39]), "larger than 1 TiB"),
    ("bytes mismatch", set_(["buffers", 0, "bytes"], 4), "not the size of its shape"),
    ("zero_init input", set_(["buffers", 0, "zero_init"], True), "cannot be zero_init"),
    ("zero_init type", set_(["buffers", 3, "zero_init"], 1), "must be a boolean"),
    ("kernel dup", set_(["kernels", 1, "name"], "mm_relu_k0"), "listed twice"),
    ("kernel name", set_(["kernels", 0, "name"], "k\0x"), "not a valid PTX symbol"),
    ("kernel param key", set_(["kernels", 0, "params", 0, "tensor_map"], {"box": [64, 64]}),
     "unknown key 'tensor_map'"),
    ("no launches", set_(["launches"], []), "no launches"),
    ("launch kernel", set_(["launches", 0, "kernel"], "evil"), "not listed in 'kernels'"),
    ("launch key", set_(["launches", 0, "tensor_maps"], []), "unknown key 'tensor_maps'"),
    ("launch cluster", set_(["launches", 0, "cluster"], [2, 1, 1]), "unknown key 'cluster'"),
    ("grid 2-d", set_(["launches", 0, "grid"], [1, 1]), "need 3 dimensions"),
    ("grid zero", set_(["launches", 0, "grid"], [0, 1, 1]), "grid x"),
    ("grid x", set_(["launches", 0, "grid"], [1 << 31, 1, 1]), "grid x"),
    ("grid y", set_(["launches", 0, "grid"], [1, 65536, 1]), "grid y"),
    ("block x", set_(["launches", 0, "block"], [1025, 1, 1]), "block x"),
    ("block z", set_(["launches", 0, "block"], [1, 1, 65]), "block z"),
    ("block threads", set_(["launches", 0, "block"], [64, 64, 1]), "more than 1024 threads"),
    ("smem", set_(["launches", 0, "dynamic_shared_memory"], 227 * 1024 + 1), "dynamic_shared_memory"),
    ("smem negative", set_(["launches", 0, "dynamic_shared_memory"], -1), "out of range"),
    ("arg index", set_(["launches", 1, "args"], [3, 5]), "args[1]"),
    ("arg negative", set_(["launches", 1, "args"], [-1, 2]), "args[0]"),
    ("arg count", set_(["launches", 1, "args"], [3]), "passes 1 buffers to a kernel of 2"),
    ("arg type", set_(["launches", 1, "args"], [0, 2]),
     "parameter 0 is f32[256, 128] but buffer 'arg0' is f32[256, 64]"),
    ("task", set_(["launches", 1, "task"], 2), "'task'"),
    ("output unwritten", set_(["launches", 1, "args"], [3, 3]),
     "output buffer 'result0' is passed to no launch"),
]


class ManifestTest(unittest.TestCase):
    def test_valid(self):
        m = Manifest.parse(json.dumps(valid()))
        self.assertEqual(m.name, "mm_relu")
        self.assertEqual(m.chip, "sm_90")
        self.assertEqual([b.name for b in m.inputs], ["arg0", "arg1"])
        self.assertEqual([b.name for b in m.outputs], ["result0"])
        self.assertEqual([(b.name, b.offset) for b in m.scratch], [("tmp0", 0), ("tmp1", 131072)])
        self.assertEqual(m.workspace_bytes, 131072 + 256)
        self.assertEqual(m.launches[0].args, (0, 1, 3, 4))
        self.assertEqual(m.launches[1].kernel_index, 1)
        self.assertEqual(m.buffers[0].shape, (256, 64))

    def test_zero_d_and_dtypes(self):
        j = valid()
        j["buffers"][4]["shape"] = []
        j["buffers"][4]["bytes"] = 4
        j["kernels"][0]["params"][3]["shape"] = []
        self.assertEqual(Manifest.parse(json.dumps(j)).buffers[4].shape, ())
        for dt, size in evo_runtime.manifest.DTYPE_SIZES.items():
            j = valid()
            j["buffers"][4]["dtype"] = dt
            j["buffers"][4]["bytes"] = 3 * size
            j["kernels"][0]["params"][3]["dtype"] = dt
            self.assertEqual(Manifest.parse(json.dumps(j)).buffers[4].dtype, dt)

    def test_unknown_informational_keys(self):
        j = valid()
        j["something_new"] = {"a": 1}
        j["kernels"][0]["resources"] = {"registers": 30}
        Manifest.parse(json.dumps(j))

    def test_hostile(self):
        for name, mutate, expect in HOSTILE:
            j = copy.deepcopy(valid())
            mutate(j)
            with self.subTest(name):
                with self.assertRaises(ManifestError) as cm:
                    Manifest.parse(json.dumps(j))
                self.assertIn(expect, str(cm.exception))

    def test_malformed_text(self):
        for text in [b"", b'{"format": ', b'{"format": "\xff"}', b"[1, 2]", b"[" * 200000,
                     b'{"a": 1' + b"0" * 5000 + b"}", b" " * (17 << 20)]:
            with self.assertRaises(ManifestError):
                Manifest.parse(text)

    def test_file_resolution(self):
        d = tempfile.mkdtemp()
        other = tempfile.mkdtemp()
        try:
            with open(os.path.join(d, "mm_relu.json"), "w") as f:
                json.dump(valid(), f)
            with open(os.path.join(d, "mm_relu.ptx"), "wb") as f:
                f.write(PTX)
            m = Manifest.load(os.path.join(d, "mm_relu.json"))
            self.assertEqual(m.read_image(), PTX)
            # Looked up beside the manifest, not in the working directory.
            cwd = os.getcwd()
            os.chdir(other)
            try:
                with open("mm_relu.ptx", "wb") as f:
                    f.write(b"something else")
                self.assertEqual(Manifest.load(os.path.join(d, "mm_relu.json")).read_image(), PTX)
            finally:
                os.chdir(cwd)
            # Changed size, changed content.
            for data, expect in [(PTX + b" ", "the manifest says"),
                                 (PTX[:3] + b"X" + PTX[4:], "does not match the manifest")]:
                with open(os.path.join(d, "mm_relu.ptx"), "wb") as f:
                    f.write(data)
                with self.assertRaisesRegex(ManifestError, expect):
                    m.read_image()
            # A symbolic link (even to the right content), a directory, a FIFO, nothing.
            with open(os.path.join(other, "real.ptx"), "wb") as f:
                f.write(PTX)
            os.unlink(os.path.join(d, "mm_relu.ptx"))
            os.symlink(os.path.join(other, "real.ptx"), os.path.join(d, "mm_relu.ptx"))
            with self.assertRaisesRegex(ManifestError, "symbolic link"):
                m.read_image()
            os.unlink(os.path.join(d, "mm_relu.ptx"))
            with self.assertRaisesRegex(ManifestError, "No such file"):
                m.read_image()
            os.mkdir(os.path.join(d, "mm_relu.ptx"))
            with self.assertRaises(ManifestError):
                m.read_image()
            os.rmdir(os.path.join(d, "mm_relu.ptx"))
            os.mkfifo(os.path.join(d, "mm_relu.ptx"))
            with self.assertRaisesRegex(ManifestError, "not a regular file"):
                m.read_image()
            with self.assertRaisesRegex(ManifestError, "nothing.json"):
                Manifest.load(os.path.join(d, "nothing.json"))
        finally:
            shutil.rmtree(d)
            shutil.rmtree(other)


# --- Cubins per chip (evo-opt's chips=): `binaries`, and the image each GPU gets ---------------

def cubin_for(chip):
    """A stand-in cubin (the loader checks size and sha256 only)."""
    return b"\x7fELF cubin " + chip.encode()


def with_binaries(chips):
    j = valid()
    j["target"]["chip"] = chips[0]
    j["target"]["chips"] = list(chips)
    j["binaries"] = [{"chip": c, "file": f"mm_relu.{c}.cubin", "bytes": len(cubin_for(c)),
                      "sha256": hashlib.sha256(cubin_for(c)).hexdigest()} for c in chips]
    return j


# The same cases and messages as RuntimeChipsTest.cpp's RuntimeChips.RefusesHostileBinaries.
HOSTILE_BINARIES = [
    ("not an array", set_(["binaries"], {}), "'binaries' must be an array"),
    ("too many", set_(["binaries"], [1] * 65), "more than 64"),
    ("not an object", set_(["binaries", 0], "sm_80"), "binary 0 must be an object"),
    ("unknown key", set_(["binaries", 0, "kind"], "fatbin"), "unknown key 'kind'"),
    ("missing file", delete(["binaries", 0, "file"]), "missing 'file'"),
    ("chip", set_(["binaries", 0, "chip"], "compute_80"),
     "binary 0: chip 'compute_80' is not a chip name"),
    ("chip type", set_(["binaries", 0, "chip"], 80), "'chip' must be a string"),
    ("file escapes", set_(["binaries", 1, "file"], "../x.cubin"),
     "binary 1 (sm_90a): file '../x.cubin' must be a plain file name"),
    ("file absolute", set_(["binaries", 1, "file"], "/etc/passwd"), "must be a plain file name"),
    ("file is the ptx", set_(["binaries", 1, "file"], "mm_relu.ptx"), "is the PTX's"),
    ("file twice", set_(["binaries", 1, "file"], "mm_relu.sm_80.cubin"),
     "file 'mm_relu.sm_80.cubin' is also sm_80's"),
    ("chip twice", set_(["binaries", 1, "chip"], "sm_80"), "a second cubin for sm_80"),
    ("bytes zero", set_(["binaries", 0, "bytes"], 0), "'bytes' is 0, out of range"),
    ("bytes huge", set_(["binaries", 0, "bytes"], 1 << 40), "out of range"),
    ("bytes string", set_(["binaries", 0, "bytes"], "12"), "must be an integer"),
    ("sha", set_(["binaries", 0, "sha256"], "G" * 64),
     "binary 0 (sm_80): sha256 must be 64 lowercase hex digits"),
    ("target chips", set_(["target", "chips"], ["sm_80", "x"]),
     "manifest: target: chips[1] is not a chip name"),
]


class ChipsTest(unittest.TestCase):
    def test_shared_cases(self):
        # runtime/unittests/chip-selection.json: RuntimeChipsTest.cpp runs the same cases.
        with open(os.path.join(SRCROOT, "runtime", "unittests", "chip-selection.json")) as f:
            cases = json.load(f)["cases"]
        self.assertGreaterEqual(len(cases), 20)
        for c in cases:
            with self.subTest(json.dumps(c)):
                index, why = evo_runtime.choose_image(c["binaries"], c["ptx"], *c["device"])
                if c["expect"] == "none":
                    self.assertIsNone(index)
                    self.assertEqual(why, c["why"])
                elif c["expect"] == "ptx":
                    self.assertEqual(index, -1)
                else:
                    self.assertIsNotNone(index, why)
                    self.assertGreaterEqual(index, 0)
                    self.assertEqual(c["binaries"][index], c["expect"])

    def test_chip_names(self):
        parse = evo_runtime.manifest.parse_chip
        self.assertEqual(parse("sm_90a"), (9, 0, "a"))
        self.assertEqual(parse("sm_121f"), (12, 1, "f"))
        for bad in ["", "sm_", "sm_9", "sm_1000", "sm_90b", "sm_0a", "SM_90", "sm_9x", "compute_90",
                    "sm_90aa", "sm_a", None, 90]:
            self.assertIsNone(parse(bad), bad)

    def test_binaries(self):
        m = Manifest.parse(json.dumps(with_binaries(["sm_80", "sm_90a"])))
        self.assertEqual(m.chips, ["sm_80", "sm_90a"])
        self.assertEqual([(b.chip, b.file, b.bytes) for b in m.binaries],
                         [("sm_80", "mm_relu.sm_80.cubin", 16), ("sm_90a", "mm_relu.sm_90a.cubin", 17)])
        self.assertEqual(Manifest.parse(json.dumps(valid())).binaries, [])

    def test_hostile_binaries(self):
        for name, mutate, expect in HOSTILE_BINARIES:
            j = with_binaries(["sm_80", "sm_90a"])
            mutate(j)
            with self.subTest(name):
                with self.assertRaises(ManifestError) as cm:
                    Manifest.parse(json.dumps(j))
                self.assertIn(expect, str(cm.exception))

    def test_files_and_image_for(self):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        with open(os.path.join(d, "mm_relu.json"), "w") as f:
            json.dump(with_binaries(["sm_80", "sm_90a"]), f)
        for name, data in [("mm_relu.ptx", PTX), ("mm_relu.sm_80.cubin", cubin_for("sm_80")),
                           ("mm_relu.sm_90a.cubin", cubin_for("sm_90a"))]:
            with open(os.path.join(d, name), "wb") as f:
                f.write(data)
        m = Manifest.load(os.path.join(d, "mm_relu.json"))
        self.assertEqual(m.read_binaries(), [cubin_for("sm_80"), cubin_for("sm_90a")])
        self.assertEqual(m.image_for(9, 0)[0].file, "mm_relu.sm_90a.cubin")
        self.assertEqual(m.image_for(8, 6)[0].file, "mm_relu.sm_80.cubin")
        self.assertEqual(m.image_for(12, 0), (None, "mm_relu.ptx"))
        with self.assertRaises(evo_runtime.UnsupportedDeviceError) as cm:
            m.image_for(7, 5)
        self.assertEqual(str(cm.exception),
                         "mm_relu: no kernel image runs on this GPU (sm_75): the cubins are for "
                         "sm_80, sm_90a and the PTX is for sm_80 (needs sm_80 or newer)")
        # A changed, missing or linked cubin is refused like the PTX.
        path = os.path.join(d, "mm_relu.sm_90a.cubin")
        with open(path, "wb") as f:
            f.write(cubin_for("sm_90a") + b"x")
        with self.assertRaisesRegex(ManifestError, "the sm_90a cubin has 18 bytes, the manifest says 17"):
            m.read_binaries()
        with open(path, "wb") as f:
            f.write(cubin_for("sm_90b"))
        with self.assertRaisesRegex(ManifestError, "the sm_90a cubin does not match the manifest"):
            m.read_binaries()
        os.unlink(path)
        with self.assertRaisesRegex(ManifestError, "mm_relu.sm_90a.cubin: No such file"):
            m.read_binaries()
        other = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, other)
        with open(os.path.join(other, "real.cubin"), "wb") as f:
            f.write(cubin_for("sm_90a"))
        os.symlink(os.path.join(other, "real.cubin"), path)
        with self.assertRaisesRegex(ManifestError, "symbolic link"):
            m.read_binaries()
        # Without binaries: the PTX, whatever the GPU (the driver says whether it runs).
        self.assertEqual(Manifest.parse(json.dumps(valid())).image_for(7, 5), (None, "mm_relu.ptx"))


def tm_valid():
    """A manifest with two tensor maps (runtime/unittests/TensorMapManifest.h): map_a over input
    a, map_bt over scratch bt."""
    ptx = b"//\n.version 8.0\n.target sm_90a\n"
    f16 = lambda shape: {"dtype": "f16", "shape": list(shape)}  # noqa: E731

    def buf(i, name, role, dtype, shape, nbytes, tmap=None):
        b = {"index": i, "name": name, "role": role, "dtype": dtype, "shape": list(shape),
             "bytes": nbytes}
        if tmap is not None:
            b["tensor_map"] = tmap
        return b
    return {
        "format": "evo-manifest/1", "name": "tm",
        "ptx": {"file": "tm.ptx", "bytes": len(ptx), "sha256": hashlib.sha256(ptx).hexdigest()},
        "buffers": [
            buf(0, "a", "input", "f16", (256, 64), 32768),
            buf(1, "b", "input", "f16", (64, 128), 16384),
            buf(2, "c", "output", "f32", (256, 128), 131072),
            buf(3, "map_a", "tensor_map", "i8", (128,), 128,
                {"source": 0, "element_type": "f16", "dims": [64, 256], "strides": [128],
                 "box": [64, 128], "swizzle": 128}),
            buf(4, "bt", "scratch", "f16", (64, 128), 16384),
            buf(5, "map_bt", "tensor_map", "i8", (128,), 128,
                {"source": 4, "element_type": "f16", "dims": [128, 64], "strides": [256],
                 "box": [32, 64], "swizzle": 64})],
        "kernels": [{"name": "tm_k0", "params": [f16((64, 128)), f16((64, 128))]},
                    {"name": "tm_k1", "params": [f16((256, 64)), {"dtype": "i8", "shape": [128]},
                                                 {"dtype": "i8", "shape": [128]},
                                                 param((256, 128))]}],
        "launches": [{"kernel": "tm_k0", "grid": [4, 1, 1], "block": [128, 1, 1],
                      "dynamic_shared_memory": 0, "args": [1, 4]},
                     {"kernel": "tm_k1", "grid": [2, 1, 1], "block": [384, 1, 1],
                      "dynamic_shared_memory": 100000, "args": [0, 3, 5, 2]}],
    }


def tmset(key, value):
    return set_(["buffers", 3, "tensor_map", key], value)


def _tm_wraps(j):
    t = j["buffers"][3]["tensor_map"]
    t.update(dims=[64, 1, 1, 1, 1 << 32], strides=[128, 128, 128, (1 << 40) - 16], box=[64, 1, 1, 1, 1])


def _tm_ui8(j):
    j["buffers"][0].update(dtype="ui8", bytes=16384)
    j["kernels"][1]["params"][0]["dtype"] = "ui8"
    j["buffers"][3]["tensor_map"]["element_type"] = "ui8"


# The same cases as RuntimeTest.cpp's RefusesHostileTensorMaps, with the same messages.
TM_HOSTILE = [
    ("unknown key", tmset("interleave", 1), "unknown key 'interleave'"),
    ("missing key", lambda j: j["buffers"][3]["tensor_map"].pop("swizzle"), "missing 'swizzle'"),
    ("missing map", lambda j: j["buffers"][3].pop("tensor_map"), "missing 'tensor_map'"),
    ("map on an input", lambda j: j["buffers"][0].update(tensor_map=j["buffers"][3]["tensor_map"]),
     "has a 'tensor_map' but its role is not tensor_map"),
    ("not an object", set_(["buffers", 3, "tensor_map"], 3), "tensor_map must be an object"),
    ("wrong size", lambda j: j["buffers"][3].update(shape=[64], bytes=64), "a tensor map must be i8[128]"),
    ("wrong dtype", lambda j: j["buffers"][3].update(dtype="f32", shape=[32], bytes=128),
     "a tensor map must be i8[128]"),
    ("zero_init", set_(["buffers", 3, "zero_init"], True), "cannot be zero_init"),
    ("source range", tmset("source", 6), "'source' is 6, out of range"),
    ("source negative", tmset("source", -1), "out of range"),
    ("source bool", tmset("source", True), "must be an integer"),
    ("source is a map", tmset("source", 5), "its source 'map_bt' is a tensor map itself"),
    ("element type", tmset("element_type", "bf16"),
     "element_type 'bf16' is not the dtype of its source 'a' (f16)"),
    ("ui8 source", _tm_ui8, "is not one TMA supports"),
    ("rank 0", tmset("dims", []), "rank 0 is not in 1..5"),
    ("rank 6", tmset("dims", [1] * 6), "more than 5"),
    ("strides count", tmset("strides", [128, 128]), "needs rank - 1 = 1 strides, got 2"),
    ("stride align", tmset("strides", [120]), "strides[0] = 120 bytes is not a positive multiple of 16"),
    ("box count", tmset("box", [64]), "needs 2 box sizes"),
    ("box big", tmset("box", [64, 257]), "box[1] = 257 is not in [1, 256]"),
    ("dim zero", tmset("dims", [0, 256]), "dims[0] = 0 is not in [1, 2^32]"),
    ("dim float", tmset("dims", [64.0, 256]), "must be an integer"),
    ("swizzle", tmset("swizzle", 48), "swizzle 48 is not 0, 32, 64 or 128"),
    ("inner box", tmset("box", [4, 128]), "box[0] * 2 = 8 bytes is not a multiple of 16"),
    ("inner box swizzle", tmset("swizzle", 32), "inner extent of 128 bytes exceeds the swizzle of 32 bytes"),
    ("beyond source", tmset("dims", [64, 257]), "addresses bytes up to 32896 of its source, which has 32768"),
    ("row stride beyond", tmset("strides", [144]), "addresses bytes up to 36848 of its source, which has 32768"),
    ("wraps", _tm_wraps, "addresses bytes up to beyond 2^64"),
]


class TensorMapManifestTest(unittest.TestCase):
    def test_valid(self):
        m = Manifest.parse(json.dumps(tm_valid()))
        self.assertEqual([b.index for b in m.tensor_maps], [3, 5])
        self.assertEqual([b.index for b in m.inputs], [0, 1])
        self.assertEqual([b.index for b in m.scratch], [4])
        self.assertEqual(m.workspace_bytes, 16384)  # maps live in the loader, not the workspace
        t = m.buffers[5].tensor_map
        self.assertEqual((t.source, t.element_type, t.dims, t.strides, t.box, t.swizzle),
                         (4, "f16", (128, 64), (256,), (32, 64), 64))
        self.assertIsNone(m.buffers[4].tensor_map)
        # Maps are not inputs of the op.
        self.assertEqual(schema(m, "tm"), "tm(Tensor in0, Tensor in1) -> Tensor")
        self.assertEqual(output_specs(m, [((256, 64), "f16"), ((64, 128), "f16")]),
                         [((256, 128), "f32")])

    def test_hostile(self):
        for name, mutate, expect in TM_HOSTILE:
            j = copy.deepcopy(tm_valid())
            mutate(j)
            with self.subTest(name):
                with self.assertRaises(ManifestError) as cm:
                    Manifest.parse(json.dumps(j))
                self.assertIn(expect, str(cm.exception))


def sc_valid():
    """leaky_relu with its slope and a shift scalar arguments passed by value, as evo-emit-ptx
    writes it (runtime/unittests/ScalarManifest.h)."""
    def sc(i, name, dtype, nbytes):
        return {"index": i, "name": name, "role": "input", "dtype": dtype, "shape": [],
                "bytes": nbytes, "zero_init": False, "by_value": True}
    return {
        "format": "evo-manifest/1", "name": "leaky", "function": "leaky",
        "ptx": {"file": "leaky.ptx", "bytes": len(PTX), "sha256": hashlib.sha256(PTX).hexdigest()},
        "buffers": [buffer(0, "arg0", "input", (1024,)), sc(1, "arg1", "f32", 4),
                    sc(2, "arg2", "f16", 2), buffer(3, "result0", "output", (1024,))],
        "kernels": [{"name": "leaky_k0", "params": [
            param((1024,)), {"dtype": "f32", "shape": [], "by_value": True},
            {"dtype": "f16", "shape": [], "by_value": True}, param((1024,))]}],
        "launches": [{"kernel": "leaky_k0", "grid": [4, 1, 1], "block": [256, 1, 1],
                      "dynamic_shared_memory": 0, "args": [0, 1, 2, 3]}],
    }


def _drop(d, key):
    d.pop(key)


SC_HOSTILE = [
    ("output by value", lambda j: j["buffers"][3].__setitem__("by_value", True),
     "buffer 3 ('result0'): 'by_value' (a scalar argument, passed by value) needs an input of "
     "shape [], not output f32[1024]"),
    ("tensor by value", lambda j: j["buffers"][0].__setitem__("by_value", True),
     "needs an input of shape [], not input f32[1024]"),
    ("not a boolean", lambda j: j["buffers"][1].__setitem__("by_value", 1),
     "buffer 1 ('arg1'): 'by_value' must be a boolean"),
    ("pointer parameter", lambda j: _drop(j["kernels"][0]["params"][1], "by_value"),
     "launch 0 ('leaky_k0'): parameter 1 is a pointer but buffer 'arg1' is a scalar argument "
     "passed by value"),
    ("value parameter", lambda j: _drop(j["buffers"][2], "by_value"),
     "parameter 2 is a value (by_value) but buffer 'arg2' is a buffer"),
    ("value with a shape", lambda j: j["kernels"][0]["params"][1].__setitem__("shape", [1]),
     "kernel 'leaky_k0': param 1: a value (by_value) has shape [], not f32[1]"),
]


class ScalarArgumentTest(unittest.TestCase):
    """Scalar arguments (docs/architecture.md, "Scalar arguments"): as libevo_runtime."""

    def test_valid(self):
        m = Manifest.parse(json.dumps(sc_valid()))
        self.assertEqual([(b.name, b.by_value) for b in m.inputs],
                         [("arg0", False), ("arg1", True), ("arg2", True)])
        self.assertEqual(m.buffers[2].shape, ())
        self.assertEqual(schema(m, "leaky"), "leaky(Tensor in0, float in1, float in2) -> Tensor")
        self.assertEqual(output_specs(m, [((1024,), "f32"), None, None]), [((1024,), "f32")])
        self.assertEqual(output_specs(m, [((1024,), "f32"), ((), "f32"), None]), [((1024,), "f32")])
        with self.assertRaisesRegex(ValueError, r"input 0 \('arg0'\): expected f32\[1024\], got a number"):
            output_specs(m, [None, None, None])
        j = sc_valid()
        j["buffers"][2]["dtype"] = j["kernels"][0]["params"][2]["dtype"] = "i1"
        j["buffers"][2]["bytes"] = 1
        j["buffers"][1]["dtype"] = j["kernels"][0]["params"][1]["dtype"] = "i64"
        j["buffers"][1]["bytes"] = 8
        self.assertEqual(schema(Manifest.parse(json.dumps(j)), "f"),
                         "f(Tensor in0, int in1, bool in2) -> Tensor")

    def test_hostile(self):
        for name, mutate, expect in SC_HOSTILE:
            j = copy.deepcopy(sc_valid())
            mutate(j)
            with self.subTest(name):
                with self.assertRaises(ManifestError) as cm:
                    Manifest.parse(json.dumps(j))
                self.assertIn(expect, str(cm.exception))
        j = tm_valid()  # no tensor map over a value
        j["buffers"][0].update(by_value=True, shape=[], bytes=2)
        with self.assertRaisesRegex(ManifestError, r"its source 'a' is a scalar argument \(by_value\)"):
            Manifest.parse(json.dumps(j))

    def test_scalar_bits(self):
        bits = evo_runtime.manifest.scalar_bits
        self.assertEqual(bits("f32", 0.5), 0x3F000000)
        self.assertEqual(bits("f32", 1e39), 0x7F800000)
        self.assertEqual(bits("f64", -2), 0xC000000000000000)
        # f16 and bf16 as libevo_runtime rounds them (RuntimeScalars.ValuesAreTheBytesOfTheirDtype).
        for v, want in [(1.0, 0x3C00), (-0.5, 0xB800), (1 + 1 / 2048, 0x3C00), (1 + 3 / 2048, 0x3C02),
                        (65504, 0x7BFF), (65519, 0x7BFF), (65520, 0x7C00), (-1e9, 0xFC00),
                        (5.9604644775390625e-8, 0x0001), (6.103515625e-05, 0x0400), (2e-8, 0)]:
            self.assertEqual(bits("f16", v), want, v)
        self.assertEqual(bits("f16", float("nan")) & 0x7E00, 0x7E00)
        for v, want in [(1.0, 0x3F80), (3.140625, 0x4049), (1 + 1 / 256, 0x3F80), (1e39, 0x7F80)]:
            self.assertEqual(bits("bf16", v), want, v)
        self.assertEqual(bits("i32", -2), 0xFFFFFFFE)
        self.assertEqual(bits("i64", -3), 0xFFFFFFFFFFFFFFFD)
        self.assertEqual(bits("ui8", 255), 255)
        self.assertEqual(bits("i1", True), 1)
        self.assertEqual(bits("i1", 0), 0)
        # Clear errors: a float for an integer, a bool for a number, out of range, not a number.
        with self.assertRaisesRegex(TypeError, "alpha is an i32 scalar: expected an int, got float"):
            bits("i32", 0.5, "alpha")
        with self.assertRaisesRegex(TypeError, "is an f32 scalar: expected a float or an int, got bool"):
            bits("f32", True)
        with self.assertRaisesRegex(TypeError, "is an i8 scalar: expected an int, got bool"):
            bits("i8", True)
        with self.assertRaisesRegex(ValueError, r"is an i8 scalar: 300 is out of its range \[-128, 127\]"):
            bits("i8", 300)
        with self.assertRaisesRegex(ValueError, r"is an i1 scalar: 2 is out of its range \[0, 1\]"):
            bits("i1", 2)
        with self.assertRaisesRegex(TypeError, "expected a float or an int, got str"):
            bits("f16", "1.0")


# --- Constant buffers (role "constant"): bytes in a constants file beside the manifest ---------

def cst_data():
    """lin's constants file: w (f32[64, 32]) at 0, bias (f32[30], 120 bytes) at 8192, zeros up
    to scale (f16[8]) at 8448."""
    w = struct.pack("<2048f", *[i / 64.0 for i in range(2048)])
    bias = struct.pack("<30f", *[-float(i) for i in range(30)])
    scale = struct.pack("<8e", *[0.5 * i for i in range(8)])
    return w + bias + bytes(8448 - 8192 - 120) + scale


def cst_valid(data=None):
    """y = x @ w + bias, scaled: one input, one output and three constant buffers (as the
    manifest evo-emit-ptx writes when the weights exceed inline-constant-bytes)."""
    data = cst_data() if data is None else data

    def buf(i, name, role, dtype, shape, nbytes, offset=None):
        b = {"index": i, "name": name, "role": role, "dtype": dtype, "shape": shape, "bytes": nbytes,
             "zero_init": False}
        if offset is not None:
            b["data"] = {"offset": offset, "bytes": nbytes}
        return b
    return {
        "format": "evo-manifest/1", "name": "lin", "function": "lin",
        "target": {"chip": "sm_90", "features": "+ptx80"},
        "ptx": {"file": "lin.ptx", "bytes": len(PTX), "sha256": hashlib.sha256(PTX).hexdigest()},
        "constants": {"file": "lin.constants.bin", "bytes": len(data),
                      "sha256": hashlib.sha256(data).hexdigest()},
        "buffers": [buf(0, "arg0", "input", "f32", [4, 64], 1024),
                    buf(1, "w", "constant", "f32", [64, 32], 8192, 0),
                    buf(2, "bias", "constant", "f32", [30], 120, 8192),
                    buf(3, "result0", "output", "f32", [4, 30], 480),
                    buf(4, "scale", "constant", "f16", [8], 16, 8448)],
        "kernels": [{"name": "lin_k0", "params": [
            {"dtype": "f32", "shape": [4, 64]}, {"dtype": "f32", "shape": [64, 32]},
            {"dtype": "f32", "shape": [30]}, {"dtype": "f16", "shape": [8]},
            {"dtype": "f32", "shape": [4, 30]}]}],
        "launches": [{"kernel": "lin_k0", "grid": [1, 1, 1], "block": [128, 1, 1],
                      "dynamic_shared_memory": 0, "args": [0, 1, 2, 4, 3]}],
    }


def _cst_with_binary(j):
    j["binaries"] = [{"chip": "sm_90a", "file": "lin.constants.bin", "bytes": 1, "sha256": "0" * 64}]


def _cst_drop_constants(j):
    del j["constants"]


# (name, mutation, the message); runtime/unittests should refuse the same.
HOSTILE_CONSTANTS = [
    ("no data", delete(["buffers", 1, "data"]),
     "buffer 1 ('w'): missing 'data'"),
    ("data not object", set_(["buffers", 1, "data"], [0, 8192]), "buffer 1 ('w'): data must be an object"),
    ("data unknown key", set_(["buffers", 1, "data", "stride"], 4),
     "buffer 1 ('w'): data: unknown key 'stride'"),
    ("data no offset", delete(["buffers", 1, "data", "offset"]), "buffer 1 ('w'): data: missing 'offset'"),
    ("data no bytes", delete(["buffers", 1, "data", "bytes"]), "buffer 1 ('w'): data: missing 'bytes'"),
    ("offset unaligned", set_(["buffers", 2, "data", "offset"], 8200),
     "buffer 2 ('bias'): data: 'offset' 8200 is not a multiple of 256"),
    ("offset negative", set_(["buffers", 1, "data", "offset"], -256),
     "buffer 1 ('w'): data: 'offset' is -256, out of range"),
    ("offset float", set_(["buffers", 1, "data", "offset"], 0.0), "'offset' must be an integer"),
    ("offset bool", set_(["buffers", 1, "data", "offset"], False), "'offset' must be an integer"),
    ("offset huge", set_(["buffers", 1, "data", "offset"], 1 << 41),
     "buffer 1 ('w'): data [2199023255552, 2199023263744) lies outside the constants file"),
    ("offset beyond int64", set_(["buffers", 1, "data", "offset"], 1 << 63),
     "buffer 1 ('w'): data: 'offset' is 9223372036854775808, out of range"),
    ("bytes mismatch", set_(["buffers", 2, "data", "bytes"], 128),
     "buffer 2 ('bias'): data: 'bytes' is not the buffer's size (120)"),
    ("bytes string", set_(["buffers", 2, "data", "bytes"], "120"), "'bytes' must be an integer"),
    ("data on an input", set_(["buffers", 0, "data"], {"offset": 0, "bytes": 1024}),
     "buffer 0 ('arg0'): has 'data' but its role is not constant (only constants' bytes come "
     "from the constants file)"),
    ("data on an output", set_(["buffers", 3, "data"], {"offset": 0, "bytes": 480}),
     "buffer 3 ('result0'): has 'data' but its role is not constant"),
    ("zero_init", set_(["buffers", 1, "zero_init"], True),
     "buffer 1 ('w'): a constant cannot be zero_init (its bytes come from the constants file)"),
    ("by_value", set_(["buffers", 1, "by_value"], True),
     "buffer 1 ('w'): a constant cannot be 'by_value' (the runtime passes its device copy)"),
    ("tensor_map on a constant", set_(["buffers", 1, "tensor_map"], {"source": 0}),
     "buffer 1 ('w'): has a 'tensor_map' but its role is not tensor_map"),
    ("overlap", set_(["buffers", 4, "data", "offset"], 8192),
     "buffer 4 ('scale'): data [8192, 8208) overlaps that of buffer 2 ('bias')"),
    ("overlap inside", set_(["buffers", 2, "data", "offset"], 7936),
     "buffer 2 ('bias'): data [7936, 8056) overlaps that of buffer 1 ('w')"),
    ("same offset", set_(["buffers", 2, "data", "offset"], 0),
     "buffer 2 ('bias'): data [0, 120) overlaps that of buffer 1 ('w')"),
    ("beyond the file", set_(["constants", "bytes"], 8460),
     "buffer 4 ('scale'): data [8448, 8464) lies outside the constants file of 8460 bytes"),
    ("far beyond the file", set_(["buffers", 1, "data", "offset"], 1 << 20),
     "buffer 1 ('w'): data [1048576, 1056768) lies outside the constants file of 8464 bytes"),
    ("no constants", _cst_drop_constants,
     "manifest: buffer 1 ('w') is a constant, but the manifest has no 'constants' (the file of "
     "their bytes)"),
    ("constants null", set_(["constants"], None),  # null is no "constants" (as "binaries")
     "manifest: buffer 1 ('w') is a constant, but the manifest has no 'constants'"),
    ("constants array", set_(["constants"], ["lin.constants.bin"]), "manifest: constants must be an object"),
    ("constants unknown key", set_(["constants", "align"], 256), "manifest: constants: unknown key 'align'"),
    ("constants no file", delete(["constants", "file"]), "manifest: constants: missing 'file'"),
    ("constants no bytes", delete(["constants", "bytes"]), "manifest: constants: missing 'bytes'"),
    ("constants no sha256", delete(["constants", "sha256"]), "manifest: constants: missing 'sha256'"),
    ("constants file escapes", set_(["constants", "file"], "../lin.constants.bin"),
     "manifest: constants: file '../lin.constants.bin' must be a plain file name"),
    ("constants file absolute", set_(["constants", "file"], "/etc/passwd"), "must be a plain file name"),
    ("constants file subdir", set_(["constants", "file"], "w/lin.bin"), "must be a plain file name"),
    ("constants file dotdot", set_(["constants", "file"], ".."), "must be a plain file name"),
    ("constants file empty", set_(["constants", "file"], ""), "must be a plain file name"),
    ("constants file type", set_(["constants", "file"], 3), "manifest: constants: 'file' must be a string"),
    ("constants file is the ptx", set_(["constants", "file"], "lin.ptx"),
     "manifest: constants: file 'lin.ptx' is the PTX's"),
    ("constants file is a cubin", _cst_with_binary,
     "manifest: constants: file 'lin.constants.bin' is the sm_90a cubin's"),
    ("constants bytes zero", set_(["constants", "bytes"], 0), "manifest: constants: 'bytes' is 0, out of range"),
    ("constants bytes huge", set_(["constants", "bytes"], 1 << 41), "out of range"),
    ("constants bytes float", set_(["constants", "bytes"], 8464.0), "'bytes' must be an integer"),
    ("constants sha upper", set_(["constants", "sha256"], "A" * 64),
     "manifest: constants: sha256 must be 64 lowercase hex digits"),
    ("constants sha short", set_(["constants", "sha256"], "abc"), "sha256 must be 64 lowercase hex digits"),
    ("constant passed wrongly", set_(["launches", 0, "args"], [0, 1, 4, 2, 3]),
     "parameter 2 is f32[30] but buffer 'scale' is f16[8]"),
]


class ConstantBufferTest(unittest.TestCase):
    def test_valid(self):
        m = Manifest.parse(json.dumps(cst_valid()))
        self.assertEqual([(b.name, b.dtype, b.shape, b.bytes, b.offset) for b in m.constants],
                         [("w", "f32", (64, 32), 8192, 0), ("bias", "f32", (30,), 120, 8192),
                          ("scale", "f16", (8,), 16, 8448)])
        self.assertTrue(all(b.role == "constant" and not b.zero_init for b in m.constants))
        self.assertEqual((m.constants_file, m.constants_bytes, m.constants_sha256),
                         ("lin.constants.bin", 8464, hashlib.sha256(cst_data()).hexdigest()))
        # Not arguments of a call: inputs are role "input" only; no workspace for them.
        self.assertEqual([b.name for b in m.inputs], ["arg0"])
        self.assertEqual([b.name for b in m.outputs], ["result0"])
        self.assertEqual((m.scratch, m.workspace_bytes), ([], 0))
        self.assertEqual(m.launches[0].args, (0, 1, 2, 4, 3))
        # Launched only with the input: the fake implementation and the op's schema.
        self.assertEqual(output_specs(m, [((4, 64), "f32")]), [((4, 30), "f32")])
        with self.assertRaisesRegex(ValueError, "takes 1 inputs, got 2"):
            output_specs(m, [((4, 64), "f32"), ((64, 32), "f32")])
        self.assertEqual(schema(m, "lin"), "lin(Tensor in0) -> Tensor")
        # Without constants: none, and no constants file.
        m = Manifest.parse(json.dumps(valid()))
        self.assertEqual((m.constants, m.constants_file, m.read_constants()), ([], "", b""))

    def test_tensor_map_over_a_constant(self):
        # TMA over weights: a tensor map's source may be a constant buffer.
        j = cst_valid()
        j["buffers"].append({"index": 5, "name": "map_w", "role": "tensor_map", "dtype": "i8",
                             "shape": [128], "bytes": 128,
                             "tensor_map": {"source": 1, "element_type": "f32", "dims": [32, 64],
                                            "strides": [128], "box": [32, 8], "swizzle": 128}})
        j["kernels"][0]["params"].append({"dtype": "i8", "shape": [128]})
        j["launches"][0]["args"].append(5)
        m = Manifest.parse(json.dumps(j))
        self.assertEqual([b.tensor_map.source for b in m.tensor_maps], [1])
        self.assertEqual([b.name for b in m.inputs], ["arg0"])
        # ... checked against the constant's bytes like any source.
        j["buffers"][5]["tensor_map"]["dims"] = [32, 65]
        with self.assertRaisesRegex(ManifestError, "addresses bytes up to 8320 of its source, "
                                                   "which has 8192"):
            Manifest.parse(json.dumps(j))

    def test_padding_and_order(self):
        # Constants in another order in the file than in the buffers, padding between them
        # and after the last.
        j = cst_valid(bytes(8704))
        for i, offset in [(1, 256), (2, 8448), (4, 0)]:
            j["buffers"][i]["data"]["offset"] = offset
        m = Manifest.parse(json.dumps(j))
        self.assertEqual([b.offset for b in m.constants], [256, 8448, 0])
        self.assertEqual(m.constants_bytes, 8704)
        # Ranges that touch do not overlap; the last may end exactly at the file's end.
        j = cst_valid(bytes(8192 + 256 + 128))
        j["buffers"][2]["data"]["offset"] = 8192
        j["buffers"][4]["data"]["offset"] = 8192 + 256
        j["buffers"][4]["shape"], j["buffers"][4]["bytes"] = [64], 128
        j["buffers"][4]["data"]["bytes"] = 128
        j["kernels"][0]["params"][3]["shape"] = [64]
        m = Manifest.parse(json.dumps(j))
        self.assertEqual([(b.offset, b.bytes) for b in m.constants],
                         [(0, 8192), (8192, 120), (8448, 128)])
        j["buffers"][1]["shape"], j["buffers"][1]["bytes"] = [64, 33], 8448
        j["buffers"][1]["data"]["bytes"] = 8448
        j["kernels"][0]["params"][1]["shape"] = [64, 33]
        with self.assertRaisesRegex(ManifestError, r"buffer 2 \('bias'\): data \[8192, 8312\) "
                                                   r"overlaps that of buffer 1 \('w'\)"):
            Manifest.parse(json.dumps(j))

    def test_hostile(self):
        for name, mutate, expect in HOSTILE_CONSTANTS:
            j = copy.deepcopy(cst_valid())
            mutate(j)
            with self.subTest(name):
                with self.assertRaises(ManifestError) as cm:
                    Manifest.parse(json.dumps(j))
                self.assertIn(expect, str(cm.exception))
        # A "constants" key without any constant buffer (null: none).
        j = valid()
        j["constants"] = cst_valid()["constants"]
        with self.assertRaisesRegex(ManifestError,
                                    "manifest: constants: given, but no buffer has role constant"):
            Manifest.parse(json.dumps(j))
        j["constants"] = {}
        with self.assertRaisesRegex(ManifestError, "given, but no buffer has role constant"):
            Manifest.parse(json.dumps(j))
        j["constants"] = None
        self.assertEqual(Manifest.parse(json.dumps(j)).constants, [])

    def test_constants_file(self):
        d = tempfile.mkdtemp()
        other = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        self.addCleanup(shutil.rmtree, other)
        data = cst_data()
        path = os.path.join(d, "lin.constants.bin")

        def write(content):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
            with open(path, "wb") as f:
                f.write(content)
        with open(os.path.join(d, "lin.json"), "w") as f:
            json.dump(cst_valid(), f)
        with open(os.path.join(d, "lin.ptx"), "wb") as f:
            f.write(PTX)
        write(data)
        m = Manifest.load(os.path.join(d, "lin.json"))
        self.assertEqual(m.read_constants(), data)
        self.assertEqual(m.read_image(), PTX)
        self.assertEqual(m.read_constants(d), data)
        # Each constant's bytes at its offset.
        got = m.read_constants()
        self.assertEqual(struct.unpack("<30f", got[8192:8312])[:3], (0.0, -1.0, -2.0))
        self.assertEqual(struct.unpack("<8e", got[8448:8464])[1], 0.5)
        # Parsed from text: no directory to find it in, unless given one.
        text = json.dumps(cst_valid())
        with self.assertRaisesRegex(ManifestError, "lin: no directory to find lin.constants.bin "
                                                   r"\(the constants file\) in"):
            Manifest.parse(text).read_constants()
        self.assertEqual(Manifest.parse(text, d).read_constants(), data)
        self.assertEqual(Manifest.parse(text).read_constants(d), data)
        # Beside the manifest, not in the working directory.
        cwd = os.getcwd()
        os.chdir(other)
        try:
            with open("lin.constants.bin", "wb") as f:
                f.write(b"\0" * len(data))
            self.assertEqual(Manifest.load(os.path.join(d, "lin.json")).read_constants(), data)
        finally:
            os.chdir(cwd)
        # Wrong size (longer, shorter), wrong content of the right size.
        for content, expect in [
                (data + b"\0", "the constants file has 8465 bytes, the manifest says 8464"),
                (data[:-1], "the constants file has 8463 bytes, the manifest says 8464"),
                (b"", "the constants file has 0 bytes, the manifest says 8464"),
                (data[:100] + b"\x01" + data[101:], "the constants file does not match the "
                                                    "manifest")]:
            write(content)
            with self.subTest(expect):
                with self.assertRaises(ManifestError) as cm:
                    m.read_constants()
                self.assertIn(expect, str(cm.exception))
                self.assertIn(path, str(cm.exception))
        # A symbolic link, even to the right content; a directory; a FIFO (not opened for
        # reading, which would block); nothing.
        os.unlink(path)
        with open(os.path.join(other, "real.bin"), "wb") as f:
            f.write(data)
        os.symlink(os.path.join(other, "real.bin"), path)
        with self.assertRaisesRegex(ManifestError, "lin.constants.bin: is a symbolic link "
                                                   r"\(refused: the files a manifest names must "
                                                   r"lie in its directory\)"):
            m.read_constants()
        os.unlink(path)
        os.symlink("lin.ptx", path)  # a relative link inside the directory too
        with self.assertRaisesRegex(ManifestError, "symbolic link"):
            m.read_constants()
        os.unlink(path)
        with self.assertRaisesRegex(ManifestError, "lin.constants.bin: No such file"):
            m.read_constants()
        os.mkdir(path)
        with self.assertRaisesRegex(ManifestError, "lin.constants.bin: not a regular file"):
            m.read_constants()
        os.rmdir(path)
        os.mkfifo(path)
        with self.assertRaisesRegex(ManifestError, "lin.constants.bin: not a regular file"):
            m.read_constants()
        os.unlink(path)
        # The PTX is still read as before (and the constants file is no image).
        write(data)
        self.assertEqual(m.read_image(), PTX)
        self.assertEqual(m.read_constants(), data)


class TorchOpTest(unittest.TestCase):
    """The parts of register_op that need no torch."""

    def test_fake_shapes(self):
        m = Manifest.parse(json.dumps(valid()))
        self.assertEqual(output_specs(m, [((256, 64), "f32"), ((64, 128), "f32")]),
                         [((256, 128), "f32")])
        with self.assertRaisesRegex(ValueError, r"input 1 \('arg1'\): expected f32\[64, 128\], got f16\[64, 128\]"):
            output_specs(m, [((256, 64), "f32"), ((64, 128), "f16")])
        with self.assertRaisesRegex(ValueError, "takes 2 inputs, got 1"):
            output_specs(m, [((256, 64), "f32")])
        with self.assertRaisesRegex(ValueError, r"expected f32\[256, 64\], got f32\[256, 65\]"):
            output_specs(m, [((256, 65), "f32"), ((64, 128), "f32")])

    def test_schema(self):
        m = Manifest.parse(json.dumps(valid()))
        self.assertEqual(schema(m, "mm_relu"), "mm_relu(Tensor in0, Tensor in1) -> Tensor")
        j = valid()
        j["buffers"][3]["role"] = "output"
        self.assertEqual(schema(Manifest.parse(json.dumps(j)), "f"),
                         "f(Tensor in0, Tensor in1) -> (Tensor, Tensor)")

    def test_qualname(self):
        self.assertEqual(_split_qualname("mylib::row_sum"), ("mylib", "row_sum"))
        for bad in ["row_sum", "a::b::c", "my lib::x", "lib::1x", "lib::", "::x", "class::x",
                    "lib::__x", 3]:
            with self.assertRaises(ValueError, msg=repr(bad)):
                _split_qualname(bad)


class PackagingTest(unittest.TestCase):
    def test_versions_agree(self):
        with open(os.path.join(PYROOT, "pyproject.toml")) as f:
            py = re.search(r'^version = "(.*)"', f.read(), re.M).group(1)
        with open(os.path.join(SRCROOT, "cmake", "EvoVersion.cmake")) as f:
            cm = re.search(r"set\(EVO_VERSION (.*)\)", f.read()).group(1)
        self.assertEqual(py, evo_runtime.__version__)
        self.assertEqual(py, cm)

    def test_backend_builds_a_wheel(self):
        sys.path.insert(0, os.path.join(PYROOT, "build_backend"))
        import evo_build
        d = tempfile.mkdtemp()
        try:
            name = evo_build.build_wheel(d)
            self.assertEqual(name, f"evo_runtime-{evo_runtime.__version__}-py3-none-any.whl")
            with zipfile.ZipFile(os.path.join(d, name)) as z:
                names = z.namelist()
                self.assertIn("evo_runtime/manifest.py", names)
                self.assertIn("evo_runtime/torch_ops.py", names)
                record = z.read(f"evo_runtime-{evo_runtime.__version__}.dist-info/RECORD").decode()
                for line in record.splitlines():
                    path, digest, size = line.rsplit(",", 2)
                    if not digest:
                        continue
                    data = z.read(path)
                    self.assertEqual(int(size), len(data), path)
                    import base64
                    want = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
                    self.assertEqual(digest, "sha256=" + want.decode(), path)
                meta = z.read(f"evo_runtime-{evo_runtime.__version__}.dist-info/METADATA").decode()
                self.assertIn("Name: evo-runtime", meta)
                self.assertIn('Requires-Dist: torch>=2.1; extra == "torch"', meta)
        finally:
            shutil.rmtree(d)


@unittest.skipUnless(os.environ.get("EVO_OPT"), "set $EVO_OPT to parse manifests emitted by evo-opt")
class EmittedTest(unittest.TestCase):
    """Manifests written by evo-emit-ptx parse, and their PTX checks out."""

    def emit(self, source, options=""):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        subprocess.run([os.environ["EVO_OPT"], source, f"--evo-pipeline=output-dir={d} {options}",
                        "-o", os.devnull], check=True)
        name = os.path.splitext(os.path.basename(source))[0]
        m = Manifest.load(os.path.join(d, name + ".json"))
        m.read_image()
        return m

    def test_row_sum(self):
        m = self.emit(os.path.join(SRCROOT, "examples", "row_sum.mlir"))
        self.assertEqual([(b.shape, b.dtype) for b in m.inputs], [((8192, 2048), "f32")])
        self.assertEqual(m.workspace_bytes, 0)

    def test_scratch(self):
        m = self.emit(os.path.join(SRCROOT, "test", "GPU", "Inputs", "mm_relu.mlir"))
        self.assertEqual([b.name for b in m.scratch], ["tmp0"])
        self.assertEqual(m.workspace_bytes, 256 * 128 * 4)
        self.assertEqual(len(m.launches), 2)
        m = self.emit(os.path.join(SRCROOT, "bench", "col_sum.mlir"), "split=8")
        self.assertEqual(len(m.scratch), 1)
        self.assertEqual(len(m.launches), 2)

    def test_constant_buffers(self):
        # A weight over inline-constant-bytes: a constant buffer whose bytes evo-opt writes to
        # <name>.constants.bin; callers pass only the input.
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        src = os.path.join(d, "scale.mlir")
        weights = [0.5 * i - 3.0 for i in range(32)]
        with open(src, "w") as f:
            f.write(f"""func.func @scale(%x: tensor<4x32xf32>) -> tensor<4x32xf32> {{
  %w = arith.constant dense<{weights}> : tensor<32xf32>
  %e = tensor.empty() : tensor<4x32xf32>
  %r = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>,
                       affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}}
      ins(%x, %w : tensor<4x32xf32>, tensor<32xf32>) outs(%e : tensor<4x32xf32>) {{
    ^bb0(%a: f32, %b: f32, %o: f32):
      %y = arith.mulf %a, %b : f32
      linalg.yield %y : f32
  }} -> tensor<4x32xf32>
  return %r : tensor<4x32xf32>
}}
""")
        m = self.emit(src, "inline-constant-bytes=64")
        self.assertEqual([b.shape for b in m.inputs], [(4, 32)])
        self.assertEqual([(c.name, c.shape, c.offset, c.bytes) for c in m.constants],
                         [("const0", (32,), 0, 128)])
        self.assertEqual(m.read_constants(), struct.pack("<32f", *weights))

    def test_chips(self):
        # chips=: a cubin per chip beside the PTX for the lowest, all listed and checked.
        if not shutil.which("ptxas") and not os.path.exists("/usr/local/cuda/bin/ptxas"):
            self.skipTest("chips= needs ptxas")
        m = self.emit(os.path.join(SRCROOT, "examples", "row_sum.mlir"), "chips=sm_80,sm_90a")
        self.assertEqual(m.chip, "sm_80")
        self.assertEqual(m.chips, ["sm_80", "sm_90a"])
        self.assertEqual([b.file for b in m.binaries], ["row_sum.sm_80.cubin", "row_sum.sm_90a.cubin"])
        cubins = m.read_binaries()
        self.assertTrue(all(c.startswith(b"\x7fELF") for c in cubins))
        self.assertEqual(m.image_for(9, 0)[0].chip, "sm_90a")
        self.assertEqual(m.image_for(10, 0), (None, "row_sum.ptx"))

    def test_wgmma_tensor_maps(self):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        src = os.path.join(d, "mm16.mlir")
        with open(src, "w") as f:
            f.write(MATMUL_F16)
        m = self.emit(src, "chip=sm_90a tile-sizes=128,128,64 wgmma=1 stages=4")
        self.assertEqual(len(m.tensor_maps), 2)
        self.assertEqual({m.buffers[b.tensor_map.source].name for b in m.tensor_maps},
                         {"arg0", "arg1"})
        self.assertEqual([(b.shape, b.dtype) for b in m.inputs], [((512, 256), "f16"), ((256, 384), "f16")])


    def test_scalar_arguments(self):
        # The manifest evo-emit-ptx writes for a scalar argument is the one the loaders read.
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        src = os.path.join(d, "leaky.mlir")
        with open(src, "w") as f:
            f.write(LEAKY)
        m = self.emit(src)
        self.assertEqual([(b.name, b.dtype, b.shape, b.by_value) for b in m.inputs],
                         [("arg0", "f32", (4096,), False), ("arg1", "f32", (), True)])
        self.assertEqual(schema(m, "leaky"), "leaky(Tensor in0, float in1) -> Tensor")
        self.assertIn(b".param .f32 leaky_k0_param_1", m.read_image())


LEAKY = """func.func @leaky(%x: tensor<4096xf32>, %alpha: f32) -> tensor<4096xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4096xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      ins(%x : tensor<4096xf32>) outs(%e : tensor<4096xf32>) {
    ^bb0(%v: f32, %o: f32):
      %n = arith.mulf %v, %alpha : f32
      %p = arith.cmpf ogt, %v, %zero : f32
      %y = arith.select %p, %v, %n : f32
      linalg.yield %y : f32
  } -> tensor<4096xf32>
  return %r : tensor<4096xf32>
}
"""


MATMUL_F16 = """func.func @mm16(%a: tensor<512x256xf16>, %b: tensor<256x384xf16>) -> tensor<512x384xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<512x384xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%e : tensor<512x384xf16>) -> tensor<512x384xf16>
  %c = linalg.matmul ins(%a, %b : tensor<512x256xf16>, tensor<256x384xf16>)
                     outs(%acc : tensor<512x384xf16>) -> tensor<512x384xf16>
  return %c : tensor<512x384xf16>
}
"""


if __name__ == "__main__":
    unittest.main()
