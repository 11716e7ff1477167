//===- LaunchPlan.cpp - plan (de)serialization and host function ------------===//

#include "evo/Conversion/LaunchPlan.h"
#include "evo/Conversion/InputChecks.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;

namespace evo {

StringRef stringifyBufferRole(BufferRole role) {
  switch (role) {
  case BufferRole::Input:
    return "input";
  case BufferRole::Output:
    return "output";
  case BufferRole::Scratch:
    return "scratch";
  }
  llvm_unreachable("unknown role");
}

std::optional<BufferRole> symbolizeBufferRole(StringRef name) {
  return llvm::StringSwitch<std::optional<BufferRole>>(name)
      .Case("input", BufferRole::Input)
      .Case("output", BufferRole::Output)
      .Case("scratch", BufferRole::Scratch)
      .Default(std::nullopt);
}

int64_t BufferDesc::sizeInBytes() const {
  int64_t bits = type.getElementTypeBitWidth();
  return type.getNumElements() * ((bits + 7) / 8);
}

std::string elementTypeName(Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  type.print(os);
  return s;
}

static DenseI64ArrayAttr i64Array(Builder &b, ArrayRef<int64_t> values) {
  return b.getDenseI64ArrayAttr(values);
}

static DenseI64ArrayAttr i64Array(Builder &b, ArrayRef<unsigned> values) {
  SmallVector<int64_t> wide(values.begin(), values.end());
  return b.getDenseI64ArrayAttr(wide);
}

DictionaryAttr LaunchPlan::toAttr(MLIRContext *ctx) const {
  Builder b(ctx);
  SmallVector<Attribute> bufferAttrs, taskAttrs, launchAttrs;
  for (const BufferDesc &buf : buffers) {
    SmallVector<NamedAttribute> e = {
        b.getNamedAttr("name", b.getStringAttr(buf.name)),
        b.getNamedAttr("role", b.getStringAttr(stringifyBufferRole(buf.role))),
        b.getNamedAttr("type", TypeAttr::get(buf.type))};
    if (buf.zeroInit)
      e.push_back(b.getNamedAttr("zero_init", b.getUnitAttr()));
    bufferAttrs.push_back(b.getDictionaryAttr(e));
  }
  for (const TaskDesc &task : tasks) {
    taskAttrs.push_back(b.getDictionaryAttr({
        b.getNamedAttr("name", b.getStringAttr(task.name)),
        b.getNamedAttr("family", b.getStringAttr(stringifyTaskFamily(task.family))),
        b.getNamedAttr("source", b.getStringAttr(task.source)),
        b.getNamedAttr("knobs", task.knobs ? task.knobs : b.getDictionaryAttr({})),
        b.getNamedAttr("buffers", i64Array(b, task.buffers)),
    }));
  }
  for (const KernelLaunch &launch : launches) {
    launchAttrs.push_back(b.getDictionaryAttr({
        b.getNamedAttr("kernel", b.getStringAttr(launch.kernel)),
        b.getNamedAttr("task", b.getI64IntegerAttr(launch.task)),
        b.getNamedAttr("grid", i64Array(b, ArrayRef<int64_t>(launch.grid))),
        b.getNamedAttr("block", i64Array(b, ArrayRef<int64_t>(launch.block))),
        b.getNamedAttr("dynamic_shared_memory", b.getI64IntegerAttr(launch.dynamicSharedMemory)),
        b.getNamedAttr("args", i64Array(b, launch.args)),
    }));
  }
  return b.getDictionaryAttr({
      b.getNamedAttr("func", b.getStringAttr(funcName)),
      b.getNamedAttr("source", b.getStringAttr(source)),
      b.getNamedAttr("buffers", b.getArrayAttr(bufferAttrs)),
      b.getNamedAttr("tasks", b.getArrayAttr(taskAttrs)),
      b.getNamedAttr("launches", b.getArrayAttr(launchAttrs)),
  });
}

namespace {
/// Typed field access with one diagnostic per missing or ill-typed field.
struct FieldReader {
  DictionaryAttr dict;
  StringRef what;
  function_ref<InFlightDiagnostic()> emitError;

