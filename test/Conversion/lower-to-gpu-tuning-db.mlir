// evo-lower-to-gpu tuning-db=FILE: tasks whose signature (their source after the task split,
// names normalized) has a record for tuning-chip are lowered with the record's knobs; the task
// split is the one without a database. docs/evolution.md, "Tuning records".
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: evo-opt %s --evo-lower-to-gpu -o %t/plain.mlir
// RUN: evo-opt tuning-template %t/plain.mlir %t/template.json
// RUN: %python %S/Inputs/tuning_db.py signatures %t/template.json | FileCheck %s --check-prefix=SIGS
// SIGS: mlp_t0 matmul [[MM:[0-9a-f]+]]
// SIGS-NEXT: mlp_t1 reduction [[RED:[0-9a-f]+]]
// SIGS-NEXT: sum_rows_t0 reduction [[RED2:[0-9a-f]+]]
//
// Records with other knobs for the fused matmul (its bias and ReLU stay its epilogue) and the
// row sum of @mlp's input; none for @sum_rows.
// RUN: %python %S/Inputs/tuning_db.py edit %t/template.json %t/db.json \
// RUN:   'mlp_t0.knobs={"tile_sizes": [64, 64, 8], "thread_tile": [4, 4], "vector_width": 4}' \
// RUN:   'mlp_t1.knobs={"block_size": 128, "reduction": "warp", "vector_width": 4}' \
// RUN:   'mlp_t1.best_ms=0.5' 'mlp_t1.baseline_ms=2.0'
// RUN: %python %S/Inputs/tuning_db.py drop %t/db.json %t/db.json sum_rows_t0
// RUN: evo-opt %s --evo-lower-to-gpu=tuning-db=%t/db.json -o %t/tuned.mlir 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s --input-file=%t/tuned.mlir
//
// The same tasks (names, families, sources) as without the database: only knobs changed.
// RUN: evo-opt tuning-template %t/tuned.mlir %t/tuned.json
// RUN: %python %S/Inputs/tuning_db.py signatures %t/tuned.json > %t/tuned.sigs
// RUN: %python %S/Inputs/tuning_db.py signatures %t/template.json > %t/plain.sigs
// RUN: diff %t/plain.sigs %t/tuned.sigs
//
// --evo-pipeline forwards tuning-db and applies the records of its own chip.
// RUN: evo-opt %s --evo-pipeline="tuning-db=%t/db.json output-dir=%t/pipe ptxas=none" -o %t/pipe.mlir 2>&1 | FileCheck %s --check-prefix=PIPE
// RUN: FileCheck %s --input-file=%t/pipe/mlp.json --check-prefix=PIPE-MANIFEST
// RUN: evo-opt %s --evo-pipeline="tuning-db=%t/db.json output-dir=%t/pipe80 ptxas=none chip=sm_80" -o %t/pipe80.mlir 2>&1 | FileCheck %s --check-prefix=PIPE80
// PIPE: 2 of 3 tasks lowered with a record for sm_90
// PIPE-MANIFEST: "block_size": 128
// PIPE80: 0 of 3 tasks lowered with a record for sm_80 (2 records in the file; 2 tasks with records only for other chips
//
// A record for another chip is not applied (a remark says so) unless tuning-chip names it.
// RUN: %python %S/Inputs/tuning_db.py edit %t/db.json %t/sm80.json 'mlp_t1.chip="sm_80"'
// RUN: evo-opt %s --evo-lower-to-gpu=tuning-db=%t/sm80.json -o %t/sm80.mlir 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: FileCheck %s --input-file=%t/sm80.mlir --check-prefix=DEFAULT-RED
// RUN: evo-opt %s --evo-lower-to-gpu="tuning-db=%t/sm80.json tuning-chip=sm_80" -o - 2>/dev/null | FileCheck %s --check-prefix=SM80
//
// A record of another family (a database from another evo-opt, or forged) is not applied.
// RUN: %python %S/Inputs/tuning_db.py edit %t/db.json %t/family.json 'mlp_t1.family="elementwise"' 'mlp_t1.knobs={"block_size": 128}'
// RUN: evo-opt %s --evo-lower-to-gpu=tuning-db=%t/family.json -o %t/family.mlir 2>&1 | FileCheck %s --check-prefix=FAMILY
// RUN: FileCheck %s --input-file=%t/family.mlir --check-prefix=DEFAULT-RED
//
// Another shape is another signature: the matmul's record does not apply to a wider matmul
// (the row sum's still does).
// RUN: sed -e 's/128x256/128x512/g' -e 's/64x256/64x512/g' -e 's/tensor<256xf32>/tensor<512xf32>/g' %s > %t/wider.mlir
// RUN: evo-opt %t/wider.mlir --evo-lower-to-gpu=tuning-db=%t/db.json -o %t/wider.out.mlir 2>&1 | FileCheck %s --check-prefix=WIDER
// RUN: FileCheck %s --input-file=%t/wider.out.mlir --check-prefix=DEFAULT-MM
//
// Malformed or unreadable databases: an error with the place, a non-zero exit, no output.
// RUN: printf '{"format": "evo-tuning-db/1",\n "records": [}' > %t/syntax.json
// RUN: not evo-opt %s --evo-lower-to-gpu=tuning-db=%t/syntax.json -o %t/syntax.mlir 2>&1 | FileCheck %s --check-prefix=SYNTAX
// RUN: not test -e %t/syntax.mlir
// RUN: %python %S/Inputs/tuning_db.py edit %t/db.json %t/knob.json 'mlp_t1.knobs={"block_size": 100}'
// RUN: not evo-opt %s --evo-lower-to-gpu=tuning-db=%t/knob.json -o %t/knob.mlir 2>&1 | FileCheck %s --check-prefix=KNOB
// RUN: %python %S/Inputs/tuning_db.py edit %t/db.json %t/unknown.json 'mlp_t1.knobs={"warp_specialize": 1}'
// RUN: not evo-opt %s --evo-lower-to-gpu=tuning-db=%t/unknown.json -o %t/unknown.mlir 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not evo-opt %s --evo-lower-to-gpu=tuning-db=%t/missing.json -o %t/missing.mlir 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not evo-opt %s --evo-lower-to-gpu=tuning-db=%t -o %t/dir.mlir 2>&1 | FileCheck %s --check-prefix=DIR
// RUN: not evo-opt %s --evo-lower-to-gpu=tuning-db=/dev/zero -o %t/dev.mlir 2>&1 | FileCheck %s --check-prefix=DIR
//
// Knobs valid in themselves that do not fit the task's shapes: the lowering's own error, with a
// note naming the record.
// RUN: sed -e 's/64x128/64x130/g' -e 's/128x256/130x256/g' %s > %t/odd.mlir
// RUN: evo-opt %t/odd.mlir --evo-lower-to-gpu -o %t/odd.plain.mlir
// RUN: evo-opt tuning-template %t/odd.plain.mlir %t/odd.json
// RUN: %python %S/Inputs/tuning_db.py edit %t/odd.json %t/odd.json 'mlp_t1.knobs={"vector_width": 8, "reduction": "warp"}'
// RUN: not evo-opt %t/odd.mlir --evo-lower-to-gpu=tuning-db=%t/odd.json -o %t/odd.out.mlir 2>&1 | FileCheck %s --check-prefix=FIT

