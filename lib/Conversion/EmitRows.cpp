//===- EmitRows.cpp - whole row-wise functions in one kernel ------------------===//
//
// A "row program" is a function whose ops all work on rows of one shape [R..., C]: elementwise
// ops on full tensors (with row vectors [R...], column vectors [C] and scalars broadcast into
// them), reductions over the last dimension producing row vectors, elementwise ops on row
// vectors, and softmax over the last dimension. Softmax, LayerNorm and RMSNorm are row programs.
// Lowered op by op they take one kernel and one pass over memory per reduction; here the whole
// function is one kernel in which a thread, a warp or a block walks each row:
//   * a reduction folds the payload over the row (vector_width elements per access), then the
//     threads of the row combine their partials (shuffles, shared memory);
//   * full-tensor values are computed on demand from the inputs, the row values known so far and
//     the column vectors;
//   * with cache_row, the values of each thread's part of the row are kept in registers across
//     passes, so the inputs are read once and the outputs written once (the fast form); without
//     it, every pass re-reads the inputs (each pass is an scf.for over the row).
// With row_split S > 1, each row is cut into S slices, one per thread/warp/block (gridDim.y = S),
// and the program runs as one kernel per pass: a reduction is computed by the kernel of its
// level (the number of reductions its inputs depend on, in sequence) as one partial per slice in
// a scratch buffer [S, rows]; every later kernel combines the S partials in slice order (the
// same value in every kernel, no atomics); the last kernel writes each slice of the outputs.
//
//===----------------------------------------------------------------------===//

#include "RowPrograms.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace evo {

using namespace rows;

LogicalResult RowEmitter::validate() {
  Operation *anchor = task;
  vw = k.vectorWidth;
  // Vector accesses run along the last dimension; a chunk of vw columns stays inside it.
  // Only buffers read or written along the row may take vector accesses (full tensors, column
  // vectors, arguments read through other maps), not row vectors (a cross-entropy's i64 class
  // indices, read once per row).
  SmallVector<MemRefType> alongRow;
  for (MemRefType t : params)
    if (t.getShape() != ArrayRef<int64_t>(shape.rowDims) ||
        t.getShape() == ArrayRef<int64_t>(shape.colDims))
      alongRow.push_back(t);
  if (failed(checkVectorWidth(anchor, vw, shape.colDims.back(), alongRow,
                              shape.colDims.size() == 1 ? "row length" : "row's last dimension")))
    return failure();
  width = groups.width();
  numChunks = shape.cols / vw;
  int64_t widest = 0;
  for (MemRefType t : params)
    if (t.getRank() == fullRank() && t.getElementType().isIntOrFloat())
      widest = std::max<int64_t>(widest, t.getElementType().getIntOrFloatBitWidth() / 8);
  if (widest)
    rowElementBytes = widest;
  split = k.rowSplit;
  if (numChunks % split)
    return task.emitError() << "row_split=" << split << " does not divide the " << numChunks
                            << " chunks of vector_width=" << vw << " elements of the row ("
                            << shape.cols << ")";
  sliceChunks = numChunks / split;
  if (k.cacheRow) {
    if (sliceChunks % width)
      return task.emitError() << "cache_row needs the row (" << shape.cols
                              << (split > 1 ? ", per slice of row_split" : "")
                              << (split > 1 ? "=" + std::to_string(split) : "")
                              << ") to be a multiple of vector_width x threads per row (" << vw
                              << " x " << width << ")";
    if (sliceChunks / width * vw > 64)
      return task.emitError() << "cache_row would keep " << sliceChunks / width * vw
                              << " elements per thread in registers (at most 64)";
  }
  return success();
}

SmallVector<Value> RowEmitter::ivsAt(Value col) {
  SmallVector<Value> ivs(rowIdx.begin(), rowIdx.end());
  ivs.append(colIdx(col));
  return ivs;
}