  template <typename T>
  FailureOr<T> get(StringRef key) {
    auto v = dyn_cast_or_null<T>(dict.get(key));
    if (!v)
      return emitError() << "evo.plan: " << what << " needs a valid '" << key << "' field";
    return v;
  }
  FailureOr<std::string> str(StringRef key) {
    FailureOr<StringAttr> s = get<StringAttr>(key);
    if (failed(s))
      return failure();
    return s->str();
  }
  FailureOr<int64_t> i64(StringRef key) {
    FailureOr<IntegerAttr> i = get<IntegerAttr>(key);
    if (failed(i))
      return failure();
    return i->getInt();
  }
  LogicalResult indices(StringRef key, SmallVectorImpl<unsigned> &out, size_t bound) {
    FailureOr<DenseI64ArrayAttr> a = get<DenseI64ArrayAttr>(key);
    if (failed(a))
      return failure();
    for (int64_t v : a->asArrayRef()) {
      if (v < 0 || static_cast<size_t>(v) >= bound)
        return emitError() << "evo.plan: " << what << " '" << key << "' index " << v
                           << " is out of range";
      out.push_back(static_cast<unsigned>(v));
    }
    return success();
  }
  LogicalResult dim3(StringRef key, std::array<int64_t, 3> &out) {
    FailureOr<DenseI64ArrayAttr> a = get<DenseI64ArrayAttr>(key);
    if (failed(a))
      return failure();
    if (a->size() != 3 || llvm::any_of(a->asArrayRef(), [](int64_t v) { return v < 1; }))
      return emitError() << "evo.plan: " << what << " '" << key
                         << "' must be 3 positive sizes";
    llvm::copy(a->asArrayRef(), out.begin());
    return success();
  }
};
} // namespace

FailureOr<LaunchPlan> LaunchPlan::fromAttr(DictionaryAttr attr,
                                           function_ref<InFlightDiagnostic()> emitError) {
  LaunchPlan plan;
  FieldReader top{attr, "plan", emitError};
  FailureOr<std::string> func = top.str("func");
  FailureOr<std::string> source = top.str("source");
  FailureOr<ArrayAttr> buffers = top.get<ArrayAttr>("buffers");
  FailureOr<ArrayAttr> tasks = top.get<ArrayAttr>("tasks");
  FailureOr<ArrayAttr> launches = top.get<ArrayAttr>("launches");
  if (failed(func) || failed(source) || failed(buffers) || failed(tasks) || failed(launches))
    return failure();
  // Plan names become file names, PTX symbols and run-store directories: check them here, where
  // every reader of a plan (emission, evolution, verification) goes through.
  if (failed(checkSymbolName(*func, "evo.plan: function name", emitError, kMaxFunctionNameLength)))
    return failure();
  plan.funcName = *func;
  plan.source = *source;

  for (Attribute a : *buffers) {
    auto d = dyn_cast<DictionaryAttr>(a);
    if (!d)
      return emitError() << "evo.plan: buffers must be dictionaries";
    FieldReader r{d, "buffer", emitError};
    FailureOr<std::string> name = r.str("name"), role = r.str("role");
    FailureOr<TypeAttr> type = r.get<TypeAttr>("type");
    if (failed(name) || failed(role) || failed(type))
      return failure();
    std::optional<BufferRole> parsedRole = symbolizeBufferRole(*role);
    auto memref = dyn_cast<MemRefType>(type->getValue());
    if (!parsedRole || !memref || !memref.hasStaticShape())
      return emitError() << "evo.plan: buffer '" << *name
                         << "' needs a role (input/output/scratch) and a static memref type";
    if (failed(checkSymbolName(*name, "evo.plan: buffer name", emitError)) ||
        failed(checkBufferType(memref, [&] {
          return emitError() << "evo.plan: buffer '" << *name << "': ";
        })))
      return failure();
    plan.buffers.push_back({*name, *parsedRole, memref, d.contains("zero_init")});
  }
  for (Attribute a : *tasks) {
    auto d = dyn_cast<DictionaryAttr>(a);
    if (!d)
      return emitError() << "evo.plan: tasks must be dictionaries";
    FieldReader r{d, "task", emitError};
    TaskDesc task;
    FailureOr<std::string> name = r.str("name"), family = r.str("family"), src = r.str("source");
    FailureOr<DictionaryAttr> knobs = r.get<DictionaryAttr>("knobs");
    if (failed(name) || failed(family) || failed(src) || failed(knobs) ||
        failed(r.indices("buffers", task.buffers, plan.buffers.size())))
      return failure();
    std::optional<TaskFamily> fam = symbolizeTaskFamily(*family);
    if (!fam)
      return emitError() << "evo.plan: task '" << *name << "' has unknown family '" << *family
                         << "'";
    if (failed(checkSymbolName(*name, "evo.plan: task name", emitError)))
      return failure();
    task.name = *name;
    task.family = *fam;
    task.source = *src;
    task.knobs = *knobs;
    plan.tasks.push_back(std::move(task));
  }
  for (Attribute a : *launches) {
    auto d = dyn_cast<DictionaryAttr>(a);
    if (!d)
      return emitError() << "evo.plan: launches must be dictionaries";
    FieldReader r{d, "launch", emitError};
    KernelLaunch launch;
    FailureOr<std::string> kernel = r.str("kernel");
    FailureOr<int64_t> task = r.i64("task"), smem = r.i64("dynamic_shared_memory");
    if (failed(kernel) || failed(task) || failed(smem) || failed(r.dim3("grid", launch.grid)) ||
        failed(r.dim3("block", launch.block)) ||
        failed(r.indices("args", launch.args, plan.buffers.size())))
      return failure();
    if (*task < 0 || static_cast<size_t>(*task) >= plan.tasks.size())
      return emitError() << "evo.plan: launch of '" << *kernel << "' names unknown task "
                         << *task;
    if (failed(checkSymbolName(*kernel, "evo.plan: kernel name", emitError)) ||
        failed(checkLaunchDims(*kernel, launch.grid, launch.block, *smem,
                               [&] { return emitError() << "evo.plan: "; })))
      return failure();
    launch.kernel = *kernel;
    launch.task = *task;
    launch.dynamicSharedMemory = *smem;
    plan.launches.push_back(std::move(launch));
  }
  return plan;
}

FailureOr<LaunchPlan> LaunchPlan::fromModule(gpu::GPUModuleOp module) {
  auto attr = module->getAttrOfType<DictionaryAttr>(kPlanAttrName);
  if (!attr)
    return module.emitError() << "gpu.module has no '" << kPlanAttrName << "' attribute";
  return fromAttr(attr, [&] { return module.emitError(); });
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
    for (auto [i, param, buf] : llvm::enumerate(params, launch.args))
      if (param != buffers[buf].type)
        return kernel.emitError() << "parameter " << i << " has type " << param
                                  << " but evo.plan passes buffer '" << buffers[buf].name
                                  << "' of type " << buffers[buf].type;
  }
  // A scratch buffer no launch uses would be allocated for nothing (e.g. left over after a task
  // was re-lowered).
  for (auto [i, buf] : llvm::enumerate(buffers))
    if (buf.role == BufferRole::Scratch &&
        llvm::none_of(launches, [&](const KernelLaunch &l) { return llvm::is_contained(l.args, i); }))
      return module.emitError() << "evo.plan's scratch buffer '" << buf.name
                                << "' is not passed to any launch";
  return success();
}

