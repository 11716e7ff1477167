//===- VerifierFixture.h - what the verifier's unit tests share --------*- C++ -*-===//
//
// Lowering a function (or a one-op function on a 1-D tensor) to its launch plan, the dialects
// the verifier's tests load, and reading a request back: each buffer's fill and the samples'
// indices and expected values, as evo-eval-worker reads them.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_UNITTESTS_VERIFIERFIXTURE_H
#define EVO_UNITTESTS_VERIFIERFIXTURE_H

#include "evo/Conversion/LowerToGPU.h"
#include "evo/Evaluation/InputGenerator.h"
#include "evo/Evaluation/PackedValues.h"
#include "evo/Evaluation/WorkerProtocol.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "gtest/gtest.h"
#include <cstdint>
#include <string>
#include <vector>

namespace evo::unittest {

namespace json = llvm::json;

/// Lowers `src` with evo-lower-to-gpu's entry point and returns the plan.
inline LaunchPlan lower(mlir::MLIRContext &ctx, const char *src,
                        mlir::OwningOpRef<mlir::ModuleOp> &m) {
  m = mlir::parseSourceString<mlir::ModuleOp>(src, &ctx);
  EXPECT_TRUE(m);
  mlir::func::FuncOp f = *m->getOps<mlir::func::FuncOp>().begin();
  EXPECT_TRUE(mlir::succeeded(lowerFunction(f, LowerOptions())));
  auto gm = *m->getOps<mlir::gpu::GPUModuleOp>().begin();
  mlir::FailureOr<LaunchPlan> plan = LaunchPlan::fromModule(gm);
  EXPECT_TRUE(mlir::succeeded(plan));
  return *plan;
}

/// The fill of every buffer of a trial-shaped request object, the way evo-eval-worker reads it
/// (uniform in the buffer's range unless "inputs" says otherwise).
inline std::vector<contract::FillParams> fillsFromJson(const json::Object &trial,
                                                       const json::Object &req) {
  uint64_t seed = *trial.getInteger("seed");
  std::vector<contract::FillParams> fills;
  const json::Array &buffers = *req.getArray("buffers");
  for (size_t i = 0; i < buffers.size(); ++i) {
    const json::Object &b = *buffers[i].getAsObject();
    ElementKind kind = *symbolizeElementKind(*b.getString("kind"));
    double lo = -1, hi = 1;
    if (const json::Array *r = b.getArray("range")) {
      lo = *(*r)[0].getAsNumber();
      hi = *(*r)[1].getAsNumber();
    }
    fills.push_back(contract::uniformFill(seed, i, kind, lo, hi));
  }
  for (const json::Value &x : *trial.getArray("inputs")) {
    const json::Object &in = *x.getAsObject();
    contract::FillParams &p = fills[*in.getInteger("buffer")];
    llvm::StringRef d = *in.getString("dist");
    p.dist = d == "normal" ? 1 : d == "wide" ? 2 : d == "special" ? 3 : 0;
    p.lo = *in.getNumber("lo");
    p.hi = *in.getNumber("hi");
    p.center = in.getNumber("center").value_or(0.5 * (p.lo + p.hi));
    p.scale = in.getNumber("scale").value_or(1.0);
    p.emin = in.getInteger("emin").value_or(-12);
    p.emax = in.getInteger("emax").value_or(6);
    p.numSpecial = 0;
    if (const json::Array *sp = in.getArray("special"))
      for (const json::Value &y : *sp)
        p.special[p.numSpecial++] = *y.getAsNumber();
  }
  return fills;
}

/// A one-op function on a 1-D tensor, lowered.
inline LaunchPlan unary(mlir::MLIRContext &ctx, mlir::OwningOpRef<mlir::ModuleOp> &m,
                        const char *op, const char *type, const char *argAttrs = "") {
  std::string src = llvm::formatv(R"mlir(
    func.func @f(%x: tensor<4096x{1}> {2}) -> tensor<4096x{1}> {{
      %y = {0} %x : tensor<4096x{1}>
      return %y : tensor<4096x{1}>
    })mlir", op, type, argAttrs).str();
  return lower(ctx, src.c_str(), m);
}

inline void load(mlir::MLIRContext &ctx) {
  ctx.loadDialect<mlir::func::FuncDialect, mlir::arith::ArithDialect, mlir::linalg::LinalgDialect,
                  mlir::tensor::TensorDialect, mlir::math::MathDialect, mlir::gpu::GPUDialect,
                  mlir::scf::SCFDialect, mlir::memref::MemRefDialect, mlir::vector::VectorDialect,
                  EvoDialect>();
}

/// A request sample's indices (all=true: every one of `numElements`, in order) and its
/// expected values (packed, evo/Evaluation/PackedValues.h).
struct DecodedSample {
  std::vector<int64_t> idx;
  std::vector<double> exp;
};
inline DecodedSample decodeSample(const json::Object &s, int64_t numElements) {
  DecodedSample d;
  if (s.getBoolean("all").value_or(false)) {
    for (int64_t i = 0; i < numElements; ++i)
      d.idx.push_back(i);
  } else if (const json::Array *a = s.getArray("indices")) {
    for (const json::Value &v : *a)
      d.idx.push_back(*v.getAsInteger());
  }
  if (std::optional<llvm::StringRef> packed = s.getString("expected_f64")) {
    std::optional<std::vector<double>> v = evo::packed::unpackF64(*packed);
    if (v)
      d.exp = std::move(*v);
  }
  return d;
}

} // namespace evo::unittest

#endif // EVO_UNITTESTS_VERIFIERFIXTURE_H
