//===- LowerToGPUPass.cpp - the evo-lower-to-gpu pass -------------------------===//

#include "TaskAnalysis.h"
#include "evo/Conversion/FrontEnds.h"
#include "evo/Conversion/LowerToGPU.h"
#include "evo/Conversion/Passes.h"
#include "evo/Conversion/TuningDB.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"

namespace evo {
#define GEN_PASS_DEF_EVOLOWERTOGPUPASS
#include "evo/Conversion/Passes.h.inc"
} // namespace evo

#define DEBUG_TYPE "evo-lower-to-gpu"

using namespace mlir;

namespace {
struct EvoLowerToGPUPass final : evo::impl::EvoLowerToGPUPassBase<EvoLowerToGPUPass> {
  using Base::Base;
  void runOnOperation() override;

private:
  LogicalResult convertTosa(func::FuncOp func);
  void reportNothingToLower(ModuleOp module);
};
} // namespace

/// A function is a target when its body computes on tensors with linalg ops or with elementwise
/// arith/math ops, or re-indexes a tensor with a view (a function that only reshapes or pads
/// becomes a copy) or a tensor.concat; others (host code the user already wrote, declarations) are left alone.
static bool isTarget(func::FuncOp func) {
  if (func.isExternal())
    return false;
  bool found = false;
  func.walk([&](Operation *op) {
    // Ops of unregistered dialects (--allow-unregistered-dialect) have no dialect.
    Dialect *dialect = op->getDialect();
    if (isa<linalg::LinalgOp, linalg::SoftmaxOp, tensor::ConcatOp>(op) || evo::isViewOp(op) ||
        (dialect && isa<arith::ArithDialect, math::MathDialect>(dialect) &&
         !isa<arith::ConstantOp>(op) && op->getNumResults() == 1 &&
         isa<RankedTensorType>(op->getResult(0).getType())))
      found = true;
  });
  return found;
}

/// A function is lowered whole, so it cannot call another: the call would have to stay on the
/// host between kernels. (Without this check the call is refused as an unsupported op, or, once
/// the callee is lowered and the call rewritten, its bufferization ops are.)
static LogicalResult checkNoCalls(func::FuncOp func) {
  bool found = false;
  func.walk([&](func::CallOp call) {
    call.emitError() << "'func.call' is not supported by evo-lower-to-gpu in a function it lowers "
                        "('@"
                     << func.getSymName() << "' computes with linalg ops): inline '@"
                     << call.getCallee()
                     << "' first (--inline), or call it from a function without linalg ops";
    found = true;
  });
  return failure(found);
}

/// TOSA → linalg with upstream's passes, on this function only (others stay as they are).
LogicalResult EvoLowerToGPUPass::convertTosa(func::FuncOp func) {
  MLIRContext *ctx = &getContext();
  OpPassManager pm(func::FuncOp::getOperationName());
  evo::buildTosaToLinalgPipeline(pm);
  // A dynamic pipeline creates ops only of dialects loaded already: those the pass declares,
  // and any an upstream pass of the pipeline depends on besides (a no-op when none).
  DialectRegistry registry;
  pm.getDependentDialects(registry);
  ctx->appendDialectRegistry(registry);
  for (StringRef name : registry.getDialectNames())
    ctx->getOrLoadDialect(name);
  bool reported = false;
  LogicalResult converted = success();
  {
    // Upstream's errors ("failed to legalize operation 'tosa.custom'") say where, not why.
    ScopedDiagnosticHandler seen(ctx, [&](Diagnostic &diag) {
      if (diag.getSeverity() == DiagnosticSeverity::Error) {
        reported = true;
        diag.attachNote() << "evo-lower-to-gpu converts TOSA to linalg with upstream's passes "
                             "(tosa-to-scf, --tosa-to-linalg-pipeline, tosa-to-tensor, "
                             "tosa-to-arith): they do not take this op";
      }
      return failure(); // passed on to the next handler
    });
    converted = runPipeline(pm, func);
  }
  if (failed(converted)) {
    if (!reported)
      func.emitError("evo-lower-to-gpu: converting TOSA to linalg failed");
    return failure();
  }
  return evo::checkTosaConverted(func);
}

