// The tiled SIMT matmul schedule (EmitMatmul.cpp) on the shapes KernelBench-style inputs have:
// contractions with several M (N, K) loop dimensions, shapes the tiles do not divide, and
// split-K. Refusals: lower-to-gpu-matmul-shapes-invalid.mlir.

// RUN: evo-opt %s -split-input-file -verify-diagnostics -evo-lower-to-gpu | FileCheck %s
// The PTX of every case is accepted by ptxas for sm_90a:
// RUN: %if ptxas %{ rm -rf %t && evo-opt %s -split-input-file -evo-pipeline="output-dir=%t chip=sm_90a" -o /dev/null && FileCheck %s --input-file=%t/matmul_3d.ptx --check-prefix=PTX3D && FileCheck %s --input-file=%t/splitk.ptx --check-prefix=PTXSPLIT %}

// torch.matmul of a 3-d tensor by a matrix: M = (d0, d1), one GEMM index over two loop
// dimensions (d0 is not a batch dimension: B does not have it). The grid is (N/BN, M/BM, 1),
// A and B are read with 128-bit loads (K and N are single, contiguous dimensions), C is written
// 4 columns at a time at [m / 32, m % 32, n]; the tiles divide the problem: no guards.

// CHECK-LABEL: func.func @matmul_3d
// CHECK:         gpu.launch_func @matmul_3d_kernels::@matmul_3d_k0 blocks in (%c2, %c4, %c1) threads in (%c64, %c1, %c1)
// CHECK:         gpu.func @matmul_3d_k0(%[[A:.*]]: memref<4x32x64xf32>, %[[B:.*]]: memref<64x64xf32>, %[[C:.*]]: memref<4x32x64xf32>)
// CHECK-SAME:      evo.knobs = #evo.knobs<vector_width = 4, tile_sizes = [32, 32, 16], thread_tile = [4, 4]>
// CHECK-NOT:       arith.minui
// CHECK:           scf.for
// CHECK:             %[[AM:.*]] = arith.divui %{{.*}}, %c32 : index
// CHECK:             vector.load %[[A]][%[[AM]], %{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<4x32x64xf32>, vector<4xf32>
// CHECK:             vector.load %[[B]][%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<64x64xf32>, vector<4xf32>
// CHECK-NOT:       scf.if
// CHECK:           vector.store %{{.*}}, %[[C]][%{{.*}}, %{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<4x32x64xf32>, vector<4xf32>
// PTX3D: .entry matmul_3d_k0
// PTX3D: ld.global.v4
// PTX3D: st.global.v4
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
#map2 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
func.func @matmul_3d(%a: tensor<4x32x64xf32>, %b: tensor<64x64xf32>) -> tensor<4x32x64xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x32x64xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<4x32x64xf32>) -> tensor<4x32x64xf32>
  %c = linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "parallel", "reduction"], evo.knobs = {tile_sizes = [32, 32, 16], thread_tile = [4, 4], vector_width = 4}} ins(%a, %b : tensor<4x32x64xf32>, tensor<64x64xf32>) outs(%f : tensor<4x32x64xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x32x64xf32>
  return %c : tensor<4x32x64xf32>
}

// -----

// einsum bijl,lk->bijk: M = (b, i, j) = 2*4*8 = 64 rows, N = 64, K = 32.

