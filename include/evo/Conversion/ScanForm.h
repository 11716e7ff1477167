//===- ScanForm.h - scans written as masked triangular reductions -*- C++ -*-===//
//
// There is no scan op upstream, so a cumulative sum is written in linalg the way torch-mlir and
// hand-written IR do: out[.., j] = combine over k of select(k <= j, x[.., k], identity), a
// reduction over k of a masked triangle. Lowered as a reduction that is O(C^2) per line; matched
// here, the lowering gives it the scan family (a parallel scan, O(C) per line) and the roofline
// counts it as the scan it is. Shared by the lowering (lib/Conversion) and the roofline
// (lib/Evaluation).
//
//===----------------------------------------------------------------------===//

#ifndef EVO_CONVERSION_SCANFORM_H
#define EVO_CONVERSION_SCANFORM_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include <optional>

namespace evo {

/// A linalg.generic that computes a scan (cumsum, cumprod, cummax, cummin, and/or/xor scans).
///
/// The generic has one result, exactly one reduction loop k and a parallel loop j of the same
/// extent; the output is indexed by every parallel loop once (j among them, k not); no input is
/// indexed by j; the payload is `yield combine(out, v)` (either operand order) where combine has
/// a neutral element (arith::getNeutralElement: add, mul, max, min, and, or, xor) and v is
///   * `select(cmpi(p, k, j), f, identity)` or `select(cmpi(p, k, j), identity, f)` (the second
///     includes f where the predicate fails), the indices `linalg.index` of k and j, possibly
///     through `arith.index_cast`, in either order; identity is the combiner's neutral element
///     (for an addition any zero: +0 is what users write);
///   * for an addition, `f * uitofp(cmpi(...))` (`f * extui(cmpi(...))` for integers), either
///     operand order: the 0/1 mask form;
/// and f depends neither on `out` nor on the index of j. Normalized to `k P j`, the included
/// elements are k <= j (inclusive prefix), k < j (exclusive prefix), k >= j (reverse inclusive,
/// i.e. suffix) or k > j (reverse exclusive); signed and unsigned predicates alike (indices are
/// never negative). Equality and inequality are not scans.
///
/// The mask form multiplies f by 0 outside the triangle, which linalg evaluates (inf * 0 = NaN
/// poisons the whole line): a scan computes only the included elements, so the two agree where
/// f is finite. The select form agrees everywhere.
struct ScanForm {
  unsigned scanLoop = 0;  // the reduction loop k: the position along the scanned axis read
  unsigned outLoop = 0;   // the parallel loop j: the position along the scanned axis written
  bool reverse = false;   // k >= j: suffixes instead of prefixes
  bool exclusive = false; // k < j or k > j: the element at j itself is left out
  mlir::Operation *combiner = nullptr; // the payload's combining op
  mlir::Value element;                 // f: the payload value combined at k where included
  /// The payload ops f does not depend on (the mask, the select, the combiner, dead code).
  llvm::SmallVector<mlir::Operation *> notElement;
};

/// The scan `op` computes, if it has the form above (static loop ranges included).
std::optional<ScanForm> matchScan(mlir::linalg::GenericOp op);

} // namespace evo

#endif // EVO_CONVERSION_SCANFORM_H
