// Scalar arguments (docs/lowering.md, "Scalar arguments") through the whole search with the
// stand-in worker: every candidate of both tasks takes the scalar as a by-value kernel parameter
// (the stand-in, like the real worker's launch, makes a candidate invalid whose PTX takes a
// pointer where the request's input is by_value, so each "valid" below is that check passed);
// the winners are spliced with the host still passing the scalar; resume and replay give the
// same module; and the tuning records apply to the same module, and to a renamed copy, but not
// to a copy whose alpha is a 0-d tensor (another ABI, so another task).
//
// REQUIRES: stand-in-worker
// RUN: rm -rf %t && mkdir -p %t
// RUN: evo-opt %s --evo-lower-to-gpu --evo-evolve="worker=%evo_fake_worker run-dir=%t/run max-candidates=10 quiet=true seed=2" -o %t/out.mlir 2>%t/err
// RUN: FileCheck %s --input-file=%t/out.mlir
// RUN: FileCheck %s --input-file=%t/err --check-prefix=REMARK
// RUN: %python %S/Inputs/list_candidates.py %t/run | FileCheck %s --check-prefix=CANDIDATES
//
// RUN: evo-opt %s --evo-lower-to-gpu --evo-evolve="worker=%evo_fake_worker run-dir=%t/run max-candidates=10 quiet=true seed=2 resume=true" -o %t/resumed.mlir
// RUN: diff %t/out.mlir %t/resumed.mlir
// RUN: evo-opt %s --evo-lower-to-gpu --evo-evolve="worker=%evo_fake_worker run-dir=%t/replay replay-run=%t/run max-candidates=10 quiet=true seed=2" -o %t/replayed.mlir
// RUN: diff %t/out.mlir %t/replayed.mlir
//
// RUN: evo-opt %s --evo-lower-to-gpu=tuning-db=%t/run/tuning.json -o /dev/null 2>&1 | FileCheck %s --check-prefix=APPLY
// RUN: sed -e 's/@leaky_relu/@act/' -e 's/%alpha/%%gain/g' %s > %t/renamed.mlir
// RUN: evo-opt %t/renamed.mlir --evo-lower-to-gpu=tuning-db=%t/run/tuning.json -o /dev/null 2>&1 | FileCheck %s --check-prefix=RENAMED
// RUN: sed -e 's/%alpha: f32/%alpha: tensor<f32>/' -e 's/tensor<4096xf32>, f32)/tensor<4096xf32>, tensor<f32>)/' %s > %t/tensor.mlir
// RUN: evo-opt %t/tensor.mlir --evo-lower-to-gpu=tuning-db=%t/run/tuning.json -o /dev/null 2>&1 | FileCheck %s --check-prefix=TENSOR

// CHECK-LABEL: func.func @leaky_relu(
// CHECK-SAME:      %[[X:.*]]: memref<4096xf32>, %[[ALPHA:.*]]: f32, %[[Y:.*]]: memref<4096xf32>)
// CHECK:         gpu.launch_func @leaky_relu_kernels::@leaky_relu_k0
// CHECK-SAME:      args(%[[X]] : memref<4096xf32>, %[[ALPHA]] : f32, %[[Y]] : memref<4096xf32>)
// CHECK:         gpu.module @leaky_relu_kernels attributes {evo.evolved = [{{.*}}task = "leaky_relu_t0"}]
// CHECK-SAME:      #evo.buffer<name = "arg1", role = input, type = memref<f32>, by_value = true>
// CHECK:         gpu.func @leaky_relu_k0(%{{.*}}: memref<4096xf32>, %{{.*}}: f32, %{{.*}}: memref<4096xf32>) kernel

// The torch-mlir form: an f64 scalar truncated outside the payload (the truncation moves into
// the kernel); a row sum scaled by it, one row program (a kernel walking each row).
// CHECK-LABEL: func.func @scaled_row_sum(
// CHECK-SAME:      %[[X:.*]]: memref<256x2048xf32>, %[[S:.*]]: f64, %[[Y:.*]]: memref<256xf32>)
// CHECK:         gpu.launch_func @scaled_row_sum_kernels::@scaled_row_sum_k0
// CHECK-SAME:      %[[S]] : f64
// CHECK:         gpu.func @scaled_row_sum_k0(%{{.*}}: memref<256x2048xf32>, %[[SK:[^:]*]]: f64, %{{.*}}: memref<256xf32>)
// CHECK-SAME:      evo.family = #evo.family<rows>
// CHECK:           arith.truncf %[[SK]] : f64 to f32

// REMARK-DAG: remark: evo-evolve: leaky_relu_t0: {{[0-9.]+}} ms -> {{[0-9.]+}} ms ({{[0-9.]+}}x), [[N:[0-9]+]] candidates evaluated, [[N]] valid
// REMARK-DAG: remark: evo-evolve: scaled_row_sum_t0: {{[0-9.]+}} ms -> {{[0-9.]+}} ms ({{[0-9.]+}}x), [[M:[0-9]+]] candidates evaluated, [[M]] valid
// REMARK-DAG: remark: evo-evolve: 'leaky_relu': the emitted kernels passed the final re-verification
// REMARK-DAG: remark: evo-evolve: 'scaled_row_sum': the emitted kernels passed the final re-verification

// CANDIDATES: leaky_relu_t0 elementwise baseline valid
// CANDIDATES-NOT: invalid
// CANDIDATES: scaled_row_sum_t0 rows baseline valid
// CANDIDATES-NOT: invalid

// APPLY: 2 of 2 tasks lowered with a record for sm_90
// RENAMED-DAG: tuning-db: act_t0 (elementwise) takes the knobs of record
// RENAMED-DAG: 2 of 2 tasks lowered with a record for sm_90
// TENSOR: 1 of 2 tasks lowered with a record for sm_90

func.func @leaky_relu(%x: tensor<4096xf32>, %alpha: f32) -> tensor<4096xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4096xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      ins(%x, %alpha : tensor<4096xf32>, f32) outs(%e : tensor<4096xf32>) {
    ^bb0(%v: f32, %a: f32, %o: f32):
      %neg = arith.mulf %v, %a : f32
      %pos = arith.cmpf ogt, %v, %zero : f32
      %y = arith.select %pos, %v, %neg : f32
      linalg.yield %y : f32
  } -> tensor<4096xf32>
  return %r : tensor<4096xf32>
}

func.func @scaled_row_sum(%x: tensor<256x2048xf32>, %scale: f64) -> tensor<256xf32> {
  %zero = arith.constant 0.0 : f32
  %s = arith.truncf %scale : f64 to f32
  %e = tensor.empty() : tensor<256xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<256xf32>) -> tensor<256xf32>
  %sum = linalg.reduce ins(%x : tensor<256x2048xf32>) outs(%acc : tensor<256xf32>) dimensions = [1]
    (%in: f32, %init: f32) {
      %a = arith.addf %in, %init : f32
      linalg.yield %a : f32
    }
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      ins(%sum : tensor<256xf32>) outs(%e : tensor<256xf32>) {
    ^bb0(%v: f32, %o: f32):
      %y = arith.mulf %v, %s : f32
      linalg.yield %y : f32
  } -> tensor<256xf32>
  return %r : tensor<256xf32>
}
