//===- LLMMutator.cpp - LLM-proposed kernel variants --------------------------===//

#include "evo/Evolution/LLMMutator.h"
#include "evo/Conversion/InputChecks.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace evo {

LLMOperator chooseLLMOperator(llm::Strategy s, unsigned numValid, unsigned sequence) {
  switch (s) {
  case llm::Strategy::Free:
    return {"free", 1};
  case llm::Strategy::Insight:
    return {"insight", 1};
  case llm::Strategy::Full:
    // Initialization until two valid solutions exist, then crossover and mutation in turn.
    if (numValid < 2)
      return {"full_init", std::min(numValid, 1u)};
    return sequence % 2 ? LLMOperator{"full_mutation", 1} : LLMOperator{"full_crossover", 2};
  case llm::Strategy::EoH: {
    static const LLMOperator ops[] = {{"eoh_e1", 2}, {"eoh_e2", 2}, {"eoh_m1", 1}, {"eoh_m2", 1}};
    LLMOperator op = ops[sequence % 4];
    op.numParents = std::min(op.numParents, std::max(numValid, 1u));
    return op;
  }
  case llm::Strategy::FunSearch:
    return {"funsearch", std::min(std::max(numValid, 1u), 2u)};
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

namespace {
template <typename T> std::string describe(T t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}
} // namespace

CompiledVariant compileLLMVariant(const DialectRegistry &registry, StringRef code,
                                  const VariantInfo &parent, const PTXOptions &ptx,
                                  StringRef ptxasPath) {
  MLIRContext &ctx = compileContext(registry);
  CompiledVariant out;
  out.launches = parent.launches;
  out.scratch = parent.scratch;
  out.numInputs = parent.numInputs;
  std::string diagText;
  llvm::raw_string_ostream diag(diagText);
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    diag << d.getLocation() << ": " << d.str() << "\n";
    return success();
  });
  auto fail = [&](const Twine &why) {
    out.ok = false;
    out.diagnostics = (why + (diagText.empty() ? "" : "\n" + diagText)).str();
    return out;
  };

  Block parentBlock;
  if (failed(parseSourceString(parent.ir, &parentBlock, ParserConfig(&ctx))) ||
      parentBlock.empty() || !isa<gpu::GPUModuleOp>(parentBlock.front()))
    return fail("internal: the parent's kernels do not parse");
  auto parentModule = cast<gpu::GPUModuleOp>(parentBlock.front());
  diagText.clear();

  // The reply: a gpu.module (also inside a builtin.module), or gpu.func(s) replacing the
  // parent's of the same names.
  // MLIR's parser recurses once per nesting level: deeply nested text would overflow the stack.
  if (std::optional<size_t> at = findExcessiveNesting(code, kDefaultMaxNesting)) {
    StringRef before = code.take_front(*at);
    size_t line = before.count('\n') + 1;
    size_t column = *at - (before.rfind('\n') == StringRef::npos ? 0 : before.rfind('\n') + 1) + 1;
    return fail(llvm::formatv("the code nests brackets deeper than {0} levels (line {1}, column "
                              "{2}): it is not parsed",
                              kDefaultMaxNesting, line, column)
                    .str());
  }
  Block replyBlock;
  if (failed(parseSourceString(code, &replyBlock, ParserConfig(&ctx))))
    return fail("the code does not parse as MLIR");
  gpu::GPUModuleOp replyModule;
  SmallVector<gpu::GPUFuncOp> replyFuncs;
  for (Operation &op : replyBlock) {
    if (auto m = dyn_cast<gpu::GPUModuleOp>(op)) {
      if (replyModule)
        return fail("the reply holds more than one gpu.module");
      replyModule = m;
    } else if (auto m = dyn_cast<ModuleOp>(op)) {
      for (auto g : m.getOps<gpu::GPUModuleOp>()) {
        if (replyModule)
          return fail("the reply holds more than one gpu.module");
        replyModule = g;
      }
      for (Operation &inner : m.getBody()->getOperations())
        if (!isa<gpu::GPUModuleOp>(inner))
          return fail(llvm::formatv("'{0}' outside the gpu.module: only device code is accepted",
                                    inner.getName().getStringRef())
                          .str());
    } else if (auto f = dyn_cast<gpu::GPUFuncOp>(op)) {
      replyFuncs.push_back(f);
    } else {
      return fail(llvm::formatv("'{0}' at the top level: send a gpu.module or gpu.func(s)",
                                op.getName().getStringRef())
                      .str());
    }
  }
  if (!replyModule && replyFuncs.empty())
    return fail("the reply holds no gpu.module and no gpu.func");
  if (replyModule && !replyFuncs.empty())
    return fail("send either a gpu.module or gpu.func(s), not both");

  OpBuilder b(&ctx);
  OwningOpRef<ModuleOp> module = ModuleOp::create(b.getUnknownLoc());
  b.setInsertionPointToEnd(module->getBody());
  gpu::GPUModuleOp gm;
  if (replyModule) {
    gm = cast<gpu::GPUModuleOp>(b.clone(*replyModule));
    gm.setName(parentModule.getName());
  } else {
    gm = cast<gpu::GPUModuleOp>(b.clone(*parentModule));
    for (gpu::GPUFuncOp f : replyFuncs) {
      if (auto old = gm.lookupSymbol<gpu::GPUFuncOp>(f.getName()))
        old.erase();
      b.setInsertionPoint(gm.getBody()->getTerminator());
      b.clone(*f);
    }
  }
  // Attributes a gpu.module may carry from the lowering are not the reply's business.
  gm->removeAttr("evo.plan");

  // The contract: every parent kernel, same name, signature and launch configuration; no other
  // kernels; device code only.
  llvm::StringSet<> parentKernels;
  for (auto pk : parentModule.getOps<gpu::GPUFuncOp>()) {
    if (!pk.isKernel())
      continue;
    parentKernels.insert(pk.getName());
    auto k = gm.lookupSymbol<gpu::GPUFuncOp>(pk.getName());
    if (!k)
      return fail(llvm::formatv("kernel @{0} is missing (keep every kernel's name)", pk.getName())
                      .str());
    if (!k.isKernel())
      return fail(llvm::formatv("@{0} must keep the `kernel` attribute", pk.getName()).str());
    if (k.getFunctionType() != pk.getFunctionType())
      return fail(llvm::formatv("kernel @{0} must keep its signature {1}, got {2}", pk.getName(),
                                describe(pk.getFunctionType()), describe(k.getFunctionType()))
                      .str());
    // The launch configuration: the parent's, unless the kernel says otherwise with
    // evo.launch = {grid = array<i64: x, y, z>, block = array<i64: x, y, z>[, dynamic_shared_memory = n]}.
    std::optional<std::array<int64_t, 3>> block;
    for (const KernelLaunch &l : out.launches)
      if (l.kernel == pk.getName())
        block = l.block;
    if (Attribute a = k->getAttr("evo.launch")) {
      auto d = dyn_cast<DictionaryAttr>(a);
      auto grid = d ? d.getAs<DenseI64ArrayAttr>("grid") : DenseI64ArrayAttr();
      auto blk = d ? d.getAs<DenseI64ArrayAttr>("block") : DenseI64ArrayAttr();
      auto smem = d ? d.getAs<IntegerAttr>("dynamic_shared_memory") : IntegerAttr();
      auto valid3 = [](DenseI64ArrayAttr x, int64_t limit) {
        return x && x.size() == 3 &&
               llvm::all_of(x.asArrayRef(), [&](int64_t v) { return v >= 1 && v <= limit; });
      };
      if (!valid3(grid, 2147483647) || !valid3(blk, 1024) ||
          blk[0] * blk[1] * blk[2] > 1024 || (smem && (smem.getInt() < 0 || smem.getInt() > 232448)))
        return fail(llvm::formatv("kernel @{0}: evo.launch must be {{grid = array<i64: x, y, z>, "
                                  "block = array<i64: x, y, z>} with at most 1024 threads",
                                  pk.getName())
                        .str());
      for (KernelLaunch &l : out.launches)
        if (l.kernel == pk.getName()) {
          l.grid = {grid[0], grid[1], grid[2]};
          l.block = {blk[0], blk[1], blk[2]};
          l.dynamicSharedMemory = smem ? smem.getInt() : 0;
        }
      block = std::array<int64_t, 3>{blk[0], blk[1], blk[2]};
    }
    if (DenseI32ArrayAttr known = k.getKnownBlockSizeAttr(); known && block &&
        (known.size() != 3 || known[0] != (*block)[0] || known[1] != (*block)[1] ||
         known[2] != (*block)[2]))
      return fail(llvm::formatv("kernel @{0}: known_block_size {1} differs from the launch's "
                                "block [{2}, {3}, {4}]",
                                pk.getName(), describe(Attribute(known)), (*block)[0], (*block)[1],
                                (*block)[2])
                      .str());
    // The knobs it was lowered with no longer describe it.
    k->removeAttr("evo.knobs");
  }
  for (auto k : gm.getOps<gpu::GPUFuncOp>())
    if (k.isKernel() && !parentKernels.contains(k.getName()))
      return fail(llvm::formatv("unexpected kernel @{0}: the launch plan only launches {1}",
                                k.getName(), parentKernels.size())
                      .str());
  if (failed(verify(*module)))
    return fail("the code does not verify");
  // No state across launches, no clocks, nothing that bypasses the contract.
  if (std::string why = checkDeviceCode(gm, out.launches, parent.numInputs); !why.empty())
    return fail(why);
  compileVariantModule(*module, gm, ptx, ptxasPath, out);
  if (!out.ok)
    return fail("the code does not compile to PTX" +
                (out.diagnostics.empty() ? "" : ": " + out.diagnostics));
  return out;
}

} // namespace evo
