// Gathers: a payload may read a tensor defined outside it with tensor.extract (torch-mlir's
// nll_loss, embeddings, index_select). The tensor becomes a kernel parameter like an operand and
// the extract a load from it, its indices clamped into the tensor (the oracle reads them the same
// way), so no index data makes a kernel read outside its buffers.
//
// RUN: evo-opt %s -split-input-file -verify-diagnostics -evo-lower-to-gpu | FileCheck %s
// RUN: evo-opt %s -split-input-file -verify-diagnostics --evo-pipeline="output-dir=%t" -o /dev/null

// An embedding lookup: out[i, j] = table[ids[i], j].
// CHECK-LABEL: func.func @embedding(
// CHECK-SAME:    %{{.*}}: memref<1000x64xf32>, %{{.*}}: memref<32xi32>, %{{.*}}: memref<32x64xf32>)
// CHECK:       gpu.func @embedding_k0(%[[IDS:.*]]: memref<32xi32>, %[[TABLE:.*]]: memref<1000x64xf32>, %{{.*}}: memref<32x64xf32>)
// CHECK:         %[[ID:.*]] = memref.load %[[IDS]]
// CHECK:         %[[C:.*]] = arith.index_cast %[[ID]] : i32 to index
// CHECK:         %[[LO:.*]] = arith.maxsi %[[C]], %c0
// CHECK:         %[[HI:.*]] = arith.minsi %[[LO]], %c999
// CHECK:         memref.load %[[TABLE]][%[[HI]], %{{.*}}] : memref<1000x64xf32>
func.func @embedding(%table: tensor<1000x64xf32>, %ids: tensor<32xi32>) -> tensor<32x64xf32> {
  %e = tensor.empty() : tensor<32x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<32xi32>) outs(%e : tensor<32x64xf32>) {
    ^bb0(%id: i32, %o: f32):
      %j = linalg.index 1 : index
      %row = arith.index_cast %id : i32 to index
      %v = tensor.extract %table[%row, %j] : tensor<1000x64xf32>
      linalg.yield %v : f32
  } -> tensor<32x64xf32>
  return %r : tensor<32x64xf32>
}

// -----

// Reading a scalar out of a tensor on the host side is not a gather: the payload would capture
// a value no kernel has.
func.func @captured_scalar(%x: tensor<8xf32>, %y: tensor<1xf32>) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'tensor.extract' is not supported by evo-lower-to-gpu}}
  %s = tensor.extract %y[%c0] : tensor<1xf32>
  %e = tensor.empty() : tensor<8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
    ^bb0(%in: f32, %o: f32):
      %v = arith.addf %in, %s : f32
      linalg.yield %v : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}
