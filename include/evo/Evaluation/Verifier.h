//===- Verifier.h - differential execution of a function's kernels -*- C++ -*-===//
//
// Checks that kernels compute the function they were lowered from, on the GPU, on fresh random
// inputs, and times them honestly (docs/verification.md):
//   * inputs follow the buffer contract: a seed drawn from OS entropy per run (or given, to
//     reproduce one), a different input distribution per trial (uniform in the declared range,
//     normal, wide-range, exact special values; `evo.range` bounds them all); outputs are
//     poisoned before every run; buffers have red zones;
//   * the reference is the oracle (float64 CPU interpreter of the original IR) at sampled output
//     elements, computed once per (task, seed) and kept; variants after a validated reference are
//     also compared element by element with the reference's outputs, on the GPU;
//   * timing: on inputs of their own, CUDA events around the launches only, after warm-up, L2
//     flushed before every run, outputs poisoned before every timed launch and compared after a
//     random subset of them (always the last two), from a fresh module load; judged against the
//     roofline floor.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_EVALUATION_VERIFIER_H
#define EVO_EVALUATION_VERIFIER_H

#include "evo/Dialect/Evo/IR/LaunchPlan.h"
#include "evo/Evaluation/Oracle.h"
#include "evo/Evaluation/Roofline.h"
#include "evo/Evaluation/Supervisor.h"
#include "evo/Evaluation/Tolerances.h"
#include "evo/Runtime/BufferContract.h"
#include "evo/Target/Compile.h"
#include "mlir/IR/OwningOpRef.h"
#include <map>

namespace evo {

struct VerifyOptions {
  unsigned trials = 5;
  /// Seed of the run's inputs; 0 draws a fresh one from OS entropy (FunctionVerifier::getSeed()
  /// says which; pass it back to reproduce the run).
  uint64_t seed = 0;
  /// Output elements sampled per output per trial when checking every element is too costly.
  unsigned maxSamples = 4096;
  /// Oracle work (payload evaluations) allowed per output per trial for sampling.
  double oracleBudget = 5e7;
  /// Every element is checked against the oracle when that costs less than this.
  double fullCheckLimit = 4e6;
  /// Vary the input distribution per trial (uniform, normal, wide, special); false: uniform only.
  bool variedInputs = true;
  bool timing = true;
  unsigned warmup = 10, runs = 100, repeats = 2;
  uint64_t flushBytes = 256ull << 20;
  /// Poison before every timed launch and compare after a random subset (always the last two).
  /// Turned off only to measure what these checks cost.
  bool checkLaunches = true;
  /// Probability that a timed launch (other than the last) is checked; at least `minChecked`
  /// per repeat are.
  double checkFraction = 0.05;
  unsigned minChecked = 5;
  /// Relative tolerance per element kind, sent to the worker with every request.
  std::map<std::string, double> rtol = defaultTolerances();
  /// A median below slack x floor is invalid. The floor is a true lower bound (Roofline.h); the
  /// slack absorbs timing noise and ceilings measured slightly under the device's peak.
  double floorSlack = 0.9;
  int device = 0;
  WorkerOptions worker;
};

/// A scratch buffer of one variant only (numbered after the request's buffers in launches), or
/// one of its tensor maps.
struct VariantScratch {
  std::string name;
  std::string kind;
  uint64_t elements = 0;
  bool zeroInit = false;
  /// A tensor map (128 bytes; `kind` and `elements` unused): its source indexes the request's
  /// buffers, then the variant's scratch, like launch arguments; `tensorMapElementType` is the
  /// source's element type.
  std::optional<TensorMapDesc> tensorMap;
  std::string tensorMapElementType;
};
/// A candidate's "scratch" entry of the worker request: {"name", "kind", "elements",
/// "zero_init"}, or for a tensor map {"name", "role": "tensor_map", "bytes": 128, "tensor_map":
/// {"source", "element_type", "dims", "strides", "box", "swizzle"}} (LaunchPlan.h's form).
/// fromJSON needs "kind" (an element kind, InputGenerator.h) and "elements", or "tensor_map";
/// "name" and "zero_init" are optional, as the worker reads them.
llvm::json::Value toJSON(const VariantScratch &scratch);
bool fromJSON(const llvm::json::Value &value, VariantScratch &scratch, llvm::json::Path path);

/// One way to compute a function: PTX and launches over the function's plan buffers.
struct Variant {
  std::string id;
  std::string ptx;
  llvm::SmallVector<KernelLaunch> launches;
  bool reference = false;
  /// Timed (when timing is on); the naive baseline of evo-verify is checked, not timed.
  bool timeIt = true;
  /// Its own scratch buffers; launch arguments >= the plan's buffer count index them.
  std::vector<VariantScratch> scratch;
};

struct VariantReport {
  std::string id;
  Verdict verdict = Verdict::NotRun;
  std::string reason;
  llvm::json::Object result;
  double medianMs = 0;
  std::optional<RooflineVerdict> roofline;
  /// Filled by verifyFunction: the seed that reproduces the run, elements checked against the
  /// oracle per trial, whether a naive baseline was the reference, the inputs of each trial.
  uint64_t seed = 0;
  uint64_t checkedPerTrial = 0;
  bool baselineReference = false;
  std::vector<std::string> trialInputs;
  TaskCost cost;
  llvm::json::Object toJson() const;
};

/// How one trial's inputs were drawn (one entry per input buffer), after any narrowing to keep
/// the function's results finite and representable.
struct TrialInputs {
  uint64_t seed = 0;
  std::vector<contract::FillParams> fills;
  /// e.g. "normal(0, 1)", "wide(|x| < 16)"; "uniform[-1, 1)".
  std::vector<std::string> descriptions;
};

class FunctionVerifier {
public:
  /// Parses the plan's source, builds the oracle, draws the seed, chooses each trial's input
  /// distributions, picks the checked elements and computes the oracle's values for every trial
  /// and for the timing inputs (in parallel). Diagnostics at `loc`.
  static mlir::FailureOr<std::unique_ptr<FunctionVerifier>>
  create(const LaunchPlan &plan, mlir::MLIRContext *ctx, mlir::Location loc,
         const VerifyOptions &options);

