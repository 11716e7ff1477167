// evo-verify on the scan family (lib/Conversion/EmitScan.cpp): cumsum, cumprod, cummax and
// cummin written as masked triangular reductions (the only way to write a scan in linalg), in
// every direction (inclusive, exclusive, reverse, reverse exclusive), along the last dimension
// and along dim 0, with each schedule (a thread, a warp or a block per line; vector widths,
// several chunks per thread, tail tiles), f32/f16/bf16/f64/i32/i64, the 0/1 mask form and an
// init from an argument, and rows of 2^18. Each is proven equal to the float64 oracle (which
// interprets the triangular form as written) on 5 seeds, every element compared with the naive
// baseline (a thread per line), and timed. Knobs that do not fit are diagnostics instead
// (test/Conversion/lower-to-gpu-scan-invalid.mlir).
//
// REQUIRES: cuda
// RUN: evo-opt %s -split-input-file -verify-diagnostics --evo-pipeline="output-dir=-" \
// RUN:   --evo-verify="runs=20 warmup=3" -o /dev/null

// cumsum, a thread per row (the naive schedule).
// expected-remark @below {{evo-verify: 'cumsum_naive' is valid (5 trials, }}
func.func @cumsum_naive(%x: tensor<128x4000xf32>) -> tensor<128x4000xf32> {
  %id = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x4000xf32>
  %acc = linalg.fill ins(%id : f32) outs(%e : tensor<128x4000xf32>) -> tensor<128x4000xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<128x4000xf32>) outs(%acc : tensor<128x4000xf32>) {
    ^bb0(%in: f32, %o: f32):
      %j = linalg.index 1 : index
      %k = linalg.index 2 : index
      %keep = arith.cmpi ule, %k, %j : index
      %v = arith.select %keep, %in, %id : f32
      %s = arith.addf %o, %v : f32
      linalg.yield %s : f32
  } -> tensor<128x4000xf32>
  return %r : tensor<128x4000xf32>
}

// -----

// cumsum, a warp per row, 128-bit accesses, a tail tile (4000 = 31.25 tiles of 128).
// expected-remark @below {{evo-verify: 'cumsum_warp' is valid (5 trials, }}
func.func @cumsum_warp(%x: tensor<128x4000xf32>) -> tensor<128x4000xf32> {
  %id = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x4000xf32>
  %acc = linalg.fill ins(%id : f32) outs(%e : tensor<128x4000xf32>) -> tensor<128x4000xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<128x4000xf32>) outs(%acc : tensor<128x4000xf32>) attrs = {evo.knobs = {reduction = "warp", vector_width = 4}} {
    ^bb0(%in: f32, %o: f32):
      %j = linalg.index 1 : index
      %k = linalg.index 2 : index
      %keep = arith.cmpi ule, %k, %j : index
      %v = arith.select %keep, %in, %id : f32
      %s = arith.addf %o, %v : f32
      linalg.yield %s : f32
  } -> tensor<128x4000xf32>
  return %r : tensor<128x4000xf32>
}

// -----

// Exclusive cumsum, a block per row, two chunks per thread.
// expected-remark @below {{evo-verify: 'cumsum_exclusive_block' is valid (5 trials, }}
func.func @cumsum_exclusive_block(%x: tensor<128x4000xf32>) -> tensor<128x4000xf32> {
  %id = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x4000xf32>
  %acc = linalg.fill ins(%id : f32) outs(%e : tensor<128x4000xf32>) -> tensor<128x4000xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<128x4000xf32>) outs(%acc : tensor<128x4000xf32>) attrs = {evo.knobs = {reduction = "block", block_size = 512, vector_width = 4, elements_per_thread = 2}} {
    ^bb0(%in: f32, %o: f32):
      %j = linalg.index 1 : index
      %k = linalg.index 2 : index
      %keep = arith.cmpi ult, %k, %j : index
      %v = arith.select %keep, %in, %id : f32
      %s = arith.addf %o, %v : f32
      linalg.yield %s : f32
  } -> tensor<128x4000xf32>
  return %r : tensor<128x4000xf32>
}

