# -*- Python -*-
# lit configuration of evo-opt's test suite.

import ctypes
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "EVO"
# lit's internal shell everywhere (its `not`, `rm`, `mkdir` builtins), also on GPU hosts.
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".test"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.evo_obj_root, "test")

# Variables must be bound once per CHECK block (DESIGN: FILECHECK_OPTS).
config.environment["FILECHECK_OPTS"] = "--enable-var-scope"

llvm_config.use_default_substitutions()
config.substitutions.append(("%evo_src_root", config.evo_src_root))
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.evo_tools_dir, append_path=True)
llvm_config.add_tool_substitutions(["evo-opt"], [config.evo_tools_dir])

# ptxas: assembling emitted PTX needs the CUDA toolkit, not a GPU.
if config.evo_ptxas and os.access(config.evo_ptxas, os.X_OK):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", config.evo_ptxas))
else:
    lit_config.note("ptxas not found: tests that assemble PTX are UNSUPPORTED")

# cuda: tests that run kernels need a driver (libcuda.so.1) and a visible GPU.
def _cuda_devices():
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError as e:
        return 0, "libcuda.so.1 cannot be loaded ({})".format(e)
    if lib.cuInit(0) != 0:
        return 0, "cuInit failed"
    n = ctypes.c_int(0)
    if lib.cuDeviceGetCount(ctypes.byref(n)) != 0 or n.value == 0:
        return 0, "no CUDA device visible"
    return n.value, ""

_n, _why = _cuda_devices()
if _n:
    config.available_features.add("cuda")
else:
    lit_config.note("no GPU: tests marked 'REQUIRES: cuda' are UNSUPPORTED ({})".format(_why))
