//===- RunnerMain.cpp - evo-opt as mlir-runner -----------------------------===//
//
// Invoked as `evo-runner` or `mlir-runner`, evo-opt is upstream's mlir-runner: it translates a
// module in the LLVM dialect to LLVM IR (gpu.binary and gpu.launch_func included, which become
// mgpu* calls), JIT-compiles it for the host and runs the entry point, resolving external symbols
// in the --shared-libs (libevo_cuda_runtime.so, libevo_runner_utils.so). With the static build
// this runs lowered GPU programs on hosts that have no LLVM installed.
//
//===----------------------------------------------------------------------===//

#include "Personalities.h"

#include "evo/Target/Manifest.h"
#include "mlir/ExecutionEngine/JitRunner.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Linker/Linker.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

namespace {

/// --link-nested-modules, as upstream's mlir-runner (for host and device code that both run on
/// the CPU, as in the SPIR-V CPU runner tests).
bool linkNestedModules = false;

std::unique_ptr<llvm::Module> buildLLVMModule(mlir::Operation *op, llvm::LLVMContext &context) {
  auto module = llvm::dyn_cast<mlir::ModuleOp>(op);
  if (!module) {
    op->emitError("the input must be a builtin.module");
    return nullptr;
  }
  std::unique_ptr<llvm::Module> nestedModule;
  if (linkNestedModules) {
    auto nested = module.getOps<mlir::ModuleOp>();
    if (!llvm::hasSingleElement(nested)) {
      module.emitError("--link-nested-modules needs exactly one nested module");
      return nullptr;
    }
    mlir::ModuleOp inner = *nested.begin();
    nestedModule = mlir::translateModuleToLLVMIR(inner, context);
    if (!nestedModule)
      return nullptr;
    inner.erase();
  }
  std::unique_ptr<llvm::Module> mainModule = mlir::translateModuleToLLVMIR(module, context);
  if (mainModule && nestedModule &&
      llvm::Linker::linkModules(*mainModule, std::move(nestedModule))) {
    module.emitError("cannot link the nested module");
    return nullptr;
  }
  return mainModule;
}

} // namespace

int evo::runnerMain(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::InitializeNativeTargetAsmParser();

  // Registered here, not at namespace scope, so that evo-opt's own --help stays free of it.
  llvm::cl::opt<bool, /*ExternalStorage=*/true> linkNested(
      "link-nested-modules",
      llvm::cl::desc("Link two nested MLIR modules into a single LLVM IR module"),
      llvm::cl::location(linkNestedModules));
  llvm::cl::SetVersionPrinter(
      [](llvm::raw_ostream &os) { os << evo::evoVersionString() << " (mlir-runner)\n"; });

  mlir::DialectRegistry registry;
  mlir::registerAllToLLVMIRTranslations(registry);
  mlir::JitRunnerConfig config;
  config.llvmModuleBuilder = buildLLVMModule;
  return mlir::JitRunnerMain(argc, argv, registry, config);
}
