//===- LowerTask.cpp - one task func to kernels ------------------------------===//

#include "Emitters.h"
#include "KernelBuilder.h"
#include "TaskAnalysis.h"
#include "evo/Conversion/LowerToGPU.h"
#include "evo/Conversion/ScalarArguments.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;

namespace evo {

static TaskFamily familyOf(linalg::LinalgOp op) {
  if (op.getNumReductionLoops() == 0)
    return TaskFamily::Elementwise;
  // A scan written as a masked triangular reduction (before the contraction check: its mask
  // form multiplies and adds too).
  if (auto generic = dyn_cast<linalg::GenericOp>(op.getOperation()); generic && matchScan(generic))
    return TaskFamily::Scan;
  // Convolutions are implicit GEMMs: the matmul family's schedules (naive or tiled) apply.
  if (linalg::isaContractionOpInterface(op) || gemmView(op))
    return TaskFamily::Matmul;
  return TaskFamily::Reduction;
}

/// A copy of `task` in the form the matchers and emitters read: scalar arguments as 0-d tensors
/// (ScalarArguments.h; `scalars` receives their numbers). Null, after a diagnostic, when a scalar
/// is read in a way the lowering does not support.
static OwningOpRef<func::FuncOp> tensorForm(func::FuncOp task,
                                            SmallVectorImpl<unsigned> *scalars = nullptr) {
  OwningOpRef<func::FuncOp> copy(task.clone());
  if (failed(scalarArgumentsToTensors(*copy, "evo-lower-to-gpu", scalars)))
    return nullptr;
  return copy;
}

/// matchRowProgram on the task's tensor form.
static std::optional<RowShape> matchRowTask(func::FuncOp task) {
  OwningOpRef<func::FuncOp> t = tensorForm(task);
  return t ? matchRowProgram(*t) : std::nullopt;
}

std::optional<std::pair<int64_t, int64_t>> rowProgramExtent(func::FuncOp task) {
  std::optional<RowShape> shape = matchRowTask(task);
  if (!shape)
    return std::nullopt;
  int64_t rows = 1;
  for (int64_t d : shape->rowDims)
    rows *= d;
  return std::make_pair(rows, shape->cols);
}

bool rowProgramIsStrided(func::FuncOp task) {
  std::optional<RowShape> shape = matchRowTask(task);
  return shape && shape->permuted;
}

FailureOr<TaskFamily> classifyTask(func::FuncOp task) {
  OwningOpRef<func::FuncOp> t = tensorForm(task);
  if (!t)
    return failure();
  if (matchRowProgram(*t))
    return TaskFamily::Rows;
  FailureOr<Operation *> compute = findComputeOp(*t);
  if (failed(compute))
    return failure();
  if (isa<linalg::SoftmaxOp>(*compute))
    return TaskFamily::Softmax;
  return familyOf(cast<linalg::LinalgOp>(*compute));
}

void loadLoweringDialects(MLIRContext *ctx) {
  ctx->loadDialect<arith::ArithDialect, func::FuncDialect, gpu::GPUDialect, linalg::LinalgDialect,
                   math::MathDialect, memref::MemRefDialect, scf::SCFDialect,
                   tensor::TensorDialect, vector::VectorDialect, LLVM::LLVMDialect,
                   NVVM::NVVMDialect, EvoDialect>();
}

/// Records the family and the knobs actually used on the lowered task and its kernels.
/// How the naive contraction reduces over K. One thread per output walking K serially reads
/// coalesced across a warp when the operands move along the output's fast dimension (A[m][k] @
/// B[k][n]); when every operand that K moves through is contiguous along K instead (x @ W^T as
/// B[n][k], a matrix-vector product), each thread would walk its own row and a warp's loads would
/// touch 32 rows: there one warp per output reads the rows coalesced (an 8192^3 x @ W^T with
/// one thread per output ran past the worker's 30 s limit on the H200).
static ReductionStrategy naiveContractionStrategy(const GenericTask &t) {
  if (t.reductionDims.empty())
    return ReductionStrategy::Thread;
  const unsigned kDim = t.reductionDims.back();
  SmallVector<AffineMap> maps = linalg::GenericOp(t.op).getIndexingMapsArray();
  bool alongK = false;
  for (auto [i, src] : llvm::enumerate(t.inputs)) {
    if (src.kind != ValueSource::Kind::Buffer)
      continue;
    if (!src.view.empty()) // read element by element through its view
      return ReductionStrategy::Thread;
    Access a = accessAlong(maps[i], kDim);
    if (a == Access::Invariant)
      continue;
    if (a != Access::Contiguous)
      return ReductionStrategy::Thread;
    alongK = true;
  }
  return alongK ? ReductionStrategy::Warp : ReductionStrategy::Thread;
}

/// The naive schedule of a long reduction: never one sequential accumulator over more than
/// 65536 points (an f32 sum of millions of elements loses most of its digits, or stops growing at
/// 2^24 when it counts), but a block per output, whose threads' partial sums meet in a tree.
/// Needs a recognized combiner and 32- or 64-bit accumulators; otherwise `fallback`.
static ReductionStrategy naiveLongReduction(const GenericTask &t, ReductionStrategy fallback) {
  if (t.numReductionPoints() <= 65536 || !t.allCombinersKnown())
    return fallback;
  for (unsigned o = 0; o < t.outputs.size(); ++o) {
    Type acc = accumulatorType(t.resultElementType(o));
    if (!acc.isIntOrFloat() ||
        (acc.getIntOrFloatBitWidth() != 32 && acc.getIntOrFloatBitWidth() != 64))
      return fallback;
  }
  return ReductionStrategy::Block;
}

/// The naive schedule of a scan is one thread per line; a line of more than 65536 elements takes
/// a block, as a long reduction does (naiveLongReduction): never one sequential f32 accumulator
/// over millions of elements. Needs 32- or 64-bit accumulators; otherwise one thread.
static ReductionStrategy naiveScanStrategy(const GenericTask &t, const ScanForm &form) {
  Type acc = accumulatorType(t.resultElementType(0));
  if (t.loopSizes[form.scanLoop] <= 65536 ||
      (acc.getIntOrFloatBitWidth() != 32 && acc.getIntOrFloatBitWidth() != 64))
    return ReductionStrategy::Thread;
  return ReductionStrategy::Block;
}

/// Whether the reduction schedule knobs are all at their defaults: the naive schedule.
static bool naiveReductionKnobs(const ScheduleKnobs &k) {
  return k.reduction == ReductionStrategy::Thread && k.vectorWidth == 1 && k.split == 1 &&
         k.groupOutputs == 1 && k.groupOutputs2 == 1;
}

static LoweredTask finishLowering(LoweredTask lowered, TaskFamily family,
                                  const ScheduleKnobs &used, MLIRContext *ctx,
                                  gpu::GPUModuleOp module) {
  lowered.family = family;
  lowered.knobs = used.toAttr(ctx, family);
  Builder b(ctx);
  for (const KernelLaunch &launch : lowered.launches) {
    auto kernel = module.lookupSymbol<gpu::GPUFuncOp>(launch.kernel);
    kernel->setAttr(kKnobsAttrName, lowered.knobs);
    kernel->setAttr(kFamilyAttrName, TaskFamilyAttr::get(ctx, family));
    // fast_math: the math ops take `afn`, which the NVVM lowering turns into libdevice's fast
    // forms (__nv_fast_expf: ex2.approx of x * log2 e) where it has them.
    if (used.fastMath)
      kernel.walk([&](arith::ArithFastMathInterface op) {
        if (op->getDialect()->getNamespace() != "math")
          return;
        arith::FastMathFlagsAttr old = op.getFastMathFlagsAttr();
        arith::FastMathFlags flags = old ? old.getValue() : arith::FastMathFlags::none;
        op->setAttr(op.getFastMathAttrName(),
                    arith::FastMathFlagsAttr::get(ctx, flags | arith::FastMathFlags::afn));
      });
  }
  return lowered;
}

/// lowerTask on the task's tensor form `copy` (rewritten: generalization, row permutation).
static FailureOr<LoweredTask> lowerTensorForm(OwningOpRef<func::FuncOp> &copy,
                                              func::FuncOp task, const ScheduleKnobs &knobs,
                                              gpu::GPUModuleOp module, StringRef kernelName) {
  EmitContext ctx{module, kernelName.str()};
  if (std::optional<RowShape> rows = matchRowProgram(*copy)) {
    if (failed(knobs.verify([&] { return copy->emitError(); })))
      return failure();
    if (rows->permuted && !permuteRowLoops(*copy))
      return copy->emitError("evo-lower-to-gpu: internal error: the row program's loops could "
                             "not be interchanged");
    // The naive schedule of rows longer than 65536 elements (a LayerNorm over [C, H, W]) is a
    // block per row, as for long reductions (naiveLongReduction): one thread walking millions
    // of elements several times would take seconds.
    ScheduleKnobs used = knobs;
    if (naiveReductionKnobs(used) && !used.cacheRow && used.rowSplit == 1 && rows->cols > 65536)
      used.reduction = ReductionStrategy::Block;
    FailureOr<LoweredTask> lowered = emitRows(*copy, *rows, used, ctx);
    if (failed(lowered))
      return failure();
    return finishLowering(*lowered, TaskFamily::Rows, used, task.getContext(), module);
  }
  FailureOr<ComputeOps> found = findComputeOps(*copy);
  if (failed(found))
    return failure();
  FailureOr<Operation *> compute = found->compute;
  if (failed(knobs.verify([&] { return (*compute)->emitError(); })))
    return failure();

  FailureOr<LoweredTask> lowered = failure();
  TaskFamily family;
  ScheduleKnobs used = knobs;
  if (auto softmax = dyn_cast<linalg::SoftmaxOp>(*compute)) {
    family = TaskFamily::Softmax;
    FailureOr<SoftmaxTask> t = analyzeSoftmax(softmax, *copy);
    if (failed(t))
      return failure();
    lowered = emitSoftmax(*t, used, ctx);
  } else {
    auto linalgOp = cast<linalg::LinalgOp>(*compute);
    family = familyOf(linalgOp);
    // Epilogues are fused into contractions and reductions (their emitters apply them).
    if (!found->epilogue.empty() && family != TaskFamily::Matmul &&
        family != TaskFamily::Reduction)
      return found->epilogue.front().emitError(
          "evo-lower-to-gpu: an elementwise epilogue may only follow a contraction or a reduction");
    auto generic = dyn_cast<linalg::GenericOp>(*compute);
    if (!generic) {
      IRRewriter rewriter(task.getContext());
      rewriter.setInsertionPoint(linalgOp);
      FailureOr<linalg::GenericOp> g = linalg::generalizeNamedOp(rewriter, linalgOp);
      if (failed(g))
        return linalgOp.emitError("evo-lower-to-gpu: cannot generalize this op");
      generic = *g;
    }
    FailureOr<GenericTask> t = analyzeGeneric(generic, *copy, found->epilogue);
    if (failed(t))
      return failure();
    switch (family) {
    case TaskFamily::Elementwise:
      lowered = emitElementwise(*t, used, ctx);
      break;
    case TaskFamily::Reduction:
      if (naiveReductionKnobs(used) && used.accumulators == 1)
        used.reduction = naiveLongReduction(*t, ReductionStrategy::Thread);
      lowered = emitReduction(*t, used, ctx);
      break;
    case TaskFamily::Matmul:
      // f32-matmul is a contract on contractions of f32 operands: others neither use nor
      // record it (the verifier's tolerance follows the recorded knob).
      if (!llvm::all_of(generic.getDpsInputs(), [](Value v) {
            return getElementTypeOrSelf(v.getType()).isF32();
          }))
        used.f32Matmul = F32Matmul::Ieee;
      if (used.tileSizes.empty()) {
        // Without tiles a contraction is a reduction over K per output: with the default knobs
        // the naive schedule (one thread, or for operands contiguous along K one warp, per
        // output and a serial loop over K); otherwise the reduction schedules, which are the
        // GEMV and skinny-contraction ones (a warp or block per output, vector loads along K,
        // several accumulators in flight, split-K combined in order).
        ScheduleKnobs run = used;
        if (naiveReductionKnobs(used))
          run.reduction = naiveLongReduction(*t, naiveContractionStrategy(*t));
        lowered = emitReduction(*t, run, ctx);
      } else if (used.wgmma && used.mmaSync) {
        return generic.emitError(
            "evo-lower-to-gpu: wgmma and mma_sync are two tensor-core schedules: set one");
      } else if (used.wgmma) {
        lowered = emitWgmmaMatmul(*t, used, ctx);
      } else if (used.mmaSync) {
        lowered = emitMmaSyncMatmul(*t, used, ctx);
      } else {
        lowered = emitTiledMatmul(*t, used, ctx);
      }
      break;
    case TaskFamily::Scan: {
      std::optional<ScanForm> form = matchScan(generic);
      if (!form)
        return generic.emitError("evo-lower-to-gpu: the scan is no longer a scan (internal)");
      if (used.reduction == ReductionStrategy::Thread && used.vectorWidth == 1 &&
          used.elementsPerThread == 1)
        used.reduction = naiveScanStrategy(*t, *form);
      lowered = emitScan(*t, *form, used, ctx);
      break;
    }
    case TaskFamily::Softmax:
    case TaskFamily::Rows:
      llvm_unreachable("handled above");
    }
  }
  if (failed(lowered))
    return failure();
  return finishLowering(*lowered, family, used, task.getContext(), module);
}

FailureOr<LoweredTask> lowerTask(func::FuncOp task, const ScheduleKnobs &knobs,
                                 gpu::GPUModuleOp module, StringRef kernelName) {
  // The emitters read a copy (the caller's task func stays as written), with scalar arguments
  // as 0-d tensors; the kernels then take those by value, here, so that every kernel of a task
  // (the pass's, the search's, the verifier's baseline) has the ABI of the plan.
  SmallVector<unsigned> scalars;
  OwningOpRef<func::FuncOp> copy = tensorForm(task, &scalars);
  if (!copy)
    return failure();
  FailureOr<LoweredTask> lowered = lowerTensorForm(copy, task, knobs, module, kernelName);
  if (failed(lowered) || scalars.empty())
    return lowered;
  llvm::SmallPtrSet<Operation *, 4> done;
  for (const KernelLaunch &launch : lowered->launches) {
    auto kernel = module.lookupSymbol<gpu::GPUFuncOp>(launch.kernel);
    if (!kernel || !done.insert(kernel).second)
      continue;
    for (auto [k, a] : llvm::enumerate(launch.args))
      if (llvm::is_contained(scalars, a))
        passScalarByValue(kernel, k);
  }
  return lowered;
}

} // namespace evo
