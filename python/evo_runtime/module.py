"""EvoModule: a manifest + its PTX, callable on torch tensors."""

import hashlib
import json
import os

from .driver import CudaDriver


class ManifestError(ValueError):
    pass


_DTYPES = {
    "f32": "float32", "f16": "float16", "bf16": "bfloat16", "f64": "float64",
    "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64", "ui8": "uint8",
}


def _torch_dtype(name):
    import torch
    if name not in _DTYPES:
        raise ManifestError(f"unsupported dtype '{name}' in manifest")
    return getattr(torch, _DTYPES[name])


class EvoModule:
    """Loads `<name>.json` and the PTX it names; calling it runs every launch in order."""

    def __init__(self, manifest_path, image=None):
        with open(manifest_path) as f:
            self.manifest = json.load(f)
        m = self.manifest
        if m.get("format") != "evo-manifest/1":
            raise ManifestError(f"{manifest_path}: not an evo manifest (format={m.get('format')!r})")
        if image is None:
            ptx_path = os.path.join(os.path.dirname(os.path.abspath(manifest_path)), m["ptx"]["file"])
            with open(ptx_path, "rb") as f:
                image = f.read()
            digest = hashlib.sha256(image).hexdigest()
            if digest != m["ptx"]["sha256"]:
                raise ManifestError(f"{ptx_path} does not match its manifest (sha256 {digest})")
        self.name = m["name"]
        self.buffers = m["buffers"]
        self.launches = m["launches"]
        if not self.launches:
            raise ManifestError(f"{manifest_path}: no launches (a gpu.module without evo.plan)")
        self._driver = CudaDriver.get()
        import torch
        torch.cuda.init()
        torch.cuda.current_device()
        torch.zeros(1, device="cuda")  # makes the primary context current on this thread
        self._module = self._driver.load_module(image)
        self._functions = {}
        for launch in self.launches:
            name = launch["kernel"]
            if name not in self._functions:
                self._functions[name] = self._driver.get_function(self._module, name)
            if launch["dynamic_shared_memory"] > 48 * 1024:
                self._driver.set_max_dynamic_shared_memory(self._functions[name],
                                                           launch["dynamic_shared_memory"])

    def _role(self, role):
        return [b for b in self.buffers if b["role"] == role]

    def allocate_outputs(self, fill=None):
        import torch
        outs = []
        for b in self._role("output"):
            t = torch.empty(b["shape"], dtype=_torch_dtype(b["dtype"]), device="cuda")
            if fill is not None:
                t.fill_(fill)
            outs.append(t)
        return outs

    def __call__(self, *inputs, outputs=None, stream=None):
        """Runs the launches on `inputs`; returns the output tensors (allocated if not given)."""
        import torch
        ins = self._role("input")
        if len(inputs) != len(ins):
            raise ValueError(f"{self.name} takes {len(ins)} inputs, got {len(inputs)}")
        if outputs is None:
            outputs = self.allocate_outputs()
        if len(outputs) != len(self._role("output")):
            raise ValueError(f"{self.name} writes {len(self._role('output'))} outputs")
        it_in, it_out = iter(inputs), iter(outputs)
        pointers, scratch = [], []
        for b in self.buffers:
            if b["role"] == "scratch":
                t = (torch.zeros if b.get("zero_init") else torch.empty)(
                    b["shape"], dtype=_torch_dtype(b["dtype"]), device="cuda")
                scratch.append(t)
            else:
                t = next(it_in) if b["role"] == "input" else next(it_out)
                want = (list(b["shape"]), _torch_dtype(b["dtype"]))
                if (list(t.shape), t.dtype) != want or not t.is_cuda or not t.is_contiguous():
                    raise ValueError(f"{self.name}: buffer '{b['name']}' needs a contiguous CUDA "
                                     f"tensor of shape {want[0]} and dtype {want[1]}, got "
                                     f"{list(t.shape)} {t.dtype} on {t.device}")
            pointers.append(t.data_ptr())
        s = stream if stream is not None else torch.cuda.current_stream().cuda_stream
        for launch in self.launches:
            self._driver.launch(self._functions[launch["kernel"]], launch["grid"], launch["block"],
                                launch["dynamic_shared_memory"], s,
                                [pointers[a] for a in launch["args"]])
        # Scratch must outlive the kernels that use it.
        if scratch:
            torch.cuda.current_stream().synchronize()
        return outputs
