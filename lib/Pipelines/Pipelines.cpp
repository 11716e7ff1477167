//===- Pipelines.cpp - evo-opt's end-to-end pipelines ------------------------===//

#include "evo/Pipelines/Pipelines.h"
#include "evo/Conversion/Passes.h"
#include "evo/Target/Passes.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

namespace evo {

void buildEvoPipeline(OpPassManager &pm, const EvoPipelineOptions &options) {
  // 1. Linalg on tensors -> host function + gpu.module kernels (the schedule knobs apply here).
  EvoLowerToGPUPassOptions lower;
#define EVO_KNOB_COPY(name, cpp, kind, arg, doc) detail::copyOption(lower.cpp, options.cpp);
  EVO_KNOB_LIST(EVO_KNOB_COPY)
#undef EVO_KNOB_COPY
  lower.fuseElementwise = options.fuseElementwise;
  pm.addPass(createEvoLowerToGPUPass(lower));

  // 2. Kernels -> PTX (+ ptxas report) -> <name>.ptx and <name>.json; gpu.binary stays in the IR.
  EvoEmitPTXPassOptions emit;
  emit.chip = options.chip;
  emit.features = options.features;
  emit.optLevel = options.optLevel;
  emit.outputDir = options.outputDir;
  emit.ptxas = options.ptxas;
  emit.cudaPath = options.cudaPath;
  pm.addPass(createEvoEmitPTXPass(emit));
}

void registerEvoPipelines() {
  PassPipelineRegistration<EvoPipelineOptions>(
      "evo-pipeline", "Lower linalg ops to GPU kernels and emit PTX with manifests",
      buildEvoPipeline);
}

} // namespace evo
