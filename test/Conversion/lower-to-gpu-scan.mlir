// Scans have no op upstream: a cumulative sum is written as a masked triangular reduction,
// out[i, j] = sum over k of select(k <= j, x[i, k], 0). The lowering recognizes the form
// (evo/Conversion/ScanForm.h) and gives it the scan family: a thread, a warp or a block per
// scanned line, O(C) work per line instead of the reduction's O(C^2). Forms that are not scans
// stay reductions. Running them: test/Evaluation/verify-scan.mlir (GPU); PTX through ptxas:
// test/Target/emit-ptx-scan.mlir; wrong knobs: lower-to-gpu-scan-invalid.mlir.

// RUN: evo-opt %s -split-input-file -evo-lower-to-gpu | FileCheck %s

// The naive schedule: one thread per row walking it serially, the carry in a loop-carried value.

// CHECK-LABEL: func.func @cumsum
// CHECK:       #evo.task<name = "cumsum_t0", family = scan
// CHECK-SAME:    knobs = <block_size = 256, elements_per_thread = 1, vector_width = 1, reduction = thread>
// CHECK:         gpu.func @cumsum_k0
// CHECK-SAME:      evo.family = #evo.family<scan>
// CHECK:           scf.for %{{.*}} = %c0 to %c1024 step %c1 iter_args(%[[CARRY:.*]] = %cst) -> (f32)
// CHECK:             %[[X:.*]] = memref.load %arg0
// CHECK:             %[[S:.*]] = arith.addf %[[CARRY]], %[[X]] : f32
// CHECK:             memref.store %[[S]], %arg1
// CHECK:             scf.yield %[[S]] : f32
// CHECK-NOT:       gpu.shuffle
func.func @cumsum(%x: tensor<64x1024xf32>) -> tensor<64x1024xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x1024xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<64x1024xf32>) -> tensor<64x1024xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<64x1024xf32>) outs(%acc : tensor<64x1024xf32>) {
    ^bb0(%in: f32, %o: f32):
      %j = linalg.index 1 : index
      %k = linalg.index 2 : index
      %keep = arith.cmpi ule, %k, %j : index
      %v = arith.select %keep, %in, %zero : f32
      %s = arith.addf %o, %v : f32
      linalg.yield %s : f32
  } -> tensor<64x1024xf32>
  return %r : tensor<64x1024xf32>
}

// -----

// Exclusive (k < j), a warp per row, 128-bit loads and stores: the lanes' totals scanned with
// shuffles up, each lane's prefix one lane up, the tile's total from lane 31.

// CHECK-LABEL: func.func @cumsum_exclusive_warp
// CHECK:         gpu.func @cumsum_exclusive_warp_k0
// CHECK-SAME:      evo.knobs = #evo.knobs<block_size = 256, elements_per_thread = 1, vector_width = 4, reduction = warp>
// CHECK:           vector.load %arg0{{.*}} : memref<64x1024xf32>, vector<4xf32>
// CHECK-COUNT-5:   gpu.shuffle  up
// CHECK:           gpu.shuffle  up %{{.*}}, %c1_i32, %c32_i32 : f32
// CHECK:           gpu.shuffle  idx %{{.*}}, %c31_i32, %c32_i32 : f32
// CHECK:           vector.store {{.*}} : memref<64x1024xf32>, vector<4xf32>
// CHECK-NOT:       gpu.barrier
func.func @cumsum_exclusive_warp(%x: tensor<64x1024xf32>) -> tensor<64x1024xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x1024xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<64x1024xf32>) -> tensor<64x1024xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<64x1024xf32>) outs(%acc : tensor<64x1024xf32>) attrs = {evo.knobs = {reduction = "warp", vector_width = 4}} {
    ^bb0(%in: f32, %o: f32):
      %j = linalg.index 1 : index
      %k = linalg.index 2 : index
      %keep = arith.cmpi ult, %k, %j : index
      %v = arith.select %keep, %in, %zero : f32
      %s = arith.addf %o, %v : f32
      linalg.yield %s : f32
  } -> tensor<64x1024xf32>
  return %r : tensor<64x1024xf32>
}

// -----

// Reverse cumprod (the select keeps k >= j by dropping k < j), a block per row: the warps'
// totals meet in shared memory (two slots per warp, one barrier per tile); the chunks are
// read from the end of the row (4095 - 4 * ...).

