//===- Roofline.cpp - the two numbers, and the device's ceilings ---------------===//

#include "evo/Evaluation/Roofline.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/PatternMatch.h"
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

TaskCost estimateCost(func::FuncOp func, const LaunchPlan &plan) {
  TaskCost cost;
  for (const BufferDesc &b : plan.buffers)
    if (b.role != BufferRole::Scratch)
      cost.bytes += b.sizeInBytes();
  OwningOpRef<func::FuncOp> copy(func.clone());
  IRRewriter rewriter(func.getContext());
  SmallVector<linalg::LinalgOp> named;
  copy->walk([&](linalg::LinalgOp op) {
    if (!isa<linalg::GenericOp>(op))
      named.push_back(op);
  });
  for (linalg::LinalgOp op : named) {
    if (linalg::isaContractionOpInterface(op))
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
      for (int64_t s : g.getStaticLoopRanges())
        points *= ShapedType::isDynamic(s) ? 0 : s;
      cost.flops += points * payloadFlops(g.getRegion().front());
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

json::Object Ceilings::toJson() const {
  return json::Object{{"device", device},           {"uuid", uuid},
                      {"copy_gbps", copyGBps},      {"fp32_tflops", fp32TFlops},
                      {"f16_mma_tflops", f16MmaTFlops}, {"from_cache", fromCache}};
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
  json::Object probe{{"format", "evo-eval-request/1"}, {"mode", "probe"}, {"device", device}};
  llvm::Expected<std::vector<json::Object>> facts = runWorkerOnce(probe, options, 120);
  if (!facts)
    return facts.takeError();
  Ceilings c;
  for (json::Object &ev : *facts)
    if (ev.getString("event") == llvm::StringRef("device")) {
      c.device = ev.getString("name").value_or("").str();
      c.uuid = ev.getString("uuid").value_or("").str();
    }
  std::string dir = cacheDir();
  llvm::SmallString<256> file(dir);
  llvm::sys::path::append(file, "ceilings-v2-" + c.uuid + ".json");
  if (!dir.empty() && !c.uuid.empty())
    if (auto buf = llvm::MemoryBuffer::getFile(file))
      if (llvm::Expected<json::Value> v = json::parse((*buf)->getBuffer())) {
        if (json::Object *o = v->getAsObject()) {
          c.copyGBps = o->getNumber("copy_gbps").value_or(0);
          c.fp32TFlops = o->getNumber("fp32_tflops").value_or(0);
          c.f16MmaTFlops = o->getNumber("f16_mma_tflops").value_or(0);
          if (c.copyGBps > 0 && c.fp32TFlops > 0) {
            c.fromCache = true;
            return c;
          }
        }
      } else {
        llvm::consumeError(v.takeError());
      }
  json::Object req{{"format", "evo-eval-request/1"}, {"mode", "ceilings"}, {"device", device}};
  llvm::Expected<std::vector<json::Object>> measured = runWorkerOnce(req, options, 300);
  if (!measured)
    return measured.takeError();
  for (json::Object &ev : *measured)
    if (ev.getString("event") == llvm::StringRef("ceilings")) {
      c.copyGBps = ev.getNumber("copy_gbps").value_or(0);
      c.fp32TFlops = ev.getNumber("fp32_tflops").value_or(0);
      c.f16MmaTFlops = ev.getNumber("f16_mma_tflops").value_or(0);
    }
  if (c.copyGBps <= 0 || c.fp32TFlops <= 0)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "evo-eval-worker measured no ceilings");
  if (!dir.empty() && !c.uuid.empty() && !llvm::sys::fs::create_directories(dir)) {
    json::Object o = c.toJson();
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
                      {"achieved_gbps", achievedGBps},
                      {"achieved_tflops", achievedTFlops},
                      {"fraction_of_copy", fractionOfCopy},
                      {"fraction_of_peak", fractionOfPeak},
                      {"below_floor", belowFloor}};
}

RooflineVerdict judge(const TaskCost &cost, const Ceilings &c, double medianMs, double slack) {
  RooflineVerdict v;
  // The highest rate that could apply keeps the floor a true lower bound.
  double peak = std::max(c.fp32TFlops, cost.halfPrecisionContraction ? c.f16MmaTFlops : 0.0);
  double memMs = c.copyGBps > 0 ? cost.bytes / (c.copyGBps * 1e6) : 0;
  double mathMs = peak > 0 ? cost.flops / (peak * 1e9) : 0;
  v.floorMs = std::max(memMs, mathMs);
  if (medianMs > 0) {
    v.achievedGBps = cost.bytes / (medianMs * 1e6);
    v.achievedTFlops = cost.flops / (medianMs * 1e9);
    v.fractionOfCopy = c.copyGBps > 0 ? v.achievedGBps / c.copyGBps : 0;
    v.fractionOfPeak = peak > 0 ? v.achievedTFlops / peak : 0;
  }
  v.belowFloor = medianMs < slack * v.floorMs;
  return v;
}

} // namespace evo
