// stream_loads: the inputs each output point (or group of points) reads for itself alone are
// vector.loads marked `nontemporal` (lib/Conversion/EmitReduction.cpp), which
// evo-streaming-loads makes ld.global.nc.L1::no_allocate in the PTX; what the points share stays
// a plain vector.load, cached in L1.

// RUN: evo-opt %s -split-input-file -verify-diagnostics -evo-lower-to-gpu | FileCheck %s
// RUN: rm -rf %t && mkdir -p %t
// RUN: evo-opt %s -split-input-file -evo-pipeline="output-dir=%t ptxas=none" -o /dev/null
// RUN: cat %t/gemv_f16.ptx | FileCheck %s --check-prefix=PTX

// A GEMV: the matrix streams (16 bytes per lane, two chunks in flight), x is shared by every
// row and stays cached.

// CHECK-LABEL: func.func @gemv_f16
// CHECK:       gpu.func @gemv_f16_k0
// CHECK-SAME:    evo.knobs = #evo.knobs<block_size = 256, vector_width = 8, reduction = warp, accumulators = 2, stream_loads = true>
// CHECK:         vector.load {{.*}} {alignment = 16 : i64, nontemporal = true} : memref<1024x4096xf16>, vector<8xf16>
// CHECK:         vector.load {{.*}} {alignment = 16 : i64} : memref<4096xf16>, vector<8xf16>
// CHECK:         vector.load {{.*}} {alignment = 16 : i64, nontemporal = true} : memref<1024x4096xf16>, vector<8xf16>
// CHECK:         vector.load {{.*}} {alignment = 16 : i64} : memref<4096xf16>, vector<8xf16>
// CHECK-NOT:     nontemporal
// CHECK:         gpu.return

// In the PTX, two streamed loads of the matrix, two cached loads of x per iteration.
// PTX-LABEL: .entry gemv_f16_k0(
// PTX-COUNT-2: ld.global.nc.L1::no_allocate.v4.b32
// PTX-NOT:     ld.global.nc.L1::no_allocate
// PTX:         ret;
func.func @gemv_f16(%a: tensor<1024x4096xf16>, %x: tensor<4096xf16>) -> tensor<1024xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<1024xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%e : tensor<1024xf16>) -> tensor<1024xf16>
  %y = linalg.matvec ins(%a, %x : tensor<1024x4096xf16>, tensor<4096xf16>) outs(%acc : tensor<1024xf16>)
         {evo.knobs = #evo.knobs<reduction = warp, vector_width = 8, accumulators = 2, stream_loads = true>} -> tensor<1024xf16>
  return %y : tensor<1024xf16>
}

// -----

// nn.Linear at batch 8 with the 8 batch rows grouped: W's chunks serve the whole group (read
// once), so W streams; x's rows are re-read for each of W's rows and stay cached. Without the
// group W would be read by 8 warps and is loaded normally.