// CHECK-LABEL: func.func @cumprod_reverse_block
// CHECK:       #evo.task<name = "cumprod_reverse_block_t0", family = scan
// CHECK:       #evo.launch<kernel = "cumprod_reverse_block_k0", task = 0, grid = [8, 1, 1], block = [512, 1, 1]
// CHECK:         gpu.func @cumprod_reverse_block_k0({{.*}}) workgroup(%{{.*}} : memref<32xf32, #gpu.address_space<workgroup>>)
// CHECK-SAME:      evo.knobs = #evo.knobs<block_size = 512, elements_per_thread = 2, vector_width = 4, reduction = block>
// CHECK:           arith.subi %c1023
// CHECK:           vector.load
// CHECK:           arith.mulf
// CHECK:           gpu.shuffle  up
// CHECK:           gpu.barrier
// CHECK-NOT:       gpu.barrier
// CHECK:           gpu.shuffle  idx
// CHECK:           vector.store
func.func @cumprod_reverse_block(%x: tensor<8x4096xf32>) -> tensor<8x4096xf32> {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<8x4096xf32>
  %acc = linalg.fill ins(%one : f32) outs(%e : tensor<8x4096xf32>) -> tensor<8x4096xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<8x4096xf32>) outs(%acc : tensor<8x4096xf32>) attrs = {evo.knobs = {reduction = "block", block_size = 512, vector_width = 4, elements_per_thread = 2}} {
    ^bb0(%in: f32, %o: f32):
      %j = linalg.index 1 : index
      %k = linalg.index 2 : index
      %drop = arith.cmpi ult, %k, %j : index
      %v = arith.select %drop, %one, %in : f32
      %s = arith.mulf %o, %v : f32
      linalg.yield %s : f32
  } -> tensor<8x4096xf32>
  return %r : tensor<8x4096xf32>
}

// -----

// Reverse exclusive cummax (k > j, signed predicate) along dim 0: a thread per column, the
// columns of a warp adjacent (coalesced); the store comes before the element joins the carry.

// CHECK-LABEL: func.func @cummax_dim0
// CHECK:         gpu.func @cummax_dim0_k0
// CHECK-SAME:      evo.family = #evo.family<scan>
// CHECK:           scf.for %{{.*}} = %c0 to %c1024 step %c1 iter_args(%[[CARRY:.*]] = %cst) -> (f32)
// CHECK:             %[[ROW:.*]] = arith.subi %c1023
// CHECK:             %[[X:.*]] = memref.load %arg0[%[[ROW]], %[[COL:.*]]] : memref<1024x64xf32>
// CHECK:             memref.store %[[CARRY]], %arg1[%[[ROW]], %[[COL]]]
// CHECK:             arith.maximumf %[[CARRY]], %[[X]] : f32
func.func @cummax_dim0(%x: tensor<1024x64xf32>) -> tensor<1024x64xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<1024x64xf32>
  %acc = linalg.fill ins(%ninf : f32) outs(%e : tensor<1024x64xf32>) -> tensor<1024x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(j, n, k) -> (k, n)>, affine_map<(j, n, k) -> (j, n)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<1024x64xf32>) outs(%acc : tensor<1024x64xf32>) {
    ^bb0(%in: f32, %o: f32):
      %j = linalg.index 0 : index
      %k = linalg.index 2 : index
      %keep = arith.cmpi sgt, %k, %j : index
      %v = arith.select %keep, %in, %ninf : f32
      %s = arith.maximumf %o, %v : f32
      linalg.yield %s : f32
  } -> tensor<1024x64xf32>
  return %r : tensor<1024x64xf32>
}

// -----

// The 0/1 mask form, the comparison written j >= k and the indices cast to i64: a cumsum.

// CHECK-LABEL: func.func @cumsum_mask
// CHECK:       #evo.task<name = "cumsum_mask_t0", family = scan
// CHECK:         gpu.func @cumsum_mask_k0
// CHECK-NOT:       arith.uitofp
// CHECK:           gpu.return
func.func @cumsum_mask(%x: tensor<32x256xf32>) -> tensor<32x256xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x256xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<32x256xf32>) -> tensor<32x256xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<32x256xf32>) outs(%acc : tensor<32x256xf32>) {
    ^bb0(%in: f32, %o: f32):
      %j = linalg.index 1 : index
      %k = linalg.index 2 : index
      %j64 = arith.index_cast %j : index to i64
      %k64 = arith.index_cast %k : index to i64
      %keep = arith.cmpi sge, %j64, %k64 : i64
      %m = arith.uitofp %keep : i1 to f32
      %v = arith.mulf %m, %in : f32
      %s = arith.addf %v, %o : f32
      linalg.yield %s : f32
  } -> tensor<32x256xf32>
  return %r : tensor<32x256xf32>
}

// -----

// f16: accumulated in f32, rounded once at the store. A fused producer (the scan of exp(x)) is
// part of the element; with a warp per row, 8 elements per load (16 bytes) and the shuffles in
// f32. (An op with its own knobs is not fused with its producer.)

