//===- EvoAttrs.td - attributes of the evo dialect ------------*- tablegen -*-===//

#ifndef EVO_DIALECT_EVO_IR_EVOATTRS_TD
#define EVO_DIALECT_EVO_IR_EVOATTRS_TD

include "evo/Dialect/Evo/IR/EvoKnobs.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/Interfaces.td"

class Evo_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Evo_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

//===----------------------------------------------------------------------===//
// Knob sets
//===----------------------------------------------------------------------===//

def Evo_KnobSetAttrInterface : AttrInterface<"KnobSetAttrInterface"> {
  let cppNamespace = "::evo";
  let description = [{
    An attribute that sets schedule knobs: `#evo.knobs<...>` (checked when it is built or
    parsed) and, on input ops, the `evo.knobs = {block_size = 128 : i64}` dictionary form
    (checked when it is applied). Which knobs a family uses is `familyKnobs`/`isKnobRecorded`
    (Knobs.h), generated from EvoKnobs.td like the knobs themselves.
  }];
  let methods = [
    InterfaceMethod<"Overlays the knobs this attribute sets on `knobs`; a knob it cannot set "
                    "(unknown name, ill-typed or illegal value) is an error.",
      "::llvm::LogicalResult", "overlayKnobs",
      (ins "::evo::ScheduleKnobs &":$knobs,
           "::llvm::function_ref<::mlir::InFlightDiagnostic()>":$emitError)>,
  ];
}

/// The parameter of #evo.knobs for knob `k`: absent unless set.
class Evo_KnobParameter<Evo_Knob k> : OptionalParameter<
    !cond(!eq(k.knobKind, "Int") : "std::optional<int64_t>",
          !eq(k.knobKind, "Bool") : "std::optional<bool>",
          !eq(k.knobKind, "Strategy") : "std::optional<::evo::ReductionStrategy>",
          !eq(k.knobKind, "F32Matmul") : "std::optional<::evo::F32Matmul>",
          true : "::llvm::ArrayRef<int64_t>"), k.doc> {
  let allocator = !if(!eq(k.knobKind, "List"), "$_dst = $_allocator.copyInto($_self);", ?);
  let cppStorageType = !if(!eq(k.knobKind, "List"), "::llvm::SmallVector<int64_t>", cppType);
  let defaultValue = !if(!eq(k.knobKind, "List"), "::llvm::SmallVector<int64_t>()", "std::nullopt");
  let comparator = !if(!eq(k.knobKind, "List"),
                       "::llvm::ArrayRef<int64_t>($_lhs) == ::llvm::ArrayRef<int64_t>($_rhs)",
                       "$_lhs == $_rhs");
}

