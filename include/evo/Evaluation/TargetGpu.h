//===- TargetGpu.h - does the GPU run what evo-opt makes for its chip -*- C++ -*-===//
//
// A search or a verification times kernels compiled for one chip on one GPU: cubins for sm_80 do
// not load on an sm_90 (a cubin runs on its own major version only), code for sm_90a runs on
// compute capability 9.0 only, and PTX for sm_100 not on an older GPU. Checked against the driver
// before any work, with the rules of evo/Runtime/ChipRules.h.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_EVALUATION_TARGETGPU_H
#define EVO_EVALUATION_TARGETGPU_H

#include "evo/Runtime/CudaDriver.h"
#include "llvm/ADT/StringRef.h"
#include <string>

namespace evo {

/// `error` when what is made for `chip` (cubins when `cubins`, else PTX) cannot run on GPU
/// `device`; else `warning` when it runs but the GPU is another chip (it is timed there); both
/// empty when they match. The messages start with "GPU <device> is sm_XY (<name>)".
struct GpuMatch {
  std::string error, warning;
};
GpuMatch matchGpuToChip(cuda::Driver &driver, int device, llvm::StringRef chip, bool cubins);

} // namespace evo

#endif // EVO_EVALUATION_TARGETGPU_H
