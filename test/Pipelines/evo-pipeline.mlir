// --evo-pipeline = evo-lower-to-gpu + evo-emit-ptx, with the options of both.
// RUN: rm -rf %t && mkdir -p %t
// RUN: evo-opt %s --evo-pipeline="output-dir=%t block-size=128 reduction-strategy=block vector-width=4 ptxas=none" | FileCheck %s
// RUN: FileCheck %s --input-file=%t/softmax.json --check-prefix=MANIFEST
// RUN: FileCheck %s --input-file=%t/softmax.ptx --check-prefix=PTX
// Invalid pipeline options are reported, and nothing is written.
// RUN: rm -rf %t/bad && not evo-opt %s --evo-pipeline="output-dir=%t/bad reduction-strategy=tree" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not ls %t/bad
// reduction-strategy is an enum option: llvm::cl rejects an unknown strategy.
// BAD: for the --reduction-strategy option: Cannot find option named 'tree'!

// CHECK-LABEL: func.func @softmax
// CHECK-SAME:    (%[[X:.*]]: memref<2048x1024xf32>, %[[Y:.*]]: memref<2048x1024xf32>)
// CHECK:         gpu.launch_func @softmax_kernels::@softmax_k0 blocks in (%c2048, %c1, %c1) threads in (%c128, %c1, %c1) args(%[[X]] : memref<2048x1024xf32>, %[[Y]] : memref<2048x1024xf32>)
// CHECK:       gpu.binary @softmax_kernels

// MANIFEST:    "knobs": {
// MANIFEST-NEXT: "block_size": 128,
// MANIFEST-NEXT: "cache_row": 0,
// MANIFEST-NEXT: "reduction": "block",
// MANIFEST-NEXT: "vector_width": 4

// PTX:         .visible .entry softmax_k0(
// PTX:         .maxntid 128, 1, 1
// PTX:         .shared .align 16 .b8 {{.*}}[16];
// PTX:         ld.global.v4.b32
// PTX:         shfl.sync.bfly.b32
// PTX:         bar.sync 0;
// PTX:         st.global.v4.b32
func.func @softmax(%x: tensor<2048x1024xf32>) -> tensor<2048x1024xf32> {
  %e = tensor.empty() : tensor<2048x1024xf32>
  %r = linalg.softmax dimension(1) ins(%x : tensor<2048x1024xf32>) outs(%e : tensor<2048x1024xf32>) -> tensor<2048x1024xf32>
  return %r : tensor<2048x1024xf32>
}
