//===- EvoKnobs.td - the schedule knobs, listed once ---------*- tablegen -*-===//
//
// The schedule knobs are the search space of the built-in mutators. This file is the only place
// they are listed: the #evo.knobs attribute's parameters, the C++ `ScheduleKnobs` fields, the
// value checks, which knobs a kernel of each family records, the evo-lower-to-gpu pass options,
// the --evo-pipeline options and the mutators' candidate values are all generated from it.
// Adding a knob: one `def` here (and in the family's list below), its emitter, its test.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_DIALECT_EVO_IR_EVOKNOBS_TD
#define EVO_DIALECT_EVO_IR_EVOKNOBS_TD

include "evo/Dialect/Evo/IR/EvoEnums.td"
include "mlir/Pass/PassBase.td"

/// kind: Int (int64_t), Bool, Strategy (ReductionStrategy), F32Matmul (F32Matmul) or List (a
/// short list of int64_t).
class Evo_Knob<string knobName, string cppName, string optionArg, string kind, string summary> {
  string name = knobName;   // key in #evo.knobs, `evo.knobs` dictionaries and JSON
  string cpp = cppName;     // ScheduleKnobs member and pass-option member
  string arg = optionArg;   // pass-option spelling
  string knobKind = kind;
  string doc = summary;
  string cppDefault = "";   // C++ value of a default-constructed ScheduleKnobs
  // C++ statements over `k` (ScheduleKnobs) and `emitError`: diagnose an illegal value.
  code check = "";
  // C++ expression over `f` (TaskFamily) and `k`: a kernel of family f records this knob.
  code recorded = "false";
  // The values the mutators propose (as int64_t lists; enums and bools by their value).
  list<list<int>> search = [];
}

def Evo_BlockSize : Evo_Knob<"block_size", "blockSize", "block-size", "Int",
    "Threads per block (a multiple of 32, at most 1024)"> {
  let cppDefault = "256";
  let check = [{
    if (k.blockSize < 32 || k.blockSize > 1024 || k.blockSize % 32 != 0)
      return emitError() << "block_size must be a multiple of 32 in [32, 1024], got " << k.blockSize;
  }];
  let recorded = "f != TaskFamily::Matmul || k.tileSizes.empty()";
  let search = [[64], [128], [256], [512], [1024]];
}

def Evo_ElementsPerThread : Evo_Knob<"elements_per_thread", "elementsPerThread",
    "elements-per-thread", "Int",
    "Elementwise: vector groups each thread computes; scans: vector groups each thread scans "
    "sequentially per tile of the line (1-16)"> {
  let cppDefault = "1";
  let check = [{
    if (k.elementsPerThread < 1 || k.elementsPerThread > 16)
      return emitError() << "elements_per_thread must be in [1, 16], got " << k.elementsPerThread;
  }];
  let recorded = "f == TaskFamily::Elementwise || f == TaskFamily::Scan";
  let search = [[1], [2], [4], [8]];
}

def Evo_VectorWidth : Evo_Knob<"vector_width", "vectorWidth", "vector-width", "Int",
    "Elements per memory access along the innermost dimension (1, 2, 4 or 8; at most 16 bytes)"> {
  let cppDefault = "1";
  let check = [{
    if (!isPowerOf2(k.vectorWidth) || k.vectorWidth > 8)
      return emitError() << "vector_width must be 1, 2, 4 or 8, got " << k.vectorWidth;
  }];
  // Matmuls record it only when set: 128-bit shared-memory fragments (EmitMatmul.cpp) or,
  // untiled, vector loads along K (EmitReduction.cpp).
  // (mma_sync ignores it; an untiled contraction, where mma_sync means nothing, uses it.)
  let recorded = "f != TaskFamily::Matmul || "
                 # "(k.vectorWidth != 1 && (k.tileSizes.empty() || !k.mmaSync))";
  let search = [[1], [2], [4], [8]];
}

