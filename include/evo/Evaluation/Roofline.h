//===- Roofline.h - the two numbers, and the device's ceilings ----*- C++ -*-===//
//
// Every measured time is judged against a floor: the fewest bytes the task must move (each input
// read once, each output written once) over the measured copy bandwidth, and its arithmetic over
// the measured peak rate. A time below the floor is a measurement or correctness bug, never a
// win. Ceilings are measured once per device by evo-eval-worker and cached.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_EVALUATION_ROOFLINE_H
#define EVO_EVALUATION_ROOFLINE_H

#include "evo/Conversion/LaunchPlan.h"
#include "evo/Evaluation/Supervisor.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/JSON.h"

namespace evo {

struct TaskCost {
  /// Bytes of the function's inputs and outputs (scratch excluded).
  double bytes = 0;
  /// Floating-point operations of the original function's payloads (a math function counts 1,
  /// fma 2), times their iteration points; softmax counts 5 per element.
  double flops = 0;
  /// Some contraction has f16/bf16 operands (tensor cores could run it).
  bool halfPrecisionContraction = false;
};

/// Counts the work of `func` (the function on tensors, as written by the user).
TaskCost estimateCost(mlir::func::FuncOp func, const LaunchPlan &plan);

struct Ceilings {
  std::string device, uuid;
  double copyGBps = 0;      // device-memory copy, bytes read + written per second / 1e9
  double fp32TFlops = 0;    // FFMA rate
  double f16MmaTFlops = 0;  // mma.sync m16n8k16 f16->f32 rate
  bool fromCache = false;
  llvm::json::Object toJson() const;
};

/// Reads the ceilings of the worker's device from the cache
/// ($EVO_CACHE_DIR, else $XDG_CACHE_HOME/evo-opt, else ~/.cache/evo-opt) or measures them with the
/// worker ("ceilings" mode) and caches them.
llvm::Expected<Ceilings> deviceCeilings(const WorkerOptions &options, int device);

struct RooflineVerdict {
  double floorMs = 0;         // max(bytes / copy, flops / peak)
  double achievedGBps = 0;    // bytes / time
  double achievedTFlops = 0;  // flops / time
  double fractionOfCopy = 0;  // achievedGBps / copy ceiling
  double fractionOfPeak = 0;  // achievedTFlops / the peak that applies
  bool belowFloor = false;    // time < slack * floor: impossible, flagged invalid
  llvm::json::Object toJson() const;
};

/// `slack` < 1 leaves room for measurement noise around the floor.
RooflineVerdict judge(const TaskCost &cost, const Ceilings &ceilings, double medianMs,
                      double slack = 0.9);

} // namespace evo

#endif