// CHECK-LABEL: func.func @cumsum_exp_f16
// CHECK:         gpu.func @cumsum_exp_f16_k0
// CHECK-SAME:      evo.family = #evo.family<scan>
// CHECK:           math.exp {{.*}} : f16
// CHECK:           arith.extf {{.*}} : f16 to f32
// CHECK:           arith.addf {{.*}} : f32
// CHECK:           arith.truncf {{.*}} : f32 to f16
// CHECK-LABEL: func.func @cumsum_f16_warp
// CHECK:         gpu.func @cumsum_f16_warp_k0
// CHECK:           vector.load {{.*}} : memref<32x256xf16>, vector<8xf16>
// CHECK:           arith.extf {{.*}} : f16 to f32
// CHECK:           gpu.shuffle  up {{.*}} : f32
// CHECK:           arith.truncf {{.*}} : f32 to f16
// CHECK:           vector.store {{.*}} : memref<32x256xf16>, vector<8xf16>
func.func @cumsum_exp_f16(%x: tensor<32x256xf16>) -> tensor<32x256xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<32x256xf16>
  %ex = linalg.exp ins(%x : tensor<32x256xf16>) outs(%e : tensor<32x256xf16>) -> tensor<32x256xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%e : tensor<32x256xf16>) -> tensor<32x256xf16>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%ex : tensor<32x256xf16>) outs(%acc : tensor<32x256xf16>) {
    ^bb0(%in: f16, %o: f16):
      %j = linalg.index 1 : index
      %k = linalg.index 2 : index
      %keep = arith.cmpi sle, %k, %j : index
      %v = arith.select %keep, %in, %zero : f16
      %s = arith.addf %o, %v : f16
      linalg.yield %s : f16
  } -> tensor<32x256xf16>
  return %r : tensor<32x256xf16>
}
func.func @cumsum_f16_warp(%x: tensor<32x256xf16>) -> tensor<32x256xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<32x256xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%e : tensor<32x256xf16>) -> tensor<32x256xf16>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<32x256xf16>) outs(%acc : tensor<32x256xf16>) attrs = {evo.knobs = {reduction = "warp", vector_width = 8}} {
    ^bb0(%in: f16, %o: f16):
      %j = linalg.index 1 : index
      %k = linalg.index 2 : index
      %keep = arith.cmpi sle, %k, %j : index
      %v = arith.select %keep, %in, %zero : f16
      %s = arith.addf %o, %v : f16
      linalg.yield %s : f16
  } -> tensor<32x256xf16>
  return %r : tensor<32x256xf16>
}

// -----

// Integers, a block of 64 threads per row; an init that is an argument is combined with each
// element (out = init + prefix), a fill of another constant starts the carry.

// CHECK-LABEL: func.func @cumsum_i32_block
// CHECK:         gpu.func @cumsum_i32_block_k0({{.*}}) workgroup(%{{.*}} : memref<4xi32, #gpu.address_space<workgroup>>)
// CHECK:           scf.for %{{.*}} iter_args(%{{.*}} = %c5_i32) -> (i32)
// CHECK:           gpu.shuffle  up {{.*}} : i32
// CHECK:           gpu.barrier
// CHECK-LABEL: func.func @cummin_init_arg
// CHECK:         gpu.func @cummin_init_arg_k0
// CHECK:             %[[P:.*]] = arith.minimumf
// CHECK:             %[[I:.*]] = memref.load %arg1
// CHECK:             arith.minimumf %[[I]], %[[P]] : f64
func.func @cumsum_i32_block(%x: tensor<32x256xi32>) -> tensor<32x256xi32> {
  %zero = arith.constant 0 : i32
  %five = arith.constant 5 : i32
  %e = tensor.empty() : tensor<32x256xi32>
  %acc = linalg.fill ins(%five : i32) outs(%e : tensor<32x256xi32>) -> tensor<32x256xi32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<32x256xi32>) outs(%acc : tensor<32x256xi32>) attrs = {evo.knobs = {reduction = "block", block_size = 64}} {
    ^bb0(%in: i32, %o: i32):
      %j = linalg.index 1 : index
      %k = linalg.index 2 : index
      %keep = arith.cmpi ule, %k, %j : index
      %v = arith.select %keep, %in, %zero : i32
      %s = arith.addi %o, %v : i32
      linalg.yield %s : i32
  } -> tensor<32x256xi32>
  return %r : tensor<32x256xi32>
}
func.func @cummin_init_arg(%x: tensor<32x256xf64>, %init: tensor<32x256xf64>) -> tensor<32x256xf64> {
  %inf = arith.constant 0x7FF0000000000000 : f64
  %r = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<32x256xf64>) outs(%init : tensor<32x256xf64>) {
    ^bb0(%in: f64, %o: f64):
      %j = linalg.index 1 : index
      %k = linalg.index 2 : index
      %keep = arith.cmpi ule, %k, %j : index
      %v = arith.select %keep, %in, %inf : f64
      %s = arith.minimumf %o, %v : f64
      linalg.yield %s : f64
  } -> tensor<32x256xf64>
  return %r : tensor<32x256xf64>
}