// -----

// Reverse cumsum (suffix sums), a block per row.
// expected-remark @below {{evo-verify: 'cumsum_reverse_block' is valid (5 trials, }}
func.func @cumsum_reverse_block(%x: tensor<128x4000xf32>) -> tensor<128x4000xf32> {
  %id = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x4000xf32>
  %acc = linalg.fill ins(%id : f32) outs(%e : tensor<128x4000xf32>) -> tensor<128x4000xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<128x4000xf32>) outs(%acc : tensor<128x4000xf32>) attrs = {evo.knobs = {reduction = "block", block_size = 256, vector_width = 4}} {
    ^bb0(%in: f32, %o: f32):
      %j = linalg.index 1 : index
      %k = linalg.index 2 : index
      %keep = arith.cmpi uge, %k, %j : index
      %v = arith.select %keep, %in, %id : f32
      %s = arith.addf %o, %v : f32
      linalg.yield %s : f32
  } -> tensor<128x4000xf32>
  return %r : tensor<128x4000xf32>
}

// -----

// Reverse exclusive cumsum written with the select inverted (identity where k <= j).
// expected-remark @below {{evo-verify: 'cumsum_reverse_exclusive_warp' is valid (5 trials, }}
func.func @cumsum_reverse_exclusive_warp(%x: tensor<128x4000xf32>) -> tensor<128x4000xf32> {
  %id = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x4000xf32>
  %acc = linalg.fill ins(%id : f32) outs(%e : tensor<128x4000xf32>) -> tensor<128x4000xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<128x4000xf32>) outs(%acc : tensor<128x4000xf32>) attrs = {evo.knobs = {reduction = "warp", vector_width = 2, elements_per_thread = 4}} {
    ^bb0(%in: f32, %o: f32):
      %j = linalg.index 1 : index
      %k = linalg.index 2 : index
      %drop = arith.cmpi ule, %k, %j : index
      %v = arith.select %drop, %id, %in : f32
      %s = arith.addf %o, %v : f32
      linalg.yield %s : f32
  } -> tensor<128x4000xf32>
  return %r : tensor<128x4000xf32>
}

// -----

// cumprod (inputs near 1, as bench/kernelbench/cumprod.mlir), a block of 1024 per row.
// expected-remark @below {{evo-verify: 'cumprod_block' is valid (5 trials, }}
func.func @cumprod_block(%x: tensor<128x4000xf32> {evo.range = [0.998, 1.002]}) -> tensor<128x4000xf32> {
  %id = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<128x4000xf32>
  %acc = linalg.fill ins(%id : f32) outs(%e : tensor<128x4000xf32>) -> tensor<128x4000xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<128x4000xf32>) outs(%acc : tensor<128x4000xf32>) attrs = {evo.knobs = {reduction = "block", block_size = 1024, vector_width = 4}} {
    ^bb0(%in: f32, %o: f32):
      %j = linalg.index 1 : index
      %k = linalg.index 2 : index
      %keep = arith.cmpi ule, %k, %j : index
      %v = arith.select %keep, %in, %id : f32
      %s = arith.mulf %o, %v : f32
      linalg.yield %s : f32
  } -> tensor<128x4000xf32>
  return %r : tensor<128x4000xf32>
}

// -----

// Reverse exclusive cumprod, a warp per row.
// expected-remark @below {{evo-verify: 'cumprod_reverse_exclusive' is valid (5 trials, }}
func.func @cumprod_reverse_exclusive(%x: tensor<128x4000xf32> {evo.range = [0.998, 1.002]}) -> tensor<128x4000xf32> {
  %id = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<128x4000xf32>
  %acc = linalg.fill ins(%id : f32) outs(%e : tensor<128x4000xf32>) -> tensor<128x4000xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<128x4000xf32>) outs(%acc : tensor<128x4000xf32>) attrs = {evo.knobs = {reduction = "warp", vector_width = 4, elements_per_thread = 2}} {
    ^bb0(%in: f32, %o: f32):
      %j = linalg.index 1 : index
      %k = linalg.index 2 : index
      %keep = arith.cmpi sgt, %k, %j : index
      %v = arith.select %keep, %in, %id : f32
      %s = arith.mulf %o, %v : f32
      linalg.yield %s : f32
  } -> tensor<128x4000xf32>
  return %r : tensor<128x4000xf32>
}

