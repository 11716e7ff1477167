//===- EvoEnums.td - enums of the evo dialect ----------------*- tablegen -*-===//

#ifndef EVO_DIALECT_EVO_IR_EVOENUMS_TD
#define EVO_DIALECT_EVO_IR_EVOENUMS_TD

include "evo/Dialect/Evo/IR/EvoBase.td"
include "mlir/IR/EnumAttr.td"

/// What kind of kernel a task lowers to; each family has its own emitter and knob set.
/// Rows: a whole function of row-wise reductions and elementwise ops (softmax, layernorm, ...)
/// fused into one kernel that walks each row. Scan: a cumulative sum/product/max/min written as a
/// masked triangular reduction (there is no scan op upstream), lowered as a parallel scan.
def Evo_TaskFamily : I32EnumAttr<"TaskFamily", "kind of kernel a task lowers to", [
    I32EnumAttrCase<"Elementwise", 0, "elementwise">,
    I32EnumAttrCase<"Reduction", 1, "reduction">,
    I32EnumAttrCase<"Softmax", 2, "softmax">,
    I32EnumAttrCase<"Matmul", 3, "matmul">,
    I32EnumAttrCase<"Rows", 4, "rows">,
    I32EnumAttrCase<"Scan", 5, "scan">]> {
  let cppNamespace = "::evo";
  let genSpecializedAttr = 0;
}
def Evo_TaskFamilyAttr : EnumAttr<Evo_Dialect, Evo_TaskFamily, "family"> {
  let assemblyFormat = "`<` $value `>`";
}

/// How the threads of a reduction (or of a row) share the reduced elements.
def Evo_ReductionStrategy : I32EnumAttr<"ReductionStrategy",
    "how threads share a reduction", [
    I32EnumAttrCase<"Thread", 0, "thread">,
    I32EnumAttrCase<"Warp", 1, "warp">,
    I32EnumAttrCase<"Block", 2, "block">]> {
  let cppNamespace = "::evo";
  let genSpecializedAttr = 0;
}
def Evo_ReductionStrategyAttr : EnumAttr<Evo_Dialect, Evo_ReductionStrategy, "reduction"> {
  let assemblyFormat = "`<` $value `>`";
}

/// How f32 contractions may use tensor cores (docs/lowering.md, "f32 on tensor cores"): `ieee`
/// (the default) keeps every f32 multiply-add in FP32; `tf32` lets the wgmma schedule multiply
/// operands truncated to TF32 (10-bit mantissa); `3xtf32` splits each operand into a TF32 part
/// and a TF32 remainder and adds three products (near-f32 accuracy). The verifier's tolerance
/// follows the mode (share/evo-opt/tolerances.json, "f32_matmul").
def Evo_F32Matmul : I32EnumAttr<"F32Matmul", "f32 contractions on tensor cores", [
    I32EnumAttrCase<"Ieee", 0, "ieee">,
    I32EnumAttrCase<"TF32", 1, "tf32">,
    I32EnumAttrCase<"TF32x3", 2, "3xtf32">]> {
  let cppNamespace = "::evo";
  let genSpecializedAttr = 0;
}
def Evo_F32MatmulAttr : EnumAttr<Evo_Dialect, Evo_F32Matmul, "f32_matmul"> {
  let assemblyFormat = "`<` $value `>`";
}

/// What a buffer of a launch plan is to the host. A tensor map is a 128-byte TMA descriptor
/// (CUtensorMap) the host encodes over another buffer of the plan (#evo.tensor_map).
def Evo_BufferRole : I32EnumAttr<"BufferRole", "role of a plan buffer", [
    I32EnumAttrCase<"Input", 0, "input">,
    I32EnumAttrCase<"Output", 1, "output">,
    I32EnumAttrCase<"Scratch", 2, "scratch">,
    I32EnumAttrCase<"TensorMap", 3, "tensor_map">,
    I32EnumAttrCase<"Constant", 4, "constant">]> {
  let cppNamespace = "::evo";
  let genSpecializedAttr = 0;
}
def Evo_BufferRoleAttr : EnumAttr<Evo_Dialect, Evo_BufferRole, "role"> {
  let assemblyFormat = "`<` $value `>`";
}

/// The search strategies of evo-evolve: built-in mutators, then EvoEngineer's LLM ones.
def Evo_SearchStrategy : I32EnumAttr<"SearchStrategy", "search strategy of evo-evolve", [
    I32EnumAttrCase<"Evo", 0, "evo">,
    I32EnumAttrCase<"SingleBest", 1, "single-best">,
    I32EnumAttrCase<"Islands", 2, "islands">,
    I32EnumAttrCase<"Free", 3, "free">,
    I32EnumAttrCase<"Insight", 4, "insight">,
    I32EnumAttrCase<"Full", 5, "full">,
    I32EnumAttrCase<"EoH", 6, "eoh">,
    I32EnumAttrCase<"FunSearch", 7, "funsearch">]> {
  let cppNamespace = "::evo";
  let genSpecializedAttr = 0;
}
def Evo_SearchStrategyAttr : EnumAttr<Evo_Dialect, Evo_SearchStrategy, "strategy"> {
  let assemblyFormat = "`<` $value `>`";
}

/// What the verifier concluded about a candidate (the spellings of the worker protocol, the run
/// store and the reports).
def Evo_Verdict : I32EnumAttr<"Verdict", "verdict on a candidate", [
    I32EnumAttrCase<"Valid", 0, "valid">,
    I32EnumAttrCase<"Invalid", 1, "invalid">,
    I32EnumAttrCase<"Crashed", 2, "crashed">,
    I32EnumAttrCase<"Timeout", 3, "timeout">,
    I32EnumAttrCase<"NotRun", 4, "not-run">]> {
  let cppNamespace = "::evo";
  let genSpecializedAttr = 0;
}
def Evo_VerdictAttr : EnumAttr<Evo_Dialect, Evo_Verdict, "verdict"> {
  let assemblyFormat = "`<` $value `>`";
}

/// Builds `llvm::cl::values(...)` for a pass option of enum `e`, from its cases.
class Evo_ClValues<I32EnumAttr e> {
  string values = "::llvm::cl::values(" # !interleave(!foreach(c, e.enumerants,
      "clEnumValN(" # e.cppNamespace # "::" # e.className # "::" # c.symbol # ", \"" # c.str #
      "\", \"" # c.str # "\")"), ", ") # ")";
}

#endif // EVO_DIALECT_EVO_IR_EVOENUMS_TD
