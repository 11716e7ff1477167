//===- KernelBuilder.cpp - building gpu.func kernels ------------------------===//

#include "KernelBuilder.h"
#include "Emitters.h"
#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace evo {

LoweredTask singleKernel(TaskFamily family, const EmitContext &ctx, std::array<int64_t, 3> grid,
                         std::array<int64_t, 3> block, unsigned numParams) {
  KernelLaunch launch;
  launch.kernel = ctx.kernelName;
  launch.grid = grid;
  launch.block = block;
  for (unsigned i = 0; i < numParams; ++i)
    launch.args.push_back(i);
  LoweredTask lowered;
  lowered.family = family;
  lowered.launches.push_back(std::move(launch));
  return lowered;
}

KernelBuilder::KernelBuilder(gpu::GPUModuleOp module, StringRef name, ArrayRef<MemRefType> params,
                             ArrayRef<MemRefType> workgroup, std::array<int64_t, 3> block,
                             Location loc)
    : b(loc, module.getContext()) {
  b.setInsertionPointToEnd(module.getBody());
  SmallVector<Type> paramTypes(params.begin(), params.end());
  SmallVector<Type> wgTypes(workgroup.begin(), workgroup.end());
  kernel = gpu::GPUFuncOp::create(b, name, b.getFunctionType(paramTypes, {}), wgTypes);
  kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  kernel.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr(
      {static_cast<int32_t>(block[0]), static_cast<int32_t>(block[1]),
       static_cast<int32_t>(block[2])}));
  b.setInsertionPointToStart(&kernel.getBody().front());
}

void KernelBuilder::finish() { gpu::ReturnOp::create(b); }

Value KernelBuilder::idx(int64_t v) { return arith::ConstantIndexOp::create(b, v); }
Value KernelBuilder::threadId(gpu::Dimension d) { return gpu::ThreadIdOp::create(b, d); }
Value KernelBuilder::blockId(gpu::Dimension d) { return gpu::BlockIdOp::create(b, d); }
Value KernelBuilder::add(Value a, Value c) { return arith::AddIOp::create(b, a, c); }
Value KernelBuilder::add(Value a, int64_t c) { return c == 0 ? a : add(a, idx(c)); }
Value KernelBuilder::mul(Value a, int64_t c) { return c == 1 ? a : arith::MulIOp::create(b, a, idx(c)); }
Value KernelBuilder::div(Value a, int64_t c) { return c == 1 ? a : arith::DivUIOp::create(b, a, idx(c)); }
Value KernelBuilder::rem(Value a, int64_t c) { return arith::RemUIOp::create(b, a, idx(c)); }
Value KernelBuilder::lt(Value a, int64_t c) {
  return arith::CmpIOp::create(b, arith::CmpIPredicate::ult, a, idx(c));
}
Value KernelBuilder::eq(Value a, int64_t c) {
  return arith::CmpIOp::create(b, arith::CmpIPredicate::eq, a, idx(c));
}
Value KernelBuilder::constant(TypedAttr attr) { return arith::ConstantOp::create(b, attr); }

SmallVector<Value> KernelBuilder::delinearize(Value linear, ArrayRef<int64_t> sizes) {
  SmallVector<Value> out(sizes.size());
  Value rest = linear;
  for (int i = static_cast<int>(sizes.size()) - 1; i >= 0; --i) {
    if (i == 0) {
      out[i] = rest; // in range by construction
    } else if (sizes[i] == 1) {
      out[i] = idx(0);
    } else {
      out[i] = rem(rest, sizes[i]);
      rest = div(rest, sizes[i]);
    }
  }
  return out;
}

SmallVector<Value> KernelBuilder::applyMap(AffineMap map, ValueRange ivs) {
  SmallVector<Value> out;
  for (AffineExpr e : map.getResults()) {
    if (auto d = dyn_cast<AffineDimExpr>(e)) {
      out.push_back(ivs[d.getPosition()]);
      continue;
    }
    if (auto c = dyn_cast<AffineConstantExpr>(e)) {
      out.push_back(idx(c.getValue()));
      continue;
    }
    out.push_back(affine::expandAffineExpr(b, b.getLoc(), e, ivs, ValueRange()));
  }
  return out;
}

