//===- TaskAnalysis.cpp - resolving a task's operands -----------------------===//

#include "TaskAnalysis.h"
#include "evo/Dialect/Evo/IR/InputChecks.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;

namespace evo {

int64_t GenericTask::numOutputPoints() const {
  int64_t n = 1;
  for (unsigned d : parallelDims)
    n *= loopSizes[d];
  return n;
}

int64_t GenericTask::numReductionPoints() const {
  int64_t n = 1;
  for (unsigned d : reductionDims)
    n *= loopSizes[d];
  return n;
}

bool isCheapProducer(Operation *op) {
  if (isa<arith::ConstantOp, tensor::EmptyOp>(op))
    return true;
  if (auto fill = dyn_cast<linalg::FillOp>(op))
    return matchPattern(fill.value(), m_Constant());
  return false;
}

bool isViewOp(Operation *op) {
  return isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::ExtractSliceOp,
             tensor::CastOp, tensor::PadOp>(op);
}

static bool isStatic(Type t) {
  auto r = dyn_cast<RankedTensorType>(t);
  return r && r.hasStaticShape();
}

/// The padding value of a pad, if it is a constant of the element type.
static TypedAttr padValueOf(tensor::PadOp pad) {
  Value v = pad.getConstantPaddingValue();
  Attribute attr;
  if (!v || !matchPattern(v, m_Constant(&attr)))
    return {};
  auto typed = dyn_cast<TypedAttr>(attr);
  return typed && typed.getType() == pad.getResultType().getElementType() ? typed : TypedAttr();
}

LogicalResult checkViewOp(Operation *op) {
  if (!isStatic(op->getOperand(0).getType()) || !isStatic(op->getResult(0).getType()))
    return op->emitError() << "evo-lower-to-gpu: '" << op->getName()
                           << "' needs static shapes (operand and result)";
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op)) {
    auto dynamic = [](ArrayRef<int64_t> v) { return llvm::any_of(v, ShapedType::isDynamic); };
    if (dynamic(slice.getStaticOffsets()) || dynamic(slice.getStaticSizes()) ||
        dynamic(slice.getStaticStrides()))
      return op->emitError("evo-lower-to-gpu: 'tensor.extract_slice' needs static offsets, "
                           "sizes and strides");
  }
  if (auto pad = dyn_cast<tensor::PadOp>(op)) {
    if (llvm::any_of(pad.getStaticLow(), ShapedType::isDynamic) ||
        llvm::any_of(pad.getStaticHigh(), ShapedType::isDynamic))
      return op->emitError("evo-lower-to-gpu: 'tensor.pad' needs static low and high padding");
    if (llvm::any_of(pad.getStaticLow(), [](int64_t v) { return v < 0; }) ||
        llvm::any_of(pad.getStaticHigh(), [](int64_t v) { return v < 0; }))
      return op->emitError("evo-lower-to-gpu: 'tensor.pad' with negative padding is not "
                           "supported");
    if (!padValueOf(pad))
      return op->emitError("evo-lower-to-gpu: 'tensor.pad' needs a constant padding value (the "
                           "region must yield a constant)");
  }
  return success();
}

/// The step from a view's indices to its source's (checkViewOp holds).
static ViewStep viewStep(Operation *op) {
  MLIRContext *ctx = op->getContext();
  auto srcType = cast<RankedTensorType>(op->getOperand(0).getType());
  auto resType = cast<RankedTensorType>(op->getResult(0).getType());
  unsigned rank = resType.getRank();
  SmallVector<AffineExpr> exprs;
  ViewStep step;
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op)) {
    // Each source dimension is its group of result dimensions, linearized (row-major).
    for (ReassociationIndices group : expand.getReassociationIndices()) {
      AffineExpr e = getAffineConstantExpr(0, ctx);
      int64_t stride = 1;
      for (int64_t d : llvm::reverse(group)) {
        e = e + getAffineDimExpr(d, ctx) * stride;
        stride *= resType.getDimSize(d);
      }
      exprs.push_back(e);
    }
  } else if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op)) {
    // Each result dimension delinearized over its group of source dimensions.
    for (auto [r, group] : llvm::enumerate(collapse.getReassociationIndices())) {
      AffineExpr d = getAffineDimExpr(r, ctx);
      int64_t inner = 1;
      for (int64_t s : group)
        inner *= srcType.getDimSize(s);
      for (auto [j, s] : llvm::enumerate(group)) {
        inner /= srcType.getDimSize(s);
        AffineExpr e = d.floorDiv(inner);
        exprs.push_back(j == 0 ? e : e % srcType.getDimSize(s));
      }
    }
  } else if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op)) {
    llvm::SmallBitVector dropped = slice.getDroppedDims();
    unsigned r = 0;
    for (auto [i, offset] : llvm::enumerate(slice.getStaticOffsets())) {
      AffineExpr e = getAffineConstantExpr(offset, ctx);
      if (!dropped.test(i))
        e = e + getAffineDimExpr(r++, ctx) * slice.getStaticStrides()[i];
      exprs.push_back(e);
    }
  } else if (auto pad = dyn_cast<tensor::PadOp>(op)) {
    for (auto [i, low] : llvm::enumerate(pad.getStaticLow()))
      exprs.push_back(getAffineDimExpr(i, ctx) - low);
    step.sourceShape = llvm::to_vector(srcType.getShape());
    step.padValue = padValueOf(pad);
  } else {
    // tensor.cast between static types of one shape.
    for (unsigned i = 0; i < rank; ++i)
      exprs.push_back(getAffineDimExpr(i, ctx));
  }
  step.map = AffineMap::get(rank, 0, exprs, ctx);
  return step;
}

