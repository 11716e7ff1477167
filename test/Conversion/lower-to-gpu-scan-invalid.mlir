// Scan knobs that do not fit the task are diagnostics at the op, never silent fallbacks.

// RUN: evo-opt %s -split-input-file -verify-diagnostics -evo-lower-to-gpu

// Vector accesses need the scanned axis contiguous: a cumsum along dim 0 reads columns.
func.func @vector_along_outer_dim(%x: tensor<256x64xf32>) -> tensor<256x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<256x64xf32>) -> tensor<256x64xf32>
  // expected-error @+1 {{vector_width=4 needs the scanned dimension to be the innermost (contiguous) one of the output and of every input read along it}}
  %r = linalg.generic {indexing_maps = [affine_map<(j, n, k) -> (k, n)>, affine_map<(j, n, k) -> (j, n)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<256x64xf32>) outs(%acc : tensor<256x64xf32>) attrs = {evo.knobs = {vector_width = 4}} {
    ^bb0(%in: f32, %o: f32):
      %j = linalg.index 0 : index
      %k = linalg.index 2 : index
      %keep = arith.cmpi ule, %k, %j : index
      %v = arith.select %keep, %in, %zero : f32
      %s = arith.addf %o, %v : f32
      linalg.yield %s : f32
  } -> tensor<256x64xf32>
  return %r : tensor<256x64xf32>
}

// -----

func.func @vector_width_not_dividing(%x: tensor<8x250xf32>) -> tensor<8x250xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x250xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8x250xf32>) -> tensor<8x250xf32>
  // expected-error @+1 {{vector_width=4 does not divide the scanned dimension (250)}}
  %r = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<8x250xf32>) outs(%acc : tensor<8x250xf32>) attrs = {evo.knobs = {reduction = "warp", vector_width = 4}} {
    ^bb0(%in: f32, %o: f32):
      %j = linalg.index 1 : index
      %k = linalg.index 2 : index
      %keep = arith.cmpi ult, %k, %j : index
      %v = arith.select %keep, %in, %zero : f32
      %s = arith.addf %o, %v : f32
      linalg.yield %s : f32
  } -> tensor<8x250xf32>
  return %r : tensor<8x250xf32>
}

// -----

func.func @vector_too_wide(%x: tensor<8x256xf32>) -> tensor<8x256xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x256xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8x256xf32>) -> tensor<8x256xf32>
  // expected-error @+1 {{vector_width=8 makes 32-byte accesses to 'f32' elements; the limit is 16 bytes}}
  %r = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<8x256xf32>) outs(%acc : tensor<8x256xf32>) attrs = {evo.knobs = {reduction = "block", vector_width = 8}} {
    ^bb0(%in: f32, %o: f32):
      %j = linalg.index 1 : index
      %k = linalg.index 2 : index
      %keep = arith.cmpi ule, %k, %j : index
      %v = arith.select %keep, %in, %zero : f32
      %s = arith.addf %o, %v : f32
      linalg.yield %s : f32
  } -> tensor<8x256xf32>
  return %r : tensor<8x256xf32>
}

// -----

// Shuffles move 32- or 64-bit accumulators: an i16 scan lowers only with a thread per line.
func.func @narrow_int_warp(%x: tensor<8x256xi16>) -> tensor<8x256xi16> {
  %zero = arith.constant 0 : i16
  %e = tensor.empty() : tensor<8x256xi16>
  %acc = linalg.fill ins(%zero : i16) outs(%e : tensor<8x256xi16>) -> tensor<8x256xi16>
  // expected-error @+1 {{reduction=warp needs 32- or 64-bit accumulators for the scan's shuffles, got 'i16'}}
  %r = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<8x256xi16>) outs(%acc : tensor<8x256xi16>) attrs = {evo.knobs = {reduction = "warp"}} {
    ^bb0(%in: i16, %o: i16):
      %j = linalg.index 1 : index
      %k = linalg.index 2 : index
      %keep = arith.cmpi ule, %k, %j : index
      %v = arith.select %keep, %in, %zero : i16
      %s = arith.addi %o, %v : i16
      linalg.yield %s : i16
  } -> tensor<8x256xi16>
  return %r : tensor<8x256xi16>
}

// -----

func.func @too_many_elements_per_thread(%x: tensor<8x256xf32>) -> tensor<8x256xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x256xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8x256xf32>) -> tensor<8x256xf32>
  // expected-error @+1 {{elements_per_thread must be in [1, 16], got 32}}
  %r = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<8x256xf32>) outs(%acc : tensor<8x256xf32>) attrs = {evo.knobs = {elements_per_thread = 32}} {
    ^bb0(%in: f32, %o: f32):
      %j = linalg.index 1 : index
      %k = linalg.index 2 : index
      %keep = arith.cmpi ule, %k, %j : index
      %v = arith.select %keep, %in, %zero : f32
      %s = arith.addf %o, %v : f32
      linalg.yield %s : f32
  } -> tensor<8x256xf32>
  return %r : tensor<8x256xf32>
}
