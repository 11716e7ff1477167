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
#include "evo/Conversion/ScanForm.h"

namespace evo {

struct EmitContext {
  mlir::gpu::GPUModuleOp module;
  std::string kernelName;
};

/// A task lowered to one kernel, `ctx.kernelName`, launched with `grid` x `block` over all of the
/// task's `numParams` buffers in order.
LoweredTask singleKernel(TaskFamily family, const EmitContext &ctx, std::array<int64_t, 3> grid,
                         std::array<int64_t, 3> block, unsigned numParams);

mlir::FailureOr<LoweredTask> emitElementwise(const GenericTask &task, const ScheduleKnobs &knobs,
                                             EmitContext &ctx);
/// Reductions, and contractions without tile sizes (one thread per output element).
mlir::FailureOr<LoweredTask> emitReduction(const GenericTask &task, const ScheduleKnobs &knobs,
                                           EmitContext &ctx);
/// A contraction seen as C[m, n] += A[m, k] * B[k, n]: the loop dimensions that make up each
/// GEMM index (row-major, the last fastest; one each for a plain contraction), the batch
/// dimensions, and which input is A. Convolutions (any strides and dilations, grouped, depthwise,
/// transposed: ConvGemm.cpp) are implicit GEMMs: M = output channels (none for a depthwise one),
/// N = (batch, output pixels), K = (input channels, filter window) in the image's layout order,
/// batch = a group or depthwise channel, A = the filter.
struct GemmView {
  llvm::SmallVector<unsigned> m, n, k, batch;
  unsigned a = 0, b = 1;
};
std::optional<GemmView> gemmView(mlir::linalg::LinalgOp op);
/// A contraction masked by its output indices: `yield add(out, select(c, a * b, 0))` (either
/// order of the add's operands, the product in either branch of the select), where `c` is
/// computed from linalg.index of parallel dimensions and constants only: torch.tril(A @ B)
/// written as one generic. The sum over K of the select is the select of the sum, so the tiled
/// kernel computes the plain product and applies the mask per output element, before the
/// initial value.
struct OutputMask {
  mlir::Operation *select = nullptr;
  mlir::Value product;
  bool keepWhenTrue = true; // the product is the select's true value
  // The condition's ops (index ops included), in payload order.
  llvm::SmallVector<mlir::Operation *> condOps;
};
std::optional<OutputMask> matchOutputMask(mlir::linalg::GenericOp op);
/// gemmView's convolutions (ConvGemm.cpp).
std::optional<GemmView> convolutionGemmView(mlir::linalg::LinalgOp op);

/// Contractions and convolutions with tile sizes: shared-memory tiles and a register tile per
/// thread.
mlir::FailureOr<LoweredTask> emitTiledMatmul(const GenericTask &task, const ScheduleKnobs &knobs,
                                             EmitContext &ctx);
/// f16/bf16 contractions with tile sizes and wgmma: Hopper tensor cores fed by TMA
/// (EmitWgmma.cpp); f32 ones too with f32_matmul = tf32 or 3xtf32.
mlir::FailureOr<LoweredTask> emitWgmmaMatmul(const GenericTask &task, const ScheduleKnobs &knobs,
                                             EmitContext &ctx);
/// f16/bf16 contractions with tile sizes and mma_sync: mma.sync.m16n8k16 fed by cp.async
/// (EmitMmaSync.cpp; sm_80 and newer).
mlir::FailureOr<LoweredTask> emitMmaSyncMatmul(const GenericTask &task, const ScheduleKnobs &knobs,
                                               EmitContext &ctx);
mlir::FailureOr<LoweredTask> emitSoftmax(const SoftmaxTask &task, const ScheduleKnobs &knobs,
                                         EmitContext &ctx);

/// The shape of a row program (EmitRows.cpp): rows of `cols` elements, indexed by `rowDims`.
struct RowShape {
  llvm::SmallVector<int64_t> rowDims;
  int64_t cols = 0;
  /// The trailing dimensions a row spans, outermost first (their product is `cols`): one for a
  /// softmax or a LayerNorm over the last dimension, three for a LayerNorm over [C, H, W].
  llvm::SmallVector<int64_t> colDims;
  /// Only once `f`'s loops are interchanged (permuteRowLoops) so that the reductions trail.
  bool permuted = false;
};
/// When `f` is a row program (a whole function of row-wise ops), its row shape; also when it is
/// one only with its loops interchanged (`permuted`: a reduction over a non-trailing dimension,
/// as RMSNorm over the channels of NCHW).
std::optional<RowShape> matchRowProgram(mlir::func::FuncOp f);
/// Interchanges the loops of `f`'s ops over the full space so that the reductions trail, when
/// `f` is no row program as it is. Returns whether it changed `f`.
bool permuteRowLoops(mlir::func::FuncOp f);
mlir::FailureOr<LoweredTask> emitRows(mlir::func::FuncOp task, const RowShape &shape,
                                      const ScheduleKnobs &knobs, EmitContext &ctx);

/// Scans written as masked triangular reductions (evo/Conversion/ScanForm.h): a thread, a warp
/// or a block per scanned line (EmitScan.cpp).
mlir::FailureOr<LoweredTask> emitScan(const GenericTask &task, const ScanForm &form,
                                      const ScheduleKnobs &knobs, EmitContext &ctx);

/// Checks vector_width against the innermost extent and the widest element accessed.
mlir::LogicalResult checkVectorWidth(mlir::Operation *op, int64_t vectorWidth, int64_t extent,
                                     llvm::ArrayRef<mlir::MemRefType> params,
                                     llvm::StringRef what);

int64_t ceilDiv(int64_t a, int64_t b);

} // namespace evo

#endif