def Evo_Reduction : Evo_Knob<"reduction", "reduction", "reduction-strategy", "Strategy",
    "Reductions and softmax: 'thread' (one thread per output), 'warp' (one warp per output, "
    "shuffles) or 'block' (one block per output, shuffles + shared memory); scans: the same per "
    "scanned line"> {
  let cppDefault = "ReductionStrategy::Thread";
  // Untiled matmuls (GEMV-like) record it only when set: thread with the defaults is the naive
  // schedule.
  let recorded = "f == TaskFamily::Reduction || f == TaskFamily::Softmax || "
                 # "f == TaskFamily::Rows || f == TaskFamily::Scan || "
                 # "(f == TaskFamily::Matmul && k.tileSizes.empty() && "
                 # "k.reduction != ReductionStrategy::Thread)";
  let search = [[0], [1], [2]];
}

def Evo_Accumulators : Evo_Knob<"accumulators", "accumulators", "accumulators", "Int",
    "Reductions: independent partial accumulators per thread (1, 2, 4 or 8)"> {
  let cppDefault = "1";
  let check = [{
    if (!isPowerOf2(k.accumulators) || k.accumulators > 8)
      return emitError() << "accumulators must be 1, 2, 4 or 8, got " << k.accumulators;
  }];
  let recorded = "f == TaskFamily::Reduction || (f == TaskFamily::Matmul && k.tileSizes.empty())";
  let search = [[1], [2], [4], [8]];
}

def Evo_GroupOutputs : Evo_Knob<"group_outputs", "groupOutputs", "group-outputs", "Int",
    "Reductions and untiled contractions: output points each thread, warp or block computes "
    "together (1, 2, 4 or 8), along the output dimension that the most input bytes do not "
    "depend on; those inputs are loaded once for the group (a GEMV's rows share x, a batch "
    "GEMV's rows share W); with reduction=thread, else along the dimension a pooling window "
    "slides on, the group's span of input loaded once"> {
  let cppDefault = "1";
  let check = [{
    if (!isPowerOf2(k.groupOutputs) || k.groupOutputs > 8)
      return emitError() << "group_outputs must be 1, 2, 4 or 8, got " << k.groupOutputs;
  }];
  let recorded = "(f == TaskFamily::Reduction || (f == TaskFamily::Matmul && k.tileSizes.empty())) "
                 # "&& k.groupOutputs != 1";
  let search = [[1], [2], [4], [8]];
}

def Evo_GroupOutputs2 : Evo_Knob<"group_outputs2", "groupOutputs2", "group-outputs2", "Int",
    "With group_outputs: points along a second output dimension too (1, 2, 4 or 8), the one the "
    "next most input bytes do not depend on; each input is loaded once for the points that "
    "share it (nn.Linear at batch 8: a warp takes 8 batch rows x 4 rows of W)"> {
  let cppDefault = "1";
  let check = [{
    if (!isPowerOf2(k.groupOutputs2) || k.groupOutputs2 > 8)
      return emitError() << "group_outputs2 must be 1, 2, 4 or 8, got " << k.groupOutputs2;
  }];
  let recorded = "(f == TaskFamily::Reduction || (f == TaskFamily::Matmul && k.tileSizes.empty())) "
                 # "&& k.groupOutputs2 != 1";
  let search = [[1], [2], [4]];
}

def Evo_StreamLoads : Evo_Knob<"stream_loads", "streamLoads", "stream-loads", "Bool",
    "Reductions and untiled contractions with a vector width: the inputs each output point "
    "reads for itself alone (a GEMV's matrix, a row sum's rows) are loaded with "
    "ld.global.nc.L1::no_allocate, so that the stream does not evict what the points share "
    "(a GEMV's x) from L1"> {
  let cppDefault = "false";
  let recorded = "(f == TaskFamily::Reduction || (f == TaskFamily::Matmul && k.tileSizes.empty())) "
                 # "&& k.streamLoads";
  let search = [[0], [1]];
}