// -----

// A line of more than 65536 elements: the naive schedule is a block per line (as for long
// reductions), never one thread's serial f32 carry over 2^17 elements.

// CHECK-LABEL: func.func @cumsum_long
// CHECK:       knobs = <block_size = 256, elements_per_thread = 1, vector_width = 1, reduction = block>
// CHECK:       #evo.launch<kernel = "cumsum_long_k0", task = 0, grid = [2, 1, 1], block = [256, 1, 1]
func.func @cumsum_long(%x: tensor<2x131072xf32>) -> tensor<2x131072xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x131072xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x131072xf32>) -> tensor<2x131072xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<2x131072xf32>) outs(%acc : tensor<2x131072xf32>) {
    ^bb0(%in: f32, %o: f32):
      %j = linalg.index 1 : index
      %k = linalg.index 2 : index
      %keep = arith.cmpi ule, %k, %j : index
      %v = arith.select %keep, %in, %zero : f32
      %s = arith.addf %o, %v : f32
      linalg.yield %s : f32
  } -> tensor<2x131072xf32>
  return %r : tensor<2x131072xf32>
}

// -----

// Not scans, each left to the reduction lowering (correct, O(C^2)): a mask of k == j (the
// diagonal), a select whose other value is not the addition's identity, an input that moves
// with j, a 0/1 mask under a max (max(x * 0, ...) is not max over the kept elements), and a
// mask against a loop of another extent.

// (Four of them read rows of the same [8, 64, 64] space and are one rows task: a row group,
// docs/lowering.md "Row programs"; the fifth, against the other extent, is a reduction.)
// CHECK-LABEL: func.func @not_scans
// CHECK:         tasks = [#evo.task<name = "not_scans_t0", family = rows, {{.*}}>, #evo.task<name = "not_scans_t1", family = reduction,
// CHECK-NOT:     family = scan
func.func @not_scans(%x: tensor<8x64xf32>, %y: tensor<8x64x64xf32>, %w: tensor<8x32xf32>)
    -> (tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<8x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8x64xf32>) -> tensor<8x64xf32>
  %diag = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<8x64xf32>) outs(%acc : tensor<8x64xf32>) {
    ^bb0(%in: f32, %o: f32):
      %j = linalg.index 1 : index
      %k = linalg.index 2 : index
      %keep = arith.cmpi eq, %k, %j : index
      %v = arith.select %keep, %in, %zero : f32
      %s = arith.addf %o, %v : f32
      linalg.yield %s : f32
  } -> tensor<8x64xf32>
  %notid = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<8x64xf32>) outs(%acc : tensor<8x64xf32>) {
    ^bb0(%in: f32, %o: f32):
      %j = linalg.index 1 : index
      %k = linalg.index 2 : index
      %keep = arith.cmpi ule, %k, %j : index
      %v = arith.select %keep, %in, %one : f32
      %s = arith.addf %o, %v : f32
      linalg.yield %s : f32
  } -> tensor<8x64xf32>
  %movesj = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, j, k)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%y : tensor<8x64x64xf32>) outs(%acc : tensor<8x64xf32>) {
    ^bb0(%in: f32, %o: f32):
      %j = linalg.index 1 : index
      %k = linalg.index 2 : index
      %keep = arith.cmpi ule, %k, %j : index
      %v = arith.select %keep, %in, %zero : f32
      %s = arith.addf %o, %v : f32
      linalg.yield %s : f32
  } -> tensor<8x64xf32>
  %maxmask = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<8x64xf32>) outs(%acc : tensor<8x64xf32>) {
    ^bb0(%in: f32, %o: f32):
      %j = linalg.index 1 : index
      %k = linalg.index 2 : index
      %keep = arith.cmpi ule, %k, %j : index
      %m = arith.uitofp %keep : i1 to f32
      %v = arith.mulf %in, %m : f32
      %s = arith.maximumf %o, %v : f32
      linalg.yield %s : f32
  } -> tensor<8x64xf32>
  %other = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%w : tensor<8x32xf32>) outs(%acc : tensor<8x64xf32>) {
    ^bb0(%in: f32, %o: f32):
      %j = linalg.index 1 : index
      %k = linalg.index 2 : index
      %keep = arith.cmpi ule, %k, %j : index
      %v = arith.select %keep, %in, %zero : f32
      %s = arith.addf %o, %v : f32
      linalg.yield %s : f32
  } -> tensor<8x64xf32>
  return %diag, %notid, %movesj, %maxmask, %other : tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>
}