// CHECK-LABEL: func.func @einsum_4d
// CHECK:         gpu.launch_func @einsum_4d_kernels::@einsum_4d_k0 blocks in (%c1, %c2, %c1) threads in (%c128, %c1, %c1)
// CHECK:         gpu.func @einsum_4d_k0(%[[A:.*]]: memref<2x4x8x32xf32>, %{{.*}}: memref<32x64xf32>, %[[C:.*]]: memref<2x4x8x64xf32>)
// CHECK:           vector.load %[[A]][%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] {alignment = 16 : i64}
// CHECK:           vector.store %{{.*}}, %[[C]][%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] {alignment = 16 : i64}
#map = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
#map1 = affine_map<(d0, d1, d2, d3, d4) -> (d4, d3)>
#map2 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
func.func @einsum_4d(%a: tensor<2x4x8x32xf32>, %b: tensor<32x64xf32>) -> tensor<2x4x8x64xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x8x64xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<2x4x8x64xf32>) -> tensor<2x4x8x64xf32>
  %c = linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"], evo.knobs = {tile_sizes = [32, 64, 16], thread_tile = [4, 4], vector_width = 4}} ins(%a, %b : tensor<2x4x8x32xf32>, tensor<32x64xf32>) outs(%f : tensor<2x4x8x64xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x4x8x64xf32>
  return %c : tensor<2x4x8x64xf32>
}

// -----

// Two N dimensions and two K dimensions: A and B are read element by element (a run of 4 along
// a GEMM index split over several dimensions could leave its dimension: here N's fastest
// dimension is 6 long, K's 4), and C's fastest N dimension (6) holds no whole groups of 4:
// scalar stores. N = 2*6 = 12 and K = 3*4 = 12 are not multiples of the tiles: guards.

// CHECK-LABEL: func.func @multi_nk
// CHECK:         gpu.func @multi_nk_k0(%[[A:.*]]: memref<32x3x4xf32>, %[[B:.*]]: memref<3x4x2x6xf32>, %[[C:.*]]: memref<32x2x6xf32>)
// CHECK-NOT:       vector.load %[[A]]
// CHECK-NOT:       vector.load %[[B]]
// CHECK:           memref.load %[[A]][%{{.*}}, %{{.*}}, %{{.*}}] : memref<32x3x4xf32>
// CHECK:           memref.load %[[B]][%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : memref<3x4x2x6xf32>
// CHECK-NOT:       vector.store
// CHECK:           scf.if
// CHECK:             memref.store %{{.*}}, %[[C]][%{{.*}}, %{{.*}}, %{{.*}}] : memref<32x2x6xf32>
#map = affine_map<(m, n1, n2, k1, k2) -> (m, k1, k2)>
#map1 = affine_map<(m, n1, n2, k1, k2) -> (k1, k2, n1, n2)>
#map2 = affine_map<(m, n1, n2, k1, k2) -> (m, n1, n2)>
func.func @multi_nk(%a: tensor<32x3x4xf32>, %b: tensor<3x4x2x6xf32>) -> tensor<32x2x6xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x2x6xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<32x2x6xf32>) -> tensor<32x2x6xf32>
  %c = linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"], evo.knobs = {tile_sizes = [32, 16, 8], thread_tile = [4, 4], vector_width = 4}} ins(%a, %b : tensor<32x3x4xf32>, tensor<3x4x2x6xf32>) outs(%f : tensor<32x2x6xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<32x2x6xf32>
  return %c : tensor<32x2x6xf32>
}

// -----

// Tiles that do not divide the problem (M = 37, N = 45, K = 19 with 32x32x8 tiles): the grid
// rounds up, the loads of the last row and column tiles clamp their indices into the operands
// (arith.minui), K's two whole tiles are followed by a tail tile whose loads clamp K and whose
// compute loop runs over its 3 rows only, and each store is guarded by m < 37 and n < 45.

