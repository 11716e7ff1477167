// An LLM reply is compiled by the kernel pipeline every kernel goes through
// (lib/Target/Compile.cpp), vector lowering included: a reply (test/Evolution/Inputs/fixed-llm
// answering with Inputs/relu_strided_slice.reply) that splits a 256-bit load with
// vector.extract_strided_slice compiles, is evaluated (the stand-in worker times a kernel that
// reads a table named evo_stand_in_fast at 0.5 ms) and wins. Before the kernel pipeline lowered
// vector ops, the reply was a compile-error ("missing `LLVMTranslationDialectInterface` ...
// vector.extract_strided_slice"), repairs included, and the baseline stayed.
//
// REQUIRES: stand-in-worker
// RUN: rm -rf %t && mkdir -p %t
// RUN: env FIXED_LLM_REPLY=%S/Inputs/relu_strided_slice.reply FIXED_LLM_TABLE=evo_stand_in_fast evo-opt %s --evo-lower-to-gpu --evo-evolve="worker=%evo_fake_worker run-dir=%t/run quiet=true strategy=free llm=cmd:%S/Inputs/fixed-llm max-candidates=2 samples=1" -o %t/out.mlir 2>%t/err
// RUN: FileCheck %s --input-file=%t/out.mlir
// RUN: FileCheck %s --input-file=%t/err --check-prefix=REMARK
// RUN: FileCheck %s --input-file=%t/run/report.json --check-prefix=REPORT
// RUN: evo-opt %t/out.mlir --evo-emit-ptx="output-dir=%t/ptx ptxas=none" -o /dev/null
// RUN: FileCheck %s --input-file=%t/ptx/relu.ptx --check-prefix=PTX

// CHECK-LABEL: gpu.module @relu_kernels
// CHECK:         gpu.func @relu_k0(
// CHECK-SAME:      evo.launch = {block = array<i64: 32, 1, 1>, grid = array<i64: 64, 1, 1>}
// CHECK:           vector.extract_strided_slice {{.*}} {offsets = [0], sizes = [4], strides = [1]} : vector<8xf32> to vector<4xf32>
// CHECK:           vector.extract_strided_slice {{.*}} {offsets = [4], sizes = [4], strides = [1]} : vector<8xf32> to vector<4xf32>

// REMARK: remark: evo-evolve: relu_t0: {{.*}} ms -> 0.5000 ms

// REPORT-NOT: "verdict": "compile-error"
// REPORT:     "verdict": "valid"
// REPORT-NOT: "verdict": "compile-error"

// PTX:         .entry relu_k0(
// PTX-COUNT-2:   ld.global.v4.b32
// PTX-COUNT-8:   max.NaN.f32
// PTX-COUNT-2:   st.global.v4.b32
func.func @relu(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %zero = arith.constant dense<0.0> : tensor<64x256xf32>
  %r = arith.maximumf %x, %zero : tensor<64x256xf32>
  return %r : tensor<64x256xf32>
}