SmallVector<Value> RowEmitter::colIdx(Value col) {
  if (shape.colDims.size() == 1)
    return {col};
  return kb->delinearize(col, shape.colDims);
}

SmallVector<Value> RowEmitter::colLanes(Value v, Chunk &c) {
  Type elt = getElementTypeOrSelf(v.getType());
  AffineMap id = AffineMap::getMultiDimIdentityMap(colRank(), task.getContext());
  if (v.getDefiningOp()) {
    Attribute cst = scalarConstant(v);
    if (auto dense = dyn_cast<DenseElementsAttr>(cst)) { // weights: read per column
      ValueSource src;
      src.kind = ValueSource::Kind::Constant;
      src.dense = dense;
      return loadLanes(*kb, src, id, elt, colIdx(c.col0), colRank() - 1, vw);
    }
    // A splat constant or a fill: the same in every lane.
    return SmallVector<Value>(vw, kb->constant(cast<TypedAttr>(cst)));
  }
  ValueSource src{ValueSource::Kind::Buffer, cast<BlockArgument>(v).getArgNumber(), {}};
  return loadLanes(*kb, src, id, elt, colIdx(c.col0), colRank() - 1, vw);
}

Value RowEmitter::rowValue(Value v) {
  auto it = rows.find(v);
  if (it != rows.end())
    return it->second;
  // Arguments and constants are materialized once, before the first pass over the row, so
  // that every pass (each in its own loop without cache_row) can use them.
  OpBuilder::InsertionGuard guard(kb->b);
  kb->b.setInsertionPoint(preamble);
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    bool scalar = cast<ShapedType>(v.getType()).getRank() == 0;
    Value x = memref::LoadOp::create(kb->b, kb->param(arg.getArgNumber()),
                                     scalar ? ValueRange() : ValueRange(rowIdx));
    rows[v] = x;
    return x;
  }
  auto typed = dyn_cast_or_null<TypedAttr>(scalarConstant(v));
  assert(typed && "row value used before it was computed");
  return rows[v] = kb->constant(typed);
}

SmallVector<Value> RowEmitter::full(Value v, Chunk &c) {
  auto it = c.memo.find(v);
  if (it != c.memo.end())
    return it->second;
  SmallVector<Value> lanes;
  Type elt = getElementTypeOrSelf(v.getType());
  unsigned n = fullRank();
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    ValueSource src{ValueSource::Kind::Buffer, arg.getArgNumber(), {}};
    lanes = loadLanes(*kb, src, AffineMap::getMultiDimIdentityMap(n, task.getContext()), elt,
                      ivsAt(c.col0), n - 1, vw);
  } else if (v.getDefiningOp() && isViewOp(v.getDefiningOp())) {
    // An argument through views (isArgumentView): one load per lane, through the views' maps.
    lanes = loadLanes(*kb, resolveValueSource(v, task),
                      AffineMap::getMultiDimIdentityMap(n, task.getContext()), elt, ivsAt(c.col0),
                      n - 1, vw);
  } else if (auto s = v.getDefiningOp<linalg::SoftmaxOp>()) {
    auto [max, inv] = softmaxStats.lookup(s);
    Type ct = max.getType();
    for (Value x : full(s.getInput(), c)) {
      Value e = math::ExpOp::create(kb->b, arith::SubFOp::create(kb->b, castTo(kb->b, loc, x, ct), max));
      lanes.push_back(castTo(kb->b, loc, arith::MulFOp::create(kb->b, e, inv), elt));
    }
  } else if (auto g = v.getDefiningOp<linalg::GenericOp>()) {
    SmallVector<SmallVector<Value>> results(g.getNumResults());
    clonePerLane(g, c, {}, [&](IRMapping &map) {
      for (auto [r, y] : llvm::enumerate(payloadResults(g, map)))
        results[r].push_back(y);
    });
    for (auto [r, res] : llvm::enumerate(g.getResults()))
      c.memo[res] = results[r];
    return c.memo[v];
  } else {
    lanes.assign(vw, kb->constant(cast<TypedAttr>(scalarConstant(v))));
  }
  c.memo[v] = lanes;
  return lanes;
}

