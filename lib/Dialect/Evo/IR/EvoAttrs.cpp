//===- EvoAttrs.cpp - #evo.knobs, #evo.plan and their parts --------------------===//

#include "evo/Dialect/Evo/IR/EvoAttrs.h"
#include "evo/Dialect/Evo/IR/InputChecks.h"
#include "evo/Dialect/Evo/IR/Knobs.h"
#include "evo/Dialect/Evo/IR/LaunchPlan.h"
#include "evo/Runtime/TensorMap.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"
#include <functional>

using namespace mlir;

namespace evo::detail {

void printI64List(AsmPrinter &printer, ArrayRef<int64_t> values) {
  printer << '[';
  llvm::interleaveComma(values, printer);
  printer << ']';
}

void printKnobParameter(AsmPrinter &printer, std::optional<int64_t> v) { printer << *v; }
void printKnobParameter(AsmPrinter &printer, std::optional<bool> v) {
  printer << (*v ? "true" : "false");
}
void printKnobParameter(AsmPrinter &printer, std::optional<ReductionStrategy> v) {
  printer << stringifyReductionStrategy(*v);
}
void printKnobParameter(AsmPrinter &printer, std::optional<F32Matmul> v) {
  // "3xtf32" is no keyword (it starts with a digit): printed as a string, which parses back.
  printer.printKeywordOrString(stringifyF32Matmul(*v));
}

} // namespace evo::detail

//===----------------------------------------------------------------------===//
// `<key = value, ...>`: the one parser and printer of every evo attribute
//===----------------------------------------------------------------------===//
//
// Each attribute names its keys once; the struct parser reports an unknown, duplicate or missing
// key and a malformed value with ONE diagnostic at the offending token, saying what was
// expected (mlir-tblgen's struct(params) gave "expected ','" plus an error naming a C++ type).

namespace {

struct ValueSite;

/// A key of an attribute: its spelling, whether it must be given, and how its value is parsed
/// (into the caller's variable; the parser reports its own error).
struct StructField {
  StringRef name;
  bool required;
  std::function<ParseResult(const ValueSite &)> parse;
};

/// Where a value is parsed: the errors about it name the attribute and the key.
struct ValueSite {
  StringRef attr;
  StringRef key;
  SMLoc loc;

