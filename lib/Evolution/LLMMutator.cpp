//===- LLMMutator.cpp - LLM-proposed kernel variants --------------------------===//

#include "evo/Evolution/LLMMutator.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
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
/// Ops a kernel reply may not contain: host-side work, or side channels.
bool forbidden(Operation *op) {
  return isa<gpu::LaunchFuncOp, gpu::LaunchOp, gpu::AllocOp, gpu::DeallocOp, gpu::MemcpyOp,
             gpu::MemsetOp, gpu::WaitOp, gpu::PrintfOp, gpu::HostRegisterOp,
             gpu::HostUnregisterOp>(op) ||
         op->getName().getStringRef() == "func.func" ||
         op->getName().getStringRef() == "func.call";
}

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
  Operation *bad = nullptr;
  gm.walk([&](Operation *op) {
    if (!bad && forbidden(op))
      bad = op;
  });
  if (bad)
    return fail(llvm::formatv("'{0}' is not allowed: only device code is accepted",
                              bad->getName().getStringRef())
                    .str());
  if (failed(verify(*module)))
    return fail("the code does not verify");
  compileVariantModule(*module, gm, ptx, ptxasPath, out);
  if (!out.ok)
    return fail("the code does not compile to PTX" +
                (out.diagnostics.empty() ? "" : ": " + out.diagnostics));
  return out;
}

} // namespace evo
