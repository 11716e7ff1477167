//===- evo-opt.cpp - the evo-opt driver ----------------------------------------===//
//
// mlir-opt with every upstream dialect, extension, pass and LLVM IR translation, plus evo's
// passes and pipelines.
//
//===----------------------------------------------------------------------===//

#include "evo/Conversion/Passes.h"
#include "evo/Pipelines/Pipelines.h"
#include "evo/Target/Manifest.h"
#include "evo/Target/Passes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllToLLVMIRTranslations(registry);
  mlir::registerAllPasses();
  evo::registerEvoConversionPasses();
  evo::registerEvoTargetPasses();
  evo::registerEvoPipelines();

  llvm::cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << evo::evoVersionString() << "\n";
  });
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "evo-opt: lower linalg ops to evolved GPU kernels\n", registry));
}
