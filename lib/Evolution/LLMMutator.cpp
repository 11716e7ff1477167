//===- LLMMutator.cpp - the LLM operators and the device-code contract --------===//
//
// Which prompt template each EvoEngineer strategy uses, and the check every untrusted kernel
// passes before it is compiled (checkDeviceCode). Kept apart from the search and the compiler:
// VariantCompiler uses the check, the LLM proposer uses the operators, and this file uses
// neither, so nothing cycles.
//
//===----------------------------------------------------------------------===//

#include "evo/Evolution/LLMMutator.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace evo {

LLMOperator chooseLLMOperator(SearchStrategy s, unsigned numValid, unsigned sequence) {
  switch (s) {
  case SearchStrategy::Free:
    return {"free", 1};
  case SearchStrategy::Insight:
    return {"insight", 1};
  case SearchStrategy::Full:
    // Initialization until two valid solutions exist, then crossover and mutation in turn.
    if (numValid < 2)
      return {"full_init", std::min(numValid, 1u)};
    return sequence % 2 ? LLMOperator{"full_mutation", 1} : LLMOperator{"full_crossover", 2};
  case SearchStrategy::EoH: {
    static const LLMOperator ops[] = {{"eoh_e1", 2}, {"eoh_e2", 2}, {"eoh_m1", 1}, {"eoh_m2", 1}};
    LLMOperator op = ops[sequence % 4];
    op.numParents = std::min(op.numParents, std::max(numValid, 1u));
    return op;
  }
  case SearchStrategy::FunSearch:
    return {"funsearch", std::min(std::max(numValid, 1u), 2u)};
  case SearchStrategy::Evo:
  case SearchStrategy::SingleBest:
  case SearchStrategy::Islands:
    break; // not LLM strategies
  }
  return {"free", 1};
}

namespace {
/// Why an op may not appear in device code, or "" when it may (the writes it makes are checked
/// separately).
std::string forbiddenReason(Operation *op) {
  StringRef name = op->getName().getStringRef();
  StringRef dialect = op->getName().getDialectNamespace();
  if (name == "llvm.inline_asm" || name == "nvvm.inline_ptx")
    return "inline assembly is not accepted (it can declare PTX .global state that survives a "
           "launch, or read clocks): write the kernel in MLIR ops";
  if (name == "llvm.mlir.global")
    return "llvm globals are not accepted: a table must be a `memref.global constant` with an "
           "initial value";
  if (dialect == "llvm")
    return "llvm dialect ops are not accepted (raw pointers, allocas and calls bypass the kernel "
           "contract): use memref and vector ops on the kernel's arguments";
  if (name.starts_with("nvvm.read.ptx.sreg.clock") ||
      name.starts_with("nvvm.read.ptx.sreg.globaltimer") ||
      name.starts_with("nvvm.read.ptx.sreg.envreg") || name == "nvvm.read.ptx.sreg.gridid")
    return "reading clocks, timers or the launch's identity is not accepted: a kernel's results "
           "may not depend on when it runs or on which launch it is";
  if (isa<gpu::LaunchFuncOp, gpu::LaunchOp, gpu::AllocOp, gpu::DeallocOp, gpu::MemcpyOp,
          gpu::MemsetOp, gpu::WaitOp, gpu::HostRegisterOp, gpu::HostUnregisterOp,
          gpu::GPUModuleOp, gpu::BinaryOp>(op) ||
      name == "gpu.set_default_device" || name.starts_with("gpu.create_") ||
      name.starts_with("gpu.destroy_") || name.starts_with("gpu.spmv") ||
      name.starts_with("gpu.spmm") || name.starts_with("gpu.sddmm") ||
      name.starts_with("gpu.spgemm") || name == "gpu.spmat_get_size" ||
      name == "gpu.set_csr_pointers" || dialect == "func" || isa<ModuleOp>(op))
    return "host code is not accepted: only device code";
  if (isa<gpu::PrintfOp>(op) || name == "vector.print")
    return "printing is not accepted in a kernel";
  if (name == "memref.alloc" || name == "memref.realloc" || name == "memref.dealloc")
    return "device heap allocation is not accepted: use memref.alloca, workgroup or private "
           "attributions, or dynamic shared memory";
  if (name == "memref.extract_aligned_pointer_as_index")
    return "reading a buffer's address is not accepted (with addresses, offsets can reach memory "
           "other than the kernel's buffers, e.g. a table)";
  if (name == "memref.dma_start" || name == "memref.dma_wait")
    return "DMA ops are not accepted in a kernel";
  if (name == "builtin.unrealized_conversion_cast")
    return "unrealized_conversion_cast is not accepted: it bypasses the type system";
  static const StringRef allowed[] = {"gpu",    "arith", "math", "memref", "vector", "scf",
                                      "cf",     "affine", "index", "ub",    "nvvm"};
  if (!llvm::is_contained(allowed, dialect))
    return ("the " + dialect + " dialect is not accepted: kernels may use the gpu, arith, math, "
            "memref, vector, scf, cf, affine, index, ub and nvvm dialects")
        .str();
  return "";
}

/// The buffer a memref value views: "" when it is memory the kernel may write (an output or
/// scratch argument, a workgroup/private attribution, an alloca, dynamic shared memory), else
/// why not.
std::string writeTargetProblem(Value v, gpu::GPUFuncOp func, ArrayRef<KernelLaunch> launches,
                               int numInputs) {
  for (int depth = 0; depth < 1000; ++depth) {
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      Block *owner = arg.getOwner();
      if (!func || owner != &func.getBody().front())
        return "a memref that is a block argument of a nested region (write through the kernel's "
               "arguments directly)";
      unsigned i = arg.getArgNumber();
      if (i >= func.getNumArguments())
        return ""; // a workgroup or private attribution
      if (!func.isKernel())
        return llvm::formatv("argument {0} of the helper @{1}: only kernels' arguments can be "
                             "traced to buffers",
                             i, func.getName())
            .str();
      bool launched = false;
      for (const KernelLaunch &l : launches) {
        if (l.kernel != func.getName())
          continue;
        launched = true;
        if (i >= l.args.size())
          return llvm::formatv("argument {0}, which no launch binds", i).str();
        if (numInputs < 0 || static_cast<int>(l.args[i]) < numInputs)
          return llvm::formatv("argument {0}, an input buffer (inputs are read-only)", i).str();
      }
      if (!launched)
        return "an argument of a kernel that is never launched";
      return "";
    }
    Operation *def = v.getDefiningOp();
    if (isa<memref::AllocaOp, gpu::DynamicSharedMemoryOp>(def))
      return "";
    if (auto g = dyn_cast<memref::GetGlobalOp>(def))
      return ("the global @" + g.getName() + " (globals are read-only tables)").str();
    if (auto view = dyn_cast<ViewLikeOpInterface>(def)) {
      v = view.getViewSource();
      continue;
    }
    return ("a memref made by '" + def->getName().getStringRef() +
            "', which cannot be traced to one of the kernel's output or scratch arguments")
        .str();
  }
  return "a memref whose buffer cannot be traced";
}
} // namespace

