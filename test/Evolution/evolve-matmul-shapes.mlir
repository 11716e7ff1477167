// evo-evolve on matmuls whose shapes the tiles do not divide, and on a long-K matmul with few
// outputs, with the stand-in worker: the built-in proposer's tiled seeds lower and compile for
// the irregular shape (the last row, column and K tiles are partial), and the long-K matmul
// (64 x 64 outputs: few, but no GEMV, so no untiled seeds) gets the tiled split-K seeds first (a
// partial-tile kernel plus an in-order combine kernel; 32 slices: at least 256 of K each).
//
// REQUIRES: stand-in-worker
// RUN: rm -rf %t && mkdir -p %t
// RUN: evo-opt %s --evo-lower-to-gpu --evo-evolve="worker=%evo_fake_worker run-dir=%t/run max-candidates=26 quiet=true seed=4" -o %t/out.mlir 2>%t/err
// RUN: %python %S/Inputs/list_candidates.py %t/run | FileCheck %s --check-prefix=CANDIDATES

// CANDIDATES:     irregular_t0 matmul baseline valid
// CANDIDATES:     irregular_t0 matmul knob-seed valid {"prefetch": 1, "thread_tile": [8, 8], "tile_sizes": [128, 128, 8], "vector_width": 4}
// CANDIDATES:     irregular_t0 matmul knob-seed valid {"thread_tile": [8, 8], "tile_sizes": [128, 128, 8], "vector_width": 4}
// CANDIDATES:     long_k_t0 matmul baseline valid
// CANDIDATES-NEXT: long_k_t0 matmul knob-seed valid {"prefetch": 1, "split": 32, "thread_tile": [8, 8], "tile_sizes": [128, 128, 8], "vector_width": 4}
// CANDIDATES-NEXT: long_k_t0 matmul knob-seed valid {"prefetch": 1, "split": 32, "thread_tile": [4, 4], "tile_sizes": [64, 64, 16], "vector_width": 4}
// CANDIDATES-NOT: invalid

func.func @irregular(%a: tensor<259x131xf32>, %b: tensor<131x197xf32>) -> tensor<259x197xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<259x197xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<259x197xf32>) -> tensor<259x197xf32>
  %c = linalg.matmul ins(%a, %b : tensor<259x131xf32>, tensor<131x197xf32>) outs(%f : tensor<259x197xf32>) -> tensor<259x197xf32>
  return %c : tensor<259x197xf32>
}

func.func @long_k(%a: tensor<64x8192xf32>, %b: tensor<8192x64xf32>) -> tensor<64x64xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %c = linalg.matmul ins(%a, %b : tensor<64x8192xf32>, tensor<8192x64xf32>) outs(%f : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %c : tensor<64x64xf32>
}
