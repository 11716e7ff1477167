//===- Roofline.cpp - the two numbers, and the device's ceilings ---------------===//

#include "evo/Evaluation/Roofline.h"
#include "evo/Conversion/ScanForm.h"
#include "evo/Evaluation/WorkerProtocol.h"
#include "mlir/Analysis/FlatLinearValueConstraints.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
namespace json = llvm::json;

namespace evo {

/// Floating-point operations of one payload evaluation.
static double payloadFlops(Block &body) {
  double n = 0;
  for (Operation &op : body.without_terminator()) {
    if (op.getNumResults() != 1 || !isa<FloatType>(op.getResult(0).getType()))
      continue;
    if (isa<arith::ConstantOp, arith::ExtFOp, arith::TruncFOp, arith::SIToFPOp, arith::UIToFPOp,
            arith::SelectOp, arith::BitcastOp>(op))
      continue;
    n += isa<math::FmaOp>(op) ? 2 : 1;
  }
  return n;
}

/// A lower bound on the distinct values of the linear expression `e` over the loop ranges: for
/// a dimension p with coefficient a, the other terms hit some number r of residues mod a, and
/// each residue class holds range(p) distinct values (a pooling window 2*o + 3*w hits both
/// residues mod 2: every index, where o alone reaches every other one). 0 when not linear.
static int64_t linearReach(AffineExpr e, ArrayRef<int64_t> ranges) {
  // Upstream's flattener: coefficients of the dimensions, then the constant; locals (floordiv,
  // mod) make it non-linear.
  SmallVector<int64_t> coeffs;
  if (failed(getFlattenedAffineExpr(e, ranges.size(), 0, &coeffs)) ||
      coeffs.size() != ranges.size() + 1)
    return 0;
  coeffs.pop_back();
  int64_t best = 0;
  for (unsigned p = 0; p < ranges.size(); ++p) {
    int64_t a = coeffs[p] < 0 ? -coeffs[p] : coeffs[p];
    if (a == 0 || a > 1024)
      continue;
    llvm::SmallBitVector residues(a);
    residues.set(0);
    for (unsigned j = 0; j < ranges.size(); ++j) {
      if (j == p || coeffs[j] == 0)
        continue;
      llvm::SmallBitVector next(a);
      // Steps past `a` repeat residues.
      const int64_t steps = std::min(ranges[j], a), step = ((coeffs[j] % a) + a) % a;
      for (int r : residues.set_bits())
        for (int64_t k = 0; k < steps; ++k)
          next.set((r + k * step) % a);
      residues = next;
    }
    best = std::max<int64_t>(best, int64_t(residues.count()) * ranges[p]);
  }
  return best;
}

/// A lower bound on the share of a tensor's elements that a linalg operand with `map` reaches
/// over the loop ranges: per dimension of the tensor, an affine sum of loop dimensions times
/// constants reaches at least as many distinct indices as its widest loop dimension (a strided
/// window: 2*oh + kh with a 1x1 filter reaches every other row). 1 where that cannot be shown
/// simply (other expressions, a loop dimension in two results, dynamic sizes).
static double mapReach(AffineMap map, ArrayRef<int64_t> ranges, ArrayRef<int64_t> shape) {
  if (map.getNumResults() != shape.size())
    return 1;
  double share = 1;
  llvm::SmallBitVector seen(map.getNumDims());
  for (auto [e, size] : llvm::zip(map.getResults(), shape)) {
    if (ShapedType::isDynamic(size) || size <= 0)
      return 1;
    int64_t widest = 1;
    bool simple = true;
    llvm::SmallBitVector dims(map.getNumDims());
    e.walk([&](AffineExpr x) {
      if (auto d = dyn_cast<AffineDimExpr>(x)) {
        dims.set(d.getPosition());
        widest = std::max(widest, ranges[d.getPosition()]);
      } else if (auto bin = dyn_cast<AffineBinaryOpExpr>(x)) {
        bool scaled = x.getKind() == AffineExprKind::Mul &&
                      (isa<AffineConstantExpr>(bin.getRHS()) || isa<AffineConstantExpr>(bin.getLHS()));
        simple &= x.getKind() == AffineExprKind::Add || scaled;
      } else if (!isa<AffineConstantExpr>(x)) {
        simple = false;
      }
    });
    if (!simple || seen.anyCommon(dims) ||
        llvm::any_of(dims.set_bits(), [&](unsigned d) { return ShapedType::isDynamic(ranges[d]); }))
      return 1;
    widest = std::max(widest, linearReach(e, ranges));
    seen |= dims;
    share *= static_cast<double>(std::min(widest, size)) / size;
  }
  return share;
}

/// A lower bound on the share of `v`'s elements a kernel must read (the floor counts that much
/// of its bytes and must stay a lower bound): 0 where every use gathers from it (tensor.extract
/// in a payload, at data-dependent indices), slices it, or reads a view of it that is read in
/// part; a linalg operand's indexing map's reach (a strided convolution skips rows); else 1.
static double readShare(Value v) {
  if (v.use_empty())
    return 1;
  double share = 0; // the uses' union reads at least the most any one of them reads
  for (OpOperand &use : v.getUses()) {
    Operation *user = use.getOwner();
    double u = 1;
    if (isa<tensor::ExtractOp>(user) || isa<tensor::ExtractSliceOp>(user))
      u = 0;
    else if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::CastOp, tensor::PadOp>(
                 user))
      u = readShare(user->getResult(0)) < 1 ? 0 : 1;
    else if (auto l = dyn_cast<linalg::LinalgOp>(user); l && l.isDpsInput(&use))
      if (auto t = dyn_cast<RankedTensorType>(v.getType()))
        u = mapReach(l.getMatchingIndexingMap(&use), l.getStaticLoopRanges(), t.getShape());
    share = std::max(share, u);
  }
  return share;
}

