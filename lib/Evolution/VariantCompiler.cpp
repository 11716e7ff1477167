//===- VariantCompiler.cpp - a kernel variant, compiled to PTX/cubin ------------===//
//
// Genomes, LLM code and stored gpu.modules become PTX (and a cubin with ptxas) here, on the
// calling thread's own MLIRContext. Why it is its own file: the search, the LLM proposer, the
// resume path and the pass's final check all need it, and the LLM code's contract check
// (LLMMutator.h) is below it, so nothing cycles. docs/evolution.md.
//
//===----------------------------------------------------------------------===//

#include "evo/Evolution/VariantCompiler.h"
#include "evo/Dialect/Evo/IR/InputChecks.h"
#include "evo/Conversion/LowerToGPU.h"
#include "evo/Evolution/LLMMutator.h"
#include "evo/Evolution/RunStore.h"
#include "evo/Target/Manifest.h"
#include "evo/Target/PTXAssembler.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
namespace json = llvm::json;

namespace evo {

namespace {
/// A compile thread's own context, and the task source it parsed last (kept: the candidates of a
/// task are compiled from the same source, so it is parsed once per thread and task). The
/// module is declared after the context, so it is destroyed first.
struct CompileThread {
  std::unique_ptr<MLIRContext> ctx;
  std::string source;
  OwningOpRef<ModuleOp> task;
};

CompileThread &compileThread(const DialectRegistry &registry) {
  // One context per compile thread: variants compile in parallel without sharing IR.
  thread_local CompileThread t;
  if (!t.ctx) {
    t.ctx = std::make_unique<MLIRContext>(registry, MLIRContext::Threading::DISABLED);
    loadLoweringDialects(t.ctx.get());
  }
  return t;
}

/// The task func of `source`, parsed in this thread's context (once per source), or null.
func::FuncOp parsedTask(CompileThread &t, StringRef source) {
  if (!t.task || t.source != source) {
    t.task = parseSourceString<ModuleOp>(source, ParserConfig(t.ctx.get()));
    t.source = t.task ? source.str() : std::string();
  }
  if (!t.task || t.task->getOps<func::FuncOp>().empty())
    return nullptr;
  return *t.task->getOps<func::FuncOp>().begin();
}

std::string firstLine(StringRef s) { return s.trim().split('\n').first.str(); }

template <typename T> std::string describe(T t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}
} // namespace

MLIRContext &compileContext(const DialectRegistry &registry) {
  return *compileThread(registry).ctx;
}

void compileVariantModule(ModuleOp module, gpu::GPUModuleOp gm, const PTXOptions &ptx,
                          StringRef ptxasPath, CompiledVariant &out) {
  {
    llvm::raw_string_ostream os(out.ir);
    gm->print(os, OpPrintingFlags().useLocalScope());
  }
  FailureOr<std::string> text = compileToPTX(module, ptx);
  if (failed(text))
    return;
  out.ptx = std::move(*text);
  out.ptxHash = sha256Hex(out.ptx);
  if (!ptxasPath.empty()) {
    llvm::Expected<AssembleResult> asmResult = assemblePtx(ptxasPath, out.ptx, ptx.chip);
    if (!asmResult) {
      out.diagnostics += llvm::toString(asmResult.takeError()) + "\n";
      return;
    }
    out.cubin = std::move(asmResult->cubin);
    for (const auto &entry : asmResult->kernels) {
      out.registers = std::max<int>(out.registers, entry.second.registers);
      out.spills = std::max<int>(out.spills, entry.second.spillStores + entry.second.spillLoads);
    }
  }
  out.ok = true;
}

CompiledVariant compileGpuModule(const DialectRegistry &registry, StringRef text,
                                 const PTXOptions &ptx, StringRef ptxasPath) {
  MLIRContext &ctx = compileContext(registry);
  CompiledVariant out;
  std::string diagText;
  llvm::raw_string_ostream diag(diagText);
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    diag << d.getLocation() << ": " << d.str() << "\n";
    return success();
  });
  Block block;
  OpBuilder b(&ctx);
  OwningOpRef<ModuleOp> module = ModuleOp::create(b.getUnknownLoc());
  // The text may be an LLM's kernel read back from the store: too deep, it would overflow the
  // parser's stack.
  if (findExcessiveNesting(text, kDefaultMaxNesting)) {
    out.diagnostics = llvm::formatv("the module's kernels nest brackets deeper than {0} levels\n",
                                    kDefaultMaxNesting)
                          .str();
    return out;
  }
  if (succeeded(parseSourceString(text, &block, ParserConfig(&ctx))) && !block.empty() &&
      isa<gpu::GPUModuleOp>(block.front())) {
    Operation &gm = block.front();
    gm.remove();
    module->getBody()->push_back(&gm);
    compileVariantModule(*module, cast<gpu::GPUModuleOp>(gm), ptx, ptxasPath, out);
  } else {
    diag << "the module's kernels do not parse as one gpu.module\n";
  }
  out.diagnostics = diagText + out.diagnostics;
  return out;
}

