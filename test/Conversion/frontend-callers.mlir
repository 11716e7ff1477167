// RUN: evo-opt %s -split-input-file -verify-diagnostics -evo-lower-to-gpu | FileCheck %s
// The result is a valid module that upstream's bufferization takes (the host functions already
// work on buffers; the callers' tensors become buffers around the rewritten calls).
// RUN: evo-opt %s -split-input-file -verify-diagnostics -evo-lower-to-gpu \
// RUN:   | evo-opt -split-input-file --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | FileCheck %s --check-prefix=BUF

// A lowered function takes buffers in destination-passing style (its inputs, then one buffer per
// result; no results). Every func.call of it is rewritten: to_buffer of each tensor argument, an
// alloc per result, the call, to_tensor (restrict writable) of each output in place of the
// results. Callers before and after the callee, calls in nested regions, several results.

// CHECK-LABEL: func.func @main
// CHECK-SAME:    (%[[X:.*]]: tensor<1024xf32>, %[[P:.*]]: i1) -> tensor<1024xf32>
// CHECK:         %[[XB:.*]] = bufferization.to_buffer %[[X]] read_only : tensor<1024xf32> to memref<1024xf32>
// CHECK:         %[[Y:.*]] = memref.alloc() : memref<1024xf32>
// CHECK:         call @relu(%[[XB]], %[[Y]]) : (memref<1024xf32>, memref<1024xf32>) -> ()
// CHECK:         %[[YT:.*]] = bufferization.to_tensor %[[Y]] restrict writable : memref<1024xf32> to tensor<1024xf32>
// CHECK:         %[[Z:.*]] = scf.if %[[P]] -> (tensor<1024xf32>) {
// CHECK:           %[[YB:.*]] = bufferization.to_buffer %[[YT]] read_only
// CHECK:           %[[W:.*]] = memref.alloc() : memref<1024xf32>
// CHECK:           func.call @relu(%[[YB]], %[[W]])
// CHECK:           %[[WT:.*]] = bufferization.to_tensor %[[W]] restrict writable
// CHECK:           scf.yield %[[WT]] : tensor<1024xf32>
// CHECK:         } else {
// CHECK:           scf.yield %[[YT]] : tensor<1024xf32>
// CHECK:         return %[[Z]] : tensor<1024xf32>
// CHECK-LABEL: func.func @relu
// CHECK-SAME:    (%{{.*}}: memref<1024xf32>, %{{.*}}: memref<1024xf32>)
// CHECK:         gpu.launch_func @relu_kernels::@relu_k0
// CHECK:       gpu.module @relu_kernels
// CHECK-LABEL: func.func @two
// CHECK-SAME:    (%{{.*}}: memref<8x16xf32>, %{{.*}}: memref<8x16xf32>, %{{.*}}: memref<8xf32>)
// CHECK:       gpu.module @two_kernels
// CHECK-LABEL: func.func @after
// CHECK-SAME:    (%[[X:.*]]: tensor<8x16xf32>) -> tensor<8xf32>
// CHECK:         %[[XB:.*]] = bufferization.to_buffer %[[X]] read_only : tensor<8x16xf32> to memref<8x16xf32>
// CHECK:         %[[E:.*]] = memref.alloc() : memref<8x16xf32>
// CHECK:         %[[S:.*]] = memref.alloc() : memref<8xf32>
// CHECK:         call @two(%[[XB]], %[[E]], %[[S]]) : (memref<8x16xf32>, memref<8x16xf32>, memref<8xf32>) -> ()
// CHECK:         bufferization.to_tensor %[[E]] restrict writable
// CHECK:         %[[ST:.*]] = bufferization.to_tensor %[[S]] restrict writable : memref<8xf32> to tensor<8xf32>
// CHECK:         return %[[ST]] : tensor<8xf32>

// BUF-LABEL: func.func @main
// BUF-SAME:    (%[[X:.*]]: memref<1024xf32>, %{{.*}}: i1) -> memref<1024xf32>
// BUF:         %[[Y:.*]] = memref.alloc() : memref<1024xf32>
// BUF:         call @relu(%{{.*}}, %[[Y]]) : (memref<1024xf32>, memref<1024xf32>) -> ()
// BUF:         scf.if
// BUF:           %[[W:.*]] = memref.alloc() : memref<1024xf32>
// BUF:           func.call @relu(%[[Y]], %[[W]])
// BUF-NOT:     bufferization.to_buffer
// BUF-LABEL: func.func @relu
// BUF-LABEL: func.func @after
// BUF:         call @two(
func.func @main(%x: tensor<1024xf32>, %p: i1) -> tensor<1024xf32> {
  %y = func.call @relu(%x) : (tensor<1024xf32>) -> tensor<1024xf32>
  %z = scf.if %p -> tensor<1024xf32> {
    %w = func.call @relu(%y) : (tensor<1024xf32>) -> tensor<1024xf32>
    scf.yield %w : tensor<1024xf32>
  } else {
    scf.yield %y : tensor<1024xf32>
  }
  return %z : tensor<1024xf32>
}

