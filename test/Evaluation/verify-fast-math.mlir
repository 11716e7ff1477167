// evo-verify on fast_math (lower-to-gpu-fast-math.mlir: libdevice's fast exp and log, as
// Triton's): a softmax over rows of 65536 (the online pass and the output pass both take the
// fast exponential), a log-softmax written as generics and an f16 softmax are within the f32 /
// f16 tolerances of the float64 oracle on every trial (wide and large inputs included).
//
// REQUIRES: cuda
// RUN: evo-opt %s -split-input-file -verify-diagnostics --evo-pipeline="output-dir=- reduction-strategy=block block-size=256 vector-width=4 fast-math=1" \
// RUN:   --evo-verify="runs=5 warmup=1" -o /dev/null
// RUN: evo-opt %s -split-input-file -verify-diagnostics --evo-pipeline="output-dir=- reduction-strategy=warp vector-width=4 fast-math=1" \
// RUN:   --evo-verify="runs=5 warmup=1" -o /dev/null

// expected-remark @below {{evo-verify: 'softmax_long' is valid (5 trials, }}
func.func @softmax_long(%x: tensor<64x65536xf32>) -> tensor<64x65536xf32> {
  %e = tensor.empty() : tensor<64x65536xf32>
  %y = linalg.softmax dimension(1) ins(%x : tensor<64x65536xf32>) outs(%e : tensor<64x65536xf32>) -> tensor<64x65536xf32>
  return %y : tensor<64x65536xf32>
}

// -----

#m2 = affine_map<(r, c) -> (r, c)>
#r = affine_map<(r, c) -> (r)>
// expected-remark @below {{evo-verify: 'log_softmax' is valid (5 trials, }}
func.func @log_softmax(%x: tensor<128x8192xf32>) -> tensor<128x8192xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128xf32>
  %fm = linalg.fill ins(%ninf : f32) outs(%e : tensor<128xf32>) -> tensor<128xf32>
  %max = linalg.generic {indexing_maps = [#m2, #r], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<128x8192xf32>) outs(%fm : tensor<128xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.maximumf %a, %o : f32
    linalg.yield %t : f32
  } -> tensor<128xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%e : tensor<128xf32>) -> tensor<128xf32>
  %sum = linalg.generic {indexing_maps = [#m2, #r, #r], iterator_types = ["parallel", "reduction"]} ins(%x, %max : tensor<128x8192xf32>, tensor<128xf32>) outs(%fs : tensor<128xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %x1 = math.exp %d : f32
    %t = arith.addf %x1, %o : f32
    linalg.yield %t : f32
  } -> tensor<128xf32>
  %e2 = tensor.empty() : tensor<128x8192xf32>
  %y = linalg.generic {indexing_maps = [#m2, #r, #r, #m2], iterator_types = ["parallel", "parallel"]} ins(%x, %max, %sum : tensor<128x8192xf32>, tensor<128xf32>, tensor<128xf32>) outs(%e2 : tensor<128x8192xf32>) {
  ^bb0(%a: f32, %m: f32, %s: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %l = math.log %s : f32
    %t = arith.subf %d, %l : f32
    linalg.yield %t : f32
  } -> tensor<128x8192xf32>
  return %y : tensor<128x8192xf32>
}

// -----

// expected-remark @below {{evo-verify: 'softmax_f16' is valid (5 trials, }}
func.func @softmax_f16(%x: tensor<256x4096xf16>) -> tensor<256x4096xf16> {
  %e = tensor.empty() : tensor<256x4096xf16>
  %y = linalg.softmax dimension(1) ins(%x : tensor<256x4096xf16>) outs(%e : tensor<256x4096xf16>) -> tensor<256x4096xf16>
  return %y : tensor<256x4096xf16>
}
