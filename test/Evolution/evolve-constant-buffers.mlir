// Constant buffers (docs/lowering.md, "Constant buffers") through the whole search with the
// stand-in worker: the weight is drawn like an input for every candidate, the winners are spliced
// with the host function still copying the weight's global to the device, resume gives the same
// module, and the evolved module is emitted with the weight's bytes beside the PTX.
//
// REQUIRES: stand-in-worker
// RUN: rm -rf %t && mkdir -p %t
// RUN: evo-opt %s --evo-lower-to-gpu=inline-constant-bytes=64 --evo-evolve="worker=%evo_fake_worker run-dir=%t/run max-candidates=8 quiet=true seed=3" -o %t/out.mlir
// RUN: FileCheck %s --input-file=%t/out.mlir
// RUN: evo-opt %s --evo-lower-to-gpu=inline-constant-bytes=64 --evo-evolve="worker=%evo_fake_worker run-dir=%t/run max-candidates=8 quiet=true seed=3 resume=true" -o %t/resumed.mlir
// RUN: diff %t/out.mlir %t/resumed.mlir
// RUN: evo-opt %t/out.mlir --evo-emit-ptx="output-dir=%t/emit ptxas=none" -o /dev/null
// RUN: FileCheck %s --input-file=%t/emit/linear.json --check-prefix=MANIFEST
// RUN: %python -c "import struct,sys; d=open(sys.argv[1],'rb').read(); print(len(d), struct.unpack('<3f', d[:12]))" %t/emit/linear.constants.bin | FileCheck %s --check-prefix=BYTES

// CHECK-LABEL: memref.global "private" constant @linear_const0 : memref<16x8xf32>
// CHECK-LABEL: func.func @linear(
// CHECK-SAME:      %[[X:.*]]: memref<256x16xf32>, %[[Y:.*]]: memref<256x8xf32>)
// CHECK:         memref.get_global @linear_const0
// CHECK:         gpu.memcpy
// CHECK:         gpu.module @linear_kernels attributes {{.*}}evo.evolved = [{{.*}}task = "linear_t0"
// CHECK-SAME:      #evo.buffer<name = "const0", role = constant, type = memref<16x8xf32>, global = "linear_const0">
// MANIFEST:      "role": "constant"
// MANIFEST:      "file": "linear.constants.bin"
// BYTES: 512 (-2.25, 0.25, -2.0)
func.func @linear(%x: tensor<256x16xf32>) -> tensor<256x8xf32> {
  %w = arith.constant dense<[[-2.25, 0.25, -2.0, 0.5, -1.75, 0.75, -1.5, 1.0], [-1.25, 1.25, -1.0, 1.5, -0.75, 1.75, -0.5, 2.0], [-0.25, 2.25, 0.0, -2.25, 0.25, -2.0, 0.5, -1.75], [0.75, -1.5, 1.0, -1.25, 1.25, -1.0, 1.5, -0.75], [1.75, -0.5, 2.0, -0.25, 2.25, 0.0, -2.25, 0.25], [-2.0, 0.5, -1.75, 0.75, -1.5, 1.0, -1.25, 1.25], [-1.0, 1.5, -0.75, 1.75, -0.5, 2.0, -0.25, 2.25], [0.0, -2.25, 0.25, -2.0, 0.5, -1.75, 0.75, -1.5], [1.0, -1.25, 1.25, -1.0, 1.5, -0.75, 1.75, -0.5], [2.0, -0.25, 2.25, 0.0, -2.25, 0.25, -2.0, 0.5], [-1.75, 0.75, -1.5, 1.0, -1.25, 1.25, -1.0, 1.5], [-0.75, 1.75, -0.5, 2.0, -0.25, 2.25, 0.0, -2.25], [0.25, -2.0, 0.5, -1.75, 0.75, -1.5, 1.0, -1.25], [1.25, -1.0, 1.5, -0.75, 1.75, -0.5, 2.0, -0.25], [2.25, 0.0, -2.25, 0.25, -2.0, 0.5, -1.75, 0.75], [-1.5, 1.0, -1.25, 1.25, -1.0, 1.5, -0.75, 1.75]]> : tensor<16x8xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<256x8xf32>) -> tensor<256x8xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<256x16xf32>, tensor<16x8xf32>) outs(%f : tensor<256x8xf32>) -> tensor<256x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
    ins(%mm : tensor<256x8xf32>) outs(%e : tensor<256x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c0 = arith.constant 0.0 : f32
    %s = arith.maximumf %a, %c0 : f32
    linalg.yield %s : f32
  } -> tensor<256x8xf32>
  return %r : tensor<256x8xf32>
}
