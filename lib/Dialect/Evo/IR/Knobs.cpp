//===- Knobs.cpp - schedule knobs: conversions generated from EvoKnobs.td -------===//
//
// The per-knob code (defaults, checks, which family records what, search values) is generated
// into EvoAttrs.cpp.inc; this file walks EVO_KNOB_LIST for what is the same for every knob of a
// kind: reading a value from a dictionary or JSON, writing it to JSON, comparing.
//
//===----------------------------------------------------------------------===//

#include "evo/Dialect/Evo/IR/Knobs.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
namespace json = llvm::json;

namespace evo {

StringRef knobName(KnobId id) { return knownKnobNames()[static_cast<size_t>(id)]; }

ArrayRef<StringRef> knownKnobNames() {
  static const StringRef names[] = {
#define EVO_KNOB_NAME(name, cpp, kind, arg, doc) #name,
      EVO_KNOB_LIST(EVO_KNOB_NAME)
#undef EVO_KNOB_NAME
  };
  return names;
}

std::optional<KnobId> symbolizeKnob(StringRef name) {
  for (auto [i, n] : llvm::enumerate(knownKnobNames()))
    if (n == name)
      return static_cast<KnobId>(i);
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// One value of each kind, from an attribute or JSON
//===----------------------------------------------------------------------===//

namespace {
/// A knob value being read; `error` receives the reason when it cannot be.
struct ValueReader {
  StringRef key;
  std::string error;

  bool fail(const Twine &msg) {
    error = msg.str();
    return false;
  }
  // From attributes (`evo.knobs` dictionaries).
  bool read(Attribute a, int64_t &out) {
    if (auto i = dyn_cast<IntegerAttr>(a); i && !isa<BoolAttr>(a)) {
      out = i.getInt();
      return true;
    }
    return fail("knob '" + key + "' must be an integer");
  }
  bool read(Attribute a, bool &out) {
    if (auto b = dyn_cast<BoolAttr>(a)) {
      out = b.getValue();
      return true;
    }
    int64_t v;
    if (!read(a, v))
      return false;
    if (v != 0 && v != 1)
      return fail("knob '" + key + "' must be 0 or 1");
    out = v;
    return true;
  }
  bool read(Attribute a, ReductionStrategy &out) {
    if (auto e = dyn_cast<ReductionStrategyAttr>(a)) {
      out = e.getValue();
      return true;
    }
    auto s = dyn_cast<StringAttr>(a);
    std::optional<ReductionStrategy> v = s ? symbolizeReductionStrategy(s.getValue()) : std::nullopt;
    if (!v)
      return fail("knob '" + key + "' must be \"thread\", \"warp\" or \"block\"");
    out = *v;
    return true;
  }
  bool read(Attribute a, F32Matmul &out) {
    if (auto e = dyn_cast<F32MatmulAttr>(a)) {
      out = e.getValue();
      return true;
    }
    auto s = dyn_cast<StringAttr>(a);
    std::optional<F32Matmul> v = s ? symbolizeF32Matmul(s.getValue()) : std::nullopt;
    if (!v)
      return fail("knob '" + key + "' must be \"ieee\", \"tf32\" or \"3xtf32\"");
    out = *v;
    return true;
  }
  bool read(Attribute a, KnobList &out) {
    out.clear();
    if (auto dense = dyn_cast<DenseI64ArrayAttr>(a)) {
      llvm::append_range(out, dense.asArrayRef());
      return true;
    }
    if (auto array = dyn_cast<ArrayAttr>(a)) {
      for (Attribute e : array) {
        auto i = dyn_cast<IntegerAttr>(e);
        if (!i)
          return fail("knob '" + key + "' must be a list of integers");
        out.push_back(i.getInt());
      }
      return true;
    }
    return fail("knob '" + key + "' must be a list of integers");
  }
  // From JSON (run store, reports).
  bool read(const json::Value &v, int64_t &out) {
    if (std::optional<int64_t> i = v.getAsInteger()) {
      out = *i;
      return true;
    }
    return fail("knob '" + key + "' must be an integer");
  }
  bool read(const json::Value &v, bool &out) {
    int64_t i;
    if (!read(v, i))
      return false;
    if (i != 0 && i != 1)
      return fail("knob '" + key + "' must be 0 or 1");
    out = i;
    return true;
  }
  bool read(const json::Value &v, ReductionStrategy &out) {
    std::optional<StringRef> s = v.getAsString();
    std::optional<ReductionStrategy> r = s ? symbolizeReductionStrategy(*s) : std::nullopt;
    if (!r)
      return fail("knob '" + key + "' must be \"thread\", \"warp\" or \"block\"");
    out = *r;
    return true;
  }
  bool read(const json::Value &v, F32Matmul &out) {
    std::optional<StringRef> s = v.getAsString();
    std::optional<F32Matmul> r = s ? symbolizeF32Matmul(*s) : std::nullopt;
    if (!r)
      return fail("knob '" + key + "' must be \"ieee\", \"tf32\" or \"3xtf32\"");
    out = *r;
    return true;
  }
  bool read(const json::Value &v, KnobList &out) {
    out.clear();
    const json::Array *a = v.getAsArray();
    if (!a)
      return fail("knob '" + key + "' must be a list of integers");
    for (const json::Value &e : *a) {
      std::optional<int64_t> i = e.getAsInteger();
      if (!i)
        return fail("knob '" + key + "' must be a list of integers");
      out.push_back(*i);
    }
    return true;
  }
};

/// Sets knob `key` of `k` from `value` (an Attribute or a json::Value).
template <typename V>
bool setKnob(ScheduleKnobs &k, StringRef key, const V &value, std::string &error) {
  ValueReader r{key, {}};
#define EVO_KNOB_SET(name, cpp, kind, arg, doc)                                                   \
  if (key == #name) {                                                                             \
    if (!r.read(value, k.cpp)) {                                                                  \
      error = r.error;                                                                            \
      return false;                                                                               \
    }                                                                                             \
    return true;                                                                                  \
  }
  EVO_KNOB_LIST(EVO_KNOB_SET)
#undef EVO_KNOB_SET
  error = "unknown knob '" + key.str() + "' (known: " + llvm::join(knownKnobNames(), ", ") + ")";
  return false;
}
} // namespace

LogicalResult ScheduleKnobs::merge(DictionaryAttr dict,
                                   function_ref<InFlightDiagnostic()> emitError) {
  if (!dict)
    return success();
  for (NamedAttribute entry : dict) {
    std::string error;
    if (!setKnob(*this, entry.getName().getValue(), entry.getValue(), error))
      return emitError() << error;
  }
  return verify(emitError);
}

LogicalResult ScheduleKnobs::mergeJson(const json::Object &o, std::string *error) {
  std::string msg;
  for (const auto &[key, value] : o)
    if (!setKnob(*this, key, value, msg)) {
      if (error)
        *error = msg;
      return failure();
    }
  if (failed(verify(msg))) {
    if (error)
      *error = msg;
    return failure();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Writing, comparing, the mutators' view
//===----------------------------------------------------------------------===//

namespace detail {
json::Value knobJson(int64_t v) { return v; }
json::Value knobJson(bool v) { return static_cast<int64_t>(v); }
json::Value knobJson(ReductionStrategy v) { return stringifyReductionStrategy(v); }
json::Value knobJson(F32Matmul v) { return stringifyF32Matmul(v); }
json::Value knobJson(ArrayRef<int64_t> v) {
  return json::Array(llvm::map_range(v, [](int64_t x) { return json::Value(x); }));
}
} // namespace detail

json::Object ScheduleKnobs::toJson(TaskFamily family) const {
  json::Object o;
#define EVO_KNOB_JSON(name, cpp, kind, arg, doc)                                                  \
  if (isKnobRecorded(KnobId::name, family, *this))                                                \
    o[#name] = detail::knobJson(cpp);
  EVO_KNOB_LIST(EVO_KNOB_JSON)
#undef EVO_KNOB_JSON
  return o;
}

KnobsAttr ScheduleKnobs::toAttr(MLIRContext *ctx, TaskFamily family) const {
  return KnobsAttr::get(ctx, *this, family);
}

bool ScheduleKnobs::operator==(const ScheduleKnobs &o) const {
#define EVO_KNOB_EQ(name, cpp, kind, arg, doc)                                                    \
  if (!(cpp == o.cpp))                                                                            \
    return false;
  EVO_KNOB_LIST(EVO_KNOB_EQ)
#undef EVO_KNOB_EQ
  return true;
}

static KnobList asList(int64_t v) { return {v}; }
static KnobList asList(bool v) { return {static_cast<int64_t>(v)}; }
static KnobList asList(ReductionStrategy v) { return {static_cast<int64_t>(v)}; }
static KnobList asList(F32Matmul v) { return {static_cast<int64_t>(v)}; }
static KnobList asList(const KnobList &v) { return v; }
static void fromList(int64_t &f, ArrayRef<int64_t> v) { f = v.front(); }
static void fromList(bool &f, ArrayRef<int64_t> v) { f = v.front() != 0; }
static void fromList(ReductionStrategy &f, ArrayRef<int64_t> v) {
  f = static_cast<ReductionStrategy>(v.front());
}
static void fromList(F32Matmul &f, ArrayRef<int64_t> v) { f = static_cast<F32Matmul>(v.front()); }
static void fromList(KnobList &f, ArrayRef<int64_t> v) { f.assign(v.begin(), v.end()); }

KnobList getKnobValue(const ScheduleKnobs &k, KnobId id) {
  switch (id) {
#define EVO_KNOB_GET(name, cpp, kind, arg, doc)                                                   \
  case KnobId::name:                                                                              \
    return asList(k.cpp);
    EVO_KNOB_LIST(EVO_KNOB_GET)
#undef EVO_KNOB_GET
  }
  return {};
}

void setKnobValue(ScheduleKnobs &k, KnobId id, ArrayRef<int64_t> value) {
  switch (id) {
#define EVO_KNOB_SETV(name, cpp, kind, arg, doc)                                                  \
  case KnobId::name:                                                                              \
    if (!value.empty() || std::is_same_v<decltype(k.cpp), KnobList>)                              \
      fromList(k.cpp, value);                                                                     \
    return;
    EVO_KNOB_LIST(EVO_KNOB_SETV)
#undef EVO_KNOB_SETV
  }
}

} // namespace evo
