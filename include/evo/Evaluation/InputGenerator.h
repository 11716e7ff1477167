//===- InputGenerator.h - the verifier's inputs on the CPU --------*- C++ -*-===//
//
// The CPU side of the buffer contract (evo/Runtime/BufferContract.h): the exact value the GPU
// fill kernel writes at any element of any input buffer, so the oracle can read inputs without
// copying them back.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_EVALUATION_INPUTGENERATOR_H
#define EVO_EVALUATION_INPUTGENERATOR_H

#include "evo/Runtime/BufferContract.h"
#include "mlir/IR/Types.h"
#include "mlir/Support/LLVM.h"
#include <optional>

namespace mlir::func {
class FuncOp;
}

namespace evo {

using contract::ElementKind;

ElementKind elementKindOf(mlir::Type type);
llvm::StringRef elementKindName(ElementKind kind);
std::optional<ElementKind> symbolizeElementKind(llvm::StringRef name);

/// Closed range of generated values; integers use the rounded bounds.
struct InputRange {
  double lo = -1.0, hi = 1.0;
  /// Set by the user (`evo.range`): a hard bound for every input distribution. The default
  /// range only shapes the uniform trials; the other distributions may go beyond it.
  bool declared = false;
  bool operator==(const InputRange &o) const { return lo == o.lo && hi == o.hi; }
};

/// The default range of a kind: [-1, 1) for floats, [-8, 8] for integers.
InputRange defaultRange(ElementKind kind);

/// Name of the function-argument attribute that sets an input's range, e.g.
/// `%x: tensor<1024xf32> {evo.range = [0.1, 4.0]}` for log or sqrt.
inline constexpr llvm::StringLiteral kRangeAttrName = "evo.range";

/// The range of every argument of `func` (its attribute or the default); a malformed attribute
/// is a diagnostic at the function.
mlir::FailureOr<llvm::SmallVector<InputRange>> argumentRanges(mlir::func::FuncOp func);

/// The value written at `index` of buffer `buffer` for `seed`, rounded to `kind`, as a double
/// (the uniform distribution over `range`).
double generatedValue(uint64_t seed, unsigned buffer, uint64_t index, ElementKind kind,
                      InputRange range);

/// The value written at `index` by the GPU fill with `params`, rounded to its kind, as a double.
double generatedValue(const contract::FillParams &params, uint64_t index);

/// The largest finite value of a float kind (integers: the largest value of the type).
double maxFinite(ElementKind kind);

} // namespace evo

#endif