// REMARK-DAG: remark: evo-lower-to-gpu: tuning-db: mlp_t0 (matmul) takes the knobs of record {{[0-9a-f]+}} for sm_90: {"thread_tile":[4,4],"tile_sizes":[64,64,8],"vector_width":4}
// REMARK-DAG: remark: evo-lower-to-gpu: tuning-db: mlp_t1 (reduction) takes the knobs of record {{[0-9a-f]+}} for sm_90 (4.00x over its baseline): {"block_size":128,"reduction":"warp","vector_width":4}
// REMARK-DAG: remark: evo-lower-to-gpu: tuning-db '{{.*}}db.json': 2 of 3 tasks lowered with a record for sm_90 (2 records in the file; 0 tasks with records only for other chips, 0 with a record of another family)

// CHECK-LABEL: func.func @mlp
// CHECK:       gpu.module @mlp_kernels
// CHECK-SAME:    tasks = [#evo.task<name = "mlp_t0", family = matmul, {{.*}}linalg.matmul{{.*}}arith.maximumf
// CHECK-SAME:    knobs = <{{.*}}tile_sizes = [64, 64, 8], thread_tile = [4, 4]
// CHECK-SAME:    #evo.task<name = "mlp_t1", family = reduction, {{.*}}knobs = <block_size = 128, vector_width = 4, reduction = warp
// CHECK:         gpu.func @mlp_k0
// CHECK-SAME:      evo.knobs = #evo.knobs<{{.*}}tile_sizes = [64, 64, 8], thread_tile = [4, 4]
// CHECK:         gpu.func @mlp_k1
// CHECK-SAME:      evo.knobs = #evo.knobs<block_size = 128, vector_width = 4, reduction = warp
// CHECK-LABEL: func.func @sum_rows
// CHECK:         gpu.func @sum_rows_k0
// CHECK-SAME:      evo.knobs = #evo.knobs<block_size = 256, vector_width = 1, reduction = thread

