//===- Pipelines.h - evo-opt's end-to-end pipelines --------------*- C++ -*-===//

#ifndef EVO_PIPELINES_PIPELINES_H
#define EVO_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace evo {

/// Options of --evo-pipeline: the union of evo-lower-to-gpu's and evo-emit-ptx's.
struct EvoPipelineOptions : public mlir::PassPipelineOptions<EvoPipelineOptions> {
  Option<int64_t> blockSize{*this, "block-size", llvm::cl::desc("Threads per block"),
                            llvm::cl::init(256)};
  Option<int64_t> elementsPerThread{*this, "elements-per-thread",
                                    llvm::cl::desc("Elementwise: groups per thread"),
                                    llvm::cl::init(1)};
  Option<int64_t> vectorWidth{*this, "vector-width",
                              llvm::cl::desc("Elements per memory access"), llvm::cl::init(1)};
  Option<std::string> reductionStrategy{*this, "reduction-strategy",
                                        llvm::cl::desc("thread, warp or block"),
                                        llvm::cl::init("thread")};
  Option<int64_t> accumulators{*this, "accumulators",
                               llvm::cl::desc("Reductions: partial accumulators per thread"),
                               llvm::cl::init(1)};
  Option<int64_t> transposeTile{*this, "transpose-tile",
                                llvm::cl::desc("Elementwise: shared-memory transpose tile (0: off)"),
                                llvm::cl::init(0)};
  Option<int64_t> split{*this, "split",
                        llvm::cl::desc("Reductions: parallel slices combined by a second kernel"),
                        llvm::cl::init(1)};
  Option<bool> cacheRow{*this, "cache-row",
                        llvm::cl::desc("Row programs: keep each thread's part of the row in registers"),
                        llvm::cl::init(false)};
  Option<bool> prefetch{*this, "prefetch",
                        llvm::cl::desc("Tiled matmul: prefetch the next K tile into registers"),
                        llvm::cl::init(false)};
  ListOption<int64_t> tileSizes{*this, "tile-sizes", llvm::cl::desc("Matmul block tile M,N,K")};
  ListOption<int64_t> threadTile{*this, "thread-tile",
                                 llvm::cl::desc("Matmul register tile M,N")};
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
