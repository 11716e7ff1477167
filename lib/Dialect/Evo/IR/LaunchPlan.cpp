//===- LaunchPlan.cpp - a plan's C++ form, and its checks against a gpu.module --===//

#include "evo/Dialect/Evo/IR/LaunchPlan.h"
#include "evo/Dialect/Evo/IR/InputChecks.h"
#include "evo/Runtime/TensorMap.h"
#include <limits>

using namespace mlir;

namespace evo {

int64_t BufferDesc::sizeInBytes() const {
  int64_t bits = type.getElementTypeBitWidth();
  return type.getNumElements() * ((bits + 7) / 8);
}

Type BufferDesc::abiType() const {
  return byValue ? type.getElementType() : Type(type);
}

std::optional<BufferDesc> argumentBuffer(Type t, std::string name, BufferRole role) {
  if (auto tensor = dyn_cast<RankedTensorType>(t))
    return BufferDesc{std::move(name), role,
                      MemRefType::get(tensor.getShape(), tensor.getElementType())};
  if (role != BufferRole::Input || !isScalarArgumentType(t))
    return std::nullopt;
  BufferDesc b{std::move(name), role, MemRefType::get({}, t)};
  b.byValue = true;
  return b;
}

std::string elementTypeName(Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  type.print(os);
  return s;
}

static SmallVector<int64_t> widen(ArrayRef<unsigned> values) {
  return SmallVector<int64_t>(values.begin(), values.end());
}

MemRefType tensorMapBufferType(MLIRContext *ctx) {
  return MemRefType::get({static_cast<int64_t>(tensormap::kDescriptorBytes)},
                         IntegerType::get(ctx, 8));
}

BufferDesc tensorMapBuffer(MLIRContext *ctx, std::string name, TensorMapDesc map) {
  BufferDesc b{std::move(name), BufferRole::TensorMap, tensorMapBufferType(ctx)};
  b.tensorMap = std::move(map);
  return b;
}

static std::vector<int64_t> stdVector(ArrayRef<int64_t> v) { return {v.begin(), v.end()}; }

LogicalResult verifyTensorMap(const TensorMapDesc &map, MemRefType source,
                              function_ref<InFlightDiagnostic()> emitError) {
  std::string elt = elementTypeName(source.getElementType());
  tensormap::ElementInfo info;
  if (!tensormap::elementInfo(elt, info))
    return emitError() << "its source's element type " << elt << " is not one TMA supports ("
                       << tensormap::kSupportedElementTypes << ")";
  int64_t sourceBytes = source.getNumElements() * info.bytes;
  std::string err =
      tensormap::check(stdVector(map.dims), stdVector(map.strides), stdVector(map.box),
                       map.swizzle, info.bytes, static_cast<uint64_t>(sourceBytes));
  if (!err.empty())
    return emitError() << err;
  return success();
}

/// Builds each attribute with `get` or, given `emitError`, with `getChecked` (null on failure).
template <typename AttrT, typename... Args>
static AttrT build(function_ref<InFlightDiagnostic()> emitError, MLIRContext *ctx, Args &&...args) {
  if (emitError)
    return AttrT::getChecked(emitError, ctx, std::forward<Args>(args)...);
  return AttrT::get(ctx, std::forward<Args>(args)...);
}

static PlanAttr toPlanAttr(const LaunchPlan &plan, MLIRContext *ctx,
                           function_ref<InFlightDiagnostic()> emitError) {
  SmallVector<BufferAttr> bufferAttrs;
  SmallVector<TaskAttr> taskAttrs;
  SmallVector<LaunchAttr> launchAttrs;
  for (const BufferDesc &buf : plan.buffers) {
    TensorMapAttr map;
    if (buf.tensorMap) {
      const TensorMapDesc &m = *buf.tensorMap;
      map = build<TensorMapAttr>(emitError, ctx, static_cast<int64_t>(m.source),
                                 ArrayRef<int64_t>(m.dims), ArrayRef<int64_t>(m.strides),
                                 ArrayRef<int64_t>(m.box), m.swizzle);
      if (!map)
        return {};
    }
    bufferAttrs.push_back(build<BufferAttr>(emitError, ctx, StringRef(buf.name), buf.role,
                                            buf.type, buf.zeroInit, map, buf.byValue,
                                            StringRef(buf.global)));
    if (!bufferAttrs.back())
      return {};
  }
  for (const TaskDesc &task : plan.tasks) {
    KnobsAttr knobs = task.knobs ? task.knobs : KnobsAttr::get(ctx, ScheduleKnobs(), task.family);
    taskAttrs.push_back(build<TaskAttr>(emitError, ctx, StringRef(task.name), task.family,
                                        StringRef(task.source), knobs,
                                        ArrayRef<int64_t>(widen(task.buffers))));
    if (!taskAttrs.back())
      return {};
  }
  for (const KernelLaunch &launch : plan.launches) {
    launchAttrs.push_back(build<LaunchAttr>(
        emitError, ctx, StringRef(launch.kernel), static_cast<int64_t>(launch.task),
        ArrayRef<int64_t>(launch.grid), ArrayRef<int64_t>(launch.block),
        launch.dynamicSharedMemory, ArrayRef<int64_t>(widen(launch.args))));
    if (!launchAttrs.back())
      return {};
  }
  return build<PlanAttr>(emitError, ctx, StringRef(plan.funcName), StringRef(plan.source),
                         ArrayRef<BufferAttr>(bufferAttrs), ArrayRef<TaskAttr>(taskAttrs),
                         ArrayRef<LaunchAttr>(launchAttrs));
}

PlanAttr LaunchPlan::toAttr(MLIRContext *ctx) const { return toPlanAttr(*this, ctx, nullptr); }

PlanAttr LaunchPlan::toAttr(MLIRContext *ctx,
                            function_ref<InFlightDiagnostic()> emitError) const {
  return toPlanAttr(*this, ctx, emitError);
}

static SmallVector<unsigned> narrow(ArrayRef<int64_t> values) {
  return SmallVector<unsigned>(values.begin(), values.end());
}

LaunchPlan LaunchPlan::fromAttr(PlanAttr attr) {
  LaunchPlan plan;
  plan.funcName = attr.getFunc().str();
  plan.source = attr.getSource().str();
  for (BufferAttr b : attr.getBuffers()) {
    plan.buffers.push_back({b.getName().str(), b.getRole(), b.getType(), b.getZeroInit()});
    plan.buffers.back().byValue = b.getByValue();
    plan.buffers.back().global = b.getGlobal().str();
    if (TensorMapAttr m = b.getTensorMap())
      plan.buffers.back().tensorMap = TensorMapDesc{
          static_cast<unsigned>(m.getSource()), llvm::to_vector(m.getDims()),
          llvm::to_vector(m.getStrides()), llvm::to_vector(m.getBox()), m.getSwizzle()};
  }
  for (TaskAttr t : attr.getTasks())
    plan.tasks.push_back({t.getName().str(), t.getFamily(), t.getSource().str(), t.getKnobs(),
                          narrow(t.getBuffers())});
  for (LaunchAttr l : attr.getLaunches()) {
    KernelLaunch launch;
    launch.kernel = l.getKernel().str();
    launch.task = static_cast<unsigned>(l.getTask());
    llvm::copy(l.getGrid(), launch.grid.begin());
    llvm::copy(l.getBlock(), launch.block.begin());
    launch.dynamicSharedMemory = l.getDynamicSharedMemory();
    launch.args = narrow(l.getArgs());
    plan.launches.push_back(std::move(launch));
  }
  return plan;
}

FailureOr<LaunchPlan> LaunchPlan::fromModule(gpu::GPUModuleOp module) {
  Attribute attr = module->getAttr(kPlanAttrName);
  if (!attr)
    return module.emitError() << "gpu.module has no '" << kPlanAttrName << "' attribute";
  auto plan = dyn_cast<PlanAttr>(attr);
  if (!plan)
    return module.emitError() << "'" << kPlanAttrName << "' must be a #evo.plan attribute";
  return fromAttr(plan);
}

LogicalResult LaunchPlan::verifyAgainst(gpu::GPUModuleOp module) const {
  for (const KernelLaunch &launch : launches) {
    auto kernel = module.lookupSymbol<gpu::GPUFuncOp>(launch.kernel);
    if (!kernel || !kernel.isKernel())
      return module.emitError() << "evo.plan launches '" << launch.kernel
                                << "', which is not a kernel of this gpu.module";
    ArrayRef<Type> params = kernel.getFunctionType().getInputs();
    if (params.size() != launch.args.size())
      return kernel.emitError() << "takes " << params.size() << " parameters but evo.plan passes "
                                << launch.args.size() << " buffers";
    // Kernels may assume that their parameters do not overlap (evo-streaming-loads reads a
    // parameter the kernel never writes through the non-coherent path).
    for (auto [i, buf] : llvm::enumerate(launch.args))
      if (llvm::is_contained(ArrayRef<unsigned>(launch.args).take_front(i), buf))
        return kernel.emitError() << "evo.plan passes buffer '" << buffers[buf].name
                                  << "' to two of its parameters (kernel parameters must not "
                                     "overlap)";
    // A by-value buffer (a scalar argument) is its element type in the kernel's signature.
    for (auto [i, param, buf] : llvm::enumerate(params, launch.args))
      if (param != buffers[buf].abiType())
        return kernel.emitError() << "parameter " << i << " has type " << param
                                  << " but evo.plan passes "
                                  << (buffers[buf].byValue ? "the value of scalar argument '"
                                                           : "buffer '")
                                  << buffers[buf].name << "' of type " << buffers[buf].abiType();
  }
  // A scratch buffer (or tensor map) no launch uses would be allocated for nothing (e.g. left
  // over after a task was re-lowered).
  for (auto [i, buf] : llvm::enumerate(buffers))
    if ((buf.role == BufferRole::Scratch || buf.role == BufferRole::TensorMap) &&
        llvm::none_of(launches, [&](const KernelLaunch &l) { return llvm::is_contained(l.args, i); }))
      return module.emitError() << "evo.plan's " << stringifyBufferRole(buf.role) << " buffer '"
                                << buf.name << "' is not passed to any launch";
  return success();
}

//===----------------------------------------------------------------------===//
// JSON form of a launch
//===----------------------------------------------------------------------===//

llvm::json::Value toJSON(const KernelLaunch &launch) {
  return llvm::json::Object{{"kernel", launch.kernel},
                            {"task", static_cast<int64_t>(launch.task)},
                            {"grid", llvm::json::Array(launch.grid)},
                            {"block", llvm::json::Array(launch.block)},
                            {"dynamic_shared_memory", launch.dynamicSharedMemory},
                            {"args", llvm::json::Array(launch.args)}};
}

/// An integer in [min, 2^32) (min is 0 or 1).
static bool fromJSONUInt32(const llvm::json::Value &value, int64_t &out, int64_t min,
                           llvm::json::Path path) {
  std::optional<int64_t> v = value.getAsInteger();
  if (!v || *v < min || *v > std::numeric_limits<uint32_t>::max()) {
    if (min)
      path.report("expected an integer in [1, 2^32)");
    else
      path.report("expected an integer in [0, 2^32)");
    return false;
  }
  out = *v;
  return true;
}

/// An array of integers in [min, 2^32), of `size` elements unless `size` is 0.
static bool fromJSONUInt32s(const llvm::json::Value *value, llvm::SmallVectorImpl<int64_t> &out,
                            int64_t min, size_t size, llvm::json::Path path) {
  if (!value) {
    path.report("missing value");
    return false;
  }
  const llvm::json::Array *a = value->getAsArray();
  if (!a || (size && a->size() != size)) {
    if (size)
      path.report("expected an array of 3 integers");
    else
      path.report("expected an array of integers");
    return false;
  }
  out.assign(a->size(), 0);
  for (auto [i, element] : llvm::enumerate(*a))
    if (!fromJSONUInt32(element, out[i], min, path.index(i)))
      return false;
  return true;
}

bool fromJSON(const llvm::json::Value &value, KernelLaunch &launch, llvm::json::Path path) {
  llvm::json::ObjectMapper mapper(value, path);
  if (!mapper || !mapper.map("kernel", launch.kernel))
    return false;
  const llvm::json::Object &o = *value.getAsObject();
  int64_t task = 0, smem = 0;
  if (const llvm::json::Value *v = o.get("task"))
    if (!fromJSONUInt32(*v, task, 0, path.field("task")))
      return false;
  if (const llvm::json::Value *v = o.get("dynamic_shared_memory"))
    if (!fromJSONUInt32(*v, smem, 0, path.field("dynamic_shared_memory")))
      return false;
  SmallVector<int64_t, 3> grid, block;
  SmallVector<int64_t> args;
  if (!fromJSONUInt32s(o.get("grid"), grid, 1, 3, path.field("grid")) ||
      !fromJSONUInt32s(o.get("block"), block, 1, 3, path.field("block")) ||
      !fromJSONUInt32s(o.get("args"), args, 0, 0, path.field("args")))
    return false;
  launch.task = static_cast<unsigned>(task);
  llvm::copy(grid, launch.grid.begin());
  llvm::copy(block, launch.block.begin());
  launch.dynamicSharedMemory = smem;
  launch.args.clear();
  for (int64_t a : args)
    launch.args.push_back(static_cast<unsigned>(a));
  return true;
}

//===----------------------------------------------------------------------===//
// JSON form of a tensor map
//===----------------------------------------------------------------------===//

llvm::json::Object toJSON(const TensorMapDesc &map, StringRef elementType) {
  return llvm::json::Object{{tensormap::key::kSource, static_cast<int64_t>(map.source)},
                            {tensormap::key::kElementType, elementType.str()},
                            {tensormap::key::kDims, llvm::json::Array(map.dims)},
                            {tensormap::key::kStrides, llvm::json::Array(map.strides)},
                            {tensormap::key::kBox, llvm::json::Array(map.box)},
                            {tensormap::key::kSwizzle, map.swizzle}};
}

/// An array of at most `max` integers in [min, 2^40].
static bool fromJSONSizes(const llvm::json::Object &o, StringRef key, SmallVectorImpl<int64_t> &out,
                          int64_t min, llvm::json::Path path) {
  const llvm::json::Array *a = o.getArray(key);
  if (!a || a->size() > tensormap::kMaxRank) {
    path.field(key).report("expected an array of at most 5 integers");
    return false;
  }
  out.clear();
  for (auto [i, element] : llvm::enumerate(*a)) {
    std::optional<int64_t> v = element.getAsInteger();
    if (!v || *v < min || *v > (int64_t(1) << 40)) {
      path.field(key).index(i).report(min ? "expected an integer in [1, 2^40]"
                                          : "expected an integer in [0, 2^40]");
      return false;
    }
    out.push_back(*v);
  }
  return true;
}

bool fromJSON(const llvm::json::Value &value, TensorMapDesc &map, std::string &elementType,
              llvm::json::Path path) {
  llvm::json::ObjectMapper mapper(value, path);
  if (!mapper || !mapper.map(tensormap::key::kElementType, elementType))
    return false;
  const llvm::json::Object &o = *value.getAsObject();
  int64_t source = 0, swizzle = 0;
  const llvm::json::Value *s = o.get(tensormap::key::kSource);
  if (!s) {
    path.field(tensormap::key::kSource).report("missing value");
    return false;
  }
  if (!fromJSONUInt32(*s, source, 0, path.field(tensormap::key::kSource)))
    return false;
  if (const llvm::json::Value *v = o.get(tensormap::key::kSwizzle))
    if (!fromJSONUInt32(*v, swizzle, 0, path.field(tensormap::key::kSwizzle)))
      return false;
  if (!fromJSONSizes(o, tensormap::key::kDims, map.dims, 1, path) ||
      !fromJSONSizes(o, tensormap::key::kStrides, map.strides, 1, path) ||
      !fromJSONSizes(o, tensormap::key::kBox, map.box, 1, path))
    return false;
  map.source = static_cast<unsigned>(source);
  map.swizzle = swizzle;
  return true;
}

} // namespace evo