CompiledVariant compileVariant(const DialectRegistry &registry, StringRef source,
                               TaskFamily family, const Genome &genome, const PTXOptions &ptx,
                               StringRef ptxasPath) {
  CompileThread &thread = compileThread(registry);
  MLIRContext &ctx = *thread.ctx;
  CompiledVariant out;
  std::string diagText;
  llvm::raw_string_ostream diag(diagText);
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    diag << d.str() << "\n";
    return success();
  });
  auto done = [&] {
    out.diagnostics = diagText + out.diagnostics;
    return out;
  };
  func::FuncOp task = parsedTask(thread, source);
  if (!task) {
    diag << "the task source does not parse\n";
    return done();
  }
  out.numInputs = task.getNumArguments();
  OpBuilder b(&ctx);
  OwningOpRef<ModuleOp> module = ModuleOp::create(task.getLoc());
  b.setInsertionPointToEnd(module->getBody());
  auto gm = gpu::GPUModuleOp::create(b, task.getLoc(), "variant");
  FailureOr<LoweredTask> lowered = lowerTask(task, genome.knobs, gm, "k0");
  if (failed(lowered))
    return done();
  applyRewrites(gm, genome.rewrites);
  PassManager tidy(&ctx, gpu::GPUModuleOp::getOperationName());
  tidy.addPass(createCanonicalizerPass());
  tidy.addPass(createCSEPass());
  if (failed(tidy.run(gm)))
    return done();
  out.launches = lowered->launches;
  // A tensor map's element type is its source's: a task argument, result or earlier scratch.
  SmallVector<Type> taskBufferTypes(task.getArgumentTypes());
  llvm::append_range(taskBufferTypes, task.getResultTypes());
  for (const BufferDesc &b : lowered->scratch)
    taskBufferTypes.push_back(b.type);
  for (const BufferDesc &b : lowered->scratch) {
    out.scratch.push_back({b.name, llvm::to_vector(b.type.getShape()),
                           elementTypeName(b.type.getElementType()), b.zeroInit});
    if (b.tensorMap && b.tensorMap->source < taskBufferTypes.size()) {
      out.scratch.back().tensorMap = std::make_shared<const TensorMapDesc>(*b.tensorMap);
      out.scratch.back().tensorMapElementType =
          elementTypeName(getElementTypeOrSelf(taskBufferTypes[b.tensorMap->source]));
    }
  }
  compileVariantModule(*module, gm, ptx, ptxasPath, out);
  return done();
}

int64_t ScratchSpec::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

json::Array launchesJson(ArrayRef<KernelLaunch> launches) {
  json::Array out;
  for (const KernelLaunch &l : launches)
    out.push_back(toJSON(l)); // the plan's JSON form (LaunchPlan.h)
  return out;
}

