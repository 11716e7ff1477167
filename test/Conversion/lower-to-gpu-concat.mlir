// tensor.concat (torch.cat) becomes an elementwise linalg.generic over its result that reads each
// operand at its index clamped into that operand and selects by the position along the
// concatenated dimension (FrontEnds.cpp, concatToGenerics): it lowers like any elementwise op
// and fuses with its consumers.

// RUN: evo-opt %s -split-input-file -verify-diagnostics -evo-lower-to-gpu | FileCheck %s

// Concatenated, then exp: one kernel that reads each operand once (both reads in bounds), selects
// by the column and stores once.

// CHECK-LABEL: func.func @concat_exp
// CHECK:       gpu.func @concat_exp_k0(%arg0: memref<64x128xf32>, %arg1: memref<64x32xf32>, %arg2: memref<64x160xf32>)
// CHECK:         %[[A:.*]] = memref.load %arg0
// CHECK:         %[[B:.*]] = memref.load %arg1
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
// CHECK-COUNT-3: memref.load
// CHECK:         arith.cmpi slt, %{{.*}}, %c5
// CHECK:         arith.select
// CHECK:         arith.cmpi slt, %{{.*}}, %c3
// CHECK:         arith.select
// CHECK:         memref.store {{.*}} : memref<9x8xf16>
func.func @concat_only(%a: tensor<3x8xf16>, %b: tensor<2x8xf16>, %c: tensor<4x8xf16>) -> tensor<9x8xf16> {
  %r = tensor.concat dim(0) %a, %b, %c : (tensor<3x8xf16>, tensor<2x8xf16>, tensor<4x8xf16>) -> tensor<9x8xf16>
  return %r : tensor<9x8xf16>
}