void KernelBuilder::ifThen(Value cond, function_ref<void()> body) {
  auto ifOp = scf::IfOp::create(b, cond, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  body();
}

SmallVector<Value> KernelBuilder::ifThenElse(Value cond, TypeRange resultTypes,
                                             function_ref<SmallVector<Value>()> thenBody,
                                             function_ref<SmallVector<Value>()> elseBody) {
  auto ifOp = scf::IfOp::create(b, resultTypes, cond, /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    scf::YieldOp::create(b, thenBody());
    b.setInsertionPointToStart(ifOp.elseBlock());
    scf::YieldOp::create(b, elseBody());
  }
  return SmallVector<Value>(ifOp.getResults());
}

SmallVector<Value>
KernelBuilder::forLoop(Value lb, Value ub, int64_t step, ValueRange init,
                       function_ref<SmallVector<Value>(Value, ValueRange)> body) {
  auto loop = scf::ForOp::create(b, lb, ub, idx(step), init);
  OpBuilder::InsertionGuard g(b);
  // Without loop-carried values the builder adds an empty scf.yield: replace it.
  if (!loop.getBody()->empty())
    loop.getBody()->getTerminator()->erase();
  b.setInsertionPointToStart(loop.getBody());
  SmallVector<Value> next = body(loop.getInductionVar(), loop.getRegionIterArgs());
  scf::YieldOp::create(b, next);
  return SmallVector<Value>(loop.getResults());
}

SmallVector<Value> blockedForLoop(KernelBuilder &kb, Value lb, Value ub, int64_t step,
                                  int64_t maxTrips, ValueRange identities,
                                  function_ref<Value(unsigned, Value, Value)> combineFn,
                                  function_ref<SmallVector<Value>(Value, ValueRange)> body) {
  if (maxTrips <= kSerialBlockThreshold)
    return kb.forLoop(lb, ub, step, identities, body);
  const int64_t span = step * kSerialBlockTrips;
  return kb.forLoop(lb, ub, span, identities, [&](Value b0, ValueRange outer) {
    Value end = arith::MinUIOp::create(kb.b, kb.add(b0, span), ub);
    SmallVector<Value> partial = kb.forLoop(b0, end, step, identities, body);
    SmallVector<Value> next;
    for (auto [i, acc] : llvm::enumerate(outer))
      next.push_back(combineFn(i, acc, partial[i]));
    return next;
  });
}

Access accessAlong(AffineMap map, unsigned dim) {
  if (!map.isFunctionOfDim(dim))
    return Access::Invariant;
  if (map.getNumResults() == 0)
    return Access::Invariant;
  auto last = dyn_cast<AffineDimExpr>(map.getResults().back());
  if (!last || last.getPosition() != dim)
    return Access::Gather;
  for (AffineExpr e : map.getResults().drop_back())
    if (e.isFunctionOfDim(dim))
      return Access::Gather;
  return Access::Contiguous;
}

SmallVector<Value> laneIndices(KernelBuilder &kb, ArrayRef<Value> ivs, unsigned laneDim,
                               int64_t lane) {
  SmallVector<Value> out(ivs.begin(), ivs.end());
  if (lane != 0)
    out[laneDim] = kb.add(out[laneDim], lane);
  return out;
}

int64_t vectorAlignment(Type elementType, int64_t lanes) {
  int64_t bytes = lanes * (elementType.getIntOrFloatBitWidth() / 8);
  return bytes >= 1 && bytes <= 16 && (bytes & (bytes - 1)) == 0 ? bytes : 0;
}

/// The memref a source reads: its kernel parameter, or for a dense constant a private constant
/// global of the kernels' module (one per distinct value, 16-byte aligned for vector loads).
static Value sourceMemref(KernelBuilder &kb, const ValueSource &src) {
  if (src.kind != ValueSource::Kind::Constant)
    return kb.param(src.buffer);
  auto module = kb.kernel->getParentOfType<gpu::GPUModuleOp>();
  auto type = MemRefType::get(src.dense.getType().getShape(), src.dense.getElementType());
  memref::GlobalOp global;
  unsigned n = 0;
  for (auto g : module.getOps<memref::GlobalOp>()) {
    ++n;
    if (g.getInitialValueAttr() == src.dense && g.getType() == type)
      global = g;
  }
  if (!global) {
    OpBuilder mb(kb.kernel);
    std::string name = (module.getSymName() + "_cst" + Twine(n)).str();
    global = memref::GlobalOp::create(mb, kb.kernel.getLoc(), name, mb.getStringAttr("private"),
                                      type, src.dense, /*constant=*/true,
                                      mb.getI64IntegerAttr(16));
  }
  return memref::GetGlobalOp::create(kb.b, type, global.getSymName());
}

/// One element of a buffer read through views (ValueSource::view): the indices go through each
/// step's map; a pad step clamps them into its source (so the load stays in bounds) and selects
/// its padding value where they were outside. Inner pads decide first: pad(pad(x, a), b) reads b
/// outside the outer pad's source, else a outside the inner one's, else x.
static Value loadThroughView(KernelBuilder &kb, const ValueSource &src, AffineMap map,
                             ArrayRef<Value> ivs) {
  SmallVector<Value> idx = kb.applyMap(map, ivs);
  SmallVector<std::pair<Value, TypedAttr>> guards; // outermost first
  for (const ViewStep &step : src.view) {
    idx = kb.applyMap(step.map, idx);
    if (!step.padValue)
      continue;
    Value inside;
    for (auto [d, size] : llvm::enumerate(step.sourceShape)) {
      Value i = idx[d];
      Value ok = arith::AndIOp::create(
          kb.b, arith::CmpIOp::create(kb.b, arith::CmpIPredicate::sge, i, kb.idx(0)),
          kb.lt(i, size));
      inside = inside ? arith::AndIOp::create(kb.b, inside, ok) : ok;
      idx[d] = arith::MinSIOp::create(kb.b, arith::MaxSIOp::create(kb.b, i, kb.idx(0)),
                                      kb.idx(size - 1));
    }
    guards.push_back({inside, step.padValue});
  }
  Value v = memref::LoadOp::create(kb.b, sourceMemref(kb, src), idx);
  for (auto [inside, pad] : llvm::reverse(guards))
    v = arith::SelectOp::create(kb.b, inside, v, kb.constant(pad));
  return v;
}

SmallVector<Value> loadLanes(KernelBuilder &kb, const ValueSource &src, AffineMap map,
                             Type elementType, ArrayRef<Value> ivs, unsigned laneDim,
                             int64_t lanes, bool streaming) {
  if (src.kind == ValueSource::Kind::Scalar)
    return SmallVector<Value>(lanes, kb.constant(src.scalar));
  if (src.kind == ValueSource::Kind::None) // never read by the payload
    return SmallVector<Value>(lanes, kb.constant(cast<TypedAttr>(kb.b.getZeroAttr(elementType))));
  Value memref = sourceMemref(kb, src);
  if (!src.view.empty() && lanes > 1 &&
      llvm::none_of(src.view, [](const ViewStep &s) { return bool(s.padValue); })) {
    // Views without padding (reshapes, slices) compose to one affine map. Where it reads the
    // lanes contiguously from rows that hold whole vectors (a GroupNorm's expand_shape of its
    // input), the lanes are one vector load from the buffer, as for a plain buffer.
    AffineMap composed = map;
    for (const ViewStep &step : src.view)
      composed = step.map.compose(composed);
    composed = simplifyAffineMap(composed);
    auto type = cast<MemRefType>(memref.getType());
    if (type.getRank() > 0 && type.getShape().back() % lanes == 0 &&
        accessAlong(composed, laneDim) == Access::Contiguous) {
      ValueSource plain = src;
      plain.view.clear();
      return loadLanes(kb, plain, composed, elementType, ivs, laneDim, lanes, streaming);
    }
  }
  if (!src.view.empty()) {
    SmallVector<Value> out;
    for (int64_t l = 0; l < lanes; ++l)
      out.push_back(loadThroughView(kb, src, map, laneIndices(kb, ivs, laneDim, l)));
    return out;
  }
  Access access = lanes == 1 ? Access::Invariant : accessAlong(map, laneDim);
  if (access == Access::Invariant) {
    Value v = memref::LoadOp::create(kb.b, memref, kb.applyMap(map, ivs));
    return SmallVector<Value>(lanes, v);
  }
  if (access == Access::Contiguous) {
    auto vecType = VectorType::get({lanes}, elementType);
    auto load = vector::LoadOp::create(kb.b, vecType, memref, kb.applyMap(map, ivs),
                                       streaming && src.kind == ValueSource::Kind::Buffer);
    if (int64_t align = vectorAlignment(elementType, lanes))
      load.setAlignment(align);
    SmallVector<Value> out;
    for (int64_t l = 0; l < lanes; ++l)
      out.push_back(vector::ExtractOp::create(kb.b, load, l));
    return out;
  }
  SmallVector<Value> out;
  for (int64_t l = 0; l < lanes; ++l)
    out.push_back(memref::LoadOp::create(
        kb.b, memref, kb.applyMap(map, laneIndices(kb, ivs, laneDim, l))));
  return out;
}

void storeLanes(KernelBuilder &kb, unsigned param, AffineMap map, ArrayRef<Value> ivs,
                unsigned laneDim, ArrayRef<Value> values) {
  Value memref = kb.param(param);
  int64_t lanes = values.size();
  if (lanes > 1 && accessAlong(map, laneDim) == Access::Contiguous) {
    Type elementType = values.front().getType();
    auto vec = vector::FromElementsOp::create(kb.b, VectorType::get({lanes}, elementType), values);
    auto store = vector::StoreOp::create(kb.b, vec, memref, kb.applyMap(map, ivs));
    if (int64_t align = vectorAlignment(elementType, lanes))
      store.setAlignment(align);
    return;
  }
  for (int64_t l = 0; l < lanes; ++l)
    memref::StoreOp::create(kb.b, values[l], memref,
                            kb.applyMap(map, laneIndices(kb, ivs, laneDim, l)));
}

/// Re-creates inside the kernel the constants the payload of `op` captures from above: those
/// used by nested regions and by the terminator too (a payload folded to `yield %cst` yields a
/// constant of the task function, which must not leak into the kernel). The analysis rejects
/// captures that are not constants.
static void cloneCapturedConstants(OpBuilder &b, linalg::GenericOp op, IRMapping &map) {
  llvm::SetVector<Value> captured;
  getUsedValuesDefinedAbove(op.getRegion(), captured);
  for (Value v : captured)
    if (!map.contains(v) && matchPattern(v, m_Constant()))
      map.map(v, b.clone(*v.getDefiningOp())->getResult(0));
}

/// A gather: `tensor.extract %t[...]` in a payload, where %t is an argument of the task func (so
/// the kernel's parameter of the same number, TaskAnalysis checks it), becomes a load from that
/// parameter. Indices outside the tensor are clamped into it (as the oracle reads them): a
/// kernel never reads outside its buffers, whatever the index data holds.
static bool cloneGather(OpBuilder &b, Operation &inner, IRMapping &map) {
  auto extract = dyn_cast<tensor::ExtractOp>(inner);
  if (!extract)
    return false;
  auto arg = dyn_cast<BlockArgument>(extract.getTensor());
  if (!arg || !isa<func::FuncOp>(arg.getOwner()->getParentOp()))
    return false;
  Operation *parent = b.getInsertionBlock()->getParentOp();
  auto kernel = isa<gpu::GPUFuncOp>(parent) ? cast<gpu::GPUFuncOp>(parent)
                                            : parent->getParentOfType<gpu::GPUFuncOp>();
  Location loc = inner.getLoc();
  auto type = cast<RankedTensorType>(arg.getType());
  SmallVector<Value> idx;
  for (auto [d, i] : llvm::enumerate(extract.getIndices())) {
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value last = arith::ConstantIndexOp::create(b, loc, type.getDimSize(d) - 1);
    Value v = arith::MaxSIOp::create(b, loc, map.lookupOrDefault(i), zero);
    idx.push_back(arith::MinSIOp::create(b, loc, v, last));
  }
  map.map(extract.getResult(),
          memref::LoadOp::create(b, loc, kernel.getArgument(arg.getArgNumber()), idx));
  return true;
}

void clonePayload(OpBuilder &b, linalg::GenericOp op, ValueRange blockArgs, ValueRange ivs,
                  ArrayRef<Operation *> skip, IRMapping &map) {
  Block &body = op.getRegion().front();
  map.map(body.getArguments(), blockArgs);
  cloneCapturedConstants(b, op, map);
  for (Operation &inner : body.without_terminator()) {
    if (llvm::is_contained(skip, &inner))
      continue;
    if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
      map.map(index.getResult(), ivs[index.getDim()]);
      continue;
    }
    if (cloneGather(b, inner, map))
      continue;
    b.clone(inner, map);
  }
}

