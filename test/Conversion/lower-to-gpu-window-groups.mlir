// group_outputs=G along a pooling window (EmitReduction.cpp, windowGroupAlong): with
// reduction=thread, a thread computes G consecutive outputs along the dimension a window slides
// on and loads their windows' span of input once, `vector_width` elements per access, instead
// of G x W separate loads. A G that does not divide that dimension leaves a partial last group,
// computed by clamped loads and stored only inside the dimension.

// RUN: evo-opt %s -split-input-file -verify-diagnostics -evo-lower-to-gpu | FileCheck %s

// Dilation 3, stride 2, window 4: the 4 outputs' windows span 2*3 + 3*3 + 1 = 16 elements,
// four 128-bit loads (no scalar load of the input), four stores.

// CHECK-LABEL: func.func @maxpool1d_dilated
// CHECK:       grid = [1, 1, 1], block = [256, 1, 1]
// CHECK:       gpu.func @maxpool1d_dilated_k0
// CHECK-SAME:    group_outputs = 4
// CHECK-COUNT-4: vector.load %arg0{{.*}} : memref<2x3x64xf32>, vector<4xf32>
// CHECK-NOT:     memref.load
// CHECK-NOT:     vector.load
// CHECK-COUNT-12: arith.maximumf
// CHECK-NOT:     arith.maximumf
// CHECK-COUNT-4: memref.store {{.*}} : memref<2x3x24xf32>
// CHECK:         gpu.return
func.func @maxpool1d_dilated(%x: tensor<2x3x64xf32>) -> tensor<2x3x24xf32> {
  %cst = arith.constant 0xFF800000 : f32
  %0 = tensor.empty() : tensor<2x3x24xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<2x3x24xf32>) -> tensor<2x3x24xf32>
  %2 = tensor.empty() : tensor<4xf32>
  %3 = linalg.pooling_ncw_max {dilations = dense<3> : vector<1xi64>, strides = dense<2> : vector<1xi64>,
         evo.knobs = #evo.knobs<group_outputs = 4, vector_width = 4>}
         ins(%x, %2 : tensor<2x3x64xf32>, tensor<4xf32>) outs(%1 : tensor<2x3x24xf32>) -> tensor<2x3x24xf32>
  return %3 : tensor<2x3x24xf32>
}

// -----

// 7 outputs per row in groups of 4: 2 groups per row; the second is partial. Whole groups load
// the span of 2*3 + 3 + 1 = 10 elements as five 64-bit loads; the partial one clamps its points
// to the last output and loads per point; points 1-3 are stored only inside the row.

// CHECK-LABEL: func.func @sumpool1d_odd
// CHECK:       gpu.func @sumpool1d_odd_k0
// CHECK:         %[[LAST:.*]] = arith.cmpi ult, %{{.*}}, %c7
// CHECK:         scf.if %[[LAST]] -> (f32, f32, f32, f32)
// CHECK-COUNT-5:   vector.load %arg0{{.*}} vector<2xf32>
// CHECK-NOT:       memref.load
// CHECK:         } else {
// CHECK:           arith.minui %{{.*}}, %c6
// CHECK-COUNT-16:  memref.load %arg0
// CHECK:         memref.store
// CHECK-COUNT-3: scf.if
// CHECK-NOT:     scf.if
// CHECK:         gpu.return
func.func @sumpool1d_odd(%x: tensor<2x3x16xf32>) -> tensor<2x3x7xf32> {
  %cst = arith.constant 0.0 : f32
  %0 = tensor.empty() : tensor<2x3x7xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<2x3x7xf32>) -> tensor<2x3x7xf32>
  %2 = tensor.empty() : tensor<4xf32>
  %3 = linalg.pooling_ncw_sum {dilations = dense<1> : vector<1xi64>, strides = dense<2> : vector<1xi64>,
         evo.knobs = #evo.knobs<group_outputs = 4, vector_width = 2>}
         ins(%x, %2 : tensor<2x3x16xf32>, tensor<4xf32>) outs(%1 : tensor<2x3x7xf32>) -> tensor<2x3x7xf32>
  return %3 : tensor<2x3x7xf32>
}

// -----

// A 3x3 window: the group runs along the output width; each of the window's rows is one trip
// of a loop that loads that row's span (2*3 + 2 + 1 = 9: four 64-bit loads and one scalar).

