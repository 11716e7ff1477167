//===- KernelBuilder.h - building gpu.func kernels -----------------*- C++ -*-===//
//
// Private to the lowering: the pieces every family's emitter uses to write kernel IR (thread
// indexing, index arithmetic, operand loads along a vectorizable dimension, payload cloning and
// reduction combiners).
//
//===----------------------------------------------------------------------===//

#ifndef EVO_LIB_CONVERSION_KERNELBUILDER_H
#define EVO_LIB_CONVERSION_KERNELBUILDER_H

#include "TaskAnalysis.h"
#include "evo/Dialect/Evo/IR/Knobs.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SmallPtrSet.h"
#include <array>

namespace evo {

class KernelBuilder {
public:
  /// Creates `gpu.func @name(params...) workgroup(workgroup...) kernel` at the end of `module`
  /// with known_block_size = `block`, and positions the builder in its body.
  KernelBuilder(mlir::gpu::GPUModuleOp module, llvm::StringRef name,
                llvm::ArrayRef<mlir::MemRefType> params, llvm::ArrayRef<mlir::MemRefType> workgroup,
                std::array<int64_t, 3> block, mlir::Location loc);

  mlir::gpu::GPUFuncOp kernel;
  mlir::ImplicitLocOpBuilder b;

  mlir::Value param(unsigned i) { return kernel.getArgument(i); }
  mlir::Value workgroup(unsigned i) { return kernel.getWorkgroupAttributions()[i]; }
  /// Terminates the kernel.
  void finish();

  mlir::Value idx(int64_t v);
  mlir::Value threadId(mlir::gpu::Dimension d = mlir::gpu::Dimension::x);
  mlir::Value blockId(mlir::gpu::Dimension d = mlir::gpu::Dimension::x);
  mlir::Value add(mlir::Value a, mlir::Value c);
  mlir::Value add(mlir::Value a, int64_t c);
  mlir::Value mul(mlir::Value a, int64_t c);
  mlir::Value div(mlir::Value a, int64_t c);
  mlir::Value rem(mlir::Value a, int64_t c);
  mlir::Value lt(mlir::Value a, int64_t c);
  mlir::Value eq(mlir::Value a, int64_t c);
  mlir::Value constant(mlir::TypedAttr attr);

  /// Splits a row-major linear index into one index per size.
  llvm::SmallVector<mlir::Value> delinearize(mlir::Value linear, llvm::ArrayRef<int64_t> sizes);
  /// Evaluates an indexing map at the given loop indices (arith ops, no affine).
  llvm::SmallVector<mlir::Value> applyMap(mlir::AffineMap map, mlir::ValueRange ivs);

