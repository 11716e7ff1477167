"""EvoModule: a manifest + its PTX, callable on torch tensors."""

import collections
import contextlib
import ctypes
import os
import threading

from .driver import (CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, CU_FUNC_ATTRIBUTE_NUM_REGS,
                     CudaDriver, CudaError)
from .manifest import (BUFFER_ALIGNMENT, TENSOR_MAP_BYTES, TMA_ELEMENTS, TMA_SWIZZLE,
                       WORKSPACE_ALIGNMENT, Manifest, ManifestError, describe, scalar_bits)

_TORCH_DTYPES = {
    "f32": "float32", "f16": "float16", "bf16": "bfloat16", "f64": "float64",
    "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64", "ui8": "uint8",
    "i1": "bool",
}


def torch_dtype(name):
    import torch
    if name not in _TORCH_DTYPES:
        raise ManifestError(f"unsupported dtype '{name}'")
    return getattr(torch, _TORCH_DTYPES[name])


def dtype_name(torch_dtype_):
    for k, v in _TORCH_DTYPES.items():
        if str(torch_dtype_) == "torch." + v:
            return k
    return str(torch_dtype_).replace("torch.", "")


class _MapSlot:
    """The tensor maps of eager calls on one stream: 128 bytes of device memory per map (one
    cuMemAlloc, 256-byte aligned), the encoded bytes they were copied from (kept here, so the
    asynchronous copy never reads freed memory) and the source addresses they encode."""

    def __init__(self, stream, device, count):
        self.stream = stream
        self.device = device
        self._host = ctypes.create_string_buffer(count * TENSOR_MAP_BYTES + 64)
        base = ctypes.addressof(self._host)
        self.host = base + (-base % 64)  # CUtensorMap is 64-byte aligned
        self.sources = None  # None: nothing valid on the device


# Capture slots per device (a 32-layer model captures one call per layer); more with
# $EVO_RUNTIME_CAPTURE_SLOTS or EvoModule.reserve_capture_slots.
DEFAULT_CAPTURE_SLOTS = 256
MAX_CAPTURE_SLOTS = 1 << 20
CAPTURE_SLOTS_VAR = "EVO_RUNTIME_CAPTURE_SLOTS"
# Calls outside capture that skip the refill after it failed, so that a driver out of memory is
# not asked again at every call (a capture that finds no slot ends the wait).
REFILL_BACKOFF = 64


def capture_slot_target(name=None):
    """The capture pool's size: $EVO_RUNTIME_CAPTURE_SLOTS, else DEFAULT_CAPTURE_SLOTS. A value
    that is not a count (a ValueError, its message prefixed with `name`) fails only what needs
    the pool (a captured call, reserve_capture_slots); calls outside capture then skip the
    refill."""
    v = os.environ.get(CAPTURE_SLOTS_VAR, "")
    if not v:
        return DEFAULT_CAPTURE_SLOTS
    if not v.isdigit() or not 1 <= int(v) <= MAX_CAPTURE_SLOTS:
        raise ValueError(f"{name + ': ' if name else ''}${CAPTURE_SLOTS_VAR}={v!r} is not a "
                         f"number of slots from 1 to {MAX_CAPTURE_SLOTS}")
    return int(v)


class _CaptureBlock:
    """One allocation of capture slots: a cuMemAlloc and a cuMemAllocHost of the same size."""

    def __init__(self, device, host):
        self.device = device
        self.host = host
        self.captured = False  # a slot of it is in a graph: kept for the process


class _Loaded:
    """The CUDA module in one device's primary context."""

    def __init__(self, ctx, module, launches, constants):
        self.ctx = ctx
        self.module = module
        self.launches = launches  # (function, grid, block, smem, param offsets) per launch
        # The constant buffers' device copies, ((buffer index, address), ...), uploaded at load;
        # None once close() freed them (the next load on this device uploads them again).
        self.constants = constants
        self.constants_captured = False  # a captured call used them: kept for the process
        # Tensor maps: held from their upload to the last launch of a call.
        self.map_lock = threading.Lock()
        self.map_slots = []
        # The capture pool: (device address, pinned host address, _CaptureBlock) of slots no
        # capture has taken, allocated outside capture (cuMemAlloc and cuMemAllocHost are not
        # allowed during a global-mode capture); a captured call takes one for good. The blocks
        # no capture took a slot of are freed by EvoModule.close (and garbage collection).
        self.capture_free = collections.deque()
        self.capture_blocks = []
        self.capture_taken = 0
        self.capture_error = ""  # why the pool's last allocation failed, if it did
        self.capture_wait = 0  # refills to skip before the next try, after one failed