  /// Runs the variants in isolated workers. Timing is judged against `ceilings` when given.
  llvm::Expected<std::vector<VariantReport>> evaluate(llvm::ArrayRef<Variant> variants,
                                                      const Ceilings *ceilings) const;

  const TaskCost &getCost() const { return cost; }
  const LaunchPlan &getPlan() const { return plan; }
  /// The seed of this verifier's inputs (drawn from OS entropy when the options gave 0).
  uint64_t getSeed() const { return seed; }
  /// Output elements checked against the oracle per trial.
  uint64_t getNumChecked() const;
  /// Whether every output element is checked against the oracle (no sampling).
  bool checksAllElements() const { return allElements; }
  /// The inputs of each trial, and of the timing runs.
  llvm::ArrayRef<TrialInputs> getTrialInputs() const { return trialInputs; }
  const TrialInputs &getTimingInputs() const { return timingInputs; }
  /// The request sent to workers (without candidates), for inspection and tests.
  const llvm::json::Object &getRequestTemplate() const { return requestTemplate; }

  /// A candidate the worker found off the reference at a few elements of a trial or of a timing
  /// input set (its result's "disputed" list, WorkerProtocol.h) and at nothing else: the oracle
  /// computes those elements on those inputs (set B regenerated from its seed), and the
  /// candidate is valid if at every one it is within the tolerance of the oracle or no further
  /// from it than the reference. A long chain of f32 ops
  /// (a transformer layer) can be ill-conditioned enough on a trial's inputs that two correct
  /// f32 evaluations differ there (docs/verification.md, "Disputed elements"). Otherwise the
  /// verdict stays invalid, with the oracle's value in the reason. Other outcomes are unchanged.
  void arbitrate(CandidateOutcome &outcome) const;

private:
  FunctionVerifier() = default;
  LaunchPlan plan;
  VerifyOptions options;
  TaskCost cost;
  uint64_t seed = 0;
  bool allElements = false;
  std::vector<TrialInputs> trialInputs;
  TrialInputs timingInputs;
  llvm::json::Object requestTemplate;
  uint64_t numChecked = 0;
  /// For arbitrate(): the oracle, which buffer feeds each argument, each output's name and
  /// tolerance, and the RMS of the oracle's samples per trial and output (the worker's atol basis).
  std::unique_ptr<Oracle> oracle;
  llvm::SmallVector<unsigned> inputBuffers;
  std::vector<std::string> outputNames;
  std::vector<double> outputRtol;
  std::vector<double> outputQuantum; // contract::outputQuantum of each output's kind
  std::vector<std::vector<double>> sampleRms;
  /// The same for the timing inputs' oracle values (set B, same distributions, uses them too).
  std::vector<double> timingSampleRms;
};

/// Which elements of a tensor of `numElements` to check: all of them, or the first and last 32
/// (tails and edges are where indexing bugs live) plus a seeded uniform sample, sorted.
std::vector<uint64_t> chooseSamples(uint64_t numElements, uint64_t count, uint64_t seed);

/// The naive baseline of `plan.source` (evo-lower-to-gpu with default knobs, compiled to PTX with
/// `ptx`) as the reference variant of `plan`: its inputs and outputs are `plan`'s, its scratch
/// its own. Compiled in a private context created from `registry` (NaiveBaseline.cpp).
llvm::Expected<Variant> naiveBaseline(const LaunchPlan &plan, const mlir::DialectRegistry &registry,
                                      const PTXOptions &ptx);

/// Verifies one function's compiled kernels the way evo-verify does: the naive baseline of
/// `plan.source` is the reference (every output element compared on the GPU, itself checked
/// against the oracle's samples), the oracle checks samples of every trial, every timed launch
/// is accountable, seeds are fresh unless `opts.seed` is set. `plan` is the function-level plan
/// (buffers including scratch, launches) and `kernelPtx` the PTX of its kernels. When the
/// baseline cannot be built and the oracle checks every element anyway, the kernels are checked
/// against the oracle alone; otherwise that is an error.
llvm::Expected<VariantReport> verifyFunction(const LaunchPlan &plan, llvm::StringRef kernelPtx,
                                             mlir::MLIRContext *ctx, mlir::Location loc,
                                             const VerifyOptions &opts, const PTXOptions &ptx,
                                             const Ceilings *ceilings);

} // namespace evo

#endif