def Evo_KnobsAttr : Evo_Attr<"Knobs", "knobs",
    [DeclareAttrInterfaceMethods<Evo_KnobSetAttrInterface>]> {
  let summary = "a set of schedule knobs";
  let description = [{
    The knobs a kernel was built with, or that a task should be lowered with:
    `#evo.knobs<block_size = 128, reduction = warp, tile_sizes = [64, 64, 16]>`. Every
    knob is optional; the ones a kernel records are those its family uses (EvoKnobs.td).
    Values are checked when the attribute is built or parsed.
  }];
  let parameters = !dag(ins, !foreach(k, Evo_AllKnobs, Evo_KnobParameter<k>),
                        !foreach(k, Evo_AllKnobs, k.name));
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = Evo_KnobListMacro # [{
    /// The knobs a kernel of `family` built with `knobs` records.
    static KnobsAttr get(::mlir::MLIRContext *ctx, const ::evo::ScheduleKnobs &knobs,
                         ::evo::TaskFamily family);
    /// The knobs this attribute sets, over the defaults.
    ::evo::ScheduleKnobs getKnobs() const;
    /// The knobs this attribute sets as JSON (manifests, run store): {"block_size": 128, ...}.
    ::llvm::json::Object toJson() const;
  }];
  let extraClassDefinition =
    "::evo::KnobsAttr $cppClass::get(::mlir::MLIRContext *ctx, const ::evo::ScheduleKnobs &k,\n"
    "                              ::evo::TaskFamily f) {\n"
    "  return Base::get(ctx" #
    !interleave(!foreach(k, Evo_AllKnobs, ",\n      ::evo::detail::recordKnob(::evo::isKnobRecorded("
        "::evo::KnobId::" # k.name # ", f, k), k." # k.cpp # ")"), "") # ");\n}\n\n" #
    "::llvm::LogicalResult $cppClass::verify(\n"
    "    ::llvm::function_ref<::mlir::InFlightDiagnostic()> emitError" #
    !interleave(!foreach(k, Evo_AllKnobs, ", " # Evo_KnobParameter<k>.cppType # " " # k.name),
                "") # ") {\n"
    "  ::evo::ScheduleKnobs k;\n" #
    !interleave(!foreach(k, Evo_AllKnobs,
        "  ::evo::detail::overlayKnob(k." # k.cpp # ", " # k.name # ");"), "\n") # "\n"
    "  return k.verify(emitError);\n}\n\n" #
    "::evo::ScheduleKnobs $cppClass::getKnobs() const {\n"
    "  ::evo::ScheduleKnobs k;\n" #
    !interleave(!foreach(k, Evo_AllKnobs,
        "  ::evo::detail::overlayKnob(k." # k.cpp # ", get" # !toupper(!substr(k.cpp, 0, 1)) #
        !substr(k.cpp, 1) # "());"), "\n") # "\n  return k;\n}\n\n" #
    "::llvm::json::Object $cppClass::toJson() const {\n"
    "  ::llvm::json::Object o;\n" #
    !interleave(!foreach(k, Evo_AllKnobs,
        "  ::evo::detail::knobToJson(o, \"" # k.name # "\", get" # !toupper(!substr(k.cpp, 0, 1)) #
        !substr(k.cpp, 1) # "());"), "\n") # "\n  return o;\n}\n\n" #
    !strconcat("", Evo_KnobFunctions);
}

//===----------------------------------------------------------------------===//
// The launch plan
//===----------------------------------------------------------------------===//

/// A list of int64_t printed `[a, b, c]` (buffer indices, launch dimensions).
class Evo_I64ListParameter<string desc> : ArrayRefParameter<"int64_t", desc>;

/// A list of evo attributes printed `[#evo.x<...>, ...]`.
class Evo_AttrListParameter<string attr, string desc> : ArrayRefParameter<attr, desc>;

def Evo_TensorMapAttr : Evo_Attr<"TensorMap", "tensor_map"> {
  let summary = "a TMA tensor map over a buffer of the plan";
  let description = [{
    `#evo.tensor_map<source = 0, dims = [4096, 8192], strides = [8192], box = [64, 128],
    swizzle = 128>`: the arguments of cuTensorMapEncodeTiled for the plan buffer `source` (its
    element type is the map's): `dims` in elements and `box` in elements, innermost first,
    `strides` in bytes for dims[1..] (rank - 1 entries), `swizzle` in bytes (0, 32, 64, 128).
    Element strides 1, interleave none, L2 promotion 256 B and out-of-bounds fill none (zeros)
    are fixed. The shape is checked here; what needs the source (element type, box[0] against
    the swizzle, the bytes addressed against the source's size) by #evo.plan.
  }];
  let parameters = (ins "int64_t":$source,
                        Evo_I64ListParameter<"global sizes, elements, innermost first">:$dims,
                        Evo_I64ListParameter<"strides of dims[1..] in bytes">:$strides,
                        Evo_I64ListParameter<"box sizes, elements, innermost first">:$box,
                        DefaultValuedParameter<"int64_t", "0">:$swizzle);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

def Evo_BufferAttr : Evo_Attr<"Buffer", "buffer"> {
  let summary = "a buffer of a launch plan";
  let description = [{
    `#evo.buffer<name = "x", role = input, type = memref<1024xf32>>`; scratch buffers that a
    kernel accumulates into atomically carry `zero_init = true`. A buffer of role `tensor_map`
    is a `memref<128xi8>` the host fills with the descriptor its `tensor_map` describes. An
    input with `by_value = true` is a scalar argument of the function (type `memref<f32>`, 0-d,
    for an `f32`): the host passes its value, and the kernels take the element type as a
    parameter, not a pointer. A buffer of role `constant` holds a constant of the function too
    large for the kernels (`global = "sym"`: the `memref.global` beside the host function that
    has its value); the host copies it to the device, evo-emit-ptx writes its bytes beside the
    PTX, and everywhere else (the oracle, the inputs the verifier draws) it is an input.
  }];
  let parameters = (ins StringRefParameter<"name">:$name, "::evo::BufferRole":$role,
                        "::mlir::MemRefType":$type,
                        DefaultValuedParameter<"bool", "false">:$zero_init,
                        OptionalParameter<"::evo::TensorMapAttr">:$tensor_map,
                        DefaultValuedParameter<"bool", "false">:$by_value,
                        StringRefParameter<"global of a constant", "\"\"">:$global);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

def Evo_TaskAttr : Evo_Attr<"Task", "task"> {
  let summary = "a task of a launch plan";
  let description = [{
    A compute op of the lowered function: its family, its source (a self-contained func.func on
    tensors, re-loweable with other knobs), the knobs it was lowered with and the plan buffers
    bound to its arguments, then its results, then its own scratch.
  }];
  let parameters = (ins StringRefParameter<"name">:$name, "::evo::TaskFamily":$family,
                        StringRefParameter<"source">:$source, "::evo::KnobsAttr":$knobs,
                        Evo_I64ListParameter<"plan buffers">:$buffers);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

def Evo_LaunchAttr : Evo_Attr<"Launch", "launch"> {
  let summary = "a kernel launch of a launch plan";
  let parameters = (ins StringRefParameter<"kernel">:$kernel, "int64_t":$task,
                        Evo_I64ListParameter<"grid size">:$grid,
                        Evo_I64ListParameter<"block size">:$block,
                        DefaultValuedParameter<"int64_t", "0">:$dynamic_shared_memory,
                        Evo_I64ListParameter<"plan buffers, in parameter order">:$args);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

def Evo_PlanAttr : Evo_Attr<"Plan", "plan"> {
  let summary = "the contract between a gpu.module's kernels and their host";
  let description = [{
    The function's buffers (inputs and outputs in signature order, then scratch), its tasks and
    the ordered kernel launches. On a gpu.module as `evo.plan`; the host function, the manifest
    and the evaluator are derived from it, so variants only ever replace device code. Indices
    are checked when the attribute is built or parsed, the launches against the kernels of the
    gpu.module that carries it by the dialect's verifier.
  }];
  let parameters = (ins StringRefParameter<"function name">:$func,
                        StringRefParameter<"the original function">:$source,
                        Evo_AttrListParameter<"::evo::BufferAttr", "buffers">:$buffers,
                        Evo_AttrListParameter<"::evo::TaskAttr", "tasks">:$tasks,
                        Evo_AttrListParameter<"::evo::LaunchAttr", "launches">:$launches);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

#endif // EVO_DIALECT_EVO_IR_EVOATTRS_TD
