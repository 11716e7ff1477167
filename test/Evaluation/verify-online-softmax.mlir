// evo-verify on softmax's max and sum of exponentials folded in one pass (online softmax:
// docs/lowering.md, "Row programs") and on reductions with fused epilogues (an average pooling's
// division, a norm's square root in a split reduction's combine kernel). Each proven equal to
// the float64 oracle with a thread, a warp and a block per row, on rows of ordinary values and
// on rows spanning [-1000, 1000] (exp(x - max) underflows to 0 for most elements: the running
// sum's rescaling must not turn that into NaN).
//
// REQUIRES: cuda
// RUN: evo-opt %s -split-input-file -verify-diagnostics --evo-pipeline="output-dir=-" \
// RUN:   --evo-verify="runs=3 warmup=1" -o /dev/null
// RUN: evo-opt %s -split-input-file -verify-diagnostics --evo-pipeline="output-dir=- reduction-strategy=warp vector-width=4 split=4" \
// RUN:   --evo-verify="runs=3 warmup=1" -o /dev/null
// RUN: evo-opt %s -split-input-file -verify-diagnostics --evo-pipeline="output-dir=- reduction-strategy=block block-size=512 vector-width=2" \
// RUN:   --evo-verify="runs=3 warmup=1" -o /dev/null

// expected-remark @below {{evo-verify: 'softmax' is valid (5 trials, }}
func.func @softmax(%x: tensor<64x16384xf32>) -> tensor<64x16384xf32> {
  %e = tensor.empty() : tensor<64x16384xf32>
  %r = linalg.softmax dimension(1) ins(%x : tensor<64x16384xf32>) outs(%e : tensor<64x16384xf32>) -> tensor<64x16384xf32>
  return %r : tensor<64x16384xf32>
}

// -----

// expected-remark @below {{evo-verify: 'softmax_wide' is valid (5 trials, }}
func.func @softmax_wide(%x: tensor<16x32768xf32> {evo.range = [-1000.0, 1000.0]}) -> tensor<16x32768xf32> {
  %e = tensor.empty() : tensor<16x32768xf32>
  %r = linalg.softmax dimension(1) ins(%x : tensor<16x32768xf32>) outs(%e : tensor<16x32768xf32>) -> tensor<16x32768xf32>
  return %r : tensor<16x32768xf32>
}

// -----

// expected-remark @below {{evo-verify: 'softmax_f16' is valid (5 trials, }}
func.func @softmax_f16(%x: tensor<32x32768xf16>) -> tensor<32x32768xf16> {
  %e = tensor.empty() : tensor<32x32768xf16>
  %r = linalg.softmax dimension(1) ins(%x : tensor<32x32768xf16>) outs(%e : tensor<32x32768xf16>) -> tensor<32x32768xf16>
  return %r : tensor<32x32768xf16>
}

// -----

// expected-remark @below {{evo-verify: 'log_softmax' is valid (5 trials, }}
func.func @log_softmax(%x: tensor<32x16384xf32>) -> tensor<32x16384xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<32xf32>) -> tensor<32xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<32x16384xf32>) outs(%f : tensor<32xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %o : f32
    linalg.yield %r : f32
  } -> tensor<32xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<32xf32>) -> tensor<32xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%x, %m : tensor<32x16384xf32>, tensor<32xf32>) outs(%z : tensor<32xf32>) {
  ^bb0(%v: f32, %mx: f32, %o: f32):
    %d = arith.subf %v, %mx : f32
    %x2 = math.exp %d : f32
    %a = arith.addf %x2, %o : f32
    linalg.yield %a : f32
  } -> tensor<32xf32>
  %full = tensor.empty() : tensor<32x16384xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m, %s : tensor<32x16384xf32>, tensor<32xf32>, tensor<32xf32>) outs(%full : tensor<32x16384xf32>) {
  ^bb0(%v: f32, %mx: f32, %sm: f32, %o: f32):
    %d = arith.subf %v, %mx : f32
    %l = math.log %sm : f32
    %r = arith.subf %d, %l : f32
    linalg.yield %r : f32
  } -> tensor<32x16384xf32>
  return %y : tensor<32x16384xf32>
}

// -----

// expected-remark @below {{evo-verify: 'avgpool1d' is valid (5 trials, }}
func.func @avgpool1d(%x: tensor<8x16x4096xf32>) -> tensor<8x16x2047xf32> {
  %zero = arith.constant 0.0 : f32
  %four = arith.constant 4.0 : f32
  %e = tensor.empty() : tensor<8x16x2047xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16x2047xf32>) -> tensor<8x16x2047xf32>
  %w = tensor.empty() : tensor<4xf32>
  %s = linalg.pooling_ncw_sum {dilations = dense<1> : vector<1xi64>, strides = dense<2> : vector<1xi64>}
      ins(%x, %w : tensor<8x16x4096xf32>, tensor<4xf32>) outs(%acc : tensor<8x16x2047xf32>) -> tensor<8x16x2047xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(a, b, c) -> (a, b, c)>, affine_map<(a, b, c) -> (a, b, c)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<8x16x2047xf32>) outs(%e : tensor<8x16x2047xf32>) {
  ^bb0(%v: f32, %o: f32):
    %d = arith.divf %v, %four : f32
    linalg.yield %d : f32
  } -> tensor<8x16x2047xf32>
  return %y : tensor<8x16x2047xf32>
}

// -----

// expected-remark @below {{evo-verify: 'frobenius' is valid (5 trials, }}
func.func @frobenius(%x: tensor<512x1024xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>],
                       iterator_types = ["reduction", "reduction"]}
      ins(%x : tensor<512x1024xf32>) outs(%acc : tensor<f32>) {
  ^bb0(%v: f32, %o: f32):
    %q = arith.mulf %v, %v : f32
    %a = arith.addf %q, %o : f32
    linalg.yield %a : f32
  } -> tensor<f32>
  %y = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []}
      ins(%s : tensor<f32>) outs(%e : tensor<f32>) {
  ^bb0(%v: f32, %o: f32):
    %r = math.sqrt %v : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %y : tensor<f32>
}
