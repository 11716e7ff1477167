// tensor.concat (torch.cat) becomes an elementwise linalg.generic over its operands, each padded
// to the result's shape (a tensor.pad view: read in bounds, clamped), selecting by the position
// along the concatenated dimension (FrontEnds.cpp, concatToGenerics): it lowers like any
// elementwise op and fuses with its consumers. Its operands may be arguments, other ops'
// results, reshapes or constants (a splat is its value; another constant is copied first).

// RUN: evo-opt %s -split-input-file -verify-diagnostics -evo-lower-to-gpu | FileCheck %s

// Concatenated, then exp: one kernel that reads each operand once (both reads clamped in bounds),
// selects by the column and stores once.

// CHECK-LABEL: func.func @concat_exp
// CHECK:       gpu.func @concat_exp_k0(%arg0: memref<64x128xf32>, %arg1: memref<64x32xf32>, %arg2: memref<64x160xf32>)
// CHECK:         memref.load %arg0{{.*}} : memref<64x128xf32>
// CHECK:         %[[A:.*]] = arith.select
// CHECK:         memref.load %arg1{{.*}} : memref<64x32xf32>
// CHECK:         %[[B:.*]] = arith.select
// CHECK:         %[[LT:.*]] = arith.cmpi slt, %{{.*}}, %c128
// CHECK:         %[[X:.*]] = arith.select %[[LT]], %[[A]], %[[B]] : f32
// CHECK:         math.exp %[[X]]
// CHECK:         memref.store
// CHECK-NOT:   gpu.func
func.func @concat_exp(%a: tensor<64x128xf32>, %b: tensor<64x32xf32>) -> tensor<64x160xf32> {
  %c = tensor.concat dim(1) %a, %b : (tensor<64x128xf32>, tensor<64x32xf32>) -> tensor<64x160xf32>
  %e = tensor.empty() : tensor<64x160xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%c : tensor<64x160xf32>) outs(%e : tensor<64x160xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = math.exp %x : f32
    linalg.yield %y : f32
  } -> tensor<64x160xf32>
  return %r : tensor<64x160xf32>
}

// -----

// A function that only concatenates is a target (no "nothing to lower"): three operands along
// the outer dimension, two selects.

// CHECK-LABEL: func.func @concat_only
// CHECK:       gpu.func @concat_only_k0
// CHECK:         memref.load %arg0
// CHECK:         memref.load %arg1
// CHECK:         memref.load %arg2
// CHECK:         arith.cmpi slt, %{{.*}}, %c5
// CHECK:         arith.select
// CHECK:         arith.cmpi slt, %{{.*}}, %c3
// CHECK:         arith.select
// CHECK:         memref.store {{.*}} : memref<9x8xf16>
func.func @concat_only(%a: tensor<3x8xf16>, %b: tensor<2x8xf16>, %c: tensor<4x8xf16>) -> tensor<9x8xf16> {
  %r = tensor.concat dim(0) %a, %b, %c : (tensor<3x8xf16>, tensor<2x8xf16>, tensor<4x8xf16>) -> tensor<9x8xf16>
  return %r : tensor<9x8xf16>
}

// -----

// Operands that are not arguments: a matmul's result (a scratch buffer read through the pad), a
// reshape of an argument, a splat constant (its value in the payload: no load) and a dense
// constant (copied into a buffer first).

// CHECK-LABEL: func.func @concat_operands
// CHECK:       gpu.func @concat_operands_k0
// CHECK:       gpu.func @concat_operands_k1
// CHECK:       gpu.func @concat_operands_k2
// CHECK-SAME:    (%arg0: memref<4x8xf32>, %arg1: memref<4x2xf32>, %arg2: memref<32xf32>, %arg3: memref<4x22xf32>)
// CHECK-COUNT-3: memref.load
// CHECK-NOT:     memref.load
// CHECK:         memref.store {{.*}} : memref<4x22xf32>
// CHECK-NOT:   gpu.func
func.func @concat_operands(%a: tensor<4x16xf32>, %w: tensor<16x8xf32>, %v: tensor<32xf32>) -> tensor<4x22xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m = linalg.matmul ins(%a, %w : tensor<4x16xf32>, tensor<16x8xf32>) outs(%f : tensor<4x8xf32>) -> tensor<4x8xf32>
  %ones = arith.constant dense<1.0> : tensor<4x4xf32>
  %d = arith.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]> : tensor<4x2xf32>
  %x = tensor.expand_shape %v [[0, 1]] output_shape [4, 8] : tensor<32xf32> into tensor<4x8xf32>
  %r = tensor.concat dim(1) %m, %ones, %d, %x : (tensor<4x8xf32>, tensor<4x4xf32>, tensor<4x2xf32>, tensor<4x8xf32>) -> tensor<4x22xf32>
  return %r : tensor<4x22xf32>
}