// -----

// cummax along dim 0: a thread per column, coalesced across the columns of a warp.
// expected-remark @below {{evo-verify: 'cummax_dim0' is valid (5 trials, }}
func.func @cummax_dim0(%x: tensor<4000x128xf32>) -> tensor<4000x128xf32> {
  %id = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<4000x128xf32>
  %acc = linalg.fill ins(%id : f32) outs(%e : tensor<4000x128xf32>) -> tensor<4000x128xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<4000x128xf32>) outs(%acc : tensor<4000x128xf32>) {
    ^bb0(%in: f32, %o: f32):
      %j = linalg.index 0 : index
      %k = linalg.index 2 : index
      %keep = arith.cmpi ule, %k, %j : index
      %v = arith.select %keep, %in, %id : f32
      %s = arith.maximumf %o, %v : f32
      linalg.yield %s : f32
  } -> tensor<4000x128xf32>
  return %r : tensor<4000x128xf32>
}

// -----

// Reverse cummin along dim 0, a block per column (scalar accesses).
// expected-remark @below {{evo-verify: 'cummin_dim0_block' is valid (5 trials, }}
func.func @cummin_dim0_block(%x: tensor<4000x128xf32>) -> tensor<4000x128xf32> {
  %id = arith.constant 0x7F800000 : f32
  %e = tensor.empty() : tensor<4000x128xf32>
  %acc = linalg.fill ins(%id : f32) outs(%e : tensor<4000x128xf32>) -> tensor<4000x128xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<4000x128xf32>) outs(%acc : tensor<4000x128xf32>) attrs = {evo.knobs = {reduction = "block", block_size = 256, elements_per_thread = 4}} {
    ^bb0(%in: f32, %o: f32):
      %j = linalg.index 0 : index
      %k = linalg.index 2 : index
      %keep = arith.cmpi uge, %k, %j : index
      %v = arith.select %keep, %in, %id : f32
      %s = arith.minimumf %o, %v : f32
      linalg.yield %s : f32
  } -> tensor<4000x128xf32>
  return %r : tensor<4000x128xf32>
}

// -----

// The 0/1 mask form (x * uitofp(j >= k)).
// expected-remark @below {{evo-verify: 'cumsum_mask' is valid (5 trials, }}
func.func @cumsum_mask(%x: tensor<128x4000xf32>) -> tensor<128x4000xf32> {
  %id = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x4000xf32>
  %acc = linalg.fill ins(%id : f32) outs(%e : tensor<128x4000xf32>) -> tensor<128x4000xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<128x4000xf32>) outs(%acc : tensor<128x4000xf32>) attrs = {evo.knobs = {reduction = "block", block_size = 256, vector_width = 4, elements_per_thread = 4}} {
    ^bb0(%in: f32, %o: f32):
      %j = linalg.index 1 : index
      %k = linalg.index 2 : index
      %keep = arith.cmpi uge, %j, %k : index
      %m = arith.uitofp %keep : i1 to f32
      %v = arith.mulf %in, %m : f32
      %s = arith.addf %o, %v : f32
      linalg.yield %s : f32
  } -> tensor<128x4000xf32>
  return %r : tensor<128x4000xf32>
}

// -----