Type GenericTask::resultElementType(unsigned o) const {
  return getElementTypeOrSelf(linalg::GenericOp(op).getDpsInits()[o].getType());
}

bool isEpilogueConsumer(linalg::GenericOp consumer, Value prev) {
  auto prevType = dyn_cast<RankedTensorType>(prev.getType());
  if (!prevType || !prevType.hasStaticShape() || !consumer.hasPureTensorSemantics() ||
      consumer.getNumDpsInits() != 1 || consumer->getNumResults() != 1 ||
      consumer.getNumReductionLoops() != 0 || consumer.getNumLoops() != prevType.getRank())
    return false;
  auto outType = dyn_cast<RankedTensorType>(consumer->getResult(0).getType());
  if (!outType || outType.getShape() != prevType.getShape())
    return false;
  AffineMap identity = AffineMap::getMultiDimIdentityMap(prevType.getRank(), consumer.getContext());
  if (consumer.getMatchingIndexingMap(consumer.getDpsInitOperand(0)) != identity)
    return false;
  bool reads = false;
  for (OpOperand &operand : consumer->getOpOperands()) {
    if (operand.get() != prev)
      continue;
    if (consumer.getMatchingIndexingMap(&operand) != identity)
      return false;
    reads = true;
  }
  return reads && llvm::all_of(prev.getUsers(), [&](Operation *u) { return u == consumer; });
}

FailureOr<ComputeOps> findComputeOps(func::FuncOp task) {
  if (task.isExternal())
    return task.emitError("evo: task function has no body");
  auto ret = cast<func::ReturnOp>(task.getBody().front().getTerminator());
  if (ret.getNumOperands() == 0)
    return task.emitError("evo: task function returns nothing");
  Operation *last = ret.getOperand(0).getDefiningOp();
  if (!last)
    return task.emitError("evo: task function returns its argument unchanged");
  for (Value v : ret.getOperands())
    if (v.getDefiningOp() != last)
      return ret.emitError("evo: every result of a task must come from one compute op");
  if (!isa<linalg::LinalgOp, linalg::SoftmaxOp>(last))
    return last->emitError() << "'" << last->getName() << "' is not supported by evo-lower-to-gpu";
  ComputeOps found;
  for (Operation &op : task.getBody().front().without_terminator()) {
    if (isCheapProducer(&op) || isViewOp(&op))
      continue;
    if (!found.compute) {
      found.compute = &op;
      continue;
    }
    // Anything after the compute op must continue its epilogue chain.
    Operation *prev = found.epilogue.empty() ? found.compute : found.epilogue.back();
    auto g = dyn_cast<linalg::GenericOp>(op);
    if (!g || !isa<linalg::LinalgOp>(found.compute) || prev->getNumResults() != 1 ||
        !isEpilogueConsumer(g, prev->getResult(0)))
      return op.emitError() << "'" << op.getName()
                            << "' cannot be part of a task (only constants, tensor.empty, "
                               "fills of constants and views may feed the compute op, and only "
                               "elementwise ops on its result, read at the output point, may "
                               "follow it)";
    found.epilogue.push_back(g);
  }
  Operation *end = found.epilogue.empty() ? found.compute : found.epilogue.back();
  if (end != last)
    return last->emitError("evo: a task must return the last op of its chain");
  return found;
}

