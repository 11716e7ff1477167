//===- FrontEnds.h - what evo-lower-to-gpu does around the functions it lowers ---*- C++ -*-===//
//
// The input side of evo-lower-to-gpu (docs/lowering.md, "Front-ends"): TOSA functions are
// converted to linalg with upstream's conversions before lowering; a module with nothing to lower
// is described in a diagnostic; the callers of a lowered function are updated to its lowered
// (destination-passing, memref) signature so that the module stays valid.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_CONVERSION_FRONTENDS_H
#define EVO_CONVERSION_FRONTENDS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

#include <string>

namespace evo {

/// True when `func` holds an op of the TOSA dialect.
bool hasTosaOps(mlir::func::FuncOp func);

/// Fills `pm` (anchored on func.func) with upstream's TOSA → linalg conversion: tosa-to-scf
/// (cond_if, while_loop), the passes of `--tosa-to-linalg-pipeline` that work on a function (all
/// but the module-wide tosa-validate), then tosa-to-tensor (reshape, slice, pad, concat),
/// tosa-to-arith (constants) and a canonicalization that drops the shape constants those leave.
void buildTosaToLinalgPipeline(mlir::OpPassManager &pm);

/// After the conversion: every TOSA op still in `func` (control flow, custom ops, ...) is an error
/// at the op.
mlir::LogicalResult checkTosaConverted(mlir::func::FuncOp func);

/// What the module holds, for the "nothing to lower" diagnostic: the module's own ops counted by
/// name (`1 'func.func'`), the ops inside them by dialect (`3 'stablehlo.*' ops (names...)`, or
/// the name where the dialect has only one), in the order they are first met; terminators and
/// the contents of gpu.modules are not counted. Ends with a hint where the module holds ops of a
/// dialect evo-opt cannot read (StableHLO: docs/lowering.md).
std::string describeModuleContents(mlir::ModuleOp module);

/// Rewrites every tensor.concat in `func` as an elementwise linalg.generic over its operands,
/// each padded to the result's shape with tensor.pad (a view), selecting by the position along
/// the concatenated dimension; an error at a concat with dynamic sizes.
mlir::LogicalResult concatToGenerics(mlir::func::FuncOp func);

/// Rewrites every use of `host` in its module after it replaced a function of type `tensorType`:
/// each `func.call` becomes `bufferization.to_buffer` (read_only) of the tensor arguments, a
/// `memref.alloc` per result, the call with (inputs, outputs) and `bufferization.to_tensor
/// restrict writable` of the outputs in place of the results. A use that cannot be rewritten (not
/// a direct func.call in host code: func.constant for a call_indirect, a call inside gpu code) is
/// an error at the use.
mlir::LogicalResult updateCallers(mlir::func::FuncOp host, mlir::FunctionType tensorType);

} // namespace evo

#endif // EVO_CONVERSION_FRONTENDS_H
