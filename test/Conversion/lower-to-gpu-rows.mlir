// Row programs: whole functions of row-wise reductions and elementwise ops (softmax, norms) are
// lowered to one kernel that walks each row.
// RUN: evo-opt %s -split-input-file -evo-lower-to-gpu | FileCheck %s
// RUN: not evo-opt %s -split-input-file -evo-lower-to-gpu="reduction-strategy=warp vector-width=4 cache-row=1 block-size=128" 2>%t.err | FileCheck %s --check-prefix=CACHE
// RUN: FileCheck %s --input-file=%t.err --check-prefix=CACHE-ERR

// LayerNorm returning the normalized rows and the means: one kernel, one launch; without
// cache_row each of the three passes (sum, centered squares, output) re-reads the row, and the
// weight and bias are read as column vectors.

// CHECK-LABEL: func.func @layernorm
// CHECK-COUNT-1: gpu.launch_func @layernorm_kernels::@layernorm_k0 blocks in (%c4, %c1, %c1) threads in (%c256, %c1, %c1)
// CHECK-NOT:     gpu.launch_func
// CHECK:         gpu.module @layernorm_kernels
// CHECK-SAME:      tasks = [#evo.task<name = "layernorm_t0", family = rows,
// CHECK-SAME:      buffers = [0, 1, 2, 3, 4]>]
// CHECK:         gpu.func @layernorm_k0(%[[X:.*]]: memref<999x256xf32>, %[[W:.*]]: memref<256xf32>, %[[B:.*]]: memref<256xf32>, %[[Y:.*]]: memref<999x256xf32>, %[[MEAN:.*]]: memref<999xf32>)
// CHECK-SAME:      evo.family = #evo.family<rows>, evo.knobs = #evo.knobs<block_size = 256, vector_width = 1, reduction = thread, cache_row = false>
// CHECK:           %[[ROW:.*]] = arith.addi
// CHECK:           scf.if
// CHECK:             %[[SUM:.*]] = scf.for
// CHECK:               memref.load %[[X]][%[[ROW]], %{{.*}}]
// CHECK:             %[[M:.*]] = arith.mulf
// CHECK:             scf.for
// CHECK:               memref.load %[[X]][%[[ROW]], %{{.*}}]
// CHECK:               arith.subf %{{.*}}, %[[M]]
// CHECK:             scf.for %[[J:.*]] = 
// CHECK-DAG:           memref.load %[[X]][%[[ROW]], %[[J]]]
// CHECK-DAG:           memref.load %[[W]][%[[J]]]
// CHECK-DAG:           memref.load %[[B]][%[[J]]]
// CHECK:               math.rsqrt
// CHECK:               memref.store %{{.*}}, %[[Y]][%[[ROW]], %[[J]]]
// CHECK:             memref.store %[[M]], %[[MEAN]][%[[ROW]]]

// With cache_row each lane of a warp loads its 2 chunks of 4 once, keeps them in registers for
// the three passes, and lane 0 writes the mean.

// CACHE-LABEL: func.func @layernorm
// CACHE:         gpu.func @layernorm_k0(%[[X:.*]]: memref<999x256xf32>, %{{.*}}: memref<256xf32>, %{{.*}}: memref<256xf32>, %[[Y:.*]]: memref<999x256xf32>, %[[MEAN:.*]]: memref<999xf32>)
// CACHE-SAME:      evo.knobs = #evo.knobs<block_size = 128, vector_width = 4, reduction = warp, cache_row = true>
// CACHE-NOT:       scf.for
// CACHE-COUNT-2:   vector.load %[[X]]
// CACHE-NOT:       memref.load %[[X]]
// CACHE-NOT:       vector.load %[[X]]
// CACHE-COUNT-5:   gpu.shuffle xor
// CACHE-COUNT-5:   gpu.shuffle xor
// CACHE-COUNT-2:   vector.store %{{.*}}, %[[Y]]
// CACHE:           scf.if
// CACHE-NEXT:        memref.store %{{.*}}, %[[MEAN]]
func.func @layernorm(%x: tensor<999x256xf32>, %w: tensor<256xf32>, %b: tensor<256xf32>) -> (tensor<999x256xf32>, tensor<999xf32>) {
  %zero = arith.constant 0.0 : f32
  %inv_n = arith.constant 3.90625e-03 : f32
  %eps = arith.constant 1.0e-05 : f32
  %er = tensor.empty() : tensor<999xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%er : tensor<999xf32>) -> tensor<999xf32>
  %sum = linalg.reduce ins(%x : tensor<999x256xf32>) outs(%acc : tensor<999xf32>) dimensions = [1]
    (%in: f32, %a: f32) {
      %s = arith.addf %in, %a : f32
      linalg.yield %s : f32
    }
  %mean = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%sum : tensor<999xf32>) outs(%er : tensor<999xf32>) {
  ^bb0(%s: f32, %o: f32):
    %m = arith.mulf %s, %inv_n : f32
    linalg.yield %m : f32
  } -> tensor<999xf32>
  %e = tensor.empty() : tensor<999x256xf32>
  %centered = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>],
                              iterator_types = ["parallel", "parallel"]}
      ins(%x, %mean : tensor<999x256xf32>, tensor<999xf32>) outs(%e : tensor<999x256xf32>) {
  ^bb0(%v: f32, %m: f32, %o: f32):
    %c = arith.subf %v, %m : f32
    linalg.yield %c : f32
  } -> tensor<999x256xf32>
  %sq = linalg.reduce ins(%centered : tensor<999x256xf32>) outs(%acc : tensor<999xf32>) dimensions = [1]
    (%in: f32, %a: f32) {
      %p = arith.mulf %in, %in : f32
      %s = arith.addf %p, %a : f32
      linalg.yield %s : f32
    }
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%centered, %sq, %w, %b : tensor<999x256xf32>, tensor<999xf32>, tensor<256xf32>, tensor<256xf32>) outs(%e : tensor<999x256xf32>) {
  ^bb0(%c: f32, %q: f32, %wv: f32, %bv: f32, %o: f32):
    %var = arith.mulf %q, %inv_n : f32
    %ve = arith.addf %var, %eps : f32
    %r = math.rsqrt %ve : f32
    %n = arith.mulf %c, %r : f32
    %sc = arith.mulf %n, %wv : f32
    %out = arith.addf %sc, %bv : f32
    linalg.yield %out : f32
  } -> tensor<999x256xf32>
  return %y, %mean : tensor<999x256xf32>, tensor<999xf32>
}

