// Nothing unchecked wins and nothing invalid is emitted, with the stand-in worker's cheats
// (test/tools/evo-fake-worker/FakeWorker.cpp reads markers in the name of the constant table the LLM reply's
// kernel reads, test/Evolution/Inputs/fixed-llm):
//  * a finalist-only cheat (valid and fast while searching, invalid when the finalists are
//    re-measured) is recorded invalid and the baseline wins;
//  * a cheat that passes the search and the re-measurement but fails the final
//    re-verification of the emitted module: evo-evolve fails naming the task, the candidate and
//    the reason, writes no output, records the winner invalid; resume=true then picks the next
//    valid candidate (here the baseline), verifies it and writes the module.
//
// REQUIRES: stand-in-worker
// DEFINE: %{evolve} = evo-opt %s --evo-lower-to-gpu --evo-evolve="worker=%evo_fake_worker quiet=true strategy=free llm=cmd:%S/Inputs/fixed-llm max-candidates=2 samples=1
// DEFINE: %{llm} = env FIXED_LLM_REPLY=%S/Inputs/relu_table.reply
// RUN: rm -rf %t && mkdir -p %t
//
// RUN: %{llm} FIXED_LLM_TABLE=evo_stand_in_fast__evo_stand_in_invalid_time %{evolve} run-dir=%t/time" -o %t/time.mlir 2>%t/time.err
// RUN: FileCheck %s --input-file=%t/time.mlir --check-prefix=BASELINE
// RUN: FileCheck %s --input-file=%t/time/report.json --check-prefix=TIME
//
// RUN: not %{llm} FIXED_LLM_TABLE=evo_stand_in_fast__evo_stand_in_invalid_final %{evolve} run-dir=%t/final" -o %t/final.mlir 2>%t/final.err
// RUN: FileCheck %s --input-file=%t/final.err --check-prefix=FINAL
// RUN: not test -e %t/final.mlir
// RUN: FileCheck %s --input-file=%t/final/report.json --check-prefix=FINAL-REPORT
// RUN: %{llm} FIXED_LLM_TABLE=evo_stand_in_fast__evo_stand_in_invalid_final %{evolve} run-dir=%t/final resume=true" -o %t/final.mlir 2>%t/resume.err
// RUN: FileCheck %s --input-file=%t/final.mlir --check-prefix=BASELINE
// RUN: FileCheck %s --input-file=%t/resume.err --check-prefix=RESUME

// BASELINE-LABEL: gpu.module @relu_kernels
// BASELINE-NOT:   memref.global
// BASELINE:       gpu.func @relu_k0(
// BASELINE-NOT:   memref.get_global

// TIME:      "invalid_reasons": [
// TIME-NEXT:   {
// TIME-NEXT:     "count": 1,
// TIME-NEXT:     "example": "finalists' re-measurement: 'result0': 8 of 8 elements wrong on timed launch 37 of 100 (stand-in)",

// FINAL:     remark: evo-evolve: relu_t0: {{.*}} ms -> 0.5000 ms
// FINAL:     error: evo-evolve: task 'relu_t0': its winner (candidate [[ID:[0-9]+]]) failed the final re-verification of the emitted module: invalid: 'result0': 5 of 8 elements differ from the reference (stand-in); nothing is written. It is now recorded invalid: run again with resume=true to choose the next valid candidate
// FINAL-NOT: see current operation

// FINAL-REPORT: "example": "final re-verification of the emitted module: invalid: 'result0': 5 of 8 elements differ from the reference (stand-in)",
// FINAL-REPORT: "status": "running",

// RESUME: remark: evo-evolve: 'relu': the emitted kernels passed the final re-verification

func.func @relu(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x256xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<64x256xf32>) outs(%e : tensor<64x256xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.maximumf %v, %z : f32
    linalg.yield %m : f32
  } -> tensor<64x256xf32>
  return %r : tensor<64x256xf32>
}
