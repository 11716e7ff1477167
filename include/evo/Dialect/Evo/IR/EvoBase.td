//===- EvoBase.td - the evo dialect -------------------------*- tablegen -*-===//
//
// The evo dialect holds the contract every stage of evo-opt shares: the schedule knobs a kernel
// was built with (#evo.knobs), the launch plan of a lowered function (#evo.plan and its parts)
// and the enums they use. It has no operations: its attributes ride on gpu.module / gpu.func
// (`evo.plan`, `evo.knobs`, `evo.family`, `evo.task`), and the dialect verifies them there.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_DIALECT_EVO_IR_EVOBASE_TD
#define EVO_DIALECT_EVO_IR_EVOBASE_TD

include "mlir/IR/DialectBase.td"

def Evo_Dialect : Dialect {
  let name = "evo";
  let cppNamespace = "::evo";
  let summary = "Schedule knobs and launch plans of evo-opt's lowered kernels";
  let description = [{
    Attributes only. `#evo.knobs<...>` is a knob set (the search space of the built-in
    mutators, listed once in EvoKnobs.td); `#evo.plan<...>` is the contract between a
    gpu.module's kernels and their host (buffers, tasks, ordered launches). The dialect's
    operation-attribute verifier checks `evo.plan` against the kernels of the gpu.module that
    carries it, and `evo.knobs` / `evo.family` / `evo.task` where they appear.
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
  }];
}

#endif // EVO_DIALECT_EVO_IR_EVOBASE_TD
