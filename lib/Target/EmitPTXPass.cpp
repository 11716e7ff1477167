//===- EmitPTXPass.cpp - the evo-emit-ptx pass ---------------------------------===//

#include "evo/Dialect/Evo/IR/InputChecks.h"
#include "evo/Dialect/Evo/IR/LaunchPlan.h"
#include "evo/Target/Chips.h"
#include "evo/Target/Compile.h"
#include "evo/Target/Manifest.h"
#include "evo/Target/OutputFiles.h"
#include "evo/Target/PTXAssembler.h"
#include "evo/Target/Passes.h"
#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/DialectResourceBlobManager.h"
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
/// The targets of the invocation, resolved from the options before any work is done.
struct EmitTargets {
  std::optional<std::string> ptxasPath;
  std::string ptxChip;            // chips=: the lowest, which the PTX is made for
  SmallVector<std::string> chips; // chips=: a cubin each; empty for chip=
  std::string chipsContext;       // " (chips=...)" for the diagnostics
  evo::PTXOptions ptx;
  Attribute nvvmTarget;
};

struct EvoEmitPTXPass final : evo::impl::EvoEmitPTXPassBase<EvoEmitPTXPass> {
  using Base::Base;
  void runOnOperation() override;
  FailureOr<EmitTargets> resolveTargets(ModuleOp module);
  /// The kernel pipeline runs nested (runPipeline), when no dialect may be loaded any more: the
  /// dialects its passes create (affine, scf, vector, ...) are loaded with this pass's.
  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    OpPassManager pm(ModuleOp::getOperationName());
    evo::buildKernelsToPTXPipeline(pm, evo::PTXOptions());
    pm.getDependentDialects(registry);
  }
};

/// What we must remember of a gpu.module before the pipeline replaces it by a gpu.binary.
struct PendingModule {
  std::string symName;
  Location loc;
  evo::PlanAttr planAttr;
  evo::ManifestInfo info;
};
} // namespace

/// A kernel parameter under the bare-pointer ABI: a static, identity-layout memref in global
/// memory, of a size the manifest can state; or a scalar argument's value (an int or float type
/// the kernels take by value).
static LogicalResult checkKernelParam(gpu::GPUFuncOp func, unsigned index, Type t) {
  if (t.isIntOrIndexOrFloat())
    return evo::checkScalarArgumentType(t, [&] {
      return func.emitError() << "evo-emit-ptx: kernel parameter " << index << " ";
    });
  auto memref = dyn_cast<MemRefType>(t);
  Attribute space = memref ? memref.getMemorySpace() : Attribute();
  auto gpuSpace = dyn_cast_or_null<gpu::AddressSpaceAttr>(space);
  if (!memref || !memref.hasStaticShape() || !memref.getLayout().isIdentity() ||
      (space && !(gpuSpace && gpuSpace.getValue() == gpu::AddressSpace::Global)))
    return func.emitError() << "evo-emit-ptx: kernel parameters must be static, identity-layout "
                               "memrefs in global memory (the bare-pointer ABI), got "
                            << t;
  return evo::checkBufferType(t, [&] {
    return func.emitError() << "evo-emit-ptx: kernel parameter " << index << " ";
  });
}

/// The bytes of a constant buffer's value, as the kernels read them (little-endian elements, i1
/// one byte each), appended to `image`.
static LogicalResult appendConstantBytes(ElementsAttr value, Operation *global,
                                         std::string &image) {
  auto type = cast<ShapedType>(value.getType());
  Type elt = type.getElementType();
  if (auto res = dyn_cast<DenseResourceElementsAttr>(value)) {
    AsmResourceBlob *blob = res.getRawHandle().getBlob();
    int64_t want = type.getNumElements() * ((elt.getIntOrFloatBitWidth() + 7) / 8);
    if (!blob || elt.isInteger(1) || static_cast<int64_t>(blob->getData().size()) != want)
      return global->emitError()
             << "evo-emit-ptx: the value of constant '" << SymbolTable::getSymbolName(global).getValue()
             << "' is not available to write beside the PTX ("
             << (!blob ? "its dense_resource has no blob: elided, or dropped from the input"
                 : elt.isInteger(1) ? "an i1 dense_resource"
                                    : "its blob has " + std::to_string(blob->getData().size()) +
                                          " bytes, not " + std::to_string(want))
             << ")";
    image.append(blob->getData().data(), blob->getData().size());
    return success();
  }
  auto dense = dyn_cast<DenseElementsAttr>(value);
  if (!dense)
    return global->emitError() << "evo-emit-ptx: constant '" << SymbolTable::getSymbolName(global).getValue()
                               << "' has a value of a kind it cannot write: " << value;
  if (elt.isInteger(1) || dense.isSplat()) {
    // i1 is bit-packed in the attribute, and a splat holds one element: write them out.
    for (APInt v : dense.getValues<APInt>())
      for (unsigned byte = 0, n = (v.getBitWidth() + 7) / 8; byte < n; ++byte)
        image.push_back(static_cast<char>(v.extractBitsAsZExtValue(
            std::min(8u, v.getBitWidth() - 8 * byte), 8 * byte)));
    return success();
  }
  ArrayRef<char> raw = dense.getRawData();
  image.append(raw.data(), raw.size());
  return success();
}

