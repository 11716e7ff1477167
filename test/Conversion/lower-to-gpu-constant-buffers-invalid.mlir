// inline-constant-bytes is at most 1 MiB: the kernels' own cap for constants they hold.
// RUN: not evo-opt %s -evo-lower-to-gpu="inline-constant-bytes=1048577" 2>&1 | FileCheck %s
// RUN: not evo-opt %s -evo-lower-to-gpu="inline-constant-bytes=-1" 2>&1 | FileCheck %s
// CHECK: error: evo-lower-to-gpu: invalid option: inline-constant-bytes={{.*}} is not in [0, 1048576]
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.abs ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
