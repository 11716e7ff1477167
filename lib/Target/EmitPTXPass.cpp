//===- EmitPTXPass.cpp - the evo-emit-ptx pass ---------------------------------===//

#include "evo/Conversion/LaunchPlan.h"
#include "evo/Target/Compile.h"
#include "evo/Target/Manifest.h"
#include "evo/Target/PTXAssembler.h"
#include "evo/Target/Passes.h"
#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

namespace evo {
#define GEN_PASS_DEF_EVOEMITPTXPASS
#include "evo/Target/Passes.h.inc"
} // namespace evo

#define DEBUG_TYPE "evo-emit-ptx"

using namespace mlir;

namespace {
struct EvoEmitPTXPass final : evo::impl::EvoEmitPTXPassBase<EvoEmitPTXPass> {
  using Base::Base;
  void runOnOperation() override;
};

/// What we must remember of a gpu.module before the pipeline replaces it by a gpu.binary.
struct PendingModule {
  std::string symName;
  Location loc;
  DictionaryAttr planAttr;
  evo::ManifestInfo info;
};
} // namespace

void EvoEmitPTXPass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *ctx = &getContext();
  SmallVector<gpu::GPUModuleOp> gpuModules = llvm::to_vector(module.getOps<gpu::GPUModuleOp>());
  if (gpuModules.empty())
    return;

  // Resolve the tools first: a bad option fails before any work is done.
  std::optional<std::string> ptxasPath;
  if (ptxas != "none") {
    llvm::Expected<std::optional<std::string>> found = evo::findPtxas(ptxas);
    if (!found) {
      emitError(module.getLoc()) << "evo-emit-ptx: " << llvm::toString(found.takeError());
      return signalPassFailure();
    }
    ptxasPath = *found;
  }
  evo::PTXOptions ptxOptions;
  ptxOptions.chip = chip;
  ptxOptions.features = features;
  ptxOptions.optLevel = optLevel;
  ptxOptions.cudaPath = cudaPath;
  FailureOr<Attribute> target = evo::nvvmTarget(
      ctx, ptxOptions, [&] { return emitError(module.getLoc()) << "evo-emit-ptx: "; });
  if (failed(target))
    return signalPassFailure();

  SmallVector<PendingModule, 2> pending;
  llvm::StringSet<llvm::MallocAllocator> names;
  for (gpu::GPUModuleOp gm : gpuModules) {
    PendingModule p{gm.getSymName().str(), gm.getLoc(), {}, {}};
    p.planAttr = gm->getAttrOfType<DictionaryAttr>(evo::kPlanAttrName);
    if (p.planAttr) {
      FailureOr<evo::LaunchPlan> plan = evo::LaunchPlan::fromModule(gm);
      if (failed(plan) || failed(plan->verifyAgainst(gm)))
        return signalPassFailure();
      p.info.plan = std::move(*plan);
      p.info.name = p.info.plan->funcName;
    } else {
      p.info.name = p.symName;
    }
    if (!names.insert(p.info.name).second) {
      gm.emitError() << "evo-emit-ptx: two gpu.modules would both write '" << p.info.name
                     << ".ptx'";
      return signalPassFailure();
    }
    p.info.chip = std::string(chip);
    p.info.features = std::string(features);
    p.info.ptxFile = p.info.name + ".ptx";
    for (auto func : gm.getOps<gpu::GPUFuncOp>()) {
      if (!func.isKernel())
        continue;
      evo::KernelSignature sig;
      sig.name = func.getName().str();
      for (Type t : func.getArgumentTypes()) {
        auto memref = dyn_cast<MemRefType>(t);
        if (!memref || !memref.hasStaticShape() || !memref.getLayout().isIdentity()) {
          func.emitError() << "evo-emit-ptx: kernel parameters must be static, identity-layout "
                              "memrefs (the bare-pointer ABI), got "
                           << t;
          return signalPassFailure();
        }
        sig.params.push_back(memref);
      }
      sig.knobs = func->getAttrOfType<DictionaryAttr>(evo::kKnobsAttrName);
      p.info.kernels.push_back(std::move(sig));
    }
    gm.setTargetsAttr(ArrayAttr::get(ctx, ArrayRef<Attribute>{*target}));
    pending.push_back(std::move(p));
  }

  // NVVM lowering with the bare-pointer ABI, then LLVM's NVPTX backend to PTX text.
  OpPassManager pm(ModuleOp::getOperationName());
  evo::buildKernelsToPTXPipeline(pm, ptxOptions);
  if (failed(runPipeline(pm, module)))
    return signalPassFailure();

  for (PendingModule &p : pending) {
    auto bin = module.lookupSymbol<gpu::BinaryOp>(p.symName);
    if (!bin) {
      emitError(p.loc) << "evo-emit-ptx: no gpu.binary was produced for '" << p.symName << "'";
      return signalPassFailure();
    }
    if (p.planAttr)
      bin->setAttr(evo::kPlanAttrName, p.planAttr);
    for (Attribute a : bin.getObjects())
      if (auto obj = dyn_cast<gpu::ObjectAttr>(a))
        p.info.ptx = obj.getObject().getValue().str();
    if (ptxasPath) {
      llvm::Expected<evo::AssembleResult> assembled =
          evo::assemblePtx(*ptxasPath, p.info.ptx, std::string(chip));
      if (!assembled) {
        emitError(p.loc) << "evo-emit-ptx: ptxas rejected the PTX of '" << p.info.name
                         << "': " << llvm::toString(assembled.takeError());
        return signalPassFailure();
      }
      p.info.ptxasPath = *ptxasPath;
      p.info.resources = std::move(assembled->kernels);
    }
  }

  if (outputDir == "-")
    return;
  if (std::error_code ec = llvm::sys::fs::create_directories(outputDir)) {
    emitError(module.getLoc()) << "evo-emit-ptx: cannot create output directory '" << outputDir
                       << "': " << ec.message();
    return signalPassFailure();
  }
  for (PendingModule &p : pending) {
    llvm::SmallString<256> ptxPath(outputDir), jsonPath(outputDir);
    llvm::sys::path::append(ptxPath, p.info.name + ".ptx");
    llvm::sys::path::append(jsonPath, p.info.name + ".json");
    // writeToOutput writes a temporary file and renames it: readers never see a partial file.
    llvm::Error err = llvm::writeToOutput(ptxPath, [&](llvm::raw_ostream &os) {
      os << p.info.ptx;
      return llvm::Error::success();
    });
    if (!err)
      err = llvm::writeToOutput(jsonPath, [&](llvm::raw_ostream &os) {
        os << llvm::formatv("{0:2}", evo::buildManifest(p.info)) << "\n";
        return llvm::Error::success();
      });
    if (err) {
      emitError(p.loc) << "evo-emit-ptx: " << llvm::toString(std::move(err));
      return signalPassFailure();
    }
  }
}
