// devices= with fewer tasks than GPUs: a task's candidates are spread over the spare GPUs,
// each GPU a worker of its own with the baseline as its reference. Times from different GPUs
// are compared only relative to each GPU's baseline, and the finalists are re-measured on the
// task's first GPU. With the stand-in worker (which times a kernel from a hash of its PTX) one
// task over two "GPUs" gives the module one GPU gives, even when the GPUs differ in speed
// (EVO_FAKE_WORKER_SLOW_DEVICE=1: every time on GPU 1 is 3x, the baseline's too; the winner is
// measured there, so ranking by raw times would lose it). The budget is the family's five seeds:
// past them the search proposes from the results that have come back so far (it keeps the GPUs
// busy rather than waiting for a generation), and with two GPUs answering they come back in
// another order, so the children differ (with 16 candidates the two-GPU run found a faster
// mutant the one-GPU run never proposed).
//
// REQUIRES: stand-in-worker
// RUN: rm -rf %t && mkdir -p %t
// RUN: evo-opt %s --evo-lower-to-gpu --evo-evolve="worker=%evo_fake_worker run-dir=%t/one max-candidates=5 compile-threads=1 quiet=true seed=3" -o %t/one.mlir 2>%t/one.err
// RUN: env EVO_FAKE_WORKER_SLOW_DEVICE=1 evo-opt %s --evo-lower-to-gpu --evo-evolve="worker=%evo_fake_worker run-dir=%t/two max-candidates=5 compile-threads=1 quiet=true seed=3 devices=0,1" -o %t/two.mlir 2>%t/two.err
// The candidates come in another order (two GPUs answer at once), so the winner's id differs;
// its kernel and its times (re-measured on GPU 0, as fast as the one GPU) do not.
// RUN: sed -E 's/best_candidate = [0-9]+ : i64/best_candidate = N/' %t/one.mlir > %t/one.n.mlir
// RUN: sed -E 's/best_candidate = [0-9]+ : i64/best_candidate = N/' %t/two.mlir > %t/two.n.mlir
// RUN: diff %t/one.n.mlir %t/two.n.mlir
// RUN: FileCheck %s --input-file=%t/one.err --check-prefix=ONE
// RUN: FileCheck %s --input-file=%t/two.err --check-prefix=TWO
// Which GPU measured each candidate (timing's "device"), and the task's GPUs in the report.
// RUN: %python -c "import json, sqlite3; r = json.load(open('%t/two/report.json')); print(r['tasks'][0]['evaluated_on']['devices']); db = sqlite3.connect('%t/two/run.sqlite'); print(sorted(set(json.loads(t).get('device') for (t,) in db.execute(\"select timing from candidates where op != 'baseline'\"))))" | FileCheck %s --check-prefix=REPORT
//
// Three GPUs, two tasks: the bigger task (sum_big) takes GPUs 0 and 2, the other GPU 1.
// RUN: evo-opt %S/Inputs/spread-two-tasks.mlir --evo-lower-to-gpu --evo-evolve="worker=%evo_fake_worker run-dir=%t/three max-candidates=6 compile-threads=1 seed=3 devices=0,1,2" -o %t/three.mlir 2>&1 | FileCheck %s --check-prefix=THREE
// RUN: evo-opt %S/Inputs/spread-two-tasks.mlir --evo-lower-to-gpu --evo-evolve="worker=%evo_fake_worker run-dir=%t/three max-candidates=6 compile-threads=1 quiet=true seed=3 devices=0,1,2 resume=true" -o %t/three-again.mlir
// RUN: diff %t/three.mlir %t/three-again.mlir

// The same speedup.
// ONE: remark: evo-evolve: sum_big_t0: {{.*}} ([[SPEEDUP:[0-9.]+x]]), 5 candidates evaluated, 5 valid
// TWO: remark: evo-evolve: sum_big_t0: {{.*}} ([[SPEEDUP:[0-9.]+x]]), 5 candidates evaluated, 5 valid on GPUs 0, 1 (finalists re-measured on GPU 0)
// REPORT: [0, 1]
// REPORT-NEXT: [0, 1]
// THREE-DAG: remark: evo-evolve: sum_big_t0: {{.*}} valid on GPUs 0, 2 (finalists re-measured on GPU 0)
// THREE-DAG: remark: evo-evolve: scale_small_t0: {{.*}} valid on GPU 1{{$}}
// The progress lines (plain lines: stderr is not a terminal) name the GPUs too.
// THREE-DAG: evo-evolve: sum_big_t0 (GPUs 0,2) | gen {{.*}} | done
// THREE-DAG: evo-evolve: scale_small_t0 (GPU 1) | gen {{.*}} | done

func.func @sum_big(%x: tensor<2048x1024xf32>) -> tensor<2048xf32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2048xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<2048xf32>) -> tensor<2048xf32>
  %r = linalg.reduce ins(%x : tensor<2048x1024xf32>) outs(%z : tensor<2048xf32>) dimensions = [1]
    (%a: f32, %b: f32) {
      %s = arith.addf %a, %b : f32
      linalg.yield %s : f32
    }
  return %r : tensor<2048xf32>
}
