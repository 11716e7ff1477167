// evo-verify on kernels that read constant buffers (constants over inline-constant-bytes,
// docs/lowering.md "Constant buffers"): the worker draws them like inputs, the oracle reads the
// lifted source; a matmul's weight and a row program's scale.
//
// REQUIRES: cuda
// RUN: evo-opt %s -split-input-file -verify-diagnostics \
// RUN:   --evo-pipeline="output-dir=- inline-constant-bytes=64" --evo-verify="runs=20 warmup=3" -o /dev/null

// expected-remark @below {{evo-verify: 'linear_w' is valid (5 trials, }}
func.func @linear_w(%x: tensor<4096x16xf32>) -> tensor<4096x8xf32> {
  %w = arith.constant dense<[[-1.375, 0.375, -0.75, 1.0, -0.125, -1.25, 0.5, -0.625], [1.125, 0.0, -1.125, 0.625, -0.5, 1.25, 0.125, -1.0], [0.75, -0.375, 1.375, 0.25, -0.875, 0.875, -0.25, -1.375], [0.375, -0.75, 1.0, -0.125, -1.25, 0.5, -0.625, 1.125], [0.0, -1.125, 0.625, -0.5, 1.25, 0.125, -1.0, 0.75], [-0.375, 1.375, 0.25, -0.875, 0.875, -0.25, -1.375, 0.375], [-0.75, 1.0, -0.125, -1.25, 0.5, -0.625, 1.125, 0.0], [-1.125, 0.625, -0.5, 1.25, 0.125, -1.0, 0.75, -0.375], [1.375, 0.25, -0.875, 0.875, -0.25, -1.375, 0.375, -0.75], [1.0, -0.125, -1.25, 0.5, -0.625, 1.125, 0.0, -1.125], [0.625, -0.5, 1.25, 0.125, -1.0, 0.75, -0.375, 1.375], [0.25, -0.875, 0.875, -0.25, -1.375, 0.375, -0.75, 1.0], [-0.125, -1.25, 0.5, -0.625, 1.125, 0.0, -1.125, 0.625], [-0.5, 1.25, 0.125, -1.0, 0.75, -0.375, 1.375, 0.25], [-0.875, 0.875, -0.25, -1.375, 0.375, -0.75, 1.0, -0.125], [-1.25, 0.5, -0.625, 1.125, 0.0, -1.125, 0.625, -0.5]]> : tensor<16x8xf32>
  %b = arith.constant dense<[0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 0.25, -0.25]> : tensor<8xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4096x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4096x8xf32>) -> tensor<4096x8xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<4096x16xf32>, tensor<16x8xf32>) outs(%f : tensor<4096x8xf32>) -> tensor<4096x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
    ins(%mm, %b : tensor<4096x8xf32>, tensor<8xf32>) outs(%e : tensor<4096x8xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<4096x8xf32>
  return %r : tensor<4096x8xf32>
}

// -----

// expected-remark @below {{evo-verify: 'rows_scale' is valid (5 trials, }}
func.func @rows_scale(%x: tensor<2048x32xf32>) -> tensor<2048x32xf32> {
  %g = arith.constant dense<[0.5, 0.53, 0.56, 0.59, 0.62, 0.65, 0.68, 0.71, 0.74, 0.77, 0.8, 0.83, 0.86, 0.89, 0.92, 0.95, 0.98, 1.01, 1.04, 1.07, 1.1, 1.13, 1.16, 1.19, 1.22, 1.25, 1.28, 1.31, 1.34, 1.37, 1.4, 1.43]> : tensor<32xf32>
  %z = arith.constant 0.0 : f32
  %n = arith.constant 32.0 : f32
  %e = tensor.empty() : tensor<2048xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<2048xf32>) -> tensor<2048xf32>
  %s = linalg.reduce ins(%x : tensor<2048x32xf32>) outs(%f : tensor<2048xf32>) dimensions = [1]
    (%a: f32, %b: f32) { %t = arith.addf %a, %b : f32
      linalg.yield %t : f32 }
  %e2 = tensor.empty() : tensor<2048x32xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
    ins(%x, %s, %g : tensor<2048x32xf32>, tensor<2048xf32>, tensor<32xf32>) outs(%e2 : tensor<2048x32xf32>) {
  ^bb0(%a: f32, %m: f32, %w: f32, %o: f32):
    %mean = arith.divf %m, %n : f32
    %d = arith.subf %a, %mean : f32
    %y = arith.mulf %d, %w : f32
    linalg.yield %y : f32
  } -> tensor<2048x32xf32>
  return %r : tensor<2048x32xf32>
}