void RowEmitter::clonePerLane(linalg::GenericOp g, Chunk &c, ArrayRef<Operation *> skip,
                              llvm::function_ref<void(IRMapping &)> use) {
  unsigned n = fullRank();
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  SmallVector<SmallVector<Value>> operands;
  for (auto [i, in] : llvm::enumerate(g.getDpsInputs())) {
    Role r = roleOf(maps[i], n, colRank(), false);
    if (r == Role::None) { // a function argument through its own map (matchRowProgram)
      SmallVector<Value> &lanes = c.mapped[{in, maps[i]}];
      if (lanes.empty()) {
        ValueSource src{ValueSource::Kind::Buffer, cast<BlockArgument>(in).getArgNumber(), {}};
        lanes = loadLanes(*kb, src, maps[i], getElementTypeOrSelf(in.getType()), ivsAt(c.col0),
                          n - 1, vw);
      }
      operands.push_back(lanes);
    } else if (r == Role::Full)
      operands.push_back(full(in, c));
    else if (r == Role::Col)
      operands.push_back(colLanes(in, c));
    else
      operands.push_back(SmallVector<Value>(vw, rowValue(in)));
  }
  // linalg.index reads the full tensor's indices of the lane (the one-hot pick of a
  // cross-entropy's target class).
  SmallVector<Value> ivs;
  if (g.hasIndexSemantics())
    ivs = ivsAt(c.col0);
  for (int64_t l = 0; l < vw; ++l) {
    SmallVector<Value> args;
    for (auto &o : operands)
      args.push_back(o[l]);
    for (Value init : g.getDpsInits())
      args.push_back(kb->constant(cast<TypedAttr>(
          kb->b.getZeroAttr(getElementTypeOrSelf(init.getType()))))); // never read
    IRMapping map;
    clonePayload(kb->b, g, args, ivs.empty() ? SmallVector<Value>() : laneIndices(*kb, ivs, n - 1, l),
                 skip, map);
    use(map);
  }
}

void RowEmitter::forEachChunk(llvm::function_ref<void(Chunk &)> body) {
  if (k.cacheRow) {
    for (Chunk &c : cached)
      body(c);
    return;
  }
  kb->forLoop(chunkBegin(), chunkEnd(), width, {}, [&](Value chunk, ValueRange) {
    Chunk c(kb->mul(chunk, vw));
    body(c);
    return SmallVector<Value>{};
  });
}

Value RowEmitter::chunkBegin() { return split == 1 ? lane : kb->add(lane, sliceBase); }

Value RowEmitter::chunkEnd() {
  return split == 1 ? kb->idx(numChunks) : kb->add(sliceBase, sliceChunks);
}