F32Matmul planF32Matmul(const LaunchPlan &plan) {
  auto error = [](F32Matmul m) {
    return m == F32Matmul::Ieee ? 0 : m == F32Matmul::TF32x3 ? 1 : 2;
  };
  F32Matmul worst = F32Matmul::Ieee;
  for (const TaskDesc &t : plan.tasks)
    if (t.knobs)
      if (std::optional<F32Matmul> m = t.knobs.getF32Matmul(); m && error(*m) > error(worst))
        worst = *m;
  return worst;
}

TaskCost estimateCost(func::FuncOp func, const LaunchPlan &plan) {
  TaskCost cost;
  cost.f32Matmul = planF32Matmul(plan);
  unsigned input = 0;
  for (const BufferDesc &b : plan.buffers) {
    if (b.isReadOnly()) {
      // Inputs (then constants: trailing arguments of the plan's source) are the function's
      // arguments, in order.
      double share = !func.isExternal() && input < func.getNumArguments()
                         ? readShare(func.getArgument(input))
                         : 1;
      ++input;
      cost.readBytes += share * b.sizeInBytes();
    } else if (b.role == BufferRole::Output) {
      cost.writeBytes += b.sizeInBytes();
    }
  }
  cost.bytes = cost.readBytes + cost.writeBytes;
  OwningOpRef<func::FuncOp> copy(func.clone());
  IRRewriter rewriter(func.getContext());
  SmallVector<linalg::LinalgOp> named;
  copy->walk([&](linalg::LinalgOp op) {
    if (!isa<linalg::GenericOp>(op))
      named.push_back(op);
  });
  for (linalg::LinalgOp op : named) {
    const bool gemmLike =
        linalg::isaContractionOpInterface(op) || linalg::isaConvolutionOpInterface(op);
    cost.contraction |= gemmLike;
    // f16/bf16 convolutions run on tensor cores too (implicit GEMMs).
    if (gemmLike)
      for (Value in : op.getDpsInputs()) {
        Type elt = getElementTypeOrSelf(in.getType());
        cost.halfPrecisionContraction |= elt.isF16() || elt.isBF16();
      }
    rewriter.setInsertionPoint(op);
    (void)linalg::generalizeNamedOp(rewriter, op);
  }
  copy->walk([&](Operation *op) {
    if (auto g = dyn_cast<linalg::GenericOp>(op)) {
      double points = 1;
      SmallVector<int64_t> ranges = g.getStaticLoopRanges();
      for (int64_t s : ranges)
        points *= ShapedType::isDynamic(s) ? 0 : s;
      // A scan written as a masked triangular reduction does O(C) work per line, not the
      // triangle's O(C^2): counted as written, its math floor would call every honest scan
      // kernel faster than possible.
      if (std::optional<ScanForm> scan = matchScan(g))
        points /= ranges[scan->scanLoop];
      cost.flops += points * payloadFlops(g.getRegion().front());
      for (Operation &p : g.getRegion().front().without_terminator())
        if (p.getNumResults() == 1) {
          Type t = p.getResult(0).getType();
          cost.halfPrecisionMath |= t.isF16() || t.isBF16();
        }
      // A generic that multiplies and reduces is a contraction too (TF32 could run it).
      cost.contraction |= linalg::isaContractionOpInterface(g) && g.getNumReductionLoops() > 0;
    } else if (auto s = dyn_cast<linalg::SoftmaxOp>(op)) {
      cost.flops += 5.0 * cast<ShapedType>(s.getInput().getType()).getNumElements();
    } else if (op->getNumResults() == 1 && isa<RankedTensorType>(op->getResult(0).getType()) &&
               (isa<arith::ArithDialect, math::MathDialect>(op->getDialect())) &&
               !isa<arith::ConstantOp>(op)) {
      cost.flops += cast<ShapedType>(op->getResult(0).getType()).getNumElements();
    }
  });
  return cost;
}