/// The constants file of `info.plan`: each constant buffer's value (its memref.global, beside
/// the gpu.module) at an aligned offset.
static LogicalResult collectConstants(gpu::GPUModuleOp gm, evo::ManifestInfo &info) {
  for (auto [i, b] : llvm::enumerate(info.plan->buffers)) {
    if (b.role != evo::BufferRole::Constant)
      continue;
    auto global = dyn_cast_or_null<memref::GlobalOp>(
        SymbolTable::lookupSymbolIn(gm->getParentOp(), b.global));
    if (!global || !global.getConstant() || global.getType() != b.type ||
        !isa_and_nonnull<ElementsAttr>(global.getInitialValueAttr()))
      return gm.emitError() << "evo-emit-ptx: constant buffer '" << b.name
                            << "' needs a constant memref.global '" << b.global << "' of type "
                            << b.type << " with a value beside the gpu.module";
    int64_t offset = llvm::alignTo(info.constantsImage.size(), evo::kConstantAlignment);
    info.constantsImage.resize(offset, '\0');
    if (failed(appendConstantBytes(cast<ElementsAttr>(global.getInitialValueAttr()), global,
                                   info.constantsImage)))
      return failure();
    if (static_cast<int64_t>(info.constantsImage.size()) - offset != b.sizeInBytes())
      return global.emitError() << "evo-emit-ptx: constant '" << b.global << "' gave "
                                << info.constantsImage.size() - offset << " bytes, not "
                                << b.sizeInBytes();
    info.constantOffsets[i] = offset;
  }
  if (!info.constantOffsets.empty())
    info.constantsFile = info.name + ".constants.bin";
  return success();
}

/// A gpu.module checked (the chips, the plan, the bare-pointer ABI) and what its manifest needs,
/// taken before the pipeline replaces it by a gpu.binary.
static FailureOr<PendingModule> prepareModule(gpu::GPUModuleOp gm, const EmitTargets &targets,
                                              llvm::StringSet<llvm::MallocAllocator> &names) {
  if (failed(evo::checkKernelModule(gm)))
    return failure();
  // Kernels that need another chip (wgmma on sm_80) would fail deep in the pipeline, or be
  // emitted for a chip that cannot run them: one diagnostic per kernel and chip instead.
  bool runs = true;
  for (StringRef c :
       targets.chips.empty() ? SmallVector<std::string>{targets.ptxChip} : targets.chips)
    runs &= succeeded(evo::checkModuleRunsOn(gm, c, targets.chipsContext));
  if (!runs)
    return failure();
  PendingModule p{gm.getSymName().str(), gm.getLoc(), {}, {}};
  p.planAttr = gm->getAttrOfType<evo::PlanAttr>(evo::kPlanAttrName);
  if (!p.planAttr && gm->hasAttr(evo::kPlanAttrName)) {
    gm.emitError() << "evo-emit-ptx: '" << evo::kPlanAttrName << "' must be a #evo.plan attribute";
    return failure();
  }
  if (p.planAttr) {
    FailureOr<evo::LaunchPlan> plan = evo::LaunchPlan::fromModule(gm);
    if (failed(plan) || failed(plan->verifyAgainst(gm)))
      return failure();
    p.info.plan = std::move(*plan);
    p.info.name = p.info.plan->funcName;
    if (failed(collectConstants(gm, p.info)))
      return failure();
  } else {
    p.info.name = p.symName;
  }
  // The output name is a valid symbol (checked above or by the plan's reader), so the files
  // are plain names inside output-dir. Names equal without case collide on some file systems.
  if (!names.insert(StringRef(p.info.name).lower()).second) {
    gm.emitError() << "evo-emit-ptx: two gpu.modules would both write '" << p.info.name
                   << ".ptx'";
    return failure();
  }
  p.info.chip = targets.ptxChip;
  p.info.chips.assign(targets.chips.begin(), targets.chips.end());
  p.info.features = targets.ptx.features;
  p.info.ptxFile = p.info.name + ".ptx";
  for (auto func : gm.getOps<gpu::GPUFuncOp>()) {
    if (!func.isKernel())
      continue;
    evo::KernelSignature sig;
    sig.name = func.getName().str();
    for (auto [i, t] : llvm::enumerate(func.getArgumentTypes())) {
      if (failed(checkKernelParam(func, i, t)))
        return failure();
      sig.params.push_back(t);
    }
    sig.knobs = func->getAttr(evo::kKnobsAttrName);
    p.info.kernels.push_back(std::move(sig));
  }
  if (p.info.kernels.empty()) {
    gm.emitError() << "evo-emit-ptx: gpu.module '" << gm.getSymName()
                   << "' has no kernel (gpu.func ... kernel): nothing to launch";
    return failure();
  }
  gm.setTargetsAttr(ArrayAttr::get(gm.getContext(), ArrayRef<Attribute>{targets.nvvmTarget}));
  return p;
}