Value RowEmitter::reduceRow(unsigned level, Type acc, Value identity,
                            function_ref<Value(Value, Value)> combineFn,
                            function_ref<SmallVector<Value>(Chunk &)> produce) {
  unsigned id = nextPartial++;
  Value partials = split > 1 ? kb->param(params.size() + id) : Value();
  if (split > 1 && level > pass)
    return identity; // a later kernel's reduction: nothing this kernel computes uses it
  if (split > 1 && level < pass) {
    // An earlier kernel's partials, combined in slice order: the same value in every kernel.
    return kb
        ->forLoop(kb->idx(0), kb->idx(split), 1, {identity},
                  [&](Value s, ValueRange total) {
                    Value x = memref::LoadOp::create(kb->b, partials, ValueRange{s, row});
                    return SmallVector<Value>{combineFn(total[0], x)};
                  })
        .front();
  }
  Value partial;
  if (k.cacheRow) {
    // vw independent chains over the cached chunks, then folded.
    SmallVector<Value> chains(vw, identity);
    for (Chunk &c : cached) {
      SmallVector<Value> xs = produce(c);
      for (int64_t l = 0; l < vw; ++l)
        chains[l] = combineFn(chains[l], castTo(kb->b, loc, xs[l], acc));
    }
    partial = chains[0];
    for (int64_t l = 1; l < vw; ++l)
      partial = combineFn(partial, chains[l]);
  } else {
    SmallVector<Value> init(vw, identity);
    // A long row walked by one thread (the naive l2norm: 65535 columns) accumulates in blocks:
    // a two-level sum (blockedForLoop).
    SmallVector<Value> chains = blockedForLoop(
        *kb, chunkBegin(), chunkEnd(), width, ceilDiv(sliceChunks, width), init,
        [&](unsigned, Value a, Value b) { return combineFn(a, b); },
        [&](Value chunk, ValueRange carried) {
          Chunk c(kb->mul(chunk, vw));
          SmallVector<Value> xs = produce(c);
          SmallVector<Value> next;
          for (int64_t l = 0; l < vw; ++l)
            next.push_back(combineFn(carried[l], castTo(kb->b, loc, xs[l], acc)));
          return next;
        });
    partial = chains[0];
    for (int64_t l = 1; l < vw; ++l)
      partial = combineFn(partial, chains[l]);
  }
  // Each block reduction gets its own shared buffer: no reuse hazards between passes.
  Value total = groups.reduce(
      *kb, partial, [&] { return kb->workgroup(nextSmem++); }, [&] { return identity; },
      combineFn);
  if (split == 1)
    return total;
  // This kernel's reduction: the slice's partial, for the later kernels.
  auto store = [&] {
    memref::StoreOp::create(kb->b, total, partials, ValueRange{slice, row});
  };
  if (groups.strategy == ReductionStrategy::Thread)
    store();
  else
    kb->ifThen(kb->eq(lane, 0), store);
  return identity;
}