json::Value toJSON(const Ceilings &c) {
  return json::Object{{"device", c.device},
                      {"uuid", c.uuid},
                      {protocol::kCopyGBps, c.copyGBps},
                      {protocol::kReadGBps, c.readGBps},
                      {protocol::kWriteGBps, c.writeGBps},
                      {protocol::kL2Bytes, c.l2Bytes},
                      {protocol::kFp32TFlops, c.fp32TFlops},
                      {protocol::kF16MmaTFlops, c.f16MmaTFlops},
                      {protocol::kF16WgmmaTFlops, c.f16WgmmaTFlops},
                      {protocol::kBf16WgmmaTFlops, c.bf16WgmmaTFlops},
                      {protocol::kWgmmaStatus, c.wgmmaStatus},
                      {"from_cache", c.fromCache}};
}

bool fromJSON(const json::Value &value, Ceilings &c, json::Path path) {
  json::ObjectMapper m(value, path);
  return m && m.mapOptional("device", c.device) && m.mapOptional("uuid", c.uuid) &&
         m.mapOptional(protocol::kCopyGBps, c.copyGBps) &&
         m.mapOptional(protocol::kReadGBps, c.readGBps) &&
         m.mapOptional(protocol::kWriteGBps, c.writeGBps) &&
         m.mapOptional(protocol::kL2Bytes, c.l2Bytes) &&
         m.mapOptional(protocol::kFp32TFlops, c.fp32TFlops) &&
         m.mapOptional(protocol::kF16MmaTFlops, c.f16MmaTFlops) &&
         m.mapOptional(protocol::kF16WgmmaTFlops, c.f16WgmmaTFlops) &&
         m.mapOptional(protocol::kBf16WgmmaTFlops, c.bf16WgmmaTFlops) &&
         m.mapOptional(protocol::kWgmmaStatus, c.wgmmaStatus) &&
         m.mapOptional("from_cache", c.fromCache);
}

static std::string cacheDir() {
  if (std::optional<std::string> d = llvm::sys::Process::GetEnv("EVO_CACHE_DIR"))
    return *d;
  llvm::SmallString<256> p;
  if (std::optional<std::string> x = llvm::sys::Process::GetEnv("XDG_CACHE_HOME")) {
    p = *x;
  } else if (llvm::sys::path::home_directory(p)) {
    llvm::sys::path::append(p, ".cache");
  } else {
    return "";
  }
  llvm::sys::path::append(p, "evo-opt");
  return p.str().str();
}

llvm::Expected<Ceilings> deviceCeilings(const WorkerOptions &options, int device) {
  json::Object probe{{protocol::kFormat, protocol::kRequestFormat},
                     {protocol::kMode, protocol::kModeProbe},
                     {protocol::kDevice, device}};
  llvm::Expected<std::vector<json::Object>> facts = runWorkerOnce(probe, options, 120);
  if (!facts)
    return facts.takeError();
  Ceilings c;
  for (json::Object &ev : *facts)
    if (ev.getString(protocol::kEvent) == llvm::StringRef(protocol::kEventDevice)) {
      c.device = ev.getString(protocol::kName).value_or("").str();
      c.uuid = ev.getString(protocol::kUuid).value_or("").str();
      c.l2Bytes = ev.getNumber(protocol::kL2Bytes).value_or(0);
    }
  std::string dir = cacheDir();
  llvm::SmallString<256> file(dir);
  // v3: read and write ceilings besides copy (the floor is built from them); v4: the wgmma
  // rates (a v3 file would leave a Hopper's tensor-core floor on mma.sync).
  llvm::sys::path::append(file, "ceilings-v4-" + c.uuid + ".json");
  auto complete = [](const Ceilings &x) {
    return x.copyGBps > 0 && x.readGBps > 0 && x.writeGBps > 0 && x.fp32TFlops > 0;
  };
  if (!dir.empty() && !c.uuid.empty())
    if (auto buf = llvm::MemoryBuffer::getFile(file))
      if (llvm::Expected<json::Value> v = json::parse((*buf)->getBuffer())) {
        Ceilings cached = c;
        json::Path::Root root("ceilings cache");
        if (fromJSON(*v, cached, root)) {
          if (complete(cached)) {
            cached.fromCache = true;
            return cached;
          }
        }
      } else {
        llvm::consumeError(v.takeError());
      }
  json::Object req{{protocol::kFormat, protocol::kRequestFormat},
                   {protocol::kMode, protocol::kModeCeilings},
                   {protocol::kDevice, device}};
  llvm::Expected<std::vector<json::Object>> measured = runWorkerOnce(req, options, 300);
  if (!measured)
    return measured.takeError();
  for (json::Object &ev : *measured) {
    json::Path::Root root("ceilings event");
    if (ev.getString(protocol::kEvent) == llvm::StringRef(protocol::kEventCeilings) &&
        !fromJSON(json::Value(std::move(ev)), c, root))
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "evo-eval-worker: " + llvm::toString(root.getError()));
  }
  if (!complete(c))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "evo-eval-worker measured no ceilings");
  if (!dir.empty() && !c.uuid.empty() && !llvm::sys::fs::create_directories(dir)) {
    json::Object o = std::move(*toJSON(c).getAsObject());
    o.erase("from_cache");
    if (llvm::Error e = llvm::writeToOutput(file, [&](llvm::raw_ostream &os) {
          os << json::Value(std::move(o));
          return llvm::Error::success();
        }))
      llvm::consumeError(std::move(e)); // a cache that cannot be written is not an error
  }
  return c;
}

