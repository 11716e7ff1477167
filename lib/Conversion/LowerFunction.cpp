//===- LowerFunction.cpp - preprocessing, task partition, composition -------===//

#include "Emitters.h"
#include "TaskAnalysis.h"
#include "evo/Dialect/Evo/IR/InputChecks.h"
#include "evo/Conversion/FrontEnds.h"
#include "evo/Conversion/LowerToGPU.h"
#include "evo/Conversion/ScalarArguments.h"
#include "evo/Conversion/ScanForm.h"
#include "evo/Conversion/TuningDB.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/Passes.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/FormatVariadic.h"

#define DEBUG_TYPE "evo-lower-to-gpu"

using namespace mlir;
namespace json = llvm::json;

namespace evo {

std::string printSource(Operation *op) {
  std::string s;
  llvm::raw_string_ostream os(s);
  op->print(os, OpPrintingFlags().useLocalScope());
  return s;
}

static_assert(kMaxKernelConstantBytes == 1 << 20, "LowerOptions::inlineConstantBytes's cap");

/// Replaces each `arith.constant dense_resource<...>` whose blob is present and at most
/// `maxBytes` by the same constant written inline.
static void inlineResourceConstants(func::FuncOp func, int64_t maxBytes) {
  func.walk([&](arith::ConstantOp c) {
    auto res = dyn_cast<DenseResourceElementsAttr>(c.getValue());
    if (!res)
      return;
    AsmResourceBlob *blob = res.getRawHandle().getBlob();
    bool splat = false;
    if (!blob || blob->getData().size() > static_cast<size_t>(maxBytes) ||
        !DenseElementsAttr::isValidRawBuffer(res.getType(), blob->getData(), splat))
      return;
    c.setValueAttr(cast<TypedAttr>(DenseElementsAttr::getFromRawBuffer(res.getType(), blob->getData())));
  });
}

/// A constant of the input function turned into a trailing argument of the work function.
struct LiftedConstant {
  std::string global;
  ElementsAttr value;
  Location loc;
};

/// Whether constant `c` is too large for the kernels (more than `maxBytes`; a dense_resource
/// still here is one, or has no blob) and of a type a buffer can hold.
static bool isLiftable(arith::ConstantOp c, int64_t maxBytes) {
  auto type = dyn_cast<RankedTensorType>(c.getType());
  if (!type || !type.hasStaticShape() || !type.getElementType().isIntOrFloat() ||
      failed(checkBufferType(MemRefType::get(type.getShape(), type.getElementType()),
                             [] { return InFlightDiagnostic(); })))
    return false;
  // A returned constant keeps its own diagnostic (every result is computed by a linalg op).
  if (llvm::any_of(c->getUsers(), [](Operation *u) { return isa<func::ReturnOp>(u); }))
    return false;
  if (isa<DenseResourceElementsAttr>(c.getValue()))
    return true;
  auto dense = dyn_cast<DenseElementsAttr>(c.getValue());
  int64_t elementBytes = (type.getElementTypeBitWidth() + 7) / 8;
  return dense && !dense.isSplat() && type.getNumElements() * elementBytes > maxBytes;
}

/// Replaces each constant of `work` that the kernels cannot hold by a new trailing argument;
/// returns them in argument order, each with the name of the memref.global that will hold its
/// value (unique in `parent`).
static SmallVector<LiftedConstant> liftLargeConstants(func::FuncOp work, int64_t maxBytes,
                                                     ModuleOp parent) {
  SmallVector<arith::ConstantOp> found;
  work.walk([&](arith::ConstantOp c) {
    if (isLiftable(c, maxBytes))
      found.push_back(c);
  });
  SmallVector<LiftedConstant> lifted;
  llvm::StringSet<> taken;
  for (arith::ConstantOp c : found) {
    std::string name;
    for (unsigned n = lifted.size();; ++n) {
      name = (work.getSymName() + "_const" + Twine(n)).str();
      if (!SymbolTable::lookupSymbolIn(parent, name) && taken.insert(name).second)
        break;
    }
    (void)work.insertArgument(work.getNumArguments(), c.getType(), DictionaryAttr(), c.getLoc());
    c.replaceAllUsesWith(work.getArgument(work.getNumArguments() - 1));
    lifted.push_back({name, cast<ElementsAttr>(c.getValue()), c.getLoc()});
    c.erase();
  }
  return lifted;
}

/// The plan buffers of the lifted constants (the last arguments of the work function, whose
/// buffers are numbered as the arguments) become constant buffers.
static void markConstantBuffers(LaunchPlan &plan, ArrayRef<LiftedConstant> lifted,
                                unsigned numArgs) {
  for (auto [k, c] : llvm::enumerate(lifted)) {
    BufferDesc &b = plan.buffers[numArgs - lifted.size() + k];
    assert(b.role == BufferRole::Input && "a lifted constant's buffer is an argument's");
    b.role = BufferRole::Constant;
    b.name = "const" + std::to_string(k);
    b.global = c.global;
  }
}

/// An identity-map copy of `v` into a new tensor: a task that materializes a view.
static Value copyOf(OpBuilder &b, Location loc, Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  Value init = tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  AffineMap id = b.getMultiDimIdentityMap(type.getRank());
  SmallVector<utils::IteratorType> iters(type.getRank(), utils::IteratorType::parallel);
  auto copy = linalg::GenericOp::create(
      b, loc, TypeRange{type}, ValueRange{v}, ValueRange{init}, ArrayRef<AffineMap>{id, id}, iters,
      [](OpBuilder &nb, Location l, ValueRange args) { linalg::YieldOp::create(nb, l, args[0]); });
  return copy->getResult(0);
}

/// A returned tensor.collapse_shape or expand_shape (its only use) of a linalg op's result used
/// only by it: the op writes its result straight into the output buffer (a reshape of a
/// contiguous tensor keeps every element at its offset, and kernels take bare pointers), so no
/// copy materializes the view. Returns that result, or null.
static Value aliasedViewSource(Operation *view) {
  if (!isa_and_nonnull<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(view) ||
      !view->hasOneUse() || !isa<func::ReturnOp>(*view->getUsers().begin()))
    return {};
  Value src = view->getOperand(0);
  Operation *def = src.getDefiningOp();
  auto type = dyn_cast<RankedTensorType>(src.getType());
  if (!def || !isa<linalg::LinalgOp, linalg::SoftmaxOp>(def) || isCheapProducer(def) ||
      !src.hasOneUse() || !type || !type.hasStaticShape())
    return {};
  return src;
}

/// Views (isViewOp) are read through by the kernels of the ops that use them. Where a value must
/// exist in memory — a returned view, a softmax's input — a copy materializes it (except a
/// returned reshape its producer can write in place: aliasedViewSource).
static LogicalResult materializeViews(func::FuncOp func) {
  SmallVector<Operation *> views;
  func.walk([&](Operation *op) {
    if (isViewOp(op))
      views.push_back(op);
  });
  for (Operation *view : views) {
    if (failed(checkViewOp(view)))
      return failure();
    for (OpOperand &use : llvm::make_early_inc_range(view->getResult(0).getUses())) {
      Operation *user = use.getOwner();
      if (isa<linalg::LinalgOp>(user) || isViewOp(user) ||
          (isa<func::ReturnOp>(user) && aliasedViewSource(view)))
        continue;
      OpBuilder b(user);
      use.set(copyOf(b, view->getLoc(), view->getResult(0)));
    }
  }
  return success();
}

LogicalResult preprocessFunction(func::FuncOp func, bool fuse) {
  MLIRContext *ctx = func.getContext();
  if (failed(concatToGenerics(func)))
    return failure();
  // Elementwise arith/math written directly on tensors becomes linalg.generic.
  PassManager pm(ctx, func::FuncOp::getOperationName());
  pm.addPass(createConvertElementwiseToLinalgPass());
  if (failed(pm.run(func)))
    return failure();

  // Named elementwise and reduction ops become generics (so that they fuse); contractions,
  // convolutions and fills stay named: they keep their identity in task sources and reports.
  IRRewriter rewriter(ctx);
  SmallVector<linalg::LinalgOp> toGeneralize;
  func.walk([&](linalg::LinalgOp op) {
    if (isa<linalg::GenericOp, linalg::FillOp>(op) || linalg::isaContractionOpInterface(op) ||
        linalg::isaConvolutionOpInterface(op))
      return;
    toGeneralize.push_back(op);
  });
  for (linalg::LinalgOp op : toGeneralize) {
    Attribute knobs = op->getAttr(kOpKnobsAttrName);
    rewriter.setInsertionPoint(op);
    FailureOr<linalg::GenericOp> generic = linalg::generalizeNamedOp(rewriter, op);
    if (failed(generic))
      return op.emitError("evo-lower-to-gpu: cannot generalize this op");
    if (knobs)
      (*generic)->setAttr(kOpKnobsAttrName, knobs);
  }
  if (!fuse)
    return materializeViews(func);

  // An op carrying its own knobs keeps its identity: fusing it would make its knobs ambiguous.
  linalg::ControlFusionFn control = [](OpOperand *fused) {
    Operation *producer = fused->get().getDefiningOp();
    Operation *consumer = fused->getOwner();
    return producer && !producer->hasAttr(kOpKnobsAttrName) &&
           !consumer->hasAttr(kOpKnobsAttrName);
  };
  RewritePatternSet patterns(ctx);
  linalg::populateElementwiseOpsFusionPatterns(patterns, control);
  // An elementwise op reading an elementwise op's result through a tensor.collapse_shape (as
  // torch-mlir writes GroupNorm's affine after the normalisation of [N, G, C/G, ...]): the
  // consumer is expanded to the producer's shape, its other operands reshaped to match and
  // its result collapsed, so that the two fuse (no tensor stored between them).
  linalg::ControlFusionFn reshapeControl = [&](OpOperand *fused) {
    auto collapse = fused->get().getDefiningOp<tensor::CollapseShapeOp>();
    auto consumer = dyn_cast<linalg::GenericOp>(fused->getOwner());
    auto producer =
        collapse ? collapse.getSrc().getDefiningOp<linalg::GenericOp>() : linalg::GenericOp();
    auto elementwise = [](linalg::GenericOp g) {
      return g && g.getNumLoops() == g.getNumParallelLoops() && g.getNumDpsInits() == 1;
    };
    return elementwise(consumer) && elementwise(producer) && collapse->hasOneUse() &&
           producer->hasOneUse() && control(fused) &&
           !producer->hasAttr(kOpKnobsAttrName);
  };
  linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, reshapeControl);
  if (failed(applyPatternsGreedily(func, std::move(patterns))))
    return failure();
  return materializeViews(func);
}

