// fast_math: the kernels' math ops take `fastmath<afn>`, which the NVVM lowering turns into
// libdevice's fast forms (exp: __nv_fast_expf, one multiplication by log2 e and ex2.approx);
// without it exp is libdevice's accurate expf (its argument split with fma.rm). A row program
// (a softmax's exponentials), an elementwise op (a log) and the naive schedule.
// RUN: evo-opt %s -split-input-file -evo-lower-to-gpu="reduction-strategy=block vector-width=4 fast-math=1" | FileCheck %s
// RUN: evo-opt %s -split-input-file -evo-lower-to-gpu="reduction-strategy=block vector-width=4" | FileCheck %s --check-prefix=ACCURATE
// RUN: evo-opt %s -split-input-file -evo-lower-to-gpu="reduction-strategy=block vector-width=4 fast-math=1" -evo-emit-ptx="output-dir=%t" -o /dev/null
// RUN: FileCheck %s --input-file=%t/softmax.ptx --check-prefix=PTX
// RUN: evo-opt %s -split-input-file -evo-lower-to-gpu="reduction-strategy=block vector-width=4" -evo-emit-ptx="output-dir=%t/accurate" -o /dev/null
// RUN: FileCheck %s --input-file=%t/accurate/softmax.ptx --check-prefix=PTX-ACCURATE

// CHECK-LABEL: func.func @softmax
// CHECK:         gpu.func @softmax_k0
// CHECK-SAME:      fast_math = true
// CHECK:           math.exp %{{.*}} fastmath<afn> : f32
// CHECK-NOT:       math.exp %{{[0-9a-z_]+}} : f32
// CHECK:           gpu.return
// ACCURATE-LABEL: func.func @softmax
// ACCURATE-NOT:     fast_math
// ACCURATE:         math.exp %{{[0-9a-z_]+}} : f32
// ACCURATE-NOT:     fastmath<afn>
// ACCURATE:         gpu.return
// PTX-LABEL: .entry softmax_k0(
// PTX-NOT:     fma.rm.f32
// PTX:         mul.rn.f32 %{{.*}}, 0f3FB8AA3B
// PTX-NEXT:    ex2.approx{{(.ftz)?}}.f32
// PTX-ACCURATE-LABEL: .entry softmax_k0(
// PTX-ACCURATE:         fma.rm.f32
// PTX-ACCURATE:         ex2.approx.ftz.f32
func.func @softmax(%x: tensor<64x4096xf32>) -> tensor<64x4096xf32> {
  %e = tensor.empty() : tensor<64x4096xf32>
  %y = linalg.softmax dimension(1) ins(%x : tensor<64x4096xf32>) outs(%e : tensor<64x4096xf32>) -> tensor<64x4096xf32>
  return %y : tensor<64x4096xf32>
}

// -----

// CHECK-LABEL: func.func @log
// CHECK:         gpu.func @log_k0
// CHECK:           math.log %{{.*}} fastmath<afn> : f32
// ACCURATE-LABEL: func.func @log
// ACCURATE:         math.log %{{[0-9a-z_]+}} : f32
#m = affine_map<(i) -> (i)>
func.func @log(%x: tensor<4096xf32>) -> tensor<4096xf32> {
  %e = tensor.empty() : tensor<4096xf32>
  %y = linalg.generic {indexing_maps = [#m, #m], iterator_types = ["parallel"]} ins(%x : tensor<4096xf32>) outs(%e : tensor<4096xf32>) {
  ^bb0(%a: f32, %o: f32):
    %l = math.log %a : f32
    linalg.yield %l : f32
  } -> tensor<4096xf32>
  return %y : tensor<4096xf32>
}
