//===- TensorCore.h - what the tensor-core matmul emitters share ---*- C++ -*-===//
//
// Private to the lowering. The wgmma (EmitWgmma.cpp, sm_90a) and mma.sync (EmitMmaSync.cpp,
// sm_80+) schedules read the same contractions (C[batch][m][n] += A[batch][m][k] * B, B laid out
// [batch][k][n] or [batch][n][k]), address shared memory the same way, visit output tiles in the
// same grouped order and store their f32 accumulators through the same epilogue.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_LIB_CONVERSION_TENSORCORE_H
#define EVO_LIB_CONVERSION_TENSORCORE_H

#include "Emitters.h"
#include "KernelBuilder.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace evo {

/// Whether the payload is `out + ext(a) * ext(b)` (the extensions optional), with a and b the
/// two inputs in either order.
bool isMultiplyAdd(const GenericTask &t);

/// The loop dimensions an operand's map reads, in memory order (outermost first), when the map
/// is a projected permutation.
std::optional<llvm::SmallVector<unsigned>> dimsOf(mlir::AffineMap map);

/// A contraction as a tensor-core GEMM: which kernel parameters are A, B and C, which loop
/// dimensions are M, N, K (and the batch, at most one), the sizes and the operand types.
struct TensorCoreGemm {
  const GenericTask *t = nullptr;
  unsigned pa = 0, pb = 0, pc = 0;     // kernel parameters of A, B and C
  unsigned mD = 0, nD = 0, kD = 0;     // loop dimensions of M, N and K
  llvm::SmallVector<unsigned> batch;   // at most one
  mlir::Type eltA, eltB, outElt;
  bool bKMajor = false;                // B[n][k] (else B[k][n])
  int64_t M = 0, N = 0, K = 0, B = 1;
};

/// What every tensor-core contraction needs of the payload and the operands: `out + a * b`, one
/// output, both operands plain row-major buffers (no view), an f32/f16/bf16 result. Fills pa,
/// pb, pc and the element types; diagnoses through `bad` (which starts the message).
mlir::LogicalResult matchTensorCoreOperands(const GenericTask &t, unsigned ia, unsigned ib,
                                            TensorCoreGemm &g,
                                            llvm::function_ref<mlir::InFlightDiagnostic()> bad);

/// The layouts: A [batch][m][k] (K contiguous), B [batch][k][n] or [batch][n][k], C
/// [batch][m][n]; fills the dimensions and sizes from `view`.
mlir::LogicalResult matchTensorCoreLayout(const GenericTask &t, const GemmView &view,
                                          TensorCoreGemm &g,
                                          llvm::function_ref<mlir::InFlightDiagnostic()> bad);

/// i32 / i64 constants and the shared-memory pointer arithmetic of the kernels.
struct Ptx {
  mlir::ImplicitLocOpBuilder &b;
  mlir::Type i32, i64, sharedPtr, genericPtr;

  explicit Ptx(mlir::ImplicitLocOpBuilder &b);

  mlir::Value c32(int64_t v);
  mlir::Value c64(int64_t v);
  mlir::Value to32(mlir::Value index);
  mlir::Value to64(mlir::Value index);
  /// A pointer into shared memory at byte address `addr` (an i64 in the shared window).
  mlir::Value shared(mlir::Value addr);
  /// The same address in the cluster's shared window (this CTA's part of it), where TMA writes.
  mlir::Value clusterShared(mlir::Value addr);
  mlir::Value add(mlir::Value a, int64_t c);
  mlir::Value add(mlir::Value a, mlir::Value c);
  mlir::Value mul(mlir::Value a, int64_t c);
  /// The address of a buffer parameter (a bare pointer after lowering), as an i64.
  mlir::Value address(mlir::Value memref);
  /// The global address of a buffer parameter, as a generic pointer.
  mlir::Value globalPtr(mlir::Value memref);
  /// The start of dynamic shared memory rounded up to `align` bytes, as an i64 in the shared
  /// window.
  mlir::Value dynamicSharedBase(int64_t align);
};

/// Output tile `pid` of a tilesM x tilesN grid (one batch), visited column by column within
/// groups of 8 rows of tiles, so that the blocks resident at once share B's columns and a band
/// of A's rows in L2. Returns (row tile, column tile) as index values.
std::pair<mlir::Value, mlir::Value> groupedTile(KernelBuilder &kb, mlir::Value pid, int64_t tilesM,
                                                int64_t tilesN);

/// Stores f32 accumulators of one fragment row: `v0` at column `col` (loop dimension g.nD) and
/// `v1` at `col + 1`, `ivs` holding the row's other loop indices; the output's initial value is
/// added, then the epilogue (in f32, as cuBLASLt's) runs and the result is cast and stored.
/// Columns at or past N are skipped (`colsFull`: none can be).
void storeAccumulatorPair(KernelBuilder &kb, const TensorCoreGemm &g, llvm::ArrayRef<mlir::Value> ivs,
                          mlir::Value col, mlir::Value v0, mlir::Value v1, bool colsFull);

} // namespace evo

#endif
