// The splice of a winner carries every symbol its kernels use, not only its gpu.funcs: here an
// LLM reply (test/Evolution/Inputs/fixed-llm) whose kernel reads a `memref.global constant`
// table wins both matmul tasks of a function (the stand-in worker times a kernel that reads a
// table named evo_stand_in_fast at 0.5 ms). The two tables share a name: the second is renamed,
// its kernel's reference follows, the module verifies, passes the final re-verification, and
// evo-emit-ptx writes PTX with both tables. Resuming the finished run needs no worker: the
// final check recorded the module's PTX hash.
//
// REQUIRES: stand-in-worker
// DEFINE: %{llm} = env FIXED_LLM_REPLY=%S/Inputs/matmul_table.reply FIXED_LLM_TABLE=evo_stand_in_fast
// DEFINE: %{opts} = quiet=true strategy=free llm=cmd:%S/Inputs/fixed-llm max-candidates=2 samples=1
// RUN: rm -rf %t && mkdir -p %t
// RUN: %{llm} evo-opt %s --evo-lower-to-gpu --evo-evolve="worker=%evo_fake_worker run-dir=%t/run %{opts}" -o %t/out.mlir 2>%t/err
// RUN: FileCheck %s --input-file=%t/out.mlir
// RUN: FileCheck %s --input-file=%t/err --check-prefix=REMARK
// RUN: evo-opt %t/out.mlir --evo-emit-ptx="output-dir=%t/ptx ptxas=none" -o %t/bin.mlir
// RUN: FileCheck %s --input-file=%t/ptx/mm2.ptx --check-prefix=PTX
//
// RUN: %{llm} evo-opt %s --evo-lower-to-gpu --evo-evolve="run-dir=%t/run %{opts} resume=true" -o %t/resumed.mlir 2>%t/err2
// RUN: diff %t/out.mlir %t/resumed.mlir
// RUN: FileCheck %s --input-file=%t/err2 --check-prefix=RESUMED
//
// When the emitted module fails its final re-verification, each task's kernels are verified
// alone to name the culprit: only mm2_t1's winner (whose table is named so that the stand-in
// judges it invalid outside the search) is blamed and recorded invalid; nothing is written, and
// resume=true keeps mm2_t0's winner and gives mm2_t1 its next valid candidate (the baseline).
// RUN: not %{llm} FIXED_LLM_TABLE_mm2_t1=evo_stand_in_fast__evo_stand_in_invalid_final evo-opt %s --evo-lower-to-gpu --evo-evolve="worker=%evo_fake_worker run-dir=%t/one %{opts}" -o %t/one.mlir 2>%t/one.err
// RUN: FileCheck %s --input-file=%t/one.err --check-prefix=ONE
// RUN: not test -e %t/one.mlir
// RUN: %{llm} FIXED_LLM_TABLE_mm2_t1=evo_stand_in_fast__evo_stand_in_invalid_final evo-opt %s --evo-lower-to-gpu --evo-evolve="worker=%evo_fake_worker run-dir=%t/one %{opts} resume=true" -o %t/one.mlir 2>%t/one2.err
// RUN: FileCheck %s --input-file=%t/one.mlir --check-prefix=ONE-OUT

// CHECK-LABEL: gpu.module @mm2_kernels
// CHECK-SAME:    best_ms = 5.000000e-01 : f64, speedup = {{.*}}, task = "mm2_t0"}, {baseline_ms = {{.*}}, best_ms = 5.000000e-01 : f64, speedup = {{.*}}, task = "mm2_t1"}]
// CHECK:         memref.global "private" constant @evo_stand_in_fast : memref<4xf32> = dense<{{.*}}> {evo.task = 0 : i64}
// CHECK:         gpu.func @mm2_k0(
// CHECK:           memref.get_global @evo_stand_in_fast : memref<4xf32>
// CHECK:         memref.global "private" constant @evo_stand_in_fast_0 : memref<4xf32> = dense<{{.*}}> {evo.task = 1 : i64}
// CHECK:         gpu.func @mm2_k1(
// CHECK:           memref.get_global @evo_stand_in_fast_0 : memref<4xf32>
// CHECK-NOT:     gpu.func @k0

// REMARK: remark: evo-evolve: mm2_t0: {{.*}} ms -> 0.5000 ms
// REMARK: remark: evo-evolve: mm2_t1: {{.*}} ms -> 0.5000 ms
// REMARK: remark: evo-evolve: 'mm2': the emitted kernels passed the final re-verification (5 trials on fresh inputs, seed {{[0-9]+}})

// PTX-DAG: .global .align 4 .b8 evo_stand_in_fast[16]
// PTX-DAG: .global .align 4 .b8 evo_stand_in_fast_0[16]
// PTX-DAG: .entry mm2_k0(
// PTX-DAG: .entry mm2_k1(

// ONE-NOT: error: evo-evolve: task 'mm2_t0'
// ONE:     error: evo-evolve: task 'mm2_t1': its winner (candidate {{[0-9]+}}) failed the final re-verification of the emitted module: invalid: 'result0': 5 of 8 elements differ from the reference (stand-in); nothing is written. It is now recorded invalid
// ONE-NOT: error: evo-evolve: task 'mm2_t0'

// ONE-OUT:     memref.global "private" constant @evo_stand_in_fast : memref<4xf32> = dense<{{.*}}> {evo.task = 0 : i64}
// ONE-OUT:     gpu.func @mm2_k0(
// ONE-OUT:       memref.get_global @evo_stand_in_fast
// ONE-OUT-NOT: memref.global
// ONE-OUT:     gpu.func @mm2_k1(
// ONE-OUT-NOT: memref.get_global

// RESUMED: remark: evo-evolve: 'mm2': these kernels passed the final re-verification already (same PTX); not run again

func.func @mm2(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>, %c: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %ab = linalg.matmul ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>) outs(%f : tensor<64x64xf32>) -> tensor<64x64xf32>
  %abc = linalg.matmul ins(%ab, %c : tensor<64x64xf32>, tensor<64x64xf32>) outs(%f : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %abc : tensor<64x64xf32>
}
