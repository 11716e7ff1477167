"""Load the PTX that evo-opt emits and call it from PyTorch.

    import evo_runtime
    softmax = evo_runtime.EvoModule("out/softmax.json")     # the manifest written by evo-emit-ptx
    y, = softmax(x)                                          # x: a CUDA torch.Tensor
    op = evo_runtime.register_op("mylib::softmax", "out/softmax.json")
    y = op(x)                                                # a torch.library op (torch.compile, CUDA graphs)

The manifest says everything needed: buffers (inputs, outputs, scratch, tensor maps, constants
whose bytes are in a file beside the PTX) in ABI order, and the ordered kernel launches with
their grid, block and shared memory. Kernels are loaded and launched through the CUDA driver API
(libcuda.so.1, via ctypes) on the caller's stream, without synchronizing. `Manifest` (parsing and validation) needs neither a GPU nor torch.
"""

__version__ = "0.1.0"

from .driver import CudaDriver, CudaError  # noqa: F401,E402
from .manifest import (Binary, Buffer, Launch, Manifest, ManifestError,  # noqa: F401,E402
                       UnsupportedDeviceError, choose_image)
from .module import EvoModule  # noqa: F401,E402
from .torch_ops import output_specs, register_op, registered_module, schema  # noqa: F401,E402

__all__ = ["EvoModule", "Manifest", "ManifestError", "Buffer", "Binary", "Launch", "CudaDriver",
           "CudaError", "UnsupportedDeviceError", "choose_image",
           "register_op", "registered_module", "output_specs", "schema", "__version__"]
