//===- evo-opt.cpp - the evo-opt driver ----------------------------------------===//
//
// mlir-opt with every upstream dialect, extension, pass and LLVM IR translation, plus evo's
// passes and pipelines. Invoked under another name it is another tool (Personalities.h):
// evo-runner / mlir-runner (RunnerMain.cpp) or FileCheck (FileCheckMain.cpp).
//
//===----------------------------------------------------------------------===//

#include "Personalities.h"

#include "evo/Conversion/Passes.h"
#include "evo/Evaluation/Passes.h"
#include "evo/Pipelines/Pipelines.h"
#include "evo/Target/Manifest.h"
#include "evo/Target/Passes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

static int optMain(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllToLLVMIRTranslations(registry);
  mlir::registerAllPasses();
  evo::registerEvoConversionPasses();
  evo::registerEvoTargetPasses();
  evo::registerEvoEvaluationPasses();
  evo::registerEvoPipelines();

  llvm::cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << evo::evoVersionString() << "\n";
  });
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "evo-opt: lower linalg ops to evolved GPU kernels\n", registry));
}

int main(int argc, char **argv) {
  llvm::StringRef tool = argc > 0 ? llvm::sys::path::filename(argv[0]) : "evo-opt";
  if (tool == "evo-runner" || tool == "mlir-runner")
    return evo::runnerMain(argc, argv);
  if (tool == "FileCheck")
    return evo::fileCheckMain(argc, argv);
  return optMain(argc, argv);
}
