//===- Verifier.h - differential execution of a function's kernels -*- C++ -*-===//
//
// Checks that kernels compute the function they were lowered from, on the GPU, on fresh random
// inputs, and times them honestly (docs/verification.md):
//   * inputs follow the buffer contract (seeded, per-argument ranges from `evo.range`), a fresh
//     seed per trial; outputs are poisoned before every run; buffers have red zones;
//   * the reference is the oracle (float64 CPU interpreter of the original IR) at sampled output
//     elements, computed once per (task, seed) and kept; variants after a validated reference are
//     also compared element by element with the reference's outputs, on the GPU;
//   * timing: CUDA events around the launches only, after warm-up, L2 flushed before every run,
//     median of many runs, twice; judged against the roofline floor.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_EVALUATION_VERIFIER_H
#define EVO_EVALUATION_VERIFIER_H

#include "evo/Conversion/LaunchPlan.h"
#include "evo/Evaluation/Oracle.h"
#include "evo/Evaluation/Roofline.h"
#include "evo/Evaluation/Supervisor.h"
#include "mlir/IR/OwningOpRef.h"
#include <map>

namespace evo {

struct VerifyOptions {
  unsigned trials = 5;
  uint64_t seed = 1;
  /// Output elements sampled per output per trial when checking every element is too costly.
  unsigned maxSamples = 4096;
  /// Oracle work (payload evaluations) allowed per output per trial for sampling.
  double oracleBudget = 5e7;
  /// Every element is checked against the oracle when that costs less than this.
  double fullCheckLimit = 4e6;
  bool timing = true;
  unsigned warmup = 10, runs = 100, repeats = 2;
  uint64_t flushBytes = 256ull << 20;
  /// Relative tolerance per element kind ("f32", "f16", ...); defaults in the worker.
  std::map<std::string, double> rtol;
  double floorSlack = 0.9;
  int device = 0;
  WorkerOptions worker;
};

/// One way to compute a function: PTX and launches over the function's plan buffers.
struct Variant {
  std::string id;
  std::string ptx;
  llvm::SmallVector<KernelLaunch> launches;
  bool reference = false;
};

struct VariantReport {
  std::string id;
  Verdict verdict = Verdict::NotRun;
  std::string reason;
  llvm::json::Object result;
  double medianMs = 0;
  std::optional<RooflineVerdict> roofline;
  llvm::json::Object toJson() const;
};

class FunctionVerifier {
public:
  /// Parses the plan's source, builds the oracle, picks the checked elements and computes the
  /// oracle's values for every trial seed (in parallel). Diagnostics at `loc`.
  static mlir::FailureOr<std::unique_ptr<FunctionVerifier>>
  create(const LaunchPlan &plan, mlir::MLIRContext *ctx, mlir::Location loc,
         const VerifyOptions &options);

  /// Runs the variants in isolated workers. Timing is judged against `ceilings` when given.
  llvm::Expected<std::vector<VariantReport>> evaluate(llvm::ArrayRef<Variant> variants,
                                                      const Ceilings *ceilings) const;

  const TaskCost &getCost() const { return cost; }
  const LaunchPlan &getPlan() const { return plan; }
  /// Output elements checked against the oracle per trial.
  uint64_t getNumChecked() const;
  /// The request sent to workers (without candidates), for inspection and tests.
  const llvm::json::Object &getRequestTemplate() const { return requestTemplate; }

private:
  FunctionVerifier() = default;
  LaunchPlan plan;
  VerifyOptions options;
  TaskCost cost;
  llvm::json::Object requestTemplate;
  uint64_t numChecked = 0;
};

/// Which elements of a tensor of `numElements` to check: all of them, or the first and last 32
/// (tails and edges are where indexing bugs live) plus a seeded uniform sample, sorted.
std::vector<uint64_t> chooseSamples(uint64_t numElements, uint64_t count, uint64_t seed);

} // namespace evo

#endif
