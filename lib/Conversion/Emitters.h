//===- Emitters.h - one kernel emitter per task family -----------*- C++ -*-===//
//
// Private to the lowering. Each emitter validates the knobs against the task's shapes (with a
// diagnostic at the task's op) and then writes the kernel(s) into the gpu.module.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_LIB_CONVERSION_EMITTERS_H
#define EVO_LIB_CONVERSION_EMITTERS_H

#include "TaskAnalysis.h"
#include "evo/Conversion/LowerToGPU.h"

namespace evo {

struct EmitContext {
  mlir::gpu::GPUModuleOp module;
  std::string kernelName;
};

mlir::FailureOr<LoweredTask> emitElementwise(const GenericTask &task, const ScheduleKnobs &knobs,
                                             EmitContext &ctx);
/// Reductions, and contractions without tile sizes (one thread per output element).
mlir::FailureOr<LoweredTask> emitReduction(const GenericTask &task, const ScheduleKnobs &knobs,
                                           EmitContext &ctx);
/// Contractions with tile sizes: shared-memory tiles and a register tile per thread.
mlir::FailureOr<LoweredTask> emitTiledMatmul(const GenericTask &task, const ScheduleKnobs &knobs,
                                             EmitContext &ctx);
mlir::FailureOr<LoweredTask> emitSoftmax(const SoftmaxTask &task, const ScheduleKnobs &knobs,
                                         EmitContext &ctx);

/// Checks vector_width against the innermost extent and the widest element accessed.
mlir::LogicalResult checkVectorWidth(mlir::Operation *op, int64_t vectorWidth, int64_t extent,
                                     llvm::ArrayRef<mlir::MemRefType> params,
                                     llvm::StringRef what);

int64_t ceilDiv(int64_t a, int64_t b);

} // namespace evo

#endif
