// RUN: evo-opt %s -split-input-file -verify-diagnostics --allow-unregistered-dialect -evo-lower-to-gpu | FileCheck %s
// --evo-pipeline would emit nothing: the same description is an error there, and nothing is
// written.
// RUN: rm -rf %t
// RUN: not evo-opt %s -split-input-file --allow-unregistered-dialect --evo-pipeline="output-dir=%t/out ptxas=none" -o /dev/null 2>&1 | FileCheck %s --check-prefix=PIPELINE
// RUN: not ls %t/out
// evo-evolve after it stops with its own error.
// RUN: not evo-opt %s -split-input-file --allow-unregistered-dialect --evo-lower-to-gpu --evo-evolve="run-dir=%t/run" -o /dev/null 2>&1 | FileCheck %s --check-prefix=EVOLVE
// Without --allow-unregistered-dialect, StableHLO does not parse (it is not part of MLIR 22).
// RUN: not evo-opt %s -split-input-file -evo-lower-to-gpu -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNREGISTERED

// PIPELINE-NOT: warning:
// PIPELINE:     error: evo-lower-to-gpu: nothing to lower: no function computes on tensors with linalg ops (or arith/math); found 1 'func.func'
// PIPELINE-NOT: warning:

// EVOLVE: warning: evo-lower-to-gpu: nothing to lower
// EVOLVE: error: evo-evolve: no gpu.module with an evo.plan; run evo-lower-to-gpu first

// UNREGISTERED: error: operation being parsed with an unregistered dialect

// A module in which evo-lower-to-gpu finds no function to lower is a warning (the exit status is
// 0) at the first function, naming what the module holds; the module is left as it is.

// CHECK-LABEL: func.func private @decl(tensor<16xf32>) -> tensor<16xf32>
// expected-warning @+1 {{evo-lower-to-gpu: nothing to lower: no function computes on tensors with linalg ops (or arith/math); found 1 'func.func'}}
func.func private @decl(%x: tensor<16xf32>) -> tensor<16xf32>

// -----

// CHECK-LABEL: func.func @identity
// CHECK-SAME:    (%[[X:.*]]: tensor<*xf32>) -> tensor<*xf32>
// CHECK-NEXT:    return %[[X]]
// expected-warning @+1 {{found 1 'func.func'}}
func.func @identity(%x: tensor<*xf32>) -> tensor<*xf32> {
  return %x : tensor<*xf32>
}

// -----

// expected-warning @+1 {{evo-lower-to-gpu: nothing to lower: no function computes on tensors with linalg ops (or arith/math); found nothing (the module is empty)}}
module {
}

// -----

// A TOSA reshape converts to tensor.collapse_shape alone: a view, returned, so one copy kernel
// reading the argument through it (docs/lowering.md, "Views").

// CHECK-LABEL: func.func @reshape(%{{.*}}: memref<64x128xf32>, %{{.*}}: memref<8192xf32>)
// CHECK:         gpu.launch_func @reshape_kernels::@reshape_k0
func.func @reshape(%x: tensor<64x128xf32>) -> tensor<8192xf32> {
  %s = tosa.const_shape {values = dense<[8192]> : tensor<1xindex>} : () -> !tosa.shape<1>
  %0 = tosa.reshape %x, %s : (tensor<64x128xf32>, !tosa.shape<1>) -> tensor<8192xf32>
  return %0 : tensor<8192xf32>
}

// -----

// StableHLO in generic form parses with --allow-unregistered-dialect; its ops are named, with
// the one supported path (docs/lowering.md, "Front-ends").

// CHECK-LABEL: func.func @stablehlo
// CHECK:         "stablehlo.add"
// expected-warning @+1 {{found 1 'func.func', 3 'stablehlo.*' ops (stablehlo.add, stablehlo.exponential); StableHLO is not part of MLIR 22: legalize it to linalg first with stablehlo-opt --stablehlo-legalize-to-linalg (docs/lowering.md, "Front-ends")}}
func.func @stablehlo(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "stablehlo.add"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = "stablehlo.exponential"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = "stablehlo.add"(%1, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %2 : tensor<4xf32>
}

// -----

// Other unknown dialects are named as such.

// expected-warning @+1 {{found 1 'func.func', 1 'torch.aten.relu'; not dialects evo-opt knows: 'torch'}}
func.func @torch(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "torch.aten.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// StableHLO's own (pretty) syntax does not parse even then: print it in generic form, or better,
// legalize it to linalg first.

func.func @stablehlo_pretty(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{Dialect `stablehlo' not found for custom op 'stablehlo.add'}}
  // expected-note @+1 {{Available dialects: acc, affine}}
  %0 = stablehlo.add %x, %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}