// An init that is an argument: out = init + prefix.
// expected-remark @below {{evo-verify: 'cumsum_init_arg' is valid (5 trials, }}
func.func @cumsum_init_arg(%x: tensor<128x4000xf32>, %acc: tensor<128x4000xf32>) -> tensor<128x4000xf32> {
  %id = arith.constant 0.0 : f32

  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<128x4000xf32>) outs(%acc : tensor<128x4000xf32>) attrs = {evo.knobs = {reduction = "warp", vector_width = 4}} {
    ^bb0(%in: f32, %o: f32):
      %j = linalg.index 1 : index
      %k = linalg.index 2 : index
      %keep = arith.cmpi ule, %k, %j : index
      %v = arith.select %keep, %in, %id : f32
      %s = arith.addf %o, %v : f32
      linalg.yield %s : f32
  } -> tensor<128x4000xf32>
  return %r : tensor<128x4000xf32>
}

// -----

// f16, accumulated in f32.
// expected-remark @below {{evo-verify: 'cumsum_f16' is valid (5 trials, }}
func.func @cumsum_f16(%x: tensor<128x4000xf16>) -> tensor<128x4000xf16> {
  %id = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<128x4000xf16>
  %acc = linalg.fill ins(%id : f16) outs(%e : tensor<128x4000xf16>) -> tensor<128x4000xf16>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<128x4000xf16>) outs(%acc : tensor<128x4000xf16>) attrs = {evo.knobs = {reduction = "warp", vector_width = 8}} {
    ^bb0(%in: f16, %o: f16):
      %j = linalg.index 1 : index
      %k = linalg.index 2 : index
      %keep = arith.cmpi ule, %k, %j : index
      %v = arith.select %keep, %in, %id : f16
      %s = arith.addf %o, %v : f16
      linalg.yield %s : f16
  } -> tensor<128x4000xf16>
  return %r : tensor<128x4000xf16>
}

// -----

// bf16, exclusive, a block per row.
// expected-remark @below {{evo-verify: 'cumsum_bf16_block' is valid (5 trials, }}
func.func @cumsum_bf16_block(%x: tensor<128x4000xbf16>) -> tensor<128x4000xbf16> {
  %id = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<128x4000xbf16>
  %acc = linalg.fill ins(%id : bf16) outs(%e : tensor<128x4000xbf16>) -> tensor<128x4000xbf16>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<128x4000xbf16>) outs(%acc : tensor<128x4000xbf16>) attrs = {evo.knobs = {reduction = "block", block_size = 256, vector_width = 8, elements_per_thread = 2}} {
    ^bb0(%in: bf16, %o: bf16):
      %j = linalg.index 1 : index
      %k = linalg.index 2 : index
      %keep = arith.cmpi ult, %k, %j : index
      %v = arith.select %keep, %in, %id : bf16
      %s = arith.addf %o, %v : bf16
      linalg.yield %s : bf16
  } -> tensor<128x4000xbf16>
  return %r : tensor<128x4000xbf16>
}

// -----

// f64: 64-bit shuffles as two halves.
// expected-remark @below {{evo-verify: 'cumsum_f64' is valid (5 trials, }}
func.func @cumsum_f64(%x: tensor<128x4000xf64>) -> tensor<128x4000xf64> {
  %id = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<128x4000xf64>
  %acc = linalg.fill ins(%id : f64) outs(%e : tensor<128x4000xf64>) -> tensor<128x4000xf64>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<128x4000xf64>) outs(%acc : tensor<128x4000xf64>) attrs = {evo.knobs = {reduction = "block", block_size = 128, vector_width = 2}} {
    ^bb0(%in: f64, %o: f64):
      %j = linalg.index 1 : index
      %k = linalg.index 2 : index
      %keep = arith.cmpi ule, %k, %j : index
      %v = arith.select %keep, %in, %id : f64
      %s = arith.addf %o, %v : f64
      linalg.yield %s : f64
  } -> tensor<128x4000xf64>
  return %r : tensor<128x4000xf64>
}

// -----