json::Object RooflineVerdict::toJson() const {
  return json::Object{{"floor_ms", floorMs},
                      {"read_floor_ms", readMs},
                      {"write_floor_ms", writeMs},
                      {"math_floor_ms", mathMs},
                      {"achieved_gbps", achievedGBps},
                      {"achieved_tflops", achievedTFlops},
                      {"fraction_of_copy", fractionOfCopy},
                      {"fraction_of_peak", fractionOfPeak},
                      {"below_floor", belowFloor}};
}

RooflineVerdict judge(const TaskCost &cost, const Ceilings &c, double medianMs, double slack) {
  RooflineVerdict v;
  // Memory: a kernel must read every input byte from memory at least once (the timing flushes
  // the L2 before every launch) and write every output byte, of which at most the L2's size can
  // still sit in the cache when the launch ends. Reads and writes share the memory system, so
  // each bound holds alone; their sum over the copy rate would not be a bound (a read-only GEMV
  // beats the copy ceiling).
  v.readMs = c.readGBps > 0 ? cost.readBytes / (c.readGBps * 1e6) : 0;
  v.writeMs =
      c.writeGBps > 0 ? std::max(0.0, cost.writeBytes - c.l2Bytes) / (c.writeGBps * 1e6) : 0;
  // Arithmetic: the fastest unit that could run it. Tensor cores for any contraction (f16/bf16,
  // or TF32 for f32 with f32-matmul, which runs at half the f16 rate, so an honest TF32 kernel
  // is never below this floor): tensorCoreBoundTFlops, from wgmma's measured rate where there
  // is one and from mma.sync's with headroom; packed half2 math for f16/bf16 payloads.
  // Fractions of peak are against the fastest measured unit.
  double reportPeak =
      std::max(c.fp32TFlops, cost.halfPrecisionContraction ? c.tensorCoreTFlops() : 0.0);
  // f32 contractions on TF32 tensor cores (f32-matmul): against the TF32 rate, a third of it
  // for 3xTF32 (three tensor-core products per f32 one).
  if (cost.f32Matmul == F32Matmul::TF32)
    reportPeak = std::max(reportPeak, c.tf32TFlops());
  else if (cost.f32Matmul == F32Matmul::TF32x3)
    reportPeak = std::max(reportPeak, c.tf32TFlops() / 3);
  double boundPeak = reportPeak;
  if (cost.contraction || cost.halfPrecisionContraction)
    boundPeak = std::max(boundPeak, tensorCoreBoundTFlops(c));
  if (cost.halfPrecisionMath)
    boundPeak = std::max(boundPeak, 2 * c.fp32TFlops);
  v.mathMs = boundPeak > 0 ? cost.flops / (boundPeak * 1e9) : 0;
  v.floorMs = std::max({v.readMs, v.writeMs, v.mathMs});
  if (medianMs > 0) {
    v.achievedGBps = cost.bytes / (medianMs * 1e6);
    v.achievedTFlops = cost.flops / (medianMs * 1e9);
    v.fractionOfCopy = c.copyGBps > 0 ? v.achievedGBps / c.copyGBps : 0;
    v.fractionOfPeak = reportPeak > 0 ? v.achievedTFlops / reportPeak : 0;
  }
  v.belowFloor = medianMs < slack * v.floorMs;
  return v;
}

} // namespace evo
