"""The few CUDA driver API calls evo_runtime needs, through ctypes."""

import ctypes


class CudaError(RuntimeError):
    pass


class CudaDriver:
    _instance = None

    def __init__(self):
        try:
            self.lib = ctypes.CDLL("libcuda.so.1")
        except OSError as e:
            raise CudaError("libcuda.so.1 cannot be loaded: no NVIDIA driver on this machine "
                            f"({e})") from None
        self._check(self.lib.cuInit(0), "cuInit")

    @classmethod
    def get(cls):
        if cls._instance is None:
            cls._instance = CudaDriver()
        return cls._instance

    def _check(self, rc, what):
        if rc != 0:
            msg = ctypes.c_char_p()
            self.lib.cuGetErrorString(rc, ctypes.byref(msg))
            text = msg.value.decode() if msg.value else "unknown error"
            raise CudaError(f"{what} failed: {text} (CUresult {rc})")

    def load_module(self, image: bytes):
        """cuModuleLoadData: PTX text (NUL-terminated) or a cubin, in the current context."""
        mod = ctypes.c_void_p()
        buf = ctypes.create_string_buffer(image + (b"\0" if not image.endswith(b"\0") else b""))
        self._check(self.lib.cuModuleLoadData(ctypes.byref(mod), buf), "cuModuleLoadData")
        return mod

    def unload_module(self, mod):
        self._check(self.lib.cuModuleUnload(mod), "cuModuleUnload")

    def get_function(self, mod, name: str):
        fn = ctypes.c_void_p()
        self._check(self.lib.cuModuleGetFunction(ctypes.byref(fn), mod, name.encode()),
                    f"cuModuleGetFunction({name})")
        return fn

    def set_max_dynamic_shared_memory(self, fn, nbytes: int):
        # CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
        self._check(self.lib.cuFuncSetAttribute(fn, 8, ctypes.c_int(nbytes)), "cuFuncSetAttribute")

    def launch(self, fn, grid, block, smem: int, stream: int, pointers):
        """cuLaunchKernel with one 64-bit device pointer per parameter (the bare-pointer ABI)."""
        values = [ctypes.c_void_p(p) for p in pointers]
        params = (ctypes.c_void_p * len(values))(*[ctypes.cast(ctypes.pointer(v), ctypes.c_void_p)
                                                    for v in values])
        self._check(self.lib.cuLaunchKernel(fn, ctypes.c_uint(grid[0]), ctypes.c_uint(grid[1]),
                                            ctypes.c_uint(grid[2]), ctypes.c_uint(block[0]),
                                            ctypes.c_uint(block[1]), ctypes.c_uint(block[2]),
                                            ctypes.c_uint(smem), ctypes.c_void_p(stream), params,
                                            None), "cuLaunchKernel")