static LogicalResult checkTensorType(Type t, function_ref<InFlightDiagnostic()> emitError,
                                     StringRef what) {
  if (!isa<RankedTensorType>(t))
    return emitError() << "evo-lower-to-gpu supports only tensor " << what << "s"
                       << (what == "argument" ? " and scalar arguments (f16, bf16, f32, f64, "
                                                "integers up to 64 bits)"
                                              : "")
                       << ", got " << t;
  // Shapes, encodings, sizes and element types (InputChecks.h), then what the lowering adds.
  if (failed(checkBufferType(t, [&] { return emitError() << "evo-lower-to-gpu "; })))
    return failure();
  // What the kernels can compute on: NVPTX has no f80/f128 arithmetic (LLVM aborts) and the
  // GPU lowering none for f8/tf32. i1 is a byte holding 0 or 1 in memory (torch.bool's layout,
  // and LLVM's for a scalar i1 load or store; vector accesses to it are refused).
  Type elt = cast<RankedTensorType>(t).getElementType();
  if (!isScalarArgumentType(elt))
    return emitError()
           << "evo-lower-to-gpu supports f16, bf16, f32, f64, i1 (a byte per element) and "
              "integers up to 64 bits, got "
           << elt;
  return success();
}
static LogicalResult checkTensorType(Type t, Operation *where, StringRef what) {
  return checkTensorType(t, [&] { return where->emitError(); }, what);
}