LogicalResult RowEmitter::visit(Operation &op) {
  if (auto s = dyn_cast<linalg::SoftmaxOp>(op)) {
    Type ct = accumulatorType(getElementTypeOrSelf(s.getInput().getType()));
    Value negInf = kb->constant(FloatAttr::get(
        ct, APFloat::getInf(cast<FloatType>(ct).getFloatSemantics(), /*Negative=*/true)));
    Value zero = kb->constant(FloatAttr::get(ct, 0.0));
    auto maxFn = [&](Value a, Value b) -> Value { return arith::MaximumFOp::create(kb->b, a, b); };
    auto addFn = [&](Value a, Value b) -> Value { return arith::AddFOp::create(kb->b, a, b); };
    unsigned level = passOf.lookup(s);
    if (onlineSoftmax()) {
      auto [max, sum] = onlineMaxSum(ct, [&](Chunk &c) { return full(s.getInput(), c); });
      softmaxStats[s] = {max, arith::DivFOp::create(kb->b, kb->constant(FloatAttr::get(ct, 1.0)), sum)};
      return success();
    }
    Value max =
        reduceRow(level, ct, negInf, maxFn, [&](Chunk &c) { return full(s.getInput(), c); });
    Value sum = reduceRow(level + 1, ct, zero, addFn, [&](Chunk &c) {
      SmallVector<Value> es;
      for (Value x : full(s.getInput(), c))
        es.push_back(math::ExpOp::create(kb->b, arith::SubFOp::create(kb->b, castTo(kb->b, loc, x, ct), max)));
      return es;
    });
    Value inv = arith::DivFOp::create(kb->b, kb->constant(FloatAttr::get(ct, 1.0)), sum);
    softmaxStats[s] = {max, inv};
    return success();
  }
  auto g = dyn_cast<linalg::GenericOp>(op);
  if (!g)
    return success(); // cheap producers are materialized where they are used
  std::optional<OpKind> kind = kindOf(g, [&] {
    SmallVector<int64_t> f(shape.rowDims.begin(), shape.rowDims.end());
    f.append(shape.colDims.begin(), shape.colDims.end());
    return f;
  }(), colRank());
  if (*kind == OpKind::FullParallel)
    return success(); // computed on demand
  if (*kind == OpKind::RowParallel) {
    SmallVector<Value> args;
    for (Value in : g.getDpsInputs())
      args.push_back(rowValue(in));
    for (OpOperand &init : g.getDpsInitsMutable())
      args.push_back(g.payloadUsesValueFromOperand(&init)
                         ? rowValue(init.get())
                         : kb->constant(cast<TypedAttr>(
                               kb->b.getZeroAttr(getElementTypeOrSelf(init.get().getType())))));
    IRMapping map;
    clonePayload(kb->b, g, args, rowIdx, {}, map);
    for (auto [r, y] : llvm::enumerate(payloadResults(g, map)))
      rows[g.getResult(r)] = y;
    return success();
  }
  if (foldedEarly.contains(g))
    return success();
  if (linalg::GenericOp var = onlineMomentsFit() ? centredSquaresAfterSum(g) : linalg::GenericOp()) {
    // A sum and the sum of squared distances to its mean: both in one pass over the row; the
    // sum is given back as mean * cols for the mean's own op.
    Type acc = getElementTypeOrSelf(g.getResult(0).getType());
    auto [mean, m2] =
        onlineMoments(acc, [&](Chunk &c) { return full(g.getDpsInputs()[0], c); });
    rows[g.getResult(0)] = arith::MulFOp::create(
        kb->b, loc, mean, kb->constant(FloatAttr::get(acc, double(shape.cols))));
    rows[var.getResult(0)] = m2;
    foldedEarly.insert(var);
    return success();
  }
  if (linalg::GenericOp sum = onlineSoftmax() ? expSumAfterMax(g) : linalg::GenericOp()) {
    // A max and the sum of exp(x - max) after it: both in one pass over the row.
    Type acc = accumulatorType(getElementTypeOrSelf(g.getResult(0).getType()));
    auto [max, total] = onlineMaxSum(acc, [&](Chunk &c) { return full(g.getDpsInputs()[0], c); });
    rows[g.getResult(0)] = max;
    rows[sum.getResult(0)] = total;
    foldedEarly.insert(sum);
    return success();
  }
  // A reduction over the row: `yield combine(f(ins), out)` per result.
  unsigned numIn = g.getNumDpsInputs();
  Block &body = g.getRegion().front();
  for (unsigned o = 0; o < g.getNumResults(); ++o) {
    BlockArgument out = body.getArgument(numIn + o);
    Operation *comb = out.hasOneUse() ? *out.getUsers().begin() : nullptr;
    if (!comb || comb->getNumOperands() != 2 || !arith::getNeutralElement(comb))
      return g.emitError("a row program's reduction needs a payload `yield combine(f(ins), out)` "
                         "with an associative arith combiner");
    unsigned valueOperand = comb->getOperand(0) == out ? 1 : 0;
    Type elt = getElementTypeOrSelf(g.getResult(o).getType());
    Type acc = accumulatorType(elt);
    Value identity = combinerIdentity(kb->b, loc, comb, acc);
    auto fn = [&](Value a, Value b) { return combine(kb->b, loc, comb, a, b); };
    Value total = reduceRow(passOf.lookup(g), acc, identity, fn, [&](Chunk &c) {
      SmallVector<Value> xs;
      clonePerLane(g, c, {comb}, [&](IRMapping &map) {
        xs.push_back(map.lookupOrDefault(comb->getOperand(valueOperand)));
      });
      return xs;
    });
    Value init = castTo(kb->b, loc, rowValue(g.getDpsInits()[o]), acc);
    rows[g.getResult(o)] = castTo(kb->b, loc, fn(init, total), elt);
  }
  return success();
}