/// The PTX the pipeline left in the module's gpu.binary (which keeps the plan); with ptxas, the
/// kernels' resources and a cubin per chip.
static LogicalResult takeBinary(ModuleOp module, PendingModule &p, const EmitTargets &t) {
  auto bin = module.lookupSymbol<gpu::BinaryOp>(p.symName);
  if (!bin) {
    emitError(p.loc) << "evo-emit-ptx: no gpu.binary was produced for '" << p.symName << "'";
    return failure();
  }
  if (p.planAttr)
    bin->setAttr(evo::kPlanAttrName, p.planAttr);
  for (Attribute a : bin.getObjects())
    if (auto obj = dyn_cast<gpu::ObjectAttr>(a))
      p.info.ptx = obj.getObject().getValue().str();
  if (!t.ptxasPath)
    return success();
  llvm::Expected<evo::AssembleResult> assembled =
      evo::assemblePtx(*t.ptxasPath, p.info.ptx, t.ptxChip);
  if (!assembled) {
    emitError(p.loc) << "evo-emit-ptx: ptxas rejected the PTX of '" << p.info.name << "'"
                     << (t.chips.empty() ? "" : " for " + t.ptxChip) << ": "
                     << llvm::toString(assembled.takeError());
    return failure();
  }
  p.info.ptxasPath = *t.ptxasPath;
  p.info.resources = std::move(assembled->kernels);
  // chips=: a cubin per chip, from the same PTX (the PTX chip's is the one just made).
  for (const std::string &c : t.chips) {
    std::string cubin;
    if (c == t.ptxChip) {
      cubin = assembled->cubin;
    } else {
      llvm::Expected<evo::AssembleResult> other = evo::assemblePtx(*t.ptxasPath, p.info.ptx, c);
      if (!other) {
        emitError(p.loc) << "evo-emit-ptx: ptxas rejected the PTX of '" << p.info.name
                         << "' for " << c << ": " << llvm::toString(other.takeError());
        return failure();
      }
      cubin = std::move(other->cubin);
    }
    if (cubin.empty()) {
      emitError(p.loc) << "evo-emit-ptx: ptxas made no cubin of '" << p.info.name << "' for "
                       << c;
      return failure();
    }
    p.info.binaries.push_back({c, p.info.name + "." + c + ".cubin", std::move(cubin)});
  }
  return success();
}

