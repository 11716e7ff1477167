//===- Compile.cpp - kernels to PTX ---------------------------------------------===//

#include "evo/Target/Compile.h"
#include "evo/Target/Chips.h"
#include "evo/Target/PTXAssembler.h"
#include "evo/Target/Passes.h"
#include "evo/Dialect/Evo/IR/InputChecks.h"
#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/IR/Intrinsics.h"

using namespace mlir;

namespace evo {

namespace {
/// Workgroup buffers become shared-memory globals aligned only to their element type; the
/// emitters' 128-bit shared-memory accesses (vector_width=4 matmul tiles) need 16 bytes.
struct AlignWorkgroupGlobals
    : PassWrapper<AlignWorkgroupGlobals, OperationPass<gpu::GPUModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(AlignWorkgroupGlobals)
  StringRef getArgument() const override { return "evo-align-workgroup-globals"; }
  void runOnOperation() override {
    getOperation().walk([](LLVM::GlobalOp g) {
      if (g.getAddrSpace() == static_cast<unsigned>(NVVM::NVVMMemorySpace::Shared) &&
          g.getAlignment().value_or(0) < 16)
        g.setAlignment(16);
    });
  }
};
} // namespace

/// Every symbol of a gpu.module becomes a PTX symbol (gpu.func, llvm.func, globals), and the
/// module's own name the gpu.binary's and, without a plan, the output files': NVPTX aborts the
/// process (LLVM ERROR) on a name it cannot print, so each is checked before it gets there.
LogicalResult checkKernelModule(gpu::GPUModuleOp gm) {
  if (failed(checkSymbolName(gm.getSymName(), "gpu.module name",
                                  [&] { return gm.emitError(); })))
    return failure();
  // NVPTX has no f80/f128 arithmetic and aborts the process on it ("unsupported library call
  // operation"): refuse those types anywhere in the module (values, signatures, attributes).
  Operation *bad = nullptr;
  Type badType;
  auto visit = [&](Type t) {
    if (!badType && isa<Float80Type, Float128Type>(t))
      badType = t;
  };
  gm.walk([&](Operation *op) {
    for (Type t : op->getResultTypes())
      t.walk(visit);
    for (Region &r : op->getRegions())
      for (Block &b : r)
        for (BlockArgument a : b.getArguments())
          a.getType().walk(visit);
    op->getAttrDictionary().walk(visit);
    if (badType && !bad)
      bad = op;
    return badType ? WalkResult::interrupt() : WalkResult::advance();
  });
  if (bad)
    return bad->emitError() << "NVPTX cannot compile the type " << badType
                            << " (no f80/f128 arithmetic on GPUs)";
  for (Operation &op : gm.getBody()->getOperations()) {
    auto name = op.getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName());
    if (!name)
      continue;
    // Declarations of LLVM intrinsics (llvm.nvvm.*) are not symbols of the PTX.
    if (isa<LLVM::LLVMFuncOp>(op) &&
        llvm::Intrinsic::lookupIntrinsicID(name.getValue()) != llvm::Intrinsic::not_intrinsic)
      continue;
    if (failed(checkSymbolName(name.getValue(), "symbol",
                                    [&] { return op.emitError(); })))
      return failure();
  }
  return success();
}

FailureOr<Attribute> nvvmTarget(MLIRContext *ctx, const PTXOptions &o,
                                function_ref<InFlightDiagnostic()> emitError) {
  if (o.optLevel < 0 || o.optLevel > 3)
    return emitError() << "opt-level must be 0-3, got " << o.optLevel;
  // NVPTX would abort the process on a PTX version the chip does not accept (LLVM ERROR), and
  // only warn on a chip or feature it does not know.
  if (llvm::Error e = checkChip(o.chip, o.features))
    return emitError() << llvm::toString(std::move(e));
  if (failed(NVVM::NVVMTargetAttr::verify(emitError, o.optLevel, "nvptx64-nvidia-cuda", o.chip,
                                          o.features, DictionaryAttr(), ArrayAttr(), true)))
    return failure();
  return Attribute(
      NVVM::NVVMTargetAttr::get(ctx, o.optLevel, "nvptx64-nvidia-cuda", o.chip, o.features));
}

void buildKernelsToPTXPipeline(OpPassManager &pm, const PTXOptions &options) {
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  // Vector ops the NVVM conversion has no pattern for (strided slices, transfers, contractions,
  // n-d shape changes, ...) become ones it has; first, as they may make affine and scf ops.
  kernels.addPass(createEvoLowerVectorPass());
  // Views (subview, expand/collapse_shape, ...) become explicit offset and stride arithmetic,
  // which the NVVM conversion handles and which may make affine ops too.
  kernels.addPass(memref::createExpandStridedMetadataPass());
  kernels.addPass(createLowerAffinePass());
  kernels.addPass(createSCFToControlFlowPass());
  ConvertGpuOpsToNVVMOpsOptions nvvm;
  nvvm.useBarePtrCallConv = true;
  kernels.addPass(createConvertGpuOpsToNVVMOps(nvvm));
  // NVVM ops without an LLVM intrinsic (mbarrier waits, predicated TMA) become inline PTX.
  kernels.addPass(createConvertNVVMToLLVMPass());
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
  kernels.addPass(createEvoStreamingLoadsPass());
  kernels.addPass(std::make_unique<AlignWorkgroupGlobals>());
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = "isa";
  binary.toolkitPath = options.cudaPath.empty() ? defaultCudaPath() : options.cudaPath;
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

FailureOr<std::string> compileToPTX(ModuleOp module, const PTXOptions &options) {
  MLIRContext *ctx = module.getContext();
  ctx->loadDialect<gpu::GPUDialect, NVVM::NVVMDialect, LLVM::LLVMDialect>();
  auto gms = llvm::to_vector(module.getOps<gpu::GPUModuleOp>());
  if (gms.size() != 1)
    return module.emitError("compileToPTX needs exactly one gpu.module");
  FailureOr<Attribute> target = nvvmTarget(ctx, options, [&] { return module.emitError(); });
  if (failed(target))
    return failure();
  if (failed(checkKernelModule(gms.front())) ||
      failed(checkModuleRunsOn(gms.front(), options.chip)))
    return failure();
  gms.front().setTargetsAttr(ArrayAttr::get(ctx, ArrayRef<Attribute>{*target}));
  PassManager pm(ctx, ModuleOp::getOperationName());
  buildKernelsToPTXPipeline(pm, options);
  if (failed(pm.run(module)))
    return failure();
  for (auto bin : module.getOps<gpu::BinaryOp>())
    for (Attribute a : bin.getObjects())
      if (auto obj = dyn_cast<gpu::ObjectAttr>(a))
        return obj.getObject().getValue().str();
  return module.emitError("compileToPTX: no PTX was produced");
}

} // namespace evo
