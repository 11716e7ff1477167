// chips= (evo-emit-ptx, --evo-pipeline): one PTX for the lowest chip, a cubin per chip that
// ptxas assembles from it, every file listed in the manifest with its size and sha256; the
// loaders choose a GPU's image from them. A kernel that cannot run on one of the chips is a
// diagnostic naming the kernel and the chip; a name two input chunks share is refused and leaves
// the files of an earlier run as they were.
//
// REQUIRES: ptxas, split-file
// RUN: rm -rf %t && split-file %s %t
//
// 1. Two functions, chips given highest first: the PTX is for sm_80, the binaries keep the order.
// RUN: evo-opt %t/two.mlir -split-input-file -evo-lower-to-gpu -evo-emit-ptx="output-dir=%t/out chips=sm_90a,sm_80" | FileCheck %t/two.mlir
// RUN: ls %t/out | FileCheck %s --check-prefix=FILES
// FILES:      add.json
// FILES-NEXT: add.ptx
// FILES-NEXT: add.sm_80.cubin
// FILES-NEXT: add.sm_90a.cubin
// FILES-NEXT: row_sum.json
// FILES-NEXT: row_sum.ptx
// FILES-NEXT: row_sum.sm_80.cubin
// FILES-NEXT: row_sum.sm_90a.cubin
// FILES-NOT:  {{.}}
// RUN: FileCheck %s --input-file=%t/out/row_sum.json --check-prefix=MANIFEST
// MANIFEST:      "binaries": [
// MANIFEST-NEXT:   {
// MANIFEST-NEXT:     "bytes": {{[1-9][0-9]*}},
// MANIFEST-NEXT:     "chip": "sm_90a",
// MANIFEST-NEXT:     "file": "row_sum.sm_90a.cubin",
// MANIFEST-NEXT:     "sha256": "{{[0-9a-f]+}}"
// MANIFEST-NEXT:   },
// MANIFEST-NEXT:   {
// MANIFEST-NEXT:     "bytes": {{[1-9][0-9]*}},
// MANIFEST-NEXT:     "chip": "sm_80",
// MANIFEST-NEXT:     "file": "row_sum.sm_80.cubin",
// MANIFEST-NEXT:     "sha256": "{{[0-9a-f]+}}"
// MANIFEST-NEXT:   }
// MANIFEST-NEXT: ],
// MANIFEST:      "ptx": {
// MANIFEST-NEXT:   "bytes": {{[1-9][0-9]*}},
// MANIFEST-NEXT:   "file": "row_sum.ptx",
// MANIFEST:      "ptxas": {
// MANIFEST-NEXT:   "arch": "sm_80",
// MANIFEST:      "target": {
// MANIFEST-NEXT:   "chip": "sm_80",
// MANIFEST-NEXT:   "chips": [
// MANIFEST-NEXT:     "sm_90a",
// MANIFEST-NEXT:     "sm_80"
// MANIFEST-NEXT:   ],
// MANIFEST-NEXT:   "features": "+ptx80"
// RUN: FileCheck %s --input-file=%t/out/row_sum.ptx --check-prefix=PTX
// PTX: .version 8.0
// PTX: .target sm_80
// PTX: .visible .entry row_sum_k0(
//
// The cubins are what ptxas makes of that PTX for each chip (evo-emit-ptx runs ptxas -v -O3),
// so they are ptxas-valid for their chip; the two differ.
// RUN: %ptxas -arch=sm_80 -v -O3 %t/out/row_sum.ptx -o %t/sm_80.cubin > %t/ptxas.log 2>&1
// RUN: cmp %t/sm_80.cubin %t/out/row_sum.sm_80.cubin
// RUN: %ptxas -arch=sm_90a -v -O3 %t/out/row_sum.ptx -o %t/sm_90a.cubin > %t/ptxas.log 2>&1
// RUN: cmp %t/sm_90a.cubin %t/out/row_sum.sm_90a.cubin
// RUN: not cmp -s %t/out/row_sum.sm_80.cubin %t/out/row_sum.sm_90a.cubin
//
// The Python loader checks every file against the manifest, and chooses per GPU: the cubin of
// that chip, one of its major version, the PTX (JIT) on newer GPUs, nothing on older ones.
// RUN: %python %S/Inputs/choose_image.py %t/out/row_sum.json 9.0 8.0 8.6 12.0 7.5 | FileCheck %s --check-prefix=CHOOSE
// CHOOSE:      sm_90a: row_sum.sm_90a.cubin {{[0-9]+}} bytes, ELF True
// CHOOSE-NEXT: sm_80: row_sum.sm_80.cubin {{[0-9]+}} bytes, ELF True
// CHOOSE-NEXT: sm_90: cubin sm_90a row_sum.sm_90a.cubin
// CHOOSE-NEXT: sm_80: cubin sm_80 row_sum.sm_80.cubin
// CHOOSE-NEXT: sm_86: cubin sm_80 row_sum.sm_80.cubin
// CHOOSE-NEXT: sm_120: ptx sm_80 row_sum.ptx
// CHOOSE-NEXT: sm_75: row_sum: no kernel image runs on this GPU (sm_75): the cubins are for sm_90a, sm_80 and the PTX is for sm_80 (needs sm_80 or newer)
//
// --evo-pipeline takes chips= too.
// RUN: evo-opt %t/one.mlir --evo-pipeline="output-dir=%t/pipe chips=sm_80,sm_120" -o /dev/null
// RUN: ls %t/pipe | FileCheck %s --check-prefix=PIPE
// PIPE:      same.json
// PIPE-NEXT: same.ptx
// PIPE-NEXT: same.sm_120.cubin
// PIPE-NEXT: same.sm_80.cubin
//
// 2. Two input chunks whose functions share a name: the second is refused, nothing is written,
//    and the files an earlier run wrote keep their content.
// RUN: evo-opt %t/one.mlir --evo-pipeline="output-dir=%t/dup chips=sm_80,sm_90a" -o /dev/null
// RUN: cp -R %t/dup %t/before
// RUN: not evo-opt %t/same-name.mlir -split-input-file --evo-pipeline="output-dir=%t/dup chips=sm_80,sm_90a" -o /dev/null 2>&1 | FileCheck %s --check-prefix=DUP
// DUP: same-name.mlir:{{[0-9]+}}:1: error: evo-emit-ptx: '{{.*}}dup{{/|\\}}same.ptx' is written twice by this invocation (two gpu.modules or two input chunks share a name, compared without case)
// RUN: diff -r %t/before %t/dup
// RUN: ls -A %t/dup | FileCheck %s --check-prefix=NO-TEMP
// NO-TEMP-NOT: .tmp-
// The same in a fresh directory: nothing at all appears.
// RUN: not evo-opt %t/same-name.mlir -split-input-file --evo-pipeline="output-dir=%t/fresh chips=sm_80,sm_90a" -o /dev/null
// RUN: not ls %t/fresh
//
// 3. A tensor-core (wgmma, sm_90a only) kernel for chips that include sm_80: refused, naming the
//    kernel and the chip, before anything is compiled; alone for sm_90a it is emitted.
// RUN: not evo-opt %t/mm16.mlir --evo-pipeline="output-dir=%t/wg chips=sm_80,sm_90a tile-sizes=128,128,64 wgmma=1 stages=4" -o /dev/null 2>&1 | FileCheck %s --check-prefix=WGMMA --implicit-check-not="LLVM ERROR"
// WGMMA: error: evo-emit-ptx: kernel 'mm16_k0' cannot run on sm_80: 'nvvm.wgmma.fence.aligned' needs sm_90a (chips=sm_80,sm_90a)
// RUN: not ls %t/wg
// RUN: evo-opt %t/mm16.mlir --evo-pipeline="output-dir=%t/wg chips=sm_90a tile-sizes=128,128,64 wgmma=1 stages=4" -o /dev/null
// RUN: ls %t/wg | FileCheck %s --check-prefix=WG-OK
// WG-OK:      mm16.json
// WG-OK-NEXT: mm16.ptx
// WG-OK-NEXT: mm16.sm_90a.cubin

