//===- Roofline.h - the two numbers, and the device's ceilings ----*- C++ -*-===//
//
// Every measured time is judged against a floor that no correct kernel can beat: the bytes the
// task must read (each input once) over the measured read bandwidth, the bytes it must write
// (each output once, less what the L2 can hold back) over the measured write bandwidth, and its
// arithmetic over the fastest applicable unit. A time below the floor (with a safety margin) is a
// measurement or correctness bug, never a win. Ceilings are measured once per device by
// evo-eval-worker and cached.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_EVALUATION_ROOFLINE_H
#define EVO_EVALUATION_ROOFLINE_H

#include "evo/Dialect/Evo/IR/LaunchPlan.h"
#include "evo/Evaluation/Supervisor.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/JSON.h"
#include <algorithm>
#include <string>

namespace evo {

struct TaskCost {
  /// Bytes of the function's inputs and outputs (scratch excluded): readBytes + writeBytes.
  double bytes = 0;
  /// Bytes of its inputs (each read at least once) and of its outputs (each written once).
  double readBytes = 0, writeBytes = 0;
  /// Floating-point operations of the original function's payloads (a math function counts 1,
  /// fma 2), times their iteration points; softmax counts 5 per element.
  double flops = 0;
  /// Some contraction has f16/bf16 operands (tensor cores could run it).
  bool halfPrecisionContraction = false;
  /// Some contraction or convolution, of any type (TF32 tensor cores could run an f32 one).
  bool contraction = false;
  /// Some payload computes in f16/bf16 (packed half2 math runs at twice the FP32 rate).
  bool halfPrecisionMath = false;
  /// The plan's f32 contractions may run on TF32 tensor cores (f32-matmul=tf32 or 3xtf32,
  /// planF32Matmul): fractions of peak are then against the TF32 rate (Ceilings::tf32TFlops).
  F32Matmul f32Matmul = F32Matmul::Ieee;
};

/// The least accurate f32-matmul mode the plan's tasks record (Ieee when none does):
/// TF32 before 3xTF32 before IEEE.
F32Matmul planF32Matmul(const LaunchPlan &plan);

/// Counts the work of `func` (the function on tensors, as written by the user).
TaskCost estimateCost(mlir::func::FuncOp func, const LaunchPlan &plan);

struct Ceilings {
  std::string device, uuid;
  double copyGBps = 0;      // device-memory copy, bytes read + written per second / 1e9
  double readGBps = 0;      // read-only streams (above copy on HBM: a GEMV reads faster)
  double writeGBps = 0;     // write-only streams
  double l2Bytes = 0;       // writes the L2 can hold back from memory within one launch
  double fp32TFlops = 0;    // FFMA rate
  double f16MmaTFlops = 0;  // mma.sync m16n8k16 f16->f32 rate
  /// Dense wgmma m64n256k16 rates (f32 accumulate); 0 where unavailable (not compute
  /// capability 9.0, or the worker's sm_90a module did not load).
  double f16WgmmaTFlops = 0, bf16WgmmaTFlops = 0;
  /// The worker's word on wgmma: "measured" or "unavailable: <why>" (empty: not reported).
  std::string wgmmaStatus;
  bool fromCache = false;

  /// The faster measured wgmma rate (0: unavailable).
  double wgmmaTFlops() const { return std::max({0.0, f16WgmmaTFlops, bf16WgmmaTFlops}); }
  /// The fastest measured f16/bf16 tensor-core rate: max(mma.sync, wgmma f16, wgmma bf16).
  double tensorCoreTFlops() const { return std::max(f16MmaTFlops, wgmmaTFlops()); }
  /// The dense TF32 tensor-core rate, derived, not measured: half the measured f16/bf16 rate
  /// (Hopper and Ampere run TF32 at half their f16 rate: H100/H200 SXM 495 against 989
  /// TFLOP/s dense). Only fractions of peak use it; the floor of every contraction stays on
  /// tensorCoreBoundTFlops, the f16 rate with headroom, at least twice this.
  double tf32TFlops() const { return tensorCoreTFlops() / 2; }
};
/// {"device", "uuid", "copy_gbps", "read_gbps", "write_gbps", "l2_bytes", "fp32_tflops",
/// "f16_mma_tflops", "f16_wgmma_tflops", "bf16_wgmma_tflops", "wgmma_status", "from_cache"}:
/// the worker's "ceilings" event and the ceilings cache file. fromJSON reads every key that is
/// present (each must have its type) and leaves the others.
llvm::json::Value toJSON(const Ceilings &c);
bool fromJSON(const llvm::json::Value &value, Ceilings &c, llvm::json::Path path);

/// Reads the ceilings of the worker's device from the cache
/// ($EVO_CACHE_DIR, else $XDG_CACHE_HOME/evo-opt, else ~/.cache/evo-opt) or measures them with the
/// worker ("ceilings" mode) and caches them.
llvm::Expected<Ceilings> deviceCeilings(const WorkerOptions &options, int device);

/// The tensor-core floor's rate is the larger of two bounds, so that neither measurement alone
/// can make it too tight:
///  - mma.sync's measured rate x kTensorCoreHeadroom: a unit the worker did not measure (wgmma
///    where the sm_90a module does not run) reaches about 1.6x mma.sync on Hopper;
///  - wgmma's measured rate x kWgmmaHeadroom: the fastest dense unit measured itself, with room
///    for a microbenchmark a little under the true peak and for clocks that differ between the
///    measurement (cached per device) and a later run.
inline constexpr double kTensorCoreHeadroom = 2.0;
inline constexpr double kWgmmaHeadroom = 1.25;

/// The rate (TFLOP/s) no contraction can beat on the device: max(mma.sync x kTensorCoreHeadroom,
/// wgmma x kWgmmaHeadroom); 0 when neither is known.
inline double tensorCoreBoundTFlops(const Ceilings &c) {
  return std::max(c.f16MmaTFlops * kTensorCoreHeadroom, c.wgmmaTFlops() * kWgmmaHeadroom);
}

struct RooflineVerdict {
  /// max(read / read bw, (write - L2) / write bw, flops / fastest unit): a true lower bound.
  double floorMs = 0;
  double readMs = 0, writeMs = 0, mathMs = 0; // its terms
  double achievedGBps = 0;    // bytes / time
  double achievedTFlops = 0;  // flops / time
  double fractionOfCopy = 0;  // achievedGBps / copy ceiling
  double fractionOfPeak = 0;  // achievedTFlops / the peak that applies
  bool belowFloor = false;    // time < slack * floor: impossible, flagged invalid
  llvm::json::Object toJson() const;
};

/// `slack` < 1 leaves room for measurement noise around the floor (and for ceilings measured a
/// little under the device's true peak). Ceilings that are unknown (0) contribute no floor.
RooflineVerdict judge(const TaskCost &cost, const Ceilings &ceilings, double medianMs,
                      double slack = 0.9);

} // namespace evo

#endif