// -----

// An op with its own knobs keeps its own kernel, as with elementwise fusion: no row program.

// CHECK-LABEL: func.func @pinned
// CHECK:         gpu.launch_func @pinned_kernels::@pinned_k0
// CHECK:         gpu.launch_func @pinned_kernels::@pinned_k1
// CHECK:         gpu.func @pinned_k0
// CHECK-SAME:      evo.family = #evo.family<reduction>, evo.knobs = #evo.knobs<block_size = 64, {{.*}}accumulators = 1,
// CHECK:         gpu.func @pinned_k1
// CHECK-SAME:      evo.family = #evo.family<elementwise>
// CACHE-LABEL: func.func @pinned
// CACHE:         gpu.func @pinned_k0
// CACHE-SAME:      evo.family = #evo.family<reduction>
func.func @pinned(%x: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %zero = arith.constant 0.0 : f32
  %er = tensor.empty() : tensor<64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%er : tensor<64xf32>) -> tensor<64xf32>
  %sum = linalg.reduce ins(%x : tensor<64x128xf32>) outs(%acc : tensor<64xf32>) dimensions = [1] {evo.knobs = {block_size = 64}}
    (%in: f32, %a: f32) {
      %s = arith.addf %in, %a : f32
      linalg.yield %s : f32
    }
  %e = tensor.empty() : tensor<64x128xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x, %sum : tensor<64x128xf32>, tensor<64xf32>) outs(%e : tensor<64x128xf32>) {
  ^bb0(%v: f32, %s: f32, %o: f32):
    %d = arith.divf %v, %s : f32
    linalg.yield %d : f32
  } -> tensor<64x128xf32>
  return %y : tensor<64x128xf32>
}

// -----

// Scaled softmax (an elementwise producer and linalg.softmax): one kernel; the scaled values are
// recomputed from the input in each pass. With cache_row the row of 100 is not a multiple of
// 4 x 32 and the lowering says so.

// CHECK-LABEL: func.func @scaled_softmax
// CHECK-COUNT-1: gpu.launch_func
// CHECK-NOT:     gpu.launch_func
// CHECK:         gpu.func @scaled_softmax_k0(%[[X:[^:]*]]: memref<64x100xf32>
// CHECK-SAME:      evo.family = #evo.family<rows>
// CHECK:           scf.for
// CHECK:             %[[V:.*]] = memref.load %[[X]]
// CHECK:             %[[S:.*]] = arith.mulf %[[V]], %{{.*}} : f32
// CHECK:             arith.maximumf %{{.*}}, %[[S]]
// CHECK:           scf.for
// CHECK:             math.exp
// CHECK:           scf.for
// CHECK:             math.exp
// CHECK:             memref.store
// CACHE-ERR: error: cache_row needs the row (100) to be a multiple of vector_width x threads per row (4 x 32)
func.func @scaled_softmax(%x: tensor<64x100xf32>) -> tensor<64x100xf32> {
  %scale = arith.constant 0.125 : f32
  %e = tensor.empty() : tensor<64x100xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<64x100xf32>) outs(%e : tensor<64x100xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.mulf %v, %scale : f32
    linalg.yield %m : f32
  } -> tensor<64x100xf32>
  %r = linalg.softmax dimension(1) ins(%s : tensor<64x100xf32>) outs(%e : tensor<64x100xf32>) -> tensor<64x100xf32>
  return %r : tensor<64x100xf32>
}
