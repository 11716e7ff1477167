//===- Pipelines.cpp - evo-opt's end-to-end pipelines ------------------------===//

#include "evo/Pipelines/Pipelines.h"
#include "evo/Conversion/Passes.h"
#include "evo/Target/Passes.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

namespace evo {

void buildEvoPipeline(OpPassManager &pm, const EvoPipelineOptions &options) {
  // The passes' options from the pipeline's: the knobs, then the rest.
  EvoLowerToGPUPassOptions lower;
  EvoEmitPTXPassOptions emit;
#define EVO_KNOB_COPY(name, cpp, kind, arg, doc) detail::copyOption(lower.cpp, options.cpp);
  EVO_KNOB_LIST(EVO_KNOB_COPY)
#undef EVO_KNOB_COPY
#define EVO_PIPELINE_COPY(pass, type, cpp, arg, doc, value) pass.cpp = options.cpp;
  EVO_PIPELINE_PASS_OPTIONS(EVO_PIPELINE_COPY)
#undef EVO_PIPELINE_COPY
  detail::copyOption(emit.chips, options.chips);
  // Tuning records apply for the chip the PTX is for.
  lower.tuningChip = options.chip;
  // A module with nothing to lower would emit nothing: an error here, not a warning.
  lower.requireKernels = true;

  // 1. Linalg on tensors -> host function + gpu.module kernels (the schedule knobs apply here).
  pm.addPass(createEvoLowerToGPUPass(lower));
  // 2. Kernels -> PTX (+ ptxas report) -> <name>.ptx and <name>.json; gpu.binary stays in the IR.
  pm.addPass(createEvoEmitPTXPass(emit));
}

void registerEvoPipelines() {
  PassPipelineRegistration<EvoPipelineOptions>(
      "evo-pipeline", "Lower linalg ops to GPU kernels and emit PTX with manifests",
      buildEvoPipeline);
}

} // namespace evo