/// A function argument: a tensor, or a scalar (an int or float, passed to kernels by value;
/// ScalarArguments.h). Diagnosed at the argument.
static LogicalResult checkArgument(BlockArgument arg) {
  auto emitHere = [&] { return emitError(arg.getLoc()); };
  Type t = arg.getType();
  if (t.isIntOrIndexOrFloat())
    return checkScalarArgumentType(t, [&] { return emitHere() << "evo-lower-to-gpu "; });
  return checkTensorType(t, emitHere, "argument");
}

namespace {
/// Splits a preprocessed function into tasks and lowers each into one gpu.module.
class FunctionLowering {
public:
  /// `scalarArgs`: the arguments of `work` that are scalars of the input function (0-d tensors
  /// in `work`, by-value buffers of the plan, scalars again in task funcs).
  FunctionLowering(func::FuncOp work, const LowerOptions &options, ModuleOp scratch,
                   ArrayRef<unsigned> scalarArgs)
      : work(work), options(options), scratch(scratch), builder(work.getContext()),
        scalarArgs(scalarArgs) {}

  FailureOr<LaunchPlan> run(gpu::GPUModuleOp kernels);

private:
  unsigned bufferFor(Value v, BufferRole role, StringRef name);
  void formEpilogues(bool reductions);
  /// A task func holding `ops` (in order) and returning `results` (default: the last op's
  /// results); its arguments (values of `work`) in `operands`. With `probe`, operands need no
  /// buffer yet (the func is only matched, then erased).
  FailureOr<func::FuncOp> extractTask(ArrayRef<Operation *> ops, unsigned index,
                                      SmallVectorImpl<Value> &operands,
                                      ArrayRef<Value> results = {}, bool probe = false);
  /// Row groups: runs of consecutive ops that together form a row program (matchRowProgram),
  /// keyed by their first op, with the values they define that are used after them.
  void formRowGroups();
  std::optional<SmallVector<Value>> rowGroupOutputs(ArrayRef<Operation *> group);
  LogicalResult addTask(func::FuncOp task, const ScheduleKnobs &knobs,
                        ArrayRef<Value> operands, ValueRange results, gpu::GPUModuleOp kernels);
  bool isRowProgram();
  /// Task arguments bound to by-value buffers become scalars again (tensorsToScalarArguments).
  LogicalResult restoreScalars(func::FuncOp task, ArrayRef<Value> operands);
  void cloneProducers(Value v, OpBuilder &b, IRMapping &map);

  func::FuncOp work;
  const LowerOptions &options;
  unsigned kernelIndex = 0;
  ModuleOp scratch;
  OpBuilder builder;
  ArrayRef<unsigned> scalarArgs;
  LaunchPlan plan;
  DenseMap<Value, unsigned> buffers;
  unsigned numScratch = 0;
  /// Contractions with an epilogue: the chain (contraction first), keyed by its last op, where
  /// the task is formed (every operand of the chain is available there); its other ops skipped.
  DenseMap<Operation *, SmallVector<Operation *>> chains;
  llvm::SmallPtrSet<Operation *, 8> inChain;
  DenseMap<Operation *, std::pair<SmallVector<Operation *>, SmallVector<Value>>> rowGroups;
  llvm::SmallPtrSet<Operation *, 8> inRowGroup;
};
} // namespace

