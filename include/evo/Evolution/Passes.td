//===- Passes.td - evo-opt evolution passes ----------------*- tablegen -*-===//

#ifndef EVO_EVOLUTION_PASSES
#define EVO_EVOLUTION_PASSES

include "mlir/Pass/PassBase.td"

def EvoEvolvePass : Pass<"evo-evolve", "mlir::ModuleOp"> {
  let summary = "Evolve every task's kernels toward the fastest variant proven equal to it";
  let description = [{
    Runs after evo-lower-to-gpu (and before evo-emit-ptx). For every task of every lowered
    function: the naive baseline seeds the population and is validated against the oracle;
    the built-in mutators (knob mutation and crossover over the lowering's schedule knobs, IR
    rewrites such as loop unrolling) propose variants, compiled on CPU threads while an isolated
    GPU worker verifies and times the previous ones; the best few are re-measured interleaved and
    the winner's kernels replace the task's kernels in the gpu.module (the host function is
    regenerated from the plan). Everything is recorded in `run-dir`/run.sqlite, a run killed at
    any moment continues with `resume=true`, and `run-dir`/report.{json,html} summarize it
    (also without a GPU: `evo-opt report RUN_DIR`). docs/evolution.md.
  }];
  let options = [
    Option<"strategy", "strategy", "std::string", /*default=*/"\"evo\"",
           "evo (elitist population, rank selection), single-best, or islands">,
    Option<"population", "population", "unsigned", /*default=*/"5", "Population size">,
    Option<"samples", "samples", "unsigned", /*default=*/"4", "Offspring per generation">,
    Option<"generations", "generations", "unsigned", /*default=*/"10", "Generations per task">,
    Option<"islands", "islands", "unsigned", /*default=*/"4", "Islands (strategy=islands)">,
    Option<"migrateEvery", "migrate-every", "unsigned", /*default=*/"3",
           "Generations between migrations (strategy=islands)">,
    Option<"maxCandidates", "max-candidates", "unsigned", /*default=*/"0",
           "Candidates per task (0: generations x samples)">,
    Option<"timeBudget", "time-budget", "double", /*default=*/"0",
           "Seconds of search per task (0: no limit)">,
    Option<"seed", "seed", "uint64_t", /*default=*/"1", "Seed of the search (and of the trials)">,
    Option<"runDir", "run-dir", "std::string", /*default=*/"\"evo-run\"",
           "Directory of the run store, reports and work files">,
    Option<"resume", "resume", "bool", /*default=*/"false", "Continue the run in run-dir">,
    Option<"forceResume", "force-resume", "bool", /*default=*/"false",
           "Resume even if the input or the configuration changed">,
    Option<"finalists", "finalists", "unsigned", /*default=*/"4", "Re-measured candidates">,
    Option<"finalRounds", "final-rounds", "unsigned", /*default=*/"5", "Interleaved rounds">,
    Option<"finalRuns", "final-runs", "unsigned", /*default=*/"100", "Timed runs per round">,
    Option<"trials", "trials", "unsigned", /*default=*/"5", "Correctness trials per candidate">,
    Option<"runs", "runs", "unsigned", /*default=*/"30", "Timed runs per candidate while searching">,
    Option<"warmup", "warmup", "unsigned", /*default=*/"5", "Untimed runs first">,
    Option<"timeout", "timeout", "double", /*default=*/"30", "Seconds a candidate may take">,
    Option<"worker", "worker", "std::string", /*default=*/"\"\"", "evo-eval-worker path">,
    Option<"compileThreads", "compile-threads", "unsigned", /*default=*/"0",
           "Compile threads (0: one per core)">,
    Option<"quiet", "quiet", "bool", /*default=*/"false", "No live progress line">,
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90\"", "Target SM">,
    Option<"features", "features", "std::string", /*default=*/"\"+ptx80\"", "PTX ISA">,
    Option<"ptxas", "ptxas", "std::string", /*default=*/"\"\"", "ptxas (default: found)">,
    Option<"device", "device", "int", /*default=*/"0", "CUDA device ordinal">,
    Option<"standInWorker", "stand-in-worker", "bool", /*default=*/"false",
           "Tests only: `worker` is a stand-in that needs no GPU (no driver check, no roofline); "
           "its verdicts and times are whatever it reports">,
  ];
}

#endif // EVO_EVOLUTION_PASSES