  InFlightDiagnostic expected(AsmParser &p, const Twine &what) const {
    return p.emitError(loc) << attr << ": '" << key << "' expects " << what;
  }
  ValueSite at(SMLoc l) const { return {attr, key, l}; }
};

std::string keyList(ArrayRef<StructField> fields) {
  std::string out;
  for (const StructField &f : fields)
    out += (out.empty() ? "" : ", ") + f.name.str();
  return out;
}

/// `<key = value, ...>` of attribute `attr` (`#evo.plan`): each key of `fields` at most once,
/// the required ones at least once, each value parsed by its field.
ParseResult parseStruct(AsmParser &p, StringRef attr, ArrayRef<StructField> fields) {
  if (failed(p.parseOptionalLess()))
    return p.emitError(p.getCurrentLocation()) << attr << ": expected '<'";
  llvm::SmallVector<bool> seen(fields.size(), false);
  SMLoc end = p.getCurrentLocation();
  if (failed(p.parseOptionalGreater())) {
    while (true) {
      SMLoc keyLoc = p.getCurrentLocation();
      StringRef key;
      if (failed(p.parseOptionalKeyword(&key)))
        return p.emitError(keyLoc) << attr << ": expected a key (" << keyList(fields) << ")";
      const StructField *f =
          llvm::find_if(fields, [&](const StructField &x) { return x.name == key; });
      if (f == fields.end())
        return p.emitError(keyLoc) << attr << ": unknown key '" << key << "' (expected one of "
                                   << keyList(fields) << ")";
      unsigned i = f - fields.begin();
      if (seen[i])
        return p.emitError(keyLoc) << attr << ": duplicate key '" << key << "'";
      seen[i] = true;
      if (failed(p.parseOptionalEqual()))
        return p.emitError(p.getCurrentLocation())
               << attr << ": expected '=' after '" << key << "'";
      if (failed(f->parse(ValueSite{attr, f->name, p.getCurrentLocation()})))
        return failure();
      end = p.getCurrentLocation();
      if (succeeded(p.parseOptionalGreater()))
        break;
      if (failed(p.parseOptionalComma()))
        return p.emitError(end) << attr << ": expected ',' or '>' after the value of '" << key
                                << "'";
    }
  }
  for (auto [f, given] : llvm::zip_equal(fields, seen))
    if (f.required && !given)
      return p.emitError(end) << attr << ": missing key '" << f.name << "'";
  return success();
}

/// Prints `<key = value, ...>` exactly as struct(params) did (optional values left out by the
/// caller when they have their default).
class StructPrinter {
public:
  explicit StructPrinter(AsmPrinter &p) : p(p) { p << '<'; }
  ~StructPrinter() { p << '>'; }
  AsmPrinter &key(StringRef name) {
    if (!first)
      p << ", ";
    first = false;
    return p << name << " = ";
  }

private:
  AsmPrinter &p;
  bool first = true;
};

// The values. Each reports one error at the value naming what the key expects.

ParseResult parseValue(AsmParser &p, const ValueSite &s, int64_t &out) {
  // AsmParser reads `true`/`false` as 1-bit integers (`true` became -1): not integers here.
  if (succeeded(p.parseOptionalKeyword("true")) || succeeded(p.parseOptionalKeyword("false")))
    return s.expected(p, "an integer, not a boolean");
  OptionalParseResult r = p.parseOptionalInteger(out);
  if (!r.has_value())
    return s.expected(p, "an integer");
  return *r;
}

ParseResult parseValue(AsmParser &p, const ValueSite &s, bool &out) {
  if (succeeded(p.parseOptionalKeyword("true")))
    out = true;
  else if (succeeded(p.parseOptionalKeyword("false")))
    out = false;
  else
    return s.expected(p, "'true' or 'false'");
  return success();
}

ParseResult parseValue(AsmParser &p, const ValueSite &s, std::string &out) {
  if (failed(p.parseOptionalString(&out)))
    return s.expected(p, "a string");
  return success();
}

ParseResult parseValue(AsmParser &p, const ValueSite &s, SmallVector<int64_t> &out) {
  if (failed(p.parseOptionalLSquare()))
    return s.expected(p, "a list of integers [a, b, ...]");
  if (succeeded(p.parseOptionalRSquare()))
    return success();
  do {
    int64_t v;
    if (failed(parseValue(p, s.at(p.getCurrentLocation()), v)))
      return failure();
    out.push_back(v);
  } while (succeeded(p.parseOptionalComma()));
  if (failed(p.parseOptionalRSquare()))
    return p.emitError(p.getCurrentLocation())
           << s.attr << ": expected ',' or ']' in the list of '" << s.key << "'";
  return success();
}

ParseResult parseValue(AsmParser &p, const ValueSite &s, MemRefType &out) {
  Type t;
  OptionalParseResult r = p.parseOptionalType(t);
  if (r.has_value() && failed(*r))
    return failure();
  if (!r.has_value())
    return s.expected(p, "a memref type");
  if (!(out = dyn_cast<MemRefType>(t)))
    return s.expected(p, "a memref type, not ") << t;
  return success();
}

template <typename E, std::enable_if_t<std::is_enum_v<E>, int> = 0>
ParseResult parseValue(AsmParser &p, const ValueSite &s, E &out) {
  std::string word;
  if (succeeded(p.parseOptionalKeywordOrString(&word)))
    if (std::optional<E> v = evo::symbolizeEnum<E>(word)) {
      out = *v;
      return success();
    }
  // The cases are 0..max: stringify gives "" past the last one.
  std::string names;
  for (uint32_t i = 0; !stringifyEnum(static_cast<E>(i)).empty(); ++i)
    names += (i ? ", " : "") + stringifyEnum(static_cast<E>(i)).str();
  return s.expected(p, "one of " + names);
}

/// A nested evo attribute, `#evo.x<...>` or the stripped `<...>` struct(params) printed.
template <typename AttrT>
ParseResult parseNested(AsmParser &p, const ValueSite &s, StringRef what, AttrT &out) {
  Attribute a;
  if (failed(p.parseCustomAttributeWithFallback(a, Type(), [&](Attribute &r, Type t) {
        r = AttrT::parse(p, t);
        return success(static_cast<bool>(r));
      })))
    return failure();
  if (!(out = dyn_cast<AttrT>(a)))
    return s.expected(p, what) << ", not " << a;
  return success();
}

/// `[#evo.x<...>, ...]`.
template <typename AttrT>
ParseResult parseAttrList(AsmParser &p, const ValueSite &s, StringRef what,
                          SmallVector<AttrT> &out) {
  if (failed(p.parseOptionalLSquare()))
    return s.expected(p, "a list [" + what + ", ...]");
  if (succeeded(p.parseOptionalRSquare()))
    return success();
  do {
    SMLoc loc = p.getCurrentLocation();
    Attribute a;
    if (failed(p.parseAttribute(a)))
      return failure();
    auto v = dyn_cast<AttrT>(a);
    if (!v)
      return s.at(loc).expected(p, "a list of " + what + ", not ") << a;
    out.push_back(v);
  } while (succeeded(p.parseOptionalComma()));
  if (failed(p.parseOptionalRSquare()))
    return p.emitError(p.getCurrentLocation())
           << s.attr << ": expected ',' or ']' in the list of '" << s.key << "'";
  return success();
}

/// Field parsers binding the caller's variables: a plain value, a nested attribute, a list of
/// attributes.
template <typename T> auto value(AsmParser &p, T &out) {
  return [&p, &out](const ValueSite &s) { return parseValue(p, s, out); };
}
template <typename AttrT> auto nested(AsmParser &p, StringRef what, AttrT &out) {
  return [&p, what, &out](const ValueSite &s) { return parseNested(p, s, what, out); };
}
template <typename AttrT> auto attrList(AsmParser &p, StringRef what, SmallVector<AttrT> &out) {
  return [&p, what, &out](const ValueSite &s) { return parseAttrList(p, s, what, out); };
}

/// Knob values: a set knob is an std::optional, a list knob a (possibly empty) vector.
template <typename T>
ParseResult parseKnobValue(AsmParser &p, const ValueSite &s, std::optional<T> &out) {
  T v;
  if (failed(parseValue(p, s, v)))
    return failure();
  out = v;
  return success();
}
ParseResult parseKnobValue(AsmParser &p, const ValueSite &s, SmallVector<int64_t> &out) {
  return parseValue(p, s, out);
}
template <typename T>
void printKnobValue(StructPrinter &sp, AsmPrinter &p, StringRef name, const std::optional<T> &v) {
  if (v) {
    sp.key(name);
    evo::detail::printKnobParameter(p, v);
  }
}
void printKnobValue(StructPrinter &sp, AsmPrinter &p, StringRef name, ArrayRef<int64_t> v) {
  if (!v.empty()) {
    sp.key(name);
    evo::detail::printI64List(p, v);
  }
}

} // namespace

