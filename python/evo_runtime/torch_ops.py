"""register_op: an emitted kernel as a PyTorch custom operator (torch.library).

    import evo_runtime, torch
    row_sum = evo_runtime.register_op("mylib::row_sum", "out/row_sum.json")
    y = row_sum(x)                       # also torch.ops.mylib.row_sum(x)
    y = torch.compile(lambda x: row_sum(x) * 2)(x)

The operator is functional (it allocates its outputs and mutates nothing), has a fake (meta)
implementation that gives the outputs' shapes and dtypes from the manifest, so torch.compile
traces through it and CUDA graphs capture it, and runs on the inputs' device and the caller's
current stream without synchronizing. Inputs that are not contiguous or not 16-byte aligned are
copied first (the kernels index dense, aligned buffers).
"""

import keyword
import re
import threading

from .manifest import BUFFER_ALIGNMENT, Manifest, describe
from .module import EvoModule, dtype_name, torch_dtype

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_registry = {}
_registry_lock = threading.Lock()


def output_specs(manifest: Manifest, input_specs):
    """(shape, dtype name) of each output for inputs given as (shape, dtype name) pairs; raises
    ValueError on a mismatch. The fake implementation, without torch."""
    return manifest.check_inputs(input_specs)


def _arg_type(b):
    """A scalar argument (by_value) is a number of the schema: float, int or bool."""
    if not b.by_value:
        return "Tensor"
    return "bool" if b.dtype == "i1" else "float" if b.dtype in ("f16", "bf16", "f32", "f64") else "int"


def schema(manifest: Manifest, name: str) -> str:
    """The operator schema: one Tensor per input (a float, int or bool per scalar argument), a
    Tensor (or a tuple) per output."""
    args = ", ".join(f"{_arg_type(b)} in{i}" for i, b in enumerate(manifest.inputs))
    n = len(manifest.outputs)
    ret = "Tensor" if n == 1 else "(" + ", ".join(["Tensor"] * n) + ")"
    return f"{name}({args}) -> {ret}"


def _split_qualname(qualname):
    if not isinstance(qualname, str) or qualname.count("::") != 1:
        raise ValueError(f"operator name {qualname!r} must be 'namespace::name'")
    ns, name = qualname.split("::")
    for part in (ns, name):
        if not _NAME.match(part) or keyword.iskeyword(part) or part.startswith("__"):
            raise ValueError(f"operator name {qualname!r}: {part!r} is not an identifier")
    return ns, name


def register_op(qualname, manifest, *, image=None):
    """Registers `qualname` ("namespace::name") as a torch.library custom op running the kernels
    of `manifest` (a path, or an EvoModule). Returns the op (torch.ops.namespace.name). The same
    name registered twice is an error (torch.library keeps one definition per process)."""
    import torch

    ns, name = _split_qualname(qualname)
    module = manifest if isinstance(manifest, EvoModule) else EvoModule(manifest, image=image)
    spec = module.spec
    outs = spec.outputs

    def _contiguous_aligned(t):
        if not t.is_contiguous() or t.data_ptr() % BUFFER_ALIGNMENT:
            t = t.clone(memory_format=torch.contiguous_format)
        return t

    def cuda_impl(*inputs):
        results = module(*[_contiguous_aligned(t) if isinstance(t, torch.Tensor) else t
                            for t in inputs])
        return results[0] if len(results) == 1 else tuple(results)

    def fake_impl(*inputs):
        specs = [(tuple(t.shape), dtype_name(t.dtype)) if isinstance(t, torch.Tensor) else None
                 for t in inputs]
        shapes = output_specs(spec, specs)
        tensors = [t for t in inputs if isinstance(t, torch.Tensor)]
        device = tensors[0].device if tensors else torch.device("cuda")
        results = [torch.empty(shape, dtype=torch_dtype(dt), device=device) for shape, dt in shapes]
        return results[0] if len(results) == 1 else tuple(results)

    with _registry_lock:
        if qualname in _registry:
            raise ValueError(f"{qualname} is already registered (by register_op in this process)")
        lib = torch.library.Library(ns, "FRAGMENT")
        lib.define(schema(spec, name))
        lib.impl(name, cuda_impl, "CUDA")
        if hasattr(torch.library, "register_fake"):
            torch.library.register_fake(qualname, fake_impl, lib=lib)
        elif hasattr(torch.library, "impl_abstract"):
            torch.library.impl_abstract(qualname, fake_impl, lib=lib)
        else:
            lib.impl(name, fake_impl, "Meta")
        # The Library object must stay alive, or the registration goes with it.
        _registry[qualname] = (lib, module)
    return getattr(getattr(torch.ops, ns), name)


def registered_module(qualname):
    """The EvoModule behind an op made by register_op (e.g. to prepare() it on a device)."""
    return _registry[qualname][1]


__all__ = ["register_op", "registered_module", "output_specs", "schema", "describe"]