void RowEmitter::analyzePasses() {
  // The pass of a value: how many reductions must be complete before it can be computed (0 for
  // arguments and constants). A reduction is folded in the pass of its inputs and its result
  // belongs to the next; softmax's max and sum are two reductions in sequence.
  DenseMap<Value, unsigned> level;
  auto levelOf = [&](ValueRange vs) {
    unsigned l = 0;
    for (Value v : vs)
      l = std::max(l, level.lookup(v));
    return l;
  };
  for (Operation &op : task.getBody().front().without_terminator()) {
    if (auto s = dyn_cast<linalg::SoftmaxOp>(op)) {
      unsigned l = levelOf(s.getInput());
      passOf[s] = l;
      Type ct = accumulatorType(getElementTypeOrSelf(s.getInput().getType()));
      partialTypes.append({ct, ct});
      level[s->getResult(0)] = l + 2;
      lastPass = std::max(lastPass, l + 2);
      continue;
    }
    auto g = dyn_cast<linalg::GenericOp>(op);
    if (!g || g.getNumReductionLoops() == 0) {
      unsigned l = levelOf(op.getOperands());
      for (Value r : op.getResults())
        level[r] = l;
      continue;
    }
    unsigned l = levelOf(g.getDpsInputs());
    passOf[g] = l;
    unsigned inits = levelOf(g.getDpsInits());
    for (Value r : g.getResults()) {
      partialTypes.push_back(accumulatorType(getElementTypeOrSelf(r.getType())));
      level[r] = std::max(l + 1, inits);
    }
    lastPass = std::max(lastPass, l + 1);
  }
}

FailureOr<LoweredTask> RowEmitter::emit(EmitContext &ctx) {
  FailureOr<SmallVector<MemRefType>> p = taskParamTypes(task);
  if (failed(p))
    return failure();
  params = *p;
  loc = task.getLoc();
  if (failed(validate()))
    return failure();
  const int64_t bs = k.blockSize;
  int64_t numRows = 1;
  for (int64_t d : shape.rowDims)
    numRows *= d;
  int64_t rowsPerBlock = groups.pointsPerBlock();
  int64_t grid = ceilDiv(numRows, rowsPerBlock);

  // One shared buffer per block-wide reduction (reductions of all kinds use f32/f64/i32/i64).
  SmallVector<MemRefType> workgroup;
  if (groups.needsWorkgroupBuffer())
    for (Operation &op : task.getBody().front()) {
      unsigned count = 0;
      Type acc;
      if (auto s = dyn_cast<linalg::SoftmaxOp>(op)) {
        count = 2;
        acc = accumulatorType(getElementTypeOrSelf(s.getInput().getType()));
      } else if (auto g = dyn_cast<linalg::GenericOp>(op); g && g.getNumReductionLoops()) {
        count = g.getNumResults();
        acc = accumulatorType(getElementTypeOrSelf(g.getResult(0).getType()));
      }
      for (unsigned i = 0; i < count; ++i)
        workgroup.push_back(workgroupBuffer(task.getContext(), bs / 32, acc));
    }
  numSmem = workgroup.size();

  // row_split: one scratch buffer of partials [S, rows] per reduction, after the task's buffers.
  SmallVector<MemRefType> kernelParams(params.begin(), params.end());
  SmallVector<BufferDesc, 2> scratch;
  if (split > 1) {
    analyzePasses();
    int64_t bytes = 0;
    for (Type t : partialTypes) {
      kernelParams.push_back(MemRefType::get({split, numRows}, t));
      scratch.push_back({"", BufferRole::Scratch, kernelParams.back()});
      bytes += split * numRows * (t.getIntOrFloatBitWidth() / 8);
    }
    if (bytes > (int64_t(256) << 20))
      return task.emitError() << "row_split=" << split << " would need " << bytes
                              << " bytes of partials (at most 256 MiB)";
  }
  SmallVector<std::string> names;
  for (unsigned kp = 0; kp <= (split > 1 ? lastPass : 0); ++kp) {
    names.push_back(kp == 0 ? ctx.kernelName : ctx.kernelName + "_s" + std::to_string(kp));
    if (failed(emitKernel(ctx, names.back(), kp, kernelParams, workgroup, numRows)))
      return failure();
  }
  LoweredTask lowered =
      singleKernel(TaskFamily::Rows, ctx, {grid, split, 1}, {bs, 1, 1}, kernelParams.size());
  lowered.scratch = scratch;
  for (StringRef name : ArrayRef(names).drop_front()) {
    KernelLaunch launch = lowered.launches.front();
    launch.kernel = name.str();
    lowered.launches.push_back(launch);
  }
  return lowered;
}