/// Nothing to lower where the module holds kernels already (lowered before, or written by hand for
/// evo-emit-ptx) is expected: no diagnostic.
void EvoLowerToGPUPass::reportNothingToLower(ModuleOp module) {
  if (!module.getOps<gpu::GPUModuleOp>().empty() || !module.getOps<gpu::BinaryOp>().empty())
    return;
  Location loc = module.getLoc();
  auto funcs = module.getOps<func::FuncOp>();
  if (!funcs.empty())
    loc = (*funcs.begin()).getLoc();
  else if (!module.getBody()->empty())
    loc = module.getBody()->front().getLoc();
  std::string what = "evo-lower-to-gpu: nothing to lower: no function computes on tensors with "
                     "linalg ops (or arith/math); found " +
                     evo::describeModuleContents(module);
  if (requireKernels) {
    emitError(loc) << what;
    return signalPassFailure();
  }
  emitWarning(loc) << what;
}

void EvoLowerToGPUPass::runOnOperation() {
  ModuleOp module = getOperation();
  evo::LowerOptions options;
#define EVO_KNOB_FROM_OPTION(name, cpp, kind, arg, doc)                                           \
  evo::detail::knobFromOption(options.knobs.cpp, cpp);
  EVO_KNOB_LIST(EVO_KNOB_FROM_OPTION)
#undef EVO_KNOB_FROM_OPTION
  options.fuseElementwise = fuseElementwise;
  options.inlineConstantBytes = inlineConstantBytes;
  if (inlineConstantBytes < 0 || inlineConstantBytes > (1 << 20)) {
    emitError(module.getLoc()) << "evo-lower-to-gpu: invalid option: inline-constant-bytes="
                               << inlineConstantBytes << " is not in [0, 1048576]";
    return signalPassFailure();
  }
  if (failed(options.knobs.verify([&] {
        return emitError(module.getLoc()) << "evo-lower-to-gpu: invalid option: ";
      })))
    return signalPassFailure();
  // tuning-db: read and validated as a whole before anything is lowered (an untrusted file).
  std::optional<evo::TuningDb> db;
  evo::TuningApplyStats tuningStats;
  if (!tuningDb.empty()) {
    evo::TuningDbError error;
    db = evo::TuningDb::load(tuningDb, error);
    if (!db) {
      Location at = error.line
                        ? Location(FileLineColLoc::get(&getContext(), tuningDb, error.line,
                                                       error.column))
                        : module.getLoc();
      emitError(at) << "evo-lower-to-gpu: tuning-db '" << tuningDb << "': " << error.message;
      return signalPassFailure();
    }
    options.tuningDb = &*db;
    options.tuningChip = tuningChip;
    options.tuningDbName = tuningDb;
    options.tuningStats = &tuningStats;
  }

  bool failedAny = false;
  // 1. Front-ends: functions holding TOSA ops become linalg on tensors.
  for (auto func : module.getOps<func::FuncOp>())
    if (evo::hasTosaOps(func) && failed(convertTosa(func)))
      failedAny = true;

  // 2. Targets.
  SmallVector<func::FuncOp> targets;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (!isTarget(func))
      continue;
    if (failed(checkNoCalls(func)))
      failedAny = true;
    else
      targets.push_back(func);
  }
  if (targets.empty() && !failedAny)
    return reportNothingToLower(module);

  // 3. Lowering, each function followed by its callers (found afresh each time: `func` is
  // replaced by its host function, which takes its name).
  for (func::FuncOp func : targets) {
    StringAttr name = func.getSymNameAttr();
    FunctionType tensorType = func.getFunctionType();
    if (failed(evo::lowerFunction(func, options))) {
      failedAny = true;
      continue;
    }
    auto host = module.lookupSymbol<func::FuncOp>(name);
    if (!host || failed(evo::updateCallers(host, tensorType)))
      failedAny = true;
  }
  if (failedAny)
    return signalPassFailure();
  if (db)
    emitRemark(module.getLoc()) << "evo-lower-to-gpu: tuning-db '" << tuningDb << "': "
                                << tuningStats.applied << " of " << tuningStats.tasks
                                << " tasks lowered with a record for " << tuningChip << " ("
                                << db->records().size() << " records in the file; "
                                << tuningStats.otherChip << " tasks with records only for other "
                                << "chips, " << tuningStats.otherFamily
                                << " with a record of another family)";
}
