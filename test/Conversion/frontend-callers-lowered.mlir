// A call written against the lowered signature (buffers: the inputs, then one per result; no
// results) is left as it is: host code written for the ABI (it parses only without the
// verifier before lowering). A call of neither form is still refused.
// RUN: evo-opt %s --mlir-very-unsafe-disable-verifier-on-parsing -split-input-file -verify-diagnostics -evo-lower-to-gpu | FileCheck %s

// CHECK-LABEL: func.func @host
// CHECK-SAME:    (%[[X:.*]]: memref<64xf32>, %[[Y:.*]]: memref<64xf32>)
// CHECK-NEXT:    call @neg(%[[X]], %[[Y]]) : (memref<64xf32>, memref<64xf32>) -> ()
// CHECK-NEXT:    return
// CHECK-LABEL: func.func @neg
// CHECK-SAME:    (%{{.*}}: memref<64xf32>, %{{.*}}: memref<64xf32>)
// CHECK:         gpu.launch_func @neg_kernels::@neg_k0
func.func @host(%x: memref<64xf32>, %y: memref<64xf32>) {
  call @neg(%x, %y) : (memref<64xf32>, memref<64xf32>) -> ()
  return
}

func.func @neg(%x: tensor<64xf32>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %r = linalg.negf ins(%x : tensor<64xf32>) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  return %r : tensor<64xf32>
}

// -----

func.func @host(%x: memref<64xf32>) {
  // expected-error @+1 {{evo-lower-to-gpu: cannot update this use of '@neg' to its lowered signature}}
  call @neg(%x) : (memref<64xf32>) -> ()
  return
}

func.func @neg(%x: tensor<64xf32>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %r = linalg.negf ins(%x : tensor<64xf32>) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  return %r : tensor<64xf32>
}
