//===- Genome.h - what the built-in mutators change, and how it becomes IR -*- C++ -*-===//
//
// A variant of a task made by the built-in mutators is a genome: the schedule knobs of the
// lowering plus a list of IR rewrites applied to the lowered gpu.module (for what the knobs do not
// express, e.g. unrolling any loop of any kernel, LLM-written ones included). The genome is
// deterministic: the same genome always gives the same IR.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_EVOLUTION_GENOME_H
#define EVO_EVOLUTION_GENOME_H

#include "evo/Dialect/Evo/IR/Knobs.h"
#include "evo/Conversion/LowerToGPU.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/JSON.h"
#include <functional>
#include <random>

namespace evo {

/// An IR rewrite on the kernels of a variant.
struct Rewrite {
  /// "unroll": unroll the innermost scf.for loops (constant trip counts) by `factor`.
  std::string kind;
  int64_t factor = 1;
  bool operator==(const Rewrite &o) const { return kind == o.kind && factor == o.factor; }
};

struct Genome {
  ScheduleKnobs knobs;
  std::vector<Rewrite> rewrites;

  llvm::json::Object knobsJson(TaskFamily family) const;
  llvm::json::Array rewritesJson() const;
  /// A canonical string: equal keys mean equal IR.
  std::string key(TaskFamily family) const;
  static mlir::FailureOr<Genome> fromJson(llvm::StringRef knobs, llvm::StringRef rewrites,
                                          mlir::MLIRContext *ctx);
};

/// Applies `rewrites` to every kernel of `module`. Returns the number of loops changed.
unsigned applyRewrites(mlir::gpu::GPUModuleOp module, llvm::ArrayRef<Rewrite> rewrites);

/// One knob a mutator can change: its name and the values the search proposes for it.
struct KnobDimension {
  std::string name;
  std::vector<llvm::SmallVector<int64_t>> values;
  std::function<llvm::SmallVector<int64_t>(const ScheduleKnobs &)> get;
  std::function<void(ScheduleKnobs &, llvm::ArrayRef<int64_t>)> set;
};

/// The knobs of a family and their candidate values (docs/evolution.md lists them).
std::vector<KnobDimension> knobDimensions(TaskFamily family);

/// Says whether a genome lowers for the task (the lowering's own validation: only values it
/// accepts are ever proposed). Results are cached by genome key.
class LegalityCache {
public:
  /// `wgmmaTarget`: the chip has wgmma (sm_90a); elsewhere wgmma genomes are not legal.
  /// `mmaSyncTarget`: the chip has mma.sync m16n8k16 with cp.async (sm_80 and newer).
  LegalityCache(mlir::func::FuncOp task, TaskFamily family, bool wgmmaTarget = false,
                bool mmaSyncTarget = false)
      : task(task), family(family), wgmmaTarget(wgmmaTarget), mmaSyncTarget(mmaSyncTarget) {
    loadLoweringDialects(task.getContext());
  }
  bool isLegal(const Genome &g);

private:
  mlir::func::FuncOp task;
  TaskFamily family;
  bool wgmmaTarget, mmaSyncTarget;
  std::map<std::string, bool> cache;
};

/// Whether PTX for `chip` may use wgmma (warpgroup MMA exists on sm_90a only).
bool chipHasWgmma(llvm::StringRef chip);
/// Whether PTX for `chip` may use mma.sync m16n8k16 on f16/bf16, ldmatrix and cp.async (sm_80
/// and newer).
bool chipHasMmaSync(llvm::StringRef chip);

/// The built-in mutators. Each returns a genome different from its parents that lowers for the
/// task, or std::nullopt after a bounded number of attempts.
/// What a task's seeds depend on, read from its IR by seedTraits (0 / false: unknown or not
/// applicable).
struct SeedTraits {
  int64_t outputElements = 0;  // static elements of every result
  int64_t depthwiseWindow = 0; // depthwiseWindow()
  int64_t rows = 0, rowLength = 0; // a row program's extent (rowProgramExtent)
  bool stridedRows = false;    // rowProgramIsStrided
  bool fastMathForms = false;  // hasFastMathForms
  bool slidingWindow = false;  // an input indexed by a parallel and a reduction dimension together
  int64_t contractionMinMN = 0; // the smaller of a contraction's M and N (1: a GEMV)
  int64_t contractionK = 0;     // that contraction's K
};
SeedTraits seedTraits(mlir::func::FuncOp task);

/// Known-good starting points of a family, proposed before any mutation (the caller checks their
/// legality): for contractions, Hopper tensor-core schedules (f16/bf16 on sm_90a) and
/// register-tiled schedules that mutations from the naive one reach only after several legal
/// steps; for skinny contractions (at most 65536 outputs and, where known, M or N at most 16:
/// GEMV, nn.Linear at small batch), the untiled reduction schedules first (a warp or block per
/// output, 128-bit loads, split-K); for few outputs (at most 2^20: long-K products), register
/// tiles with split-K, the slices chosen to give 2 or 4 blocks per SM. For scans, parallel scans
/// (a warp or a block per line, 128-bit loads, several chunks per thread) before mutation. A
/// depthwise convolution (`depthwiseWindow` > 0: an implicit GEMM with M = 1, K = the window) is
/// seeded first with tiles of one row and the whole window as the K tile. A row program of few
/// long rows is seeded with row_split, rows x slices filling the GPU; strided rows with a thread
/// per row, the row cached in registers; with `fastMathForms`, also with `fast_math`.
/// Elementwise tasks: 128-bit accesses and a few elements per thread. Reductions with a pooling
/// window: a thread per group of outputs along the window's strided dimension (group_outputs).
std::vector<Genome> seedGenomes(const Genome &baseline, TaskFamily family,
                                const SeedTraits &traits = {});
/// Whether `task` computes functions that `fast_math` makes cheaper: exponentials, logarithms,
/// trigonometric functions and powers (a linalg.softmax's exponential included).
bool hasFastMathForms(mlir::func::FuncOp task);
/// The filter window (taps) of `task`'s depthwise convolution, 0 when it has none: a linalg op
/// that upstream's inferConvolutionDims sees as a convolution with a depth (channel) dimension and
/// no output-channel dimension.
int64_t depthwiseWindow(mlir::func::FuncOp task);

std::optional<Genome> mutateKnob(const Genome &parent, TaskFamily family, LegalityCache &legal,
                                 std::mt19937_64 &rng);
std::optional<Genome> crossoverKnobs(const Genome &a, const Genome &b, TaskFamily family,
                                     LegalityCache &legal, std::mt19937_64 &rng);
/// Adds (or changes the factor of) an unroll rewrite.
std::optional<Genome> mutateUnroll(const Genome &parent, TaskFamily family, LegalityCache &legal,
                                   std::mt19937_64 &rng);

} // namespace evo

#endif
