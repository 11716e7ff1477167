// Batch hygiene of evo-evolve (docs/evolution.md, "Batch runs"), with the stand-in worker:
// progress in a log (stderr not a terminal) is one plain line per generation of each task and
// one when it is done; RUN_DIR/work/<task> is removed once the task is done (keep-work=true
// keeps it); run-time-budget shares one wall-clock budget among the tasks; bad budgets are
// refused before any work.
//
// REQUIRES: stand-in-worker
// RUN: rm -rf %t && mkdir -p %t
// RUN: evo-opt %s --evo-lower-to-gpu --evo-evolve="worker=%evo_fake_worker run-dir=%t/run max-candidates=8 samples=4" -o %t/out.mlir 2>%t/err
// RUN: FileCheck %s --input-file=%t/err --check-prefix=LOG
// RUN: not test -e %t/run/work/row_sum_t0
// RUN: not test -e %t/run/work/relu_t0
// RUN: test -f %t/run/run.sqlite
//
// A run killed after its tasks were done but before the final re-verification: the resume
// needs the worker for that check alone (it was a dangling callback before).
// RUN: %python -c "import sqlite3; d = sqlite3.connect('%t/run/run.sqlite'); d.execute(\"delete from meta where key like 'final_check:%%'\"); d.commit()"
// RUN: evo-opt %s --evo-lower-to-gpu --evo-evolve="worker=%evo_fake_worker run-dir=%t/run max-candidates=8 samples=4 quiet=true resume=true" -o %t/resumed.mlir 2>&1 | FileCheck %s --check-prefix=FINAL
// RUN: diff %t/out.mlir %t/resumed.mlir
//
// RUN: evo-opt %s --evo-lower-to-gpu --evo-evolve="worker=%evo_fake_worker run-dir=%t/keep max-candidates=4 quiet=true keep-work=true" -o %t/keep.mlir 2>&1 | FileCheck %s --check-prefix=QUIET
// RUN: ls %t/keep/work/row_sum_t0 | FileCheck %s --check-prefix=KEPT
//
// A spent run budget: every task still gets its baseline measured and kept, and its first
// generation (samples=4 candidates: the seeds first), no more.
// RUN: evo-opt %s --evo-lower-to-gpu --evo-evolve="worker=%evo_fake_worker run-dir=%t/budget max-candidates=40 quiet=true run-time-budget=0.000001" -o %t/budget.mlir 2>&1 | FileCheck %s --check-prefix=BUDGET
// RUN: not evo-opt %s --evo-lower-to-gpu --evo-evolve="worker=%evo_fake_worker run-dir=%t/bad run-time-budget=-1" -o %t/bad.mlir 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: not evo-opt %s --evo-lower-to-gpu --evo-evolve="worker=%evo_fake_worker run-dir=%t/bad time-budget=inf" -o %t/bad.mlir 2>&1 | FileCheck %s --check-prefix=INF
// RUN: not test -e %t/bad

// LOG:      evo-evolve: row_sum_t0 | gen 1/2 | 0 evaluated | best 1.00x{{$}}
// LOG-NEXT: evo-evolve: row_sum_t0 | gen 2/2 | {{[4-7]}} evaluated | 100% valid | best {{[0-9.]+}}x
// LOG-NEXT: evo-evolve: row_sum_t0 | gen 2/2 | {{[78]}} evaluated | 100% valid | best {{[0-9.]+}}x{{.*}} | done
// LOG:      evo-evolve: relu_t0 | gen 1/2 | 0 evaluated
// LOG-NEXT: evo-evolve: relu_t0 | gen 2/2 | {{[0-9]+}} evaluated
// LOG-NEXT: evo-evolve: relu_t0 | gen 2/2 | {{[0-9]+}} evaluated | 100% valid | best {{[0-9.]+}}x{{.*}} | done
// LOG-NEXT: remark: evo-evolve: row_sum_t0:
// LOG-NOT:  {{.}}[K

// FINAL: remark: evo-evolve: 'row_sum': the emitted kernels passed the final re-verification
// FINAL: remark: evo-evolve: 'relu': the emitted kernels passed the final re-verification

// QUIET-NOT: evo-evolve: row_sum_t0 | gen
// KEPT: {{^}}1.{{cubin|ptx}}{{$}}
// KEPT: worker-{{[0-9-]+}}.log

// BUDGET: remark: evo-evolve: row_sum_t0: {{[0-9.]+}} ms -> {{[0-9.]+}} ms ({{[0-9.]+}}x), {{[1-4]}} candidates evaluated, {{[1-4]}} valid
// BUDGET: remark: evo-evolve: relu_t0: {{[0-9.]+}} ms -> {{[0-9.]+}} ms ({{[0-9.]+}}x), {{[1-4]}} candidates evaluated, {{[1-4]}} valid

// NEGATIVE: error: evo-evolve: run-time-budget must be a number of seconds >= 0 (0: no limit), got -1
// INF: error: evo-evolve: time-budget must be a number of seconds >= 0 (0: no limit), got {{inf|INF}}

func.func @row_sum(%x: tensor<512x1024xf32>) -> tensor<512xf32> {
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

#id = affine_map<(i, j) -> (i, j)>
func.func @relu(%x: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1024x1024xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<1024x1024xf32>) outs(%e : tensor<1024x1024xf32>) {
    ^bb0(%a: f32, %o: f32):
      %m = arith.maximumf %a, %c0 : f32
      linalg.yield %m : f32
    } -> tensor<1024x1024xf32>
  return %r : tensor<1024x1024xf32>
}
