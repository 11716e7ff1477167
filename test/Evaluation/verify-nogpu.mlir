// Without a GPU, evo-verify says so and fails; it never pretends.
// UNSUPPORTED: cuda
// RUN: not evo-opt %s --evo-pipeline="output-dir=-" --evo-verify 2>&1 | FileCheck %s
// CHECK: error: evo-verify: no GPU to run on: no CUDA driver: cannot load libcuda.so.1

// Kernels must be compiled first.
// RUN: not evo-opt %s --evo-lower-to-gpu --evo-verify 2>&1 | FileCheck %s --check-prefix=NOTCOMPILED
// NOTCOMPILED: error: evo-verify: the kernels are not compiled yet; run evo-emit-ptx first

func.func @exp(%x: tensor<64xf32>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %r = linalg.exp ins(%x : tensor<64xf32>) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  return %r : tensor<64xf32>
}