func.func @relu(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1024xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      ins(%x : tensor<1024xf32>) outs(%e : tensor<1024xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1024xf32>
  return %r : tensor<1024xf32>
}

func.func @two(%x: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %s = linalg.reduce ins(%x : tensor<8x16xf32>) outs(%acc : tensor<8xf32>) dimensions = [1]
    (%in: f32, %init: f32) {
      %a = arith.addf %in, %init : f32
      linalg.yield %a : f32
    }
  %e2 = tensor.empty() : tensor<8x16xf32>
  %ex = linalg.exp ins(%x : tensor<8x16xf32>) outs(%e2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %ex, %s : tensor<8x16xf32>, tensor<8xf32>
}

func.func @after(%x: tensor<8x16xf32>) -> tensor<8xf32> {
  %a, %b = func.call @two(%x) : (tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8xf32>)
  return %b : tensor<8xf32>
}

// -----

// A function that computes with linalg ops is lowered whole: it cannot also call one (inline
// the callee first). The callee is still lowered, and the call updated.

func.func @exp(%x: tensor<16xf32>) -> tensor<16xf32> {
  %e = tensor.empty() : tensor<16xf32>
  %r = linalg.exp ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  return %r : tensor<16xf32>
}

func.func @caller_computes(%x: tensor<16xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{'func.call' is not supported by evo-lower-to-gpu in a function it lowers ('@caller_computes' computes with linalg ops): inline '@exp' first (--inline), or call it from a function without linalg ops}}
  %y = func.call @exp(%x) : (tensor<16xf32>) -> tensor<16xf32>
  %e = tensor.empty() : tensor<16xf32>
  %r = linalg.exp ins(%y : tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  return %r : tensor<16xf32>
}

// -----

// An indirect call cannot be updated: the func.constant that names the function is an error.

func.func @exp(%x: tensor<16xf32>) -> tensor<16xf32> {
  %e = tensor.empty() : tensor<16xf32>
  %r = linalg.exp ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  return %r : tensor<16xf32>
}

func.func @indirect(%x: tensor<16xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{evo-lower-to-gpu: cannot update this use of '@exp' to its lowered signature (buffers: the inputs, then one per result; no results): only a direct func.call with the function's tensor types, in host code, is rewritten}}
  %f = func.constant @exp : (tensor<16xf32>) -> tensor<16xf32>
  %y = func.call_indirect %f(%x) : (tensor<16xf32>) -> tensor<16xf32>
  return %y : tensor<16xf32>
}

// -----

// Nor can a call in device code (a gpu.launch body): it cannot allocate and launch.

func.func @exp(%x: tensor<16xf32>) -> tensor<16xf32> {
  %e = tensor.empty() : tensor<16xf32>
  %r = linalg.exp ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  return %r : tensor<16xf32>
}

func.func @in_kernel(%x: tensor<16xf32>) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    // expected-error @+1 {{evo-lower-to-gpu: cannot update this use of '@exp'}}
    %y = func.call @exp(%x) : (tensor<16xf32>) -> tensor<16xf32>
    gpu.terminator
  }
  return
}

// -----

// A scalar argument (docs/lowering.md, "Scalar arguments") is passed through as it is: the
// lowered function takes its value.

// CHECK-LABEL: func.func @scale(
// CHECK-SAME:    %{{[^:]*}}: memref<1024xf32>, %{{[^:]*}}: f32, %{{[^:]*}}: memref<1024xf32>)
// CHECK-LABEL: func.func @scale_by_two
// CHECK:         %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK:         %[[XB:.*]] = bufferization.to_buffer %{{.*}} read_only : tensor<1024xf32> to memref<1024xf32>
// CHECK:         %[[Y:.*]] = memref.alloc() : memref<1024xf32>
// CHECK:         call @scale(%[[XB]], %[[TWO]], %[[Y]]) : (memref<1024xf32>, f32, memref<1024xf32>) -> ()
// BUF-LABEL: func.func @scale_by_two
// BUF:         call @scale(%{{.*}}, %{{.*}}, %{{.*}}) : (memref<1024xf32>, f32, memref<1024xf32>) -> ()

func.func @scale(%x: tensor<1024xf32>, %a: f32) -> tensor<1024xf32> {
  %e = tensor.empty() : tensor<1024xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      ins(%x : tensor<1024xf32>) outs(%e : tensor<1024xf32>) {
    ^bb0(%v: f32, %o: f32):
      %m = arith.mulf %v, %a : f32
      linalg.yield %m : f32
  } -> tensor<1024xf32>
  return %r : tensor<1024xf32>
}

func.func @scale_by_two(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %two = arith.constant 2.0 : f32
  %y = func.call @scale(%x, %two) : (tensor<1024xf32>, f32) -> tensor<1024xf32>
  return %y : tensor<1024xf32>
}