def Evo_FastMath : Evo_Knob<"fast_math", "fastMath", "fast-math", "Bool",
    "Math functions in their fast approximate forms (fastmath<afn>: libdevice's __nv_fast_expf, "
    "__nv_fast_logf, ...; exp as ex2.approx(x * log2 e)), as Triton's exp; the verifier's "
    "tolerance decides whether the kernel may keep them"> {
  let cppDefault = "false";
  let recorded = "k.fastMath";
  let search = [[0], [1]];
}

def Evo_TileSizes : Evo_Knob<"tile_sizes", "tileSizes", "tile-sizes", "List",
    "Matmul: block tile M,N,K staged in shared memory (empty: one thread per output)"> {
  let check = [{
    if (!k.tileSizes.empty()) {
      if (k.tileSizes.size() != 3)
        return emitError() << "tile_sizes must have 3 entries (M, N, K), got " << k.tileSizes.size();
      for (int64_t t : k.tileSizes)
        if (t < 1 || t > 512)
          return emitError() << "tile_sizes entries must be in [1, 512], got " << t;
    }
  }];
  let recorded = "f == TaskFamily::Matmul && !k.tileSizes.empty()";
  // The naive schedule, then M, N in {32, 64, 128} and K in {8, 16, 32}; then the tensor-core
  // tiles (K = 64: one 128-byte swizzled row of f16/bf16).
  let search = !listconcat([[]], !listflatten(!foreach(m, [32, 64, 128],
      !listflatten(!foreach(n, [32, 64, 128], !foreach(kk, [8, 16, 32], [m, n, kk]))))),
      [[64, 128, 64], [64, 256, 64], [128, 64, 64], [128, 128, 64], [128, 256, 64]]);
}

def Evo_ThreadTile : Evo_Knob<"thread_tile", "threadTile", "thread-tile", "List",
    "Matmul: register tile M,N computed by each thread (with tile-sizes; default 1,1)"> {
  let cppDefault = "{1, 1}";
  let check = [{
    if (k.threadTile.size() != 2)
      return emitError() << "thread_tile must have 2 entries (M, N), got " << k.threadTile.size();
    for (int64_t t : k.threadTile)
      if (t < 1 || t > 16)
        return emitError() << "thread_tile entries must be in [1, 16], got " << t;
  }];
  let recorded = "f == TaskFamily::Matmul && !k.tileSizes.empty() && !k.wgmma && !k.mmaSync";
  let search = !listflatten(!foreach(m, [1, 2, 4, 8], !foreach(n, [1, 2, 4, 8], [m, n])));
}

def Evo_TransposeTile : Evo_Knob<"transpose_tile", "transposeTile", "transpose-tile", "Int",
    "Elementwise: stage transposed inputs through shared memory in tiles of 16, 32 or 64 "
    "(0: off)"> {
  let cppDefault = "0";
  let check = [{
    if (k.transposeTile != 0 && k.transposeTile != 16 && k.transposeTile != 32 &&
        k.transposeTile != 64)
      return emitError() << "transpose_tile must be 0 (off), 16, 32 or 64, got " << k.transposeTile;
  }];
  let recorded = "f == TaskFamily::Elementwise";
  let search = [[0], [32], [64]];
}

def Evo_Split : Evo_Knob<"split", "split", "split", "Int",
    "Reductions and untiled or tiled (SIMT) matmuls: slices of the reduction (K) reduced in "
    "parallel, then combined in order by a second kernel (power of 2, at most 256)"> {
  let cppDefault = "1";
  let check = [{
    if (!isPowerOf2(k.split) || k.split > 256)
      return emitError() << "split must be a power of 2 in [1, 256], got " << k.split;
  }];
  let recorded = "f == TaskFamily::Reduction || "
                 # "(f == TaskFamily::Matmul && k.split != 1)";
  let search = [[1], [2], [4], [8], [16], [32], [64], [128], [256]];
}

def Evo_CacheRow : Evo_Knob<"cache_row", "cacheRow", "cache-row", "Bool",
    "Row programs: keep each thread's part of the row in registers across passes"> {
  let cppDefault = "false";
  let recorded = "f == TaskFamily::Rows";
  let search = [[0], [1]];
}