FailureOr<Operation *> findComputeOp(func::FuncOp task) {
  FailureOr<ComputeOps> found = findComputeOps(task);
  if (failed(found))
    return failure();
  return found->compute;
}

FailureOr<SmallVector<MemRefType>> taskParamTypes(func::FuncOp task) {
  SmallVector<MemRefType> params;
  auto add = [&](Type t) -> LogicalResult {
    auto tensor = dyn_cast<RankedTensorType>(t);
    if (!tensor)
      return task.emitError() << "evo-lower-to-gpu needs static shapes, got " << t;
    // Task sources come back from run stores and LLM-facing files too: check them as input.
    if (failed(checkBufferType(t, [&] { return task.emitError() << "evo-lower-to-gpu "; })))
      return failure();
    params.push_back(MemRefType::get(tensor.getShape(), tensor.getElementType()));
    return success();
  };
  for (Type t : task.getArgumentTypes())
    if (failed(add(t)))
      return failure();
  for (Type t : task.getResultTypes())
    if (failed(add(t)))
      return failure();
  return params;
}

/// Resolves a value read by the compute op.
static ValueSource resolve(Value v, func::FuncOp task) {
  ValueSource src;
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    if (arg.getOwner() == &task.getBody().front()) {
      src.kind = ValueSource::Kind::Buffer;
      src.buffer = arg.getArgNumber();
    }
    return src;
  }
  Operation *def = v.getDefiningOp();
  if (isa<tensor::EmptyOp>(def))
    return src; // None
  if (isViewOp(def) && succeeded(checkViewOp(def))) {
    ValueSource inner = resolve(def->getOperand(0), task);
    // A reshaped or sliced splat is the same splat; a padded one only with the same value.
    if (inner.kind == ValueSource::Kind::Scalar &&
        (!isa<tensor::PadOp>(def) || padValueOf(cast<tensor::PadOp>(def)) == inner.scalar))
      return inner;
    if (inner.kind == ValueSource::Kind::Buffer || inner.kind == ValueSource::Kind::Constant) {
      inner.view.insert(inner.view.begin(), viewStep(def));
      return inner;
    }
    src.buffer = ~0u;
    return src;
  }
  if (auto fill = dyn_cast<linalg::FillOp>(def))
    return resolve(fill.value(), task);
  Attribute cst;
  if (matchPattern(v, m_Constant(&cst))) {
    // dense_resource constants arrive written inline (inlineResourceConstants in
    // LowerFunction.cpp, before the task sources are printed); a resource still here has no blob
    // or is over the size cap, and stays unresolved.
    if (auto dense = dyn_cast<SplatElementsAttr>(cst)) {
      src.kind = ValueSource::Kind::Scalar;
      src.scalar = dense.getSplatValue<TypedAttr>();
    } else if (auto typed = dyn_cast<TypedAttr>(cst); typed && typed.getType().isIntOrFloat()) {
      src.kind = ValueSource::Kind::Scalar;
      src.scalar = typed;
    } else if (auto dense = dyn_cast<DenseElementsAttr>(cst);
               dense && dense.getType().hasStaticShape() &&
               dense.getElementType().isIntOrFloat() &&
               dense.getNumElements() * ((dense.getElementType().getIntOrFloatBitWidth() + 7) / 8) <=
                   kMaxKernelConstantBytes) {
      src.kind = ValueSource::Kind::Constant;
      src.dense = dense;
    }
  }
  // Anything else stays Kind::None with scalar == null: the caller reports it.
  if (src.kind == ValueSource::Kind::None)
    src.buffer = ~0u;
  return src;
}

ValueSource resolveValueSource(Value v, func::FuncOp task) { return resolve(v, task); }

static bool isUnresolved(const ValueSource &s) {
  return s.kind == ValueSource::Kind::None && s.buffer == ~0u;
}

/// Whether `operand` of `user` (in a payload) is a gather's table: the tensor of a tensor.extract
/// that is an argument of the task func (the kernel loads it from the parameter of that number).
static bool isGatherTable(Operation *user, Value operand) {
  auto extract = dyn_cast<tensor::ExtractOp>(user);
  auto arg = dyn_cast<BlockArgument>(operand);
  return extract && extract.getTensor() == operand && arg &&
         isa<func::FuncOp>(arg.getOwner()->getParentOp());
}

