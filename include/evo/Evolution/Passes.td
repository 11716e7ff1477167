//===- Passes.td - evo-opt evolution passes ----------------*- tablegen -*-===//

#ifndef EVO_EVOLUTION_PASSES
#define EVO_EVOLUTION_PASSES

include "mlir/Pass/PassBase.td"
include "evo/Dialect/Evo/IR/EvoEnums.td"

def EvoEvolvePass : Pass<"evo-evolve", "mlir::ModuleOp"> {
  let summary = "Evolve every task's kernels toward the fastest variant proven equal to it";
  let description = [{
    Runs after evo-lower-to-gpu (and before evo-emit-ptx). For every task of every lowered
    function: the naive baseline seeds the population and is validated against the oracle;
    the built-in mutators (knob mutation and crossover over the lowering's schedule knobs, IR
    rewrites such as loop unrolling) propose variants, compiled on CPU threads while an isolated
    GPU worker verifies and times the previous ones; the best few are re-measured interleaved and
    the winner's kernels (with every symbol they use: helpers, constant tables) replace the
    task's kernels in the gpu.module (the host function is regenerated from the plan). The
    resulting module is compiled and verified once more, as a whole, on fresh inputs with the
    search's protocol (evo-verify's, timed launches checked); if it fails, nothing is written,
    the failing task's winner is recorded invalid, and `resume=true` chooses the next one. Everything is recorded in `run-dir`/run.sqlite, a run killed at
    any moment continues with `resume=true`, and `run-dir`/report.{json,html} summarize it
    (also without a GPU: `evo-opt report RUN_DIR`). docs/evolution.md.
  }];
  let options = [
    Option<"strategy", "strategy", "::evo::SearchStrategy", /*default=*/"::evo::SearchStrategy::Evo",
           "Built-in mutators: evo (elitist population, rank selection), single-best, islands; "
           "LLM (EvoEngineer): free, insight, full, eoh, funsearch (need llm=...)",
           Evo_ClValues<Evo_SearchStrategy>.values>,
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
    Option<"keepWork", "keep-work", "bool", /*default=*/"false",
           "Keep RUN_DIR/work/<task> (candidate binaries, worker files) after a task is done; "
           "by default it is removed then (reports, resume and replay need only the store)">,
    Option<"runTimeBudget", "run-time-budget", "double", /*default=*/"0",
           "Seconds of search for the whole run (0: no limit): each task searches at most its "
           "share of what is left (what is left / tasks left), within time-budget">,
    Option<"seed", "seed", "uint64_t", /*default=*/"1",
           "Seed of the search: which candidates are proposed (not the verifier's inputs)">,
    Option<"verifySeed", "verify-seed", "uint64_t", /*default=*/"0",
           "Seed of the verifier's inputs; 0 (default): drawn from OS entropy once per run and "
           "recorded in the run store (meta verify_seed), reused on resume. The final "
           "re-verification of the emitted module always draws fresh inputs">,
    Option<"runDir", "run-dir", "std::string", /*default=*/"\"evo-run\"",
           "Directory of the run store, reports and work files">,
    Option<"tuningDbOut", "tuning-db-out", "std::string", /*default=*/"\"\"",
           "Also add the run's tuning records (RUN_DIR/tuning.json) to this tuning database, "
           "created if missing; per signature and chip the faster record is kept. Apply with "
           "--evo-lower-to-gpu=tuning-db=FILE">,
    Option<"resume", "resume", "bool", /*default=*/"false", "Continue the run in run-dir">,
    Option<"forceResume", "force-resume", "bool", /*default=*/"false",
           "Resume even if the input or the configuration changed">,
    Option<"replayRun", "replay-run", "std::string", /*default=*/"\"\"",
           "Re-create the candidates of the finished run in this directory, in its order (same "
           "genomes; LLM replies from its cache, no LLM call) and evaluate them afresh">,
    Option<"shard", "shard", "std::string", /*default=*/"\"\"",
           "Evolve only this run's share of the tasks, I/N (0 <= I < N; whole functions where "
           "possible), for `evo-opt runs-merge`; 'all': every task. Empty (default): a Slurm job "
           "array element's (SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN of "
           "SLURM_ARRAY_TASK_COUNT) when set, else all">,
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
    Option<"devices", "devices", "std::string", /*default=*/"\"\"",
           "GPUs to spread the tasks over, one task per GPU at a time: 'all' or ordinals "
           "'0,1,...'; empty (default): `device` alone. Each task is searched and its "
           "finalists re-measured on one GPU">,
    Option<"llm", "llm", "std::string", /*default=*/"\"\"",
           "LLM backend for the LLM strategies: openai, anthropic, cmd:<program> [args] or "
           "mailbox:<dir>">,
    Option<"llmWait", "llm-wait", "double", /*default=*/"0",
           "llm=mailbox:DIR: seconds to wait for replies; 0: checkpoint and exit with status 75 "
           "while prompts are pending (resume=true continues)">,
    Option<"llmModel", "llm-model", "std::string", /*default=*/"\"\"", "Model name">,
    Option<"llmBaseUrl", "llm-base-url", "std::string", /*default=*/"\"\"",
           "Endpoint (default https://api.openai.com/v1, https://api.anthropic.com)">,
    Option<"llmKeyEnv", "llm-key-env", "std::string", /*default=*/"\"\"",
           "Environment variable holding the API key (default OPENAI_API_KEY / ANTHROPIC_API_KEY)">,
    Option<"llmTimeout", "llm-timeout", "double", /*default=*/"60", "Seconds per LLM attempt">,
    Option<"llmRetries", "llm-retries", "unsigned", /*default=*/"4",
           "Retries of a failed LLM call (backoff with jitter, Retry-After honoured)">,
    Option<"llmParallel", "llm-parallel", "unsigned", /*default=*/"4", "LLM calls in flight">,
    Option<"llmTemperature", "llm-temperature", "double", /*default=*/"1.0", "Sampling temperature">,
    Option<"llmMaxTokens", "llm-max-tokens", "int64_t", /*default=*/"::evo::llm::kDefaultMaxTokens",
           "Reply length limit in tokens (16384; lower it for models that allow less)">,
    Option<"llmMaxCalls", "llm-max-calls", "int64_t", /*default=*/"0",
           "Budget: LLM calls for the run (0: none)">,
    Option<"llmMaxTotalTokens", "llm-max-total-tokens", "int64_t", /*default=*/"0",
           "Budget: prompt + completion tokens for the run (0: none)">,
    Option<"llmMaxCost", "llm-max-cost", "double", /*default=*/"0",
           "Budget: cost in the price table's currency (0: none)">,
    Option<"llmPrices", "llm-prices", "std::string", /*default=*/"\"\"",
           "Price table JSON (default: the built-in share/evo-opt/prices.json)">,
    Option<"llmPrompts", "llm-prompts", "std::string", /*default=*/"\"\"",
           "Directory of prompt templates overriding the built-in ones">,
    Option<"llmCache", "llm-cache", "std::string", /*default=*/"\"\"",
           "Response cache directory (default RUN_DIR/llm-cache)">,
    Option<"llmReplay", "llm-replay", "bool", /*default=*/"false",
           "Answer only from the response cache: no LLM call is made">,
    Option<"llmRepairs", "llm-repairs", "unsigned", /*default=*/"1",
           "Repair requests after an unusable reply (diagnostics sent back)">,
    Option<"llmMix", "llm-mix", "double", /*default=*/"0",
           "Share of children made by the built-in mutators in an LLM strategy">,
  ];
}

#endif // EVO_EVOLUTION_PASSES