unsigned FunctionLowering::bufferFor(Value v, BufferRole role, StringRef name) {
  auto it = buffers.find(v);
  if (it != buffers.end())
    return it->second;
  auto tensor = cast<RankedTensorType>(v.getType());
  plan.buffers.push_back(
      {name.str(), role, MemRefType::get(tensor.getShape(), tensor.getElementType())});
  buffers[v] = plan.buffers.size() - 1;
  return plan.buffers.size() - 1;
}

LogicalResult FunctionLowering::restoreScalars(func::FuncOp task, ArrayRef<Value> operands) {
  SmallVector<unsigned> scalars;
  for (auto [i, v] : llvm::enumerate(operands))
    if (auto it = buffers.find(v); it != buffers.end() && plan.buffers[it->second].byValue)
      scalars.push_back(i);
  return tensorsToScalarArguments(task, scalars);
}

void FunctionLowering::cloneProducers(Value v, OpBuilder &b, IRMapping &map) {
  if (map.contains(v))
    return;
  Operation *def = v.getDefiningOp();
  for (Value operand : def->getOperands())
    cloneProducers(operand, b, map);
  // A pad's region may yield a constant defined above it.
  llvm::SetVector<Value> captured;
  getUsedValuesDefinedAbove(def->getRegions(), captured);
  for (Value c : captured)
    cloneProducers(c, b, map);
  b.clone(*def, map);
}

/// Whether `op` belongs to the matmul family (a contraction or a convolution seen as an
/// implicit GEMM), whose emitters apply epilogues.
static bool isMatmulFamily(Operation *op) {
  auto l = dyn_cast<linalg::LinalgOp>(op);
  return l && l.getNumReductionLoops() > 0 && l->getNumResults() == 1 &&
         (linalg::isaContractionOpInterface(l) || gemmView(l));
}

/// Whether `op` is a one-result reduction of the reduction family (not a contraction, a
/// convolution or a scan), whose emitter applies epilogues too: a sum then a division by the
/// window (average pooling, a mean) is one kernel.
static bool isPlainReduction(Operation *op) {
  auto l = dyn_cast<linalg::LinalgOp>(op);
  if (!l || l.getNumReductionLoops() == 0 || l->getNumResults() != 1 || isMatmulFamily(op))
    return false;
  auto g = dyn_cast<linalg::GenericOp>(op);
  return !g || !matchScan(g);
}

void FunctionLowering::formEpilogues(bool reductions) {
  // Elementwise consumers of a contraction's (or, with `reductions`, a reduction's) result,
  // where that result has no other use, are applied to each output element in its kernel: one
  // task and one kernel, no scratch buffer. Chains fuse step by step. Ops carrying their own
  // knobs keep their own kernels (as with elementwise fusion); the producer's knobs become the
  // task's. Reductions come after the row groups, which may hold a reduction and its consumer;
  // a reduction with its own knobs keeps its own kernel (its knobs name the reduction's
  // schedule, and with its consumer it could become a row program, which has other knobs).
  if (!options.fuseElementwise)
    return;
  for (Operation &op : work.getBody().front().without_terminator()) {
    if (reductions ? !isPlainReduction(&op) || inRowGroup.contains(&op) ||
                         op.hasAttr(kOpKnobsAttrName)
                   : !isMatmulFamily(&op))
      continue;
    SmallVector<Operation *> chain{&op};
    Value prev = op.getResult(0);
    while (!prev.use_empty()) {
      auto g = dyn_cast<linalg::GenericOp>(*prev.getUsers().begin());
      if (!g || g->hasAttr(kOpKnobsAttrName) || inRowGroup.contains(g) ||
          !isEpilogueConsumer(g, prev))
        break;
      chain.push_back(g);
      prev = g->getResult(0);
    }
    if (chain.size() < 2)
      continue;
    for (Operation *c : ArrayRef(chain).drop_back())
      inChain.insert(c);
    chains[chain.back()] = std::move(chain);
  }
}

