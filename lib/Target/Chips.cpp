//===- Chips.cpp - the chips evo-opt can compile for ---------------------------===//

#include "evo/Target/Chips.h"
#include "evo/Runtime/ChipRules.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Triple.h"
#include <mutex>

using namespace mlir;
using llvm::StringRef;

namespace evo {

static constexpr StringRef kTriple = "nvptx64-nvidia-cuda";

static llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// NVPTX's target and its subtarget tables (the chips and features it knows).
static llvm::Expected<const llvm::Target *> nvptx(const llvm::MCSubtargetInfo **info) {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
  static const llvm::Target *target = nullptr;
  static std::unique_ptr<llvm::MCSubtargetInfo> sti;
  static std::string why;
  static std::once_flag lookup;
  std::call_once(lookup, [] {
    llvm::Triple triple(kTriple);
    target = llvm::TargetRegistry::lookupTarget(triple, why);
    if (target)
      sti.reset(target->createMCSubtargetInfo(triple, "", ""));
  });
  if (!target || !sti)
    return error("this LLVM has no NVPTX backend: " + why);
  if (info)
    *info = sti.get();
  return target;
}

/// "sm_20, sm_21, ..., sm_121f", in chip order.
static std::string knownChips(const llvm::MCSubtargetInfo &sti) {
  std::vector<chips::Chip> all;
  for (const llvm::SubtargetSubTypeKV &p : sti.getAllProcessorDescriptions())
    if (std::optional<chips::Chip> c = chips::parse(p.Key))
      all.push_back(*c);
  llvm::sort(all, chips::lowerThan);
  std::string s;
  for (const chips::Chip &c : all)
    s += (s.empty() ? "" : ", ") + c.name();
  return s;
}

llvm::Expected<unsigned> minPtxVersion(StringRef chip) {
  static std::mutex mutex;
  static llvm::StringMap<unsigned> cache;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = cache.find(chip); it != cache.end())
    return it->second;
  const llvm::MCSubtargetInfo *sti = nullptr;
  llvm::Expected<const llvm::Target *> target = nvptx(&sti);
  if (!target)
    return target.takeError();
  if (!sti->isCPUStringValid(chip))
    return error("NVPTX does not know chip '" + chip + "'");
  // Without a +ptx feature NVPTX writes the oldest PTX version the chip accepts: compile an
  // empty module and read its `.version X.Y` line.
  llvm::Triple triple(kTriple);
  std::unique_ptr<llvm::TargetMachine> tm((*target)->createTargetMachine(
      triple, chip, "", llvm::TargetOptions(), std::nullopt));
  if (!tm)
    return error("NVPTX cannot make a target machine for '" + chip + "'");
  llvm::LLVMContext ctx;
  llvm::Module m("evo-ptx-version", ctx);
  m.setTargetTriple(triple);
  m.setDataLayout(tm->createDataLayout());
  llvm::SmallString<512> ptx;
  {
    llvm::raw_svector_ostream os(ptx);
    llvm::legacy::PassManager pm;
    if (tm->addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::AssemblyFile))
      return error("NVPTX cannot emit PTX for '" + chip + "'");
    pm.run(m);
  }
  StringRef rest = StringRef(ptx).split(".version ").second;
  auto [major, minor] = rest.take_until([](char c) { return c == '\n'; }).trim().split('.');
  unsigned ma = 0, mi = 0;
  if (major.getAsInteger(10, ma) || minor.getAsInteger(10, mi))
    return error("cannot read the PTX version NVPTX writes for '" + chip + "'");
  return cache[chip] = ma * 10 + mi;
}

static std::string ptxVersionName(unsigned v) {
  return std::to_string(v / 10) + "." + std::to_string(v % 10);
}

llvm::Error checkChip(StringRef chip, StringRef features) {
  const llvm::MCSubtargetInfo *sti = nullptr;
  if (llvm::Expected<const llvm::Target *> t = nvptx(&sti); !t)
    return t.takeError();
  if (!chips::parse(chip) || !sti->isCPUStringValid(chip))
    return error("chip '" + chip + "' is not one the NVPTX backend of LLVM " LLVM_VERSION_STRING
                 " knows (" + knownChips(*sti) + ")");
  // The features: each +name or -name of an NVPTX feature; the last +ptxNN is the PTX version.
  unsigned ptx = 0;
  SmallVector<StringRef> parts;
  features.split(parts, ',', -1, /*KeepEmpty=*/false);
  for (StringRef f : parts) {
    f = f.trim();
    StringRef name = f.drop_front();
    bool known = llvm::any_of(sti->getAllProcessorFeatures(),
                              [&](const llvm::SubtargetFeatureKV &kv) { return name == kv.Key; });
    if ((!f.starts_with("+") && !f.starts_with("-")) || !known)
      return error("features: '" + f +
                   "' is not an NVPTX feature (+ptxNN names the PTX ISA version, e.g. +ptx80)");
    unsigned v = 0;
    if (f.starts_with("+ptx") && !f.drop_front(4).getAsInteger(10, v))
      ptx = v;
  }
  if (ptx == 0)
    return llvm::Error::success();
  llvm::Expected<unsigned> minimum = minPtxVersion(chip);
  if (!minimum)
    return minimum.takeError();
  if (ptx < *minimum)
    return error("chip " + chip + " needs PTX ISA " + ptxVersionName(*minimum) +
                 " or newer, but features='" + features + "' asks for " + ptxVersionName(ptx) +
                 ": pass features=+ptx" + std::to_string(*minimum) +
                 " (a driver must support that PTX version to JIT it)");
  return llvm::Error::success();
}