SmallVector<Value> payloadResults(linalg::GenericOp op, IRMapping &map) {
  SmallVector<Value> out;
  for (Value v : op.getRegion().front().getTerminator()->getOperands())
    out.push_back(map.lookupOrDefault(v));
  return out;
}

static bool isNarrowFloat(Type t) { return t.isF16() || t.isBF16(); }

/// `v` as type `to` where both are floats (extension or rounding); other values unchanged.
static Value castFloat(OpBuilder &b, Location loc, Value v, Type to) {
  return isa<FloatType>(v.getType()) && isa<FloatType>(to) ? castTo(b, loc, v, to) : v;
}

void clonePayloadWide(OpBuilder &b, linalg::GenericOp op, ValueRange blockArgs, ValueRange ivs,
                      IRMapping &map) {
  Type f32 = b.getF32Type();
  auto widen = [&](Type t) { return isNarrowFloat(t) ? f32 : t; };
  Block &body = op.getRegion().front();
  for (auto [arg, v] : llvm::zip(body.getArguments(), blockArgs))
    map.map(arg, isNarrowFloat(arg.getType()) ? castFloat(b, op.getLoc(), v, f32) : v);
  cloneCapturedConstants(b, op, map);
  for (Operation &inner : body.without_terminator()) {
    Location loc = inner.getLoc();
    if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
      map.map(index.getResult(), ivs[index.getDim()]);
      continue;
    }
    if (cloneGather(b, inner, map))
      continue;
    if (isa<arith::ExtFOp, arith::TruncFOp>(inner)) {
      Value in = map.lookupOrDefault(inner.getOperand(0));
      map.map(inner.getResult(0), castFloat(b, loc, in, widen(inner.getResult(0).getType())));
      continue;
    }
    if (auto cst = dyn_cast<arith::ConstantOp>(inner)) {
      if (auto f = dyn_cast<FloatAttr>(cst.getValue()); f && isNarrowFloat(f.getType())) {
        // Exact: f16 and bf16 values are f32 values.
        map.map(cst.getResult(), arith::ConstantOp::create(
                                     b, loc, FloatAttr::get(f32, f.getValue().convertToFloat())));
        continue;
      }
    }
    // Arithmetic on f16/bf16 (and i1 conditions), outside conversions: the same op on f32.
    auto narrowOrNotFloat = [](Type t) { return isNarrowFloat(t) || !isa<FloatType>(t); };
    bool promotable =
        isa<arith::ArithDialect, math::MathDialect>(inner.getDialect()) &&
        inner.getNumRegions() == 0 && !isa<CastOpInterface>(inner) &&
        llvm::all_of(inner.getOperandTypes(), narrowOrNotFloat) &&
        llvm::all_of(inner.getResultTypes(), narrowOrNotFloat) &&
        llvm::any_of(inner.getOperandTypes(), isNarrowFloat) &&
        llvm::all_of(inner.getOperandTypes(), [](Type t) { return t.isIntOrIndexOrFloat(); });
    if (promotable) {
      SmallVector<Value> operands;
      for (Value x : inner.getOperands()) {
        Value m = map.lookupOrDefault(x);
        operands.push_back(isNarrowFloat(x.getType()) ? castFloat(b, loc, m, f32) : m);
      }
      SmallVector<Type> types;
      for (Type t : inner.getResultTypes())
        types.push_back(widen(t));
      OperationState state(loc, inner.getName(), operands, types);
      state.propertiesAttr = inner.getPropertiesAsAttribute();
      state.addAttributes(llvm::to_vector(inner.getDiscardableAttrs()));
      Operation *wide = b.create(state);
      map.map(inner.getResults(), wide->getResults());
      continue;
    }
    // Anything else computes in its declared types: round what it reads (operands, and values
    // its regions use from the payload) back to them.
    llvm::SetVector<Value> reads(inner.getOperands().begin(), inner.getOperands().end());
    getUsedValuesDefinedAbove(inner.getRegions(), reads);
    for (Value x : reads) {
      Value m = map.lookupOrDefault(x);
      if (m.getType() != x.getType())
        map.map(x, castFloat(b, loc, m, x.getType()));
    }
    b.clone(inner, map);
  }
}