def Evo_RowSplit : Evo_Knob<"row_split", "rowSplit", "row-split", "Int",
    "Row programs: slices of each row, each reduced by its own thread/warp/block into partials "
    "that later kernels combine in order (one kernel per pass over the row; power of 2, at most "
    "256; 1: one kernel)"> {
  let cppDefault = "1";
  let check = [{
    if (!isPowerOf2(k.rowSplit) || k.rowSplit > 256)
      return emitError() << "row_split must be a power of 2 in [1, 256], got " << k.rowSplit;
  }];
  let recorded = "f == TaskFamily::Rows && k.rowSplit != 1";
  let search = [[1], [2], [4], [8], [16], [32], [64]];
}

def Evo_Prefetch : Evo_Knob<"prefetch", "prefetch", "prefetch", "Bool",
    "Tiled matmul: load the next K tile into registers while computing the current one"> {
  let cppDefault = "false";
  let recorded = "f == TaskFamily::Matmul && !k.tileSizes.empty() && k.prefetch && !k.mmaSync";
  let search = [[0], [1]];
}

def Evo_Wgmma : Evo_Knob<"wgmma", "wgmma", "wgmma", "Bool",
    "Tiled f16/bf16 matmul on Hopper tensor cores: wgmma fed by TMA through a pipeline of "
    "`stages` shared-memory buffers (tile_sizes M in {64, 128}, N in {64, 128, 192, 256}, "
    "K = 64; needs chip=sm_90a); f32 operands only with f32_matmul = tf32 or 3xtf32 (K = 32)"> {
  let cppDefault = "false";
  let recorded = "f == TaskFamily::Matmul && !k.tileSizes.empty() && k.wgmma";
  let search = [[0], [1]];
}

def Evo_MmaSync : Evo_Knob<"mma_sync", "mmaSync", "mma-sync", "Bool",
    "Tiled f16/bf16 matmul on tensor cores with mma.sync m16n8k16 (sm_80 and newer): cp.async "
    "into a ring of `stages` swizzled shared-memory buffers, ldmatrix fragments, a 64 x 64 tile "
    "per warp (tile_sizes M and N in {32, 64, 128, 256}, at most 8 warps; K in {32, 64})"> {
  let cppDefault = "false";
  // With wgmma set too, the lowering refuses the pair (LowerTask.cpp): each knob's own check
  // sees one value.
  let recorded = "f == TaskFamily::Matmul && !k.tileSizes.empty() && k.mmaSync";
  let search = [[0], [1]];
}

def Evo_Stages : Evo_Knob<"stages", "stages", "stages", "Int",
    "Tensor-core matmuls (wgmma, mma_sync): shared-memory buffers of the pipeline (2-8)"> {
  let cppDefault = "4";
  let check = [{
    if (k.stages < 2 || k.stages > 8)
      return emitError() << "stages must be in [2, 8], got " << k.stages;
  }];
  let recorded = "f == TaskFamily::Matmul && !k.tileSizes.empty() && (k.wgmma || k.mmaSync)";
  let search = [[2], [3], [4], [5], [6]];
}

def Evo_Persistent : Evo_Knob<"persistent", "persistent", "persistent", "Int",
    "wgmma matmul: a persistent grid of this many blocks, each looping over output tiles while "
    "its producer already loads the next tile's operands (0: one block per tile). One or two "
    "blocks per SM pays (132 SMs on an H100/H200 SXM); any count is correct"> {
  let cppDefault = "0";
  let check = [{
    if (k.persistent < 0 || k.persistent > 65535)
      return emitError() << "persistent must be in [0, 65535], got " << k.persistent;
  }];
  let recorded = "f == TaskFamily::Matmul && !k.tileSizes.empty() && k.wgmma && k.persistent";
  let search = [[0], [132], [264]];
}