// CHECK-LABEL: func.func @linear_b8
// CHECK:       gpu.func @linear_b8_k0
// CHECK-SAME:    group_outputs = 8, stream_loads = true
// CHECK-COUNT-1: vector.load {{.*}} nontemporal = true} : memref<64x64xf32>, vector<4xf32>
// CHECK-NOT:     nontemporal
// CHECK:         gpu.return
// CHECK-LABEL: func.func @linear_b8_ungrouped
// CHECK:       gpu.func @linear_b8_ungrouped_k0
// CHECK-NOT:     nontemporal
// CHECK:         gpu.return
func.func @linear_b8(%x: tensor<8x64xf32>, %w: tensor<64x64xf32>) -> tensor<8x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8x64xf32>) -> tensor<8x64xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
         ins(%x, %w : tensor<8x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<8x64xf32>)
         {evo.knobs = #evo.knobs<reduction = warp, vector_width = 4, group_outputs = 8, stream_loads = true>} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}
func.func @linear_b8_ungrouped(%x: tensor<8x64xf32>, %w: tensor<64x64xf32>) -> tensor<8x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8x64xf32>) -> tensor<8x64xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
         ins(%x, %w : tensor<8x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<8x64xf32>)
         {evo.knobs = #evo.knobs<reduction = warp, vector_width = 4, stream_loads = true>} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// Row sums: 8 bytes per lane (f32 x 2) stream as .v2, 4 bytes (f16 x 2) as one .b32; a
// vector width of 1 (scalar loads) loads normally.

// CHECK-LABEL: func.func @row_sums
// CHECK:       gpu.func @row_sums_k0
// CHECK:         vector.load {{.*}} nontemporal = true} : memref<64x512xf32>, vector<2xf32>
// CHECK:       gpu.func @row_sums_k1
// CHECK:         vector.load {{.*}} nontemporal = true} : memref<64x512xf16>, vector<2xf16>
// CHECK:       gpu.func @row_sums_k2
// CHECK-NOT:     nontemporal
// CHECK:         gpu.return

// RUN: cat %t/row_sums.ptx | FileCheck %s --check-prefix=ROWS
// ROWS-LABEL: .entry row_sums_k0(
// ROWS:         ld.global.nc.L1::no_allocate.v2.b32
// ROWS-LABEL: .entry row_sums_k1(
// ROWS:         ld.global.nc.L1::no_allocate.b32
// ROWS-LABEL: .entry row_sums_k2(
// ROWS-NOT:     no_allocate
// ROWS:         ret;
func.func @row_sums(%a: tensor<64x512xf32>, %h: tensor<64x512xf16>, %s: tensor<64x512xf32>)
    -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %r0 = linalg.reduce ins(%a : tensor<64x512xf32>) outs(%acc : tensor<64xf32>) dimensions = [1]
          {evo.knobs = #evo.knobs<reduction = warp, vector_width = 2, stream_loads = true>}
    (%in: f32, %o: f32) {
      %t = arith.addf %in, %o : f32
      linalg.yield %t : f32
    }
  %r1 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                        iterator_types = ["parallel", "reduction"]}
          ins(%h : tensor<64x512xf16>) outs(%acc : tensor<64xf32>)
          attrs = {evo.knobs = #evo.knobs<reduction = warp, vector_width = 2, stream_loads = true>} {
    ^bb0(%in: f16, %o: f32):
      %w = arith.extf %in : f16 to f32
      %t = arith.addf %w, %o : f32
      linalg.yield %t : f32
    } -> tensor<64xf32>
  %r2 = linalg.reduce ins(%s : tensor<64x512xf32>) outs(%acc : tensor<64xf32>) dimensions = [1]
          {evo.knobs = #evo.knobs<reduction = warp, stream_loads = true>}
    (%in: f32, %o: f32) {
      %t = arith.addf %in, %o : f32
      linalg.yield %t : f32
    }
  return %r0, %r1, %r2 : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
}

// -----

// Groups that do not span their dimension: x of a GEMV with groups of 4 rows is read again by
// every group, and x of nn.Linear with 8 x 4 groups by every group along W's rows: both stay
// cached. The matrices are still streamed (each group reads its rows of it once).

// CHECK-LABEL: func.func @gemv_groups
// CHECK:       gpu.func @gemv_groups_k0
// CHECK-COUNT-4: vector.load {{.*}} nontemporal = true} : memref<64x1024xf32>, vector<4xf32>
// CHECK-NOT:     nontemporal
// CHECK:         gpu.return
// CHECK-LABEL: func.func @linear_2d
// CHECK:       gpu.func @linear_2d_k0
// CHECK-COUNT-4: vector.load {{.*}} nontemporal = true} : memref<64x64xf32>, vector<4xf32>
// CHECK-NOT:     nontemporal
// CHECK:         gpu.return
func.func @gemv_groups(%a: tensor<64x1024xf32>, %x: tensor<1024xf32>) -> tensor<64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %y = linalg.matvec ins(%a, %x : tensor<64x1024xf32>, tensor<1024xf32>) outs(%acc : tensor<64xf32>)
         {evo.knobs = #evo.knobs<reduction = warp, vector_width = 4, group_outputs = 4, stream_loads = true>} -> tensor<64xf32>
  return %y : tensor<64xf32>
}
func.func @linear_2d(%x: tensor<8x64xf32>, %w: tensor<64x64xf32>) -> tensor<8x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8x64xf32>) -> tensor<8x64xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
         ins(%x, %w : tensor<8x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<8x64xf32>)
         {evo.knobs = #evo.knobs<reduction = warp, vector_width = 4, group_outputs = 8, group_outputs2 = 4, stream_loads = true>} -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}
