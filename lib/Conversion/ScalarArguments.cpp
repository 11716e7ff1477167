//===- ScalarArguments.cpp - scalar function arguments as 0-d tensors ---------===//

#include "evo/Conversion/ScalarArguments.h"
#include "evo/Conversion/LowerToGPU.h"
#include "evo/Dialect/Evo/IR/InputChecks.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace evo {

namespace {
/// The scalar arguments of a function and the values computed from them outside any payload
/// (pure scalar ops whose operands are such values or constants): what payloads may read.
class ScalarValues {
public:
  ScalarValues(func::FuncOp func, StringRef what)
      : func(func), funcOp(func.getOperation()), what(what) {}

  /// Collects the scalar arguments; false when there are none.
  bool collect();
  LogicalResult generalizeNamedReaders();
  LogicalResult rewriteGenerics();
  /// Every use left is an `ins` operand of a linalg.generic; derived ops are erased.
  LogicalResult checkUsesAndRetype(SmallVectorImpl<unsigned> *scalarArgs);

private:
  bool isDerived(Value v) const { return derived.contains(v); }
  bool isArg(Value v) const {
    auto a = dyn_cast<BlockArgument>(v);
    return a && a.getOwner()->getParentOp() == funcOp && isDerived(v);
  }
  bool readsScalar(Operation *op) const;
  /// Clones the computation of derived value `v` at `b`'s insertion point (arguments and
  /// constants stay captured).
  Value cloneInto(OpBuilder &b, Value v, IRMapping &map);
  LogicalResult rewriteGeneric(linalg::GenericOp op);
  InFlightDiagnostic unsupportedUse(Operation *user, Value v);

  func::FuncOp func;
  Operation *funcOp;
  StringRef what;
  llvm::SetVector<Value> derived;
  /// The ops that compute derived values (not arguments), in order.
  SmallVector<Operation *> derivedOps;
};
} // namespace

bool ScalarValues::collect() {
  for (BlockArgument arg : func.getArguments())
    if (isScalarArgumentType(arg.getType()))
      derived.insert(arg);
  if (derived.empty() || !func.getBody().hasOneBlock())
    return !derived.empty();
  for (Operation &op : func.getBody().front()) {
    if (op.getNumRegions() || op.getNumResults() == 0 || !isMemoryEffectFree(&op) ||
        llvm::any_of(op.getResultTypes(), llvm::IsaPred<ShapedType>))
      continue;
    bool fromScalar = false, allScalar = true;
    for (Value operand : op.getOperands()) {
      if (isDerived(operand))
        fromScalar = true;
      else if (isa<ShapedType>(operand.getType()) || !matchPattern(operand, m_Constant()))
        allScalar = false;
    }
    if (!fromScalar || !allScalar)
      continue;
    derivedOps.push_back(&op);
    for (Value r : op.getResults())
      derived.insert(r);
  }
  return true;
}

bool ScalarValues::readsScalar(Operation *op) const {
  if (llvm::any_of(op->getOperands(), [&](Value v) { return isDerived(v); }))
    return true;
  llvm::SetVector<Value> captured;
  getUsedValuesDefinedAbove(op->getRegions(), captured);
  return llvm::any_of(captured, [&](Value v) { return isDerived(v); });
}

LogicalResult ScalarValues::generalizeNamedReaders() {
  // A splat of one is a fill (which is then generalized).
  SmallVector<tensor::SplatOp> splats;
  func.walk([&](tensor::SplatOp op) {
    if (isDerived(op.getInput()) && op.getType().hasStaticShape())
      splats.push_back(op);
  });
  for (tensor::SplatOp op : splats) {
    OpBuilder b(op);
    Value empty = tensor::EmptyOp::create(b, op.getLoc(), op.getType().getShape(),
                                          op.getType().getElementType());
    op.replaceAllUsesWith(
        linalg::FillOp::create(b, op.getLoc(), op.getInput(), empty).getResult(0));
    op.erase();
  }
  SmallVector<linalg::LinalgOp> named;
  func.walk([&](linalg::LinalgOp op) {
    if (!isa<linalg::GenericOp>(op) && readsScalar(op))
      named.push_back(op);
  });
  IRRewriter rewriter(func.getContext());
  for (linalg::LinalgOp op : named) {
    Attribute knobs = op->getAttr(kOpKnobsAttrName);
    rewriter.setInsertionPoint(op);
    FailureOr<linalg::GenericOp> g = linalg::generalizeNamedOp(rewriter, op);
    if (failed(g))
      return op.emitError() << what << ": cannot generalize this op, which reads a scalar argument";
    if (knobs)
      (*g)->setAttr(kOpKnobsAttrName, knobs);
  }
  return success();
}

