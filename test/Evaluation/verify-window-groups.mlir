// evo-verify on group_outputs along a pooling window (EmitReduction.cpp, windowAccumulate): a
// thread per G consecutive outputs along the dimension the window slides on, the windows' span
// loaded once in vector accesses, checked against the oracle and the naive baseline on the GPU.
// Dilated 1-D max pooling with a partial last group (498 outputs per row in groups of 4), 1-D
// average pooling (sum, then a division) with an odd output width, 2-D max pooling (a loop over
// the window's rows), f16 with 128-bit loads, and a stride-1 sliding sum as a linalg.generic.
//
// REQUIRES: cuda
// RUN: rm -rf %t && mkdir -p %t
// RUN: evo-opt %s -split-input-file --evo-pipeline="output-dir=%t" --evo-verify="runs=3" -o /dev/null

func.func @maxpool1d_dilated(%x: tensor<16x8x1004xf32>) -> tensor<16x8x498xf32> {
  %cst = arith.constant 0xFF800000 : f32
  %0 = tensor.empty() : tensor<16x8x498xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<16x8x498xf32>) -> tensor<16x8x498xf32>
  %2 = tensor.empty() : tensor<4xf32>
  %3 = linalg.pooling_ncw_max {dilations = dense<3> : vector<1xi64>, strides = dense<2> : vector<1xi64>,
         evo.knobs = #evo.knobs<group_outputs = 4, vector_width = 4>}
         ins(%x, %2 : tensor<16x8x1004xf32>, tensor<4xf32>) outs(%1 : tensor<16x8x498xf32>) -> tensor<16x8x498xf32>
  return %3 : tensor<16x8x498xf32>
}

// -----

#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @avgpool1d_odd(%x: tensor<8x16x2048xf32>) -> tensor<8x16x1023xf32> {
  %cst = arith.constant 0.0 : f32
  %four = arith.constant 4.0 : f32
  %0 = tensor.empty() : tensor<8x16x1023xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<8x16x1023xf32>) -> tensor<8x16x1023xf32>
  %2 = tensor.empty() : tensor<4xf32>
  %3 = linalg.pooling_ncw_sum {dilations = dense<1> : vector<1xi64>, strides = dense<2> : vector<1xi64>,
         evo.knobs = #evo.knobs<group_outputs = 4, vector_width = 2>}
         ins(%x, %2 : tensor<8x16x2048xf32>, tensor<4xf32>) outs(%1 : tensor<8x16x1023xf32>) -> tensor<8x16x1023xf32>
  %4 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]}
         ins(%3 : tensor<8x16x1023xf32>) outs(%0 : tensor<8x16x1023xf32>) {
  ^bb0(%in: f32, %out: f32):
    %5 = arith.divf %in, %four : f32
    linalg.yield %5 : f32
  } -> tensor<8x16x1023xf32>
  return %4 : tensor<8x16x1023xf32>
}

// -----

func.func @maxpool2d(%x: tensor<4x8x66x130xf32>) -> tensor<4x8x32x64xf32> {
  %cst = arith.constant 0xFF800000 : f32
  %0 = tensor.empty() : tensor<4x8x32x64xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<4x8x32x64xf32>) -> tensor<4x8x32x64xf32>
  %w = tensor.empty() : tensor<3x3xf32>
  %3 = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>,
         evo.knobs = #evo.knobs<group_outputs = 4, vector_width = 2>}
         ins(%x, %w : tensor<4x8x66x130xf32>, tensor<3x3xf32>) outs(%1 : tensor<4x8x32x64xf32>) -> tensor<4x8x32x64xf32>
  return %3 : tensor<4x8x32x64xf32>
}

// -----

func.func @maxpool1d_f16(%x: tensor<8x8x2048xf16>) -> tensor<8x8x1023xf16> {
  %cst = arith.constant 0xFC00 : f16
  %0 = tensor.empty() : tensor<8x8x1023xf16>
  %1 = linalg.fill ins(%cst : f16) outs(%0 : tensor<8x8x1023xf16>) -> tensor<8x8x1023xf16>
  %2 = tensor.empty() : tensor<4xf16>
  %3 = linalg.pooling_ncw_max {dilations = dense<1> : vector<1xi64>, strides = dense<2> : vector<1xi64>,
         evo.knobs = #evo.knobs<group_outputs = 8, vector_width = 8>}
         ins(%x, %2 : tensor<8x8x2048xf16>, tensor<4xf16>) outs(%1 : tensor<8x8x1023xf16>) -> tensor<8x8x1023xf16>
  return %3 : tensor<8x8x1023xf16>
}

// -----

func.func @sliding_sum(%x: tensor<64x4096xf32>) -> tensor<64x4089xf32> {
  %cst = arith.constant 0.0 : f32
  %0 = tensor.empty() : tensor<64x4089xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<64x4089xf32>) -> tensor<64x4089xf32>
  %w = tensor.empty() : tensor<8xf32>
  %2 = linalg.generic {indexing_maps = [affine_map<(r, o, w) -> (r, o + w)>, affine_map<(r, o, w) -> (w)>,
                                        affine_map<(r, o, w) -> (r, o)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
         ins(%x, %w : tensor<64x4096xf32>, tensor<8xf32>) outs(%1 : tensor<64x4089xf32>)
         attrs = {evo.knobs = #evo.knobs<group_outputs = 4, vector_width = 4>} {
  ^bb0(%in: f32, %unused: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<64x4089xf32>
  return %2 : tensor<64x4089xf32>
}
