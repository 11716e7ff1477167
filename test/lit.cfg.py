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

# Runtime libraries and the JIT runner for the integration tests (test/Integration, docs/runtime.md).
# $EVO_LIB_DIR points a GPU host at libraries copied elsewhere.
_evo_lib_dir = os.environ.get("EVO_LIB_DIR") or config.evo_lib_dir
config.substitutions.append(("%evo_cuda_runtime", os.path.join(_evo_lib_dir, "libevo_cuda_runtime.so")))
config.substitutions.append(("%evo_runner_utils", os.path.join(_evo_lib_dir, "libevo_runner_utils.so")))
config.substitutions.append(("%evo_tools_dir", config.evo_tools_dir))
llvm_config.add_tool_substitutions(["evo-runner"], [config.evo_tools_dir])
# Upstream's mlir-runner where LLVM is installed, else evo-opt's runner personality.
_mlir_runner = os.path.join(config.llvm_tools_dir, "mlir-runner")
if not os.access(_mlir_runner, os.X_OK):
    _mlir_runner = os.path.join(config.evo_tools_dir, "evo-runner")
config.substitutions.append(("%mlir_runner", _mlir_runner))
# The driver library and the GPUs the tests may use, where the caller chose them.
for _var in ["EVO_LIBCUDA", "CUDA_VISIBLE_DEVICES"]:
    if _var in os.environ:
        config.environment[_var] = os.environ[_var]

# The scripted LLM (scripts/scripted-llm) lowers tasks with evo-opt to write its replies.
config.substitutions.append(("%scripted_llm", os.path.join(config.evo_src_root, "scripts", "scripted-llm")))
config.environment["EVO_OPT"] = os.path.join(config.evo_tools_dir, "evo-opt")

# The stand-in worker (test/tools/evo-fake-worker) lets evo-evolve run end to end without a GPU:
# EVO_TEST_STAND_IN_WORKER names it, and evo-evolve built with the tests (EVO_TEST_HOOKS) then
# trusts `worker=` that executable without a GPU (no driver check, no roofline). Any other worker
# (the real one, on a GPU host) is treated as usual.
_fake = getattr(config, "evo_fake_worker", "")
if _fake and os.access(_fake, os.X_OK):
    config.available_features.add("stand-in-worker")
    config.substitutions.append(("%evo_fake_worker", _fake))
    config.environment["EVO_TEST_STAND_IN_WORKER"] = _fake
else:
    lit_config.note("no stand-in worker (unit tests not built): evolution tests are UNSUPPORTED")

# split-file (LLVM's tools; GPU hosts without LLVM lack it).
import shutil
if shutil.which("split-file", path=config.llvm_tools_dir + os.pathsep + os.environ.get("PATH", "")):
    config.available_features.add("split-file")
else:
    lit_config.note("split-file not found: tests that split their input files are UNSUPPORTED")

# A stand-in CUDA driver (runtime/unittests/FakeCuda.c) that takes every call and runs nothing:
# the real worker can be driven through a whole request without a GPU.
_fake_cuda = os.path.join(_evo_lib_dir, "libevo-fake-cuda.so")
if os.access(_fake_cuda, os.R_OK):
    config.available_features.add("fake-cuda")
    config.substitutions.append(("%evo_fake_cuda", _fake_cuda))

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
    # cuda-sm90a: device 0 is compute capability 9.0 (wgmma, TMA: PTX for sm_90a runs there).
    # cuda-sm80: compute capability 8.0 or newer (mma.sync m16n8k16, cp.async: PTX for sm_80).
    _lib = ctypes.CDLL("libcuda.so.1")
    _major, _minor = ctypes.c_int(0), ctypes.c_int(0)
    _cc = ((_major.value, _minor.value)
           if _lib.cuDeviceGetAttribute(ctypes.byref(_major), 75, 0) == 0 and
           _lib.cuDeviceGetAttribute(ctypes.byref(_minor), 76, 0) == 0 else (0, 0))
    if _cc == (9, 0):
        config.available_features.add("cuda-sm90a")
    else:
        lit_config.note("device 0 is not compute capability 9.0: tests marked "
                        "'REQUIRES: cuda-sm90a' are UNSUPPORTED")
    if _cc >= (8, 0):
        config.available_features.add("cuda-sm80")
    else:
        lit_config.note("device 0 is older than compute capability 8.0: tests marked "
                        "'REQUIRES: cuda-sm80' are UNSUPPORTED")
else:
    lit_config.note("no GPU: tests marked 'REQUIRES: cuda' are UNSUPPORTED ({})".format(_why))
