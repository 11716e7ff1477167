// i1 tensors (torch.bool) are buffers of one byte per element holding 0 or 1: kernels load and
// store them as scalars (LLVM's i1 in memory; NVPTX's ld/st .b8). Vector accesses are refused:
// a vector of i1 is packed bits, not bytes.
// RUN: evo-opt %s -split-input-file -evo-lower-to-gpu | FileCheck %s
// RUN: evo-opt %s -split-input-file -evo-lower-to-gpu -evo-emit-ptx="output-dir=%t" -o /dev/null
// RUN: cat %t/masked_fill.ptx %t/greater.ptx | FileCheck %s --check-prefix=PTX
// RUN: evo-opt %s -split-input-file -evo-lower-to-gpu="vector-width=4" -verify-diagnostics -o /dev/null

// A mask read per element (a masked_fill): the i1 buffer is a kernel parameter.
// CHECK-LABEL: func.func @masked_fill
// CHECK-SAME:    (%{{.*}}: memref<64x256xf32>, %[[M:[^:]*]]: memref<64x256xi1>, %{{.*}}: memref<64x256xf32>)
// CHECK:       gpu.func @masked_fill_k0(%{{[^:]*}}: memref<64x256xf32>, %[[KM:[^:]*]]: memref<64x256xi1>
// CHECK:         %[[B:.*]] = memref.load %[[KM]][%{{.*}}, %{{.*}}] : memref<64x256xi1>
// CHECK:         arith.select %[[B]]
// PTX-LABEL: .entry masked_fill_k0(
// PTX:         ld.global.b8 [[R:%rs[0-9]+]]
// PTX:         and.b16 %{{.*}}, [[R]], 1
// PTX-LABEL: .entry greater_k0(
// PTX:         selp.b16 [[V:%rs[0-9]+]], 1, 0
// PTX:         st.global.b8 [%{{.*}}], [[V]]
#m2 = affine_map<(i, j) -> (i, j)>
func.func @masked_fill(%x: tensor<64x256xf32>, %m: tensor<64x256xi1>) -> tensor<64x256xf32> {
  %big = arith.constant -1.0e4 : f32
  %e = tensor.empty() : tensor<64x256xf32>
  // expected-error @+1 {{vector_width=4 on an i1 buffer (a byte per element in memory, a bit per lane in a vector); i1 buffers take vector_width=1}}
  %y = linalg.generic {indexing_maps = [#m2, #m2, #m2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : tensor<64x256xf32>, tensor<64x256xi1>) outs(%e : tensor<64x256xf32>) {
  ^bb0(%a: f32, %b: i1, %o: f32):
    %v = arith.select %b, %big, %a : f32
    linalg.yield %v : f32
  } -> tensor<64x256xf32>
  return %y : tensor<64x256xf32>
}

// -----

// A comparison's result returned: the output buffer is i1.
// CHECK-LABEL: func.func @greater
// CHECK-SAME:    %[[OUT:[^:]*]]: memref<64x256xi1>)
// CHECK:       gpu.func @greater_k0({{.*}}, %[[KO:[^:]*]]: memref<64x256xi1>)
// CHECK:         %[[C:.*]] = arith.cmpf ogt
// CHECK:         memref.store %[[C]], %[[KO]][%{{.*}}, %{{.*}}] : memref<64x256xi1>
#m2 = affine_map<(i, j) -> (i, j)>
func.func @greater(%x: tensor<64x256xf32>, %y: tensor<64x256xf32>) -> tensor<64x256xi1> {
  %e = tensor.empty() : tensor<64x256xi1>
  // expected-error @+1 {{vector_width=4 on an i1 buffer}}
  %g = linalg.generic {indexing_maps = [#m2, #m2, #m2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %y : tensor<64x256xf32>, tensor<64x256xf32>) outs(%e : tensor<64x256xi1>) {
  ^bb0(%a: f32, %b: f32, %o: i1):
    %c = arith.cmpf ogt, %a, %b : f32
    linalg.yield %c : i1
  } -> tensor<64x256xi1>
  return %g : tensor<64x256xi1>
}