FailureOr<func::FuncOp> FunctionLowering::extractTask(ArrayRef<Operation *> ops, unsigned index,
                                                      SmallVectorImpl<Value> &operands,
                                                      ArrayRef<Value> resultValues, bool probe) {
  // Arguments: every operand that is not a cheap producer or a value of the chain, once, in
  // operand order.
  // A view is cloned into the task with the ops that read it; what it views is the argument.
  llvm::SmallPtrSet<Operation *, 4> members(ops.begin(), ops.end());
  auto internal = [&](Value v) {
    Operation *def = v.getDefiningOp();
    return def && (isCheapProducer(def) || members.contains(def));
  };
  llvm::SetVector<Value> args;
  for (Operation *op : ops)
    for (Value operand : op->getOperands()) {
      while (operand.getDefiningOp() && isViewOp(operand.getDefiningOp()))
        operand = operand.getDefiningOp()->getOperand(0);
      if (internal(operand))
        continue;
      if (probe && !buffers.count(operand)) {
        // Not matched yet: a value of an op before the group (or an unsupported one, which
        // the lowering of that op diagnoses).
        args.insert(operand);
        continue;
      }
      if (!buffers.count(operand))
        return op->emitError("evo-lower-to-gpu: an operand is not produced by a supported op");
      args.insert(operand);
    }
  // Tensors a payload gathers from (tensor.extract of a value defined outside it) are arguments
  // too; the analysis checks that they are read only that way.
  for (Operation *op : ops) {
    llvm::SetVector<Value> captured;
    getUsedValuesDefinedAbove(op->getRegions(), captured);
    for (Value v : captured)
      if (isa<RankedTensorType>(v.getType()) && (buffers.count(v) || probe))
        args.insert(v);
  }
  Operation *last = ops.back();
  SmallVector<Value> returned(resultValues.begin(), resultValues.end());
  if (returned.empty())
    returned.assign(last->getResults().begin(), last->getResults().end());
  SmallVector<Type> argTypes, resultTypes;
  for (Value a : args)
    argTypes.push_back(a.getType());
  if (!probe)
    for (Operation *op : ops)
      for (Value r : op->getResults())
        if (failed(checkTensorType(r.getType(), op, "result")))
          return failure();
  for (Value r : returned)
    resultTypes.push_back(r.getType());
  builder.setInsertionPointToEnd(scratch.getBody());
  std::string name = (work.getSymName() + "_t" + Twine(index)).str();
  auto task = func::FuncOp::create(builder, ops.front()->getLoc(), name,
                                   builder.getFunctionType(argTypes, resultTypes));
  Block *entry = task.addEntryBlock();
  OpBuilder b = OpBuilder::atBlockEnd(entry);
  IRMapping map;
  for (auto [v, arg] : llvm::zip(args, entry->getArguments()))
    map.map(v, arg);
  for (Operation *op : ops) {
    for (Value operand : op->getOperands())
      cloneProducers(operand, b, map);
    // Constants captured by the payload (e.g. after fusion) travel with the task.
    llvm::SetVector<Value> captured;
    getUsedValuesDefinedAbove(op->getRegions(), captured);
    for (Value v : captured) {
      if (map.contains(v)) // a gather's table: a task argument
        continue;
      if (!matchPattern(v, m_Constant())) {
        if (probe) {
          task.erase();
          return failure();
        }
        return op->emitError("evo-lower-to-gpu: the payload uses a value defined outside it "
                             "that is neither a constant nor a tensor it gathers from");
      }
      cloneProducers(v, b, map);
    }
    b.clone(*op, map);
  }
  SmallVector<Value> results;
  for (Value r : returned)
    results.push_back(map.lookup(r));
  func::ReturnOp::create(b, last->getLoc(), results);
  operands.assign(args.begin(), args.end());
  if (!probe && failed(restoreScalars(task, operands)))
    return failure();
  return task;
}

std::optional<SmallVector<Value>>
FunctionLowering::rowGroupOutputs(ArrayRef<Operation *> group) {
  llvm::SmallPtrSet<Operation *, 8> members(group.begin(), group.end());
  SmallVector<Value> outs;
  for (Operation *op : group)
    for (Value r : op->getResults())
      if (buffers.count(r) ||
          llvm::any_of(r.getUsers(), [&](Operation *u) { return !members.contains(u); }))
        outs.push_back(r);
  if (outs.empty())
    return std::nullopt;
  return outs;
}

void FunctionLowering::formRowGroups() {
  // Where the whole function is no row program, runs of consecutive ops may still be: the
  // per-row part of a loss (cross-entropy's max, sum of exponentials and per-row loss) before
  // its mean over the rows, which stays a task of its own. Each run, the longest from its first
  // op, becomes one rows task whose results are the values used after it (row vectors or full
  // tensors; matchRowProgram checks the task func).
  if (!options.fuseElementwise)
    return;
  SmallVector<Operation *> compute;
  for (Operation &op : work.getBody().front().without_terminator())
    if (!isCheapProducer(&op) && !isViewOp(&op))
      compute.push_back(&op);
  auto eligible = [&](Operation *op) {
    return isa<linalg::GenericOp, linalg::SoftmaxOp>(op) && !op->hasAttr(kOpKnobsAttrName) &&
           !inChain.contains(op) && !chains.count(op);
  };
  for (size_t i = 0; i < compute.size();) {
    size_t best = 0;
    SmallVector<Value> bestOuts;
    // At most kMaxRowGroup ops per run: each candidate is a cloned task func.
    constexpr size_t kMaxRowGroup = 32;
    for (size_t j = i + 1; j <= std::min(compute.size(), i + kMaxRowGroup) && eligible(compute[j - 1]);
         ++j) {
      if (j - i < 2)
        continue;
      ArrayRef<Operation *> group = ArrayRef(compute).slice(i, j - i);
      std::optional<SmallVector<Value>> outs = rowGroupOutputs(group);
      if (!outs)
        continue;
      SmallVector<Value> operands;
      FailureOr<func::FuncOp> probe = extractTask(group, 0, operands, *outs, /*probe=*/true);
      if (failed(probe))
        continue;
      bool ok = matchRowProgram(*probe).has_value();
      probe->erase();
      if (ok) {
        best = j;
        bestOuts = std::move(*outs);
      }
    }
    if (!best) {
      ++i;
      continue;
    }
    SmallVector<Operation *> group(compute.begin() + i, compute.begin() + best);
    LLVM_DEBUG(llvm::dbgs() << "row group of " << group.size() << " ops at " << group.front()->getLoc()
                            << "\n");
    for (Operation *op : group)
      inRowGroup.insert(op);
    rowGroups[group.front()] = {group, bestOuts};
    i = best;
  }
}

