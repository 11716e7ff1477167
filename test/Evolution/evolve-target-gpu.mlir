// evo-evolve times what it makes for `chip` on the GPU it runs on: a GPU that cannot run it is an
// error before any search (and before the run directory is made), with the GPU's name and chip.
// Cubins (ptxas found) run on their own major version only, code for sm_90a on sm_90 only, PTX
// (ptxas=none) on any GPU at least as new; a GPU that runs it but is another chip is a warning.
// The stand-in CUDA driver (FakeCuda.c) plays GPUs of several compute capabilities; with the
// stand-in worker there is no GPU and nothing is checked.
//
// REQUIRES: fake-cuda
// RUN: rm -rf %t && mkdir -p %t
// RUN: %if ptxas %{ env EVO_LIBCUDA=%evo_fake_cuda EVO_FAKE_CUDA_CC=9.0 not evo-opt %s --evo-lower-to-gpu --evo-evolve="chip=sm_80 ptxas=%ptxas run-dir=%t/run" -o /dev/null 2>&1 | FileCheck %s --check-prefix=CUBIN %}
// CUBIN: error: evo-evolve: GPU 0 is sm_90 (Fake GPU 0) but chip=sm_80, and a cubin for sm_80 runs on sm_80 to sm_89 only: pass chip=sm_90 to tune for this GPU
// RUN: %if ptxas %{ env EVO_LIBCUDA=%evo_fake_cuda EVO_FAKE_CUDA_CC=8.6 not evo-opt %s --evo-lower-to-gpu --evo-evolve="chip=sm_90a ptxas=%ptxas run-dir=%t/run" -o /dev/null 2>&1 | FileCheck %s --check-prefix=ARCH %}
// ARCH: error: evo-evolve: GPU 0 is sm_86 (Fake GPU 0) but chip=sm_90a, and a cubin for sm_90a runs on sm_90 only: pass chip=sm_86 to tune for this GPU
// RUN: env EVO_LIBCUDA=%evo_fake_cuda EVO_FAKE_CUDA_CC=10.0 not evo-opt %s --evo-lower-to-gpu --evo-evolve="chip=sm_90a ptxas=none run-dir=%t/run" -o /dev/null 2>&1 | FileCheck %s --check-prefix=PTX-ARCH
// PTX-ARCH: error: evo-evolve: GPU 0 is sm_100 (Fake GPU 0) but chip=sm_90a, and PTX for sm_90a runs on sm_90 only: pass chip=sm_100 to tune for this GPU
// RUN: env EVO_LIBCUDA=%evo_fake_cuda EVO_FAKE_CUDA_CC=9.0 not evo-opt %s --evo-lower-to-gpu --evo-evolve="chip=sm_100 features=+ptx86 ptxas=none run-dir=%t/run" -o /dev/null 2>&1 | FileCheck %s --check-prefix=PTX-NEWER
// PTX-NEWER: error: evo-evolve: GPU 0 is sm_90 (Fake GPU 0) but chip=sm_100, and PTX for sm_100 needs sm_100 or newer: pass chip=sm_90 to tune for this GPU
// Every GPU of devices= is checked (device 1 is an 8.0 here).
// RUN: env EVO_LIBCUDA=%evo_fake_cuda EVO_FAKE_CUDA_DEVICES=2 EVO_FAKE_CUDA_CC=9.0,8.0 not evo-opt %s --evo-lower-to-gpu --evo-evolve="chip=sm_90 ptxas=none devices=0,1 run-dir=%t/run" -o /dev/null 2>&1 | FileCheck %s --check-prefix=DEVICES
// DEVICES: error: evo-evolve: GPU 1 is sm_80 (Fake GPU 1) but chip=sm_90, and PTX for sm_90 needs sm_90 or newer: pass chip=sm_80 to tune for this GPU
// RUN: not test -e %t/run
// PTX for sm_80 runs on an sm_90: a warning, and the run goes on (here to the missing worker).
// RUN: env EVO_LIBCUDA=%evo_fake_cuda EVO_FAKE_CUDA_CC=9.0 not evo-opt %s --evo-lower-to-gpu --evo-evolve="chip=sm_80 ptxas=none worker=%t/no-worker run-dir=%t/run" -o /dev/null 2>&1 | FileCheck %s --check-prefix=WARN
// WARN: warning: evo-evolve: GPU 0 is sm_90 (Fake GPU 0) and chip=sm_80: the kernels run there (as PTX the driver compiles for it), but they are timed on an sm_90, not on an sm_80
// WARN: error: evo-evolve: {{.*}}no-worker
// A matching chip: neither.
// RUN: env EVO_LIBCUDA=%evo_fake_cuda EVO_FAKE_CUDA_CC=9.0 not evo-opt %s --evo-lower-to-gpu --evo-evolve="chip=sm_90a ptxas=none worker=%t/no-worker run-dir=%t/run" -o /dev/null 2>&1 | FileCheck %s --check-prefix=MATCH
// MATCH-NOT: GPU 0 is
// MATCH: error: evo-evolve: {{.*}}no-worker
// The chip itself is checked first, without a GPU (NVPTX would abort on sm_120 with +ptx80).
// RUN: not evo-opt %s --evo-lower-to-gpu --evo-evolve="chip=sm_120 run-dir=%t/run" -o /dev/null 2>&1 | FileCheck %s --check-prefix=CHIP
// CHIP: error: evo-evolve: chip sm_120 needs PTX ISA 8.7 or newer, but features='+ptx80' asks for 8.0: pass features=+ptx87

func.func @scale(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %c = arith.constant dense<2.0> : tensor<1024xf32>
  %e = tensor.empty() : tensor<1024xf32>
  %r = linalg.mul ins(%x, %c : tensor<1024xf32>, tensor<1024xf32>) outs(%e : tensor<1024xf32>) -> tensor<1024xf32>
  return %r : tensor<1024xf32>
}