class EvoModule:
    """Loads `<name>.json` and the PTX it names (and its cubins, when the manifest lists
    `binaries`); calling it runs every launch in order on the caller's stream, without
    synchronizing.

    - Inputs must be contiguous CUDA tensors of the manifest's shapes and dtypes, 16-byte aligned,
      all on one device; the launches run on that device (its primary context) whatever the
      current device is. A scalar argument (an input with "by_value": `%alpha: f32` of the
      lowered function) is a Python float or int (a bool for i1), or a 0-d tensor of its dtype
      (read with .item(): a CUDA one synchronizes, and cannot be read during graph capture); the
      launches take its value (`scalar_bits`), and a CUDA graph captures the value of that call.
    - The stream is `stream=` (a torch.cuda.Stream or a raw CUstream handle) or the device's
      current stream. Outputs (unless given) and the workspace for scratch buffers come from
      PyTorch's caching allocator on that stream, so nothing is freed under running kernels and
      nothing needs a synchronization; it also works inside CUDA graph capture.
    - The CUDA module is loaded per device, on first use; `prepare(device)` loads it ahead (CUDA
      graph capture does not allow loading modules). On each device it is the cubin made for that
      GPU, else the PTX (JIT) (`image_for(device)`; include/evo/Runtime/ChipRules.h); a caller's
      `image` is used on every device.
    - Tensor maps (buffers of role "tensor_map") are not arguments: each call encodes them over
      its sources' addresses (cuTensorMapEncodeTiled) and copies them (cuMemcpyHtoDAsync, on the
      call's stream) to device memory this object owns: outside capture into one slot per
      stream, which a call with the same addresses on the same stream reuses; under CUDA graph
      capture into a fresh capture slot whose host bytes are pinned (so the copy is captured and
      replayed), which then belongs to the graph for good. The capture slots come from a pool
      per device allocated outside capture: 256 ($EVO_RUNTIME_CAPTURE_SLOTS) at the first call
      with tensor maps, refilled by later calls outside capture when half are used, or
      `reserve_capture_slots(n)`. `close()` (or garbage collection) frees the blocks of capture
      slots that no graph holds.
    - Constant buffers (role "constant": weights evo-opt did not compile into the PTX) are not
      arguments either: their bytes come from the manifest's constants file (read and checked
      with the manifest, kept in host memory for the devices loaded later), uploaded once per
      device when the module is loaded there, into device memory this object owns (one
      cuMemAlloc per constant, 256-byte aligned), and every launch and tensor map over one gets
      that device's copy. Their addresses never change, so a CUDA graph captures them as any
      other argument. `close()` (or garbage collection) frees them unless a captured call used
      them (then they stay for the process, as the capture slots a graph holds); a later load
      (`prepare`, or a call outside capture) uploads them again.
    """

    def __init__(self, manifest_path, image=None, device=None):
        self.spec = Manifest.load(manifest_path)
        self.manifest = self.spec.raw  # the manifest's JSON, as written by evo-emit-ptx
        self.name = self.spec.name
        self.buffers = self.manifest["buffers"]
        self.launches = self.manifest["launches"]
        self.workspace_bytes = self.spec.workspace_bytes
        # A caller's image (e.g. a cubin) is trusted as given; the manifest's PTX is checked, and
        # so are its cubins (one per chip), among which each device's is chosen.
        self._image = bytes(image) if image is not None else self.spec.read_image()
        self._image_given = image is not None
        self._cubins = self.spec.read_binaries() if image is None else []
        # The constants file (checked), uploaded on each device at load.
        self._consts = self.spec.constants
        self._const_data = self.spec.read_constants()
        self._lock = threading.Lock()
        self._loaded = {}
        self._driver = None
        import torch
        self._torch = torch
        # Pointers of all buffers live in one array per call; each launch's parameters point into
        # it (the driver copies parameter values when the launch is enqueued or captured).
        self._nbuf = len(self.spec.buffers)
        self._in_idx = [b.index for b in self.spec.inputs]
        self._out_idx = [b.index for b in self.spec.outputs]
        self._zero = [b for b in self.spec.buffers if b.zero_init]
        self._maps = self.spec.tensor_maps
        self._in_want = [(b.shape, torch_dtype(b.dtype)) for b in self.spec.inputs]
        self._out_want = [(b.shape, torch_dtype(b.dtype)) for b in self.spec.outputs]
        if torch.cuda.is_available():
            self.prepare(torch.cuda.current_device() if device is None else device)

    # ------------------------------------------------------------------------------------------
    def prepare(self, device=None):
        """Loads the CUDA module on `device` (an index or torch.device; default: the current
        device) now. Returns self."""
        torch = self._torch
        if device is None:
            device = torch.cuda.current_device()
        index = device.index if isinstance(device, torch.device) else int(device)
        if index is None:
            index = torch.cuda.current_device()
        self._module_on(index)
        return self

    def reserve_capture_slots(self, count, device=None):
        """Makes at least `count` capture slots free on `device` (default: the current one): one
        per call with tensor maps that a CUDA graph capture will hold. Call it outside capture;
        without tensor maps it does nothing. Returns self."""
        if not self._maps:
            return self
        if not 0 <= int(count) <= MAX_CAPTURE_SLOTS:
            raise ValueError(f"{self.name}: at most {MAX_CAPTURE_SLOTS} capture slots can be "
                             "reserved at once")
        torch = self._torch
        if device is None:
            device = torch.cuda.current_device()
        index = device.index if isinstance(device, torch.device) else int(device)
        loaded = self._module_on(torch.cuda.current_device() if index is None else index)
        capture_slot_target(self.name)  # a pool size that is not a count is refused here too
        with self._current(loaded), loaded.map_lock:
            missing = int(count) - len(loaded.capture_free)
            if missing > 0:
                self._add_capture_slots(loaded, missing)
        return self

    def close(self):
        """Frees the capture slots that no CUDA graph holds (device and pinned memory) and the
        constant buffers' device copies on every device; garbage collection does it too. A block
        of slots of which a capture took one stays: a replay of that graph copies from it (freed
        with the process, as by the C++ loader); so do the constants of a device where a call
        was captured (the graph's launches read them). The CUDA module and the streams'
        tensor-map slots stay (a graph may still replay the kernels), so the module can still be
        called: a call outside capture then allocates a new pool, and uploads the constants again
        (as does prepare(device)). Driver errors are ignored (the context may be gone already).
        While the current stream is being captured it frees nothing (a cuMemFree would
        invalidate the capture): the blocks stay for a later close(). Not to be called while a
        call of this module runs on another thread."""
        if self.__dict__.get("_loaded") and self._torch.cuda.is_current_stream_capturing():
            return
        for loaded in list(self.__dict__.get("_loaded", {}).values()):
            frees_constants = bool(loaded.constants) and not loaded.constants_captured
            if not frees_constants and all(block.captured for block in loaded.capture_blocks):
                continue
            d = self._driver
            with self._lock, self._current(loaded), loaded.map_lock:
                if frees_constants:
                    for _, ptr in loaded.constants:
                        with contextlib.suppress(CudaError):
                            d.mem_free(ptr)
                    loaded.constants = None
                for block in loaded.capture_blocks:
                    if not block.captured:
                        with contextlib.suppress(CudaError):
                            d.mem_free(block.device)
                        with contextlib.suppress(CudaError):
                            d.mem_free_host(block.host)
                loaded.capture_blocks = [b for b in loaded.capture_blocks if b.captured]
                loaded.capture_free = collections.deque(
                    slot for slot in loaded.capture_free if slot[2].captured)

    def __del__(self):
        try:
            self.close()
        except Exception:  # e.g. at interpreter exit, with the driver half torn down
            pass

    @contextlib.contextmanager
    def _current(self, loaded):
        """The device's primary context, made current for the block only when it is not already
        (e.g. a thread that has not used CUDA yet): the caller's current device is left as is."""
        d = self._driver
        cur = ctypes.c_void_p()
        d.lib.cuCtxGetCurrent(ctypes.byref(cur))
        pushed = cur.value != loaded.ctx
        if pushed:
            d.lib.cuCtxPushCurrent_v2(loaded.ctx)
        try:
            yield
        finally:
            if pushed:
                d.lib.cuCtxPopCurrent_v2(ctypes.byref(cur))

    def image_for(self, device=None):
        """What launches on `device` (default: the current one) use: ("cubin", chip, file),
        ("ptx", chip, file), or ("image", "", "") for a caller's image. UnsupportedDeviceError
        when no image of the manifest runs on that GPU."""
        if self._image_given:
            return ("image", "", "")
        if not self._cubins:
            return ("ptx", self.spec.chip, self.spec.ptx_file)
        torch = self._torch
        index = torch.cuda.current_device() if device is None else (
            device.index if isinstance(device, torch.device) else int(device))
        if self._driver is None:
            self._driver = CudaDriver.get()
        binary, ptx = self.spec.image_for(*self._driver.compute_capability(index))
        return ("cubin", binary.chip, binary.file) if binary else ("ptx", self.spec.chip, ptx)

    def _module_on(self, index):
        loaded = self._loaded.get(index)
        if loaded is not None and loaded.constants is not None:
            return loaded
        with self._lock:
            loaded = self._loaded.get(index)
            if loaded is not None and loaded.constants is not None:
                return loaded
            torch = self._torch
            if loaded is not None:  # close() freed the constants: uploaded again
                if torch.cuda.is_current_stream_capturing():
                    raise RuntimeError(f"{self.name}: its constant buffers were freed by close() "
                                       f"and cannot be uploaded to device {index} during CUDA "
                                       "graph capture: call prepare(device) before capturing")
                with self._current(loaded):
                    loaded.constants = self._upload_constants(self._driver, index)
                return loaded
            if torch.cuda.is_current_stream_capturing():
                raise RuntimeError(f"{self.name}: the CUDA module is not loaded on device {index} "
                                   "and cannot be loaded during CUDA graph capture: call "
                                   "prepare(device) before capturing")
            if self._driver is None:
                self._driver = CudaDriver.get()
            d = self._driver
            if self._maps and not d.has_tensor_maps:
                raise CudaError(f"{self.name}: the manifest has tensor maps, but the CUDA driver has "
                                "no cuTensorMapEncodeTiled (TMA needs a CUDA 12 driver)")
            # The device's image: the cubin made for it, else the PTX (UnsupportedDeviceError
            # when neither runs there).
            image = self._image
            if self._cubins:
                binary, _ = self.spec.image_for(*d.compute_capability(index))
                if binary is not None:
                    image = self._cubins[self.spec.binaries.index(binary)]
            ctx = d.primary_context(index)
            d.lib.cuCtxPushCurrent_v2(ctx)
            try:
                module = d.load_module(image)
                try:
                    launches = self._bind(d, module, index)
                    loaded = _Loaded(ctx, module, launches, self._upload_constants(d, index))
                except BaseException:
                    d.unload_module(module)
                    raise
            finally:
                popped = ctypes.c_void_p()
                d.lib.cuCtxPopCurrent_v2(ctypes.byref(popped))
            self._loaded[index] = loaded
            return loaded

    def _upload_constants(self, d, index):
        """The constant buffers in device memory of their own on device `index` (its context
        current): a cuMemAlloc (256-byte aligned) and a cuMemcpyHtoD each, waited for here, at
        load, so that launches on any stream find them written. ((buffer index, address), ...);
        nothing stays allocated when one fails."""
        if not self._consts:
            return ()
        data = self._const_data
        base = ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p).value  # no copy of the bytes
        done = []
        try:
            for b in self._consts:
                try:
                    ptr = d.mem_alloc(b.bytes)
                    done.append((b.index, ptr))
                    d.copy_to_device(ptr, base + b.offset, b.bytes)
                except CudaError as e:
                    raise CudaError(f"{self.name}: constant '{b.name}' ({b.bytes} bytes) cannot "
                                    f"be uploaded to cuda:{index}: {e}") from None
            # A copy from pageable memory may return before its bytes reach the device; the
            # launches may run on streams that do not wait for the legacy default stream.
            d.stream_synchronize(0)
        except BaseException:
            for _, ptr in done:
                with contextlib.suppress(CudaError):
                    d.mem_free(ptr)
            raise
        return tuple(done)

    def _bind(self, d, module, index):
        spec = self.spec
        functions = [d.get_function(module, k) for k in spec.kernels]
        smem = [0] * len(functions)
        threads = [0] * len(functions)
        for l in spec.launches:
            smem[l.kernel_index] = max(smem[l.kernel_index], l.dynamic_shared_memory)
            threads[l.kernel_index] = max(threads[l.kernel_index], l.block[0] * l.block[1] * l.block[2])
        optin = d.max_shared_memory_optin(index)
        for k, fn in enumerate(functions):
            if smem[k] > optin:
                raise CudaError(f"{self.name}: kernel '{spec.kernels[k]}' asks for {smem[k]} bytes "
                                f"of dynamic shared memory; this GPU allows {optin}")
            if smem[k] > 48 * 1024:
                d.set_max_dynamic_shared_memory(fn, smem[k])
            most = d.function_attribute(fn, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)
            if threads[k] > most:
                regs = d.function_attribute(fn, CU_FUNC_ATTRIBUTE_NUM_REGS)
                raise CudaError(f"{self.name}: kernel '{spec.kernels[k]}' is launched with "
                                f"{threads[k]} threads per block, but with {regs} registers per "
                                f"thread it can run at most {most}")
        return [(functions[l.kernel_index], l.grid, l.block, l.dynamic_shared_memory,
                 [8 * a for a in l.args], ctypes.c_void_p * len(l.args)) for l in spec.launches]

    # ------------------------------------------------------------------------------------------
    def allocate_outputs(self, fill=None, device=None):
        torch = self._torch
        outs = []
        for shape, dtype in self._out_want:
            t = torch.empty(shape, dtype=dtype, device=device if device is not None else "cuda")
            if fill is not None:
                t.fill_(fill)
            outs.append(t)
        return outs

    def allocate_workspace(self, device=None):
        """A workspace tensor (uint8) for the scratch buffers, or None when there are none. One
        workspace serves one stream at a time."""
        if not self.workspace_bytes:
            return None
        return self._torch.empty(self.workspace_bytes, dtype=self._torch.uint8,
                                 device=device if device is not None else "cuda")

    def _check(self, t, want, what, device):
        shape, dtype = want
        if not isinstance(t, self._torch.Tensor):
            raise TypeError(f"{self.name}: {what} must be a torch.Tensor, got {type(t).__name__}")
        if (t.device.type != "cuda" or tuple(t.shape) != shape or t.dtype != dtype
                or not t.is_contiguous()):
            raise ValueError(f"{self.name}: {what} needs a contiguous CUDA tensor "
                             f"{describe(dtype_name(dtype), shape)}, got "
                             f"{describe(dtype_name(t.dtype), tuple(t.shape))} on {t.device}"
                             f"{'' if t.is_contiguous() else ' (not contiguous)'}")
        if device is not None and t.device.index != device:
            raise ValueError(f"{self.name}: {what} is on {t.device}, the other tensors on cuda:{device}")
        p = t.data_ptr()
        if p % BUFFER_ALIGNMENT:
            raise ValueError(f"{self.name}: {what} is not {BUFFER_ALIGNMENT}-byte aligned "
                             "(a view with an offset? pass a copy)")
        return p

    def _scalar(self, value, b, what):
        """The bits a launch passes for scalar argument `b` given `value` (a number or a 0-d
        tensor of its dtype)."""
        torch = self._torch
        what = f"{self.name}: {what}"
        if isinstance(value, torch.Tensor):
            if tuple(value.shape) != () or value.dtype != torch_dtype(b.dtype):
                raise TypeError(f"{what} is an {b.dtype} scalar: expected a number or a 0-d "
                                f"{torch_dtype(b.dtype)} tensor, got a "
                                f"{describe(dtype_name(value.dtype), tuple(value.shape))} tensor")
            if value.device.type == "cuda" and torch.cuda.is_current_stream_capturing():
                raise RuntimeError(f"{what} is a 0-d CUDA tensor, whose value cannot be read "
                                   "during CUDA graph capture: pass a Python number")
            value = value.item()
        return scalar_bits(b.dtype, value, what)

    def __call__(self, *inputs, outputs=None, stream=None, workspace=None):
        """Runs the launches on `inputs`; returns the output tensors (allocated if not given)."""
        torch = self._torch
        spec = self.spec
        if len(inputs) != len(self._in_idx):
            raise ValueError(f"{self.name} takes {len(self._in_idx)} inputs, got {len(inputs)}")
        if outputs is not None and len(outputs) != len(self._out_idx):
            raise ValueError(f"{self.name} writes {len(self._out_idx)} outputs, got {len(outputs)}")
        # The device: the inputs' (all on one), else the outputs', else the current one.
        tensors = [t for i, t in enumerate(inputs) if not spec.inputs[i].by_value]
        first = tensors[0] if tensors else (outputs[0] if outputs else None)
        if first is not None and isinstance(first, torch.Tensor) and first.is_cuda:
            device = first.device.index
        else:
            device = torch.cuda.current_device()
        ptrs = [0] * self._nbuf
        for i, t in enumerate(inputs):
            what = f"input {i} ('{spec.inputs[i].name}')"
            ptrs[self._in_idx[i]] = (self._scalar(t, spec.inputs[i], what)
                                     if spec.inputs[i].by_value
                                     else self._check(t, self._in_want[i], what, device))

        # The stream: the caller's (a torch stream or a raw handle), else the device's current one.
        if stream is None:
            s = torch.cuda.current_stream(device)
        elif isinstance(stream, torch.cuda.Stream):
            s = stream
            if s.device.index != device:
                raise ValueError(f"{self.name}: stream is on {s.device}, the tensors on cuda:{device}")
        else:
            s = torch.cuda.ExternalStream(int(stream), device=torch.device("cuda", device))
        handle = s.cuda_stream
        loaded = self._module_on(device)
        for i, ptr in loaded.constants:  # the device's copies (tensor maps over them too)
            ptrs[i] = ptr
        if handle not in (0, 1, 2) and stream is not None and not isinstance(stream, torch.cuda.Stream):
            if self._driver.stream_context(handle) != loaded.ctx:
                raise ValueError(f"{self.name}: stream {handle:#x} does not belong to cuda:{device}")

        switch = stream is not None and handle != torch.cuda.current_stream(device).cuda_stream
        # Allocations below are ordered on `s` by the caching allocator (freed blocks are reused
        # only by later work on that stream): no synchronization, and capture-safe.
        if switch:
            ctx = torch.cuda.stream(s)
            ctx.__enter__()
        try:
            given = outputs is not None
            if not given:
                outputs = [torch.empty(shape, dtype=dtype, device=torch.device("cuda", device))
                           for shape, dtype in self._out_want]
            for i, t in enumerate(outputs):
                ptrs[self._out_idx[i]] = self._check(t, self._out_want[i], f"output {i} ('{spec.outputs[i].name}')", device)
            if given:
                self._check_overlaps(inputs, outputs)
            if self.workspace_bytes:
                if workspace is None:
                    workspace = torch.empty(self.workspace_bytes, dtype=torch.uint8,
                                            device=torch.device("cuda", device))
                elif (not isinstance(workspace, torch.Tensor) or not workspace.is_cuda
                      or workspace.device.index != device
                      or workspace.numel() * workspace.element_size() < self.workspace_bytes
                      or not workspace.is_contiguous()):
                    raise ValueError(f"{self.name}: workspace must be a contiguous CUDA tensor on "
                                     f"cuda:{device} of at least {self.workspace_bytes} bytes")
                base = workspace.data_ptr()
                if base % WORKSPACE_ALIGNMENT:
                    raise ValueError(f"{self.name}: workspace is not {WORKSPACE_ALIGNMENT}-byte aligned")
                for b in spec.scratch:
                    ptrs[b.index] = base + b.offset
            self._enqueue(loaded, ptrs, handle)
        finally:
            if switch:
                ctx.__exit__(None, None, None)
        return outputs

    def _enqueue(self, loaded, ptrs, handle):
        d = self._driver
        with self._current(loaded), (loaded.map_lock if self._maps else contextlib.nullcontext()):
            if loaded.constants and not loaded.constants_captured and d.is_capturing(handle):
                loaded.constants_captured = True  # a graph reads them at every replay
            if self._maps:
                base = self._bind_tensor_maps(loaded, ptrs, handle)
                for k, b in enumerate(self._maps):
                    ptrs[b.index] = base + k * TENSOR_MAP_BYTES
            for b in self._zero:
                d.memset_async(ptrs[b.index], b.bytes, handle)
            values = (ctypes.c_uint64 * len(ptrs))(*ptrs)
            base = ctypes.addressof(values)
            for fn, grid, block, smem, offsets, array_type in loaded.launches:
                params = array_type(*[base + o for o in offsets])
                d.launch(fn, grid, block, smem, handle, params)

    def _encode_maps(self, out, sources):
        """Encodes every map over `sources` into the host bytes at `out` (128 per map)."""
        d = self._driver
        spec = self.spec
        for k, b in enumerate(self._maps):
            t = b.tensor_map
            src = spec.buffers[t.source]
            if sources[k] % BUFFER_ALIGNMENT:  # checked with the arguments; the driver needs it
                raise ValueError(f"{self.name}: the source of tensor map '{b.name}' is not "
                                 f"{BUFFER_ALIGNMENT}-byte aligned")
            try:
                d.encode_tensor_map(out + k * TENSOR_MAP_BYTES, TMA_ELEMENTS[t.element_type][0],
                                    sources[k], t.dims, t.strides, t.box, TMA_SWIZZLE[t.swizzle])
            except CudaError as e:
                raise CudaError(f"{self.name}: tensor map '{b.name}' over '{src.name}' cannot be "
                                f"encoded: {e}") from None

    def _add_capture_slots(self, loaded, count):
        """Adds `count` capture slots to the pool of `loaded` (its context current): one
        cuMemAlloc and one cuMemAllocHost. Never during a capture (both are refused then)."""
        d = self._driver
        nbytes = len(self._maps) * TENSOR_MAP_BYTES  # a multiple of 128
        what = f"{self.name}: {count} capture slots for its tensor maps"
        try:
            device = d.mem_alloc(count * nbytes)
        except CudaError as e:
            raise CudaError(f"{what}: {e}") from None
        try:
            host = d.mem_alloc_host(count * nbytes)  # page-aligned
        except CudaError as e:
            d.mem_free(device)
            raise CudaError(f"{what}: {e}") from None
        block = _CaptureBlock(device, host)
        loaded.capture_blocks.append(block)
        loaded.capture_free.extend((device + i * nbytes, host + i * nbytes, block)
                                   for i in range(count))

    def _bind_for_capture(self, loaded, sources, handle):
        """During a capture: the call's maps are encoded into a fresh slot's pinned bytes and
        copied to its device memory by one cuMemcpyHtoDAsync on the capturing stream (a memcpy
        node of the graph, run again at every replay, before the launches). The slot is the
        graph's for good: never rewritten, reused or freed."""
        capture_slot_target(self.name)  # a pool size that is not a count is refused here
        if not loaded.capture_free:
            loaded.capture_wait = 0  # the pool is wanted: the next call outside capture refills it
            failed = (f" (the last allocation of capture slots failed: {loaded.capture_error})"
                      if loaded.capture_error else "")
            if not loaded.capture_blocks:
                raise RuntimeError(
                    f"{self.name}: its tensor maps need a capture slot on this device and none is "
                    "allocated yet (they cannot be allocated during CUDA graph capture): call it "
                    "once outside capture first, or reserve_capture_slots(n) before capturing"
                    + failed)
            raise RuntimeError(
                f"{self.name}: no capture slot is left for its tensor maps: the "
                f"{loaded.capture_taken} slots of this device are held by earlier captured calls "
                "(one each, for good); reserve more before capturing (reserve_capture_slots(n), or "
                f"${CAPTURE_SLOTS_VAR} above {DEFAULT_CAPTURE_SLOTS}: the pool is refilled to that "
                "size by calls outside capture)" + failed)
        device, host, block = loaded.capture_free[0]
        # A slot whose maps cannot be encoded stays free: nothing was enqueued that reads it.
        self._encode_maps(host, sources)
        loaded.capture_free.popleft()
        block.captured = True
        loaded.capture_taken += 1
        self._driver.copy_to_device_async(device, host, len(self._maps) * TENSOR_MAP_BYTES, handle)
        return device

    def _top_up_capture_slots(self, loaded):
        """Outside capture: fills the pool back to its size when fewer than half of it are free.
        It never fails the call, which needs no capture slot: a pool size that is not a count is
        left to what needs the pool to report, and a failed allocation (e.g. another thread's
        global-mode capture refuses allocations for a while) is remembered for the capture that
        then finds no slot, and not tried again before REFILL_BACKOFF more calls want it, or a
        capture finds no slot."""
        try:
            target = capture_slot_target()
        except ValueError:
            return
        free = len(loaded.capture_free)
        if free and 2 * free >= target:
            return
        if loaded.capture_wait:
            loaded.capture_wait -= 1
            return
        try:
            self._add_capture_slots(loaded, target - free)
            loaded.capture_error = ""
        except CudaError as e:
            loaded.capture_error = str(e)[len(self.name) + 2:]
            loaded.capture_wait = REFILL_BACKOFF

    def _bind_tensor_maps(self, loaded, ptrs, handle):
        """The device address of this call's tensor maps (map k at + 128 k). During a CUDA graph
        capture: a fresh capture slot (_bind_for_capture). Otherwise those already on the device
        for `handle` over the same sources, else encoded now and copied on `handle` into the
        stream's slot (no synchronization); the capture pool is topped up first (best effort)."""
        d = self._driver
        sources = tuple(ptrs[b.tensor_map.source] for b in self._maps)
        if d.is_capturing(handle):
            return self._bind_for_capture(loaded, sources, handle)
        self._top_up_capture_slots(loaded)
        slot = None
        for candidate in loaded.map_slots:
            if candidate.stream == handle:
                slot = candidate
        if slot is not None and slot.sources == sources:
            return slot.device
        if slot is None:
            slot = _MapSlot(handle, d.mem_alloc(len(self._maps) * TENSOR_MAP_BYTES), len(self._maps))
            loaded.map_slots.append(slot)
        slot.sources = None  # nothing valid until every map is encoded and its copy enqueued
        self._encode_maps(slot.host, sources)
        for k in range(len(self._maps)):
            d.copy_to_device_async(slot.device + k * TENSOR_MAP_BYTES,
                                   slot.host + k * TENSOR_MAP_BYTES, TENSOR_MAP_BYTES, handle)
        slot.sources = sources
        return slot.device

    def _check_overlaps(self, inputs, outputs):
        """Outputs the caller passed must share no byte with an input or another output."""
        spans = [(t.data_ptr(), t.data_ptr() + b.bytes, f"input {i}", False)
                 for i, (t, b) in enumerate(zip(inputs, self.spec.inputs)) if not b.by_value]
        spans += [(t.data_ptr(), t.data_ptr() + b.bytes, f"output {i}", True)
                  for i, (t, b) in enumerate(zip(outputs, self.spec.outputs))]
        for i, a in enumerate(spans):
            for b in spans[i + 1:]:
                if (a[3] or b[3]) and a[0] < b[1] and b[0] < a[1]:
                    raise ValueError(f"{self.name}: {a[2]} and {b[2]} overlap")
