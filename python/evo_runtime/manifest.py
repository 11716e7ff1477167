"""The evo-manifest/1 format (docs/architecture.md), parsed and validated without a GPU or torch.

A manifest is untrusted input: every field is checked before it becomes a size, an index, a launch
dimension, a symbol or a file name, with the same limits and messages as libevo_runtime
(runtime/evo-runtime/Manifest.cpp). Keys of buffers, launches and kernel parameters that this
runtime does not know are refused (they could change how a kernel must be launched); other unknown
keys are ignored. Buffers of role "tensor_map" (TMA descriptors the loader encodes,
docs/architecture.md "Tensor maps") are checked with the rules of include/evo/Runtime/TensorMap.h,
repeated below, and the choice of a manifest's cubin or PTX for a GPU (`binaries`, evo-opt's
chips=) with those of include/evo/Runtime/ChipRules.h. Buffers of role "constant" (weights too
large for the PTX) have their bytes in a sidecar file beside the manifest, the root's
"constants", read and checked like the PTX (`read_constants`).
"""

import ctypes
import hashlib
import json
import math
import os
import re
import stat
import struct
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

FORMAT = "evo-manifest/1"
MAX_BUFFER_BYTES = 1 << 40
MAX_MANIFEST_BYTES = 16 << 20
MAX_IMAGE_BYTES = 256 << 20
MAX_RANK = 16
MAX_BUFFERS = 4096
MAX_KERNELS = 4096
MAX_LAUNCHES = 65536
MAX_PARAMS = 512
MAX_GRID_X, MAX_GRID_YZ = 2147483647, 65535
MAX_DYNAMIC_SHARED_MEMORY = 227 * 1024
MAX_BINARIES = 64
WORKSPACE_ALIGNMENT = 256
BUFFER_ALIGNMENT = 16
#: Constant buffers: where each one's bytes start in the constants file is a multiple of this.
CONSTANT_ALIGNMENT = 256
#: The constants file: at most the size of one buffer.
MAX_CONSTANTS_BYTES = MAX_BUFFER_BYTES
#: The roles of buffers; a launch's arguments are buffers of any role.
ROLES = ("input", "output", "scratch", "tensor_map", "constant")
_INT64_MAX = (1 << 63) - 1

#: Element types a manifest may name, with their sizes in bytes.
DTYPE_SIZES = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8, "i8": 1, "i16": 2, "i32": 4, "i64": 8,
               "ui8": 1, "i1": 1}  # i1: a boolean, one byte holding 0 or 1 (torch.bool)

# TMA tensor maps (include/evo/Runtime/TensorMap.h): sizeof(CUtensorMap), the limits of
# cuTensorMapEncodeTiled and the driver's enum values.
TENSOR_MAP_BYTES = 128
TENSOR_MAP_MAX_RANK = 5
#: element type -> (CUtensorMapDataType, bytes)
TMA_ELEMENTS = {"f16": (6, 2), "bf16": (9, 2), "f32": (7, 4), "f64": (8, 8), "i8": (0, 1),
                "i16": (1, 2), "i32": (3, 4), "i64": (5, 8)}
TMA_SUPPORTED_ELEMENTS = "f16, bf16, f32, f64, i8, i16, i32, i64"
TMA_SWIZZLE = {0: 0, 32: 1, 64: 2, 128: 3}  # bytes -> CUtensorMapSwizzle
TMA_INTERLEAVE_NONE, TMA_L2_PROMOTION_256B, TMA_OOB_FILL_NONE = 0, 3, 0

_SYMBOL = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*\Z")


class ManifestError(ValueError):
    """A manifest (or its PTX) that is malformed, inconsistent or out of limits."""


class UnsupportedDeviceError(RuntimeError):
    """None of a manifest's kernel images (cubins, PTX) runs on the GPU."""


# --- Which image runs on which GPU (include/evo/Runtime/ChipRules.h) ---------------------------
_CHIP = re.compile(r"sm_([1-9][0-9]{1,2})([af]?)\Z")