static LogicalResult checkPayloadCaptures(Operation *op, Region &region) {
  WalkResult r = region.walk([&](Operation *inner) {
    for (Value operand : inner->getOperands()) {
      if (region.isAncestor(operand.getParentRegion()))
        continue;
      if (isGatherTable(inner, operand))
        continue;
      if (!matchPattern(operand, m_Constant())) {
        op->emitError("evo-lower-to-gpu: the payload uses a value defined outside it that is "
                      "neither a constant nor a tensor it reads with tensor.extract (a gather "
                      "from a function argument)");
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  return failure(r.wasInterrupted());
}

/// Result `i` of the compute op is returned at position `pos`: its kernel parameter follows
/// the task's arguments.
static FailureOr<SmallVector<unsigned>> resultParams(Operation *op, func::FuncOp task) {
  auto ret = cast<func::ReturnOp>(task.getBody().front().getTerminator());
  SmallVector<unsigned> out;
  for (Value result : op->getResults()) {
    auto it = llvm::find(ret.getOperands(), result);
    if (it == ret.getOperands().end())
      return op->emitError("evo: every result of a task's compute op must be returned");
    out.push_back(task.getNumArguments() + std::distance(ret.getOperands().begin(), it));
  }
  return out;
}

static Combiner findCombiner(linalg::GenericOp op, unsigned outIndex) {
  Block &body = op.getRegion().front();
  BlockArgument out = body.getArgument(op.getNumDpsInputs() + outIndex);
  Combiner none;
  if (!out.hasOneUse())
    return none;
  Operation *user = *out.getUsers().begin();
  if (user->getNumOperands() != 2 || user->getNumResults() != 1 ||
      user->getOperand(0) == user->getOperand(1) || !arith::getNeutralElement(user))
    return none;
  Value result = user->getResult(0);
  if (!result.hasOneUse())
    return none;
  OpOperand &use = *result.getUses().begin();
  if (!isa<linalg::YieldOp>(use.getOwner()) || use.getOperandNumber() != outIndex)
    return none;
  return Combiner{user, user->getOperand(0) == out ? 1u : 0u};
}

/// A task of kind `Task` for `op`, with the kernel parameters of its task func.
template <typename Task, typename Op>
static FailureOr<Task> beginTask(Op op, func::FuncOp task) {
  FailureOr<SmallVector<MemRefType>> params = taskParamTypes(task);
  if (failed(params))
    return failure();
  Task t;
  t.op = op;
  t.params = std::move(*params);
  return t;
}

/// The epilogue steps of `op` (findComputeOps), their operands resolved.
static FailureOr<Epilogue> analyzeEpilogue(linalg::GenericOp op, func::FuncOp task,
                                           ArrayRef<linalg::GenericOp> ops) {
  Epilogue epilogue;
  Value prev = op->getNumResults() == 1 ? op->getResult(0) : Value();
  for (linalg::GenericOp g : ops) {
    if (!prev || !isEpilogueConsumer(g, prev))
      return g.emitError("evo-lower-to-gpu: not an elementwise epilogue of the op before it");
    if (failed(checkPayloadCaptures(g, g.getRegion())))
      return failure();
    EpilogueStep step;
    step.op = g;
    for (OpOperand *in : g.getDpsInputOperands()) {
      bool chained = in->get() == prev;
      step.chained.push_back(chained);
      ValueSource s = chained ? ValueSource() : resolve(in->get(), task);
      if (!chained && isUnresolved(s))
        return g.emitError() << "evo-lower-to-gpu: epilogue input " << in->getOperandNumber()
                             << " is neither a function argument (or a view of one) nor a constant of at most 1 MiB";
      if (!chained && s.kind == ValueSource::Kind::None && g.payloadUsesValueFromOperand(in))
        return g.emitError() << "evo-lower-to-gpu: epilogue input " << in->getOperandNumber()
                             << " is an uninitialized tensor (tensor.empty)";
      step.inputs.push_back(s);
    }
    OpOperand *init = g.getDpsInitOperand(0);
    step.initChained = init->get() == prev;
    step.initRead = g.payloadUsesValueFromOperand(init);
    if (!step.initChained) {
      step.init = resolve(init->get(), task);
      if (isUnresolved(step.init))
        return g.emitError("evo-lower-to-gpu: the epilogue's init is neither a function "
                           "argument, a fill of a constant nor tensor.empty");
      if (step.initRead && step.init.kind == ValueSource::Kind::None)
        return g.emitError("evo-lower-to-gpu: the epilogue reads its output, which is "
                           "uninitialized (tensor.empty)");
    }
    epilogue.steps.push_back(std::move(step));
    prev = g->getResult(0);
  }
  return epilogue;
}

FailureOr<GenericTask> analyzeGeneric(linalg::GenericOp op, func::FuncOp task,
                                      ArrayRef<linalg::GenericOp> epilogue) {
  FailureOr<GenericTask> begun = beginTask<GenericTask>(op, task);
  if (failed(begun))
    return failure();
  GenericTask t = std::move(*begun);
  if (!op.hasPureTensorSemantics())
    return op.emitError("evo-lower-to-gpu needs linalg ops on tensors");
  t.loopSizes = op.getStaticLoopRanges();
  if (llvm::any_of(t.loopSizes, ShapedType::isDynamic))
    return op.emitError("evo-lower-to-gpu needs static shapes");
  if (llvm::any_of(t.loopSizes, [](int64_t s) { return s == 0; }))
    return op.emitError("evo-lower-to-gpu: empty iteration space");
  // Every product of loop sizes the emitters form (points, grids, strides) is at most this one.
  if (!checkedProduct(t.loopSizes))
    return op.emitError("evo-lower-to-gpu: the iteration space has more than 2^63 points");
  for (auto [i, it] : llvm::enumerate(op.getIteratorTypesArray())) {
    if (it == utils::IteratorType::parallel)
      t.parallelDims.push_back(i);
    else
      t.reductionDims.push_back(i);
  }
  if (failed(checkPayloadCaptures(op, op.getRegion())))
    return failure();

  for (OpOperand *in : op.getDpsInputOperands()) {
    ValueSource s = resolve(in->get(), task);
    if (isUnresolved(s))
      return op.emitError() << "evo-lower-to-gpu: input " << in->getOperandNumber()
                            << " is neither a function argument (or a view of one) nor a constant of at most 1 MiB";
    // An input the payload never reads (a pooling window's shape operand) may be anything.
    if (s.kind == ValueSource::Kind::None && op.payloadUsesValueFromOperand(in))
      return op.emitError() << "evo-lower-to-gpu: input " << in->getOperandNumber()
                            << " is an uninitialized tensor (tensor.empty)";
    t.inputs.push_back(s);
  }
  // With an epilogue, the last step's result is what the kernel stores.
  Operation *stored = op;
  if (!epilogue.empty())
    stored = linalg::GenericOp(epilogue.back());
  FailureOr<SmallVector<unsigned>> outs = resultParams(stored, task);
  if (failed(outs))
    return failure();
  t.outputs = *outs;
  if (!epilogue.empty()) {
    FailureOr<Epilogue> e = analyzeEpilogue(op, task, epilogue);
    if (failed(e))
      return failure();
    t.epilogue = std::move(*e);
  }
  for (auto [i, init] : llvm::enumerate(op.getDpsInitsMutable())) {
    ValueSource s = resolve(init.get(), task);
    if (isUnresolved(s))
      return op.emitError() << "evo-lower-to-gpu: init " << i
                            << " is neither a function argument, a fill of a constant nor "
                               "tensor.empty";
    bool read = op.payloadUsesValueFromOperand(&init);
    if (read && s.kind == ValueSource::Kind::None)
      return op.emitError() << "evo-lower-to-gpu: the op reads its output " << i
                            << ", which is uninitialized (tensor.empty); fill it first";
    t.inits.push_back(s);
    t.initRead.push_back(read);
    t.combiners.push_back(t.reductionDims.empty() ? Combiner() : findCombiner(op, i));
  }
  return t;
}

FailureOr<SoftmaxTask> analyzeSoftmax(linalg::SoftmaxOp op, func::FuncOp task) {
  FailureOr<SoftmaxTask> begun = beginTask<SoftmaxTask>(op, task);
  if (failed(begun))
    return failure();
  SoftmaxTask t = std::move(*begun);
  auto type = cast<RankedTensorType>(op.getInput().getType());
  if (!type.hasStaticShape())
    return op.emitError("evo-lower-to-gpu needs static shapes");
  if (!isa<FloatType>(type.getElementType()))
    return op.emitError("evo-lower-to-gpu: softmax needs a float element type");
  t.shape = llvm::to_vector(type.getShape());
  t.dim = op.getDimension();
  ValueSource in = resolve(op.getInput(), task);
  if (!in.isPlainBuffer())
    return op.emitError("evo-lower-to-gpu: softmax input must be a function argument");
  t.input = in.buffer;
  FailureOr<SmallVector<unsigned>> outs = resultParams(op, task);
  if (failed(outs))
    return failure();
  t.output = (*outs)[0];
  return t;
}

} // namespace evo
