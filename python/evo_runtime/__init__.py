"""Load the PTX that evo-opt emits and call it like a PyTorch function.

    from evo_runtime import EvoModule
    softmax = EvoModule("out/softmax.json")      # the manifest written by evo-emit-ptx
    y, = softmax(x)                               # x: a CUDA torch.Tensor

The manifest says everything needed: buffers (inputs, outputs, scratch) in ABI order, and the
ordered kernel launches with their grid, block and shared memory. Kernels are loaded and launched
through the CUDA driver API (libcuda.so.1, via ctypes) on PyTorch's current stream, so no other
package is needed.
"""

from .driver import CudaDriver, CudaError  # noqa: F401
from .module import EvoModule, ManifestError  # noqa: F401

__all__ = ["EvoModule", "ManifestError", "CudaDriver", "CudaError"]
