// evo-verify on kernels that read dense constants (weights embedded as PTX globals): a bias, a
// constant weight matrix and a row program's constant scale, each against the oracle.
//
// REQUIRES: cuda
// RUN: evo-opt %s -split-input-file -verify-diagnostics --evo-pipeline="output-dir=-" \
// RUN:   --evo-verify="runs=20 warmup=3" -o /dev/null

// expected-remark @below {{evo-verify: 'bias_const' is valid (5 trials, }}
func.func @bias_const(%x: tensor<4096x8xf32>) -> tensor<4096x8xf32> {
  %b = arith.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> : tensor<8xf32>
  %e = tensor.empty() : tensor<4096x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
    ins(%x, %b : tensor<4096x8xf32>, tensor<8xf32>) outs(%e : tensor<4096x8xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<4096x8xf32>
  return %r : tensor<4096x8xf32>
}

// -----

// expected-remark @below {{evo-verify: 'linear_const' is valid (5 trials, }}
func.func @linear_const(%x: tensor<1024x4xf32>) -> tensor<1024x2xf32> {
  %w = arith.constant dense<[[1.0, -1.0], [0.5, 2.0], [0.25, 0.0], [3.0, 1.5]]> : tensor<4x2xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1024x2xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1024x2xf32>) -> tensor<1024x2xf32>
  %r = linalg.matmul ins(%x, %w : tensor<1024x4xf32>, tensor<4x2xf32>) outs(%f : tensor<1024x2xf32>) -> tensor<1024x2xf32>
  return %r : tensor<1024x2xf32>
}

// -----

// expected-remark @below {{evo-verify: 'rows_const' is valid (5 trials, }}
func.func @rows_const(%x: tensor<512x8xf32>) -> tensor<512x8xf32> {
  %g = arith.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> : tensor<8xf32>
  %z = arith.constant 0.0 : f32
  %n = arith.constant 8.0 : f32
  %e = tensor.empty() : tensor<512xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<512xf32>) -> tensor<512xf32>
  %s = linalg.reduce ins(%x : tensor<512x8xf32>) outs(%f : tensor<512xf32>) dimensions = [1]
    (%a: f32, %b: f32) { %t = arith.addf %a, %b : f32
      linalg.yield %t : f32 }
  %e2 = tensor.empty() : tensor<512x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
    ins(%x, %s, %g : tensor<512x8xf32>, tensor<512xf32>, tensor<8xf32>) outs(%e2 : tensor<512x8xf32>) {
  ^bb0(%a: f32, %m: f32, %w: f32, %o: f32):
    %mean = arith.divf %m, %n : f32
    %d = arith.subf %a, %mean : f32
    %y = arith.mulf %d, %w : f32
    linalg.yield %y : f32
  } -> tensor<512x8xf32>
  return %r : tensor<512x8xf32>
}