// CHECK-LABEL: func.func @irregular
// CHECK:         gpu.launch_func @irregular_kernels::@irregular_k0 blocks in (%c2, %c2, %c1) threads in (%c256, %c1, %c1)
// CHECK:         gpu.func @irregular_k0(%[[A:.*]]: memref<37x19xf32>, %[[B:.*]]: memref<19x45xf32>, %[[C:.*]]: memref<37x45xf32>)
// CHECK-DAG:       %[[C36:.*]] = arith.constant 36 : index
// CHECK-DAG:       %[[C44:.*]] = arith.constant 44 : index
// CHECK-DAG:       %[[C18:.*]] = arith.constant 18 : index
// CHECK-DAG:       %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG:       %[[C3:.*]] = arith.constant 3 : index
// CHECK:           scf.for %{{.*}} = %c0 to %[[C16]] step %c8
// CHECK:             %[[M:.*]] = arith.minui %{{.*}}, %[[C36]] : index
// CHECK:             memref.load %[[A]][%[[M]], %{{.*}}]
// CHECK:             %[[N:.*]] = arith.minui %{{.*}}, %[[C44]] : index
// CHECK:             memref.load %[[B]][%{{.*}}, %[[N]]]
// CHECK:           gpu.barrier
// CHECK:           %[[K:.*]] = arith.minui %{{.*}}, %[[C18]] : index
// CHECK:           memref.load %[[A]][%{{.*}}, %[[K]]]
// CHECK:           gpu.barrier
// CHECK:           scf.for %{{.*}} = %c0 to %[[C3]] step %c1
// CHECK:           arith.cmpi ult, %{{.*}}, %c37 : index
// CHECK:           arith.cmpi ult, %{{.*}}, %c45 : index
// CHECK:           scf.if
// CHECK-NEXT:        arith.addf
// CHECK-NEXT:        memref.store %{{.*}}, %[[C]]
func.func @irregular(%a: tensor<37x19xf32>, %b: tensor<19x45xf32>) -> tensor<37x45xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<37x45xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<37x45xf32>) -> tensor<37x45xf32>
  %c = linalg.matmul {evo.knobs = {tile_sizes = [32, 32, 8], thread_tile = [2, 2]}} ins(%a, %b : tensor<37x19xf32>, tensor<19x45xf32>) outs(%f : tensor<37x45xf32>) -> tensor<37x45xf32>
  return %c : tensor<37x45xf32>
}

// -----

// M = 100 with 64-row tiles, vector_width=4: K and N are multiples of 4, so the 128-bit loads and
// stores stay (a group of 4 columns is wholly inside N or wholly past it); the last row tile
// clamps its A rows, and the stores are guarded by m < 100 only (N = 64 divides).

// CHECK-LABEL: func.func @irregular_vec
// CHECK:         gpu.launch_func @irregular_vec_kernels::@irregular_vec_k0 blocks in (%c1, %c2, %c1)
// CHECK:         gpu.func @irregular_vec_k0(%[[A:.*]]: memref<100x64xf32>, %[[B:.*]]: memref<64x64xf32>, %[[C:.*]]: memref<100x64xf32>)
// CHECK:           arith.minui %{{.*}}, %c99 : index
// CHECK:           vector.load %[[A]]{{.*}} {alignment = 16 : i64}
// CHECK:           vector.load %[[B]]{{.*}} {alignment = 16 : i64}
// CHECK-NOT:       arith.cmpi ult, %{{.*}}, %c64
// CHECK:           arith.cmpi ult, %{{.*}}, %c100 : index
// CHECK-NEXT:      scf.if
// CHECK:             vector.store %{{.*}}, %[[C]]{{.*}} {alignment = 16 : i64}
func.func @irregular_vec(%a: tensor<100x64xf32>, %b: tensor<64x64xf32>) -> tensor<100x64xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<100x64xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<100x64xf32>) -> tensor<100x64xf32>
  %c = linalg.matmul {evo.knobs = {tile_sizes = [64, 64, 16], thread_tile = [4, 4], vector_width = 4, prefetch = 1}} ins(%a, %b : tensor<100x64xf32>, tensor<64x64xf32>) outs(%f : tensor<100x64xf32>) -> tensor<100x64xf32>
  return %c : tensor<100x64xf32>
}

// -----

// K = 30 is no multiple of 4: A's rows are not 16-byte aligned, so A is read element by element
// even with vector_width=4 (B, whose rows of 64 are, keeps its 128-bit loads); the tail tile of 14
// rows is unrolled like the whole ones.

