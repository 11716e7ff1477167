// evo-verify on tensor.concat (FrontEnds.cpp, concatToGenerics: a generic over the operands
// padded to the result's shape, selecting by position), checked against the oracle (its own
// rewrite, Oracle.cpp concatAsGathers) and the naive baseline on the GPU: concatenated then exp,
// three f16 operands along the outer dimension, a row sum over a concatenation (the concat fused
// into the reduction), and operands that are a matmul's result, a splat constant and a reshape.
//
// REQUIRES: cuda
// RUN: rm -rf %t && mkdir -p %t
// RUN: evo-opt %s -split-input-file --evo-pipeline="output-dir=%t" --evo-verify="runs=3" -o /dev/null

func.func @concat_exp(%a: tensor<512x1000xf32>, %b: tensor<512x24xf32>) -> tensor<512x1024xf32> {
  %c = tensor.concat dim(1) %a, %b : (tensor<512x1000xf32>, tensor<512x24xf32>) -> tensor<512x1024xf32>
  %e = tensor.empty() : tensor<512x1024xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%c : tensor<512x1024xf32>) outs(%e : tensor<512x1024xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = math.exp %x : f32
    linalg.yield %y : f32
  } -> tensor<512x1024xf32>
  return %r : tensor<512x1024xf32>
}

// -----

func.func @concat_rows_f16(%a: tensor<300x256xf16>, %b: tensor<1x256xf16>, %c: tensor<211x256xf16>) -> tensor<512x256xf16> {
  %r = tensor.concat dim(0) %a, %b, %c : (tensor<300x256xf16>, tensor<1x256xf16>, tensor<211x256xf16>) -> tensor<512x256xf16>
  return %r : tensor<512x256xf16>
}

// -----

func.func @concat_row_sum(%a: tensor<256x700xf32>, %b: tensor<256x324xf32>) -> tensor<256xf32> {
  %c = tensor.concat dim(1) %a, %b : (tensor<256x700xf32>, tensor<256x324xf32>) -> tensor<256x1024xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<256xf32>) -> tensor<256xf32>
  %r = linalg.reduce ins(%c : tensor<256x1024xf32>) outs(%f : tensor<256xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<256xf32>
}

// -----

func.func @concat_operands(%a: tensor<128x256xf32>, %w: tensor<256x64xf32>, %v: tensor<4096xf32>) -> tensor<128x128xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<128x64xf32>) -> tensor<128x64xf32>
  %m = linalg.matmul ins(%a, %w : tensor<128x256xf32>, tensor<256x64xf32>) outs(%f : tensor<128x64xf32>) -> tensor<128x64xf32>
  %ones = arith.constant dense<1.0> : tensor<128x32xf32>
  %x = tensor.expand_shape %v [[0, 1]] output_shape [128, 32] : tensor<4096xf32> into tensor<128x32xf32>
  %r = tensor.concat dim(1) %m, %ones, %x : (tensor<128x64xf32>, tensor<128x32xf32>, tensor<128x32xf32>) -> tensor<128x128xf32>
  return %r : tensor<128x128xf32>
}