def Evo_F32MatmulKnob : Evo_Knob<"f32_matmul", "f32Matmul", "f32-matmul", "F32Matmul",
    "f32 contractions: 'ieee' (default: FP32 only), 'tf32' (the wgmma schedule may multiply "
    "TF32-truncated operands) or '3xtf32' (wgmma on a TF32 split of each operand, three "
    "products: near-f32 accuracy); the verifier's tolerance follows (docs/lowering.md)"> {
  let cppDefault = "F32Matmul::Ieee";
  // A precision contract the user opts into, not a schedule choice: recorded on every kernel of
  // an f32 contraction lowered with it (LowerTask.cpp resets it for other operand types), so
  // evo-evolve's genomes inherit it and evo-verify picks the tolerance; never searched (it is in
  // no family's knob set below).
  let recorded = "f == TaskFamily::Matmul && k.f32Matmul != F32Matmul::Ieee";
  // Its values, for the knob tests: no family's set lists it, so no mutator proposes them.
  let search = [[0], [1], [2]];
}

/// Every knob, in the order #evo.knobs prints them.
defvar Evo_AllKnobs = [Evo_BlockSize, Evo_ElementsPerThread, Evo_VectorWidth, Evo_Reduction,
                       Evo_Accumulators, Evo_GroupOutputs, Evo_GroupOutputs2, Evo_StreamLoads, Evo_FastMath,
                       Evo_TileSizes, Evo_ThreadTile,
                       Evo_TransposeTile,
                       Evo_Split, Evo_CacheRow, Evo_RowSplit, Evo_Prefetch, Evo_Wgmma, Evo_MmaSync,
                       Evo_Stages, Evo_Persistent, Evo_F32MatmulKnob];

/// The knob set of each family: what the mutators change, in the order they draw from.
class Evo_FamilyKnobs<string familyCase, list<Evo_Knob> familyKnobs> {
  string family = familyCase;
  list<Evo_Knob> knobs = familyKnobs;
}
defvar Evo_FamilyKnobSets = [
  Evo_FamilyKnobs<"Elementwise", [Evo_BlockSize, Evo_VectorWidth, Evo_ElementsPerThread,
                                  Evo_TransposeTile]>,
  Evo_FamilyKnobs<"Reduction", [Evo_BlockSize, Evo_VectorWidth, Evo_Reduction, Evo_Accumulators,
                                Evo_Split, Evo_GroupOutputs, Evo_GroupOutputs2, Evo_StreamLoads]>,
  Evo_FamilyKnobs<"Softmax", [Evo_BlockSize, Evo_VectorWidth, Evo_Reduction]>,
  Evo_FamilyKnobs<"Matmul", [Evo_TileSizes, Evo_ThreadTile, Evo_BlockSize, Evo_Accumulators,
                             Evo_VectorWidth, Evo_Prefetch, Evo_Wgmma, Evo_MmaSync,
                             Evo_Stages, Evo_Persistent, Evo_Reduction, Evo_Split,
                             Evo_GroupOutputs, Evo_GroupOutputs2, Evo_StreamLoads]>,
  Evo_FamilyKnobs<"Rows", [Evo_BlockSize, Evo_VectorWidth, Evo_Reduction, Evo_CacheRow,
                           Evo_RowSplit, Evo_FastMath]>,
  Evo_FamilyKnobs<"Scan", [Evo_Reduction, Evo_VectorWidth, Evo_BlockSize,
                           Evo_ElementsPerThread]>
];

//===----------------------------------------------------------------------===//
// What is generated from the list
//===----------------------------------------------------------------------===//

/// The pass options of the knobs (evo-lower-to-gpu).
defvar Evo_KnobPassOptions = !foreach(k, Evo_AllKnobs,
    !cond(!eq(k.knobKind, "Int") : Option<k.cpp, k.arg, "int64_t", k.cppDefault, k.doc>,
          !eq(k.knobKind, "Bool") : Option<k.cpp, k.arg, "bool", k.cppDefault, k.doc>,
          !eq(k.knobKind, "Strategy") :
              Option<k.cpp, k.arg, "::evo::ReductionStrategy", "::evo::" # k.cppDefault, k.doc,
                     Evo_ClValues<Evo_ReductionStrategy>.values>,
          !eq(k.knobKind, "F32Matmul") :
              Option<k.cpp, k.arg, "::evo::F32Matmul", "::evo::" # k.cppDefault, k.doc,
                     Evo_ClValues<Evo_F32Matmul>.values>,
          true : ListOption<k.cpp, k.arg, "int64_t", k.doc>));