// CHECK-LABEL: func.func @odd_k_vec
// CHECK:         gpu.func @odd_k_vec_k0(%[[A:.*]]: memref<64x30xf32>, %[[B:.*]]: memref<30x64xf32>, %{{.*}}: memref<64x64xf32>)
// CHECK-NOT:       vector.load %[[A]]
// CHECK:           vector.load %[[B]]
// CHECK-NOT:       vector.load %[[A]]
func.func @odd_k_vec(%a: tensor<64x30xf32>, %b: tensor<30x64xf32>) -> tensor<64x64xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %c = linalg.matmul {evo.knobs = {tile_sizes = [64, 64, 16], thread_tile = [4, 4], vector_width = 4}} ins(%a, %b : tensor<64x30xf32>, tensor<30x64xf32>) outs(%f : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %c : tensor<64x64xf32>
}

// -----

// Split-K (split = 4) of a batched matmul with a fused bias + relu epilogue, K = 100 = 6 whole
// tiles of 16 and a tail of 4: grid z = batch 2 x 4 slices; slice s = z / 2 takes whole tiles
// [s*6/4, (s+1)*6/4) and the last slice the tail too; each block writes its raw partial tile to
// the scratch buffer [4, 2*32*64]; the combine kernel (one thread per output) adds the 4 slices
// in order, then the initial value, then runs the epilogue and stores.

// CHECK-LABEL: func.func @splitk
// CHECK:         %[[P:.*]], %{{.*}} = gpu.alloc async [%{{.*}}] () : memref<4x4096xf32>
// CHECK:         gpu.launch_func @splitk_kernels::@splitk_k0 blocks in (%c2, %c1, %c8) threads in (%c64, %c1, %c1) args({{.*}}, %[[P]] : memref<4x4096xf32>)
// CHECK:         gpu.launch_func @splitk_kernels::@splitk_k0_combine blocks in (%c16, %c1, %c1) threads in (%c256, %c1, %c1) args({{.*}}, %[[P]] : memref<4x4096xf32>)
// CHECK:         gpu.func @splitk_k0({{.*}}, %[[OUT:.*]]: memref<2x32x64xf32>, %[[S:.*]]: memref<4x4096xf32>)
// CHECK-SAME:      evo.knobs = #evo.knobs<vector_width = 4, tile_sizes = [32, 32, 16], thread_tile = [4, 4], split = 4, prefetch = true>
// CHECK:           %[[Z:.*]] = gpu.block_id z
// CHECK:           %[[SLICE:.*]] = arith.divui %[[Z]], %c2 : index
// CHECK:           scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c16
// CHECK:           arith.cmpi eq, %[[SLICE]], %c3 : index
// CHECK-NEXT:      scf.if
// CHECK-COUNT-16:  memref.store %{{.*}}, %[[S]][%[[SLICE]], %{{.*}}] : memref<4x4096xf32>
// CHECK-NOT:       memref.store %{{.*}}, %[[OUT]]
// CHECK:         gpu.func @splitk_k0_combine({{.*}}, %[[BIAS:.*]]: memref<64xf32>, %[[OUT2:.*]]: memref<2x32x64xf32>, %[[S2:.*]]: memref<4x4096xf32>)
// CHECK:           scf.for %[[I:.*]] = %c0 to %c4 step %c1
// CHECK:             memref.load %[[S2]][%[[I]], %{{.*}}]
// CHECK:             arith.addf
// CHECK:           memref.load %[[BIAS]]
// CHECK:           arith.maximumf
// CHECK:           memref.store %{{.*}}, %[[OUT2]]
// PTXSPLIT: .entry splitk_k0(
// PTXSPLIT: .entry splitk_k0_combine(
func.func @splitk(%a: tensor<2x32x100xf32>, %b: tensor<2x100x64xf32>, %bias: tensor<64xf32>) -> tensor<2x32x64xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x32x64xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<2x32x64xf32>) -> tensor<2x32x64xf32>
  %c = linalg.batch_matmul {evo.knobs = {tile_sizes = [32, 32, 16], thread_tile = [4, 4], vector_width = 4, prefetch = 1, split = 4}} ins(%a, %b : tensor<2x32x100xf32>, tensor<2x100x64xf32>) outs(%f : tensor<2x32x64xf32>) -> tensor<2x32x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%c, %bias : tensor<2x32x64xf32>, tensor<64xf32>) outs(%e : tensor<2x32x64xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    %z = arith.maximumf %s, %cst : f32
    linalg.yield %z : f32
  } -> tensor<2x32x64xf32>
  return %r : tensor<2x32x64xf32>
}

