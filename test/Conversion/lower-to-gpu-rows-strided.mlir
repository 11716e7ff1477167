// Row programs over a non-trailing dimension: a function of a reduction over a middle dimension
// and the elementwise ops that use its result over the full tensor (RMSNorm over the channels of
// NCHW) is a row program once its loops are interchanged so that the reductions trail: rows are
// the (n, h, w) points, each strided over c. With a thread per row, neighbouring threads read
// neighbouring w: one kernel, x read once (cache_row) and the output written once.
// RUN: evo-opt %s -split-input-file -evo-lower-to-gpu | FileCheck %s
// RUN: evo-opt %s -split-input-file -evo-lower-to-gpu="reduction-strategy=thread cache-row=1" | FileCheck %s --check-prefix=CACHE
// RUN: evo-opt %s -split-input-file -evo-lower-to-gpu="reduction-strategy=thread cache-row=1" | FileCheck %s --check-prefix=CACHE-ST

// CHECK-LABEL: func.func @rmsnorm_nchw
// CHECK-COUNT-1: gpu.launch_func @rmsnorm_nchw_kernels::@rmsnorm_nchw_k0 blocks in (%c32, %c1, %c1) threads in (%c256, %c1, %c1)
// CHECK-NOT:     gpu.launch_func
// CHECK:         gpu.func @rmsnorm_nchw_k0(%[[X:[^:]*]]: memref<4x8x32x64xf32>, %[[Y:[^:]*]]: memref<4x8x32x64xf32>)
// CHECK-SAME:      evo.family = #evo.family<rows>
// CHECK:           scf.for %[[C:.*]] = %c0 to %c8
// CHECK:             memref.load %[[X]][%[[N:.*]], %[[C]], %[[H:.*]], %[[W:.*]]] : memref<4x8x32x64xf32>
// CHECK:           scf.for %[[C2:.*]] = %c0 to %c8
// CHECK:             memref.load %[[X]][%{{.*}}, %[[C2]], %{{.*}}, %{{.*}}] : memref<4x8x32x64xf32>
// CHECK:             math.sqrt
// CHECK:             memref.store %{{.*}}, %[[Y]][%{{.*}}, %[[C2]], %{{.*}}, %{{.*}}] : memref<4x8x32x64xf32>

// CACHE-LABEL: func.func @rmsnorm_nchw
// CACHE:         gpu.func @rmsnorm_nchw_k0(%[[X:[^:]*]]: memref<4x8x32x64xf32>, %[[Y:[^:]*]]: memref<4x8x32x64xf32>)
// CACHE-COUNT-8:   memref.load %[[X]]
// CACHE:           math.sqrt
// The output pass reads x from the registers of the first (read through the interchanged map,
// each (value, map) is loaded once per chunk): no load after the statistics.
// CACHE-NOT:       memref.load
// CACHE:           gpu.return
// CACHE-ST-LABEL: func.func @rmsnorm_nchw
// CACHE-ST:         gpu.func @rmsnorm_nchw_k0(%[[X:[^:]*]]: memref<4x8x32x64xf32>, %[[Y:[^:]*]]: memref<4x8x32x64xf32>)
// CACHE-ST-COUNT-8:   memref.store %{{.*}}, %[[Y]]
// CACHE-ST-NOT:       memref.store
// CACHE-ST:           gpu.return
#x = affine_map<(n, c, h, w) -> (n, c, h, w)>
#s = affine_map<(n, c, h, w) -> (n, h, w)>
func.func @rmsnorm_nchw(%x: tensor<4x8x32x64xf32>) -> tensor<4x8x32x64xf32> {
  %zero = arith.constant 0.0 : f32
  %c = arith.constant 8.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %e = tensor.empty() : tensor<4x32x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x32x64xf32>) -> tensor<4x32x64xf32>
  %ss = linalg.generic {indexing_maps = [#x, #s], iterator_types = ["parallel", "reduction", "parallel", "parallel"]}
      ins(%x : tensor<4x8x32x64xf32>) outs(%f : tensor<4x32x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    %t = arith.addf %m, %o : f32
    linalg.yield %t : f32
  } -> tensor<4x32x64xf32>
  %e4 = tensor.empty() : tensor<4x8x32x64xf32>
  %y = linalg.generic {indexing_maps = [#x, #s, #x], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %ss : tensor<4x8x32x64xf32>, tensor<4x32x64xf32>) outs(%e4 : tensor<4x8x32x64xf32>) {
  ^bb0(%a: f32, %q: f32, %o: f32):
    %mean = arith.divf %q, %c : f32
    %me = arith.addf %mean, %eps : f32
    %r = math.sqrt %me : f32
    %v = arith.divf %a, %r : f32
    linalg.yield %v : f32
  } -> tensor<4x8x32x64xf32>
  return %y : tensor<4x8x32x64xf32>
}

// -----

// A few long strided rows (statistics per channel over n, h, w: 8 rows) stay with the per-op
// lowering (its split reductions fill the GPU): a reduction task, then the elementwise one.

// CHECK-LABEL: func.func @per_channel
// CHECK:         gpu.func @per_channel_k0({{.*}}) kernel attributes {evo.family = #evo.family<reduction>
// CHECK:         gpu.func @per_channel_k1({{.*}}) kernel attributes {evo.family = #evo.family<elementwise>
#x2 = affine_map<(n, c, h, w) -> (n, c, h, w)>
#ch = affine_map<(n, c, h, w) -> (c)>
func.func @per_channel(%x: tensor<4x8x16x16xf32>) -> tensor<4x8x16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %s = linalg.generic {indexing_maps = [#x2, #ch], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%x : tensor<4x8x16x16xf32>) outs(%f : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.addf %a, %o : f32
    linalg.yield %t : f32
  } -> tensor<8xf32>
  %e4 = tensor.empty() : tensor<4x8x16x16xf32>
  %y = linalg.generic {indexing_maps = [#x2, #ch, #x2], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %s : tensor<4x8x16x16xf32>, tensor<8xf32>) outs(%e4 : tensor<4x8x16x16xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %v = arith.subf %a, %m : f32
    linalg.yield %v : f32
  } -> tensor<4x8x16x16xf32>
  return %y : tensor<4x8x16x16xf32>
}

// -----

// A mean over dim 1 (a reduction and a row-wise division, nothing written over the full
// tensor) stays a reduction with its epilogue.

// CHECK-LABEL: func.func @mean_dim1
// CHECK:         gpu.func @mean_dim1_k0({{.*}}) kernel attributes {evo.family = #evo.family<reduction>
// CHECK-NOT:     gpu.func
#m3 = affine_map<(b, r, c) -> (b, r, c)>
#m2 = affine_map<(b, r, c) -> (b, c)>
#id = affine_map<(b, c) -> (b, c)>
func.func @mean_dim1(%x: tensor<16x64x512xf32>) -> tensor<16x512xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 64.0 : f32
  %e = tensor.empty() : tensor<16x512xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x512xf32>) -> tensor<16x512xf32>
  %s = linalg.generic {indexing_maps = [#m3, #m2], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x : tensor<16x64x512xf32>) outs(%f : tensor<16x512xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.addf %a, %o : f32
    linalg.yield %t : f32
  } -> tensor<16x512xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<16x512xf32>) outs(%e : tensor<16x512xf32>) {
  ^bb0(%a: f32, %o: f32):
    %d = arith.divf %a, %n : f32
    linalg.yield %d : f32
  } -> tensor<16x512xf32>
  return %r : tensor<16x512xf32>
}