/// All files of the invocation are one transaction (OutputFiles.h): staged here, handed to
/// evo-opt's transaction (renamed into place when the whole invocation succeeds) or committed
/// at the end of the pass outside evo-opt; a failure anywhere removes them.
static LogicalResult writeFiles(ModuleOp module, StringRef outputDir,
                                ArrayRef<PendingModule> pending) {
  evo::OutputTransaction local;
  llvm::Expected<std::string> dir = local.createDirectory(outputDir);
  if (!dir) {
    emitError(module.getLoc()) << "evo-emit-ptx: " << llvm::toString(dir.takeError());
    return failure();
  }
  evo::OutputTransaction *invocation = evo::OutputTransaction::current();
  for (const PendingModule &p : pending) {
    llvm::Error err = llvm::Error::success();
    SmallVector<std::string> files = {p.info.name + ".ptx", p.info.name + ".json"};
    for (const evo::ManifestInfo::Binary &b : p.info.binaries)
      files.push_back(b.file);
    if (!p.info.constantsFile.empty())
      files.push_back(p.info.constantsFile);
    for (const std::string &file : files) {
      if (!err && invocation)
        err = invocation->checkClaim(*dir, file);
      if (!err)
        err = local.claim(*dir, file);
    }
    for (const evo::ManifestInfo::Binary &b : p.info.binaries)
      if (!err)
        err = local.stage(*dir, b.file, [&](llvm::raw_ostream &os) { os << b.image; });
    if (!err && !p.info.constantsFile.empty())
      err = local.stage(*dir, p.info.constantsFile,
                        [&](llvm::raw_ostream &os) { os << p.info.constantsImage; });
    if (!err)
      err = local.stage(*dir, p.info.name + ".ptx",
                        [&](llvm::raw_ostream &os) { os << p.info.ptx; });
    if (!err)
      err = local.stage(*dir, p.info.name + ".json", [&](llvm::raw_ostream &os) {
        os << llvm::formatv("{0:2}", evo::buildManifest(p.info)) << "\n";
      });
    if (err) {
      emitError(p.loc) << "evo-emit-ptx: " << llvm::toString(std::move(err));
      return failure();
    }
  }
  if (llvm::Error err = invocation ? invocation->adopt(local) : local.commit()) {
    emitError(module.getLoc()) << "evo-emit-ptx: " << llvm::toString(std::move(err));
    return failure();
  }
  return success();
}

FailureOr<EmitTargets> EvoEmitPTXPass::resolveTargets(ModuleOp module) {
  // Resolve the tools first: a bad option fails before any work is done.
  EmitTargets t;
  if (ptxas != "none") {
    llvm::Expected<std::optional<std::string>> found = evo::findPtxas(ptxas);
    if (!found) {
      emitError(module.getLoc()) << "evo-emit-ptx: " << llvm::toString(found.takeError());
      return failure();
    }
    t.ptxasPath = *found;
  }
  // The targets: `chip` (PTX; ptxas only checks it and reports resources), or `chips` (PTX for
  // the lowest, a cubin per chip). Checked before NVPTX sees them: it aborts on some.
  t.ptxChip = chip;
  if (!chips.empty()) {
    std::vector<std::string> list(chips.begin(), chips.end());
    llvm::Expected<evo::ChipTargets> resolved = evo::resolveChips(list, features);
    if (!resolved) {
      emitError(module.getLoc()) << "evo-emit-ptx: " << llvm::toString(resolved.takeError());
      return failure();
    }
    if (!t.ptxasPath) {
      emitError(module.getLoc())
          << "evo-emit-ptx: chips= needs ptxas to assemble a cubin per chip ("
          << (ptxas == "none" ? "ptxas=none" : "none was found") << "); give ptxas=<path> or use chip=";
      return failure();
    }
    t.ptxChip = resolved->ptxChip;
    t.chips = resolved->chips;
    t.chipsContext = " (chips=" + llvm::join(list, ",") + ")";
  }
  t.ptx.chip = t.ptxChip;
  t.ptx.features = features;
  t.ptx.optLevel = optLevel;
  t.ptx.cudaPath = cudaPath;
  FailureOr<Attribute> target = evo::nvvmTarget(
      &getContext(), t.ptx, [&] { return emitError(module.getLoc()) << "evo-emit-ptx: "; });
  if (failed(target))
    return failure();
  t.nvvmTarget = *target;
  return t;
}

void EvoEmitPTXPass::runOnOperation() {
  ModuleOp module = getOperation();
  SmallVector<gpu::GPUModuleOp> gpuModules = llvm::to_vector(module.getOps<gpu::GPUModuleOp>());
  if (gpuModules.empty())
    return;
  FailureOr<EmitTargets> targets = resolveTargets(module);
  if (failed(targets))
    return signalPassFailure();
  SmallVector<PendingModule, 2> pending;
  llvm::StringSet<llvm::MallocAllocator> names;
  for (gpu::GPUModuleOp gm : gpuModules) {
    FailureOr<PendingModule> p = prepareModule(gm, *targets, names);
    if (failed(p))
      return signalPassFailure();
    pending.push_back(std::move(*p));
  }

  // NVVM lowering with the bare-pointer ABI, then LLVM's NVPTX backend to PTX text.
  OpPassManager pm(ModuleOp::getOperationName());
  evo::buildKernelsToPTXPipeline(pm, targets->ptx);
  if (failed(runPipeline(pm, module)))
    return signalPassFailure();
  for (PendingModule &p : pending)
    if (failed(takeBinary(module, p, *targets)))
      return signalPassFailure();

  if (outputDir == "-")
    return;
  if (failed(writeFiles(module, outputDir, pending)))
    return signalPassFailure();
}