Value ScalarValues::cloneInto(OpBuilder &b, Value v, IRMapping &map) {
  if (map.contains(v) || isArg(v) || !isDerived(v))
    return map.lookupOrDefault(v);
  Operation *def = v.getDefiningOp();
  for (Value operand : def->getOperands())
    cloneInto(b, operand, map);
  b.clone(*def, map);
  return map.lookup(v);
}

LogicalResult ScalarValues::rewriteGeneric(linalg::GenericOp op) {
  Region &region = op.getRegion();
  Block &body = region.front();
  MLIRContext *ctx = op.getContext();
  unsigned numInputs = op.getNumDpsInputs();
  // A scalar input computed from a scalar argument is computed in the payload instead: its block
  // argument reads the (captured) value, and the input is dropped.
  SmallVector<bool> drop(numInputs, false);
  for (OpOperand *in : op.getDpsInputOperands()) {
    Value v = in->get();
    if (!isDerived(v) || isArg(v))
      continue;
    op.getMatchingBlockArgument(in).replaceAllUsesWith(v);
    drop[in->getOperandNumber()] = true;
  }
  // Derived values the payload captures are computed at its entry.
  llvm::SetVector<Value> captured;
  getUsedValuesDefinedAbove(region, captured);
  OpBuilder b = OpBuilder::atBlockBegin(&body);
  IRMapping map;
  for (Value v : captured)
    if (isDerived(v) && !isArg(v))
      replaceAllUsesInRegionWith(v, cloneInto(b, v, map), region);
  // Scalar arguments it captures become inputs read at every point through `() -> ()`.
  captured.clear();
  getUsedValuesDefinedAbove(region, captured);
  SmallVector<Value> extra;
  for (Value v : captured)
    if (isArg(v))
      extra.push_back(v);
  if (extra.empty() && llvm::none_of(drop, [](bool d) { return d; }))
    return success();

  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  SmallVector<AffineMap> oldMaps = op.getIndexingMapsArray();
  for (unsigned i = 0; i < numInputs; ++i)
    if (!drop[i]) {
      inputs.push_back(op.getDpsInputs()[i]);
      maps.push_back(oldMaps[i]);
    }
  AffineMap toScalar = AffineMap::get(op.getNumLoops(), 0, {}, ctx);
  for (Value v : extra) {
    inputs.push_back(v);
    maps.push_back(toScalar);
  }
  for (unsigned i = numInputs; i < oldMaps.size(); ++i)
    maps.push_back(oldMaps[i]);
  OpBuilder ob(op);
  auto fresh = linalg::GenericOp::create(ob, op.getLoc(), op.getResultTypes(), inputs,
                                         op.getDpsInits(), maps, op.getIteratorTypesArray());
  fresh->setDiscardableAttrs(op->getDiscardableAttrDictionary());
  fresh.getRegion().takeBody(region);
  Block &moved = fresh.getRegion().front();
  for (int i = numInputs - 1; i >= 0; --i)
    if (drop[i])
      moved.eraseArgument(i);
  unsigned kept = inputs.size() - extra.size();
  for (auto [k, v] : llvm::enumerate(extra)) {
    BlockArgument arg = moved.insertArgument(kept + k, v.getType(), v.getLoc());
    replaceAllUsesInRegionWith(v, arg, fresh.getRegion());
  }
  op->replaceAllUsesWith(fresh->getResults());
  op->erase();
  return success();
}

LogicalResult ScalarValues::rewriteGenerics() {
  SmallVector<linalg::GenericOp> generics;
  func.walk([&](linalg::GenericOp op) {
    if (readsScalar(op))
      generics.push_back(op);
  });
  for (linalg::GenericOp op : generics)
    if (failed(rewriteGeneric(op)))
      return failure();
  return success();
}

InFlightDiagnostic ScalarValues::unsupportedUse(Operation *user, Value v) {
  // At the op of the function's body (a pad, not its region's tensor.yield).
  while (user->getParentOp() && user->getParentOp() != funcOp)
    user = user->getParentOp();
  InFlightDiagnostic diag = user->emitError() << what << ": ";
  if (isArg(v))
    diag << "scalar argument #" << cast<BlockArgument>(v).getArgNumber() << " ("
         << v.getType() << ")";
  else
    diag << "a value computed from a scalar argument";
  diag << " is read by '" << user->getName()
       << "': scalar arguments may be read by linalg ops (as an `ins` operand or in their "
          "payloads) and by scalar arith/math ops that only those read";
  return diag;
}

