//===- FrontEnds.cpp - TOSA input, empty modules, callers of lowered functions ------===//
//
// TOSA is converted with upstream's passes, function by function, before evo-lower-to-gpu looks
// for targets, so the task sources and the oracle only ever see linalg. StableHLO is not part of
// MLIR 22: its ops reach here only as unregistered ops (--allow-unregistered-dialect), and the
// "nothing to lower" description names them. tensor.concat (torch.cat) becomes an elementwise
// linalg.generic over its operands padded to its shape (views), so that it lowers and fuses like
// any other elementwise op.
//
//===----------------------------------------------------------------------===//

#include "evo/Conversion/FrontEnds.h"
#include "mlir/Conversion/TosaToArith/TosaToArith.h"
#include "mlir/Conversion/TosaToLinalg/TosaToLinalg.h"
#include "mlir/Conversion/TosaToSCF/TosaToSCF.h"
#include "mlir/Conversion/TosaToTensor/TosaToTensor.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Tosa/Transforms/Passes.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringMap.h"

using namespace mlir;

namespace evo {

static bool isTosa(Operation *op) {
  return op->getName().getDialectNamespace() == tosa::TosaDialect::getDialectNamespace();
}

bool hasTosaOps(func::FuncOp func) {
  return func
      .walk([](Operation *op) {
        return isTosa(op) ? WalkResult::interrupt() : WalkResult::advance();
      })
      .wasInterrupted();
}

void buildTosaToLinalgPipeline(OpPassManager &pm) {
  // Control flow first (cond_if, while_loop → scf), so that tosa-to-linalg converts the ops in
  // their regions and does not stop at their tosa.yield.
  pm.addPass(createTosaToSCFPass());
  // The order of mlir::tosa::addTosaToLinalgPasses (TosaToLinalgPass.cpp), which adds them nested
  // in a module pipeline and ends with the module-wide validation.
  pm.addPass(tosa::createTosaOptionalDecompositionsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(tosa::createTosaInferShapesPass());
  pm.addPass(tosa::createTosaMakeBroadcastablePass());
  pm.addPass(tosa::createTosaToLinalgNamed());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(tosa::createTosaLayerwiseConstantFoldPass());
  pm.addPass(tosa::createTosaMakeBroadcastablePass());
  pm.addPass(tosa::createTosaToLinalg());
  // What tosa-to-linalg leaves legal: reshape/slice/pad/concat, then constants.
  pm.addPass(createTosaToTensorPass());
  // apply_scale too: what tosa-to-linalg makes of a quantized tosa.rescale.
  TosaToArithPassOptions arith;
  arith.includeApplyRescale = true;
  pm.addPass(createTosaToArithPass(arith));
  // Drops the tosa.const_shape operands of converted reshapes and the unused mul shifts.
  pm.addPass(createCanonicalizerPass());
}

LogicalResult checkTosaConverted(func::FuncOp func) {
  bool left = false;
  func.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (!isTosa(op))
      return WalkResult::advance();
    op->emitError() << "evo-lower-to-gpu: '" << op->getName()
                    << "' has no conversion to linalg (upstream's tosa-to-scf, "
                       "tosa-to-linalg, tosa-to-tensor and tosa-to-arith leave it)";
    left = true;
    return WalkResult::skip();
  });
  return failure(left);
}

