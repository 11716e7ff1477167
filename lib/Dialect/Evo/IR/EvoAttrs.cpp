//===- EvoAttrs.cpp - #evo.knobs, #evo.plan and their parts --------------------===//

#include "evo/Dialect/Evo/IR/EvoAttrs.h"
#include "evo/Dialect/Evo/IR/InputChecks.h"
#include "evo/Dialect/Evo/IR/Knobs.h"
#include "evo/Dialect/Evo/IR/LaunchPlan.h"
#include "evo/Runtime/TensorMap.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

namespace evo::detail {

FailureOr<SmallVector<int64_t>> parseI64List(AsmParser &parser) {
  SmallVector<int64_t> out;
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
        int64_t v;
        if (parser.parseInteger(v))
          return failure();
        out.push_back(v);
        return success();
      }))
    return failure();
  return out;
}

void printI64List(AsmPrinter &printer, ArrayRef<int64_t> values) {
  printer << '[';
  llvm::interleaveComma(values, printer);
  printer << ']';
}

template <>
FailureOr<std::optional<int64_t>> parseKnobParameter(AsmParser &parser) {
  int64_t v;
  if (parser.parseInteger(v))
    return failure();
  return std::optional<int64_t>(v);
}
template <>
FailureOr<std::optional<bool>> parseKnobParameter(AsmParser &parser) {
  if (succeeded(parser.parseOptionalKeyword("true")))
    return std::optional<bool>(true);
  if (succeeded(parser.parseOptionalKeyword("false")))
    return std::optional<bool>(false);
  return parser.emitError(parser.getCurrentLocation(), "expected 'true' or 'false'");
}
template <>
FailureOr<std::optional<ReductionStrategy>> parseKnobParameter(AsmParser &parser) {
  FailureOr<ReductionStrategy> v = FieldParser<ReductionStrategy>::parse(parser);
  if (failed(v))
    return failure();
  return std::optional<ReductionStrategy>(*v);
}

void printKnobParameter(AsmPrinter &printer, std::optional<int64_t> v) { printer << *v; }
void printKnobParameter(AsmPrinter &printer, std::optional<bool> v) {
  printer << (*v ? "true" : "false");
}
void printKnobParameter(AsmPrinter &printer, std::optional<ReductionStrategy> v) {
  printer << stringifyReductionStrategy(*v);
}

} // namespace evo::detail

#include "evo/Dialect/Evo/IR/EvoAttrInterfaces.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "evo/Dialect/Evo/IR/EvoAttrs.cpp.inc"

