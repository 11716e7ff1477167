// Online softmax in row programs (docs/lowering.md, "Row programs"): where each pass re-reads
// a long row from memory (no cache_row, no row_split, rows of 64 KiB or more), softmax's max and
// sum of exponentials are folded in one pass: each thread keeps (m, s) = (running max, sum of
// exp(x - m)) per lane, one exp per element (of minus the distance to the running max), then the
// pairs are merged across the lanes, the warp (two shuffles per step) and the block (two shared
// buffers); a max of +inf makes the sum NaN as the two passes' exp(inf - inf) would. The same
// for a log-softmax written as generics (a max reduction, then the sum of exp(x - max) over the
// same x). Shorter rows keep the two passes (their second read hits the caches).

// RUN: evo-opt %s -split-input-file -evo-lower-to-gpu="reduction-strategy=block block-size=256 vector-width=4" | FileCheck %s

// CHECK-LABEL: func.func @softmax_long
// CHECK:         gpu.func @softmax_long_k0(%[[X:.*]]: memref<8x16384xf32>, %[[Y:.*]]: memref<8x16384xf32>) workgroup(%[[SM:.*]] : memref<8xf32, #gpu.address_space<workgroup>>, %[[SS:.*]] : memref<8xf32, #gpu.address_space<workgroup>>)
// CHECK:           %[[MS:.*]]:8 = scf.for
// CHECK:             vector.load %[[X]]
// CHECK:             math.absf
// CHECK:             math.exp
// CHECK:             arith.maximumf
// CHECK:             scf.yield
// CHECK-NOT:       scf.for
// CHECK:           gpu.shuffle xor
// CHECK:           gpu.shuffle xor
// CHECK:           memref.store %{{.*}}, %[[SM]]
// CHECK:           memref.store %{{.*}}, %[[SS]]
// CHECK:           gpu.barrier
// CHECK-NOT:       scf.for
// CHECK:           %[[INV:.*]] = arith.divf %{{.*}}, %{{.*}} : f32
// CHECK:           scf.for
// CHECK:             vector.load %[[X]]
// CHECK:             math.exp
// CHECK:             arith.mulf %{{.*}}, %[[INV]]
// CHECK:             vector.store %{{.*}}, %[[Y]]
// CHECK-NOT:       scf.for
// CHECK:           gpu.return
func.func @softmax_long(%x: tensor<8x16384xf32>) -> tensor<8x16384xf32> {
  %e = tensor.empty() : tensor<8x16384xf32>
  %r = linalg.softmax dimension(1) ins(%x : tensor<8x16384xf32>) outs(%e : tensor<8x16384xf32>) -> tensor<8x16384xf32>
  return %r : tensor<8x16384xf32>
}

// -----

// f16 rows of 16384 are 32 KiB: two passes (a loop for the max, one for the sum, one to write).

// CHECK-LABEL: func.func @softmax_f16_short
// CHECK:         gpu.func @softmax_f16_short_k0
// CHECK:           scf.for
// CHECK:             arith.maximumf
// CHECK:           scf.for
// CHECK:             math.exp
// CHECK:           scf.for
// CHECK:             math.exp
// CHECK:             vector.store
func.func @softmax_f16_short(%x: tensor<8x16384xf16>) -> tensor<8x16384xf16> {
  %e = tensor.empty() : tensor<8x16384xf16>
  %r = linalg.softmax dimension(1) ins(%x : tensor<8x16384xf16>) outs(%e : tensor<8x16384xf16>) -> tensor<8x16384xf16>
  return %r : tensor<8x16384xf16>
}

// -----

// The max and the sum of exp(x - max) of a log-softmax: one loop, then the output's.

// CHECK-LABEL: func.func @log_softmax
// CHECK:         gpu.func @log_softmax_k0
// CHECK:           scf.for
// CHECK:             math.absf
// CHECK:             math.exp
// CHECK:             arith.maximumf
// CHECK:           gpu.barrier
// CHECK-NOT:       scf.for
// CHECK:           scf.for
// CHECK:             math.log
// CHECK:             vector.store
// CHECK-NOT:       scf.for
// CHECK:           gpu.return
func.func @log_softmax(%x: tensor<8x16384xf32>) -> tensor<8x16384xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x16384xf32>) outs(%f : tensor<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %o : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%x, %m : tensor<8x16384xf32>, tensor<8xf32>) outs(%z : tensor<8xf32>) {
  ^bb0(%v: f32, %mx: f32, %o: f32):
    %d = arith.subf %v, %mx : f32
    %x2 = math.exp %d : f32
    %a = arith.addf %x2, %o : f32
    linalg.yield %a : f32
  } -> tensor<8xf32>
  %full = tensor.empty() : tensor<8x16384xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m, %s : tensor<8x16384xf32>, tensor<8xf32>, tensor<8xf32>) outs(%full : tensor<8x16384xf32>) {
  ^bb0(%v: f32, %mx: f32, %sm: f32, %o: f32):
    %d = arith.subf %v, %mx : f32
    %l = math.log %sm : f32
    %r = arith.subf %d, %l : f32
    linalg.yield %r : f32
  } -> tensor<8x16384xf32>
  return %y : tensor<8x16384xf32>
}
