//===- Manifest.cpp - manifest JSON -------------------------------------------===//

#include "evo/Config.h"
#include "evo/Target/Manifest.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/SHA256.h"


using namespace mlir;
namespace json = llvm::json;

namespace evo {

std::string evoVersionString() {
  return std::string("evo-opt ") + EVO_VERSION + " (MLIR/LLVM " LLVM_VERSION_STRING ")";
}

std::string sha256Hex(StringRef data) {
  std::array<uint8_t, 32> hash = llvm::SHA256::hash(llvm::arrayRefFromStringRef(data));
  return llvm::toHex(hash, /*LowerCase=*/true);
}

json::Value attrToJson(Attribute attr) {
  if (!attr)
    return nullptr;
  if (auto knobs = dyn_cast<KnobsAttr>(attr))
    return knobs.toJson();
  if (auto i = dyn_cast<IntegerAttr>(attr))
    return i.getType().isInteger(1) ? json::Value(i.getValue().getBoolValue())
                                    : json::Value(i.getInt());
  if (auto f = dyn_cast<FloatAttr>(attr))
    return f.getValueAsDouble();
  if (auto s = dyn_cast<StringAttr>(attr))
    return s.getValue();
  if (isa<UnitAttr>(attr))
    return true;
  if (auto b = dyn_cast<BoolAttr>(attr))
    return b.getValue();
  if (auto a = dyn_cast<DenseI64ArrayAttr>(attr)) {
    json::Array out;
    for (int64_t v : a.asArrayRef())
      out.push_back(v);
    return out;
  }
  if (auto a = dyn_cast<ArrayAttr>(attr)) {
    json::Array out;
    for (Attribute e : a)
      out.push_back(attrToJson(e));
    return out;
  }
  if (auto d = dyn_cast<DictionaryAttr>(attr)) {
    json::Object out;
    for (NamedAttribute e : d)
      out[e.getName().getValue()] = attrToJson(e.getValue());
    return out;
  }
  std::string s;
  llvm::raw_string_ostream os(s);
  attr.print(os);
  return s;
}

static json::Array shapeOf(MemRefType t) {
  json::Array a;
  for (int64_t d : t.getShape())
    a.push_back(d);
  return a;
}

static json::Value resourcesJson(const llvm::StringMap<KernelResources> &resources,
                                 StringRef kernel) {
  auto it = resources.find(kernel);
  if (it == resources.end())
    return nullptr;
  const KernelResources &r = it->second;
  return json::Object{{"registers", r.registers},       {"shared_memory", r.sharedMemory},
                      {"stack_frame", r.stackFrame},    {"spill_stores", r.spillStores},
                      {"spill_loads", r.spillLoads},    {"barriers", r.barriers}};
}

json::Value buildManifest(const ManifestInfo &info) {
  json::Object m;
  m["format"] = kManifestFormat;
  m["name"] = info.name;
  m["generator"] = evoVersionString();
  json::Object target{{"chip", info.chip}, {"features", info.features}};
  if (!info.chips.empty()) {
    json::Array chips;
    for (const std::string &c : info.chips)
      chips.push_back(c);
    target["chips"] = std::move(chips);
    // A cubin per chip beside the PTX; loaders choose by the device's compute capability.
    json::Array binaries;
    for (const ManifestInfo::Binary &b : info.binaries)
      binaries.push_back(json::Object{{"chip", b.chip},
                                      {"file", b.file},
                                      {"bytes", static_cast<int64_t>(b.image.size())},
                                      {"sha256", sha256Hex(b.image)}});
    m["binaries"] = std::move(binaries);
  }
  m["target"] = std::move(target);
  if (!info.constantsFile.empty())
    m["constants"] = json::Object{{"file", info.constantsFile},
                                  {"sha256", sha256Hex(info.constantsImage)},
                                  {"bytes", static_cast<int64_t>(info.constantsImage.size())}};
  m["ptx"] = json::Object{{"file", info.ptxFile},
                          {"sha256", sha256Hex(info.ptx)},
                          {"bytes", static_cast<int64_t>(info.ptx.size())}};
  m["abi"] = "bare-pointer: each kernel takes one device pointer per entry of its 'params', in "
             "order, and nothing else; an entry with 'by_value' (a scalar argument) is the "
             "value itself";
  m["ptxas"] = info.ptxasPath ? json::Value(json::Object{{"path", *info.ptxasPath},
                                                         {"arch", info.chip}})
                              : json::Value(nullptr);

  json::Array kernels;
  for (const KernelSignature &k : info.kernels) {
    json::Array params;
    for (Type p : k.params) {
      // A scalar parameter is passed by value: its dtype, an empty shape and "by_value".
      auto memref = dyn_cast<MemRefType>(p);
      json::Object param{{"dtype", elementTypeName(memref ? memref.getElementType() : p)},
                         {"shape", memref ? shapeOf(memref) : json::Array()}};
      if (!memref)
        param["by_value"] = true;
      params.push_back(std::move(param));
    }
    kernels.push_back(json::Object{{"name", k.name},
                                   {"params", std::move(params)},
                                   {"knobs", attrToJson(k.knobs)},
                                   {"resources", resourcesJson(info.resources, k.name)}});
  }
  m["kernels"] = std::move(kernels);

  json::Array buffers, tasks, launches;
  if (info.plan) {
    const LaunchPlan &plan = *info.plan;
    m["function"] = plan.funcName;
    for (auto [i, b] : llvm::enumerate(plan.buffers)) {
      json::Object o{{"index", static_cast<int64_t>(i)},
                     {"name", b.name},
                     {"role", stringifyBufferRole(b.role)},
                     {"dtype", elementTypeName(b.type.getElementType())},
                     {"shape", shapeOf(b.type)},
                     {"bytes", b.sizeInBytes()},
                     {"zero_init", b.zeroInit}};
      // A scalar argument: the kernels take its value, not a pointer (docs/architecture.md).
      if (b.byValue)
        o["by_value"] = true;
      // A constant: where its bytes are in the constants file (docs/architecture.md).
      if (auto it = info.constantOffsets.find(i); it != info.constantOffsets.end())
        o["data"] = json::Object{{"offset", it->second}, {"bytes", b.sizeInBytes()}};
      // A tensor map: what to encode into its 128 bytes (docs/architecture.md, "Tensor maps").
      if (b.tensorMap)
        o["tensor_map"] = toJSON(*b.tensorMap, elementTypeName(plan.buffers[b.tensorMap->source]
                                                                    .type.getElementType()));
      buffers.push_back(std::move(o));
    }
    for (const TaskDesc &t : plan.tasks) {
      json::Array bufs;
      for (unsigned b : t.buffers)
        bufs.push_back(static_cast<int64_t>(b));
      tasks.push_back(json::Object{{"name", t.name},
                                   {"family", stringifyTaskFamily(t.family)},
                                   {"knobs", attrToJson(t.knobs)},
                                   {"buffers", std::move(bufs)}});
    }
    for (const KernelLaunch &l : plan.launches)
      launches.push_back(toJSON(l)); // the plan's JSON form (LaunchPlan.h)
  }
  m["buffers"] = std::move(buffers);
  m["tasks"] = std::move(tasks);
  m["launches"] = std::move(launches);
  return m;
}

} // namespace evo