json::Array scratchJson(ArrayRef<ScratchSpec> scratch) {
  json::Array out;
  for (const ScratchSpec &b : scratch) {
    if (b.tensorMap) {
      // The worker request's tensor map entry (WorkerProtocol.h, kRoleTensorMap).
      out.push_back(json::Object{{"name", b.name},
                                 {"role", "tensor_map"},
                                 {"bytes", b.numElements()},
                                 {"tensor_map", toJSON(*b.tensorMap, b.tensorMapElementType)}});
      continue;
    }
    out.push_back(json::Object{{"name", b.name},
                               {"kind", b.elementType},
                               {"elements", b.numElements()},
                               {"zero_init", b.zeroInit}});
  }
  return out;
}

llvm::Expected<CompiledVariant> rebuildCandidate(const RunStore &store, int64_t id,
                                                 const DialectRegistry &registry,
                                                 StringRef taskSource, TaskFamily family,
                                                 const PTXOptions &ptx, StringRef ptxasPath) {
  auto fail = [&](const Twine &msg) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "candidate " + Twine(id) + ": " + msg);
  };
  std::optional<CandidateRecord> c = store.getCandidate(id);
  if (!c)
    return fail("not in the run store");
  CompiledVariant v;
  if (StringRef(c->op).starts_with("llm-")) {
    if (c->parents.empty() || c->ir.empty())
      return fail("an LLM candidate without a parent or IR");
    llvm::Expected<CompiledVariant> parent = rebuildCandidate(
        store, c->parents.front(), registry, taskSource, family, ptx, ptxasPath);
    if (!parent)
      return parent.takeError();
    v = compileLLMVariant(registry, c->ir, VariantInfo::of(*parent), ptx,
                          ptxasPath);
  } else {
    FailureOr<Genome> g = Genome::fromJson(c->knobs, c->rewrites, &compileContext(registry));
    if (failed(g))
      return fail("its genome cannot be read");
    v = compileVariant(registry, taskSource, family, *g, ptx, ptxasPath);
  }
  if (!v.ok)
    return fail("no longer compiles: " + firstLine(v.diagnostics));
  return v;
}

