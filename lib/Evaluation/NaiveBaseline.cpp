//===- NaiveBaseline.cpp - the reference variant the kernels are compared with --===//
//
// The function lowered again with default knobs in a context of its own: the one place the
// Evaluation component lowers (EvoConversion) and compiles (EvoTarget) a function itself.
//
//===----------------------------------------------------------------------===//

#include "evo/Conversion/LowerToGPU.h"
#include "evo/Evaluation/InputGenerator.h"
#include "evo/Evaluation/Verifier.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace evo {

llvm::Expected<Variant> naiveBaseline(const LaunchPlan &plan, const DialectRegistry &registry,
                                      const PTXOptions &ptx) {
  MLIRContext ctx(registry, MLIRContext::Threading::DISABLED);
  ctx.loadDialect<func::FuncDialect, arith::ArithDialect, linalg::LinalgDialect,
                  tensor::TensorDialect, math::MathDialect>();
  loadLoweringDialects(&ctx);
  std::string diagText;
  llvm::raw_string_ostream diag(diagText);
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    diag << d.str() << "\n";
    return success();
  });
  auto fail = [&](const llvm::Twine &msg) {
    std::string text = msg.str();
    if (!diagText.empty())
      text += ": " + llvm::StringRef(diagText).trim().str();
    return llvm::createStringError(llvm::inconvertibleErrorCode(), text);
  };
  OwningOpRef<ModuleOp> src = parseSourceString<ModuleOp>(plan.source, ParserConfig(&ctx));
  func::FuncOp func = src ? src->lookupSymbol<func::FuncOp>(plan.funcName) : nullptr;
  if (!func)
    return fail("the source of '" + plan.funcName + "' does not parse");
  // Naive: the default schedule everywhere, whatever knobs the source's ops ask for (a reference
  // lowered like the kernels under test could share their bugs).
  func.walk([](Operation *op) { op->removeAttr(kOpKnobsAttrName); });
  if (failed(lowerFunction(func, LowerOptions())))
    return fail("the source of '" + plan.funcName + "' cannot be lowered with default knobs");
  auto gms = llvm::to_vector(src->getOps<gpu::GPUModuleOp>());
  if (gms.size() != 1)
    return fail("lowering '" + plan.funcName + "' gave no single gpu.module");
  FailureOr<LaunchPlan> base = LaunchPlan::fromModule(gms.front());
  if (failed(base))
    return fail("the baseline's plan cannot be read");

  // Inputs and outputs bind by role and position; they must be the same buffers. The baseline,
  // lowered from the plan's source, has the kernels' constants as inputs (its last ones).
  auto byRole = [](const LaunchPlan &p, BufferRole role) {
    SmallVector<unsigned> out;
    for (auto [i, b] : llvm::enumerate(p.buffers))
      if (role == BufferRole::Input ? b.isReadOnly() : b.role == role)
        out.push_back(i);
    return out;
  };
  std::vector<int64_t> map(base->buffers.size(), -1);
  for (BufferRole role : {BufferRole::Input, BufferRole::Output}) {
    SmallVector<unsigned> mine = byRole(plan, role), theirs = byRole(*base, role);
    if (mine.size() != theirs.size())
      return fail("the baseline of '" + plan.funcName + "' has other " +
                  stringifyBufferRole(role) + " buffers than the kernels");
    for (auto [m, t] : llvm::zip(mine, theirs)) {
      // (Different contexts: compare shapes and printed element types, not Type objects.)
      if (plan.buffers[m].type.getShape() != base->buffers[t].type.getShape() ||
          plan.buffers[m].byValue != base->buffers[t].byValue ||
          elementTypeName(plan.buffers[m].type.getElementType()) !=
              elementTypeName(base->buffers[t].type.getElementType()))
        return fail("the baseline's buffer '" + base->buffers[t].name + "' differs from '" +
                    plan.buffers[m].name + "'");
      map[t] = m;
    }
  }
  Variant v;
  v.id = "naive-baseline";
  v.reference = true;
  v.timeIt = false;
  // Scratch and tensor maps become the variant's own, numbered first (a tensor map's source may
  // come after it), then described.
  SmallVector<unsigned> own;
  for (auto [i, b] : llvm::enumerate(base->buffers))
    if (b.role == BufferRole::Scratch || b.role == BufferRole::TensorMap) {
      map[i] = plan.buffers.size() + own.size();
      own.push_back(i);
    }
  for (unsigned i : own) {
    const BufferDesc &b = base->buffers[i];
    if (b.tensorMap) {
      VariantScratch s;
      s.name = b.name;
      s.tensorMap = b.tensorMap;
      s.tensorMap->source = static_cast<unsigned>(map[b.tensorMap->source]);
      s.tensorMapElementType =
          elementTypeName(base->buffers[b.tensorMap->source].type.getElementType());
      v.scratch.push_back(std::move(s));
      continue;
    }
    v.scratch.push_back({b.name, elementKindName(elementKindOf(b.type.getElementType())).str(),
                         static_cast<uint64_t>(b.type.getNumElements()), b.zeroInit});
  }
  for (KernelLaunch l : base->launches) {
    for (unsigned &a : l.args)
      a = static_cast<unsigned>(map[a]);
    v.launches.push_back(std::move(l));
  }
  OpBuilder b(&ctx);
  OwningOpRef<ModuleOp> kernels = ModuleOp::create(gms.front().getLoc());
  b.setInsertionPointToEnd(kernels->getBody());
  b.clone(*gms.front().getOperation());
  FailureOr<std::string> text = compileToPTX(*kernels, ptx);
  if (failed(text))
    return fail("the baseline of '" + plan.funcName + "' does not compile");
  v.ptx = std::move(*text);
  return v;
}

} // namespace evo