//--- two.mlir
// CHECK-LABEL: func.func @row_sum
// CHECK:       gpu.binary @row_sum_kernels {{.*}}#nvvm.target<O = 3, chip = "sm_80", features = "+ptx80">
func.func @row_sum(%x: tensor<256x512xf32>) -> tensor<256xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<256xf32>) -> tensor<256xf32>
  %r = linalg.reduce ins(%x : tensor<256x512xf32>) outs(%acc : tensor<256xf32>) dimensions = [1]
    (%in: f32, %init: f32) {
      %s = arith.addf %in, %init : f32
      linalg.yield %s : f32
    }
  return %r : tensor<256xf32>
}

// -----

// CHECK-LABEL: func.func @add
// CHECK:       gpu.binary @add_kernels {{.*}}#nvvm.target<O = 3, chip = "sm_80", features = "+ptx80">
func.func @add(%a: tensor<1024xf32>, %b: tensor<1024xf32>) -> tensor<1024xf32> {
  %e = tensor.empty() : tensor<1024xf32>
  %r = linalg.add ins(%a, %b : tensor<1024xf32>, tensor<1024xf32>) outs(%e : tensor<1024xf32>) -> tensor<1024xf32>
  return %r : tensor<1024xf32>
}

//--- one.mlir
func.func @same(%x: tensor<16xf32>) -> tensor<16xf32> {
  %e = tensor.empty() : tensor<16xf32>
  %r = linalg.exp ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  return %r : tensor<16xf32>
}

//--- same-name.mlir
func.func @same(%x: tensor<16xf32>) -> tensor<16xf32> {
  %e = tensor.empty() : tensor<16xf32>
  %r = linalg.exp ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  return %r : tensor<16xf32>
}
// -----
func.func @same(%x: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %r = linalg.negf ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  return %r : tensor<8xf32>
}

//--- mm16.mlir
func.func @mm16(%a: tensor<512x256xf16>, %b: tensor<256x384xf16>) -> tensor<512x384xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<512x384xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%e : tensor<512x384xf16>) -> tensor<512x384xf16>
  %c = linalg.matmul ins(%a, %b : tensor<512x256xf16>, tensor<256x384xf16>)
                     outs(%acc : tensor<512x384xf16>) -> tensor<512x384xf16>
  return %c : tensor<512x384xf16>
}