bool FunctionLowering::isRowProgram() {
  // Ops that carry their own knobs keep their own kernels, as with elementwise fusion.
  if (!options.fuseElementwise || !matchRowProgram(work))
    return false;
  WalkResult r = work.walk([](Operation *op) {
    return op->hasAttr(kOpKnobsAttrName) ? WalkResult::interrupt() : WalkResult::advance();
  });
  return !r.wasInterrupted();
}

/// A kernel parameter whose buffer has another shape of the same elements (a task result
/// written straight into a returned reshape's output buffer: aliasedViewSource) takes the
/// buffer's type, and the kernel views it in its own shape (memref.reinterpret_cast at entry):
/// the plan, the manifest and every runtime see one type per buffer.
void viewReshapedParams(gpu::GPUFuncOp kernel, ArrayRef<unsigned> args,
                        const LaunchPlan &plan) {
  SmallVector<Type> inputs(kernel.getFunctionType().getInputs());
  bool changed = false;
  for (auto [k, buf] : llvm::enumerate(args)) {
    if (k >= inputs.size())
      break;
    auto want = dyn_cast<MemRefType>(inputs[k]);
    MemRefType have = plan.buffers[buf].type;
    if (!want || want == have || want.getElementType() != have.getElementType() ||
        !want.hasStaticShape() || !have.hasStaticShape() ||
        want.getNumElements() != have.getNumElements() || !want.getLayout().isIdentity() ||
        !have.getLayout().isIdentity() || want.getMemorySpace() != have.getMemorySpace())
      continue;
    BlockArgument arg = kernel.getArgument(k);
    arg.setType(have);
    OpBuilder b = OpBuilder::atBlockBegin(&kernel.getBody().front());
    SmallVector<int64_t> strides = computeSuffixProduct(want.getShape()); // row-major
    auto view = memref::ReinterpretCastOp::create(b, kernel.getLoc(), want, arg, /*offset=*/0,
                                                  want.getShape(), strides);
    arg.replaceAllUsesExcept(view.getResult(), view);
    inputs[k] = have;
    changed = true;
  }
  if (changed)
    kernel.setFunctionType(FunctionType::get(kernel.getContext(), inputs, {}));
}

LogicalResult FunctionLowering::addTask(func::FuncOp task,
                                        const ScheduleKnobs &knobs, ArrayRef<Value> operands,
                                        ValueRange results, gpu::GPUModuleOp kernels) {
  unsigned taskIndex = plan.tasks.size();
  TaskDesc desc;
  desc.name = task.getSymName().str();
  desc.source = printSource(task);
  for (Value operand : operands) {
    unsigned buf = buffers.lookup(operand);
    if (!llvm::is_contained(desc.buffers, buf))
      desc.buffers.push_back(buf);
  }
  for (Value r : results)
    desc.buffers.push_back(bufferFor(r, BufferRole::Scratch, ("tmp" + Twine(numScratch++)).str()));

  std::string kernelName = (plan.funcName + "_k" + Twine(kernelIndex++)).str();
  // A tuning record for this task replaces its knobs here, after the split: which ops form the
  // task never depends on the database.
  const TuningRecord *record = tuningRecordFor(task, options);
  std::optional<ScopedDiagnosticHandler> recordNote;
  if (record)
    recordNote.emplace(task.getContext(), [&, record](Diagnostic &diag) {
      if (diag.getSeverity() == DiagnosticSeverity::Error)
        diag.attachNote() << "with the knobs of tuning record " << record->signature.substr(0, 12)
                          << " of '" << options.tuningDbName << "' for " << task.getSymName();
      return failure(); // passed on to the next handler
    });
  FailureOr<LoweredTask> lowered =
      lowerTask(task, record ? record->knobs : knobs, kernels, kernelName);
  if (failed(lowered))
    return failure();
  for (BufferDesc s : lowered->scratch) {
    // A tensor map's source is task-local (the task's arguments, then results, then earlier
    // scratch), like launch arguments.
    if (s.tensorMap) {
      if (s.tensorMap->source >= desc.buffers.size())
        return emitError(task.getLoc())
               << "evo-lower-to-gpu: a tensor map names task buffer " << s.tensorMap->source
               << " of " << desc.buffers.size();
      s.tensorMap->source = desc.buffers[s.tensorMap->source];
    }
    s.name = ((s.tensorMap ? "tmap" : "tmp") + Twine(numScratch++)).str();
    plan.buffers.push_back(s);
    desc.buffers.push_back(plan.buffers.size() - 1);
  }
  desc.family = lowered->family;
  desc.knobs = lowered->knobs;
  for (const KernelLaunch &launch : lowered->launches)
    if (failed(checkLaunchDims(launch.kernel, launch.grid, launch.block,
                               launch.dynamicSharedMemory, [&] {
                                 return emitError(task.getLoc()) << "evo-lower-to-gpu: ";
                               })))
      return failure();
  for (KernelLaunch launch : lowered->launches) {
    for (unsigned &a : launch.args)
      a = desc.buffers[a];
    launch.task = taskIndex;
    if (auto k = kernels.lookupSymbol<gpu::GPUFuncOp>(launch.kernel)) {
      k->setAttr(kTaskAttrName, builder.getI64IntegerAttr(taskIndex));
      viewReshapedParams(k, launch.args, plan);
    }
    plan.launches.push_back(launch);
  }
  plan.tasks.push_back(std::move(desc));
  return success();
}

