// evo-evolve end to end without a GPU: the stand-in worker (test/tools/evo-fake-worker/FakeWorker.cpp) says every
// candidate is valid and times it from a hash of its code, so the search, the store, the splice
// of the winner into the module and plan, the reports and resume are all exercised in CI.
//
// REQUIRES: stand-in-worker
// RUN: rm -rf %t && mkdir -p %t
// RUN: evo-opt %s --evo-lower-to-gpu --evo-evolve="worker=%evo_fake_worker run-dir=%t/run max-candidates=24 quiet=true seed=2" -o %t/out.mlir 2>%t/err
// RUN: FileCheck %s --input-file=%t/out.mlir
// RUN: FileCheck %s --input-file=%t/err --check-prefix=REMARK
// RUN: FileCheck %s --input-file=%t/run/report.json --check-prefix=REPORT
//
// Resuming the finished run needs no worker and reproduces the module.
// RUN: evo-opt %s --evo-lower-to-gpu --evo-evolve="worker=%evo_fake_worker run-dir=%t/run max-candidates=24 quiet=true seed=2 resume=true" -o %t/resumed.mlir
// RUN: diff %t/out.mlir %t/resumed.mlir
//
// A run directory is never silently reused.
// RUN: not evo-opt %s --evo-lower-to-gpu --evo-evolve="worker=%evo_fake_worker run-dir=%t/run quiet=true" -o %t/x.mlir 2>&1 | FileCheck %s --check-prefix=EXISTS
//
// A strategy that is not one is refused by the option parser (an enum option), before any work.
// RUN: not evo-opt %s --evo-lower-to-gpu --evo-evolve="worker=%evo_fake_worker run-dir=%t/bad strategy=bogus" -o %t/bad.mlir 2>&1 | FileCheck %s --check-prefix=STRATEGY
// RUN: not test -e %t/bad.mlir
// RUN: not test -e %t/bad
// STRATEGY: for the --strategy option: Cannot find option named 'bogus'!
//
// The report is rebuilt from the store alone.
// RUN: evo-opt report %t/run %t/again
// RUN: FileCheck %s --input-file=%t/again/report.json --check-prefix=REPORT

// The baseline is a split reduction (two kernels and a scratch buffer); whatever wins, its
// kernels take the task's names, the old scratch is gone, and the host follows the new plan.
// (The plan's verifier rejects a scratch buffer no launch uses, such as the old one left over.)
// CHECK-LABEL: func.func @col_sum
// CHECK:         gpu.launch_func @col_sum_kernels::@col_sum_k0 blocks
// CHECK:         gpu.module @col_sum_kernels attributes {evo.evolved = [{baseline_ms = {{.*}}, best_candidate = {{[0-9]+}} : i64, best_ms = {{.*}}, speedup = {{.*}}, task = "col_sum_t0"}]
// CHECK-NOT:     gpu.func @k0
// CHECK:         gpu.func @col_sum_k0(
// CHECK-SAME:      evo.family = #evo.family<reduction>
// CHECK-NOT:     gpu.func @k0

// REMARK: remark: evo-evolve: col_sum_t0: {{[0-9.]+}} ms -> {{[0-9.]+}} ms ({{[0-9.]+}}x), {{[0-9]+}} candidates evaluated, {{[0-9]+}} valid
// REMARK-NOT: see current operation

// REPORT: "format": "evo-run-report/1"
// REPORT: "name": "col_sum_t0"

// EXISTS: error: evo-evolve: '{{.*}}run' already holds a run

func.func @col_sum(%x: tensor<4096x2048xf32>) -> tensor<2048xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2048xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2048xf32>) -> tensor<2048xf32>
  %r = linalg.reduce ins(%x : tensor<4096x2048xf32>) outs(%acc : tensor<2048xf32>) dimensions = [0] {evo.knobs = {split = 8}}
    (%in: f32, %init: f32) {
      %s = arith.addf %in, %init : f32
      linalg.yield %s : f32
    }
  return %r : tensor<2048xf32>
}