  /// Runs `body` under `if (cond)`; with `resultTypes`, `body` returns values and the else branch
  /// yields `elseValues`.
  void ifThen(mlir::Value cond, llvm::function_ref<void()> body);
  llvm::SmallVector<mlir::Value>
  ifThenElse(mlir::Value cond, mlir::TypeRange resultTypes,
             llvm::function_ref<llvm::SmallVector<mlir::Value>()> thenBody,
             llvm::function_ref<llvm::SmallVector<mlir::Value>()> elseBody);
  /// scf.for lb..ub step with loop-carried values; `body(iv, carried)` returns the next values.
  llvm::SmallVector<mlir::Value>
  forLoop(mlir::Value lb, mlir::Value ub, int64_t step, mlir::ValueRange init,
          llvm::function_ref<llvm::SmallVector<mlir::Value>(mlir::Value, mlir::ValueRange)> body);
};

/// A serial accumulation loop over [lb, ub) by `step` (at most `maxTrips` trips per thread) that
/// stays accurate when long: up to kSerialBlockThreshold trips it is one kb.forLoop from
/// `identities`; beyond, an outer loop over blocks of kSerialBlockTrips trips, each folded from
/// `identities` by an inner loop, whose partials the outer loop combines with
/// `combineFn(i, acc, partial)` (i: the carried value's position). A two-level sum: an f32 sum
/// of T terms sees chains of ~B + T/B roundings instead of T (one-thread f32 sums of 65536 and
/// more squares were 1.6e-4 to 6e-4 away from the float64 oracle, past the f32 tolerance).
constexpr int64_t kSerialBlockTrips = 1024;
constexpr int64_t kSerialBlockThreshold = 4096;
llvm::SmallVector<mlir::Value> blockedForLoop(
    KernelBuilder &kb, mlir::Value lb, mlir::Value ub, int64_t step, int64_t maxTrips,
    mlir::ValueRange identities,
    llvm::function_ref<mlir::Value(unsigned, mlir::Value, mlir::Value)> combineFn,
    llvm::function_ref<llvm::SmallVector<mlir::Value>(mlir::Value, mlir::ValueRange)> body);

/// How an operand's address moves when loop dimension `dim` advances by one.
/// Byte alignment that a vector access of `lanes` elements may assume (0: none): buffers come
/// from cudaMalloc (256-byte aligned) or are workgroup buffers (16-byte aligned), and the caller
/// knows the start is a multiple of `lanes` elements.
int64_t vectorAlignment(mlir::Type elementType, int64_t lanes);

enum class Access { Contiguous, Invariant, Gather };
Access accessAlong(mlir::AffineMap map, unsigned dim);

/// Reads a task operand at `lanes` consecutive points of loop dimension `laneDim`, starting at
/// loop indices `ivs`: one vector load when contiguous, one load when invariant, else one load
/// per lane. Scalars (constants) are materialized. `streaming`: the caller reads these elements
/// once and the kernel never writes them; the vector load is marked `nontemporal`, which
/// evo-streaming-loads turns into ld.global.nc.L1::no_allocate.
llvm::SmallVector<mlir::Value> loadLanes(KernelBuilder &kb, const ValueSource &src,
                                         mlir::AffineMap map, mlir::Type elementType,
                                         llvm::ArrayRef<mlir::Value> ivs, unsigned laneDim,
                                         int64_t lanes, bool streaming = false);

/// Writes `values` (one per lane) to parameter `param` at the points `loadLanes` would read.
void storeLanes(KernelBuilder &kb, unsigned param, mlir::AffineMap map,
                llvm::ArrayRef<mlir::Value> ivs, unsigned laneDim, llvm::ArrayRef<mlir::Value> values);

/// Loop indices of lane `lane`: `ivs` with `laneDim` advanced by `lane`.
llvm::SmallVector<mlir::Value> laneIndices(KernelBuilder &kb, llvm::ArrayRef<mlir::Value> ivs,
                                           unsigned laneDim, int64_t lane);

/// Clones the payload of `op` with its block arguments bound to `blockArgs` and linalg.index
/// bound to `ivs`, skipping the ops in `skip`; returns the mapping (yielded values are looked up
/// by the caller).
void clonePayload(mlir::OpBuilder &b, mlir::linalg::GenericOp op, mlir::ValueRange blockArgs,
                  mlir::ValueRange ivs, llvm::ArrayRef<mlir::Operation *> skip,
                  mlir::IRMapping &map);
/// The values the payload yields, after clonePayload without skips.
llvm::SmallVector<mlir::Value> payloadResults(mlir::linalg::GenericOp op, mlir::IRMapping &map);

/// clonePayload evaluating f16/bf16 arithmetic in f32: block arguments of those types take (or
/// are extended to) f32 values, arith/math ops on them compute in f32, extf/truncf between
/// float types become the identity or the cast to the other type's f32-or-wider version, and
/// ops that cannot compute in f32 (bitcasts, conversions to integers, ...) get their operands
/// rounded back to the declared type. The yielded values may therefore be f32 where the payload
/// yields f16/bf16: the caller casts them.
void clonePayloadWide(mlir::OpBuilder &b, mlir::linalg::GenericOp op, mlir::ValueRange blockArgs,
                      mlir::ValueRange ivs, mlir::IRMapping &map);

/// Stores the final values of result `o` of the task's compute op at its loop indices `ivs`
/// (one value per lane along loop dimension `laneDim`, of the accumulator's type). Without an
/// epilogue they are cast to the result's type and stored. With one (output 0 of a
/// contraction), every step's payload runs at the output point on the chained value and the
/// step's other operands read there, and the last step's value is stored. `wide`: f16/bf16
/// epilogue arithmetic runs in f32 on the accumulator (clonePayloadWide; what cuBLASLt's
/// epilogues do: tiled and tensor-core kernels); otherwise the value is rounded to the result's
/// type first and the payloads run in their declared types (the naive baseline: exactly the
/// unfused program).
void storeOutput(KernelBuilder &kb, const GenericTask &t, unsigned o,
                 llvm::ArrayRef<mlir::Value> ivs, unsigned laneDim,
                 llvm::ArrayRef<mlir::Value> values, bool wide);

/// Partial results of reductions are kept in a wider type where the element type is narrow
/// (f16/bf16 accumulate in f32), which is what users of PyTorch expect.
mlir::Type accumulatorType(mlir::Type elementType);
mlir::Value castTo(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v, mlir::Type to);
/// The combiner's neutral element in `accType`.
mlir::Value combinerIdentity(mlir::OpBuilder &b, mlir::Location loc, mlir::Operation *combiner,
                             mlir::Type accType);
/// Applies the combiner's operation to two values of the same (accumulator) type.
mlir::Value combine(mlir::OpBuilder &b, mlir::Location loc, mlir::Operation *combiner,
                    mlir::Value lhs, mlir::Value rhs);

/// Warp-wide butterfly reduction: every lane ends with the combination of all 32 lanes.
mlir::Value warpReduce(KernelBuilder &kb, mlir::Value v,
                       llvm::function_ref<mlir::Value(mlir::Value, mlir::Value)> combineFn);

/// Block-wide reduction through `smem` (a workgroup buffer of >= blockSize/32 elements): every
/// thread ends with the combination of all threads' values. Starts with a barrier so the
/// buffer can be reused by consecutive reductions.
mlir::Value blockReduce(KernelBuilder &kb, mlir::Value v, mlir::Value smem, int64_t blockSize,
                        mlir::Value identity,
                        llvm::function_ref<mlir::Value(mlir::Value, mlir::Value)> combineFn);

/// How a reduction strategy spreads the points it reduces (output elements, rows) over the
/// threads of a block: `Thread` gives every thread a point of its own, `Warp` one point per 32
/// lanes, `Block` one point per block. The three emitters that reduce (reduction, softmax, rows)
/// share it, so the strategies mean the same everywhere.
struct ReductionGroups {
  ReductionStrategy strategy;
  int64_t blockSize;

  /// Threads that cooperate on one point (1, 32 or the block size).
  int64_t width() const;
  /// Points one block covers.
  int64_t pointsPerBlock() const;
  /// Whether `reduce` needs a workgroup buffer of blockSize/32 accumulators.
  bool needsWorkgroupBuffer() const;
  /// This thread's point and its lane within the point's group, from the block and thread ids.
  std::pair<mlir::Value, mlir::Value> pointAndLane(KernelBuilder &kb, mlir::Value tid,
                                                   mlir::Value bid) const;
  /// Combines the per-thread partial `v` across the group's `width()` threads; every thread of
  /// the group ends with the result. `smem` (a workgroup buffer) and `identity` (the combiner's
  /// neutral element) are asked for only when a block-wide reduction needs them.
  mlir::Value reduce(KernelBuilder &kb, mlir::Value v, llvm::function_ref<mlir::Value()> smem,
                     llvm::function_ref<mlir::Value()> identity,
                     llvm::function_ref<mlir::Value(mlir::Value, mlir::Value)> combineFn) const;
};

/// The workgroup-memory type of `n` elements.
mlir::MemRefType workgroupBuffer(mlir::MLIRContext *ctx, int64_t n, mlir::Type elementType);

} // namespace evo

#endif
