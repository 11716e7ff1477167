//===- VerifyPass.cpp - the evo-verify pass --------------------------------===//

#include "evo/Dialect/Evo/IR/LaunchPlan.h"
#include "evo/Evaluation/Passes.h"
#include "evo/Evaluation/LaunchSelection.h"
#include "evo/Evaluation/Verifier.h"
#include "evo/Runtime/CudaDriver.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

namespace evo {
#define GEN_PASS_DEF_EVOVERIFYPASS
#include "evo/Evaluation/Passes.h.inc"
} // namespace evo

#define DEBUG_TYPE "evo-verify"

using namespace mlir;
namespace json = llvm::json;

namespace {
struct EvoVerifyPass final : evo::impl::EvoVerifyPassBase<EvoVerifyPass> {
  using Base::Base;
  void runOnOperation() override;

private:
  FailureOr<SmallVector<gpu::BinaryOp>> binariesToVerify();
  FailureOr<evo::VerifyOptions> verifyOptions();
  FailureOr<json::Object> verifyBinary(gpu::BinaryOp bin, const evo::VerifyOptions &opts,
                                       const evo::Ceilings *ceilings, bool &invalid);
  void recordResult(gpu::BinaryOp bin, const evo::LaunchPlan &plan,
                    const evo::VariantReport &r, const evo::VerifyOptions &opts);
  LogicalResult writeOutput(const evo::VerifyOptions &opts, json::Array reports,
                            const std::optional<evo::Ceilings> &ceilings);
};

/// The PTX of `bin` and the target it was compiled for (the naive baseline is compiled for the
/// same one); an empty string when the binary holds no PTX.
std::string binaryPtx(gpu::BinaryOp bin, evo::PTXOptions &ptxOptions) {
  std::string ptx;
  for (Attribute a : bin.getObjects())
    if (auto obj = dyn_cast<gpu::ObjectAttr>(a))
      if (obj.getFormat() == gpu::CompilationTarget::Assembly) {
        ptx = obj.getObject().getValue().str();
        if (auto t = dyn_cast<NVVM::NVVMTargetAttr>(obj.getTarget())) {
          ptxOptions.chip = t.getChip().str();
          ptxOptions.features = t.getFeatures().str();
          ptxOptions.optLevel = t.getO();
        }
      }
  return ptx;
}
} // namespace

/// The gpu.binary ops that carry a plan; a diagnostic when there is none.
FailureOr<SmallVector<gpu::BinaryOp>> EvoVerifyPass::binariesToVerify() {
  ModuleOp module = getOperation();
  SmallVector<gpu::BinaryOp> binaries;
  for (auto bin : module.getOps<gpu::BinaryOp>())
    if (bin->hasAttr(evo::kPlanAttrName))
      binaries.push_back(bin);
  if (!binaries.empty())
    return binaries;
  if (!module.getOps<gpu::GPUModuleOp>().empty())
    emitError(module.getLoc(), "evo-verify: the kernels are not compiled yet; run evo-emit-ptx first "
                               "(or use --evo-pipeline)");
  else
    emitError(module.getLoc(), "evo-verify: no gpu.binary with an evo.plan to verify");
  return failure();
}

/// The verifier's settings from the pass's options (tolerances, seed, worker), checked.
FailureOr<evo::VerifyOptions> EvoVerifyPass::verifyOptions() {
  Location loc = getOperation().getLoc();
  evo::VerifyOptions opts;
  opts.trials = trials;
  opts.maxSamples = samples;
  opts.timing = timing;
  opts.checkLaunches = checkLaunches;
  opts.runs = runs;
  opts.warmup = warmup;
  opts.device = device;
  opts.worker.candidateTimeoutSeconds = timeout;
  if (llvm::Error e = evo::parseTolerances(tolerances, opts.rtol)) {
    emitError(loc) << "evo-verify: " << llvm::toString(std::move(e));
    return failure();
  }
  // One seed for the whole run (every function's inputs derive from it), reported so that
  // seed=N reproduces the run.
  opts.seed = seed ? static_cast<uint64_t>(seed) : evo::freshSeed();
  if (!opts.seed) {
    emitError(loc) << "evo-verify: no OS entropy to draw a seed from; give seed=N";
    return failure();
  }
  llvm::Expected<std::string> workerPath = evo::findWorker(worker);
  if (!workerPath) {
    emitError(loc) << "evo-verify: " << llvm::toString(workerPath.takeError());
    return failure();
  }
  opts.worker.workerPath = *workerPath;
  if (trials < 1) {
    emitError(loc, "evo-verify: trials must be at least 1");
    return failure();
  }
  return opts;
}

/// Verifies one binary's function on the GPU, records the result on it (recordResult) and
/// returns its report; `invalid` is set when the verdict is not valid.
FailureOr<json::Object> EvoVerifyPass::verifyBinary(gpu::BinaryOp bin,
                                                    const evo::VerifyOptions &opts,
                                                    const evo::Ceilings *ceilings, bool &invalid) {
  auto planAttr = bin->getAttrOfType<evo::PlanAttr>(evo::kPlanAttrName);
  if (!planAttr) {
    bin.emitError() << "'" << evo::kPlanAttrName << "' must be a #evo.plan attribute";
    return failure();
  }
  std::optional<evo::LaunchPlan> plan = evo::LaunchPlan::fromAttr(planAttr);
  evo::PTXOptions ptxOptions;
  std::string ptx = binaryPtx(bin, ptxOptions);
  if (ptx.empty()) {
    bin.emitError("evo-verify: the binary holds no PTX (emit with evo-emit-ptx)");
    return failure();
  }
  llvm::Expected<evo::VariantReport> result = evo::verifyFunction(
      *plan, ptx, &getContext(), bin.getLoc(), opts, ptxOptions, ceilings);
  if (!result) {
    bin.emitError() << "evo-verify: " << llvm::toString(result.takeError());
    return failure();
  }
  const evo::VariantReport &r = *result;
  json::Object report = r.toJson();
  report["function"] = plan->funcName;
  report["bytes"] = r.cost.bytes;
  report["read_bytes"] = r.cost.readBytes;
  report["write_bytes"] = r.cost.writeBytes;
  report["flops"] = r.cost.flops;
  recordResult(bin, *plan, r, opts);
  invalid = r.verdict != evo::Verdict::Valid;
  return report;
}