/// `EVO_KNOB_LIST(X)`: X(name, cppMember, Kind, "option-arg", "summary") for every knob.
defvar Evo_KnobListMacro = "#define EVO_KNOB_LIST(X) \\\n" # !interleave(!foreach(k, Evo_AllKnobs,
    "  X(" # k.name # ", " # k.cpp # ", " # k.knobKind # ", \"" # k.arg # "\", \"" # k.doc #
    "\")"), " \\\n") # "\n" #
    "#define EVO_REDUCTION_STRATEGY_CL_VALUES " # Evo_ClValues<Evo_ReductionStrategy>.values # "\n" #
    "#define EVO_F32_MATMUL_CL_VALUES " # Evo_ClValues<Evo_F32Matmul>.values # "\n";

/// The C++ bodies of the functions Knobs.h declares.
defvar Evo_KnobFunctions =
  "ScheduleKnobs::ScheduleKnobs() {\n" #
  !interleave(!foreach(k, !filter(k, Evo_AllKnobs, !not(!empty(k.cppDefault))), 
      "  " # k.cpp # " = " # k.cppDefault # ";"), "\n") # "\n}\n\n" #
  // The checks once, over any error sink: an InFlightDiagnostic, or a string (no MLIRContext).
  "template <typename EmitErrorT>\n" #
  "static ::mlir::LogicalResult verifyKnobValues(const ScheduleKnobs &k, EmitErrorT emitError) {\n" #
  !interleave(!foreach(k, Evo_AllKnobs, "  {" # k.check # "  }"), "\n") #
  "\n  return ::mlir::success();\n}\n\n" #
  "::mlir::LogicalResult ScheduleKnobs::verify(\n" #
  "    ::llvm::function_ref<::mlir::InFlightDiagnostic()> emitError) const {\n" #
  "  return verifyKnobValues(*this, emitError);\n}\n\n" #
  "::mlir::LogicalResult ScheduleKnobs::verify(std::string &error) const {\n" #
  "  return verifyKnobValues(*this, [&] { return ::evo::detail::KnobErrorSink(error); });\n}\n\n" #
  "bool isKnobRecorded(KnobId id, TaskFamily f, const ScheduleKnobs &k) {\n" #
  "  switch (id) {\n" #
  !interleave(!foreach(k, Evo_AllKnobs, "  case KnobId::" # k.name # ":\n    return " #
      k.recorded # ";"), "\n") #
  "\n  }\n  return false;\n}\n\n" #
  "::llvm::ArrayRef<::llvm::SmallVector<int64_t, 3>> knobSearchValues(KnobId id) {\n" #
  "  switch (id) {\n" #
  !interleave(!foreach(k, Evo_AllKnobs, "  case KnobId::" # k.name # ": {\n" #
      "    static const ::llvm::SmallVector<int64_t, 3> v[] = {" #
      !interleave(!foreach(l, k.search, "{" # !interleave(l, ", ") # "}"), ", ") # "};\n" #
      "    return v;\n  }"), "\n") #
  "\n  }\n  return {};\n}\n\n" #
  "::llvm::ArrayRef<KnobId> familyKnobs(TaskFamily f) {\n" #
  "  switch (f) {\n" #
  !interleave(!foreach(s, Evo_FamilyKnobSets, "  case TaskFamily::" # s.family # ": {\n" #
      "    static const KnobId ids[] = {" #
      !interleave(!foreach(k, s.knobs, "KnobId::" # k.name), ", ") # "};\n" #
      "    return ids;\n  }"), "\n") #
  "\n  }\n  return {};\n}\n";

#endif // EVO_DIALECT_EVO_IR_EVOKNOBS_TD
