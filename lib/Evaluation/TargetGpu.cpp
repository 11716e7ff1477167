//===- TargetGpu.cpp - does the GPU run what evo-opt makes for its chip -------===//

#include "evo/Evaluation/TargetGpu.h"
#include "evo/Runtime/ChipRules.h"

namespace evo {

GpuMatch matchGpuToChip(cuda::Driver &driver, int device, llvm::StringRef chip, bool cubins) {
  GpuMatch m;
  cuda::CUdevice dev;
  int major = 0, minor = 0;
  char name[256] = {};
  if (driver.cuDeviceGet(&dev, device) != cuda::CUDA_SUCCESS ||
      driver.cuDeviceGetAttribute(&major, cuda::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                  dev) != cuda::CUDA_SUCCESS ||
      driver.cuDeviceGetAttribute(&minor, cuda::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                                  dev) != cuda::CUDA_SUCCESS)
    return m; // the worker reports what the driver cannot tell here
  if (driver.cuDeviceGetName(name, sizeof(name) - 1, dev) != cuda::CUDA_SUCCESS)
    name[0] = 0;
  std::string gpu = "GPU " + std::to_string(device) + " is " + chips::deviceName(major, minor) +
                    (name[0] ? " (" + std::string(name) + ")" : "");
  std::string why = chips::whyNotRunnable(chip, major, minor, cubins);
  if (!why.empty()) {
    m.error = gpu + " but chip=" + chip.str() + ", and " + why + ": pass chip=" +
              chips::deviceName(major, minor) + " to tune for this GPU";
    return m;
  }
  std::optional<chips::Chip> c = chips::parse(chip);
  if (c && c->number() != major * 10 + minor)
    m.warning = gpu + " and chip=" + chip.str() + ": the kernels run there (" +
                (cubins ? "as " + c->name() + " cubins" : "as PTX the driver compiles for it") +
                "), but they are timed on an " + chips::deviceName(major, minor) +
                ", not on an " + c->name();
  return m;
}

} // namespace evo
