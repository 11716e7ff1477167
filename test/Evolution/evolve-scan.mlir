// evo-evolve on a scan (a cumsum written as a masked triangular reduction) with the stand-in
// worker: the task is of the scan family, its baseline is the naive schedule (a thread per row),
// the built-in proposer seeds parallel scans first (a warp and a block per row, 128-bit loads,
// several chunks per thread) and then mutates the scan knobs; the winner is spliced back as a
// scan kernel.
//
// REQUIRES: stand-in-worker
// RUN: rm -rf %t && mkdir -p %t
// RUN: evo-opt %s --evo-lower-to-gpu --evo-evolve="worker=%evo_fake_worker run-dir=%t/run max-candidates=16 quiet=true seed=3" -o %t/out.mlir 2>%t/err
// RUN: FileCheck %s --input-file=%t/out.mlir
// RUN: FileCheck %s --input-file=%t/err --check-prefix=REMARK
// RUN: %python %S/Inputs/list_candidates.py %t/run | FileCheck %s --check-prefix=CANDIDATES

// CHECK-LABEL: func.func @cumsum
// CHECK:         gpu.module @cumsum_kernels attributes {evo.evolved = [{baseline_ms = {{.*}}, task = "cumsum_t0"}]
// CHECK:         gpu.func @cumsum_k0(
// CHECK-SAME:      evo.family = #evo.family<scan>

// REMARK: remark: evo-evolve: cumsum_t0: {{[0-9.]+}} ms -> {{[0-9.]+}} ms ({{[0-9.]+}}x), {{[0-9]+}} candidates evaluated

// CANDIDATES:      cumsum_t0 scan baseline valid {"block_size": 256, "elements_per_thread": 1, "reduction": "thread", "vector_width": 1}
// CANDIDATES-NEXT: cumsum_t0 scan knob-seed valid {"block_size": 256, "elements_per_thread": 1, "reduction": "warp", "vector_width": 4}
// CANDIDATES-NEXT: cumsum_t0 scan knob-seed valid {"block_size": 256, "elements_per_thread": 2, "reduction": "warp", "vector_width": 4}
// CANDIDATES-NEXT: cumsum_t0 scan knob-seed valid {"block_size": 256, "elements_per_thread": 1, "reduction": "block", "vector_width": 4}
// CANDIDATES:      cumsum_t0 scan knob-seed valid {"block_size": 256, "elements_per_thread": 4, "reduction": "warp", "vector_width": 1}
// CANDIDATES:      cumsum_t0 scan knob-{{mutate|crossover}}
// CANDIDATES-NOT:  "accumulators"
// CANDIDATES-NOT:  "split"

func.func @cumsum(%x: tensor<256x1024xf32>) -> tensor<256x1024xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x1024xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<256x1024xf32>) -> tensor<256x1024xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<256x1024xf32>) outs(%acc : tensor<256x1024xf32>) {
    ^bb0(%in: f32, %o: f32):
      %j = linalg.index 1 : index
      %k = linalg.index 2 : index
      %keep = arith.cmpi ule, %k, %j : index
      %v = arith.select %keep, %in, %zero : f32
      %s = arith.addf %o, %v : f32
      linalg.yield %s : f32
  } -> tensor<256x1024xf32>
  return %r : tensor<256x1024xf32>
}
