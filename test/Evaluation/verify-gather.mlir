// evo-verify on gathers (docs/lowering.md "Gathers"): an embedding lookup with ids in range, the
// same with the default integer inputs ([-8, 8]: indices outside the table are clamped by the
// kernel and the oracle alike), and an nll-style loss reading the target logit of each row.
//
// REQUIRES: cuda
// RUN: evo-opt %s -split-input-file -verify-diagnostics --evo-pipeline="output-dir=-" \
// RUN:   --evo-verify="runs=20 warmup=3" -o /dev/null

// expected-remark @below {{evo-verify: 'embedding' is valid (5 trials, }}
func.func @embedding(%table: tensor<50000x256xf32>, %ids: tensor<4096xi32> {evo.range = [0, 49999]}) -> tensor<4096x256xf32> {
  %e = tensor.empty() : tensor<4096x256xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<4096xi32>) outs(%e : tensor<4096x256xf32>) {
    ^bb0(%id: i32, %o: f32):
      %j = linalg.index 1 : index
      %row = arith.index_cast %id : i32 to index
      %v = tensor.extract %table[%row, %j] : tensor<50000x256xf32>
      linalg.yield %v : f32
  } -> tensor<4096x256xf32>
  return %r : tensor<4096x256xf32>
}

// -----

// expected-remark @below {{evo-verify: 'embedding_clamped' is valid (5 trials, }}
func.func @embedding_clamped(%table: tensor<4x128xf16>, %ids: tensor<1024xi64>) -> tensor<1024x128xf16> {
  %e = tensor.empty() : tensor<1024x128xf16>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<1024xi64>) outs(%e : tensor<1024x128xf16>) {
    ^bb0(%id: i64, %o: f16):
      %j = linalg.index 1 : index
      %row = arith.index_cast %id : i64 to index
      %v = tensor.extract %table[%row, %j] : tensor<4x128xf16>
      linalg.yield %v : f16
  } -> tensor<1024x128xf16>
  return %r : tensor<1024x128xf16>
}

// -----

// expected-remark @below {{evo-verify: 'nll' is valid (5 trials, }}
func.func @nll(%x: tensor<2048x1000xf32>, %t: tensor<2048xi64> {evo.range = [0, 999]}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
      ins(%t : tensor<2048xi64>) outs(%f : tensor<f32>) {
    ^bb0(%ti: i64, %acc: f32):
      %i = linalg.index 0 : index
      %c = arith.index_cast %ti : i64 to index
      %v = tensor.extract %x[%i, %c] : tensor<2048x1000xf32>
      %s = arith.subf %acc, %v : f32
      linalg.yield %s : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}
