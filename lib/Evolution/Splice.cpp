//===- Splice.cpp - a task's winner into the function's gpu.module ---------------===//
//
// The winner's gpu.module replaces the task's kernels and launches in the function's gpu.module
// and plan, with every symbol its kernels use (device helpers, constant tables), renamed where
// a name is taken; everything carried is tagged with the task so a later splice of the same task
// removes it first. Also the inverse view the final check needs: one task's plan, isolated.
// docs/evolution.md, "The splice".
//
//===----------------------------------------------------------------------===//

#include "EvolveSteps.h"
#include "evo/Conversion/LowerToGPU.h"
#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringSet.h"
#include <map>

using namespace mlir;
namespace json = llvm::json;

namespace evo {

namespace {
/// Drops task `t`'s own scratch buffers (beyond its `numTaskBuffers` arguments and results);
/// the buffers after them move down.
void dropTaskScratch(LaunchPlan &plan, unsigned t, unsigned numTaskBuffers) {
  TaskDesc &old = plan.tasks[t];
  llvm::SmallDenseSet<unsigned> dropped(old.buffers.begin() + numTaskBuffers, old.buffers.end());
  if (dropped.empty())
    return;
  SmallVector<unsigned> newIndex(plan.buffers.size());
  SmallVector<BufferDesc, 2> kept;
  for (unsigned i = 0; i < plan.buffers.size(); ++i) {
    newIndex[i] = kept.size();
    if (!dropped.count(i))
      kept.push_back(plan.buffers[i]);
  }
  plan.buffers = std::move(kept);
  old.buffers.resize(numTaskBuffers);
  for (TaskDesc &d : plan.tasks)
    for (unsigned &b : d.buffers)
      b = newIndex[b];
  for (KernelLaunch &l : plan.launches)
    if (l.task != t)
      for (unsigned &a : l.args)
        a = newIndex[a];
  for (BufferDesc &b : plan.buffers)
    if (b.tensorMap)
      b.tensorMap->source = newIndex[b.tensorMap->source];
}
} // namespace

/// Replaces task `t`'s kernels and launches in `gm`/`plan` with the winner's.
LogicalResult spliceWinner(gpu::GPUModuleOp gm, LaunchPlan &plan, unsigned t,
                           const TaskResult &winner, unsigned numTaskBuffers) {
  MLIRContext *ctx = gm.getContext();
  Block scratchBlock;
  if (failed(parseSourceString(winner.bestIr, &scratchBlock, ParserConfig(ctx))))
    return gm.emitError("evo-evolve: the winner's IR does not parse");
  auto winnerModule = dyn_cast<gpu::GPUModuleOp>(&scratchBlock.front());
  if (!winnerModule)
    return gm.emitError("evo-evolve: the winner's IR is not a gpu.module");

  // The task's own scratch (the old lowering's, beyond its arguments and results) goes away;
  // the buffers after it move down.
  dropTaskScratch(plan, t, numTaskBuffers);
  TaskDesc &desc = plan.tasks[t];
  SmallVector<unsigned> bufferOf(desc.buffers.begin(), desc.buffers.begin() + numTaskBuffers);
  for (const ScratchSpec &s : winner.bestScratch) {
    Type elt = parseType(s.elementType, ctx);
    if (!elt)
      return gm.emitError() << "evo-evolve: bad scratch element type '" << s.elementType << "'";
    std::string name = "tmp" + std::to_string(plan.buffers.size());
    while (llvm::any_of(plan.buffers, [&](const BufferDesc &d) { return d.name == name; }))
      name += "_";
    BufferDesc b{name, BufferRole::Scratch, MemRefType::get(s.shape, elt), s.zeroInit};
    if (s.tensorMap) {
      b.role = BufferRole::TensorMap;
      b.tensorMap = *s.tensorMap; // its source is task-local until every buffer has its index
    }
    plan.buffers.push_back(b);
    bufferOf.push_back(plan.buffers.size() - 1);
    desc.buffers.push_back(plan.buffers.size() - 1);
  }
  for (unsigned i : ArrayRef<unsigned>(bufferOf).drop_front(numTaskBuffers)) {
    std::optional<TensorMapDesc> &m = plan.buffers[i].tensorMap;
    if (!m)
      continue;
    if (m->source >= bufferOf.size())
      return gm.emitError() << "evo-evolve: the winner's tensor map names task buffer "
                            << m->source;
    m->source = bufferOf[m->source];
  }
  // Drop the task's old kernels and launches, remembering where they were and the first name.
  size_t insertAt = plan.launches.size();
  std::string firstName;
  for (size_t i = 0; i < plan.launches.size();) {
    if (plan.launches[i].task != t) {
      ++i;
      continue;
    }
    insertAt = std::min(insertAt, i);
    if (firstName.empty())
      firstName = plan.launches[i].kernel;
    if (auto k = gm.lookupSymbol<gpu::GPUFuncOp>(plan.launches[i].kernel))
      k.erase();
    plan.launches.erase(plan.launches.begin() + i);
  }
  // What an earlier splice of this task carried besides kernels (helpers, constant tables) goes
  // too: everything the task owns is tagged with its index.
  for (Operation &op : llvm::make_early_inc_range(gm.getBody()->getOperations()))
    if (auto tag = op.getAttrOfType<IntegerAttr>(kTaskAttrName);
        tag && tag.getInt() == t && isa<SymbolOpInterface>(op))
      op.erase();
  // Every symbol of the winner's module comes along, not only its kernels: device helpers and
  // constant tables (`memref.global constant`) that the kernels use. Kernels take the task's
  // names (variants name them k0, k0_combine, ...); a name already taken in `gm` gets a fresh
  // one, and the winner's own references follow every rename.
  Builder b(ctx);
  SymbolTable winnerSymbols(winnerModule);
  SmallVector<Operation *> carried;
  llvm::StringSet<> taken;
  for (Operation &op : gm.getBody()->getOperations())
    if (auto s = dyn_cast<SymbolOpInterface>(op))
      taken.insert(s.getName());
  for (Operation &op : winnerModule.getBody()->getOperations())
    if (isa<SymbolOpInterface>(op))
      carried.push_back(&op);
  // First to names no symbol of either module has (so renames never collide), then to the
  // final ones.
  std::vector<std::string> wanted;
  std::string temp = "__evo_splice_";
  for (Operation *op : carried)
    wanted.push_back(cast<SymbolOpInterface>(op).getName().str());
  while (llvm::any_of(wanted, [&](StringRef w) { return w.starts_with(temp); }))
    temp += "_";
  for (auto [i, op] : llvm::enumerate(carried)) {
    if (failed(winnerSymbols.rename(op, b.getStringAttr(temp + std::to_string(i)))))
      return gm.emitError("evo-evolve: the winner's symbols cannot be renamed");
  }
  std::map<std::string, std::string> renamed;
  for (auto [i, op] : llvm::enumerate(carried)) {
    std::string name = wanted[i];
    if (isa<gpu::GPUFuncOp>(op) && !firstName.empty() && StringRef(name).starts_with("k0"))
      name = firstName + name.substr(2);
    std::string unique = name;
    for (unsigned n = 0; taken.contains(unique); ++n)
      unique = name + "_" + std::to_string(n);
    taken.insert(unique);
    if (failed(winnerSymbols.rename(op, b.getStringAttr(unique))))
      return gm.emitError("evo-evolve: the winner's symbols cannot be renamed");
    renamed[wanted[i]] = unique;
  }
  for (Operation *op : carried) {
    op->remove();
    op->setAttr(kTaskAttrName, b.getI64IntegerAttr(t));
    gm.getBody()->push_back(op);
  }
  std::vector<KernelLaunch> launches;
  for (KernelLaunch l : winner.bestLaunches) {
    l.kernel = renamed[l.kernel];
    l.task = t;
    for (unsigned &a : l.args)
      a = bufferOf[a];
    launches.push_back(l);
  }
  plan.launches.insert(plan.launches.begin() + insertAt, launches.begin(), launches.end());
  // Variants are compiled on the task's own buffers: a result the function returns through a
  // reshape (written in place) is an output buffer of another shape here.
  for (const KernelLaunch &l : launches)
    if (auto k = gm.lookupSymbol<gpu::GPUFuncOp>(l.kernel))
      viewReshapedParams(k, l.args, plan);
  std::string err;
  ScheduleKnobs knobs;
  if (llvm::Expected<json::Value> v = json::parse(winner.bestKnobs))
    (void)knobs.mergeJson(*v->getAsObject(), &err);
  else
    llvm::consumeError(v.takeError());
  desc.knobs = knobs.toAttr(ctx, desc.family);
  return success();
}

FailureOr<LaunchPlan> isolateTaskPlan(const LaunchPlan &fp, const SplicedTask &s) {
  if (!s.func || s.index >= fp.tasks.size())
    return failure();
  func::FuncOp f = s.func;
  LaunchPlan tp;
  tp.funcName = f.getSymName().str();
  tp.source = s.source;
  std::map<unsigned, unsigned> local;
  for (auto [i, buf] : llvm::enumerate(fp.tasks[s.index].buffers)) {
    BufferDesc d = fp.buffers[buf];
    d.role = i < f.getNumArguments()  ? BufferRole::Input
             : i < s.numTaskBuffers ? BufferRole::Output
             : d.tensorMap          ? BufferRole::TensorMap
                                    : BufferRole::Scratch;
    local[buf] = tp.buffers.size();
    tp.buffers.push_back(d);
  }
  for (BufferDesc &d : tp.buffers)
    if (d.tensorMap) {
      auto it = local.find(d.tensorMap->source);
      if (it == local.end())
        return failure();
      d.tensorMap->source = it->second;
    }
  for (KernelLaunch l : fp.launches) {
    if (l.task != s.index)
      continue;
    for (unsigned &a : l.args) {
      auto it = local.find(a);
      if (it == local.end())
        return failure();
      a = it->second;
    }
    l.task = 0;
    tp.launches.push_back(std::move(l));
  }
  return tp;
}

} // namespace evo