/// The result on the binary: the evo.verify attribute, and a remark (valid) or a warning or
/// error (fail-on-invalid) saying the verdict.
void EvoVerifyPass::recordResult(gpu::BinaryOp bin, const evo::LaunchPlan &plan,
                                 const evo::VariantReport &r, const evo::VerifyOptions &opts) {
  Builder b(&getContext());
  SmallVector<NamedAttribute> attrs = {
      b.getNamedAttr("verdict", b.getStringAttr(evo::stringifyVerdict(r.verdict))),
      b.getNamedAttr("trials", b.getI64IntegerAttr(opts.trials)),
      b.getNamedAttr("seed", b.getI64IntegerAttr(static_cast<int64_t>(opts.seed)))};
  if (!r.reason.empty())
    attrs.push_back(b.getNamedAttr("reason", b.getStringAttr(r.reason)));
  if (r.medianMs > 0)
    attrs.push_back(b.getNamedAttr("median_ms", b.getF64FloatAttr(r.medianMs)));
  if (r.roofline) {
    attrs.push_back(b.getNamedAttr("gbps", b.getF64FloatAttr(r.roofline->achievedGBps)));
    attrs.push_back(
        b.getNamedAttr("fraction_of_copy", b.getF64FloatAttr(r.roofline->fractionOfCopy)));
  }
  bin->setAttr("evo.verify", b.getDictionaryAttr(attrs));
  if (r.verdict == evo::Verdict::Valid) {
    auto remark = bin.emitRemark() << "evo-verify: '" << plan.funcName << "' is valid ("
                                   << opts.trials << " trials";
    if (r.roofline)
      remark << llvm::formatv(", {0:f4} ms, {1:f0} GB/s = {2:p} of copy, {3:f2} TFLOP/s",
                              r.medianMs, r.roofline->achievedGBps, r.roofline->fractionOfCopy,
                              r.roofline->achievedTFlops)
                    .str();
    remark << ")";
    return;
  }
  InFlightDiagnostic d = failOnInvalid ? bin.emitError() : bin.emitWarning();
  d << "evo-verify: '" << plan.funcName << "' is " << evo::stringifyVerdict(r.verdict) << ": "
    << r.reason << " (seed " << opts.seed << ")";
}

/// The JSON report (output=FILE), when asked for.
LogicalResult EvoVerifyPass::writeOutput(const evo::VerifyOptions &opts, json::Array reports,
                                         const std::optional<evo::Ceilings> &ceilings) {
  if (output.empty())
    return success();
  json::Object doc{{"format", "evo-verify/1"},
                   {"seed", static_cast<int64_t>(opts.seed)},
                   {"results", std::move(reports)}};
  if (ceilings)
    doc["ceilings"] = toJSON(*ceilings);
  if (llvm::Error e = llvm::writeToOutput(output, [&](llvm::raw_ostream &os) {
        os << llvm::formatv("{0:2}", json::Value(std::move(doc))) << "\n";
        return llvm::Error::success();
      })) {
    emitError(getOperation().getLoc()) << "evo-verify: " << llvm::toString(std::move(e));
    return failure();
  }
  return success();
}

void EvoVerifyPass::runOnOperation() {
  ModuleOp module = getOperation();
  FailureOr<SmallVector<gpu::BinaryOp>> binaries = binariesToVerify();
  if (failed(binaries))
    return signalPassFailure();
  // Fail early and clearly on machines without a GPU.
  std::string why;
  if (!evo::cuda::Driver::get(&why)) {
    emitError(module.getLoc()) << "evo-verify: no GPU to run on: " << why;
    return signalPassFailure();
  }
  FailureOr<evo::VerifyOptions> opts = verifyOptions();
  if (failed(opts))
    return signalPassFailure();

  std::optional<evo::Ceilings> ceilings;
  if (timing) {
    llvm::Expected<evo::Ceilings> c = evo::deviceCeilings(opts->worker, device);
    if (!c) {
      emitError(module.getLoc()) << "evo-verify: " << llvm::toString(c.takeError());
      return signalPassFailure();
    }
    ceilings = *c;
  }

  json::Array reports;
  bool anyInvalid = false;
  for (gpu::BinaryOp bin : *binaries) {
    bool invalid = false;
    FailureOr<json::Object> report =
        verifyBinary(bin, *opts, ceilings ? &*ceilings : nullptr, invalid);
    if (failed(report))
      return signalPassFailure();
    reports.push_back(std::move(*report));
    anyInvalid |= invalid;
  }
  if (failed(writeOutput(*opts, std::move(reports), ceilings)))
    return signalPassFailure();
  if (anyInvalid && failOnInvalid)
    signalPassFailure();
}