llvm::Expected<ChipTargets> resolveChips(llvm::ArrayRef<std::string> list, StringRef features) {
  if (list.empty())
    return error("chips= is empty");
  ChipTargets t;
  std::vector<chips::Chip> parsed;
  for (const std::string &c : list) {
    if (llvm::Error e = checkChip(c, ""))
      return e;
    chips::Chip chip = *chips::parse(c);
    if (llvm::is_contained(parsed, chip))
      return error("chips= names " + c + " twice");
    parsed.push_back(chip);
    t.chips.push_back(c);
  }
  chips::Chip lowest = *llvm::min_element(parsed, chips::lowerThan);
  t.ptxChip = lowest.name();
  for (const chips::Chip &c : parsed) {
    if (chips::ptxAssemblesFor(lowest, c))
      continue;
    std::string why = lowest.suffix == 'a'
                          ? " (PTX for an sm_XYa chip runs on that chip only: list it alone)"
                          : " (PTX for an sm_XYf chip serves its family only)";
    return error("chips=" + llvm::join(list, ",") + ": the PTX is written for the lowest chip, " +
                 t.ptxChip + ", and ptxas cannot assemble PTX for " + t.ptxChip +
                 " into a cubin for " + c.name() + why);
  }
  if (llvm::Error e = checkChip(t.ptxChip, features))
    return e;
  return t;
}

/// "sm_90a", "sm_100a or sm_101a", "sm_80 or newer".
static std::string required(const NVVM::NVVMCheckSMVersion &v) {
  std::string s;
  for (auto [i, sm] : llvm::enumerate(v.smVersionList)) {
    if (i)
      s += i + 1 == v.smVersionList.size() ? " or " : ", ";
    s += "sm_" + std::to_string(sm) + (v.archAccelerated ? "a" : "");
  }
  return v.archAccelerated ? s : s + " or newer";
}

/// The chip an NVVM op needs: its RequiresSM interface where it has one; for the ops NVPTX
/// cannot select on older chips that lack the interface in MLIR 22 (it would abort with "Cannot
/// select"), the PTX ISA's minimum: cp.async sm_80, ldmatrix sm_75, mma.sync sm_80 for bf16,
/// tf32 and the k16 f16 shapes (else sm_75).
static std::optional<NVVM::NVVMCheckSMVersion> requiredChip(Operation *op) {
  if (auto r = dyn_cast<NVVM::RequiresSMInterface>(op))
    return r.getRequiredMinSMVersion();
  if (isa<NVVM::CpAsyncOp, NVVM::CpAsyncCommitGroupOp, NVVM::CpAsyncWaitGroupOp>(op))
    return NVVM::NVVMCheckSMVersion(false, 80);
  if (isa<NVVM::LdMatrixOp>(op))
    return NVVM::NVVMCheckSMVersion(false, 75);
  if (auto mma = dyn_cast<NVVM::MmaOp>(op)) {
    std::optional<NVVM::MMATypes> t = mma.getMultiplicandAPtxType();
    bool newer = mma.getShape().getK() == 16 ||
                 (t && (*t == NVVM::MMATypes::bf16 || *t == NVVM::MMATypes::tf32));
    return NVVM::NVVMCheckSMVersion(false, newer ? 80 : 75);
  }
  return std::nullopt;
}

LogicalResult checkModuleRunsOn(gpu::GPUModuleOp gm, StringRef chip, StringRef context) {
  std::optional<chips::Chip> parsed = chips::parse(chip);
  if (!parsed)
    return gm.emitError() << "evo-emit-ptx: '" << chip << "' is not a chip name (sm_XY[a|f])";
  // NVVM spells a target as sm_XY[a]; a family chip is checked as its generic chip.
  NVVM::NVVMCheckSMVersion target(parsed->suffix == 'a', parsed->number());
  // Per kernel (or the module, for ops outside kernels), the op with the strictest need: an
  // arch-specific chip (wgmma: sm_90a) before a newer one (TMA: sm_90), so that the message
  // names what makes the kernel chip-specific.
  struct Worst {
    Operation *op;
    NVVM::NVVMCheckSMVersion needs;
  };
  llvm::MapVector<Operation *, Worst> worst;
  gm.walk([&](Operation *op) {
    std::optional<NVVM::NVVMCheckSMVersion> required = requiredChip(op);
    if (!required)
      return;
    NVVM::NVVMCheckSMVersion needs = *required;
    if (needs.isCompatibleWith(target))
      return;
    auto kernel = op->getParentOfType<gpu::GPUFuncOp>();
    Operation *owner = kernel ? kernel.getOperation() : gm.getOperation();
    auto [it, inserted] = worst.try_emplace(owner, Worst{op, needs});
    const NVVM::NVVMCheckSMVersion &had = it->second.needs;
    if (!inserted && std::make_pair(needs.archAccelerated, needs.smVersionList.front()) >
                         std::make_pair(had.archAccelerated, had.smVersionList.front()))
      it->second = Worst{op, needs};
  });
  for (auto &[owner, w] : worst) {
    auto kernel = dyn_cast<gpu::GPUFuncOp>(owner);
    std::string who = kernel ? "kernel '" + kernel.getName().str() + "'"
                             : "gpu.module '" + gm.getSymName().str() + "'";
    w.op->emitError() << "evo-emit-ptx: " << who << " cannot run on " << chip << ": '"
                      << w.op->getName() << "' needs " << required(w.needs) << context;
  }
  return success(worst.empty());
}

} // namespace evo
