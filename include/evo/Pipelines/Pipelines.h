//===- Pipelines.h - evo-opt's end-to-end pipelines --------------*- C++ -*-===//

#ifndef EVO_PIPELINES_PIPELINES_H
#define EVO_PIPELINES_PIPELINES_H

#include "evo/Dialect/Evo/IR/Knobs.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace evo {

/// The options --evo-pipeline forwards to its passes other than the knobs, once: the pass
/// (`lower`: evo-lower-to-gpu, `emit`: evo-emit-ptx), the type, the member (the same in the
/// pass's options), the spelling, the description and the default (those of the pass).
#define EVO_PIPELINE_PASS_OPTIONS(X)                                                              \
  X(lower, bool, fuseElementwise, "fuse-elementwise", "Fuse elementwise producers", true)         \
  X(lower, int64_t, inlineConstantBytes, "inline-constant-bytes",                                 \
    "Larger constants become constant buffers (a .constants.bin beside the PTX)", 1048576)        \
  X(lower, std::string, tuningDb, "tuning-db",                                                    \
    "Tuning database: tasks with a record for `chip` take its knobs", "")                         \
  X(emit, std::string, chip, "chip", "Target SM", "sm_90")                                        \
  X(emit, std::string, features, "features", "PTX ISA feature", "+ptx80")                         \
  X(emit, int, optLevel, "opt-level", "LLVM optimization level", 3)                               \
  X(emit, std::string, outputDir, "output-dir", "Where <name>.ptx and <name>.json go", ".")       \
  X(emit, std::string, ptxas, "ptxas", "ptxas path, empty or 'none'", "")                         \
  X(emit, std::string, cudaPath, "cuda-path", "CUDA toolkit root", "")

/// Options of --evo-pipeline: the union of evo-lower-to-gpu's and evo-emit-ptx's.
struct EvoPipelineOptions : public mlir::PassPipelineOptions<EvoPipelineOptions> {
  // The knobs, from the knob list (EvoKnobs.td), with evo-lower-to-gpu's spellings.
#define EVO_PIPELINE_OPTION_Int(cpp, arg, doc)                                                    \
  Option<int64_t> cpp{*this, arg, llvm::cl::desc(doc), llvm::cl::init(ScheduleKnobs().cpp)};
#define EVO_PIPELINE_OPTION_Bool(cpp, arg, doc)                                                   \
  Option<bool> cpp{*this, arg, llvm::cl::desc(doc), llvm::cl::init(ScheduleKnobs().cpp)};
#define EVO_PIPELINE_OPTION_Strategy(cpp, arg, doc)                                               \
  Option<ReductionStrategy> cpp{*this, arg, llvm::cl::desc(doc),                                  \
                                llvm::cl::init(ScheduleKnobs().cpp),                              \
                                EVO_REDUCTION_STRATEGY_CL_VALUES};
#define EVO_PIPELINE_OPTION_F32Matmul(cpp, arg, doc)                                              \
  Option<F32Matmul> cpp{*this, arg, llvm::cl::desc(doc), llvm::cl::init(ScheduleKnobs().cpp),     \
                        EVO_F32_MATMUL_CL_VALUES};
#define EVO_PIPELINE_OPTION_List(cpp, arg, doc) ListOption<int64_t> cpp{*this, arg, llvm::cl::desc(doc)};
#define EVO_PIPELINE_KNOB_OPTION(name, cpp, kind, arg, doc) EVO_PIPELINE_OPTION_##kind(cpp, arg, doc)
  EVO_KNOB_LIST(EVO_PIPELINE_KNOB_OPTION)
#undef EVO_PIPELINE_KNOB_OPTION
#define EVO_PIPELINE_PASS_OPTION(pass, type, cpp, arg, doc, value)                                 \
  Option<type> cpp{*this, arg, llvm::cl::desc(doc), llvm::cl::init(value)};
  EVO_PIPELINE_PASS_OPTIONS(EVO_PIPELINE_PASS_OPTION)
#undef EVO_PIPELINE_PASS_OPTION
  ListOption<std::string> chips{*this, "chips",
                                llvm::cl::desc("Target SMs, e.g. sm_80,sm_90a: PTX for the lowest "
                                               "plus a cubin per chip (evo-emit-ptx's chips)")};
};

/// 1. evo-lower-to-gpu, 2. evo-emit-ptx.
void buildEvoPipeline(mlir::OpPassManager &pm, const EvoPipelineOptions &options);

/// Registers --evo-pipeline.
void registerEvoPipelines();

} // namespace evo

#endif
