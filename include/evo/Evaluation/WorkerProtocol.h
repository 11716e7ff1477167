//===- WorkerProtocol.h - what evo-opt and evo-eval-worker say to each other -*- C++ -*-===//
//
// The one definition of the worker protocol (docs/verification.md): request format, modes, the
// keys of requests and JSON-lines events, event names, verdicts and exit codes. Shared by the
// Supervisor and Verifier (evo-opt, LLVM) and by evo-eval-worker and the stand-in worker (plain
// C++): header-only, constants only, no dependencies.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_EVALUATION_WORKERPROTOCOL_H
#define EVO_EVALUATION_WORKERPROTOCOL_H

namespace evo::protocol {

/// The request's "format". Bumped whenever the meaning of a request changes, so that a worker
/// built from older sources refuses the request instead of skipping checks it does not know.
/// /3: an input may be `by_value` (a scalar argument: the kernels take its value).
inline constexpr const char kRequestFormat[] = "evo-eval-request/3";

// --- modes ("mode") --------------------------------------------------------------------
inline constexpr const char kModeProbe[] = "probe";
inline constexpr const char kModeCeilings[] = "ceilings";
inline constexpr const char kModeEvaluate[] = "evaluate";
inline constexpr const char kModeTime[] = "time";

// --- request keys ----------------------------------------------------------------------
inline constexpr const char kFormat[] = "format";
inline constexpr const char kMode[] = "mode";
inline constexpr const char kDevice[] = "device";
inline constexpr const char kParentPid[] = "parent_pid";
inline constexpr const char kBuffers[] = "buffers";
inline constexpr const char kCandidates[] = "candidates";
inline constexpr const char kTrials[] = "trials";
inline constexpr const char kRtol[] = "rtol";
inline constexpr const char kTiming[] = "timing";
inline constexpr const char kQueue[] = "queue";
inline constexpr const char kRounds[] = "rounds";
/// A line of the queue file that ends the session.
inline constexpr const char kEnd[] = "end";

// buffers[]
inline constexpr const char kName[] = "name";
inline constexpr const char kRole[] = "role";
inline constexpr const char kKind[] = "kind";
inline constexpr const char kElements[] = "elements";
inline constexpr const char kRange[] = "range";
inline constexpr const char kZeroInit[] = "zero_init";
/// An input of one element that is a scalar argument: filled like any input, but launches pass
/// its value (the element's bytes) in the kernel's parameter, not its address.
inline constexpr const char kByValue[] = "by_value";
inline constexpr const char kRoleInput[] = "input";
inline constexpr const char kRoleOutput[] = "output";
inline constexpr const char kRoleScratch[] = "scratch";
/// A TMA tensor map (buffers[] and candidates[].scratch): {"name", "role": "tensor_map",
/// "bytes": 128, "tensor_map": {"source", "element_type", "dims", "strides", "box", "swizzle"}};
/// `source` indexes the request's buffers then the candidate's scratch, like launch args.
/// (A worker from before tensor maps refuses such a request: the role is unknown in buffers[],
/// and a scratch entry without "kind" is malformed, so the format did not change.)
inline constexpr const char kRoleTensorMap[] = "tensor_map";
inline constexpr const char kBytes[] = "bytes";
inline constexpr const char kTensorMap[] = "tensor_map";

// candidates[]
inline constexpr const char kId[] = "id";
inline constexpr const char kPtx[] = "ptx";
inline constexpr const char kPtxFile[] = "ptx_file";
inline constexpr const char kCubinFile[] = "cubin_file";
inline constexpr const char kReference[] = "reference";
/// false: the candidate is checked but not timed (evo-verify's naive baseline).
inline constexpr const char kTimeIt[] = "time";
inline constexpr const char kScratch[] = "scratch";
inline constexpr const char kLaunches[] = "launches";
inline constexpr const char kKernel[] = "kernel";
inline constexpr const char kGrid[] = "grid";
inline constexpr const char kBlock[] = "block";
inline constexpr const char kDynamicSharedMemory[] = "dynamic_shared_memory";
inline constexpr const char kArgs[] = "args";

// trials[] and timing.inputs (a trial without a check of its own)
inline constexpr const char kSeed[] = "seed";
inline constexpr const char kInputs[] = "inputs";
inline constexpr const char kSamples[] = "samples";
inline constexpr const char kBuffer[] = "buffer";
inline constexpr const char kIndices[] = "indices";
/// true instead of kIndices: every element of the buffer, in order.
inline constexpr const char kAll[] = "all";
inline constexpr const char kExpected[] = "expected";
/// Instead of kExpected: the values packed (evo/Evaluation/PackedValues.h).
inline constexpr const char kExpectedF64[] = "expected_f64";
/// inputs[]: how one input buffer is filled (evo::contract::FillParams).
inline constexpr const char kDist[] = "dist";
inline constexpr const char kLo[] = "lo";
inline constexpr const char kHi[] = "hi";
inline constexpr const char kCenter[] = "center";
inline constexpr const char kScale[] = "scale";
inline constexpr const char kEmin[] = "emin";
inline constexpr const char kEmax[] = "emax";
inline constexpr const char kSpecial[] = "special";
inline constexpr const char kDistUniform[] = "uniform";
inline constexpr const char kDistNormal[] = "normal";
inline constexpr const char kDistWide[] = "wide";
inline constexpr const char kDistSpecial[] = "special";

// timing
inline constexpr const char kEnabled[] = "enabled";
inline constexpr const char kWarmup[] = "warmup";
inline constexpr const char kRuns[] = "runs";
inline constexpr const char kRepeats[] = "repeats";
inline constexpr const char kFlushBytes[] = "flush_bytes";
inline constexpr const char kMaxMsPerRepeat[] = "max_ms_per_repeat";
/// Guard every timed launch (alternating input sets, or poison for ops constant in their inputs)
/// and compare after a random subset of them (default true; false only to measure what the
/// checks cost).
inline constexpr const char kCheckLaunches[] = "check_launches";
inline constexpr const char kCheckFraction[] = "check_fraction";
inline constexpr const char kMinChecked[] = "min_checked";

// --- events (one JSON object per line of the results file) -----------------------------
inline constexpr const char kEvent[] = "event";
inline constexpr const char kEventDevice[] = "device";
inline constexpr const char kEventBegin[] = "begin";
inline constexpr const char kEventResult[] = "result";
inline constexpr const char kEventFatal[] = "fatal";
inline constexpr const char kEventCeilings[] = "ceilings";
inline constexpr const char kEventDone[] = "done";

inline constexpr const char kCandidate[] = "candidate";
inline constexpr const char kVerdict[] = "verdict";
inline constexpr const char kReason[] = "reason";
inline constexpr const char kCode[] = "code";
inline constexpr const char kUuid[] = "uuid";
inline constexpr const char kL2Bytes[] = "l2_bytes";
inline constexpr const char kVerdictValid[] = "valid";
inline constexpr const char kVerdictInvalid[] = "invalid";

// result.disputed: a candidate whose only failure on the trials is a few output elements
// (at most kMaxDisputed per output and trial) off the reference's is reported invalid with the
// list [{trial, output (ordinal among the outputs), index, got, ref}], so that evo-opt's oracle
// can say which of the two is right there (FunctionVerifier::arbitrate). The same goes for the
// candidate's untimed run on each timing input set before its timed launches: those items have
// timing_set (0: the timing inputs, 1: set B) and that set's seed instead of trial, and the
// timed launches are compared with the reference's outputs except at those elements, where
// they must agree with that run.
inline constexpr const char kDisputed[] = "disputed";
inline constexpr const char kArbitrated[] = "arbitrated";
inline constexpr const char kTrial[] = "trial";
inline constexpr const char kTimingSet[] = "timing_set";
inline constexpr const char kOutput[] = "output";
inline constexpr const char kIndex[] = "index";
inline constexpr const char kGot[] = "got";
inline constexpr const char kRef[] = "ref";
inline constexpr unsigned kMaxDisputed = 64;

// result: wall time of the candidate's whole evaluation and of its timing phase (ms)
inline constexpr const char kEvalMs[] = "eval_ms";
inline constexpr const char kTimingWallMs[] = "timing_wall_ms";

// result.timing
inline constexpr const char kMedianMs[] = "median_ms";
inline constexpr const char kCheckedLaunches[] = "checked_launches";
inline constexpr const char kTimedLaunches[] = "launches";
inline constexpr const char kTimingSeed[] = "timing_seed";
/// The seed of the second timing input set (launches alternate between the two).
inline constexpr const char kTimingSeedB[] = "timing_seed_b";
/// How timed launches are kept from finding their answer in their outputs:
/// "alternating_inputs" (launch r runs on input set r % 2), "poison" (outputs poisoned before
/// every launch: the op's outputs do not depend on its inputs), "none" (check_launches false).
inline constexpr const char kLaunchGuard[] = "launch_guard";
inline constexpr const char kGuardAlternating[] = "alternating_inputs";
inline constexpr const char kGuardPoison[] = "poison";
inline constexpr const char kGuardNone[] = "none";

// ceilings
inline constexpr const char kCopyGBps[] = "copy_gbps";
inline constexpr const char kReadGBps[] = "read_gbps";
inline constexpr const char kWriteGBps[] = "write_gbps";
inline constexpr const char kFp32TFlops[] = "fp32_tflops";
inline constexpr const char kF16MmaTFlops[] = "f16_mma_tflops";
/// Dense wgmma m64n256k16 (Hopper, sm_90a) rates, f32 accumulate; 0 where unavailable (any
/// device but compute capability 9.0, or the sm_90a module did not load), and kWgmmaStatus
/// says which: "measured" or "unavailable: <why>".
inline constexpr const char kF16WgmmaTFlops[] = "f16_wgmma_tflops";
inline constexpr const char kBf16WgmmaTFlops[] = "bf16_wgmma_tflops";
inline constexpr const char kWgmmaStatus[] = "wgmma_status";

// --- exit codes of the worker ----------------------------------------------------------
enum ExitCode : int {
  kExitOk = 0,
  kExitBadRequest = 2,
  kExitFatalCuda = 3,
  kExitNoGpu = 4,
  /// The parent (evo-opt) was gone (evo/Runtime/ParentWatch.h, kWorkerParentGone).
  kExitParentGone = 5,
};

} // namespace evo::protocol

#endif