// CHIP: remark: evo-lower-to-gpu: tuning-db: mlp_t1 has records only for sm_80, not tuning-chip=sm_90: not applied (the task keeps its knobs)
// CHIP: 1 of 3 tasks lowered with a record for sm_90 (2 records in the file; 1 tasks with records only for other chips, 0 with a record of another family)
// DEFAULT-RED: gpu.func @mlp_k1
// DEFAULT-RED-SAME: evo.knobs = #evo.knobs<block_size = 256, vector_width = 1, reduction = thread
// SM80: gpu.func @mlp_k0
// SM80-SAME: evo.knobs = #evo.knobs<block_size = 256,
// SM80: gpu.func @mlp_k1
// SM80-SAME: evo.knobs = #evo.knobs<block_size = 128, vector_width = 4, reduction = warp

// FAMILY: warning: evo-lower-to-gpu: tuning-db: mlp_t1 is a reduction task but its record {{[0-9a-f]+}} is for the elementwise family: not applied (the task keeps its knobs)

// WIDER: 1 of 3 tasks lowered with a record for sm_90
// DEFAULT-MM: gpu.func @mlp_k0
// DEFAULT-MM-SAME: evo.knobs = #evo.knobs<block_size = 256,

// SYNTAX: syntax.json:2:14: error: evo-lower-to-gpu: tuning-db '{{.*}}syntax.json': not JSON: Invalid JSON value
// KNOB: knob.json:{{[0-9]+}}:3: error: evo-lower-to-gpu: tuning-db '{{.*}}knob.json': records[{{[0-9]}}]: knobs: block_size must be a multiple of 32
// UNKNOWN: error: evo-lower-to-gpu: tuning-db '{{.*}}unknown.json': records[{{[0-9]}}]: knobs: unknown knob 'warp_specialize'
// MISSING: error: evo-lower-to-gpu: tuning-db '{{.*}}missing.json': cannot open: No such file or directory
// DIR: error: evo-lower-to-gpu: tuning-db '{{.*}}': not a regular file
// FIT: error: {{.*}}vector
// FIT: note: with the knobs of tuning record {{[0-9a-f]+}} of '{{.*}}odd.json' for mlp_t1

func.func @mlp(%x: tensor<64x128xf32>, %w: tensor<128x256xf32>, %b: tensor<256xf32>)
    -> (tensor<64x256xf32>, tensor<64xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x256xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<64x256xf32>) -> tensor<64x256xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<64x128xf32>, tensor<128x256xf32>)
                      outs(%acc : tensor<64x256xf32>) -> tensor<64x256xf32>
  %biased = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>,
                       affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%mm, %b : tensor<64x256xf32>, tensor<256xf32>) outs(%e : tensor<64x256xf32>) {
    ^bb0(%m: f32, %bb: f32, %o: f32):
      %s = arith.addf %m, %bb : f32
      %r = arith.maximumf %s, %zero : f32
      linalg.yield %r : f32
  } -> tensor<64x256xf32>
  %e1 = tensor.empty() : tensor<64xf32>
  %acc1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<64xf32>) -> tensor<64xf32>
  %sum = linalg.reduce ins(%x : tensor<64x128xf32>) outs(%acc1 : tensor<64xf32>) dimensions = [1]
    (%in: f32, %init: f32) {
      %a = arith.addf %in, %init : f32
      linalg.yield %a : f32
    }
  return %biased, %sum : tensor<64x256xf32>, tensor<64xf32>
}

func.func @sum_rows(%x: tensor<512x1024xf32>) -> tensor<512xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<512xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<512xf32>) -> tensor<512xf32>
  %r = linalg.reduce ins(%x : tensor<512x1024xf32>) outs(%acc : tensor<512xf32>) dimensions = [1]
    (%in: f32, %init: f32) {
      %a = arith.addf %in, %init : f32
      linalg.yield %a : f32
    }
  return %r : tensor<512xf32>
}
