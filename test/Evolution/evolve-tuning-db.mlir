// evo-evolve exports its winners as a tuning database (RUN_DIR/tuning.json, and added to
// tuning-db-out); `evo-lower-to-gpu tuning-db=` applied to the same module, without a search,
// gives the evolved plan's knobs with the same tasks. docs/evolution.md, "Tuning records".
//
// REQUIRES: stand-in-worker
// RUN: rm -rf %t && mkdir -p %t
// RUN: evo-opt %s --evo-lower-to-gpu --evo-evolve="worker=%evo_fake_worker run-dir=%t/run max-candidates=12 quiet=true seed=3 tuning-db-out=%t/all.json" -o %t/evolved.mlir 2>%t/err
// RUN: FileCheck %s --input-file=%t/run/tuning.json --check-prefix=DB
// RUN: FileCheck %s --input-file=%t/err --check-prefix=OUT
// RUN: diff %t/run/tuning.json %t/all.json
//
// Applied to the input: each task's knobs are the evolved plan's, the tasks the same.
// RUN: evo-opt %s --evo-lower-to-gpu=tuning-db=%t/run/tuning.json -o %t/applied.mlir 2>&1 | FileCheck %s --check-prefix=APPLY
// RUN: evo-opt tuning-template %t/evolved.mlir %t/evolved.json
// RUN: evo-opt tuning-template %t/applied.mlir %t/applied.json
// RUN: %python %S/../Conversion/Inputs/tuning_db.py knobs %t/evolved.json > %t/evolved.knobs
// RUN: %python %S/../Conversion/Inputs/tuning_db.py knobs %t/applied.json > %t/applied.knobs
// RUN: diff %t/evolved.knobs %t/applied.knobs
// RUN: %python %S/../Conversion/Inputs/tuning_db.py knobs %t/run/tuning.json > %t/db.knobs
// RUN: diff %t/db.knobs %t/applied.knobs
//
// Names are not part of a signature: a renamed copy takes the same records.
// RUN: sed -e 's/@bias_relu/@layer3_act/' -e 's/@row_sum/@head_sum/' -e 's/%x/%input/g' %s > %t/renamed.mlir
// RUN: evo-opt %t/renamed.mlir --evo-lower-to-gpu=tuning-db=%t/run/tuning.json -o /dev/null 2>&1 | FileCheck %s --check-prefix=RENAMED
//
// The export from the store alone gives the same database.
// RUN: evo-opt tuning-export %t/run %t/exported.json | FileCheck %s --check-prefix=EXPORT
// RUN: diff %t/run/tuning.json %t/exported.json
//
// Merging: per signature and chip the fastest record (default) or the newest.
// RUN: %python %S/../Conversion/Inputs/tuning_db.py edit %t/run/tuning.json %t/newer.json 'row_sum_t0.best_ms=1000.0' 'row_sum_t0.measured_at="2999-01-01T00:00:00.000Z"' 'row_sum_t0.knobs={"block_size": 1024}'
// RUN: evo-opt tuning-merge %t/fastest.json %t/run/tuning.json %t/newer.json | FileCheck %s --check-prefix=MERGE
// RUN: %python %S/../Conversion/Inputs/tuning_db.py knobs %t/fastest.json > %t/fastest.knobs
// RUN: diff %t/db.knobs %t/fastest.knobs
// RUN: evo-opt tuning-merge %t/newest.json %t/run/tuning.json %t/newer.json --prefer=newest
// RUN: %python %S/../Conversion/Inputs/tuning_db.py knobs %t/newest.json | FileCheck %s --check-prefix=NEWEST
// RUN: not evo-opt tuning-merge %t/bad.json %t/run/tuning.json %t/missing.json 2>&1 | FileCheck %s --check-prefix=MERGE-BAD
// RUN: not test -e %t/bad.json
//
// tuning-db-out adds to an existing database; a malformed one is an error and stays as it was.
// RUN: printf '{"format": "evo-tuning-db/1", "records": [1]}' > %t/bad-out.json
// RUN: not evo-opt %s --evo-lower-to-gpu --evo-evolve="worker=%evo_fake_worker run-dir=%t/run resume=true max-candidates=12 quiet=true seed=3 tuning-db-out=%t/bad-out.json" -o %t/x.mlir 2>&1 | FileCheck %s --check-prefix=OUT-BAD
// RUN: FileCheck %s --input-file=%t/bad-out.json --check-prefix=UNCHANGED

// DB: "format": "evo-tuning-db/1"
// DB: "chip": "sm_90"
// DB: "family": "elementwise"
// DB: "kind": "{{knobs|ir}}"
// DB: "measured_at": "{{[-0-9]+T[0-9:.]+Z}}"
// DB: "run": {
// DB: "candidate": {{[0-9]+}}
// DB: "dir": "{{.*}}run"
// DB: "task": "bias_relu_t0"
// DB: "signature": "{{[0-9a-f]+}}"
// DB: "speedup": {{[0-9.]+}}
// DB: "family": "reduction"
// DB: "task": "row_sum_t0"

// OUT: remark: evo-evolve: 2 tuning records added to '{{.*}}all.json'

// APPLY: evo-lower-to-gpu: tuning-db '{{.*}}tuning.json': 2 of 2 tasks lowered with a record for sm_90
// RENAMED-DAG: tuning-db: layer3_act_t0 (elementwise) takes the knobs of record
// RENAMED-DAG: tuning-db: head_sum_t0 (reduction) takes the knobs of record
// RENAMED-DAG: 2 of 2 tasks lowered with a record for sm_90
// EXPORT: tuning-export: 2 records -> {{.*}}exported.json
// MERGE: tuning-merge: 4 records from 2 databases -> {{.*}}fastest.json: 2 records
// NEWEST: row_sum_t0 reduction {{[0-9a-f]+}} {"block_size": 1024}
// MERGE-BAD: evo-opt tuning-merge: {{.*}}missing.json: cannot open: No such file or directory
// OUT-BAD: error: evo-evolve: tuning-db-out: {{.*}}bad-out.json:1:43: records[0]: not an object
// UNCHANGED: {"format": "evo-tuning-db/1", "records": [1]}

func.func @bias_relu(%x: tensor<512x1024xf32>, %b: tensor<1024xf32>) -> tensor<512x1024xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<512x1024xf32>
  %r = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>,
                       affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : tensor<512x1024xf32>, tensor<1024xf32>) outs(%e : tensor<512x1024xf32>) {
    ^bb0(%v: f32, %bb: f32, %o: f32):
      %s = arith.addf %v, %bb : f32
      %m = arith.maximumf %s, %zero : f32
      linalg.yield %m : f32
  } -> tensor<512x1024xf32>
  return %r : tensor<512x1024xf32>
}

func.func @row_sum(%x: tensor<256x2048xf32>) -> tensor<256xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<256xf32>) -> tensor<256xf32>
  %r = linalg.reduce ins(%x : tensor<256x2048xf32>) outs(%acc : tensor<256xf32>) dimensions = [1]
    (%in: f32, %init: f32) {
      %a = arith.addf %in, %init : f32
      linalg.yield %a : f32
    }
  return %r : tensor<256xf32>
}
