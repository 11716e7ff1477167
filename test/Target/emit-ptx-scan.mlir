// Scan kernels (the scan family, lib/Conversion/EmitScan.cpp) to PTX, and through ptxas: warp
// scans are `shfl.sync.up` ladders, a block per line adds one `bar.sync` per tile and the warps'
// totals in shared memory, contiguous rows take 128-bit accesses. 64-bit accumulators (f64, i64)
// shuffle as two 32-bit halves; f16/bf16 accumulate in f32. What the recognition accepts:
// test/Conversion/lower-to-gpu-scan.mlir.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: evo-opt %s -split-input-file -evo-lower-to-gpu -evo-emit-ptx="output-dir=%t ptxas=none" -o /dev/null
// RUN: FileCheck %s --input-file=%t/cumsum_warp.ptx --check-prefix=WARP
// RUN: FileCheck %s --input-file=%t/cumprod_block.ptx --check-prefix=BLOCK
// RUN: FileCheck %s --input-file=%t/cumsum_f64_block.ptx --check-prefix=F64
// RUN: %if ptxas %{ evo-opt %s -split-input-file -evo-lower-to-gpu -evo-emit-ptx="output-dir=%t/asm" -o /dev/null %}
// RUN: %if ptxas %{ FileCheck %s --input-file=%t/asm/cummax_i64_warp.json --check-prefix=RESOURCES %}

// WARP:        .entry cumsum_warp_k0(
// WARP:          ld.global.v4.b32
// WARP-COUNT-5:  shfl.sync.up.b32
// WARP:          shfl.sync.up.b32 {{.*}}, 1, 0, -1;
// WARP:          shfl.sync.idx.b32 {{.*}}, 31, 31, -1;
// WARP:          st.global.v4.b32
// WARP-NOT:      bar.sync
func.func @cumsum_warp(%x: tensor<64x1024xf32>) -> tensor<64x1024xf32> {
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

// BLOCK:       .entry cumprod_block_k0(
// BLOCK:         .shared .align 16 .b8 __wg_cumprod_block_k0_0[64];
// BLOCK:         shfl.sync.up.b32
// BLOCK:         st.shared.b32
// BLOCK:         bar.sync 0;
// BLOCK-NOT:     bar.sync
// BLOCK:         ld.shared.b32
// BLOCK:         shfl.sync.idx.b32
// BLOCK:         mul.rn.f32
// BLOCK:         st.global.v4.b32
func.func @cumprod_block(%x: tensor<16x3000xf32>) -> tensor<16x3000xf32> {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<16x3000xf32>
  %acc = linalg.fill ins(%one : f32) outs(%e : tensor<16x3000xf32>) -> tensor<16x3000xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<16x3000xf32>) outs(%acc : tensor<16x3000xf32>) attrs = {evo.knobs = {reduction = "block", block_size = 256, vector_width = 4, elements_per_thread = 2}} {
    ^bb0(%in: f32, %o: f32):
      %j = linalg.index 1 : index
      %k = linalg.index 2 : index
      %keep = arith.cmpi uge, %k, %j : index
      %v = arith.select %keep, %in, %one : f32
      %s = arith.mulf %o, %v : f32
      linalg.yield %s : f32
  } -> tensor<16x3000xf32>
  return %r : tensor<16x3000xf32>
}

// -----

// F64:         .entry cumsum_f64_block_k0(
// F64:           shfl.sync.up.b32
// F64-NEXT:      shfl.sync.up.b32
// F64:           add.rn.f64
// F64:           st.global.v2.b64
// F64:           ld.global.v2.b64
func.func @cumsum_f64_block(%x: tensor<4x2048xf64>) -> tensor<4x2048xf64> {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<4x2048xf64>
  %acc = linalg.fill ins(%zero : f64) outs(%e : tensor<4x2048xf64>) -> tensor<4x2048xf64>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<4x2048xf64>) outs(%acc : tensor<4x2048xf64>) attrs = {evo.knobs = {reduction = "block", block_size = 128, vector_width = 2}} {
    ^bb0(%in: f64, %o: f64):
      %j = linalg.index 1 : index
      %k = linalg.index 2 : index
      %keep = arith.cmpi ule, %k, %j : index
      %v = arith.select %keep, %in, %zero : f64
      %s = arith.addf %o, %v : f64
      linalg.yield %s : f64
  } -> tensor<4x2048xf64>
  return %r : tensor<4x2048xf64>
}

// -----

// RESOURCES:   "kernels": [
// RESOURCES:     "name": "cummax_i64_warp_k0",
// RESOURCES:     "registers": {{[1-9][0-9]*}}
func.func @cummax_i64_warp(%x: tensor<100x96xi64>) -> tensor<100x96xi64> {
  %min = arith.constant -9223372036854775808 : i64
  %e = tensor.empty() : tensor<100x96xi64>
  %acc = linalg.fill ins(%min : i64) outs(%e : tensor<100x96xi64>) -> tensor<100x96xi64>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<100x96xi64>) outs(%acc : tensor<100x96xi64>) attrs = {evo.knobs = {reduction = "warp", block_size = 128, vector_width = 2, elements_per_thread = 2}} {
    ^bb0(%in: i64, %o: i64):
      %j = linalg.index 1 : index
      %k = linalg.index 2 : index
      %keep = arith.cmpi ugt, %k, %j : index
      %v = arith.select %keep, %in, %min : i64
      %s = arith.maxsi %o, %v : i64
      linalg.yield %s : i64
  } -> tensor<100x96xi64>
  return %r : tensor<100x96xi64>
}

// -----

func.func @cumsum_bf16_block(%x: tensor<4x4096xbf16>) -> tensor<4x4096xbf16> {
  %zero = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<4x4096xbf16>
  %acc = linalg.fill ins(%zero : bf16) outs(%e : tensor<4x4096xbf16>) -> tensor<4x4096xbf16>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<4x4096xbf16>) outs(%acc : tensor<4x4096xbf16>) attrs = {evo.knobs = {reduction = "block", block_size = 1024, vector_width = 8}} {
    ^bb0(%in: bf16, %o: bf16):
      %j = linalg.index 1 : index
      %k = linalg.index 2 : index
      %keep = arith.cmpi sle, %k, %j : index
      %v = arith.select %keep, %in, %zero : bf16
      %s = arith.addf %o, %v : bf16
      linalg.yield %s : bf16
  } -> tensor<4x4096xbf16>
  return %r : tensor<4x4096xbf16>
}
