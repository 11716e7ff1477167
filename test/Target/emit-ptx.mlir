// RUN: rm -rf %t && mkdir -p %t
// RUN: evo-opt %s -split-input-file -evo-lower-to-gpu="vector-width=4" -evo-emit-ptx="output-dir=%t ptxas=none" | FileCheck %s
// RUN: FileCheck %s --input-file=%t/relu.ptx --check-prefix=PTX
// RUN: FileCheck %s --input-file=%t/relu.json --check-prefix=MANIFEST
// RUN: FileCheck %s --input-file=%t/row_sum.ptx --check-prefix=PTX-WARP
// RUN: FileCheck %s --input-file=%t/handwritten.json --check-prefix=HANDWRITTEN
// With ptxas, the manifest records what it reports for each kernel.
// RUN: %if ptxas %{ rm -rf %t/asm && evo-opt %s -split-input-file -evo-lower-to-gpu -evo-emit-ptx="output-dir=%t/asm" -o /dev/null %}
// RUN: %if ptxas %{ FileCheck %s --input-file=%t/asm/row_sum.json --check-prefix=RESOURCES %}

// The gpu.module becomes a gpu.binary holding the PTX; the plan moves onto it and the host
// function keeps launching the same kernels.

// CHECK-LABEL: func.func @relu
// CHECK:         gpu.launch_func @relu_kernels::@relu_k0
// CHECK:       gpu.binary @relu_kernels {evo.plan = #evo.plan<func = "relu", source = "func.func @relu(
// CHECK-SAME:    [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">
// CHECK-SAME:    assembly = "
// CHECK-NOT:   gpu.module

// PTX:         .version 8.0
// PTX:         .target sm_90
// PTX:         .visible .entry relu_k0(
// PTX-NEXT:      .param .u64 .ptr .align 1 relu_k0_param_0,
// PTX-NEXT:      .param .u64 .ptr .align 1 relu_k0_param_1
// PTX-NEXT:    )
// PTX-NEXT:    .maxntid 256, 1, 1
// vector-width=4 on f32 gives 128-bit accesses.
// PTX:           ld.global.v4.b32
// PTX-COUNT-4:   max.NaN.f32
// PTX:           st.global.v4.b32

// MANIFEST:      "buffers": [
// MANIFEST:          "bytes": 4194304,
// MANIFEST-NEXT:     "dtype": "f32",
// MANIFEST-NEXT:     "index": 0,
// MANIFEST-NEXT:     "name": "arg0",
// MANIFEST-NEXT:     "role": "input",
// MANIFEST-NEXT:     "shape": [
// MANIFEST-NEXT:       1024,
// MANIFEST-NEXT:       1024
// MANIFEST-NEXT:     ],
// MANIFEST:          "name": "result0",
// MANIFEST-NEXT:     "role": "output",
// MANIFEST:      "format": "evo-manifest/1",
// MANIFEST:      "function": "relu",
// MANIFEST:      "kernels": [
// MANIFEST:          "knobs": {
// MANIFEST-NEXT:       "block_size": 256,
// MANIFEST-NEXT:       "elements_per_thread": 1,
// MANIFEST-NEXT:       "transpose_tile": 0,
// MANIFEST-NEXT:       "vector_width": 4
// MANIFEST-NEXT:     },
// MANIFEST-NEXT:     "name": "relu_k0",
// MANIFEST:          "resources": null
// MANIFEST:      "launches": [
// MANIFEST-NEXT:   {
// MANIFEST-NEXT:     "args": [
// MANIFEST-NEXT:       0,
// MANIFEST-NEXT:       1
// MANIFEST-NEXT:     ],
// MANIFEST-NEXT:     "block": [
// MANIFEST-NEXT:       256,
// MANIFEST-NEXT:       1,
// MANIFEST-NEXT:       1
// MANIFEST-NEXT:     ],
// MANIFEST-NEXT:     "dynamic_shared_memory": 0,
// MANIFEST-NEXT:     "grid": [
// MANIFEST-NEXT:       1024,
// MANIFEST-NEXT:       1,
// MANIFEST-NEXT:       1
// MANIFEST-NEXT:     ],
// MANIFEST-NEXT:     "kernel": "relu_k0",
// MANIFEST-NEXT:     "task": 0
// MANIFEST:      "ptx": {
// MANIFEST-NEXT:   "bytes": {{[0-9]+}},
// MANIFEST-NEXT:   "file": "relu.ptx",
// MANIFEST-NEXT:   "sha256": "{{[0-9a-f]+}}"
// MANIFEST:      "ptxas": null,
// MANIFEST:      "target": {
// MANIFEST-NEXT:   "chip": "sm_90",
// MANIFEST-NEXT:   "features": "+ptx80"
func.func @relu(%x: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1024x1024xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<1024x1024xf32>) outs(%e : tensor<1024x1024xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1024x1024xf32>
  return %r : tensor<1024x1024xf32>
}

// -----

// A warp reduction's gpu.shuffle becomes shfl.sync.

// CHECK-LABEL: func.func @row_sum
// PTX-WARP:    .visible .entry row_sum_k0(
// PTX-WARP:      shfl.sync.bfly.b32 {{.*}}, 16, 31, -1;
// PTX-WARP:      shfl.sync.bfly.b32 {{.*}}, 1, 31, -1;
// RESOURCES:   "name": "row_sum_k0",
// RESOURCES:   "resources": {
// RESOURCES-NEXT: "barriers": 0,
// RESOURCES-NEXT: "registers": {{[1-9][0-9]*}},
// RESOURCES-NEXT: "shared_memory": 0,
// RESOURCES-NEXT: "spill_loads": 0,
// RESOURCES-NEXT: "spill_stores": 0,
// RESOURCES-NEXT: "stack_frame": 0
// RESOURCES:   "ptxas": {
// RESOURCES-NEXT: "arch": "sm_90",
// RESOURCES-NEXT: "path": "{{.*}}ptxas"
func.func @row_sum(%x: tensor<256x512xf32>) -> tensor<256xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<256xf32>) -> tensor<256xf32>
  %r = linalg.reduce ins(%x : tensor<256x512xf32>) outs(%acc : tensor<256xf32>) dimensions = [1]
         {evo.knobs = {reduction = "warp"}}
    (%in: f32, %init: f32) {
      %s = arith.addf %in, %init : f32
      linalg.yield %s : f32
    }
  return %r : tensor<256xf32>
}

// -----

// A gpu.module written by hand (no evo.plan) is emitted under its own name; its manifest lists
// its kernels but no launches.

// CHECK-LABEL: gpu.binary @handwritten
// HANDWRITTEN:   "buffers": [],
// HANDWRITTEN:   "name": "scale",
// HANDWRITTEN:   "params": [
// HANDWRITTEN:       "dtype": "f16",
// HANDWRITTEN-NEXT:  "shape": [
// HANDWRITTEN-NEXT:    64
// HANDWRITTEN:   "launches": [],
// HANDWRITTEN:   "name": "handwritten",
module attributes {gpu.container_module} {
  gpu.module @handwritten {
    gpu.func @scale(%x: memref<64xf16>) kernel {
      %i = gpu.thread_id x
      %v = memref.load %x[%i] : memref<64xf16>
      %w = arith.addf %v, %v : f16
      memref.store %w, %x[%i] : memref<64xf16>
      gpu.return
    }
  }
}