LogicalResult concatToGenerics(func::FuncOp func) {
  SmallVector<tensor::ConcatOp> concats;
  func.walk([&](tensor::ConcatOp c) { concats.push_back(c); });
  for (tensor::ConcatOp c : concats) {
    RankedTensorType type = c.getResultType();
    if (!type.hasStaticShape() || llvm::any_of(c.getInputs(), [](Value v) {
          return !cast<RankedTensorType>(v.getType()).hasStaticShape();
        }))
      return c.emitError("evo-lower-to-gpu supports tensor.concat on static shapes only, got ")
             << type;
    const unsigned rank = type.getRank(), dim = c.getDim();
    const int64_t total = type.getDimSize(dim);
    OpBuilder b(c);
    Location loc = c.getLoc();
    Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(type.getElementType()));
    // Operand k, holding positions [start, start + size) along `dim`, padded to the result's
    // shape: a view (docs/lowering.md), read in bounds whatever the position, of any value (an
    // argument, another op's result, a reshape).
    // A splat constant operand is its value in the payload; another constant is copied first
    // (a view's source is a buffer or a view of one).
    SmallVector<Value> padded;
    SmallVector<int64_t> starts;
    DenseMap<unsigned, TypedAttr> splats; // position in `starts` -> value
    int64_t start = 0;
    for (Value in : c.getInputs()) {
      int64_t size = cast<RankedTensorType>(in.getType()).getDimSize(dim);
      auto constant = in.getDefiningOp<arith::ConstantOp>();
      auto dense = constant ? dyn_cast<DenseElementsAttr>(constant.getValue()) : nullptr;
      if (size > 0 && dense && dense.isSplat()) {
        splats[starts.size()] = dense.getSplatValue<TypedAttr>();
        starts.push_back(start);
      } else if (size > 0) {
        if (constant) { // dense or dense_resource
          auto inType = cast<RankedTensorType>(in.getType());
          Value into = tensor::EmptyOp::create(b, loc, inType.getShape(), inType.getElementType());
          in = linalg::GenericOp::create(
                   b, loc, TypeRange{inType}, ValueRange{in}, ValueRange{into},
                   SmallVector<AffineMap>(2, b.getMultiDimIdentityMap(rank)),
                   SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
                   [](OpBuilder &nb, Location l, ValueRange args) {
                     linalg::YieldOp::create(nb, l, args.front());
                   })
                   .getResult(0);
        }
        SmallVector<OpFoldResult> low(rank, b.getIndexAttr(0)), high(rank, b.getIndexAttr(0));
        low[dim] = b.getIndexAttr(start);
        high[dim] = b.getIndexAttr(total - start - size);
        padded.push_back(tensor::PadOp::create(b, loc, type, in, low, high, zero).getResult());
        starts.push_back(start);
      }
      start += size;
    }
    Value empty = tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
    SmallVector<AffineMap> maps(padded.size() + 1, b.getMultiDimIdentityMap(rank));
    const size_t parts = starts.size();
    SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
    auto generic = linalg::GenericOp::create(
        b, loc, TypeRange{type}, padded, ValueRange{empty}, maps, iters,
        [&](OpBuilder &nb, Location l, ValueRange args) {
          if (parts == 0) { // a result with no elements
            linalg::YieldOp::create(nb, l, args.back());
            return;
          }
          // Part k's value: its padded operand's element, or its splat.
          SmallVector<Value> values;
          for (size_t k = 0, arg = 0; k < parts; ++k)
            values.push_back(splats.count(k)
                                 ? arith::ConstantOp::create(nb, l, splats.lookup(k)).getResult()
                                 : args[arg++]);
          // From the last part down: below the next part's start, this one's value.
          Value at = linalg::IndexOp::create(nb, l, dim);
          Value result = values.back();
          for (int64_t k = int64_t(parts) - 2; k >= 0; --k) {
            Value before =
                arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt, at,
                                      arith::ConstantIndexOp::create(nb, l, starts[k + 1]));
            result = arith::SelectOp::create(nb, l, before, values[k], result);
          }
          linalg::YieldOp::create(nb, l, result);
        });
    c.replaceAllUsesWith(generic.getResult(0));
    c.erase();
  }
  return success();
}

std::string describeModuleContents(ModuleOp module) {
  struct Group {
    StringRef key;
    unsigned count = 0;
    SmallVector<StringRef> names;
    bool registered = true;
  };
  SmallVector<Group> groups;
  llvm::StringMap<unsigned> index;
  module.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (op == module.getOperation())
      return WalkResult::advance();
    bool opaque = isa<gpu::GPUModuleOp, gpu::BinaryOp>(op);
    if (op->hasTrait<OpTrait::IsTerminator>())
      return WalkResult::advance();
    StringRef name = op->getName().getStringRef();
    // The module's own ops (functions, gpu.modules) by name, the ops inside them by dialect.
    StringRef key =
        op->getParentOp() == module.getOperation() ? name : op->getName().getDialectNamespace();
    auto [it, inserted] = index.try_emplace(key, groups.size());
    if (inserted)
      groups.push_back({key});
    Group &g = groups[it->second];
    ++g.count;
    g.registered &= op->isRegistered();
    if (!llvm::is_contained(g.names, name))
      g.names.push_back(name);
    // Kernels of an earlier lowering are counted as their gpu.module, not op by op.
    return opaque ? WalkResult::skip() : WalkResult::advance();
  });
  if (groups.empty())
    return "nothing (the module is empty)";

  std::string text;
  llvm::raw_string_ostream os(text);
  bool stablehlo = false;
  SmallVector<StringRef> unknown;
  llvm::interleaveComma(groups, os, [&](const Group &g) {
    if (g.names.size() == 1) {
      os << g.count << " '" << g.names.front() << "'";
    } else {
      os << g.count << " '" << g.key << ".*' ops (";
      constexpr size_t kShown = 4;
      llvm::interleaveComma(ArrayRef(g.names).take_front(kShown), os);
      if (g.names.size() > kShown)
        os << ", ...";
      os << ")";
    }
    StringRef dialect = g.key.split('.').first;
    static constexpr StringRef kHlo[] = {"stablehlo", "mhlo", "chlo", "vhlo"};
    if (llvm::is_contained(kHlo, dialect))
      stablehlo = true;
    else if (!g.registered && !llvm::is_contained(unknown, dialect))
      unknown.push_back(dialect);
  });
  if (stablehlo)
    os << "; StableHLO is not part of MLIR 22: legalize it to linalg first with stablehlo-opt "
          "--stablehlo-legalize-to-linalg (docs/lowering.md, \"Front-ends\")";
  if (!unknown.empty()) {
    os << "; not dialects evo-opt knows: ";
    llvm::interleaveComma(unknown, os, [&](StringRef d) { os << "'" << d << "'"; });
  }
  return text;
}