LogicalResult RowEmitter::emitKernel(EmitContext &ctx, StringRef name, unsigned kernelPass,
                                     ArrayRef<MemRefType> kernelParams,
                                     ArrayRef<MemRefType> workgroup, int64_t numRows) {
  // Fresh per-kernel state: nothing computed in one kernel is visible in the next.
  pass = kernelPass;
  rows.clear();
  softmaxStats.clear();
  foldedEarly.clear();
  cached.clear();
  nextSmem = 0;
  nextPartial = 0;
  const int64_t bs = k.blockSize;
  int64_t rowsPerBlock = groups.pointsPerBlock();
  kb = std::make_unique<KernelBuilder>(ctx.module, name, kernelParams, workgroup,
                                       std::array<int64_t, 3>{bs, 1, 1}, loc);
  Value tid = kb->threadId(), bid = kb->blockId();
  std::tie(row, lane) = groups.pointAndLane(*kb, tid, bid);
  if (split > 1) {
    slice = kb->blockId(gpu::Dimension::y);
    sliceBase = kb->mul(slice, sliceChunks);
  }
  // Only the last kernel writes the outputs (row_split: the others fold their pass's partials).
  bool writes = split == 1 || pass == lastPass;
  LogicalResult status = success();
  auto body = [&] {
    rowIdx = kb->delinearize(row, shape.rowDims);
    preamble = kb->idx(0).getDefiningOp();
    if (k.cacheRow)
      for (int64_t c = 0; c < sliceChunks / width; ++c)
        cached.emplace_back(kb->mul(kb->add(chunkBegin(), c * width), vw));
    for (Operation &op : task.getBody().front().without_terminator())
      if (failed(visit(op)))
        status = failure();
    if (failed(status) || !writes)
      return;
    auto ret = cast<func::ReturnOp>(task.getBody().front().getTerminator());
    unsigned numArgs = task.getNumArguments();
    unsigned n = fullRank();
    for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
      unsigned param = numArgs + i;
      if (cast<ShapedType>(v.getType()).getRank() == n) {
        // Through the op's own output map: the identity, or a permutation of interchanged loops.
        AffineMap map = AffineMap::getMultiDimIdentityMap(n, task.getContext());
        if (auto g = v.getDefiningOp<linalg::GenericOp>())
          map = g.getIndexingMapMatchingResult(cast<OpResult>(v));
        forEachChunk([&](Chunk &c) {
          storeLanes(*kb, param, map, ivsAt(c.col0), n - 1, full(v, c));
        });
      } else {
        Value y = rowValue(v);
        // One thread per row writes it: lane 0 (of slice 0).
        Value first = kb->eq(lane, 0);
        if (split > 1)
          first = arith::AndIOp::create(kb->b, first, kb->eq(slice, 0));
        kb->ifThen(first, [&] {
          memref::StoreOp::create(kb->b, y, kb->param(param),
                                  shape.rowDims.empty() ? ValueRange() : ValueRange(rowIdx));
        });
      }
    }
  };
  // The guard is uniform per warp (warp strategy) and absent for the block strategy.
  if (numRows % rowsPerBlock == 0)
    body();
  else
    kb->ifThen(kb->lt(row, numRows), body);
  kb->finish();
  return status;
}

FailureOr<LoweredTask> emitRows(func::FuncOp task, const RowShape &shape,
                                const ScheduleKnobs &knobs, EmitContext &ctx) {
  return RowEmitter(task, shape, knobs).emit(ctx);
}

} // namespace evo
