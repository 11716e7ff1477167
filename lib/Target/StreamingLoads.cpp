//===- StreamingLoads.cpp - the evo-streaming-loads pass ------------------------===//
//
// NVPTX drops `!nontemporal` on loads, and LLVM has no intrinsic for a load that skips L1. A
// GEMV's matrix, read once, then evicts from L1 the vector every row reuses: on the H200 a
// 128 MiB f16 GEMV took 0.0425 ms with plain loads and 0.0387 ms with
// ld.global.nc.L1::no_allocate (bench/probes/gemv_probe.cu, docs/bench.md). This pass makes
// that load from the `nontemporal` marking, where it is exact (see Passes.td).
//
//===----------------------------------------------------------------------===//

#include "evo/Target/Passes.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace evo {
#define GEN_PASS_DEF_EVOSTREAMINGLOADSPASS
#include "evo/Target/Passes.h.inc"
} // namespace evo

using namespace mlir;

namespace {

struct EvoStreamingLoadsPass final
    : evo::impl::EvoStreamingLoadsPassBase<EvoStreamingLoadsPass> {
  using Base::Base;
  void runOnOperation() override;
};

/// Whether every target of the module has L1::no_allocate (sm_70, PTX 7.4): "sm_90a" and
/// "+ptx80" style strings; anything unreadable counts as no.
bool targetsHaveNoAllocate(gpu::GPUModuleOp gm) {
  ArrayAttr targets = gm.getTargetsAttr();
  if (!targets || targets.empty())
    return false;
  for (Attribute t : targets) {
    auto nvvm = dyn_cast<NVVM::NVVMTargetAttr>(t);
    if (!nvvm)
      return false;
    unsigned sm = 0, ptx = 0;
    StringRef chip = nvvm.getChip(), features = nvvm.getFeatures();
    if (!chip.consume_front("sm_") || chip.take_while(llvm::isDigit).getAsInteger(10, sm) || sm < 70)
      return false;
    size_t at = features.find("+ptx");
    if (at == StringRef::npos ||
        features.drop_front(at + 4).take_while(llvm::isDigit).getAsInteger(10, ptx) || ptx < 74)
      return false;
  }
  return true;
}

/// Generic or global: the address spaces a kernel's buffer pointer may be in here.
bool globalOrGeneric(Type type) {
  auto ptr = dyn_cast<LLVM::LLVMPointerType>(type);
  return ptr && (ptr.getAddressSpace() == 0 || ptr.getAddressSpace() == 1);
}

/// The parameters of `fn` that it only loads from: every pointer derived from one (GEPs,
/// address-space casts) is used only as the address of a plain load. A store, atomic, volatile
/// load (someone else may write it), call, inline asm, ptrtoint, select, branch argument or a
/// store of the pointer itself makes it not read-only.
llvm::SmallPtrSet<Value, 8> readOnlyParameters(LLVM::LLVMFuncOp fn) {
  llvm::SmallPtrSet<Value, 8> readOnly;
  for (BlockArgument arg : fn.getArguments()) {
    // Pointers to parameter space (byval, byref, grid constants) are not global memory.
    DictionaryAttr attrs = fn.getArgAttrDict(arg.getArgNumber());
    if (!globalOrGeneric(arg.getType()) ||
        (attrs && (attrs.contains(LLVM::LLVMDialect::getByValAttrName()) ||
                   attrs.contains(LLVM::LLVMDialect::getByRefAttrName()) ||
                   attrs.contains("nvvm.grid_constant"))))
      continue;
    SmallVector<Value> work{arg};
    bool onlyLoaded = true;
    while (!work.empty() && onlyLoaded) {
      Value ptr = work.pop_back_val();
      for (OpOperand &use : ptr.getUses()) {
        Operation *user = use.getOwner();
        if (auto gep = dyn_cast<LLVM::GEPOp>(user); gep && use.get() == gep.getBase()) {
          work.push_back(gep.getResult());
        } else if (auto cast = dyn_cast<LLVM::AddrSpaceCastOp>(user)) {
          work.push_back(cast.getResult());
        } else if (auto load = dyn_cast<LLVM::LoadOp>(user);
                   !(load && use.get() == load.getAddr() && !load.getVolatile_() &&
                     load.getOrdering() == LLVM::AtomicOrdering::not_atomic)) {
          onlyLoaded = false;
          break;
        }
      }
    }
    if (onlyLoaded)
      readOnly.insert(arg);
  }
  return readOnly;
}

/// The parameter `ptr` is derived from by GEPs and casts between the generic and the global
/// address space, or null (a cast to shared, constant or local memory ends the walk: ld.global
/// would read the wrong memory there).
Value baseParameter(Value ptr, LLVM::LLVMFuncOp fn) {
  while (Operation *def = ptr.getDefiningOp()) {
    if (!globalOrGeneric(ptr.getType()))
      return {};
    if (auto gep = dyn_cast<LLVM::GEPOp>(def))
      ptr = gep.getBase();
    else if (auto cast = dyn_cast<LLVM::AddrSpaceCastOp>(def))
      ptr = cast.getArg();
    else
      return {};
  }
  if (!globalOrGeneric(ptr.getType()))
    return {};
  auto arg = dyn_cast<BlockArgument>(ptr);
  return arg && arg.getOwner() == &fn.getBody().front() ? arg : Value();
}

/// `load` as ld.global.nc.L1::no_allocate of its 4, 8 or 16 bytes; false (nothing changed)
/// where its type or alignment does not allow it.
bool rewrite(LLVM::LoadOp load) {
  Type type = load.getResult().getType();
  auto vec = dyn_cast<VectorType>(type);
  Type elt = vec ? vec.getElementType() : type;
  if (!elt.isIntOrFloat() || elt.getIntOrFloatBitWidth() % 8 != 0 || (vec && vec.isScalable()))
    return false;
  const int64_t bytes = (vec ? vec.getNumElements() : 1) * (elt.getIntOrFloatBitWidth() / 8);
  if ((bytes != 4 && bytes != 8 && bytes != 16) ||
      static_cast<int64_t>(load.getAlignment().value_or(0)) < bytes)
    return false;
  OpBuilder b(load);
  Location loc = load.getLoc();
  Value address = LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), load.getAddr());
  const int64_t words = bytes / 4;
  Type i32 = b.getI32Type();
  std::string text = "ld.global.nc.L1::no_allocate", constraints;
  Type result = i32;
  if (words == 1) {
    text += ".b32 $0, [$1];";
    constraints = "=r,l";
  } else {
    text += words == 2 ? ".v2.b32 {$0, $1}, [$2];" : ".v4.b32 {$0, $1, $2, $3}, [$4];";
    for (int64_t w = 0; w < words; ++w)
      constraints += "=r,";
    constraints += "l";
    result = LLVM::LLVMStructType::getLiteral(b.getContext(), SmallVector<Type>(words, i32));
  }
  // Declared without side effects (nothing writes the parameter while the kernel runs); LLVM
  // may still treat inline asm as touching memory and keep it in place.
  auto asmOp = LLVM::InlineAsmOp::create(
      b, loc, result, ValueRange{address}, b.getStringAttr(text), b.getStringAttr(constraints),
      UnitAttr(), UnitAttr(), LLVM::TailCallKindAttr(),
      LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT), ArrayAttr());
  Value value;
  if (words == 1) {
    value = asmOp.getResult(0);
  } else {
    auto wordsType = VectorType::get({words}, i32);
    value = LLVM::PoisonOp::create(b, loc, wordsType);
    for (int64_t w = 0; w < words; ++w) {
      Value word = LLVM::ExtractValueOp::create(b, loc, asmOp.getResult(0), w);
      Value pos = LLVM::ConstantOp::create(b, loc, b.getI32Type(), b.getI32IntegerAttr(w));
      value = LLVM::InsertElementOp::create(b, loc, value, word, pos);
    }
  }
  if (value.getType() != type)
    value = LLVM::BitcastOp::create(b, loc, type, value);
  load.replaceAllUsesWith(value);
  load.erase();
  return true;
}

} // namespace

void EvoStreamingLoadsPass::runOnOperation() {
  gpu::GPUModuleOp gm = getOperation();
  if (!targetsHaveNoAllocate(gm))
    return;
  for (auto fn : gm.getOps<LLVM::LLVMFuncOp>()) {
    // Kernels only: a device function's pointer parameters may point anywhere its callers
    // choose (local, shared, or memory the kernel writes).
    if (fn.isExternal() || !(fn->hasAttr(NVVM::NVVMDialect::getKernelFuncAttrName()) ||
                             fn->hasAttr(gpu::GPUDialect::getKernelFuncAttrName())))
      continue;
    SmallVector<LLVM::LoadOp> marked;
    fn.walk([&](LLVM::LoadOp load) {
      if (load.getNontemporal() && !load.getVolatile_() &&
          load.getOrdering() == LLVM::AtomicOrdering::not_atomic)
        marked.push_back(load);
    });
    if (marked.empty())
      continue;
    llvm::SmallPtrSet<Value, 8> readOnly = readOnlyParameters(fn);
    for (LLVM::LoadOp load : marked)
      if (Value base = baseParameter(load.getAddr(), fn); base && readOnly.contains(base))
        (void)rewrite(load);
  }
}