// i32: exact.
// expected-remark @below {{evo-verify: 'cumsum_i32' is valid (5 trials, }}
func.func @cumsum_i32(%x: tensor<128x4000xi32>) -> tensor<128x4000xi32> {
  %id = arith.constant 0 : i32
  %e = tensor.empty() : tensor<128x4000xi32>
  %acc = linalg.fill ins(%id : i32) outs(%e : tensor<128x4000xi32>) -> tensor<128x4000xi32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<128x4000xi32>) outs(%acc : tensor<128x4000xi32>) attrs = {evo.knobs = {reduction = "block", block_size = 256, vector_width = 4}} {
    ^bb0(%in: i32, %o: i32):
      %j = linalg.index 1 : index
      %k = linalg.index 2 : index
      %keep = arith.cmpi ule, %k, %j : index
      %v = arith.select %keep, %in, %id : i32
      %s = arith.addi %o, %v : i32
      linalg.yield %s : i32
  } -> tensor<128x4000xi32>
  return %r : tensor<128x4000xi32>
}

// -----

// i64 reverse cummax, a warp per row.
// expected-remark @below {{evo-verify: 'cummax_i64_warp' is valid (5 trials, }}
func.func @cummax_i64_warp(%x: tensor<128x4000xi64>) -> tensor<128x4000xi64> {
  %id = arith.constant -9223372036854775808 : i64
  %e = tensor.empty() : tensor<128x4000xi64>
  %acc = linalg.fill ins(%id : i64) outs(%e : tensor<128x4000xi64>) -> tensor<128x4000xi64>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<128x4000xi64>) outs(%acc : tensor<128x4000xi64>) attrs = {evo.knobs = {reduction = "warp", vector_width = 2}} {
    ^bb0(%in: i64, %o: i64):
      %j = linalg.index 1 : index
      %k = linalg.index 2 : index
      %keep = arith.cmpi uge, %k, %j : index
      %v = arith.select %keep, %in, %id : i64
      %s = arith.maxsi %o, %v : i64
      linalg.yield %s : i64
  } -> tensor<128x4000xi64>
  return %r : tensor<128x4000xi64>
}

// -----

// Rows of 2^18: the naive schedule is a block per row.
// expected-remark @below {{evo-verify: 'cumsum_long_naive' is valid (5 trials, }}
func.func @cumsum_long_naive(%x: tensor<2x262144xf32>) -> tensor<2x262144xf32> {
  %id = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x262144xf32>
  %acc = linalg.fill ins(%id : f32) outs(%e : tensor<2x262144xf32>) -> tensor<2x262144xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<2x262144xf32>) outs(%acc : tensor<2x262144xf32>) {
    ^bb0(%in: f32, %o: f32):
      %j = linalg.index 1 : index
      %k = linalg.index 2 : index
      %keep = arith.cmpi ule, %k, %j : index
      %v = arith.select %keep, %in, %id : f32
      %s = arith.addf %o, %v : f32
      linalg.yield %s : f32
  } -> tensor<2x262144xf32>
  return %r : tensor<2x262144xf32>
}

// -----

// Rows of 2^18, a block of 1024 with 16 elements per thread per tile.
// expected-remark @below {{evo-verify: 'cumsum_long_tuned' is valid (5 trials, }}
func.func @cumsum_long_tuned(%x: tensor<2x262144xf32>) -> tensor<2x262144xf32> {
  %id = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x262144xf32>
  %acc = linalg.fill ins(%id : f32) outs(%e : tensor<2x262144xf32>) -> tensor<2x262144xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<2x262144xf32>) outs(%acc : tensor<2x262144xf32>) attrs = {evo.knobs = {reduction = "block", block_size = 1024, vector_width = 4, elements_per_thread = 4}} {
    ^bb0(%in: f32, %o: f32):
      %j = linalg.index 1 : index
      %k = linalg.index 2 : index
      %keep = arith.cmpi ule, %k, %j : index
      %v = arith.select %keep, %in, %id : f32
      %s = arith.addf %o, %v : f32
      linalg.yield %s : f32
  } -> tensor<2x262144xf32>
  return %r : tensor<2x262144xf32>
}