namespace {
/// The reply as a gpu.module in `module`: its own gpu.module (also inside a builtin.module), or
/// the parent's with the reply's gpu.func(s) replacing those of the same names. Null, with
/// `why` set, when the reply is neither.
gpu::GPUModuleOp buildReplyModule(StringRef code, gpu::GPUModuleOp parentModule, ModuleOp module,
                                  std::string &why) {
  MLIRContext *ctx = module.getContext();
  // MLIR's parser recurses once per nesting level: deeply nested text would overflow the stack.
  if (std::optional<size_t> at = findExcessiveNesting(code, kDefaultMaxNesting)) {
    StringRef before = code.take_front(*at);
    size_t line = before.count('\n') + 1;
    size_t column = *at - (before.rfind('\n') == StringRef::npos ? 0 : before.rfind('\n') + 1) + 1;
    why = llvm::formatv("the code nests brackets deeper than {0} levels (line {1}, column "
                        "{2}): it is not parsed",
                        kDefaultMaxNesting, line, column)
              .str();
    return nullptr;
  }
  // A gpu.func verifies only inside a gpu.module: a reply of gpu.func(s) alone is parsed again
  // inside one, opened on its first line so that line numbers stay the reply's.
  bool onlyFuncs;
  {
    Block unverified;
    if (failed(
            parseSourceString(code, &unverified, ParserConfig(ctx, /*verifyAfterParse=*/false)))) {
      why = "the code does not parse as MLIR";
      return nullptr;
    }
    onlyFuncs = !unverified.empty() && llvm::all_of(unverified, [](Operation &op) {
      return op.getName().getStringRef() == gpu::GPUFuncOp::getOperationName();
    });
  }
  Block replyBlock;
  std::string text = onlyFuncs ? ("gpu.module @evo_reply { " + code + "\n}").str() : code.str();
  if (failed(parseSourceString(text, &replyBlock, ParserConfig(ctx)))) {
    why = "the code does not parse as MLIR";
    return nullptr;
  }
  Block *top = onlyFuncs ? cast<gpu::GPUModuleOp>(replyBlock.front()).getBody() : &replyBlock;
  gpu::GPUModuleOp replyModule;
  SmallVector<gpu::GPUFuncOp> replyFuncs;
  for (Operation &op : *top) {
    if (onlyFuncs && op.hasTrait<OpTrait::IsTerminator>())
      continue;
    if (auto m = dyn_cast<gpu::GPUModuleOp>(op)) {
      if (replyModule)
        return why = "the reply holds more than one gpu.module", nullptr;
      replyModule = m;
    } else if (auto m = dyn_cast<ModuleOp>(op)) {
      for (auto g : m.getOps<gpu::GPUModuleOp>()) {
        if (replyModule)
          return why = "the reply holds more than one gpu.module", nullptr;
        replyModule = g;
      }
      for (Operation &inner : m.getBody()->getOperations())
        if (!isa<gpu::GPUModuleOp>(inner))
          return why = llvm::formatv("'{0}' outside the gpu.module: only device code is accepted",
                                     inner.getName().getStringRef())
                           .str(),
                 nullptr;
    } else if (auto f = dyn_cast<gpu::GPUFuncOp>(op)) {
      replyFuncs.push_back(f);
    } else {
      return why = llvm::formatv("'{0}' at the top level: send a gpu.module or gpu.func(s)",
                                 op.getName().getStringRef())
                       .str(),
             nullptr;
    }
  }
  if (!replyModule && replyFuncs.empty())
    return why = "the reply holds no gpu.module and no gpu.func", nullptr;
  if (replyModule && !replyFuncs.empty())
    return why = "send either a gpu.module or gpu.func(s), not both", nullptr;

  OpBuilder b(ctx);
  b.setInsertionPointToEnd(module.getBody());
  gpu::GPUModuleOp gm;
  if (replyModule) {
    gm = cast<gpu::GPUModuleOp>(b.clone(*replyModule));
    gm.setName(parentModule.getName());
  } else {
    gm = cast<gpu::GPUModuleOp>(b.clone(*parentModule));
    for (gpu::GPUFuncOp f : replyFuncs) {
      if (auto old = gm.lookupSymbol<gpu::GPUFuncOp>(f.getName()))
        old.erase();
      b.setInsertionPointToEnd(gm.getBody()); // a gpu.module has no terminator
      b.clone(*f);
    }
  }
  // Attributes a gpu.module may carry from the lowering are not the reply's business.
  gm->removeAttr("evo.plan");
  return gm;
}

/// The launch configuration a kernel's `evo.launch` asks for, applied to `launches`; the block
/// size the kernel is launched with is returned in `block`. "" or why it is refused.
std::string applyLaunchOverride(gpu::GPUFuncOp k, StringRef name,
                                SmallVectorImpl<KernelLaunch> &launches,
                                std::optional<std::array<int64_t, 3>> &block) {
  Attribute a = k->getAttr("evo.launch");
  if (!a)
    return "";
  auto d = dyn_cast<DictionaryAttr>(a);
  auto grid = d ? d.getAs<DenseI64ArrayAttr>("grid") : DenseI64ArrayAttr();
  auto blk = d ? d.getAs<DenseI64ArrayAttr>("block") : DenseI64ArrayAttr();
  auto smem = d ? d.getAs<IntegerAttr>("dynamic_shared_memory") : IntegerAttr();
  auto valid3 = [](DenseI64ArrayAttr x, int64_t limit) {
    return x && x.size() == 3 &&
           llvm::all_of(x.asArrayRef(), [&](int64_t v) { return v >= 1 && v <= limit; });
  };
  if (!valid3(grid, 2147483647) || !valid3(blk, 1024) || blk[0] * blk[1] * blk[2] > 1024 ||
      (smem && (smem.getInt() < 0 || smem.getInt() > 232448)))
    return llvm::formatv("kernel @{0}: evo.launch must be {{grid = array<i64: x, y, z>, "
                         "block = array<i64: x, y, z>} with at most 1024 threads",
                         name)
        .str();
  for (KernelLaunch &l : launches)
    if (l.kernel == name) {
      l.grid = {grid[0], grid[1], grid[2]};
      l.block = {blk[0], blk[1], blk[2]};
      l.dynamicSharedMemory = smem ? smem.getInt() : 0;
    }
  block = std::array<int64_t, 3>{blk[0], blk[1], blk[2]};
  return "";
}

/// The contract between the reply's kernels and the parent's: every parent kernel, same name,
/// signature and launch configuration (unless `evo.launch` changes it, which updates
/// `launches`); no other kernels. "" or why not.
std::string checkKernelsAgainstParent(gpu::GPUModuleOp parentModule, gpu::GPUModuleOp gm,
                                      SmallVectorImpl<KernelLaunch> &launches) {
  llvm::StringSet<> parentKernels;
  for (auto pk : parentModule.getOps<gpu::GPUFuncOp>()) {
    if (!pk.isKernel())
      continue;
    parentKernels.insert(pk.getName());
    auto k = gm.lookupSymbol<gpu::GPUFuncOp>(pk.getName());
    if (!k)
      return llvm::formatv("kernel @{0} is missing (keep every kernel's name)", pk.getName())
          .str();
    if (!k.isKernel())
      return llvm::formatv("@{0} must keep the `kernel` attribute", pk.getName()).str();
    if (k.getFunctionType() != pk.getFunctionType())
      return llvm::formatv("kernel @{0} must keep its signature {1}, got {2}", pk.getName(),
                           describe(pk.getFunctionType()), describe(k.getFunctionType()))
          .str();
    // The launch configuration: the parent's, unless the kernel says otherwise with
    // evo.launch = {grid = array<i64: x, y, z>, block = array<i64: x, y, z>[, dynamic_shared_memory = n]}.
    std::optional<std::array<int64_t, 3>> block;
    for (const KernelLaunch &l : launches)
      if (l.kernel == pk.getName())
        block = l.block;
    if (std::string why = applyLaunchOverride(k, pk.getName(), launches, block); !why.empty())
      return why;
    if (DenseI32ArrayAttr known = k.getKnownBlockSizeAttr(); known && block &&
        (known.size() != 3 || known[0] != (*block)[0] || known[1] != (*block)[1] ||
         known[2] != (*block)[2]))
      return llvm::formatv("kernel @{0}: known_block_size {1} differs from the launch's "
                           "block [{2}, {3}, {4}]",
                           pk.getName(), describe(Attribute(known)), (*block)[0], (*block)[1],
                           (*block)[2])
          .str();
    // The knobs it was lowered with no longer describe it.
    k->removeAttr("evo.knobs");
  }
  for (auto k : gm.getOps<gpu::GPUFuncOp>())
    if (k.isKernel() && !parentKernels.contains(k.getName()))
      return llvm::formatv("unexpected kernel @{0}: the launch plan only launches {1}",
                           k.getName(), parentKernels.size())
          .str();
  return "";
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

  OwningOpRef<ModuleOp> module = ModuleOp::create(UnknownLoc::get(&ctx));
  std::string why;
  gpu::GPUModuleOp gm = buildReplyModule(code, parentModule, *module, why);
  if (!gm)
    return fail(why);
  if (why = checkKernelsAgainstParent(parentModule, gm, out.launches); !why.empty())
    return fail(why);
  if (failed(verify(*module)))
    return fail("the code does not verify");
  // No state across launches, no clocks, nothing that bypasses the contract.
  if (why = checkDeviceCode(gm, out.launches, parent.numInputs); !why.empty())
    return fail(why);
  compileVariantModule(*module, gm, ptx, ptxasPath, out);
  if (!out.ok)
    return fail("the code does not compile to PTX" +
                (out.diagnostics.empty() ? "" : ": " + out.diagnostics));
  return out;
}

} // namespace evo