// CHECK-LABEL: func.func @maxpool2d
// CHECK:       gpu.func @maxpool2d_k0
// CHECK:         scf.for %{{.*}} = %c0 to %c3 step %c1 iter_args
// CHECK-COUNT-4:   vector.load %arg0{{.*}} vector<2xf32>
// CHECK:           memref.load %arg0
// CHECK-NOT:       memref.load
// CHECK:           scf.yield
// CHECK-COUNT-4: memref.store {{.*}} : memref<1x2x4x8xf32>
func.func @maxpool2d(%x: tensor<1x2x10x18xf32>) -> tensor<1x2x4x8xf32> {
  %cst = arith.constant 0xFF800000 : f32
  %0 = tensor.empty() : tensor<1x2x4x8xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %w = tensor.empty() : tensor<3x3xf32>
  %3 = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>,
         evo.knobs = #evo.knobs<group_outputs = 4, vector_width = 2>}
         ins(%x, %w : tensor<1x2x10x18xf32>, tensor<3x3xf32>) outs(%1 : tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %3 : tensor<1x2x4x8xf32>
}

// -----

// Rows of 18 do not hold whole vectors of 4: the span loads would not be aligned.

func.func @rows_not_whole_vectors(%x: tensor<1x2x10x18xf32>) -> tensor<1x2x4x8xf32> {
  %cst = arith.constant 0xFF800000 : f32
  %0 = tensor.empty() : tensor<1x2x4x8xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %w = tensor.empty() : tensor<3x3xf32>
  // expected-error @+1 {{vector_width=4 does not divide the pooled dimension (18)}}
  %3 = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>,
         evo.knobs = #evo.knobs<group_outputs = 4, vector_width = 4>}
         ins(%x, %w : tensor<1x2x10x18xf32>, tensor<3x3xf32>) outs(%1 : tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %3 : tensor<1x2x4x8xf32>
}

// -----

// Stride 1 and groups of 2: consecutive groups' spans start 2 elements apart, so 4-element
// accesses would not be aligned.

func.func @groups_not_whole_vectors(%x: tensor<4x64xf16>) -> tensor<4x61xf16> {
  %cst = arith.constant 0.0 : f16
  %0 = tensor.empty() : tensor<4x61xf16>
  %1 = linalg.fill ins(%cst : f16) outs(%0 : tensor<4x61xf16>) -> tensor<4x61xf16>
  %w = tensor.empty() : tensor<4xf16>
  // expected-error @+1 {{vector_width=4 does not divide the 2 elements between the windows of consecutive groups}}
  %2 = linalg.generic {indexing_maps = [affine_map<(r, o, w) -> (r, o + w)>, affine_map<(r, o, w) -> (w)>,
                                        affine_map<(r, o, w) -> (r, o)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
         ins(%x, %w : tensor<4x64xf16>, tensor<4xf16>) outs(%1 : tensor<4x61xf16>)
         attrs = {evo.knobs = #evo.knobs<group_outputs = 2, vector_width = 4>} {
  ^bb0(%in: f16, %unused: f16, %acc: f16):
    %s = arith.addf %in, %acc : f16
    linalg.yield %s : f16
  } -> tensor<4x61xf16>
  return %2 : tensor<4x61xf16>
}

// -----

// A window group is a thread's: a warp per group is refused.

func.func @warp_window(%x: tensor<2x3x64xf32>) -> tensor<2x3x24xf32> {
  %cst = arith.constant 0xFF800000 : f32
  %0 = tensor.empty() : tensor<2x3x24xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<2x3x24xf32>) -> tensor<2x3x24xf32>
  %2 = tensor.empty() : tensor<4xf32>
  // expected-error @+1 {{group_outputs=4 along a pooling window needs reduction=thread, no group_outputs2 and no split}}
  %3 = linalg.pooling_ncw_max {dilations = dense<3> : vector<1xi64>, strides = dense<2> : vector<1xi64>,
         evo.knobs = #evo.knobs<group_outputs = 4, reduction = warp>}
         ins(%x, %2 : tensor<2x3x64xf32>, tensor<4xf32>) outs(%1 : tensor<2x3x24xf32>) -> tensor<2x3x24xf32>
  return %3 : tensor<2x3x24xf32>
}
