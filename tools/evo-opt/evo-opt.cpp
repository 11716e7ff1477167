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
#include "evo/Evolution/Passes.h"
#include "evo/Evolution/RunStore.h"
#include "llvm/Support/FormatVariadic.h"
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
  evo::registerEvoEvolutionPasses();
  evo::registerEvoPipelines();

  llvm::cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << evo::evoVersionString() << "\n";
  });
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "evo-opt: lower linalg ops to evolved GPU kernels\n", registry));
}

/// `evo-opt report RUN_DIR [OUT_DIR]`: the reports of a stored run, without a GPU.
static int reportMain(int argc, char **argv) {
  if (argc < 3 || argc > 4) {
    llvm::errs() << "usage: evo-opt report RUN_DIR [OUT_DIR]\n";
    return 2;
  }
  llvm::Expected<std::unique_ptr<evo::RunStore>> store = evo::RunStore::open(argv[2], false);
  if (!store) {
    llvm::errs() << "evo-opt report: " << llvm::toString(store.takeError()) << "\n";
    return 1;
  }
  llvm::StringRef out = argc == 4 ? argv[3] : argv[2];
  if (llvm::Error e = evo::writeReports(**store, out)) {
    llvm::errs() << "evo-opt report: " << llvm::toString(std::move(e)) << "\n";
    return 1;
  }
  llvm::json::Value summary = evo::summarizeRun(**store);
  llvm::outs() << llvm::formatv("{0,-24} {1,-12} {2,12} {3,12} {4,9} {5,10}\n", "task", "family",
                                "baseline ms", "best ms", "speedup", "evaluated");
  if (const llvm::json::Array *tasks = summary.getAsObject()->getArray("tasks"))
    for (const llvm::json::Value &t : *tasks) {
      const llvm::json::Object &o = *t.getAsObject();
      const llvm::json::Object *counts = o.getObject("counts");
      llvm::outs() << llvm::formatv("{0,-24} {1,-12} {2,12:f4} {3,12:f4} {4,8:f2}x {5,10}\n",
                                    o.getString("name").value_or(""),
                                    o.getString("family").value_or(""),
                                    o.getNumber("baseline_ms").value_or(0),
                                    o.getNumber("best_ms").value_or(0),
                                    o.getNumber("speedup").value_or(0),
                                    counts ? counts->getInteger("evaluated").value_or(0) : 0);
    }
  llvm::outs() << "reports: " << out << "/report.html, " << out << "/report.json\n";
  return 0;
}

int main(int argc, char **argv) {
  llvm::StringRef tool = argc > 0 ? llvm::sys::path::filename(argv[0]) : "evo-opt";
  if (tool == "evo-runner" || tool == "mlir-runner")
    return evo::runnerMain(argc, argv);
  if (argc > 1 && llvm::StringRef(argv[1]) == "report")
    return reportMain(argc, argv);
  if (tool == "FileCheck")
    return evo::fileCheckMain(argc, argv);
  return optMain(argc, argv);
}