#include "evo/Dialect/Evo/IR/EvoAttrInterfaces.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "evo/Dialect/Evo/IR/EvoAttrs.cpp.inc"

namespace evo {

//===----------------------------------------------------------------------===//
// Assembly formats
//===----------------------------------------------------------------------===//

Attribute KnobsAttr::parse(AsmParser &p, Type) {
  SMLoc loc = p.getCurrentLocation();
  using KnobInt = std::optional<int64_t>;
  using KnobBool = std::optional<bool>;
  using KnobStrategy = std::optional<ReductionStrategy>;
  using KnobF32Matmul = std::optional<F32Matmul>;
  using KnobList = SmallVector<int64_t>;
#define EVO_KNOB_VAR(name, cpp, kind, arg, doc) Knob##kind name;
  EVO_KNOB_LIST(EVO_KNOB_VAR)
#undef EVO_KNOB_VAR
  const StructField fields[] = {
#define EVO_KNOB_FIELD(name, cpp, kind, arg, doc)                                                 \
  {#name, false, [&](const ValueSite &s) { return parseKnobValue(p, s, name); }},
      EVO_KNOB_LIST(EVO_KNOB_FIELD)
#undef EVO_KNOB_FIELD
  };
  if (failed(parseStruct(p, "#evo.knobs", fields)))
    return {};
#define EVO_KNOB_ARG(name, cpp, kind, arg, doc) , name
  return p.getChecked<KnobsAttr>(loc, p.getContext() EVO_KNOB_LIST(EVO_KNOB_ARG));
#undef EVO_KNOB_ARG
}

void KnobsAttr::print(AsmPrinter &p) const {
  StructPrinter sp(p);
#define EVO_KNOB_PRINT(name, cpp, kind, arg, doc) printKnobValue(sp, p, #name, getImpl()->name);
  EVO_KNOB_LIST(EVO_KNOB_PRINT)
#undef EVO_KNOB_PRINT
}

Attribute TensorMapAttr::parse(AsmParser &p, Type) {
  SMLoc loc = p.getCurrentLocation();
  int64_t source = 0, swizzle = 0;
  SmallVector<int64_t> dims, strides, box;
  if (failed(parseStruct(p, "#evo.tensor_map",
                         {{"source", true, value(p, source)},
                          {"dims", true, value(p, dims)},
                          {"strides", true, value(p, strides)},
                          {"box", true, value(p, box)},
                          {"swizzle", false, value(p, swizzle)}})))
    return {};
  return p.getChecked<TensorMapAttr>(loc, p.getContext(), source, dims, strides, box, swizzle);
}

void TensorMapAttr::print(AsmPrinter &p) const {
  StructPrinter sp(p);
  sp.key("source").printStrippedAttrOrType(getSource());
  detail::printI64List(sp.key("dims"), getDims());
  detail::printI64List(sp.key("strides"), getStrides());
  detail::printI64List(sp.key("box"), getBox());
  if (getSwizzle() != 0)
    sp.key("swizzle").printStrippedAttrOrType(getSwizzle());
}

Attribute BufferAttr::parse(AsmParser &p, Type) {
  SMLoc loc = p.getCurrentLocation();
  std::string name, global;
  BufferRole role = BufferRole::Input;
  MemRefType type;
  bool zeroInit = false, byValue = false;
  TensorMapAttr tensorMap;
  if (failed(parseStruct(p, "#evo.buffer",
                         {{"name", true, value(p, name)},
                          {"role", true, value(p, role)},
                          {"type", true, value(p, type)},
                          {"zero_init", false, value(p, zeroInit)},
                          {"tensor_map", false, nested(p, "#evo.tensor_map<...>", tensorMap)},
                          {"by_value", false, value(p, byValue)},
                          {"global", false, value(p, global)}})))
    return {};
  return p.getChecked<BufferAttr>(loc, p.getContext(), name, role, type, zeroInit, tensorMap,
                                  byValue, global);
}

void BufferAttr::print(AsmPrinter &p) const {
  StructPrinter sp(p);
  sp.key("name").printString(getName());
  sp.key("role").printStrippedAttrOrType(getRole());
  sp.key("type").printStrippedAttrOrType(getType());
  if (getZeroInit())
    sp.key("zero_init").printStrippedAttrOrType(getZeroInit());
  if (getTensorMap())
    sp.key("tensor_map").printStrippedAttrOrType(getTensorMap());
  if (getByValue())
    sp.key("by_value").printStrippedAttrOrType(getByValue());
  if (!getGlobal().empty())
    sp.key("global").printString(getGlobal());
}

Attribute TaskAttr::parse(AsmParser &p, Type) {
  SMLoc loc = p.getCurrentLocation();
  std::string name, source;
  TaskFamily family = TaskFamily::Elementwise;
  KnobsAttr knobs;
  SmallVector<int64_t> buffers;
  if (failed(parseStruct(p, "#evo.task",
                         {{"name", true, value(p, name)},
                          {"family", true, value(p, family)},
                          {"source", true, value(p, source)},
                          {"knobs", true, nested(p, "#evo.knobs<...>", knobs)},
                          {"buffers", true, value(p, buffers)}})))
    return {};
  return p.getChecked<TaskAttr>(loc, p.getContext(), name, family, source, knobs, buffers);
}

void TaskAttr::print(AsmPrinter &p) const {
  StructPrinter sp(p);
  sp.key("name").printString(getName());
  sp.key("family").printStrippedAttrOrType(getFamily());
  sp.key("source").printString(getSource());
  sp.key("knobs").printStrippedAttrOrType(getKnobs());
  detail::printI64List(sp.key("buffers"), getBuffers());
}

Attribute LaunchAttr::parse(AsmParser &p, Type) {
  SMLoc loc = p.getCurrentLocation();
  std::string kernel;
  int64_t task = 0, dynamicSharedMemory = 0;
  SmallVector<int64_t> grid, block, args;
  if (failed(parseStruct(p, "#evo.launch",
                         {{"kernel", true, value(p, kernel)},
                          {"task", true, value(p, task)},
                          {"grid", true, value(p, grid)},
                          {"block", true, value(p, block)},
                          {"dynamic_shared_memory", false, value(p, dynamicSharedMemory)},
                          {"args", true, value(p, args)}})))
    return {};
  return p.getChecked<LaunchAttr>(loc, p.getContext(), kernel, task, grid, block,
                                  dynamicSharedMemory, args);
}

void LaunchAttr::print(AsmPrinter &p) const {
  StructPrinter sp(p);
  sp.key("kernel").printString(getKernel());
  sp.key("task").printStrippedAttrOrType(getTask());
  detail::printI64List(sp.key("grid"), getGrid());
  detail::printI64List(sp.key("block"), getBlock());
  if (getDynamicSharedMemory() != 0)
    sp.key("dynamic_shared_memory").printStrippedAttrOrType(getDynamicSharedMemory());
  detail::printI64List(sp.key("args"), getArgs());
}

Attribute PlanAttr::parse(AsmParser &p, Type) {
  SMLoc loc = p.getCurrentLocation();
  std::string func, source;
  SmallVector<BufferAttr> buffers;
  SmallVector<TaskAttr> tasks;
  SmallVector<LaunchAttr> launches;
  if (failed(parseStruct(p, "#evo.plan",
                         {{"func", true, value(p, func)},
                          {"source", true, value(p, source)},
                          {"buffers", true, attrList(p, "#evo.buffer<...>", buffers)},
                          {"tasks", true, attrList(p, "#evo.task<...>", tasks)},
                          {"launches", true, attrList(p, "#evo.launch<...>", launches)}})))
    return {};
  return p.getChecked<PlanAttr>(loc, p.getContext(), func, source, buffers, tasks, launches);
}

void PlanAttr::print(AsmPrinter &p) const {
  StructPrinter sp(p);
  sp.key("func").printString(getFunc());
  sp.key("source").printString(getSource());
  detail::printAttrList(sp.key("buffers"), getBuffers());
  detail::printAttrList(sp.key("tasks"), getTasks());
  detail::printAttrList(sp.key("launches"), getLaunches());
}


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
                                 TensorMapAttr tensorMap, bool byValue, StringRef global) {
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
  // A constant: the global that holds its value, and nothing a constant cannot be.
  if ((role == BufferRole::Constant) != !global.empty())
    return emitError() << "evo.plan: buffer '" << name << "' "
                       << (global.empty() ? "of role constant needs the global holding its value"
                                          : "has a global but its role is not constant");
  if (role == BufferRole::Constant) {
    if (failed(checkSymbolName(global, "evo.plan: constant's global", emitError)))
      return failure();
    if (zeroInit || byValue)
      return emitError() << "evo.plan: constant '" << name << "' cannot be "
                         << (zeroInit ? "zero_init" : "by_value");
  }
  // A scalar argument: a 0-d input of a type the kernels take by value.
  if (byValue) {
    if (role != BufferRole::Input || zeroInit || type.getRank() != 0)
      return emitError() << "evo.plan: buffer '" << name
                         << "' is by_value: it must be an input of rank 0 (a scalar argument, "
                            "e.g. memref<f32>), not zero_init, got "
                         << stringifyBufferRole(role) << " " << type;
    if (failed(checkScalarArgumentType(type.getElementType(), [&] {
          return emitError() << "evo.plan: by_value buffer '" << name << "': ";
        })))
      return failure();
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
    if (source.getRole() == BufferRole::TensorMap || source.getByValue())
      return emitError() << "evo.plan: tensor map '" << b.getName() << "' has source '"
                         << source.getName() << "', which is "
                         << (source.getByValue() ? "a scalar argument (by_value)"
                                                 : "a tensor map itself");
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
