// evo-evolve and f32-matmul (stand-in worker, no GPU): the opt-in recorded by evo-lower-to-gpu is
// inherited by every genome (the knob is in no family's search set, so no mutator changes it);
// with it, the tensor-core seeds take a K tile of 32 f32 and lower for sm_90a, and the winner,
// whatever it is, still records f32_matmul = tf32 (evo-verify's tolerance follows it). Without
// it no candidate is a wgmma kernel and nothing records f32_matmul.
//
// REQUIRES: stand-in-worker, ptxas
// RUN: rm -rf %t && mkdir -p %t
// RUN: evo-opt %s --evo-lower-to-gpu="f32-matmul=tf32" --evo-evolve="worker=%evo_fake_worker chip=sm_90a ptxas=%ptxas run-dir=%t/tf32 max-candidates=12 quiet=true seed=4" -o %t/tf32.mlir 2>%t/tf32.err
// RUN: FileCheck %s --check-prefix=TF32 --input-file=%t/tf32.mlir
// RUN: evo-opt %s --evo-lower-to-gpu --evo-evolve="worker=%evo_fake_worker chip=sm_90a ptxas=%ptxas run-dir=%t/ieee max-candidates=12 quiet=true seed=4" -o %t/ieee.mlir 2>%t/ieee.err
// RUN: FileCheck %s --check-prefix=IEEE --input-file=%t/ieee.mlir

// TF32: gpu.func @linear_f32_k0
// TF32-SAME: f32_matmul = tf32

// IEEE-NOT: wgmma = true
// IEEE-NOT: f32_matmul
func.func @linear_f32(%a: tensor<200x256xf32>, %w: tensor<300x256xf32>) -> tensor<200x300xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<200x300xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<200x300xf32>) -> tensor<200x300xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %w : tensor<200x256xf32>, tensor<300x256xf32>) outs(%acc : tensor<200x300xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<200x300xf32>
  return %c : tensor<200x300xf32>
}
