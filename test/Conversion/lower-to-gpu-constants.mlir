// Dense tensor constants (weights) of at most 1 MiB are embedded in the kernels' module as
// private constant globals (in PTX an initialized, 16-byte aligned .global) that the kernels read
// like a buffer; splats stay scalars. dense_resource constants (torch-mlir's weights) are written
// inline first, so the task sources and the oracle's source carry the values. Larger constants
// (and resources without a blob) become constant buffers: lower-to-gpu-constant-buffers.mlir.
//
// RUN: evo-opt %s -split-input-file -verify-diagnostics -evo-lower-to-gpu | FileCheck %s
// RUN: evo-opt %s -split-input-file -verify-diagnostics --evo-pipeline="output-dir=%t" -o /dev/null
// RUN: FileCheck %s --input-file=%t/bias_const.ptx --check-prefix=PTX
// PTX: .global .align 16 .b8 bias_const_kernels_cst0[32] = {0, 0, 128, 63, 0, 0, 0, 64,

// CHECK-LABEL: func.func @bias_const(
// CHECK-SAME:    memref<64x8xf32>, %{{.*}}: memref<64x8xf32>)
// CHECK:       memref.global "private" constant @bias_const_kernels_cst0 : memref<8xf32> = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00, 6.000000e+00, 7.000000e+00, 8.000000e+00]> {alignment = 16 : i64}
// CHECK:       gpu.func @bias_const_k0
// CHECK:         %[[G:.*]] = memref.get_global @bias_const_kernels_cst0 : memref<8xf32>
// CHECK:         memref.load %[[G]]
func.func @bias_const(%x: tensor<64x8xf32>) -> tensor<64x8xf32> {
  %b = arith.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> : tensor<8xf32>
  %e = tensor.empty() : tensor<64x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
    ins(%x, %b : tensor<64x8xf32>, tensor<8xf32>) outs(%e : tensor<64x8xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<64x8xf32>
  return %r : tensor<64x8xf32>
}

// -----

// A constant weight matrix of a matmul (naive: read through loadLanes).
// CHECK-LABEL: func.func @linear_const(
// CHECK:       memref.global "private" constant @linear_const_kernels_cst0 : memref<4x2xf32>
// CHECK:       gpu.func @linear_const_k0({{.*}}) kernel attributes {evo.family = #evo.family<matmul>
// CHECK:         memref.get_global @linear_const_kernels_cst0
func.func @linear_const(%x: tensor<16x4xf32>) -> tensor<16x2xf32> {
  %w = arith.constant dense<[[1.0, -1.0], [0.5, 2.0], [0.25, 0.0], [3.0, 1.5]]> : tensor<4x2xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x2xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<16x2xf32>) -> tensor<16x2xf32>
  %r = linalg.matmul ins(%x, %w : tensor<16x4xf32>, tensor<4x2xf32>) outs(%f : tensor<16x2xf32>) -> tensor<16x2xf32>
  return %r : tensor<16x2xf32>
}

// -----

// A row program (LayerNorm-like) with a constant scale per column.
// CHECK-LABEL: func.func @rows_const(
// CHECK:       memref.global "private" constant @rows_const_kernels_cst0 : memref<8xf32>
// CHECK:       gpu.func @rows_const_k0({{.*}}) kernel attributes {evo.family = #evo.family<rows>
// CHECK:         memref.get_global @rows_const_kernels_cst0
func.func @rows_const(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %g = arith.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> : tensor<8xf32>
  %z = arith.constant 0.0 : f32
  %n = arith.constant 8.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.reduce ins(%x : tensor<4x8xf32>) outs(%f : tensor<4xf32>) dimensions = [1]
    (%a: f32, %b: f32) { %t = arith.addf %a, %b : f32
      linalg.yield %t : f32 }
  %e2 = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
    ins(%x, %s, %g : tensor<4x8xf32>, tensor<4xf32>, tensor<8xf32>) outs(%e2 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %m: f32, %w: f32, %o: f32):
    %mean = arith.divf %m, %n : f32
    %d = arith.subf %a, %mean : f32
    %y = arith.mulf %d, %w : f32
    linalg.yield %y : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// dense_resource: the plan's source holds the values inline.
// CHECK-LABEL: func.func @resource_const(
// CHECK:       evo.plan = #evo.plan<func = "resource_const", source = "{{.*}}dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]>
// CHECK:       memref.global "private" constant @resource_const_kernels_cst0 : memref<4xf32> = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]>
func.func @resource_const(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = arith.constant dense_resource<evo_w0> : tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.mul ins(%x, %w : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
{-#
  dialect_resources: {
    builtin: {
      evo_w0: "0x040000000000803F000000400000404000008040"
    }
  }
#-}
