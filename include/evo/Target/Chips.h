//===- Chips.h - the chips evo-opt can compile for -------------------*- C++ -*-===//
//
// What the NVPTX backend of the LLVM evo-opt is built with accepts as a target, checked before
// anything reaches it: NVPTX aborts the process (LLVM ERROR) on a PTX ISA version older than a
// chip needs (`chip=sm_120` with the default `+ptx80`), and only warns on a chip or feature it
// does not know. Also the `chips=` list of evo-emit-ptx (one PTX for the lowest chip, a cubin per
// chip: evo/Runtime/ChipRules.h) and the check that a kernel module runs on a chip (NVVM ops that
// need sm_90a, such as wgmma, on sm_80), with a diagnostic naming the kernel.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_TARGET_CHIPS_H
#define EVO_TARGET_CHIPS_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"
#include <string>

namespace evo {

/// The oldest PTX ISA version NVPTX writes for `chip` (87 for sm_120), asked of NVPTX itself (it
/// compiles an empty module for the chip; cached). `chip` must be one NVPTX knows.
llvm::Expected<unsigned> minPtxVersion(llvm::StringRef chip);

/// Fails, saying what to pass instead, unless NVPTX knows `chip` (and it is spelled sm_XY[a|f]),
/// every entry of `features` ("+ptx80", comma-separated, each +name or -name) is an NVPTX feature,
/// and the PTX ISA version the features ask for is at least the chip's minimum.
llvm::Error checkChip(llvm::StringRef chip, llvm::StringRef features);

/// The targets of `chips=`: `ptxChip` is the one the PTX is written for (the lowest, by
/// evo::chips::lowerThan), `chips` every chip as given, each checked by checkChip (the PTX version
/// only for the PTX chip: cubins are assembled from its PTX), none twice, and each one ptxas can
/// assemble that PTX for (a list cannot mix sm_90a with another chip: PTX for sm_90a runs on
/// sm_90a only).
struct ChipTargets {
  std::string ptxChip;
  llvm::SmallVector<std::string> chips;
};
llvm::Expected<ChipTargets> resolveChips(llvm::ArrayRef<std::string> chips,
                                         llvm::StringRef features);

/// Diagnoses, at the op, every op of `gm` that cannot run on `chip` (NVVM ops that need a newer or
/// an arch-specific chip: wgmma, TMA, mbarrier try_wait, ...), naming its kernel and the chip;
/// `context` is appended to the message (e.g. " (chips=sm_80,sm_90a)").
mlir::LogicalResult checkModuleRunsOn(mlir::gpu::GPUModuleOp gm, llvm::StringRef chip,
                                      llvm::StringRef context = "");

} // namespace evo

#endif // EVO_TARGET_CHIPS_H