namespace evo {

//===----------------------------------------------------------------------===//
// Knob sets
//===----------------------------------------------------------------------===//

LogicalResult KnobsAttr::overlayKnobs(ScheduleKnobs &knobs,
                                      function_ref<InFlightDiagnostic()> emitError) const {
  // Only the knobs this attribute sets replace those of `knobs`. The parameters are named like
  // the knobs (EvoAttrs.td), so each knob reads its own: absent is std::nullopt or an empty list.
#define EVO_KNOB_OVERLAY(name, cpp, kind, arg, doc)                                               \
  detail::overlayKnob(knobs.cpp, getImpl()->name);
  EVO_KNOB_LIST(EVO_KNOB_OVERLAY)
#undef EVO_KNOB_OVERLAY
  return knobs.verify(emitError);
}

namespace {
/// The `evo.knobs = {block_size = 128 : i64}` form input ops may carry.
struct DictionaryKnobSet
    : public KnobSetAttrInterface::ExternalModel<DictionaryKnobSet, DictionaryAttr> {
  LogicalResult overlayKnobs(Attribute attr, ScheduleKnobs &knobs,
                             function_ref<InFlightDiagnostic()> emitError) const {
    return knobs.merge(cast<DictionaryAttr>(attr), emitError);
  }
};
} // namespace

//===----------------------------------------------------------------------===//
// The launch plan
//===----------------------------------------------------------------------===//

LogicalResult TensorMapAttr::verify(function_ref<InFlightDiagnostic()> emitError, int64_t source,
                                    ArrayRef<int64_t> dims, ArrayRef<int64_t> strides,
                                    ArrayRef<int64_t> box, int64_t swizzle) {
  if (source < 0)
    return emitError() << "evo.plan: tensor map source " << source << " is not a buffer index";
  std::string err = tensormap::checkShape({dims.begin(), dims.end()},
                                          {strides.begin(), strides.end()},
                                          {box.begin(), box.end()}, swizzle);
  if (!err.empty())
    return emitError() << "evo.plan: tensor map: " << err;
  return success();
}

LogicalResult BufferAttr::verify(function_ref<InFlightDiagnostic()> emitError, StringRef name,
                                 BufferRole role, MemRefType type, bool zeroInit,
                                 TensorMapAttr tensorMap) {
  if (failed(checkSymbolName(name, "evo.plan: buffer name", emitError)))
    return failure();
  if (!type || !type.hasStaticShape())
    return emitError() << "evo.plan: buffer '" << name << "' needs a static memref type";
  if ((role == BufferRole::TensorMap) != static_cast<bool>(tensorMap))
    return emitError() << "evo.plan: buffer '" << name << "' "
                       << (tensorMap ? "has a tensor_map but its role is not tensor_map"
                                     : "of role tensor_map needs a tensor_map");
  if (tensorMap) {
    if (type != tensorMapBufferType(type.getContext()))
      return emitError() << "evo.plan: tensor map '" << name << "' must have type "
                         << tensorMapBufferType(type.getContext()) << ", not " << type;
    if (zeroInit)
      return emitError() << "evo.plan: tensor map '" << name << "' cannot be zero_init";
  }
  return checkBufferType(type, [&] { return emitError() << "evo.plan: buffer '" << name << "': "; });
}

LogicalResult TaskAttr::verify(function_ref<InFlightDiagnostic()> emitError, StringRef name,
                               TaskFamily, StringRef, KnobsAttr knobs, ArrayRef<int64_t>) {
  if (!knobs)
    return emitError() << "evo.plan: task '" << name << "' needs knobs";
  return checkSymbolName(name, "evo.plan: task name", emitError);
}

LogicalResult LaunchAttr::verify(function_ref<InFlightDiagnostic()> emitError, StringRef kernel,
                                 int64_t task, ArrayRef<int64_t> grid, ArrayRef<int64_t> block,
                                 int64_t dynamicSharedMemory, ArrayRef<int64_t>) {
  if (failed(checkSymbolName(kernel, "evo.plan: kernel name", emitError)))
    return failure();
  for (auto [what, dims] : {std::pair{"grid", grid}, std::pair{"block", block}})
    if (dims.size() != 3 || llvm::any_of(dims, [](int64_t v) { return v < 1; }))
      return emitError() << "evo.plan: launch '" << what << "' must be 3 positive sizes";
  if (task < 0)
    return emitError() << "evo.plan: launch of '" << kernel << "' names unknown task " << task;
  std::array<int64_t, 3> g, b;
  llvm::copy(grid, g.begin());
  llvm::copy(block, b.begin());
  return checkLaunchDims(kernel, g, b, dynamicSharedMemory,
                         [&] { return emitError() << "evo.plan: "; });
}

/// Buffer indices must name buffers of the plan.
static LogicalResult checkIndices(function_ref<InFlightDiagnostic()> emitError, StringRef what,
                                  StringRef key, ArrayRef<int64_t> indices, size_t bound) {
  for (int64_t v : indices)
    if (v < 0 || static_cast<size_t>(v) >= bound)
      return emitError() << "evo.plan: " << what << " '" << key << "' index " << v
                         << " is out of range";
  return success();
}

LogicalResult PlanAttr::verify(function_ref<InFlightDiagnostic()> emitError, StringRef func,
                               StringRef, ArrayRef<BufferAttr> buffers, ArrayRef<TaskAttr> tasks,
                               ArrayRef<LaunchAttr> launches) {
  // Plan names become file names, PTX symbols and run-store directories: checked here, where
  // every plan (lowered, emitted, spliced or parsed) goes through.
  if (failed(checkSymbolName(func, "evo.plan: function name", emitError, kMaxFunctionNameLength)))
    return failure();
  for (TaskAttr t : tasks)
    if (failed(checkIndices(emitError, "task", "buffers", t.getBuffers(), buffers.size())))
      return failure();
  // Tensor maps: the source is another buffer of the plan, and the map fits it (a hostile plan
  // must not make the host encode a descriptor that lets TMA reach beyond the source).
  for (BufferAttr b : buffers) {
    TensorMapAttr m = b.getTensorMap();
    if (!m)
      continue;
    int64_t src = m.getSource();
    if (static_cast<size_t>(src) >= buffers.size())
      return emitError() << "evo.plan: tensor map '" << b.getName() << "' names source buffer "
                         << src << ", which is out of range";
    BufferAttr source = buffers[src];
    if (source.getRole() == BufferRole::TensorMap)
      return emitError() << "evo.plan: tensor map '" << b.getName() << "' has source '"
                         << source.getName() << "', which is a tensor map itself";
    TensorMapDesc desc{static_cast<unsigned>(src), llvm::to_vector(m.getDims()),
                       llvm::to_vector(m.getStrides()), llvm::to_vector(m.getBox()),
                       m.getSwizzle()};
    if (failed(verifyTensorMap(desc, source.getType(), [&] {
          return emitError() << "evo.plan: tensor map '" << b.getName() << "' over '"
                             << source.getName() << "': ";
        })))
      return failure();
  }
  for (LaunchAttr l : launches) {
    if (failed(checkIndices(emitError, "launch", "args", l.getArgs(), buffers.size())))
      return failure();
    if (static_cast<size_t>(l.getTask()) >= tasks.size())
      return emitError() << "evo.plan: launch of '" << l.getKernel() << "' names unknown task "
                         << l.getTask();
  }
  return success();
}

void EvoDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "evo/Dialect/Evo/IR/EvoAttrs.cpp.inc"
      >();
  DictionaryAttr::attachInterface<DictionaryKnobSet>(*getContext());
}

} // namespace evo