/// Code that runs on the GPU: a call there cannot allocate and launch.
static bool inDeviceCode(Operation *op) {
  return op->getParentOfType<gpu::GPUModuleOp>() || op->getParentOfType<gpu::LaunchOp>() ||
         op->getParentOfType<gpu::GPUFuncOp>();
}

/// The lowered signature is (one memref per tensor argument, one per result) with the tensors'
/// shapes and element types; a scalar argument stays itself.
static bool matchesLowered(FunctionType tensorType, func::FuncOp host) {
  unsigned inputs = tensorType.getNumInputs();
  if (host.getNumResults() != 0 || host.getNumArguments() != inputs + tensorType.getNumResults())
    return false;
  for (auto [i, arg] : llvm::enumerate(host.getArgumentTypes())) {
    Type t = i < inputs ? tensorType.getInput(i) : tensorType.getResult(i - inputs);
    if (i < inputs && t == arg && !isa<ShapedType>(t))
      continue;
    auto tensor = dyn_cast<RankedTensorType>(t);
    auto memref = dyn_cast<MemRefType>(arg);
    if (!tensor || !memref || tensor.getShape() != memref.getShape() ||
        tensor.getElementType() != memref.getElementType())
      return false;
  }
  return true;
}

static void rewriteCall(func::CallOp call, func::FuncOp host, FunctionType tensorType) {
  OpBuilder b(call);
  Location loc = call.getLoc();
  ArrayRef<Type> bufferTypes = host.getArgumentTypes();
  unsigned inputs = tensorType.getNumInputs();
  SmallVector<Value> args;
  for (auto [i, v] : llvm::enumerate(call.getOperands()))
    args.push_back(isa<MemRefType>(bufferTypes[i])
                       ? bufferization::ToBufferOp::create(b, loc, bufferTypes[i], v,
                                                           /*read_only=*/true)
                             .getResult()
                       : v); // a scalar argument
  SmallVector<Value> outputs;
  for (Type t : bufferTypes.drop_front(inputs))
    outputs.push_back(memref::AllocOp::create(b, loc, cast<MemRefType>(t)));
  args.append(outputs);
  func::CallOp::create(b, loc, host, args);
  for (auto [result, buffer] : llvm::zip(call.getResults(), outputs))
    result.replaceAllUsesWith(bufferization::ToTensorOp::create(
        b, loc, result.getType(), buffer, /*restrict=*/true, /*writable=*/true));
  call.erase();
}

LogicalResult updateCallers(func::FuncOp host, FunctionType tensorType) {
  auto module = host->getParentOfType<ModuleOp>();
  StringRef name = host.getSymName();
  if (!matchesLowered(tensorType, host))
    return host.emitError() << "evo-lower-to-gpu: internal error: the lowered '@" << name
                            << "' does not take one buffer per argument and result";
  // Uses are collected first (a fresh walk after each lowering: functions lowered earlier were
  // replaced, and their calls with them), then rewritten.
  SmallVector<Operation *> users;
  if (std::optional<SymbolTable::UseRange> uses = SymbolTable::getSymbolUses(host, module)) {
    for (const SymbolTable::SymbolUse &use : *uses)
      users.push_back(use.getUser());
  } else {
    // Ops that might be symbol tables (unregistered ones) hide the exact uses: look at what
    // names the function.
    module.walk([&](Operation *op) {
      if (auto call = dyn_cast<func::CallOp>(op); call && call.getCallee() == name)
        users.push_back(op);
      else if (auto ref = dyn_cast<func::ConstantOp>(op); ref && ref.getValue() == name)
        users.push_back(op);
    });
  }
  bool failedAny = false;
  for (Operation *user : users) {
    auto call = dyn_cast<func::CallOp>(user);
    // Host code written against the lowered signature already (it only parses without the
    // verifier before lowering, as test/Integration/CUDA/evo-lower-to-gpu.mlir does) is right.
    if (call && !inDeviceCode(call) && call.getNumResults() == 0 &&
        call.getOperandTypes() == host.getArgumentTypes())
      continue;
    bool rewritable = call && !inDeviceCode(call) &&
                      call.getOperandTypes() == tensorType.getInputs() &&
                      call.getResultTypes() == tensorType.getResults();
    if (!rewritable) {
      user->emitError() << "evo-lower-to-gpu: cannot update this use of '@" << name
                        << "' to its lowered signature (buffers: the inputs, then one per "
                           "result; no results): only a direct func.call with the function's "
                           "tensor types, in host code, is rewritten";
      failedAny = true;
      continue;
    }
    rewriteCall(call, host, tensorType);
  }
  return failure(failedAny);
}

} // namespace evo