// -----

// torch.tril(A @ B) as one masked generic (bench/kernelbench/matmul_tril.mlir): the mask reads
// only output indices, so the sum over K of select(j <= i, a*b, 0) is select(j <= i, sum, 0):
// the contraction is of the matmul family, its tiled kernel computes the plain products (no
// select in the K loop) and applies the mask to each output element before the store.

// CHECK-LABEL: func.func @tril
// CHECK:         gpu.func @tril_k0({{.*}}, %[[C:.*]]: memref<64x64xf32>)
// CHECK-SAME:      evo.family = #evo.family<matmul>
// CHECK:           scf.for
// CHECK-NOT:         arith.select
// CHECK:             arith.mulf
// CHECK:           scf.yield
// CHECK:           %[[LE:.*]] = arith.cmpi sle, %[[J:.*]], %[[I:.*]] : index
// CHECK-NEXT:      %[[V:.*]] = arith.select %[[LE]], %{{.*}}, %{{.*}} : f32
// CHECK:           memref.store %{{.*}}, %[[C]][%[[I]], %[[J]]]
#map = affine_map<(d0, d1, d2) -> (d0, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d2, d1)>
#map2 = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @tril(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %c = linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "reduction"], evo.knobs = {tile_sizes = [32, 32, 8], thread_tile = [2, 2]}} ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>) outs(%f : tensor<64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %le = arith.cmpi sle, %j, %i : index
    %m = arith.mulf %x, %y : f32
    %s = arith.select %le, %m, %cst : f32
    %r = arith.addf %o, %s : f32
    linalg.yield %r : f32
  } -> tensor<64x64xf32>
  return %c : tensor<64x64xf32>
}

// -----

// A mask that reads the reduction index (k <= i) does not commute with the sum: not of the
// matmul family (a plain reduction, whose schedules run the payload exactly; tiles do not apply).

// CHECK-LABEL: func.func @mask_on_k
// CHECK:         gpu.func @mask_on_k_k0(
// CHECK-SAME:      evo.family = #evo.family<reduction>

#map = affine_map<(d0, d1, d2) -> (d0, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d2, d1)>
#map2 = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @mask_on_k(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %c = linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "reduction"], evo.knobs = {tile_sizes = [32, 32, 8], thread_tile = [2, 2]}} ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>) outs(%f : tensor<64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %i = linalg.index 0 : index
    %k = linalg.index 2 : index
    %le = arith.cmpi sle, %k, %i : index
    %m = arith.mulf %x, %y : f32
    %s = arith.select %le, %m, %cst : f32
    %r = arith.addf %o, %s : f32
    linalg.yield %r : f32
  } -> tensor<64x64xf32>
  return %c : tensor<64x64xf32>
}

// -----

// x @ Wᵀ (nn.Linear's layout: B contiguous along K only). B is read as A is, in 128-bit runs
// of 4 K, and stored transposed into shared-memory rows padded by 4 (16 x (64 + 4) = 1088
// elements), so that a warp's column stores do not fall on one bank; without vector accesses
// the rows are padded by 1 (8 x (32 + 1) = 264). N = 136 and K = 200 are not multiples of the
// tiles (guarded columns, a K tail whose runs of 4 are clamped whole).

