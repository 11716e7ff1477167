// What the matmul schedules refuse on the shapes of lower-to-gpu-matmul-shapes.mlir, each with a
// diagnostic at the op.

// RUN: evo-opt %s -split-input-file -verify-diagnostics -evo-lower-to-gpu

// The wgmma schedule takes one M, N and K dimension (its TMA boxes are 2-d or 3-d): a
// contraction with two M dimensions is refused, not miscompiled.

#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
#map2 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
func.func @wgmma_multi_m(%a: tensor<4x64x128xf16>, %b: tensor<128x128xf16>) -> tensor<4x64x128xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x64x128xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<4x64x128xf32>) -> tensor<4x64x128xf32>
  // expected-error @+1 {{wgmma with tile_sizes=128,128,64: needs a contraction with one M, N and K dimension and at most one batch dimension, or a 2-d NHWC convolution}}
  %c = linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "parallel", "reduction"], evo.knobs = {tile_sizes = [128, 128, 64], wgmma = 1}} ins(%a, %b : tensor<4x64x128xf16>, tensor<128x128xf16>) outs(%f : tensor<4x64x128xf32>) {
  ^bb0(%x: f16, %y: f16, %o: f32):
    %xe = arith.extf %x : f16 to f32
    %ye = arith.extf %y : f16 to f32
    %m = arith.mulf %xe, %ye : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x64x128xf32>
  return %c : tensor<4x64x128xf32>
}

// -----

// Split-K is a SIMT schedule: wgmma refuses it.

func.func @wgmma_split(%a: tensor<256x512xf16>, %b: tensor<512x384xf16>) -> tensor<256x384xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x384xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<256x384xf32>) -> tensor<256x384xf32>
  // expected-error @+1 {{wgmma with tile_sizes=128,128,64: split=4: split-K is a tiled SIMT schedule (wgmma=0)}}
  %c = linalg.matmul {evo.knobs = {tile_sizes = [128, 128, 64], wgmma = 1, split = 4}} ins(%a, %b : tensor<256x512xf16>, tensor<512x384xf16>) outs(%acc : tensor<256x384xf32>) -> tensor<256x384xf32>
  return %c : tensor<256x384xf32>
}

// -----

// The partial results of split-K are capped at 256 MiB.

func.func @split_scratch(%a: tensor<4096x512xf32>, %b: tensor<512x4096xf32>) -> tensor<4096x4096xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4096x4096xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  // expected-error @+1 {{tile_sizes=64,64,8 thread_tile=4,4 for M=4096 N=4096 K=512: split=64 needs 4294967296 bytes of partial results (limit 268435456)}}
  %c = linalg.matmul {evo.knobs = {tile_sizes = [64, 64, 8], thread_tile = [4, 4], split = 64}} ins(%a, %b : tensor<4096x512xf32>, tensor<512x4096xf32>) outs(%acc : tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  return %c : tensor<4096x4096xf32>
}
