// Chips the NVPTX backend cannot serve are diagnostics before anything is compiled: never an
// LLVM ERROR (chip=sm_120 with the default +ptx80 used to abort the process), never a file.

// RUN: rm -rf %t && mkdir -p %t
// A chip newer than the PTX version asked for (sm_120 needs PTX ISA 8.7): chip= and chips=.
// RUN: not evo-opt %s -evo-lower-to-gpu -evo-emit-ptx="output-dir=%t/a chip=sm_120" 2>&1 | FileCheck %s --check-prefix=PTX-VERSION --implicit-check-not="LLVM ERROR"
// RUN: not evo-opt %s --evo-pipeline="output-dir=%t/a chips=sm_120" 2>&1 | FileCheck %s --check-prefix=PTX-VERSION --implicit-check-not="LLVM ERROR"
// PTX-VERSION: error: evo-emit-ptx: chip sm_120 needs PTX ISA 8.7 or newer, but features='+ptx80' asks for 8.0: pass features=+ptx87
// RUN: not ls %t/a
// ... with that version it is emitted (PTX only: no ptxas needed).
// RUN: evo-opt %s -evo-lower-to-gpu -evo-emit-ptx="output-dir=%t/b chip=sm_120 features=+ptx87 ptxas=none" -o /dev/null
// RUN: FileCheck %s --input-file=%t/b/row_sum.ptx --check-prefix=SM120
// SM120: .version 8.7
// SM120: .target sm_120
// Chips NVPTX does not know, or no chip at all; in a list too.
// RUN: not evo-opt %s --evo-pipeline="output-dir=%t/c chips=sm_999" 2>&1 | FileCheck %s --check-prefix=UNKNOWN --implicit-check-not="LLVM ERROR" -DCHIP=sm_999
// RUN: not evo-opt %s --evo-pipeline="output-dir=%t/c chips=sm_80,garbage" 2>&1 | FileCheck %s --check-prefix=UNKNOWN --implicit-check-not="LLVM ERROR" -DCHIP=garbage
// RUN: not evo-opt %s --evo-pipeline="output-dir=%t/c chip=sm_90x" 2>&1 | FileCheck %s --check-prefix=UNKNOWN --implicit-check-not="LLVM ERROR" -DCHIP=sm_90x
// UNKNOWN: error: evo-emit-ptx: chip '[[CHIP]]' is not one the NVPTX backend of LLVM {{[0-9.]+}} knows (sm_20, {{.*}}, sm_80, {{.*}}, sm_90, sm_90a, {{.*}})
// RUN: not ls %t/c
// A list ptxas cannot serve from one PTX (PTX for sm_90a assembles for sm_90a only), a chip
// twice, a list without ptxas, a feature NVPTX does not have.
// RUN: not evo-opt %s --evo-pipeline="output-dir=%t/d chips=sm_100a,sm_90a" 2>&1 | FileCheck %s --check-prefix=ARCH
// ARCH: error: evo-emit-ptx: chips=sm_100a,sm_90a: the PTX is written for the lowest chip, sm_90a, and ptxas cannot assemble PTX for sm_90a into a cubin for sm_100a (PTX for an sm_XYa chip runs on that chip only: list it alone)
// RUN: not evo-opt %s --evo-pipeline="output-dir=%t/d chips=sm_80,sm_90,sm_80" 2>&1 | FileCheck %s --check-prefix=TWICE
// TWICE: error: evo-emit-ptx: chips= names sm_80 twice
// RUN: not evo-opt %s --evo-pipeline="output-dir=%t/d chips=sm_80,sm_90a ptxas=none" 2>&1 | FileCheck %s --check-prefix=NO-PTXAS
// NO-PTXAS: error: evo-emit-ptx: chips= needs ptxas to assemble a cubin per chip (ptxas=none); give ptxas=<path> or use chip=
// RUN: not evo-opt %s --evo-pipeline="output-dir=%t/d features=+ptx80,+fast" 2>&1 | FileCheck %s --check-prefix=FEATURE
// FEATURE: error: evo-emit-ptx: features: '+fast' is not an NVPTX feature (+ptxNN names the PTX ISA version, e.g. +ptx80)
// RUN: not ls %t/d

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