def parse_chip(s):
    """'sm_90a' -> (9, 0, 'a'); None unless sm_<2 or 3 digits>[a|f]."""
    m = _CHIP.match(s) if isinstance(s, str) else None
    if not m:
        return None
    n = int(m.group(1))
    return (n // 10, n % 10, m.group(2))


def cubin_runs_on(chip, major, minor):
    """A cubin for `chip` runs on compute capability major.minor: the same major and a minor no
    newer than the GPU's; an `a` cubin only on exactly its GPU."""
    cmaj, cmin, suffix = chip
    if suffix == "a":
        return (cmaj, cmin) == (major, minor)
    return cmaj == major and cmin <= minor


def ptx_runs_on(chip, major, minor):
    """The driver JIT-compiles PTX for `chip` for compute capability major.minor: any GPU at least
    as new; `f` PTX within its family; `a` PTX only on exactly its GPU."""
    cmaj, cmin, suffix = chip
    if suffix == "a":
        return (cmaj, cmin) == (major, minor)
    if suffix == "f":
        return cmaj == major and cmin <= minor
    return cmaj * 10 + cmin <= major * 10 + minor


def choose_image(binary_chips, ptx_chip, major, minor):
    """(index into binary_chips, or -1 for the PTX; None) or (None, why): among the cubins that
    run on this GPU the newest (the first one made for exactly it, if any), else the PTX when the
    driver can JIT it there (ptx_chip "": assumed to)."""
    best = None
    for i, name in enumerate(binary_chips):
        c = parse_chip(name)
        if c is not None and cubin_runs_on(c, major, minor) and (
                best is None or parse_chip(binary_chips[best])[1] < c[1]):
            best = i
    if best is not None:
        return best, None
    ptx = parse_chip(ptx_chip)
    if not ptx_chip or (ptx and ptx_runs_on(ptx, major, minor)):
        return -1, None
    why = f"no kernel image runs on this GPU (sm_{major * 10 + minor}): "
    if binary_chips:
        why += f"the cubins are for {', '.join(binary_chips)} and "
    why += f"the PTX is for {ptx_chip}"
    if ptx and ptx[2] == "a":
        why += f" (runs only on sm_{ptx[0] * 10 + ptx[1]})"
    elif ptx and ptx[2] == "f":
        why += f" (runs on sm_{ptx[0] * 10 + ptx[1]} and newer of its family)"
    elif ptx:
        why += f" (needs {ptx_chip} or newer)"
    else:
        why += " (not a chip name)"
    return None, why


@dataclass(frozen=True)
class Binary:
    """A cubin of a manifest made for several chips (evo-opt's chips=), beside the manifest."""
    chip: str
    file: str
    bytes: int
    sha256: str


@dataclass(frozen=True)
class TensorMap:
    """The arguments of cuTensorMapEncodeTiled over buffer `source` (elements / bytes, innermost
    dimension first)."""
    source: int
    element_type: str
    dims: Tuple[int, ...]
    strides: Tuple[int, ...]
    box: Tuple[int, ...]
    swizzle: int


@dataclass(frozen=True)
class Buffer:
    index: int
    name: str
    role: str  # "input", "output", "scratch", "tensor_map" or "constant"
    dtype: str
    shape: Tuple[int, ...]
    bytes: int
    zero_init: bool
    #: Scratch buffers: where they lie in the workspace; constants: where their bytes lie in the
    #: constants file ("data": {"offset"}).
    offset: int = 0
    tensor_map: Optional[TensorMap] = None  # role "tensor_map" only
    #: A scalar argument (an input of shape ()): calls pass a number, launches its value.
    by_value: bool = False


def tensor_map_check_shape(dims, strides, box, swizzle):
    """TensorMap.h's checkShape: "" when cuTensorMapEncodeTiled accepts the shape."""
    if not dims or len(dims) > TENSOR_MAP_MAX_RANK:
        return f"rank {len(dims)} is not in 1..5"
    if len(strides) + 1 != len(dims):
        return f"needs rank - 1 = {len(dims) - 1} strides, got {len(strides)}"
    if len(box) != len(dims):
        return f"needs {len(dims)} box sizes (one per dimension), got {len(box)}"
    for i, d in enumerate(dims):
        if d < 1 or d > 1 << 32:
            return f"dims[{i}] = {d} is not in [1, 2^32]"
    for i, st in enumerate(strides):
        if st < 16 or st % 16 or st >= 1 << 40:
            return f"strides[{i}] = {st} bytes is not a positive multiple of 16 below 2^40"
    for i, b in enumerate(box):
        if b < 1 or b > 256:
            return f"box[{i}] = {b} is not in [1, 256]"
    if swizzle not in TMA_SWIZZLE:
        return f"swizzle {swizzle} is not 0, 32, 64 or 128 bytes"
    return ""


def tensor_map_check(dims, strides, box, swizzle, element_bytes, source_bytes):
    """TensorMap.h's check: the shape, the box's inner extent, and every byte addressed inside
    the source."""
    err = tensor_map_check_shape(dims, strides, box, swizzle)
    if err:
        return err
    inner = box[0] * element_bytes
    if inner % 16:
        return (f"the box's inner extent box[0] * {element_bytes} = {inner} bytes is not a "
                "multiple of 16")
    if swizzle > 0 and inner > swizzle:
        return (f"the box's inner extent of {inner} bytes exceeds the swizzle of {swizzle} "
                "bytes")
    extent = dims[0] * element_bytes + sum((d - 1) * st for d, st in zip(dims[1:], strides))
    if extent >= 1 << 64:
        return f"addresses bytes up to beyond 2^64 of its source, which has {source_bytes}"
    if extent > source_bytes:
        return f"addresses bytes up to {extent} of its source, which has {source_bytes}"
    return ""


@dataclass(frozen=True)
class Launch:
    kernel: str
    kernel_index: int
    grid: Tuple[int, int, int]
    block: Tuple[int, int, int]
    dynamic_shared_memory: int
    args: Tuple[int, ...]


def _quote(s):
    text = "".join(c if 0x20 <= ord(c) < 0x7F and c not in "'\\" else "\\x%02x" % (ord(c) & 0xFF)
                   for c in s[:64])
    return "'" + text + ("..." if len(s) > 64 else "") + "'"


def is_symbol(s):
    return isinstance(s, str) and 0 < len(s) <= 200 and s.isascii() and bool(_SYMBOL.match(s))


def is_plain_file_name(s):
    return (isinstance(s, str) and 0 < len(s) <= 255 and s not in (".", "..")
            and not any(c in "/\\" or ord(c) < 0x20 or ord(c) == 0x7F for c in s))


def _field(obj, key, where):
    if key not in obj:
        raise ManifestError(f"{where}: missing '{key}'")
    return obj[key]


def _str(obj, key, where, max_len=4096):
    v = _field(obj, key, where)
    if not isinstance(v, str):
        raise ManifestError(f"{where}: '{key}' must be a string")
    if len(v.encode("utf-8", "surrogatepass")) > max_len:
        raise ManifestError(f"{where}: '{key}' is longer than {max_len} bytes")
    return v


def _sha256(obj, where):
    v = _str(obj, "sha256", where, 64)
    if len(v) != 64 or any(c not in "0123456789abcdef" for c in v):
        raise ManifestError(f"{where}: sha256 must be 64 lowercase hex digits")
    return v


def _opt_str(obj, key, where):
    if obj.get(key) is None:
        return ""
    return _str(obj, key, where, 256)


def _int(v, what, lo, hi):
    if type(v) is not int:  # not bool, not float
        raise ManifestError(f"{what} must be an integer")
    if v < lo or v > hi:
        raise ManifestError(f"{what} is {v}, out of range [{lo}, {hi}]")
    return v


def _int_field(obj, key, where, lo, hi):
    return _int(_field(obj, key, where), f"{where}: '{key}'", lo, hi)


def _array(obj, key, where, max_len):
    v = _field(obj, key, where)
    if not isinstance(v, list):
        raise ManifestError(f"{where}: '{key}' must be an array")
    if len(v) > max_len:
        raise ManifestError(f"{where}: '{key}' has {len(v)} entries, more than {max_len}")
    return v


def _object(v, where):
    if not isinstance(v, dict):
        raise ManifestError(f"{where} must be an object")


def _only_keys(obj, known, where):
    for k in obj:
        if k not in known:
            raise ManifestError(
                f"{where}: unknown key {_quote(k)} (a manifest newer than this runtime? it may need "
                "tensor maps or other launch arguments this runtime cannot build)")


def _dtype(obj, where):
    s = _str(obj, "dtype", where, 64)
    if s not in DTYPE_SIZES:
        raise ManifestError(f"{where}: unsupported dtype {_quote(s)}")
    return s


def _shape(obj, where, element_bytes):
    dims = _array(obj, "shape", where, MAX_RANK)
    count = 1
    shape = []
    for i, d in enumerate(dims):
        d = _int(d, f"{where}: shape[{i}]", 1, MAX_BUFFER_BYTES)
        if count > MAX_BUFFER_BYTES // d:
            raise ManifestError(f"{where}: shape has more than 2^40 elements")
        count *= d
        shape.append(d)
    if count > MAX_BUFFER_BYTES // element_bytes:
        raise ManifestError(f"{where}: buffer larger than 1 TiB")
    return tuple(shape), count * element_bytes


def _flag(obj, key, where):
    v = obj.get(key, False)
    if type(v) is not bool:
        raise ManifestError(f"{where}: '{key}' must be a boolean")
    return v


def _round_float_bits(v, exp_bits, man_bits):
    """`v` rounded to the binary float of `exp_bits` and `man_bits` (ties to even, subnormals
    kept, overflow to infinity, NaN quiet): f16 (5, 10), bf16 (8, 7); as libevo_runtime's
    TensorRef::scalar."""
    sign = 1 if math.copysign(1.0, v) < 0 else 0
    exp_max = (1 << exp_bits) - 1
    bias = (1 << (exp_bits - 1)) - 1
    a = abs(v)
    if math.isnan(v):
        mag = (exp_max << man_bits) | (1 << (man_bits - 1))
    elif math.isinf(a):
        mag = exp_max << man_bits
    elif a == 0:
        mag = 0
    else:
        e = max(math.frexp(a)[1] - 1, 1 - bias)  # a in [2^e, 2^(e+1)), or subnormal
        q = round(math.ldexp(a, man_bits - e))  # round() ties to even
        if q >> (man_bits + 1):
            q >>= 1
            e += 1
        if not q >> man_bits:
            mag = q
        elif e + bias >= exp_max:
            mag = exp_max << man_bits
        else:
            mag = ((e + bias) << man_bits) | (q & ((1 << man_bits) - 1))
    return (sign << (exp_bits + man_bits)) | mag


_INT_RANGES = {"i8": (-(1 << 7), (1 << 7) - 1), "i16": (-(1 << 15), (1 << 15) - 1),
               "i32": (-(1 << 31), (1 << 31) - 1), "i64": (-(1 << 63), (1 << 63) - 1),
               "ui8": (0, 255), "i1": (0, 1)}


def scalar_bits(dtype, value, what="a scalar"):
    """The bytes of a scalar argument of `dtype` (a manifest input with "by_value") as an
    unsigned int, little-endian: what a launch passes in the kernel's parameter. Floats take a
    Python int or float (rounded to the nearest value of the dtype, ties to even; beyond the
    largest finite value it is infinity); integers an int in the dtype's range; i1 a bool (or 0
    or 1). Anything else is a TypeError or a ValueError naming `what`."""
    if dtype in ("f16", "bf16", "f32", "f64"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"{what} is an {dtype} scalar: expected a float or an int, got "
                            f"{type(value).__name__}")
        v = float(value)
        if dtype == "f64":
            return struct.unpack("<Q", struct.pack("<d", v))[0]
        if dtype == "f32":
            return struct.unpack("<I", bytes(ctypes.c_float(v)))[0]
        return _round_float_bits(v, 5, 10) if dtype == "f16" else _round_float_bits(v, 8, 7)
    if dtype not in _INT_RANGES:
        raise ManifestError(f"{what}: unsupported dtype {_quote(dtype)}")
    if not isinstance(value, int) or (isinstance(value, bool) and dtype != "i1"):
        expected = "a bool" if dtype == "i1" else "an int"
        raise TypeError(f"{what} is an {dtype} scalar: expected {expected}, got "
                        f"{type(value).__name__}")
    lo, hi = _INT_RANGES[dtype]
    if not lo <= value <= hi:
        raise ValueError(f"{what} is an {dtype} scalar: {value} is out of its range [{lo}, {hi}]")
    return value & ((1 << (8 * DTYPE_SIZES[dtype])) - 1)


def describe(dtype, shape):
    return f"{dtype}[{', '.join(str(d) for d in shape)}]"


class Manifest:
    """A parsed and validated manifest. `base_dir` is where its PTX file (its cubins, its
    constants file) is looked up."""

    def __init__(self, raw, base_dir=None):
        self.raw = raw
        self.base_dir = base_dir
        self._parse(raw)

    @classmethod
    def parse(cls, text, base_dir=None):
        """From manifest text (str or bytes)."""
        if isinstance(text, str):
            text = text.encode("utf-8", "surrogatepass")
        if len(text) > MAX_MANIFEST_BYTES:
            raise ManifestError(f"manifest larger than {MAX_MANIFEST_BYTES} bytes")
        try:
            raw = json.loads(text.decode("utf-8"))
        except RecursionError:
            raise ManifestError("manifest nests too deeply") from None
        except (ValueError, UnicodeDecodeError) as e:
            raise ManifestError(f"manifest is not valid JSON: {e}") from None
        return cls(raw, base_dir)

    @classmethod
    def load(cls, path):
        """Reads and parses a manifest file; its PTX is looked up in the same directory."""
        path = os.fspath(path)
        try:
            with open(path, "rb") as f:
                text = f.read(MAX_MANIFEST_BYTES + 1)
        except OSError as e:
            raise ManifestError(f"{path}: {e.strerror}") from None
        try:
            return cls.parse(text, os.path.dirname(os.path.abspath(path)))
        except ManifestError as e:
            raise ManifestError(f"{path}: {e}") from None

    # ----------------------------------------------------------------------------------------
    def _parse(self, root):
        _object(root, "manifest")
        fmt = _str(root, "format", "manifest", 64)
        if fmt != FORMAT:
            raise ManifestError(f"not an evo manifest: format is {_quote(fmt)}, expected '{FORMAT}'")
        self.name = _str(root, "name", "manifest")
        if not is_symbol(self.name):
            raise ManifestError(f"manifest: name {_quote(self.name)} is not a valid symbol "
                                "([A-Za-z_][A-Za-z0-9_$]*, at most 200 bytes)")
        self.function = _opt_str(root, "function", "manifest")
        self.chip = self.features = ""
        target = root.get("target")
        if target is not None:
            _object(target, "manifest: 'target'")
            self.chip = _opt_str(target, "chip", "manifest: target")
            self.features = _opt_str(target, "features", "manifest: target")
        #: target.chips: every chip a cubin was made for (the PTX is for `chip`).
        self.chips = []
        if target is not None and target.get("chips") is not None:
            for i, c in enumerate(_array(target, "chips", "manifest: target", MAX_BINARIES)):
                if parse_chip(c) is None:
                    raise ManifestError(f"manifest: target: chips[{i}] is not a chip name (sm_XY, "
                                        "sm_XYa or sm_XYf)")
                self.chips.append(c)

        ptx = _field(root, "ptx", "manifest")
        _object(ptx, "manifest: 'ptx'")
        self.ptx_file = _str(ptx, "file", "manifest: ptx", 255)
        if not is_plain_file_name(self.ptx_file):
            raise ManifestError(f"manifest: ptx file {_quote(self.ptx_file)} must be a plain file "
                                "name in the manifest's directory (no '/', not '.' or '..')")
        self.ptx_bytes = _int_field(ptx, "bytes", "manifest: ptx", 0, MAX_IMAGE_BYTES)
        self.ptx_sha256 = _str(ptx, "sha256", "manifest: ptx", 64)
        if len(self.ptx_sha256) != 64 or any(c not in "0123456789abcdef" for c in self.ptx_sha256):
            raise ManifestError("manifest: ptx sha256 must be 64 lowercase hex digits")

        # A cubin per chip (evo-opt's chips=), files beside the PTX; the loader picks one per GPU.
        self.binaries: List[Binary] = []
        if root.get("binaries") is not None:
            for i, b in enumerate(_array(root, "binaries", "manifest", MAX_BINARIES)):
                where = f"binary {i}"
                _object(b, where)
                _only_keys(b, ("chip", "file", "bytes", "sha256"), where)
                chip = _str(b, "chip", where, 16)
                if parse_chip(chip) is None:
                    raise ManifestError(f"{where}: chip {_quote(chip)} is not a chip name (sm_XY, "
                                        "sm_XYa or sm_XYf)")
                where = f"binary {i} ({chip})"
                file = _str(b, "file", where, 255)
                if not is_plain_file_name(file):
                    raise ManifestError(f"{where}: file {_quote(file)} must be a plain file name in "
                                        "the manifest's directory (no '/', not '.' or '..')")
                nbytes = _int_field(b, "bytes", where, 1, MAX_IMAGE_BYTES)
                sha = _str(b, "sha256", where, 64)
                if len(sha) != 64 or any(c not in "0123456789abcdef" for c in sha):
                    raise ManifestError(f"{where}: sha256 must be 64 lowercase hex digits")
                if file == self.ptx_file:
                    raise ManifestError(f"{where}: file {_quote(file)} is the PTX's")
                for other in self.binaries:
                    if other.chip == chip:
                        raise ManifestError(f"{where}: a second cubin for {chip}")
                    if other.file == file:
                        raise ManifestError(f"{where}: file {_quote(file)} is also {other.chip}'s")
                self.binaries.append(Binary(chip, file, nbytes, sha))

        self._parse_buffers(root)
        self._parse_constants(root)
        params, index = self._parse_kernels(root)
        self._parse_launches(root, params, index)

    def _parse_buffers(self, root):
        """Buffers, in ABI order; tensor maps against their sources; the workspace layout."""
        buffers = []
        raw_buffers = _array(root, "buffers", "manifest", MAX_BUFFERS)
        for i, b in enumerate(raw_buffers):
            where = f"buffer {i}"
            _object(b, where)
            _only_keys(b, ("index", "name", "role", "dtype", "shape", "bytes", "zero_init",
                           "tensor_map", "by_value", "data"), where)
            if _int_field(b, "index", where, 0, MAX_BUFFERS) != i:
                raise ManifestError(f"{where}: 'index' must equal its position in 'buffers'")
            name = _str(b, "name", where, 256)
            if not is_symbol(name):
                raise ManifestError(f"{where}: name {_quote(name)} is not a valid symbol")
            where = f"buffer {i} ('{name}')"
            role = _str(b, "role", where, 16)
            if role not in ROLES:
                raise ManifestError(f"{where}: role {_quote(role)} is not input, output, scratch, "
                                    "tensor_map or constant")
            dtype = _dtype(b, where)
            shape, nbytes = _shape(b, where, DTYPE_SIZES[dtype])
            if _int_field(b, "bytes", where, 0, MAX_BUFFER_BYTES) != nbytes:
                raise ManifestError(f"{where}: 'bytes' is not the size of its shape and dtype ({nbytes})")
            zero = b.get("zero_init", False)
            if type(zero) is not bool:
                raise ManifestError(f"{where}: 'zero_init' must be a boolean")
            if zero and role == "input":
                raise ManifestError(f"{where}: an input cannot be zero_init (the runtime never writes inputs)")
            by_value = _flag(b, "by_value", where)
            offset = 0
            if role == "constant":
                offset = self._constant_data(b, nbytes, zero, by_value, where)
            elif "data" in b:
                raise ManifestError(f"{where}: has 'data' but its role is not constant (only "
                                    "constants' bytes come from the constants file)")
            if by_value and (role != "input" or shape):
                raise ManifestError(f"{where}: 'by_value' (a scalar argument, passed by value) needs "
                                    f"an input of shape [], not {role} {describe(dtype, shape)}")
            tmap = None
            if role == "tensor_map":
                tmap = self._tensor_map(b, dtype, shape, zero, where, len(raw_buffers))
            elif "tensor_map" in b:
                raise ManifestError(f"{where}: has a 'tensor_map' but its role is not tensor_map")
            buffers.append(Buffer(i, name, role, dtype, shape, nbytes, zero, offset, tmap, by_value))
        # Tensor maps against their sources (which may come later in the list), so that no map
        # lets TMA reach beyond the buffer it is encoded over.
        for b in buffers:
            if b.tensor_map is None:
                continue
            t = b.tensor_map
            where = f"buffer {b.index} ('{b.name}'): tensor_map"
            src = buffers[t.source]
            if src.role == "tensor_map":
                raise ManifestError(f"{where}: its source '{src.name}' is a tensor map itself")
            if src.by_value:
                raise ManifestError(f"{where}: its source '{src.name}' is a scalar argument (by_value)")
            if t.element_type != src.dtype:
                raise ManifestError(f"{where}: element_type {_quote(t.element_type)} is not the "
                                    f"dtype of its source '{src.name}' ({src.dtype})")
            if t.element_type not in TMA_ELEMENTS:
                raise ManifestError(f"{where}: element type {_quote(t.element_type)} is not one TMA "
                                    f"supports ({TMA_SUPPORTED_ELEMENTS})")
            why = tensor_map_check(t.dims, t.strides, t.box, t.swizzle,
                                   TMA_ELEMENTS[t.element_type][1], src.bytes)
            if why:
                raise ManifestError(f"{where} over '{src.name}': {why}")
        offset = 0
        for i, b in enumerate(buffers):
            if b.role == "scratch":
                buffers[i] = Buffer(b.index, b.name, b.role, b.dtype, b.shape, b.bytes, b.zero_init,
                                    offset)
                offset += -(-b.bytes // WORKSPACE_ALIGNMENT) * WORKSPACE_ALIGNMENT
        self.buffers: List[Buffer] = buffers
        self.workspace_bytes = offset
        self.inputs = [b for b in buffers if b.role == "input"]
        self.outputs = [b for b in buffers if b.role == "output"]
        self.scratch = [b for b in buffers if b.role == "scratch"]
        #: Buffers of role "tensor_map": built by the loader at every call, not passed by callers.
        self.tensor_maps = [b for b in buffers if b.role == "tensor_map"]
        #: Buffers of role "constant": uploaded by the loader once per device, not passed by
        #: callers; their bytes are in the constants file.
        self.constants = [b for b in buffers if b.role == "constant"]

    @staticmethod
    def _constant_data(b, nbytes, zero, by_value, where):
        """A constant's "data": where its bytes lie in the constants file (the offset); checked
        against the file's size and the other constants once the root's "constants" is read."""
        if zero:
            raise ManifestError(f"{where}: a constant cannot be zero_init (its bytes come from "
                                "the constants file)")
        if by_value:
            raise ManifestError(f"{where}: a constant cannot be 'by_value' (the runtime passes "
                                "its device copy)")
        d = _field(b, "data", where)
        dw = f"{where}: data"
        _object(d, dw)
        _only_keys(d, ("offset", "bytes"), dw)
        offset = _int_field(d, "offset", dw, 0, _INT64_MAX)
        if _int_field(d, "bytes", dw, 0, _INT64_MAX) != nbytes:
            raise ManifestError(f"{dw}: 'bytes' is not the buffer's size ({nbytes})")
        if offset % CONSTANT_ALIGNMENT:
            raise ManifestError(f"{dw}: 'offset' {offset} is not a multiple of "
                                f"{CONSTANT_ALIGNMENT}")
        return offset

    def _parse_constants(self, root):
        """The root's "constants" (the file of the constant buffers' bytes), present exactly
        when some buffer is a constant (null counts as absent); every constant's bytes inside
        it, none overlapping another's."""
        self.constants_file, self.constants_bytes, self.constants_sha256 = "", 0, ""
        c = root.get("constants")
        if c is None:
            if self.constants:
                b = self.constants[0]
                raise ManifestError(f"manifest: buffer {b.index} ('{b.name}') is a constant, but "
                                    "the manifest has no 'constants' (the file of their bytes)")
            return
        where = "manifest: constants"
        if not self.constants:
            raise ManifestError(f"{where}: given, but no buffer has role constant")
        _object(c, where)
        _only_keys(c, ("file", "bytes", "sha256"), where)
        file = _str(c, "file", where, 255)
        if not is_plain_file_name(file):
            raise ManifestError(f"{where}: file {_quote(file)} must be a plain file name in the "
                                "manifest's directory (no '/', not '.' or '..')")
        size = _int_field(c, "bytes", where, 1, MAX_CONSTANTS_BYTES)
        sha = _sha256(c, where)
        if file == self.ptx_file:
            raise ManifestError(f"{where}: file {_quote(file)} is the PTX's")
        for other in self.binaries:
            if other.file == file:
                raise ManifestError(f"{where}: file {_quote(file)} is the {other.chip} cubin's")
        prev = None
        for b in sorted(self.constants, key=lambda b: (b.offset, b.index)):
            span = f"[{b.offset}, {b.offset + b.bytes})"
            if b.offset + b.bytes > size:
                raise ManifestError(f"buffer {b.index} ('{b.name}'): data {span} lies outside the "
                                    f"constants file of {size} bytes")
            if prev is not None and b.offset < prev.offset + prev.bytes:
                raise ManifestError(f"buffer {b.index} ('{b.name}'): data {span} overlaps that of "
                                    f"buffer {prev.index} ('{prev.name}')")
            prev = b
        self.constants_file, self.constants_bytes, self.constants_sha256 = file, size, sha

    def _parse_kernels(self, root):
        """Kernels: their parameter lists (dtype, shape, by_value), which check every launch."""
        kernels, params, index = [], [], {}
        for i, k in enumerate(_array(root, "kernels", "manifest", MAX_KERNELS)):
            where = f"kernel {i}"
            _object(k, where)
            name = _str(k, "name", where, 256)
            if not is_symbol(name):
                raise ManifestError(f"{where}: name {_quote(name)} is not a valid PTX symbol")
            if name in index:
                raise ManifestError(f"{where}: kernel '{name}' is listed twice")
            index[name] = i
            where = f"kernel '{name}'"
            plist = []
            for j, p in enumerate(_array(k, "params", where, MAX_PARAMS)):
                pw = f"{where}: param {j}"
                _object(p, pw)
                # Every parameter is a device pointer (tensor maps too: buffers of their own), or
                # a scalar's value (by_value).
                _only_keys(p, ("dtype", "shape", "by_value"), pw)
                dt = _dtype(p, pw)
                shape = _shape(p, pw, DTYPE_SIZES[dt])[0]
                value = _flag(p, "by_value", pw)
                if value and shape:
                    raise ManifestError(f"{pw}: a value (by_value) has shape [], not "
                                        f"{describe(dt, shape)}")
                plist.append((dt, shape, value))
            kernels.append(name)
            params.append(plist)
        self.kernels = kernels
        return params, index

    def _parse_launches(self, root, params, index):
        """Launches: within CUDA's limits, each passing buffers its kernel's parameters accept;
        every output is written by one."""
        buffers = self.buffers
        tasks = root.get("tasks", [])
        if not isinstance(tasks, list):
            raise ManifestError("manifest: 'tasks' must be an array")
        launches = []
        written = set()
        raw_launches = _array(root, "launches", "manifest", MAX_LAUNCHES)
        if not raw_launches:
            raise ManifestError("manifest has no launches (a gpu.module without a launch plan "
                                "cannot be run)")
        for i, l in enumerate(raw_launches):
            where = f"launch {i}"
            _object(l, where)
            _only_keys(l, ("kernel", "task", "grid", "block", "dynamic_shared_memory", "args"), where)
            kernel = _str(l, "kernel", where, 256)
            k = index.get(kernel)
            if k is None:
                raise ManifestError(f"{where}: kernel {_quote(kernel)} is not listed in 'kernels'")
            where = f"launch {i} ('{kernel}')"
            if "task" in l and tasks:
                _int_field(l, "task", where, 0, len(tasks) - 1)
            grid, block = _array(l, "grid", where, 3), _array(l, "block", where, 3)
            if len(grid) != 3 or len(block) != 3:
                raise ManifestError(f"{where}: 'grid' and 'block' need 3 dimensions")
            g = (_int(grid[0], f"{where}: grid x", 1, MAX_GRID_X),
                 _int(grid[1], f"{where}: grid y", 1, MAX_GRID_YZ),
                 _int(grid[2], f"{where}: grid z", 1, MAX_GRID_YZ))
            bl = (_int(block[0], f"{where}: block x", 1, 1024),
                  _int(block[1], f"{where}: block y", 1, 1024),
                  _int(block[2], f"{where}: block z", 1, 64))
            if bl[0] * bl[1] * bl[2] > 1024:
                raise ManifestError(f"{where}: a block of more than 1024 threads")
            smem = _int_field(l, "dynamic_shared_memory", where, 0, MAX_DYNAMIC_SHARED_MEMORY)
            args = _array(l, "args", where, MAX_PARAMS)
            want = params[k]
            if len(args) != len(want):
                raise ManifestError(f"{where}: passes {len(args)} buffers to a kernel of "
                                    f"{len(want)} parameters")
            idx = []
            for j, a in enumerate(args):
                a = _int(a, f"{where}: args[{j}]", 0, len(buffers) - 1)
                b = buffers[a]
                if (b.dtype, b.shape) != want[j][:2]:
                    raise ManifestError(f"{where}: parameter {j} is {describe(*want[j][:2])} but "
                                        f"buffer '{b.name}' is {describe(b.dtype, b.shape)}")
                if b.by_value != want[j][2]:
                    raise ManifestError(
                        f"{where}: parameter {j} is "
                        f"{'a value (by_value)' if want[j][2] else 'a pointer'} but buffer "
                        f"'{b.name}' is "
                        f"{'a scalar argument passed by value' if b.by_value else 'a buffer'}")
                written.add(a)
                idx.append(a)
            launches.append(Launch(kernel, k, g, bl, smem, tuple(idx)))
        for b in self.outputs:
            if b.index not in written:
                raise ManifestError(f"output buffer '{b.name}' is passed to no launch (it would "
                                    "never be written)")
        self.launches: List[Launch] = launches

    @staticmethod
    def _tensor_map(b, dtype, shape, zero, where, num_buffers):
        """The "tensor_map" object of a buffer of role tensor_map (a 128-byte i8 buffer); the
        checks against its source come once every buffer is known."""
        if dtype != "i8" or shape != (TENSOR_MAP_BYTES,):
            raise ManifestError(f"{where}: a tensor map must be i8[128] (a CUtensorMap), not "
                                f"{describe(dtype, shape)}")
        if zero:
            raise ManifestError(f"{where}: a tensor map cannot be zero_init (the runtime encodes it)")
        t = _field(b, "tensor_map", where)
        tw = f"{where}: tensor_map"
        _object(t, tw)
        _only_keys(t, ("source", "element_type", "dims", "strides", "box", "swizzle"), tw)
        source = _int_field(t, "source", tw, 0, num_buffers - 1)
        element_type = _str(t, "element_type", tw, 16)

        def sizes(key):
            return tuple(_int(v, f"{tw}: {key}[{i}]", 0, 1 << 40)
                         for i, v in enumerate(_array(t, key, tw, TENSOR_MAP_MAX_RANK)))
        dims, strides, box = sizes("dims"), sizes("strides"), sizes("box")
        swizzle = _int_field(t, "swizzle", tw, 0, 128)
        why = tensor_map_check_shape(dims, strides, box, swizzle)
        if why:
            raise ManifestError(f"{tw}: {why}")
        return TensorMap(source, element_type, dims, strides, box, swizzle)

    # ----------------------------------------------------------------------------------------
    def read_image(self, base_dir: Optional[str] = None) -> bytes:
        """The PTX named by the manifest: a plain file in its directory, not a symbolic link, of
        the size and sha256 the manifest states."""
        return self._read_checked(base_dir, self.ptx_file, "the PTX", self.ptx_bytes,
                                  self.ptx_sha256)

    def read_binaries(self, base_dir: Optional[str] = None) -> List[bytes]:
        """The cubins of `binaries`, in order, each checked as read_image checks the PTX."""
        return [self._read_checked(base_dir, b.file, f"the {b.chip} cubin", b.bytes, b.sha256)
                for b in self.binaries]

    def read_constants(self, base_dir: Optional[str] = None) -> bytes:
        """The constants file (the bytes of every constant buffer, each at its offset), checked
        as read_image checks the PTX; b"" for a manifest without constants. A manifest parsed
        from text without a directory cannot give it (a ManifestError)."""
        if not self.constants:
            return b""
        return self._read_checked(base_dir, self.constants_file, "the constants file",
                                  self.constants_bytes, self.constants_sha256, MAX_CONSTANTS_BYTES)

    def image_for(self, major: int, minor: int):
        """The image launches on a GPU of compute capability major.minor use, as (Binary, None)
        for a cubin or (None, ptx_file) for the PTX (JIT); UnsupportedDeviceError when none runs
        there. A manifest without `binaries` always gives its PTX."""
        if not self.binaries:
            return None, self.ptx_file
        index, why = choose_image([b.chip for b in self.binaries], self.chip, major, minor)
        if index is None:
            raise UnsupportedDeviceError(f"{self.name}: {why}")
        return (self.binaries[index], None) if index >= 0 else (None, self.ptx_file)

    def _read_checked(self, base_dir, file, what, nbytes, sha256, limit=MAX_IMAGE_BYTES) -> bytes:
        """`file` in the manifest's directory (or base_dir): opened without following a symbolic
        link, a regular file of at most `limit` bytes, exactly `nbytes` long, of this sha256."""
        base = base_dir if base_dir is not None else self.base_dir
        if base is None:
            raise ManifestError(f"{self.name}: no directory to find {file} ({what}) in (a manifest "
                                "parsed from text needs base_dir)")
        path = os.path.join(base, file)
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | \
            getattr(os, "O_CLOEXEC", 0)
        try:
            dir_fd = os.open(base, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        except OSError as e:
            raise ManifestError(f"{base}: {e.strerror}") from None
        try:
            try:
                fd = os.open(file, flags, dir_fd=dir_fd)
            except OSError as e:
                if e.errno == getattr(os, "ELOOP", 40) or os.path.islink(path):
                    raise ManifestError(f"{path}: is a symbolic link (refused: the files a "
                                        "manifest names must lie in its directory)") from None
                raise ManifestError(f"{path}: {e.strerror}") from None
        finally:
            os.close(dir_fd)
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            os.close(fd)
            raise ManifestError(f"{path}: not a regular file")
        with os.fdopen(fd, "rb") as f:
            if st.st_size > limit:
                raise ManifestError(f"{path}: larger than {limit} bytes")
            if st.st_size != nbytes:  # refused before reading it
                raise ManifestError(f"{path}: {what} has {st.st_size} bytes, the manifest says "
                                    f"{nbytes}")
            # One byte more than fstat says: a file that grew since is refused below.
            data = f.read(st.st_size + 1)
        if len(data) != nbytes:
            raise ManifestError(f"{path}: {what} has {len(data)} bytes, the manifest says "
                                f"{nbytes}")
        digest = hashlib.sha256(data).hexdigest()
        if digest != sha256:
            raise ManifestError(f"{path}: {what} does not match the manifest (sha256 {digest}, "
                                f"the manifest says {sha256})")
        return data

    def check_inputs(self, specs: Sequence[Optional[Tuple[Sequence[int], str]]]):
        """Checks (shape, dtype-name) pairs against the inputs (None for a number given to a
        scalar argument); returns the outputs' (shape, dtype-name) pairs. What a fake (meta)
        implementation needs, without torch."""
        if len(specs) != len(self.inputs):
            raise ValueError(f"{self.name} takes {len(self.inputs)} inputs, got {len(specs)}")
        for i, (spec, b) in enumerate(zip(specs, self.inputs)):
            if b.by_value and spec is None:  # a scalar argument given as a number
                continue
            if spec is None:
                raise ValueError(f"{self.name}: input {i} ('{b.name}'): expected "
                                 f"{describe(b.dtype, b.shape)}, got a number")
            shape, dtype = spec
            if tuple(shape) != b.shape or dtype != b.dtype:
                raise ValueError(f"{self.name}: input {i} ('{b.name}'): expected "
                                 f"{describe(b.dtype, b.shape)}, got {describe(dtype, tuple(shape))}")
        return [(b.shape, b.dtype) for b in self.outputs]