void storeOutput(KernelBuilder &kb, const GenericTask &t, unsigned o, ArrayRef<Value> ivs,
                 unsigned laneDim, ArrayRef<Value> values, bool wide) {
  OpBuilder &b = kb.b;
  Location loc = kb.b.getLoc();
  linalg::GenericOp op = t.op;
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(o));
  const int64_t lanes = values.size();
  Type stored = t.params[t.outputs[o]].getElementType();
  if (o != 0 || t.epilogue.empty()) {
    SmallVector<Value> out;
    for (Value v : values)
      out.push_back(castTo(b, loc, v, stored));
    storeLanes(kb, t.outputs[o], outMap, ivs, laneDim, out);
    return;
  }
  // The epilogue's loops are the output's dimensions: its loop indices are the output indices.
  std::optional<unsigned> eLane;
  for (auto [i, e] : llvm::enumerate(outMap.getResults()))
    if (auto d = dyn_cast<AffineDimExpr>(e); d && d.getPosition() == laneDim)
      eLane = i;
  if (lanes > 1 && !eLane) {
    for (int64_t l = 0; l < lanes; ++l)
      storeOutput(kb, t, o, laneIndices(kb, ivs, laneDim, l), laneDim, {values[l]}, wide);
    return;
  }
  const unsigned lane = eLane.value_or(0);
  SmallVector<Value> eIvs = kb.applyMap(outMap, ivs);
  SmallVector<Value> cur;
  for (Value v : values)
    cur.push_back(wide ? v : castTo(b, loc, v, t.resultElementType(o)));
  for (const EpilogueStep &step : t.epilogue.steps) {
    linalg::GenericOp g = step.op;
    SmallVector<AffineMap> maps = g.getIndexingMapsArray();
    SmallVector<SmallVector<Value>> args;
    for (auto [i, in] : llvm::enumerate(g.getDpsInputs()))
      args.push_back(step.chained[i] ? cur
                                     : loadLanes(kb, step.inputs[i], maps[i],
                                                 getElementTypeOrSelf(in.getType()), eIvs, lane,
                                                 lanes));
    Type initElt = getElementTypeOrSelf(g.getDpsInits()[0].getType());
    if (step.initChained)
      args.push_back(cur);
    else if (step.initRead)
      args.push_back(loadLanes(kb, step.init, maps.back(), initElt, eIvs, lane, lanes));
    else
      args.push_back(SmallVector<Value>(
          lanes, kb.constant(cast<TypedAttr>(b.getZeroAttr(initElt)))));
    SmallVector<Value> next;
    for (int64_t l = 0; l < lanes; ++l) {
      SmallVector<Value> blockArgs;
      for (auto &a : args)
        blockArgs.push_back(a[l]);
      SmallVector<Value> at = laneIndices(kb, eIvs, lane, l);
      IRMapping map;
      if (wide)
        clonePayloadWide(b, g, blockArgs, at, map);
      else
        clonePayload(b, g, blockArgs, at, {}, map);
      next.push_back(payloadResults(g, map).front());
    }
    cur = std::move(next);
  }
  for (Value &v : cur)
    v = castFloat(b, loc, v, stored);
  storeLanes(kb, t.outputs[o], AffineMap::getMultiDimIdentityMap(eIvs.size(), op.getContext()),
             eIvs, lane, cur);
}