FailureOr<LaunchPlan> FunctionLowering::run(gpu::GPUModuleOp kernels) {
  plan.funcName = work.getSymName().str();
  Block &body = work.getBody().front();
  for (BlockArgument arg : body.getArguments()) {
    unsigned b = bufferFor(arg, BufferRole::Input, ("arg" + Twine(arg.getArgNumber())).str());
    plan.buffers[b].byValue = llvm::is_contained(scalarArgs, arg.getArgNumber());
  }
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    if (isa<BlockArgument>(v))
      return ret.emitError() << "evo-lower-to-gpu: result " << i
                             << " returns an argument unchanged; every result must be computed "
                                "by a linalg op";
    if (buffers.count(v))
      return ret.emitError() << "evo-lower-to-gpu: result " << i
                             << " returns a value that is already returned";
    Operation *def = v.getDefiningOp();
    if (isa<arith::ConstantOp, tensor::EmptyOp>(def))
      return ret.emitError() << "evo-lower-to-gpu: result " << i
                             << " is a constant or an uninitialized tensor";
    unsigned out = bufferFor(v, BufferRole::Output, ("result" + Twine(i)).str());
    if (Value src = aliasedViewSource(def))
      buffers[src] = out;
  }

  if (isRowProgram()) {
    // The whole function is one task: one kernel walks each row (EmitRows.cpp).
    OpBuilder b = OpBuilder::atBlockEnd(scratch.getBody());
    auto task = cast<func::FuncOp>(b.clone(*work));
    task.setSymName((work.getSymName() + "_t0").str());
    SmallVector<Value> args(body.getArguments().begin(), body.getArguments().end());
    if (failed(restoreScalars(task, args)) ||
        failed(addTask(task, options.knobs, args, ret.getOperands(), kernels)))
      return failure();
    return plan;
  }

  formEpilogues(/*reductions=*/false);
  formRowGroups();
  formEpilogues(/*reductions=*/true);
  for (Operation &op : body.without_terminator()) {
    // A contraction and the first steps of its epilogue become a task at the epilogue's end.
    if (inChain.contains(&op))
      continue;
    // A row group becomes one rows task at its first op.
    if (auto it = rowGroups.find(&op); it != rowGroups.end()) {
      auto &[group, outs] = it->second;
      SmallVector<Value> operands;
      FailureOr<func::FuncOp> task = extractTask(group, plan.tasks.size(), operands, outs);
      if (failed(task) || failed(addTask(*task, options.knobs, operands, outs, kernels)))
        return failure();
      continue;
    }
    if (inRowGroup.contains(&op))
      continue;
    // A returned reshape whose source's task writes the output buffer itself.
    if (aliasedViewSource(&op))
      continue;
    bool returned = llvm::any_of(op.getResults(), [&](Value r) { return buffers.count(r); });
    // Views are read through by the tasks that use them (preprocessing copied returned ones).
    if ((isCheapProducer(&op) || isViewOp(&op)) && !returned)
      continue;
    if (!isa<linalg::LinalgOp, linalg::SoftmaxOp>(op))
      return op.emitError() << "'" << op.getName() << "' is not supported by evo-lower-to-gpu";
    if (isa<arith::ConstantOp, tensor::EmptyOp>(op))
      return op.emitError("evo-lower-to-gpu: a returned constant is not supported");

    SmallVector<Operation *> ops{&op};
    if (auto it = chains.find(&op); it != chains.end())
      ops = it->second;
    SmallVector<Value> operands;
    FailureOr<func::FuncOp> task = extractTask(ops, plan.tasks.size(), operands);
    if (failed(task))
      return failure();
    ScheduleKnobs knobs = options.knobs;
    // The pass-wide reduction knobs are for reductions, softmax and rows: an untiled contraction
    // (GEMV-like) takes them only from its own `evo.knobs` (or the search), so a module-wide
    // `vector-width=8` or `split=4` meant for a row sum does not re-schedule its matmuls.
    if (auto lop = dyn_cast<linalg::LinalgOp>(ops.front());
        lop && knobs.tileSizes.empty() &&
        (linalg::isaContractionOpInterface(lop) || linalg::isaConvolutionOpInterface(lop))) {
      knobs.reduction = ReductionStrategy::Thread;
      knobs.vectorWidth = 1;
      knobs.split = 1;
      knobs.groupOutputs = 1;
      knobs.groupOutputs2 = 1;
      knobs.streamLoads = false;
    }
    // The knobs of the compute op (epilogue steps carry none).
    if (Attribute set = ops.front()->getAttr(kOpKnobsAttrName)) {
      // `{block_size = 128 : i64}` or `#evo.knobs<block_size = 128>`.
      auto knobSet = dyn_cast<KnobSetAttrInterface>(set);
      if (!knobSet)
        return op.emitError() << "'" << kOpKnobsAttrName
                              << "' must be a dictionary or an #evo.knobs attribute";
      if (failed(knobSet.overlayKnobs(knobs, [&] { return op.emitError(); })))
        return failure();
    }
    if (failed(addTask(*task, knobs, operands, op.getResults(), kernels)))
      return failure();
  }
  if (plan.tasks.empty())
    return work.emitError("evo-lower-to-gpu: the function has no linalg op to lower");
  return plan;
}

