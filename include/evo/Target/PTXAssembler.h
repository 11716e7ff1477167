//===- PTXAssembler.h - running ptxas on emitted PTX -------------*- C++ -*-===//
//
// ptxas is the ground truth for what a kernel costs in registers, spills and shared memory, and
// the first validity filter for PTX: evo-emit-ptx and the evaluator both go through here.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_TARGET_PTXASSEMBLER_H
#define EVO_TARGET_PTXASSEMBLER_H

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <optional>
#include <string>

namespace evo {

/// What `ptxas -v` reports for one entry function.
struct KernelResources {
  int64_t registers = 0;
  int64_t sharedMemory = 0; // static shared memory, bytes
  int64_t stackFrame = 0;
  int64_t spillStores = 0;
  int64_t spillLoads = 0;
  int64_t barriers = 0;
};

/// Parses the `-v` log of ptxas into per-kernel resources.
llvm::StringMap<KernelResources> parsePtxasLog(llvm::StringRef log);

/// Finds ptxas: `explicitPath` if given (it must exist), then $EVO_PTXAS, then the toolkit found
/// at build time, then $CUDA_HOME/bin and PATH. std::nullopt when there is none.
llvm::Expected<std::optional<std::string>> findPtxas(llvm::StringRef explicitPath);

struct AssembleResult {
  std::string log;     // ptxas' diagnostics and -v output
  std::string cubin;   // the assembled binary
  llvm::StringMap<KernelResources> kernels;
};

/// Assembles `ptx` for `chip`. An assembler error comes back as an Error holding its log.
llvm::Expected<AssembleResult> assemblePtx(llvm::StringRef ptxas, llvm::StringRef ptx,
                                           llvm::StringRef chip, unsigned timeoutSeconds = 120);

/// The CUDA toolkit root to use when none is given: $CUDA_HOME, $CUDA_PATH, the build's toolkit,
/// /usr/local/cuda. Empty if none exists.
std::string defaultCudaPath();

} // namespace evo

#endif
