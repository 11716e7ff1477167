// evo-verify on group_outputs (EmitReduction.cpp): G output points per thread, warp or block
// sharing the loads of the inputs that do not depend on the group's dimension, checked against
// the oracle and the naive baseline on the GPU. nn.Linear at batch 8 and 4 (the batch rows share
// W) with a warp and with a thread per group; GEMVs whose rows share x, with split-K (each
// point's partials in its own slot), with a fused bias + ReLU, odd widths; a reduction whose
// rows share an input, with a block per group; groups over two output dimensions (group_outputs2).
//
// REQUIRES: cuda
// RUN: rm -rf %t && mkdir -p %t
// RUN: evo-opt %s -split-input-file --evo-pipeline="output-dir=%t" --evo-verify="runs=3" -o /dev/null

func.func @linear_b8_f32(%x: tensor<8x4096xf32>, %w: tensor<1000x4096xf32>) -> tensor<8x1000xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x1000xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8x1000xf32>) -> tensor<8x1000xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
         ins(%x, %w : tensor<8x4096xf32>, tensor<1000x4096xf32>) outs(%acc : tensor<8x1000xf32>)
         {evo.knobs = #evo.knobs<reduction = warp, vector_width = 4, accumulators = 2, group_outputs = 8>} -> tensor<8x1000xf32>
  return %y : tensor<8x1000xf32>
}

// -----

func.func @linear_b4_bf16_thread(%x: tensor<4x520xbf16>, %w: tensor<333x520xbf16>) -> tensor<4x333xbf16> {
  %zero = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<4x333xbf16>
  %acc = linalg.fill ins(%zero : bf16) outs(%e : tensor<4x333xbf16>) -> tensor<4x333xbf16>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
         ins(%x, %w : tensor<4x520xbf16>, tensor<333x520xbf16>) outs(%acc : tensor<4x333xbf16>)
         {evo.knobs = #evo.knobs<reduction = thread, block_size = 64, group_outputs = 4>} -> tensor<4x333xbf16>
  return %y : tensor<4x333xbf16>
}

// -----

func.func @gemv_f16_split(%a: tensor<1000x2048xf16>, %x: tensor<2048xf16>) -> tensor<1000xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<1000xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%e : tensor<1000xf16>) -> tensor<1000xf16>
  %y = linalg.matvec ins(%a, %x : tensor<1000x2048xf16>, tensor<2048xf16>) outs(%acc : tensor<1000xf16>)
         {evo.knobs = #evo.knobs<reduction = warp, vector_width = 8, group_outputs = 8, split = 4>} -> tensor<1000xf16>
  return %y : tensor<1000xf16>
}

// -----

func.func @gemv_bias_relu(%a: tensor<512x1000xf32>, %x: tensor<1000xf32>, %bias: tensor<512xf32>) -> tensor<512xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<512xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<512xf32>) -> tensor<512xf32>
  %y = linalg.matvec ins(%a, %x : tensor<512x1000xf32>, tensor<1000xf32>) outs(%acc : tensor<512xf32>)
         {evo.knobs = #evo.knobs<reduction = warp, vector_width = 4, group_outputs = 2>} -> tensor<512xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
         ins(%y, %bias : tensor<512xf32>, tensor<512xf32>) outs(%e : tensor<512xf32>) {
  ^bb0(%v: f32, %b: f32, %o: f32):
    %s = arith.addf %v, %b : f32
    %m = arith.maximumf %s, %zero : f32
    linalg.yield %m : f32
  } -> tensor<512xf32>
  return %r : tensor<512xf32>
}

// -----

func.func @centered_squares_block(%x: tensor<96x3000xf32>, %mu: tensor<3000xf32>) -> tensor<96xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<96xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<96xf32>) -> tensor<96xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(r, k) -> (r, k)>, affine_map<(r, k) -> (k)>, affine_map<(r, k) -> (r)>], iterator_types = ["parallel", "reduction"]}
         ins(%x, %mu : tensor<96x3000xf32>, tensor<3000xf32>) outs(%acc : tensor<96xf32>)
         attrs = {evo.knobs = #evo.knobs<reduction = block, block_size = 128, group_outputs = 4, accumulators = 2>} {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %s = arith.mulf %d, %d : f32
    %t = arith.addf %o, %s : f32
    linalg.yield %t : f32
  } -> tensor<96xf32>
  return %y : tensor<96xf32>
}

// -----

// group_outputs2: 8 batch rows x 4 rows of W per warp (each chunk of x and of W loaded once for
// the points sharing it), streamed W; and a thread over 4 x 2 points of a bf16 batch with
// split-K.

func.func @linear_b8_f32_2d(%x: tensor<8x4096xf32>, %w: tensor<1000x4096xf32>) -> tensor<8x1000xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x1000xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8x1000xf32>) -> tensor<8x1000xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
         ins(%x, %w : tensor<8x4096xf32>, tensor<1000x4096xf32>) outs(%acc : tensor<8x1000xf32>)
         {evo.knobs = #evo.knobs<reduction = warp, vector_width = 4, accumulators = 2, group_outputs = 8, group_outputs2 = 4, stream_loads = true>} -> tensor<8x1000xf32>
  return %y : tensor<8x1000xf32>
}

// -----

func.func @linear_b4_bf16_2d(%x: tensor<4x520xbf16>, %w: tensor<334x520xbf16>) -> tensor<4x334xbf16> {
  %zero = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<4x334xbf16>
  %acc = linalg.fill ins(%zero : bf16) outs(%e : tensor<4x334xbf16>) -> tensor<4x334xbf16>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
         ins(%x, %w : tensor<4x520xbf16>, tensor<334x520xbf16>) outs(%acc : tensor<4x334xbf16>)
         {evo.knobs = #evo.knobs<reduction = thread, block_size = 64, vector_width = 4, split = 2, group_outputs = 4, group_outputs2 = 2>} -> tensor<4x334xbf16>
  return %y : tensor<4x334xbf16>
}