Type accumulatorType(Type elementType) {
  if (elementType.isF16() || elementType.isBF16())
    return Float32Type::get(elementType.getContext());
  return elementType;
}

Value castTo(OpBuilder &b, Location loc, Value v, Type to) {
  Type from = v.getType();
  if (from == to)
    return v;
  if (isa<FloatType>(from) && isa<FloatType>(to))
    return from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth()
               ? Value(arith::ExtFOp::create(b, loc, to, v))
               : Value(arith::TruncFOp::create(b, loc, to, v));
  llvm_unreachable("accumulator casts are float-only");
}

Value combinerIdentity(OpBuilder &b, Location loc, Operation *combiner, Type accType) {
  std::optional<TypedAttr> neutral = arith::getNeutralElement(combiner);
  assert(neutral && "combiner without a neutral element");
  if (auto f = dyn_cast<FloatAttr>(*neutral)) {
    APFloat value = f.getValue();
    bool losesInfo = false;
    value.convert(cast<FloatType>(accType).getFloatSemantics(), APFloat::rmNearestTiesToEven,
                  &losesInfo);
    return arith::ConstantOp::create(b, loc, FloatAttr::get(accType, value));
  }
  return arith::ConstantOp::create(b, loc, *neutral);
}

Value combine(OpBuilder &b, Location loc, Operation *combiner, Value lhs, Value rhs) {
  OperationState state(loc, combiner->getName(), ValueRange{lhs, rhs}, TypeRange{lhs.getType()});
  // Keep flags such as fastmath; the result type follows the (possibly wider) operands.
  state.propertiesAttr = combiner->getPropertiesAsAttribute();
  state.addAttributes(llvm::to_vector(combiner->getDiscardableAttrs()));
  return b.create(state)->getResult(0);
}

