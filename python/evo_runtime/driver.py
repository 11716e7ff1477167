"""The few CUDA driver API calls evo_runtime needs, through ctypes (no CUDA Python package).

$EVO_LIBCUDA names another driver library, as for evo-opt and libevo_runtime.
"""

import ctypes
import os
import threading

from ctypes import POINTER, byref, c_char_p, c_int, c_size_t, c_uint, c_uint64, c_void_p

CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0
CU_FUNC_ATTRIBUTE_NUM_REGS = 4
CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97
CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75
CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76
CU_JIT_ERROR_LOG_BUFFER = 5
CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6


class CudaError(RuntimeError):
    pass


class CudaDriver:
    _instance = None
    _instance_lock = threading.Lock()

    def __init__(self):
        name = os.environ.get("EVO_LIBCUDA") or "libcuda.so.1"
        try:
            self.lib = ctypes.CDLL(name)
        except OSError as e:
            raise CudaError(f"{name} cannot be loaded: no NVIDIA driver on this machine ({e})") from None
        lib = self.lib
        # Prototypes: ctypes converts Python ints on each call and checks the argument count.
        proto = {
            "cuInit": [c_uint],
            "cuGetErrorString": [c_int, POINTER(c_char_p)],
            "cuGetErrorName": [c_int, POINTER(c_char_p)],
            "cuDeviceGet": [POINTER(c_int), c_int],
            "cuDeviceGetAttribute": [POINTER(c_int), c_int, c_int],
            "cuDevicePrimaryCtxRetain": [POINTER(c_void_p), c_int],
            "cuCtxGetCurrent": [POINTER(c_void_p)],
            "cuCtxSetCurrent": [c_void_p],
            "cuCtxPushCurrent_v2": [c_void_p],
            "cuCtxPopCurrent_v2": [POINTER(c_void_p)],
            "cuStreamGetCtx": [c_void_p, POINTER(c_void_p)],
            "cuModuleLoadDataEx": [POINTER(c_void_p), c_void_p, c_uint, POINTER(c_int),
                                   POINTER(c_void_p)],
            "cuModuleUnload": [c_void_p],
            "cuModuleGetFunction": [POINTER(c_void_p), c_void_p, c_char_p],
            "cuFuncSetAttribute": [c_void_p, c_int, c_int],
            "cuFuncGetAttribute": [POINTER(c_int), c_int, c_void_p],
            "cuMemsetD8Async": [c_uint64, ctypes.c_ubyte, c_size_t, c_void_p],
            "cuLaunchKernel": [c_void_p, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint,
                               c_void_p, c_void_p, c_void_p],
            "cuMemAlloc_v2": [POINTER(c_uint64), c_size_t],
            "cuMemFree_v2": [c_uint64],
            "cuMemAllocHost_v2": [POINTER(c_void_p), c_size_t],
            "cuMemFreeHost": [c_void_p],
            "cuMemcpyHtoDAsync_v2": [c_uint64, c_void_p, c_size_t, c_void_p],
            "cuMemcpyHtoD_v2": [c_uint64, c_void_p, c_size_t],
            "cuStreamSynchronize": [c_void_p],
            "cuStreamIsCapturing": [c_void_p, POINTER(c_int)],
        }
        for fn, args in proto.items():
            f = getattr(lib, fn)
            f.argtypes = args
            f.restype = c_int
        # Optional (CUDA 12.0+ drivers): TMA tensor maps. (CUtensorMap *, CUtensorMapDataType,
        # rank, globalAddress, globalDim, globalStrides, boxDim, elementStrides, interleave,
        # swizzle, l2Promotion, oobFill); the enums as int.
        try:
            self._encode = lib.cuTensorMapEncodeTiled
        except AttributeError:
            self._encode = None
        else:
            self._encode.argtypes = [c_void_p, c_int, c_uint, c_void_p, POINTER(c_uint64),
                                     POINTER(c_uint64), POINTER(c_uint), POINTER(c_uint), c_int,
                                     c_int, c_int, c_int]
            self._encode.restype = c_int
        self._check(lib.cuInit(0), "cuInit")
        self._launch = lib.cuLaunchKernel
        self._memset = lib.cuMemsetD8Async
        self._contexts = {}

    @classmethod
    def get(cls):
        with cls._instance_lock:
            if cls._instance is None:
                cls._instance = CudaDriver()
            return cls._instance

    def describe(self, rc, what):
        name, text = c_char_p(), c_char_p()
        self.lib.cuGetErrorName(rc, byref(name))
        self.lib.cuGetErrorString(rc, byref(text))
        n = name.value.decode() if name.value else f"CUresult {rc}"
        t = f" ({text.value.decode()})" if text.value else ""
        return f"{what} failed: {n}{t}"

    def _check(self, rc, what):
        if rc != 0:
            raise CudaError(self.describe(rc, what))

    # Contexts --------------------------------------------------------------------------------
    def primary_context(self, device: int):
        """Device `device`'s primary context (the one PyTorch and the CUDA runtime use), retained
        once per process."""
        ctx = self._contexts.get(device)
        if ctx is None:
            dev, c = c_int(), c_void_p()
            self._check(self.lib.cuDeviceGet(byref(dev), device), "cuDeviceGet")
            self._check(self.lib.cuDevicePrimaryCtxRetain(byref(c), dev), "cuDevicePrimaryCtxRetain")
            ctx = self._contexts.setdefault(device, c.value)
        return ctx

    def make_current(self, ctx):
        """Makes `ctx` current on this thread unless it is already (one driver call)."""
        cur = c_void_p()
        self.lib.cuCtxGetCurrent(byref(cur))
        if cur.value != ctx:
            self._check(self.lib.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")

    def stream_context(self, stream: int):
        c = c_void_p()
        self._check(self.lib.cuStreamGetCtx(stream, byref(c)), "cuStreamGetCtx")
        return c.value

    def max_shared_memory_optin(self, device: int):
        dev, v = c_int(), c_int()
        self._check(self.lib.cuDeviceGet(byref(dev), device), "cuDeviceGet")
        self._check(self.lib.cuDeviceGetAttribute(
            byref(v), CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev),
            "cuDeviceGetAttribute")
        return v.value

    def compute_capability(self, device: int):
        """(major, minor) of device `device`."""
        dev, major, minor = c_int(), c_int(), c_int()
        self._check(self.lib.cuDeviceGet(byref(dev), device), "cuDeviceGet")
        self._check(self.lib.cuDeviceGetAttribute(
            byref(major), CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev), "cuDeviceGetAttribute")
        self._check(self.lib.cuDeviceGetAttribute(
            byref(minor), CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev), "cuDeviceGetAttribute")
        return major.value, minor.value

    # Modules ---------------------------------------------------------------------------------
    def load_module(self, image: bytes):
        """cuModuleLoadDataEx in the current context: PTX text (NUL-terminated here) or a cubin.
        The JIT's error log is part of the error."""
        if not image.startswith(b"\x7fELF") and not image.endswith(b"\0"):
            image = image + b"\0"
        mod = c_void_p()
        log = ctypes.create_string_buffer(8192)
        opts = (c_int * 2)(CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
        vals = (c_void_p * 2)(ctypes.cast(log, c_void_p), c_void_p(len(log) - 1))
        buf = ctypes.create_string_buffer(image, len(image))
        rc = self.lib.cuModuleLoadDataEx(byref(mod), buf, 2, opts, vals)
        if rc != 0:
            detail = log.value.decode(errors="replace").strip()
            raise CudaError(self.describe(rc, "cuModuleLoadDataEx") + (f": {detail}" if detail else ""))
        return mod.value

    def unload_module(self, mod):
        self._check(self.lib.cuModuleUnload(mod), "cuModuleUnload")

    def get_function(self, mod, name: str):
        fn = c_void_p()
        self._check(self.lib.cuModuleGetFunction(byref(fn), mod, name.encode()),
                    f"cuModuleGetFunction({name})")
        return fn.value

    def function_attribute(self, fn, attr: int):
        v = c_int()
        self._check(self.lib.cuFuncGetAttribute(byref(v), attr, fn), "cuFuncGetAttribute")
        return v.value

    def set_max_dynamic_shared_memory(self, fn, nbytes: int):
        self._check(self.lib.cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                                nbytes), "cuFuncSetAttribute")

    # Work on a stream --------------------------------------------------------------------------
    def memset_async(self, ptr: int, nbytes: int, stream: int):
        self._check(self._memset(ptr, 0, nbytes, stream), "cuMemsetD8Async")

    def mem_alloc(self, nbytes: int):
        """cuMemAlloc in the current context (at least 256-byte aligned)."""
        p = c_uint64()
        self._check(self.lib.cuMemAlloc_v2(byref(p), nbytes), "cuMemAlloc")
        return p.value

    def mem_alloc_host(self, nbytes: int):
        """cuMemAllocHost: page-locked (pinned) host memory, page-aligned, in the current context.
        A copy from it can be captured into a CUDA graph (one from pageable memory cannot)."""
        p = c_void_p()
        self._check(self.lib.cuMemAllocHost_v2(byref(p), nbytes), "cuMemAllocHost")
        return p.value

    def mem_free(self, ptr: int):
        self._check(self.lib.cuMemFree_v2(ptr), "cuMemFree")

    def mem_free_host(self, ptr: int):
        """cuMemFreeHost: frees what mem_alloc_host gave."""
        self._check(self.lib.cuMemFreeHost(ptr), "cuMemFreeHost")

    def copy_to_device_async(self, dst: int, src: int, nbytes: int, stream: int):
        """cuMemcpyHtoDAsync: `src` is a host address that must stay valid (and unchanged) until
        the copy has run."""
        self._check(self.lib.cuMemcpyHtoDAsync_v2(dst, src, nbytes, stream), "cuMemcpyHtoDAsync")

    def copy_to_device(self, dst: int, src: int, nbytes: int):
        """cuMemcpyHtoD from host address `src`, in the current context: on the legacy default
        stream, and from pageable memory it may return before the bytes have reached the device
        (stream_synchronize(0) waits for them)."""
        self._check(self.lib.cuMemcpyHtoD_v2(dst, src, nbytes), "cuMemcpyHtoD")

    def stream_synchronize(self, stream: int):
        """cuStreamSynchronize (0: the current context's legacy default stream)."""
        self._check(self.lib.cuStreamSynchronize(stream), "cuStreamSynchronize")

    def is_capturing(self, stream: int):
        """Whether `stream` is being captured into a CUDA graph."""
        status = c_int()
        self._check(self.lib.cuStreamIsCapturing(stream, byref(status)), "cuStreamIsCapturing")
        return status.value != 0

    @property
    def has_tensor_maps(self):
        """Whether the driver has cuTensorMapEncodeTiled (CUDA 12.0+)."""
        return self._encode is not None

    def encode_tensor_map(self, out: int, data_type: int, address: int, dims, strides, box,
                          swizzle: int):
        """cuTensorMapEncodeTiled into the 128 bytes at host address `out` (64-byte aligned) with
        evo's fixed arguments: element strides 1, interleave none, L2 promotion 256 B, OOB fill
        none (docs/architecture.md, "Tensor maps"). `swizzle` is the CUtensorMapSwizzle value."""
        from .manifest import TMA_INTERLEAVE_NONE, TMA_L2_PROMOTION_256B, TMA_OOB_FILL_NONE
        if self._encode is None:
            raise CudaError("the CUDA driver has no cuTensorMapEncodeTiled (TMA needs a CUDA 12 "
                            "driver)")
        rank = len(dims)
        rc = self._encode(out, data_type, rank, address, (c_uint64 * rank)(*dims),
                          (c_uint64 * max(rank - 1, 1))(*strides), (c_uint * rank)(*box),
                          (c_uint * rank)(*([1] * rank)), TMA_INTERLEAVE_NONE, swizzle,
                          TMA_L2_PROMOTION_256B, TMA_OOB_FILL_NONE)
        if rc != 0:
            raise CudaError(self.describe(rc, "cuTensorMapEncodeTiled"))

    def launch(self, fn, grid, block, smem: int, stream: int, params):
        """cuLaunchKernel; `params` is a ctypes array of pointers to the parameter values."""
        rc = self._launch(fn, grid[0], grid[1], grid[2], block[0], block[1], block[2], smem, stream,
                          params, None)
        if rc != 0:
            raise CudaError(self.describe(rc, "cuLaunchKernel"))