LogicalResult lowerFunction(func::FuncOp func, const LowerOptions &options) {
  MLIRContext *ctx = func.getContext();
  auto parent = func->getParentOfType<ModuleOp>();
  if (!parent)
    return func.emitError("evo-lower-to-gpu: the function must be inside a module");
  // The name becomes the kernels' PTX symbols and the output files' names.
  if (failed(checkSymbolName(func.getSymName(), "evo-lower-to-gpu: function name",
                             [&] { return func.emitError(); }, kMaxFunctionNameLength)))
    return failure();
  for (BlockArgument arg : func.getArguments())
    if (failed(checkArgument(arg)))
      return failure();
  for (Type t : func.getResultTypes())
    if (failed(checkTensorType(t, func, "result")))
      return failure();
  if (func.getNumResults() == 0)
    return func.emitError("evo-lower-to-gpu: the function returns nothing");

  // Everything happens on copies in a scratch module; `func` is replaced only on success.
  OpBuilder builder(ctx);
  OwningOpRef<ModuleOp> scratch = ModuleOp::create(func.getLoc());
  builder.setInsertionPointToEnd(scratch->getBody());
  auto work = cast<func::FuncOp>(builder.clone(*func));
  // The source travels as text (run stores, the oracle, task sources): weights held in
  // dense_resource blobs, which a function's text does not carry, become inline constants.
  inlineResourceConstants(work, options.inlineConstantBytes);
  // Constants too large for the kernels become trailing arguments (constant buffers); the source
  // the oracle and the searches see has them as inputs.
  SmallVector<LiftedConstant> lifted = liftLargeConstants(work, options.inlineConstantBytes, parent);
  std::string source = printSource(work);
  // Scalar arguments are 0-d tensors from here on (ScalarArguments.h); the source keeps them.
  SmallVector<unsigned> scalarArgs;
  if (failed(scalarArgumentsToTensors(work, "evo-lower-to-gpu", &scalarArgs)) ||
      failed(preprocessFunction(work, options.fuseElementwise)))
    return failure();
  builder.setInsertionPointToEnd(scratch->getBody());
  std::string moduleName = (func.getSymName() + "_kernels").str();
  auto kernels = gpu::GPUModuleOp::create(builder, func.getLoc(), moduleName);

  FunctionLowering lowering(work, options, *scratch, scalarArgs);
  FailureOr<LaunchPlan> plan = lowering.run(kernels);
  if (failed(plan))
    return failure();
  plan->source = source;
  markConstantBuffers(*plan, lifted, work.getNumArguments());
  // The emitters favour simple code over minimal code; tidy it for readers and later passes.
  PassManager tidy(ctx, gpu::GPUModuleOp::getOperationName());
  tidy.addPass(createCanonicalizerPass());
  tidy.addPass(createCSEPass());
  if (failed(tidy.run(kernels)))
    return failure();
  kernels->setAttr(kPlanAttrName, plan->toAttr(ctx));
  if (failed(plan->verifyAgainst(kernels)))
    return failure();

  // Commit: the gpu.module follows the host function, which replaces `func`.
  if (SymbolTable::lookupSymbolIn(parent, moduleName))
    return func.emitError() << "evo-lower-to-gpu: symbol '" << moduleName
                            << "' already exists in the module";
  kernels->moveAfter(func);
  builder.setInsertionPoint(func);
  for (const LiftedConstant &c : lifted) {
    auto type = cast<RankedTensorType>(c.value.getType());
    auto global = memref::GlobalOp::create(
        builder, c.loc, c.global, builder.getStringAttr("private"),
        MemRefType::get(type.getShape(), type.getElementType()), c.value, /*constant=*/true,
        /*alignment=*/IntegerAttr());
    SymbolTable(parent).insert(global, Block::iterator(func));
  }
  func::FuncOp host = buildHostFunction(builder, func.getLoc(), *plan, kernels);
  host.setVisibility(func.getVisibility());
  func.erase();
  parent->setAttr(gpu::GPUDialect::getContainerModuleAttrName(), builder.getUnitAttr());
  return success();
}

} // namespace evo