func::FuncOp buildHostFunction(OpBuilder &builder, Location loc, const LaunchPlan &plan,
                               gpu::GPUModuleOp module) {
  SmallVector<Type> argTypes;
  for (const BufferDesc &buf : plan.buffers)
    if (buf.role != BufferRole::Scratch)
      argTypes.push_back(buf.type);
  auto func = func::FuncOp::create(builder, loc, plan.funcName,
                                   builder.getFunctionType(argTypes, {}));
  OpBuilder::InsertionGuard guard(builder);
  Block *entry = func.addEntryBlock();
  builder.setInsertionPointToStart(entry);

  SmallVector<Value> bufferValues;
  SmallVector<Value> scratch;
  unsigned nextArg = 0;
  // Scratch buffers use the async forms (what upstream's gpu-to-llvm lowers), joined by a
  // gpu.wait before the first launch.
  auto tokenType = gpu::AsyncTokenType::get(builder.getContext());
  Value token;
  for (const BufferDesc &buf : plan.buffers) {
    if (buf.role != BufferRole::Scratch) {
      bufferValues.push_back(entry->getArgument(nextArg++));
      continue;
    }
    if (!token)
      token = gpu::WaitOp::create(builder, loc, tokenType, ValueRange()).getAsyncToken();
    auto alloc = gpu::AllocOp::create(builder, loc, buf.type, tokenType, ValueRange{token},
                                      /*dynamicSizes=*/ValueRange(), /*symbolOperands=*/ValueRange());
    token = alloc.getAsyncToken();
    if (buf.zeroInit) {
      Value zero = arith::ConstantOp::create(
          builder, loc, builder.getZeroAttr(buf.type.getElementType()));
      token = gpu::MemsetOp::create(builder, loc, tokenType, ValueRange{token}, alloc.getMemref(),
                                    zero)
                  .getAsyncToken();
    }
    bufferValues.push_back(alloc.getMemref());
    scratch.push_back(alloc.getMemref());
  }
  if (token)
    gpu::WaitOp::create(builder, loc, Type(), ValueRange{token});

  llvm::DenseMap<int64_t, Value> indexConstants;
  auto idx = [&](int64_t v) -> Value {
    Value &c = indexConstants[v];
    if (!c)
      c = arith::ConstantIndexOp::create(builder, loc, v);
    return c;
  };
  for (const KernelLaunch &launch : plan.launches) {
    auto kernel = module.lookupSymbol<gpu::GPUFuncOp>(launch.kernel);
    SmallVector<Value> args;
    for (unsigned b : launch.args)
      args.push_back(bufferValues[b]);
    gpu::KernelDim3 grid{idx(launch.grid[0]), idx(launch.grid[1]), idx(launch.grid[2])};
    gpu::KernelDim3 block{idx(launch.block[0]), idx(launch.block[1]), idx(launch.block[2])};
    Value smem;
    if (launch.dynamicSharedMemory)
      smem = arith::ConstantIntOp::create(builder, loc, launch.dynamicSharedMemory, 32);
    gpu::LaunchFuncOp::create(builder, loc, kernel, grid, block, smem, args);
  }
  if (!scratch.empty()) {
    Value t = gpu::WaitOp::create(builder, loc, tokenType, ValueRange()).getAsyncToken();
    for (Value s : scratch)
      t = gpu::DeallocOp::create(builder, loc, tokenType, ValueRange{t}, s).getAsyncToken();
    gpu::WaitOp::create(builder, loc, Type(), ValueRange{t});
  }
  func::ReturnOp::create(builder, loc);
  return func;
}

} // namespace evo
