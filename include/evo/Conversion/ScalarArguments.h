//===- ScalarArguments.h - scalar function arguments as 0-d tensors -*- C++ -*-===//
//
// A function argument that is a scalar (`%alpha: f32`, torch-mlir's alpha, eps or scale) is a
// kernel parameter passed by value (docs/lowering.md, "Scalar arguments"). Inside evo it is a 0-d
// tensor read as an `ins` operand of linalg.generic ops (indexing map `(d0, ...) -> ()`), which
// every emitter, matcher and the oracle already read; only the ABI (the plan's by-value buffer,
// the kernel parameter, the host's argument) differs from a 0-d tensor input.
//
//   scalarArgumentsToTensors   the input function (or a copy): scalars become 0-d tensors
//   tensorsToScalarArguments   a task func: its 0-d tensor arguments that are scalars go back
//   passScalarsByValue         a lowered kernel: 0-d memref parameters become values
//
//===----------------------------------------------------------------------===//

#ifndef EVO_CONVERSION_SCALARARGUMENTS_H
#define EVO_CONVERSION_SCALARARGUMENTS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace evo {

/// Rewrites `func` in place so that each argument of a scalar type (isScalarArgumentType,
/// InputChecks.h) becomes a 0-d tensor argument (`tensor<f32>` for `f32`, argument attributes
/// kept) that only `ins` operands of linalg.generic ops read:
///  * scalar arith/math ops outside payloads computed from scalar arguments and constants (e.g.
///    torch-mlir's `arith.truncf %alpha : f64 to f32`) are cloned into the payloads that use them;
///  * a named linalg op that reads one (`linalg.fill ins(%alpha : f32)`, a linalg.map capturing
///    it) is generalized, and a static `tensor.splat` of one is such a fill;
///  * a payload that captures one takes it as an extra input with the map `(d0, ...) -> ()`, and a
///    scalar `ins` operand computed from one is computed in the payload instead.
/// Any other use (tensor.from_elements, a pad's value, a result, ...) is an error at the using op
/// of the function's body, prefixed with `what` (e.g. "evo-lower-to-gpu"); `func` is then partly rewritten
/// (callers work on copies). Arguments of other types are left alone. `scalarArgs` (if given)
/// receives the numbers of the arguments rewritten.
mlir::LogicalResult
scalarArgumentsToTensors(mlir::func::FuncOp func, llvm::StringRef what,
                         llvm::SmallVectorImpl<unsigned> *scalarArgs = nullptr);

/// The inverse on a task func: each argument in `args` (a 0-d tensor that only linalg `ins`
/// operands read) becomes a scalar of its element type. A use of another kind is an internal
/// error at the func.
mlir::LogicalResult tensorsToScalarArguments(mlir::func::FuncOp func,
                                             llvm::ArrayRef<unsigned> args);

/// Makes parameter `index` of `kernel`, a 0-d memref (memref<f32>), a value of its element type:
/// loads from it become the value, and any other use reads a private 0-d copy stored in the
/// kernel's prologue (a register after LLVM's SROA). The kernel's function type is updated.
void passScalarByValue(mlir::gpu::GPUFuncOp kernel, unsigned index);

} // namespace evo

#endif // EVO_CONVERSION_SCALARARGUMENTS_H
