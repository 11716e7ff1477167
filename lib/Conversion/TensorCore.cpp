//===- TensorCore.cpp - what the tensor-core matmul emitters share --------------===//

#include "TensorCore.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

using namespace mlir;

namespace evo {

bool isMultiplyAdd(const GenericTask &t) {
  if (!t.allCombinersKnown() || t.combiners.size() != 1 ||
      !isa<arith::AddFOp>(t.combiners[0].op))
    return false;
  Value v = t.combiners[0].op->getOperand(t.combiners[0].valueOperand);
  auto mul = v.getDefiningOp<arith::MulFOp>();
  if (!mul)
    return false;
  Block *body = linalg::GenericOp(t.op).getBody();
  auto argOf = [&](Value x) -> int {
    if (auto ext = x.getDefiningOp<arith::ExtFOp>())
      x = ext.getIn();
    auto arg = dyn_cast<BlockArgument>(x);
    return arg && arg.getOwner() == body ? int(arg.getArgNumber()) : -1;
  };
  int a = argOf(mul.getLhs()), b = argOf(mul.getRhs());
  return (a == 0 && b == 1) || (a == 1 && b == 0);
}

std::optional<SmallVector<unsigned>> dimsOf(AffineMap map) {
  if (!map.isProjectedPermutation())
    return std::nullopt;
  SmallVector<unsigned> dims;
  for (AffineExpr e : map.getResults())
    dims.push_back(cast<AffineDimExpr>(e).getPosition());
  return dims;
}

LogicalResult matchTensorCoreOperands(const GenericTask &t, unsigned ia, unsigned ib,
                                      TensorCoreGemm &g,
                                      function_ref<InFlightDiagnostic()> bad) {
  g.t = &t;
  if (!isMultiplyAdd(t) || linalg::GenericOp(t.op).hasIndexSemantics() || t.outputs.size() != 1)
    return bad() << "needs a payload of the form `out + a * b`";
  if (!t.inputs[ia].isPlainBuffer() || !t.inputs[ib].isPlainBuffer())
    return bad() << "needs both operands in memory, not read through a view (tensor.pad, a "
                    "reshape or a slice)";
  g.pa = t.inputs[ia].buffer;
  g.pb = t.inputs[ib].buffer;
  g.pc = t.outputs[0];
  g.eltA = t.params[g.pa].getElementType();
  g.eltB = t.params[g.pb].getElementType();
  // The contraction's own result type (an epilogue may store another one: storeOutput).
  g.outElt = t.resultElementType(0);
  if (!(g.outElt.isF32() || g.outElt.isF16() || g.outElt.isBF16()))
    return bad() << "needs an f32, f16 or bf16 result, got " << g.outElt;
  if (!t.params[g.pa].getLayout().isIdentity() || !t.params[g.pb].getLayout().isIdentity() ||
      !t.params[g.pc].getLayout().isIdentity())
    return bad() << "needs row-major buffers";
  return success();
}

LogicalResult matchTensorCoreLayout(const GenericTask &t, const GemmView &view, TensorCoreGemm &g,
                                    function_ref<InFlightDiagnostic()> bad) {
  g.mD = view.m[0];
  g.nD = view.n[0];
  g.kD = view.k[0];
  SmallVector<AffineMap> maps = linalg::GenericOp(t.op).getIndexingMapsArray();
  g.batch.assign(view.batch.begin(), view.batch.end());
  auto expect = [&](AffineMap map, ArrayRef<unsigned> inner) {
    std::optional<SmallVector<unsigned>> d = dimsOf(map);
    SmallVector<unsigned> want(g.batch);
    want.append(inner.begin(), inner.end());
    return d && *d == want;
  };
  if (!expect(maps[view.a], {g.mD, g.kD}))
    return bad() << "needs A laid out [batch][m][k] (K contiguous)";
  g.bKMajor = expect(maps[view.b], {g.nD, g.kD});
  if (!g.bKMajor && !expect(maps[view.b], {g.kD, g.nD}))
    return bad() << "needs B laid out [batch][k][n] or [batch][n][k]";
  if (!expect(maps[2], {g.mD, g.nD}))
    return bad() << "needs C laid out [batch][m][n]";
  g.M = t.loopSizes[g.mD];
  g.N = t.loopSizes[g.nD];
  g.K = t.loopSizes[g.kD];
  g.B = g.batch.empty() ? 1 : t.loopSizes[g.batch[0]];
  return success();
}

Ptx::Ptx(ImplicitLocOpBuilder &b)
    : b(b), i32(b.getI32Type()), i64(b.getI64Type()),
      sharedPtr(LLVM::LLVMPointerType::get(b.getContext(), 3)),
      genericPtr(LLVM::LLVMPointerType::get(b.getContext())) {}

Value Ptx::c32(int64_t v) { return arith::ConstantIntOp::create(b, v, 32); }
Value Ptx::c64(int64_t v) { return arith::ConstantIntOp::create(b, v, 64); }
Value Ptx::to32(Value index) { return arith::IndexCastOp::create(b, i32, index); }
Value Ptx::to64(Value index) { return arith::IndexCastOp::create(b, i64, index); }
Value Ptx::shared(Value addr) { return LLVM::IntToPtrOp::create(b, sharedPtr, addr); }
Value Ptx::clusterShared(Value addr) {
  return LLVM::AddrSpaceCastOp::create(b, LLVM::LLVMPointerType::get(b.getContext(), 7),
                                       shared(addr));
}
Value Ptx::add(Value a, int64_t c) { return c ? arith::AddIOp::create(b, a, c64(c)) : a; }
Value Ptx::add(Value a, Value c) { return arith::AddIOp::create(b, a, c); }
Value Ptx::mul(Value a, int64_t c) { return arith::MulIOp::create(b, a, c64(c)); }
Value Ptx::address(Value memref) {
  return to64(memref::ExtractAlignedPointerAsIndexOp::create(b, memref));
}
Value Ptx::globalPtr(Value memref) {
  return LLVM::IntToPtrOp::create(b, genericPtr, address(memref));
}
Value Ptx::dynamicSharedBase(int64_t align) {
  MLIRContext *mctx = b.getContext();
  auto smemType = MemRefType::get({ShapedType::kDynamic}, b.getI8Type(), AffineMap(),
                                  gpu::AddressSpaceAttr::get(mctx, gpu::AddressSpace::Workgroup));
  Value dyn = gpu::DynamicSharedMemoryOp::create(b, smemType);
  Value raw = address(dyn);
  return arith::AndIOp::create(b, add(raw, align - 1), c64(~(align - 1)));
}

std::pair<Value, Value> groupedTile(KernelBuilder &kb, Value pid, int64_t tilesM, int64_t tilesN) {
  ImplicitLocOpBuilder &b = kb.b;
  const int64_t groupM = std::min<int64_t>(8, tilesM), perGroup = groupM * tilesN;
  Value firstM = kb.mul(kb.div(pid, perGroup), groupM);
  // The last group may be shorter: min(tilesM - firstM, groupM) rows of tiles.
  Value rowsHere =
      arith::MinUIOp::create(b, arith::SubIOp::create(b, kb.idx(tilesM), firstM), kb.idx(groupM));
  Value inGroup = kb.rem(pid, perGroup);
  Value mTile = kb.add(firstM, arith::RemUIOp::create(b, inGroup, rowsHere));
  Value nTile = arith::DivUIOp::create(b, inGroup, rowsHere);
  return {mTile, nTile};
}

/// One or two adjacent elements of C from f32 accumulators.
static void storeElements(KernelBuilder &kb, const TensorCoreGemm &g, SmallVector<Value> ivs,
                          Value col, ArrayRef<Value> values) {
  ImplicitLocOpBuilder &b = kb.b;
  const GenericTask &t = *g.t;
  ivs[g.nD] = col;
  SmallVector<Value> out(values.begin(), values.end());
  if (t.inits[0].kind != ValueSource::Kind::None) {
    AffineMap outMap = linalg::GenericOp(t.op).getIndexingMapsArray()[2];
    SmallVector<Value> init0 =
        loadLanes(kb, t.inits[0], outMap, g.outElt, ivs, g.nD, int64_t(values.size()));
    for (auto [o, i] : llvm::zip(out, init0))
      o = combine(b, b.getLoc(), t.combiners[0].op, castTo(b, b.getLoc(), i, b.getF32Type()), o);
  }
  storeOutput(kb, t, 0, ivs, g.nD, out, /*wide=*/true);
}

void storeAccumulatorPair(KernelBuilder &kb, const TensorCoreGemm &g, ArrayRef<Value> ivs,
                          Value col, Value v0, Value v1, bool colsFull) {
  ImplicitLocOpBuilder &b = kb.b;
  SmallVector<Value> at(ivs.begin(), ivs.end());
  auto inside = [&](Value c) {
    return arith::CmpIOp::create(b, arith::CmpIPredicate::ult, c, kb.idx(g.N));
  };
  if (g.N % 2 == 0) { // N even: a pair is in or out together.
    if (colsFull)
      storeElements(kb, g, at, col, {v0, v1});
    else
      kb.ifThen(inside(col), [&] { storeElements(kb, g, at, col, {v0, v1}); });
    return;
  }
  for (auto [c, v] : {std::pair(col, v0), std::pair(kb.add(col, 1), v1)}) {
    if (colsFull)
      storeElements(kb, g, at, c, {v});
    else
      kb.ifThen(inside(c), [&] { storeElements(kb, g, at, c, {v}); });
  }
}

} // namespace evo
