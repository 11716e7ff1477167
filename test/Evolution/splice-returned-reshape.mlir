// A task whose result the function returns through a reshape writes the output buffer in place
// (lower-to-gpu-views.mlir). The search compiles its variants on the task's own buffers (a
// [N, G, C/G, S] result here), so the spliced winner's parameter is retyped to the output
// buffer and viewed in the task's shape: the evolved module verifies against its plan, passes
// the final re-verification and emits PTX.
//
// REQUIRES: stand-in-worker
// RUN: rm -rf %t && mkdir -p %t
// RUN: evo-opt %s --evo-lower-to-gpu --evo-evolve="worker=%evo_fake_worker run-dir=%t/run max-candidates=6 samples=4 quiet=true" -o %t/out.mlir 2>%t/err
// RUN: FileCheck %s --input-file=%t/out.mlir
// RUN: FileCheck %s --input-file=%t/err --check-prefix=REMARK
// RUN: evo-opt %t/out.mlir --evo-emit-ptx="output-dir=%t/ptx ptxas=none" -o /dev/null
// RUN: FileCheck %s --input-file=%t/ptx/groupnorm.json --check-prefix=MANIFEST

// CHECK:       gpu.module @groupnorm_kernels attributes {evo.evolved = {{.*}}, evo.plan = #evo.plan<func = "groupnorm"
// CHECK-SAME:    #evo.buffer<name = "result0", role = output, type = memref<2x8x16xf32>>
// CHECK-NOT:     memref<2x4x2x16xf32>>
// CHECK-SAME:    tasks = [
// CHECK:         gpu.func @groupnorm_k1({{.*}}, %[[OUT:[^:]*]]: memref<2x8x16xf32>) kernel
// CHECK:           memref.reinterpret_cast %[[OUT]] to offset: [0], sizes: [2, 4, 2, 16], strides: [128, 32, 16, 1] : memref<2x8x16xf32> to memref<2x4x2x16xf32>

// REMARK: 'groupnorm': the emitted kernels passed the final re-verification

// The manifest states one type per buffer: the kernel's last parameter is the output's.
// MANIFEST: "name": "groupnorm_k1"
// MANIFEST: "shape": [
// MANIFEST-NEXT: 2,
// MANIFEST-NEXT: 8,
// MANIFEST-NEXT: 16
// MANIFEST-NEXT: ]

#g5 = affine_map<(n, g, c, s) -> (n, g, c, s)>
#g2 = affine_map<(n, g, c, s) -> (n, g)>
#c3 = affine_map<(n, c, s) -> (n, c, s)>
#ch = affine_map<(n, c, s) -> (c)>
func.func @groupnorm(%x: tensor<2x8x16xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<2x8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 32.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %xe = tensor.expand_shape %x [[0], [1, 2], [3]] output_shape [2, 4, 2, 16] : tensor<2x8x16xf32> into tensor<2x4x2x16xf32>
  %e2 = tensor.empty() : tensor<2x4xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %sum = linalg.generic {indexing_maps = [#g5, #g2], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%xe : tensor<2x4x2x16xf32>) outs(%f2 : tensor<2x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  } -> tensor<2x4xf32>
  %sq = linalg.generic {indexing_maps = [#g5, #g2, #g2], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%xe, %sum : tensor<2x4x2x16xf32>, tensor<2x4xf32>) outs(%f2 : tensor<2x4xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %m = arith.divf %s, %n : f32
    %d = arith.subf %a, %m : f32
    %d2 = arith.mulf %d, %d : f32
    %t = arith.addf %d2, %o : f32
    linalg.yield %t : f32
  } -> tensor<2x4xf32>
  %e5 = tensor.empty() : tensor<2x4x2x16xf32>
  %norm = linalg.generic {indexing_maps = [#g5, #g2, #g2, #g5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%xe, %sum, %sq : tensor<2x4x2x16xf32>, tensor<2x4xf32>, tensor<2x4xf32>) outs(%e5 : tensor<2x4x2x16xf32>) {
  ^bb0(%a: f32, %s: f32, %v: f32, %o: f32):
    %m = arith.divf %s, %n : f32
    %d = arith.subf %a, %m : f32
    %var = arith.divf %v, %n : f32
    %ve = arith.addf %var, %eps : f32
    %r = math.rsqrt %ve : f32
    %y = arith.mulf %d, %r : f32
    linalg.yield %y : f32
  } -> tensor<2x4x2x16xf32>
  %c = tensor.collapse_shape %norm [[0], [1, 2], [3]] : tensor<2x4x2x16xf32> into tensor<2x8x16xf32>
  %e3 = tensor.empty() : tensor<2x8x16xf32>
  %out = linalg.generic {indexing_maps = [#c3, #ch, #ch, #c3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%c, %w, %b : tensor<2x8x16xf32>, tensor<8xf32>, tensor<8xf32>) outs(%e3 : tensor<2x8x16xf32>) {
  ^bb0(%a: f32, %wv: f32, %bv: f32, %o: f32):
    %m = arith.mulf %a, %wv : f32
    %y = arith.addf %m, %bv : f32
    linalg.yield %y : f32
  } -> tensor<2x8x16xf32>
  return %out : tensor<2x8x16xf32>
}