LogicalResult ScalarValues::checkUsesAndRetype(SmallVectorImpl<unsigned> *scalarArgs) {
  for (Operation *op : llvm::reverse(derivedOps)) {
    if (op->use_empty()) {
      op->erase();
      continue;
    }
    OpOperand &use = *op->getUses().begin();
    return unsupportedUse(use.getOwner(), use.get());
  }
  SmallVector<Type> argTypes(func.getArgumentTypes());
  for (BlockArgument arg : func.getArguments()) {
    if (!isDerived(arg))
      continue;
    for (OpOperand &use : arg.getUses()) {
      auto generic = dyn_cast<linalg::GenericOp>(use.getOwner());
      if (!generic || !generic.isDpsInput(&use) ||
          generic->getParentOp() != func.getOperation())
        return unsupportedUse(use.getOwner(), arg);
    }
    // Each reading generic's map for it is `(d...) -> ()` and its block argument the scalar:
    // as valid for the 0-d tensor as for the scalar.
    auto tensor = RankedTensorType::get({}, arg.getType());
    arg.setType(tensor);
    argTypes[arg.getArgNumber()] = tensor;
    if (scalarArgs)
      scalarArgs->push_back(arg.getArgNumber());
  }
  func.setFunctionType(FunctionType::get(func.getContext(), argTypes, func.getResultTypes()));
  return success();
}

LogicalResult scalarArgumentsToTensors(func::FuncOp func, StringRef what,
                                       SmallVectorImpl<unsigned> *scalarArgs) {
  ScalarValues values(func, what);
  if (!values.collect())
    return success();
  if (!func.getBody().hasOneBlock())
    return func.emitError() << what << ": a function with scalar arguments must have one block";
  if (failed(values.generalizeNamedReaders()) || failed(values.rewriteGenerics()))
    return failure();
  return values.checkUsesAndRetype(scalarArgs);
}

LogicalResult tensorsToScalarArguments(func::FuncOp func, ArrayRef<unsigned> args) {
  SmallVector<Type> argTypes(func.getArgumentTypes());
  for (unsigned a : args) {
    BlockArgument arg = func.getArgument(a);
    auto tensor = dyn_cast<RankedTensorType>(arg.getType());
    if (!tensor || tensor.getRank() != 0)
      return func.emitError() << "evo-lower-to-gpu: internal error: task argument #" << a
                              << " is a scalar argument but has type " << arg.getType();
    for (OpOperand &use : arg.getUses()) {
      auto l = dyn_cast<linalg::LinalgOp>(use.getOwner());
      if (!l || !l.isDpsInput(&use))
        return use.getOwner()->emitError()
               << "evo-lower-to-gpu: a scalar argument reaches this op other than as an `ins` "
                  "operand of a linalg op (not supported)";
    }
    arg.setType(tensor.getElementType());
    argTypes[a] = tensor.getElementType();
  }
  func.setFunctionType(FunctionType::get(func.getContext(), argTypes, func.getResultTypes()));
  return success();
}

void passScalarByValue(gpu::GPUFuncOp kernel, unsigned index) {
  BlockArgument arg = kernel.getArgument(index);
  auto memref = cast<MemRefType>(arg.getType());
  Type elt = memref.getElementType();
  SmallVector<memref::LoadOp> loads;
  SmallVector<OpOperand *> others;
  for (OpOperand &use : arg.getUses()) {
    auto load = dyn_cast<memref::LoadOp>(use.getOwner());
    if (load && load.getMemRef() == arg)
      loads.push_back(load);
    else
      others.push_back(&use);
  }
  OpBuilder b = OpBuilder::atBlockBegin(&kernel.getBody().front());
  Location loc = kernel.getLoc();
  Value copy;
  if (!others.empty()) {
    // Reads other than plain loads (a vector transfer, a view) see a private copy.
    auto privateType = MemRefType::get({}, elt);
    copy = memref::AllocaOp::create(b, loc, privateType);
    if (privateType != memref)
      copy = memref::MemorySpaceCastOp::create(b, loc, memref, copy);
    for (OpOperand *use : others)
      use->set(copy);
  }
  arg.setType(elt);
  if (copy)
    memref::StoreOp::create(b, loc, arg, copy, ValueRange());
  for (memref::LoadOp load : loads) {
    load.getResult().replaceAllUsesWith(arg);
    load.erase();
  }
  SmallVector<Type> inputs(kernel.getFunctionType().getInputs());
  inputs[index] = elt;
  kernel.setFunctionType(FunctionType::get(kernel.getContext(), inputs, {}));
}

} // namespace evo