std::string checkDeviceCode(gpu::GPUModuleOp gm, ArrayRef<KernelLaunch> launches, int numInputs) {
  // Module level: kernels, helpers and constant tables only.
  for (Operation &op : gm.getBody()->getOperations()) {
    if (isa<gpu::GPUFuncOp>(op))
      continue;
    if (auto g = dyn_cast<memref::GlobalOp>(op)) {
      if (!g.getConstant())
        return llvm::formatv("memref.global @{0} is not `constant`: writable module-level state "
                             "survives from one launch to the next and is not accepted; tables "
                             "must be `memref.global constant` with an initial value",
                             g.getSymName())
            .str();
      if (g.isExternal() || g.isUninitialized())
        return llvm::formatv("memref.global constant @{0} has no initial value: tables must be "
                             "initialized",
                             g.getSymName())
            .str();
      continue;
    }
    std::string why = forbiddenReason(&op);
    return llvm::formatv("'{0}' at the gpu.module's top level is not accepted{1}{2}",
                         op.getName().getStringRef(), why.empty() ? "" : ": ", why)
        .str();
  }
  std::string problem;
  gm.walk([&](Operation *op) -> WalkResult {
    if (op == gm.getOperation())
      return WalkResult::advance();
    auto func = op->getParentOfType<gpu::GPUFuncOp>();
    std::string where = func ? ("@" + func.getName() + ": ").str() : std::string();
    if (isa<gpu::GPUFuncOp, memref::GlobalOp>(op) && op->getParentOp() == gm.getOperation())
      return WalkResult::advance();
    if (std::string why = forbiddenReason(op); !why.empty()) {
      problem = llvm::formatv("{0}'{1}' is not allowed: {2}", where, op->getName().getStringRef(),
                              why)
                    .str();
      return WalkResult::interrupt();
    }
    // Every memref (or pointer) the op may write must be the kernel's to write.
    SmallVector<Value> written;
    if (auto effects = dyn_cast<MemoryEffectOpInterface>(op)) {
      SmallVector<MemoryEffects::EffectInstance> list;
      effects.getEffects(list);
      for (const MemoryEffects::EffectInstance &e : list)
        if (isa<MemoryEffects::Write>(e.getEffect()) && e.getValue())
          written.push_back(e.getValue());
    } else if (!op->hasTrait<OpTrait::HasRecursiveMemoryEffects>()) {
      // Unknown effects: any memref operand may be written.
      for (Value o : op->getOperands())
        if (isa<BaseMemRefType, LLVM::LLVMPointerType>(o.getType()))
          written.push_back(o);
    }
    for (Value w : written) {
      std::string why = isa<BaseMemRefType>(w.getType())
                            ? writeTargetProblem(w, func, launches, numInputs)
                            : std::string("memory through a pointer");
      if (!why.empty()) {
        problem = llvm::formatv("{0}'{1}' writes {2}: a kernel may write only its output and "
                                "scratch arguments, workgroup/private memory and memref.alloca",
                                where, op->getName().getStringRef(), why)
                      .str();
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  return problem;
}

} // namespace evo
