// devices=: the tasks are spread over several GPUs, one task per GPU at a time, each searched
// and re-measured on one GPU. With the stand-in worker (which times a kernel from a hash of its
// PTX, whatever the device) a run over two "GPUs" gives the module of a run on one; the store
// and the report say which GPU searched each task; bad lists are refused before any work.
//
// REQUIRES: stand-in-worker
// RUN: rm -rf %t && mkdir -p %t
// RUN: evo-opt %s --evo-lower-to-gpu --evo-evolve="worker=%evo_fake_worker run-dir=%t/one max-candidates=8 compile-threads=1 quiet=true seed=5" -o %t/one.mlir
// RUN: evo-opt %s --evo-lower-to-gpu --evo-evolve="worker=%evo_fake_worker run-dir=%t/two max-candidates=8 compile-threads=1 quiet=true seed=5 devices=0,1" -o %t/two.mlir 2>%t/two.err
// Candidate ids are numbered across the run, so tasks searched at once interleave them: the
// modules are the same but for best_candidate.
// RUN: sed -E 's/best_candidate = [0-9]+ : i64/best_candidate = N/' %t/one.mlir > %t/one.n.mlir
// RUN: sed -E 's/best_candidate = [0-9]+ : i64/best_candidate = N/' %t/two.mlir > %t/two.n.mlir
// RUN: diff %t/one.n.mlir %t/two.n.mlir
// RUN: FileCheck %s --input-file=%t/two.err --check-prefix=REMARK
// RUN: %python -c "import json; r = json.load(open('%t/two/report.json')); print(sorted(set(t['evaluated_on']['device'] for t in r['tasks'])), len(r['tasks']))" | FileCheck %s --check-prefix=REPORT
// Where the time went: each task's search on its GPU, and the run's phases.
// RUN: %python -c "import json; r = json.load(open('%t/two/report.json')); print(all(t['evaluated_on']['seconds'] > 0 for t in r['tasks']), sorted(r['meta']['phases']))" | FileCheck %s --check-prefix=PHASES
//
// RUN: not evo-opt %s --evo-lower-to-gpu --evo-evolve="worker=%evo_fake_worker run-dir=%t/bad devices=0,0" -o %t/bad.mlir 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: not evo-opt %s --evo-lower-to-gpu --evo-evolve="worker=%evo_fake_worker run-dir=%t/bad devices=0,x" -o %t/bad.mlir 2>&1 | FileCheck %s --check-prefix=NOTONE
// RUN: not evo-opt %s --evo-lower-to-gpu --evo-evolve="worker=%evo_fake_worker run-dir=%t/bad devices=all" -o %t/bad.mlir 2>&1 | FileCheck %s --check-prefix=ALL
// RUN: not test -e %t/bad

// REMARK-DAG: remark: evo-evolve: sum_a_t0: {{.*}} valid on GPU {{[01]}}
// REMARK-DAG: remark: evo-evolve: sum_b_t0: {{.*}} valid on GPU {{[01]}}
// REMARK-DAG: remark: evo-evolve: scale_c_t0: {{.*}} valid on GPU {{[01]}}
// REMARK-DAG: remark: evo-evolve: scale_d_t0: {{.*}} valid on GPU {{[01]}}
// The final checks run on both GPUs at once; their remarks come in the modules' order.
// REMARK: 'sum_a': the emitted kernels passed the final re-verification
// REMARK-NEXT: func.func @sum_a
// REMARK: 'sum_b': the emitted kernels passed the final re-verification
// REMARK: 'scale_c': the emitted kernels passed the final re-verification
// REMARK: 'scale_d': the emitted kernels passed the final re-verification
// REPORT: [0, 1] 4
// PHASES: True ['final_check_s', 'search_s']
// TWICE: error: evo-evolve: devices names GPU 0 twice
// NOTONE: error: evo-evolve: devices must be 'all' or GPU ordinals like 0,1; 'x' is not one
// ALL: error: evo-evolve: devices=all counts this host's GPUs; with the stand-in worker name them (devices=0,1)

#id = affine_map<(i, j) -> (i, j)>
func.func @sum_a(%x: tensor<512x1024xf32>) -> tensor<512xf32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<512xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<512xf32>) -> tensor<512xf32>
  %r = linalg.reduce ins(%x : tensor<512x1024xf32>) outs(%z : tensor<512xf32>) dimensions = [1]
    (%a: f32, %b: f32) {
      %s = arith.addf %a, %b : f32
      linalg.yield %s : f32
    }
  return %r : tensor<512xf32>
}

func.func @sum_b(%x: tensor<256x2048xf32>) -> tensor<256xf32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<256xf32>) -> tensor<256xf32>
  %r = linalg.reduce ins(%x : tensor<256x2048xf32>) outs(%z : tensor<256xf32>) dimensions = [1]
    (%a: f32, %b: f32) {
      %s = arith.addf %a, %b : f32
      linalg.yield %s : f32
    }
  return %r : tensor<256xf32>
}

func.func @scale_c(%x: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %c2 = arith.constant 2.0 : f32
  %e = tensor.empty() : tensor<256x256xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<256x256xf32>) outs(%e : tensor<256x256xf32>) {
    ^bb0(%a: f32, %o: f32):
      %m = arith.mulf %a, %c2 : f32
      linalg.yield %m : f32
    } -> tensor<256x256xf32>
  return %r : tensor<256x256xf32>
}

func.func @scale_d(%x: tensor<128x512xf32>) -> tensor<128x512xf32> {
  %c3 = arith.constant 3.0 : f32
  %e = tensor.empty() : tensor<128x512xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<128x512xf32>) outs(%e : tensor<128x512xf32>) {
    ^bb0(%a: f32, %o: f32):
      %m = arith.mulf %a, %c3 : f32
      linalg.yield %m : f32
    } -> tensor<128x512xf32>
  return %r : tensor<128x512xf32>
}
