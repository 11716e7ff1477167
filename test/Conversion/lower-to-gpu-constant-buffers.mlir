// Constants too large for the kernels (over inline-constant-bytes, default 1 MiB: weights) become
// constant buffers: a trailing argument of the plan's source (the oracle and the searches draw
// it like an input), a buffer of role constant naming a memref.global that holds the value, and
// a host function with the caller's signature that copies the global to the device.
//
// RUN: evo-opt %s -split-input-file -verify-diagnostics -evo-lower-to-gpu="inline-constant-bytes=16" | FileCheck %s
// The printed plan parses back (the constant buffers' `global`):
// RUN: evo-opt %s -split-input-file -evo-lower-to-gpu="inline-constant-bytes=16" | evo-opt -split-input-file | FileCheck %s
// RUN: evo-opt %s -split-input-file -evo-lower-to-gpu | FileCheck %s --check-prefix=INLINE

// CHECK-LABEL: memref.global "private" constant @linear_w_const0 : memref<4x2xf32> = dense<{{\[\[}}1.000000e+00, -1.000000e+00]
// CHECK-LABEL: func.func @linear_w(
// CHECK-SAME:    %[[X:.*]]: memref<16x4xf32>, %[[Y:.*]]: memref<16x2xf32>) {
// CHECK:         %[[D:.*]], %[[T:.*]] = gpu.alloc async [%{{.*}}] () : memref<4x2xf32>
// CHECK:         %[[H:.*]] = memref.get_global @linear_w_const0 : memref<4x2xf32>
// CHECK:         gpu.memcpy async [%[[T]]] %[[D]], %[[H]] : memref<4x2xf32>, memref<4x2xf32>
// CHECK:         gpu.launch_func @linear_w_kernels::@{{.*}} args(%[[X]] : memref<16x4xf32>, %[[D]] : memref<4x2xf32>, %[[Y]] : memref<16x2xf32>)
// CHECK:         gpu.dealloc async [%{{.*}}] %[[D]]
// CHECK:       gpu.module @linear_w_kernels
// CHECK-SAME:    source = "func.func @linear_w(%arg0: tensor<16x4xf32>, %arg1: tensor<4x2xf32>) -> tensor<16x2xf32>
// CHECK-SAME:    #evo.buffer<name = "const0", role = constant, type = memref<4x2xf32>, global = "linear_w_const0">
// CHECK-NOT:     memref.global
// INLINE-LABEL: func.func @linear_w(
// INLINE-NOT:    role = constant
// INLINE:        memref.global "private" constant @linear_w_kernels_cst0 : memref<4x2xf32>
func.func @linear_w(%x: tensor<16x4xf32>) -> tensor<16x2xf32> {
  %w = arith.constant dense<[[1.0, -1.0], [0.5, 2.0], [0.25, 0.0], [3.0, 1.5]]> : tensor<4x2xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x2xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<16x2xf32>) -> tensor<16x2xf32>
  %r = linalg.matmul ins(%x, %w : tensor<16x4xf32>, tensor<4x2xf32>) outs(%f : tensor<16x2xf32>) -> tensor<16x2xf32>
  return %r : tensor<16x2xf32>
}

// -----

// Two constants, one a dense_resource over the limit: the global keeps the resource; a small
// one (at most 16 bytes) and a splat stay in the kernels.
// CHECK-LABEL: memref.global "private" constant @two_const0 : memref<8xf32> = dense_resource<evo_w8>
// CHECK:       memref.global "private" constant @two_const1 : memref<2x4xf32> = dense<
// CHECK-LABEL: func.func @two(
// CHECK-SAME:    %{{.*}}: memref<2x4xf32>, %{{.*}}: memref<2x4xf32>) {
// CHECK-COUNT-2: gpu.memcpy async
// CHECK:       source = "func.func @two(%arg0: tensor<2x4xf32>, %arg1: tensor<8xf32>, %arg2: tensor<2x4xf32>)
// CHECK-SAME:    dense<[5.000000e-01, 2.500000e-01]> : tensor<2xf32>
// CHECK-SAME:    #evo.buffer<name = "const0", role = constant, type = memref<8xf32>, global = "two_const0">
// CHECK-SAME:    #evo.buffer<name = "const1", role = constant, type = memref<2x4xf32>, global = "two_const1">
func.func @two(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %w = arith.constant dense_resource<evo_w8> : tensor<8xf32>
  %v = arith.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]> : tensor<2x4xf32>
  %s = arith.constant dense<[0.5, 0.25]> : tensor<2xf32>
  %one = arith.constant dense<1.0> : tensor<2x4xf32>
  %wv = tensor.expand_shape %w [[0, 1]] output_shape [2, 4] : tensor<8xf32> into tensor<2x4xf32>
  %e = tensor.empty() : tensor<2x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
    ins(%x, %wv, %v, %s, %one : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2xf32>, tensor<2x4xf32>) outs(%e : tensor<2x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %d: f32, %o1: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %n = arith.addf %m, %c : f32
    %p = arith.mulf %n, %d : f32
    %q = arith.addf %p, %o1 : f32
    linalg.yield %q : f32
  } -> tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}
{-#
  dialect_resources: {
    builtin: {
      evo_w8: "0x040000000000803F0000004000004040000080400000A0400000C0400000E04000000041"
    }
  }
#-}

// -----

// A resource without its blob (elided) is a constant buffer too: the lowering and the searches
// draw it like an input; only writing it beside the PTX needs the value (emit-ptx-constants.mlir).
// CHECK-LABEL: memref.global "private" constant @elided_const0 : memref<4xf32> = dense_resource<evo_nowhere>
// CHECK-LABEL: func.func @elided(
// INLINE-LABEL: memref.global "private" constant @elided_const0 : memref<4xf32> = dense_resource<evo_nowhere>
func.func @elided(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = arith.constant dense_resource<evo_nowhere> : tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.mul ins(%x, %w : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// The global's name does not take a symbol the module already has.
// CHECK-LABEL: func.func @taken_const0(
// CHECK-LABEL: memref.global "private" constant @taken_const1 : memref<5xf32>
// CHECK-LABEL: func.func @taken(
// CHECK:         memref.get_global @taken_const1
func.func @taken_const0() {
  return
}
func.func @taken(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = arith.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0]> : tensor<5xf32>
  %ws = tensor.extract_slice %w[1] [4] [1] : tensor<5xf32> to tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.mul ins(%x, %ws : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
