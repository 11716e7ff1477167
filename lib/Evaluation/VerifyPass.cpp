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
};
} // namespace

void EvoVerifyPass::runOnOperation() {
  ModuleOp module = getOperation();
  SmallVector<gpu::BinaryOp> binaries;
  for (auto bin : module.getOps<gpu::BinaryOp>())
    if (bin->hasAttr(evo::kPlanAttrName))
      binaries.push_back(bin);
  if (binaries.empty()) {
    if (!module.getOps<gpu::GPUModuleOp>().empty())
      emitError(module.getLoc(), "evo-verify: the kernels are not compiled yet; run evo-emit-ptx first "
                       "(or use --evo-pipeline)");
    else
      emitError(module.getLoc(), "evo-verify: no gpu.binary with an evo.plan to verify");
    return signalPassFailure();
  }
  // Fail early and clearly on machines without a GPU.
  std::string why;
  if (!evo::cuda::Driver::get(&why)) {
    emitError(module.getLoc()) << "evo-verify: no GPU to run on: " << why;
    return signalPassFailure();
  }

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
    emitError(module.getLoc()) << "evo-verify: " << llvm::toString(std::move(e));
    return signalPassFailure();
  }
  // One seed for the whole run (every function's inputs derive from it), reported so that
  // seed=N reproduces the run.
  opts.seed = seed ? static_cast<uint64_t>(seed) : evo::freshSeed();
  if (!opts.seed) {
    emitError(module.getLoc()) << "evo-verify: no OS entropy to draw a seed from; give seed=N";
    return signalPassFailure();
  }
  llvm::Expected<std::string> workerPath = evo::findWorker(worker);
  if (!workerPath) {
    emitError(module.getLoc()) << "evo-verify: " << llvm::toString(workerPath.takeError());
    return signalPassFailure();
  }
  opts.worker.workerPath = *workerPath;
  if (trials < 1) {
    emitError(module.getLoc(), "evo-verify: trials must be at least 1");
    return signalPassFailure();
  }

  std::optional<evo::Ceilings> ceilings;
  if (timing) {
    llvm::Expected<evo::Ceilings> c = evo::deviceCeilings(opts.worker, device);
    if (!c) {
      emitError(module.getLoc()) << "evo-verify: " << llvm::toString(c.takeError());
      return signalPassFailure();
    }
    ceilings = *c;
  }

  json::Array reports;
  bool anyInvalid = false;
  Builder b(&getContext());
  for (gpu::BinaryOp bin : binaries) {
    auto planAttr = bin->getAttrOfType<evo::PlanAttr>(evo::kPlanAttrName);
    if (!planAttr) {
      bin.emitError() << "'" << evo::kPlanAttrName << "' must be a #evo.plan attribute";
      return signalPassFailure();
    }
    std::optional<evo::LaunchPlan> plan = evo::LaunchPlan::fromAttr(planAttr);
    std::string ptx;
    // The naive baseline is compiled for the same target as the kernels.
    evo::PTXOptions ptxOptions;
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
    if (ptx.empty()) {
      bin.emitError("evo-verify: the binary holds no PTX (emit with evo-emit-ptx)");
      return signalPassFailure();
    }
    llvm::Expected<evo::VariantReport> result = evo::verifyFunction(
        *plan, ptx, &getContext(), bin.getLoc(), opts, ptxOptions, ceilings ? &*ceilings : nullptr);
    if (!result) {
      bin.emitError() << "evo-verify: " << llvm::toString(result.takeError());
      return signalPassFailure();
    }
    const evo::VariantReport &r = *result;
    json::Object report = r.toJson();
    report["function"] = plan->funcName;
    report["bytes"] = r.cost.bytes;
    report["read_bytes"] = r.cost.readBytes;
    report["write_bytes"] = r.cost.writeBytes;
    report["flops"] = r.cost.flops;
    reports.push_back(std::move(report));

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
      auto remark = bin.emitRemark() << "evo-verify: '" << plan->funcName << "' is valid ("
                                     << opts.trials << " trials";
      if (r.roofline)
        remark << llvm::formatv(", {0:f4} ms, {1:f0} GB/s = {2:p} of copy, {3:f2} TFLOP/s",
                                r.medianMs, r.roofline->achievedGBps, r.roofline->fractionOfCopy,
                                r.roofline->achievedTFlops)
                      .str();
      remark << ")";
    } else {
      anyInvalid = true;
      InFlightDiagnostic d = failOnInvalid ? bin.emitError() : bin.emitWarning();
      d << "evo-verify: '" << plan->funcName << "' is " << evo::stringifyVerdict(r.verdict) << ": "
        << r.reason << " (seed " << opts.seed << ")";
    }
  }

  if (!output.empty()) {
    json::Object doc{{"format", "evo-verify/1"},
                     {"seed", static_cast<int64_t>(opts.seed)},
                     {"results", std::move(reports)}};
    if (ceilings)
      doc["ceilings"] = toJSON(*ceilings);
    if (llvm::Error e = llvm::writeToOutput(output, [&](llvm::raw_ostream &os) {
          os << llvm::formatv("{0:2}", json::Value(std::move(doc))) << "\n";
          return llvm::Error::success();
        })) {
      emitError(module.getLoc()) << "evo-verify: " << llvm::toString(std::move(e));
      return signalPassFailure();
    }
  }
  if (anyInvalid && failOnInvalid)
    signalPassFailure();
}
