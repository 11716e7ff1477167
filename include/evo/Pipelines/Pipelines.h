//===- Pipelines.h - evo-opt's end-to-end pipelines --------------*- C++ -*-===//

#ifndef EVO_PIPELINES_PIPELINES_H
#define EVO_PIPELINES_PIPELINES_H

#include "evo/Dialect/Evo/IR/Knobs.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace evo {

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
#define EVO_PIPELINE_OPTION_List(cpp, arg, doc) ListOption<int64_t> cpp{*this, arg, llvm::cl::desc(doc)};
#define EVO_PIPELINE_KNOB_OPTION(name, cpp, kind, arg, doc) EVO_PIPELINE_OPTION_##kind(cpp, arg, doc)
  EVO_KNOB_LIST(EVO_PIPELINE_KNOB_OPTION)
#undef EVO_PIPELINE_KNOB_OPTION
  Option<bool> fuseElementwise{*this, "fuse-elementwise",
                               llvm::cl::desc("Fuse elementwise producers"), llvm::cl::init(true)};
  Option<std::string> chip{*this, "chip", llvm::cl::desc("Target SM"), llvm::cl::init("sm_90")};
  Option<std::string> features{*this, "features", llvm::cl::desc("PTX ISA feature"),
                               llvm::cl::init("+ptx80")};
  Option<int> optLevel{*this, "opt-level", llvm::cl::desc("LLVM optimization level"),
                       llvm::cl::init(3)};
  Option<std::string> outputDir{*this, "output-dir",
                                llvm::cl::desc("Where <name>.ptx and <name>.json go"),
                                llvm::cl::init(".")};
  Option<std::string> ptxas{*this, "ptxas", llvm::cl::desc("ptxas path, empty or 'none'"),
                            llvm::cl::init("")};
  Option<std::string> cudaPath{*this, "cuda-path", llvm::cl::desc("CUDA toolkit root"),
                               llvm::cl::init("")};
};

/// 1. evo-lower-to-gpu, 2. evo-emit-ptx.
void buildEvoPipeline(mlir::OpPassManager &pm, const EvoPipelineOptions &options);

/// Registers --evo-pipeline.
void registerEvoPipelines();

} // namespace evo

#endif
