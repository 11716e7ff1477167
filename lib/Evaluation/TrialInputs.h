//===- TrialInputs.h - the distributions of the verifier's trials -*- C++ -*-===//
//
// Private to lib/Evaluation: how the Verifier fills each input of each trial (uniform, normal,
// wide, special and large values, booleans as 0 and 1) and how a fill is described to the
// worker. docs/verification.md, "Inputs".
//
//===----------------------------------------------------------------------===//

#ifndef EVO_LIB_EVALUATION_TRIALINPUTS_H
#define EVO_LIB_EVALUATION_TRIALINPUTS_H

#include "evo/Evaluation/InputGenerator.h"
#include "evo/Runtime/BufferContract.h"
#include "llvm/Support/JSON.h"
#include <string>

namespace evo::trials {

enum class Want { Uniform, Normal, Wide, Special, Large };

/// Trial t's distribution for input k: uniform, normal, wide, special, large for the first five
/// trials (every input alike), then mixtures (each input its own).
Want scheduled(unsigned t, unsigned k);

/// The fill of one input for `want` at narrowing level `rung` (0: full strength; higher: milder,
/// when the function's results were not finite or not representable); `desc` says what it is.
contract::FillParams fillFor(Want want, unsigned rung, uint64_t seed, unsigned buffer,
                             ElementKind kind, InputRange r, std::string &desc);

/// The fill as the worker's request carries it.
llvm::json::Object fillJson(const contract::FillParams &p, unsigned buffer);

} // namespace evo::trials

#endif // EVO_LIB_EVALUATION_TRIALINPUTS_H
