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
  lower.blockSize = options.blockSize;
  lower.elementsPerThread = options.elementsPerThread;
  lower.vectorWidth = options.vectorWidth;
  lower.reductionStrategy = options.reductionStrategy;
  lower.accumulators = options.accumulators;
  lower.cacheRow = options.cacheRow;
  lower.prefetch = options.prefetch;
  lower.split = options.split;
  lower.transposeTile = options.transposeTile;
  lower.tileSizes = llvm::to_vector(options.tileSizes);
  lower.threadTile = llvm::to_vector(options.threadTile);
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
