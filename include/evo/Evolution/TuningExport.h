//===- TuningExport.h - a run's winners as tuning records ----------*- C++ -*-===//
//
// What an evolution run found, in the form `evo-lower-to-gpu tuning-db=FILE` applies to other
// modules without a search (Conversion/TuningDB.h): one record per finished task of the store,
// keyed by the signature of the task's source and the run's chip. Drawn from the store alone,
// like the reports, so `evo-opt tuning-export RUN_DIR` works on any finished run.
// docs/evolution.md, "Tuning records".
//
//===----------------------------------------------------------------------===//

#ifndef EVO_EVOLUTION_TUNINGEXPORT_H
#define EVO_EVOLUTION_TUNINGEXPORT_H

#include "evo/Conversion/TuningDB.h"
#include "evo/Evolution/RunStore.h"
#include "mlir/IR/MLIRContext.h"

namespace evo {

/// The file name evo-evolve writes in its run directory.
inline constexpr llvm::StringLiteral kTuningDbFileName = "tuning.json";

/// The records of the store's finished tasks whose winner is valid (the baseline too, when
/// nothing beat it: the record then says the defaults are best). Tasks of one signature (the
/// same op twice in a model) give one record, the faster. The sources are parsed in `ctx`.
llvm::Expected<TuningDb> exportTuningDb(const RunStore &store, mlir::MLIRContext *ctx);

} // namespace evo

#endif // EVO_EVOLUTION_TUNINGEXPORT_H