Value warpReduce(KernelBuilder &kb, Value v, function_ref<Value(Value, Value)> combineFn) {
  for (int32_t offset = 16; offset >= 1; offset /= 2) {
    auto shuffle = gpu::ShuffleOp::create(kb.b, v, offset, 32, gpu::ShuffleMode::XOR);
    v = combineFn(v, shuffle.getShuffleResult());
  }
  return v;
}

Value blockReduce(KernelBuilder &kb, Value v, Value smem, int64_t blockSize, Value identity,
                  function_ref<Value(Value, Value)> combineFn) {
  int64_t warps = blockSize / 32;
  Value tid = kb.threadId();
  gpu::BarrierOp::create(kb.b);
  v = warpReduce(kb, v, combineFn);
  if (warps == 1)
    return v;
  kb.ifThen(kb.eq(kb.rem(tid, 32), 0),
            [&] { memref::StoreOp::create(kb.b, v, smem, ValueRange{kb.div(tid, 32)}); });
  gpu::BarrierOp::create(kb.b);
  // Every thread folds the per-warp partials itself (broadcast reads): no third barrier.
  Value acc = identity;
  for (int64_t w = 0; w < warps; ++w)
    acc = combineFn(acc, memref::LoadOp::create(kb.b, smem, ValueRange{kb.idx(w)}));
  return acc;
}

