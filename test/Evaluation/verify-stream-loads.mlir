// evo-verify on stream_loads (EmitReduction.cpp marks the loads nontemporal, evo-streaming-loads
// makes them ld.global.nc.L1::no_allocate): the kernels still compute what the oracle and the
// naive baseline do on the GPU. A GEMV with odd rows and split-K (16-byte loads), nn.Linear at
// batch 8 grouped (W streamed once for the group), a row sum of f16 pairs (4-byte loads) with a
// fused epilogue, and a 0-d sum split over blocks (8-byte loads). The PTX is checked to hold the
// streamed loads, so the run tests them and not plain loads.
//
// REQUIRES: cuda
// RUN: rm -rf %t && mkdir -p %t
// RUN: evo-opt %s -split-input-file --evo-pipeline="output-dir=%t" --evo-verify="runs=3" -o /dev/null
// RUN: cat %t/gemv_f16_split.ptx %t/linear_b8_f32.ptx %t/row_sum_f16.ptx %t/sum_all.ptx | FileCheck %s

// CHECK-LABEL: .entry gemv_f16_split_k0(
// CHECK:         ld.global.nc.L1::no_allocate.v4.b32
// CHECK-LABEL: .entry linear_b8_f32_k0(
// CHECK:         ld.global.nc.L1::no_allocate.v4.b32
// CHECK-LABEL: .entry row_sum_f16_k0(
// CHECK:         ld.global.nc.L1::no_allocate.b32
// CHECK-LABEL: .entry sum_all_k0(
// CHECK:         ld.global.nc.L1::no_allocate.v2.b32

func.func @gemv_f16_split(%a: tensor<1000x2048xf16>, %x: tensor<2048xf16>) -> tensor<1000xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<1000xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%e : tensor<1000xf16>) -> tensor<1000xf16>
  %y = linalg.matvec ins(%a, %x : tensor<1000x2048xf16>, tensor<2048xf16>) outs(%acc : tensor<1000xf16>)
         {evo.knobs = #evo.knobs<reduction = warp, vector_width = 8, accumulators = 2, split = 4, stream_loads = true>} -> tensor<1000xf16>
  return %y : tensor<1000xf16>
}

// -----

func.func @linear_b8_f32(%x: tensor<8x4096xf32>, %w: tensor<1000x4096xf32>) -> tensor<8x1000xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x1000xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8x1000xf32>) -> tensor<8x1000xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
         ins(%x, %w : tensor<8x4096xf32>, tensor<1000x4096xf32>) outs(%acc : tensor<8x1000xf32>)
         {evo.knobs = #evo.knobs<reduction = warp, vector_width = 4, accumulators = 2, group_outputs = 8, stream_loads = true>} -> tensor<8x1000xf32>
  return %y : tensor<8x1000xf32>
}

// -----

func.func @row_sum_f16(%h: tensor<777x1030xf16>) -> tensor<777xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<777xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<777xf32>) -> tensor<777xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                       iterator_types = ["parallel", "reduction"]}
         ins(%h : tensor<777x1030xf16>) outs(%acc : tensor<777xf32>)
         attrs = {evo.knobs = #evo.knobs<reduction = warp, vector_width = 2, accumulators = 4, stream_loads = true>} {
    ^bb0(%in: f16, %o: f32):
      %w = arith.extf %in : f16 to f32
      %t = arith.addf %w, %o : f32
      linalg.yield %t : f32
    } -> tensor<777xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
         ins(%s : tensor<777xf32>) outs(%e : tensor<777xf32>) {
    ^bb0(%in: f32, %o: f32):
      %c = arith.constant 0.5 : f32
      %t = arith.mulf %in, %c : f32
      linalg.yield %t : f32
    } -> tensor<777xf32>
  return %r : tensor<777xf32>
}

// -----

func.func @sum_all(%x: tensor<512x4096xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %s = linalg.reduce ins(%x : tensor<512x4096xf32>) outs(%acc : tensor<f32>) dimensions = [0, 1]
         {evo.knobs = #evo.knobs<reduction = block, vector_width = 2, accumulators = 4, split = 256, stream_loads = true>}
    (%in: f32, %o: f32) {
      %t = arith.addf %in, %o : f32
      linalg.yield %t : f32
    }
  return %s : tensor<f32>
}
