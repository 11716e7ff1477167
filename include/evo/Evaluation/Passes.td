//===- Passes.td - evo-opt evaluation passes ---------------*- tablegen -*-===//

#ifndef EVO_EVALUATION_PASSES
#define EVO_EVALUATION_PASSES

include "mlir/Pass/PassBase.td"

def EvoVerifyPass : Pass<"evo-verify", "mlir::ModuleOp"> {
  let summary = "Run the module's kernels on the GPU and prove them equal to their source";
  let description = [{
    For every `gpu.binary` carrying an `evo.plan` (i.e. after evo-emit-ptx), runs the kernels in
    an isolated evo-eval-worker process on fresh seeded random inputs (`trials` of them, each
    with its own input distribution, outputs poisoned, buffers guarded by red zones) and compares
    every output element with the naive baseline of the function's source run on the same
    inputs (itself checked against the oracle, a float64 CPU interpreter of the source IR, at
    sampled or all elements); then, from a fresh module load, times the kernels on inputs of
    their own (events, warm-up, L2 flushed, median of `runs`, twice; outputs poisoned before
    every timed launch and compared after a random subset of them, always the last) and judges
    the time against the roofline floor of the device's measured ceilings.

    Each binary gets an `evo.verify` attribute with the verdict and numbers, and a remark; an
    invalid, crashed or timed-out kernel is an error at the binary (and the pass fails unless
    `fail-on-invalid=false`). `output` names a JSON file for the full report. Without a GPU the
    pass fails with a diagnostic saying so. See docs/verification.md.
  }];
  let options = [
    Option<"trials", "trials", "unsigned", /*default=*/"5", "Runs on fresh inputs (one seed each)">,
    Option<"seed", "seed", "uint64_t", /*default=*/"0",
           "Seed of the inputs (0: a fresh one from OS entropy; the report says which, and "
           "seed=N reproduces a run)">,
    Option<"samples", "samples", "unsigned", /*default=*/"4096",
           "Most output elements checked against the oracle per output and trial">,
    Option<"tolerances", "tolerances", "std::string", /*default=*/"\"\"",
           "Relative tolerances per element kind overriding share/evo-opt/tolerances.json, "
           "e.g. \"f32=2e-4,bf16=2e-2\"">,
    Option<"timing", "timing", "bool", /*default=*/"true", "Time valid kernels">,
    Option<"checkLaunches", "check-launches", "bool", /*default=*/"true",
           "Poison before every timed launch and compare every output element after a random "
           "subset of them (off only to measure what the checks cost)">,
    Option<"runs", "runs", "unsigned", /*default=*/"100", "Timed runs per repeat">,
    Option<"warmup", "warmup", "unsigned", /*default=*/"10", "Untimed runs first">,
    Option<"timeout", "timeout", "double", /*default=*/"60", "Seconds one kernel may take before its worker is killed">,
    Option<"worker", "worker", "std::string", /*default=*/"\"\"", "evo-eval-worker path (default: next to evo-opt)">,
    Option<"output", "output", "std::string", /*default=*/"\"\"", "Write the JSON report here">,
    Option<"device", "device", "int", /*default=*/"0", "CUDA device ordinal">,
    Option<"failOnInvalid", "fail-on-invalid", "bool", /*default=*/"true",
           "An invalid kernel fails the pass (else only reported)">,
  ];
}

#endif // EVO_EVALUATION_PASSES
