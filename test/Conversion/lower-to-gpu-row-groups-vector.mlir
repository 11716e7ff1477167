// Rows over several trailing dimensions with a warp per row and vector_width=4: the accesses
// are 128-bit along the last dimension (a chunk of 4 columns never crosses it); a width that
// does not divide the last dimension is refused even where it divides the whole row.
// RUN: evo-opt %s -split-input-file -evo-lower-to-gpu="reduction-strategy=warp vector-width=4" | FileCheck %s
// RUN: not evo-opt %s -split-input-file -evo-lower-to-gpu="reduction-strategy=warp vector-width=8" 2>&1 | FileCheck %s --check-prefix=ERR

// CHECK-LABEL: gpu.func @inorm_k0
// CHECK-SAME:    evo.family = #evo.family<rows>
// CHECK-SAME:    reduction = warp
// CHECK:         vector.load %{{.*}} : memref<2x3x16x4xf32>, vector<4xf32>
// CHECK:         gpu.shuffle
// CHECK:         vector.load %{{.*}} : memref<16x4xf32>, vector<4xf32>
// CHECK:         vector.store %{{.*}} : memref<2x3x16x4xf32>, vector<4xf32>
// ERR: error: vector_width=8 does not divide the row's last dimension (4)
func.func @inorm(%x: tensor<2x3x16x4xf32>, %w: tensor<16x4xf32>) -> tensor<2x3x16x4xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<2x3xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%x : tensor<2x3x16x4xf32>) outs(%1 : tensor<2x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %7 = arith.addf %in, %out : f32
    linalg.yield %7 : f32
  } -> tensor<2x3xf32>
  %5 = tensor.empty() : tensor<2x3x16x4xf32>
  %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1)>, affine_map<(d0, d1, d2, d3) -> (d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %2, %w : tensor<2x3x16x4xf32>, tensor<2x3xf32>, tensor<16x4xf32>) outs(%5 : tensor<2x3x16x4xf32>) {
  ^bb0(%in: f32, %s: f32, %ww: f32, %out: f32):
    %7 = arith.subf %in, %s : f32
    %8 = arith.mulf %7, %ww : f32
    linalg.yield %8 : f32
  } -> tensor<2x3x16x4xf32>
  return %6 : tensor<2x3x16x4xf32>
}