int64_t ReductionGroups::width() const {
  switch (strategy) {
  case ReductionStrategy::Thread:
    return 1;
  case ReductionStrategy::Warp:
    return 32;
  case ReductionStrategy::Block:
    return blockSize;
  }
  llvm_unreachable("unknown reduction strategy");
}

int64_t ReductionGroups::pointsPerBlock() const {
  switch (strategy) {
  case ReductionStrategy::Thread:
    return blockSize;
  case ReductionStrategy::Warp:
    return blockSize / 32;
  case ReductionStrategy::Block:
    return 1;
  }
  llvm_unreachable("unknown reduction strategy");
}

bool ReductionGroups::needsWorkgroupBuffer() const {
  return strategy == ReductionStrategy::Block && blockSize > 32;
}

std::pair<Value, Value> ReductionGroups::pointAndLane(KernelBuilder &kb, Value tid,
                                                      Value bid) const {
  Value point, lane;
  switch (strategy) {
  case ReductionStrategy::Thread:
    point = kb.add(kb.mul(bid, blockSize), tid);
    lane = kb.idx(0);
    break;
  case ReductionStrategy::Warp:
    point = kb.add(kb.mul(bid, blockSize / 32), kb.div(tid, 32));
    lane = kb.rem(tid, 32);
    break;
  case ReductionStrategy::Block:
    point = bid;
    lane = tid;
    break;
  }
  return {point, lane};
}

Value ReductionGroups::reduce(KernelBuilder &kb, Value v, function_ref<Value()> smem,
                              function_ref<Value()> identity,
                              function_ref<Value(Value, Value)> combineFn) const {
  switch (strategy) {
  case ReductionStrategy::Thread:
    return v;
  case ReductionStrategy::Warp:
    return warpReduce(kb, v, combineFn);
  case ReductionStrategy::Block:
    if (!needsWorkgroupBuffer())
      return warpReduce(kb, v, combineFn);
    Value buffer = smem();
    return blockReduce(kb, v, buffer, blockSize, identity(), combineFn);
  }
  llvm_unreachable("unknown reduction strategy");
}

MemRefType workgroupBuffer(MLIRContext *ctx, int64_t n, Type elementType) {
  return MemRefType::get({n}, elementType, MemRefLayoutAttrInterface(),
                         gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup));
}

} // namespace evo
