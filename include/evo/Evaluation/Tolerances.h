//===- Tolerances.h - the verifier's relative tolerances -----------*- C++ -*-===//
//
// One owner of the tolerance policy: evo-verify, the search and the final check all read these,
// and share/evo-opt/tolerances.json is the one table behind them.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_EVALUATION_TOLERANCES_H
#define EVO_EVALUATION_TOLERANCES_H

#include "evo/Dialect/Evo/IR/LaunchPlan.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <map>
#include <string>

namespace evo {

/// The verifier's relative tolerance per element kind ("f32", "f16", ...): an element passes
/// when |out - ref| <= rtol * (|ref| + RMS(ref)). The table lives in share/evo-opt/tolerances.json
/// (embedded at build time; scripts read the same file).
const std::map<std::string, double> &defaultTolerances();

/// The rtol of the f32 outputs of a function whose f32 contractions run with `mode`
/// (share/evo-opt/tolerances.json, "f32_matmul"; Ieee: rtol.f32 itself).
double f32MatmulTolerance(F32Matmul mode);
/// Raises `rtol["f32"]` to the tolerance of the plan's f32-matmul mode (never lowers it; an
/// Ieee plan leaves the table as it is).
void applyF32MatmulTolerance(const LaunchPlan &plan, std::map<std::string, double> &rtol);

/// Applies "kind=rtol,kind=rtol" (e.g. "f32=2e-4,bf16=2e-2") to `table`; unknown kinds and
/// malformed or negative numbers are errors.
llvm::Error parseTolerances(llvm::StringRef spec, std::map<std::string, double> &table);

} // namespace evo

#endif // EVO_EVALUATION_TOLERANCES_H