// CHECK-LABEL: func.func @linear_tb
// CHECK:         gpu.func @linear_tb_k0(%[[A:.*]]: memref<96x200xf32>, %[[B:.*]]: memref<136x200xf32>, %{{.*}}: memref<96x136xf32>) workgroup(%[[AS:.*]] : memref<1088xf32, #gpu.address_space<workgroup>>, %[[BS:.*]] : memref<1088xf32, #gpu.address_space<workgroup>>)
// CHECK:           vector.load %[[B]][%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<136x200xf32>, vector<4xf32>
// CHECK-COUNT-4:   memref.store %{{.*}}, %[[BS]][%{{.*}}] : memref<1088xf32, #gpu.address_space<workgroup>>
// CHECK:           scf.for
// CHECK:             vector.load %[[BS]][%{{.*}}] {alignment = 16 : i64} : memref<1088xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK-LABEL: func.func @linear_tb_scalar
// CHECK:         gpu.func @linear_tb_scalar_k0(%{{.*}}: memref<96x200xf32>, %[[B:.*]]: memref<136x200xf32>, %{{.*}}: memref<96x136xf32>) workgroup(%{{.*}} : memref<256xf32, #gpu.address_space<workgroup>>, %[[BS:.*]] : memref<264xf32, #gpu.address_space<workgroup>>)
// CHECK:           memref.load %[[B]]
// CHECK:           memref.store %{{.*}}, %[[BS]]

#map = affine_map<(m, n, k) -> (m, k)>
#map1 = affine_map<(m, n, k) -> (n, k)>
#map2 = affine_map<(m, n, k) -> (m, n)>
func.func @linear_tb(%a: tensor<96x200xf32>, %b: tensor<136x200xf32>) -> tensor<96x136xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<96x136xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<96x136xf32>) -> tensor<96x136xf32>
  %c = linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "reduction"], evo.knobs = {tile_sizes = [64, 64, 16], thread_tile = [4, 4], vector_width = 4, prefetch = 1}} ins(%a, %b : tensor<96x200xf32>, tensor<136x200xf32>) outs(%f : tensor<96x136xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<96x136xf32>
  return %c : tensor<96x136xf32>
}
func.func @linear_tb_scalar(%a: tensor<96x200xf32>, %b: tensor<136x200xf32>) -> tensor<96x136xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<96x136xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<96x136xf32>) -> tensor<96x136xf32>
  %c = linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "reduction"], evo.knobs = {tile_sizes = [32, 32, 8], thread_tile = [2, 2]}} ins(%a, %b : tensor<96x200xf32>, tensor<136x200xf32>) outs(%f : tensor<96x136xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<96x136xf32>
  return %c : tensor<96x136xf32>
}

// -----

// Aᵀ @ B (A contiguous along M): A is read in 128-bit runs of M and each run stored whole, one
// 128-bit store into a row of A's tile (no transposed element stores).

// CHECK-LABEL: func.func @transposed_a
// CHECK:         gpu.func @transposed_a_k0(%[[A:.*]]: memref<200x96xf32>, %{{.*}}: memref<200x136xf32>, %{{.*}}: memref<96x136xf32>) workgroup(%[[AS:.*]] : memref<1088xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<1024xf32, #gpu.address_space<workgroup>>)
// CHECK:           %[[VALS:.*]] = vector.load %[[A]][%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<200x96xf32>, vector<4xf32>
// CHECK:           vector.store %[[VALS]], %[[AS]][%{{.*}}] {alignment = 16 : i64} : memref<1088xf32, #gpu.address_space<workgroup>>, vector<4xf32>

#map = affine_map<(m, n, k) -> (k, m)>
#map1 = affine_map<(m, n, k) -> (k, n)>
#map2 = affine_map<(m, n, k) -> (m, n)>
func.func @transposed_a(%a: tensor<200x96xf32>, %b: tensor<200x136xf32>) -> tensor<96x136xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<96x136xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<96x136xf32>) -> tensor<96x136xf32>
  %c = linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "reduction"], evo.knobs = {tile_sizes = [64, 64, 16], thread_tile = [4, 4], vector_width = 4, prefetch = 1}} ins(%a, %b : tensor<200x96xf32>, tensor<200x136xf32>) outs(%f : tensor<96x136xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<96x136xf32>
  return %c : tensor<96x136xf32>
}
