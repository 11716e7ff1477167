//===- Knobs.h - the schedule knobs of the evo lowering -----------*- C++ -*-===//
//
// The schedule knobs are the search space the evolution explores without an LLM. They are listed
// once, in EvoKnobs.td; everything here is generated from that list through EVO_KNOB_LIST:
// the fields of ScheduleKnobs, their checks, which knobs a family records and searches, and the
// conversions to #evo.knobs, `evo.knobs` dictionaries and JSON.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_DIALECT_EVO_IR_KNOBS_H
#define EVO_DIALECT_EVO_IR_KNOBS_H

#include "evo/Dialect/Evo/IR/EvoAttrs.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/JSON.h"
#include <optional>
#include <string>

namespace evo {

/// The value of a list knob (tile_sizes, thread_tile).
using KnobList = llvm::SmallVector<int64_t, 3>;

#define EVO_KNOB_TYPE_Int int64_t
#define EVO_KNOB_TYPE_Bool bool
#define EVO_KNOB_TYPE_Strategy ReductionStrategy
#define EVO_KNOB_TYPE_F32Matmul F32Matmul
#define EVO_KNOB_TYPE_List KnobList

/// One id per knob, named like the knob.
enum class KnobId {
#define EVO_KNOB_ID(name, cpp, kind, arg, doc) name,
  EVO_KNOB_LIST(EVO_KNOB_ID)
#undef EVO_KNOB_ID
};

/// A complete knob set (every knob has a value; a default-constructed one is the naive
/// baseline). Fields: block_size -> blockSize, ... (EvoKnobs.td).
struct ScheduleKnobs {
  ScheduleKnobs();

#define EVO_KNOB_FIELD(name, cpp, kind, arg, doc) EVO_KNOB_TYPE_##kind cpp;
  EVO_KNOB_LIST(EVO_KNOB_FIELD)
#undef EVO_KNOB_FIELD

  /// Checks the values that do not depend on a task's shapes.
  mlir::LogicalResult verify(llvm::function_ref<mlir::InFlightDiagnostic()> emitError) const;
  /// The same checks without an MLIRContext: the first failure's message goes to `error`.
  mlir::LogicalResult verify(std::string &error) const;

  /// Overlays the entries of an `evo.knobs` dictionary (integers, 0/1 for flags, a strategy
  /// name, integer lists). Unknown keys and ill-typed values are errors: a typo in a knob must
  /// never silently fall back to a default.
  mlir::LogicalResult merge(mlir::DictionaryAttr dict,
                            llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

  /// The knobs `family` uses, as recorded on kernels and in plans.
  KnobsAttr toAttr(mlir::MLIRContext *ctx, TaskFamily family) const;
  /// The same entries as JSON (run store, reports, manifests); mergeJson reads them back.
  llvm::json::Object toJson(TaskFamily family) const;
  mlir::LogicalResult mergeJson(const llvm::json::Object &o, std::string *error);

  bool operator==(const ScheduleKnobs &other) const;
  bool operator!=(const ScheduleKnobs &other) const { return !(*this == other); }
};

/// The knob's name ("block_size").
llvm::StringRef knobName(KnobId id);
std::optional<KnobId> symbolizeKnob(llvm::StringRef name);
/// Names of the keys accepted in knob sets.
llvm::ArrayRef<llvm::StringRef> knownKnobNames();

/// Whether a kernel of family `f` built with `k` records knob `id`.
bool isKnobRecorded(KnobId id, TaskFamily f, const ScheduleKnobs &k);
/// The knob set the mutators search for family `f`, in the order they draw from.
llvm::ArrayRef<KnobId> familyKnobs(TaskFamily f);
/// The values the mutators propose for `id` (flags and strategies by their integer value).
llvm::ArrayRef<KnobList> knobSearchValues(KnobId id);
/// A knob's value as a list of integers, and back (the mutators' uniform view).
KnobList getKnobValue(const ScheduleKnobs &k, KnobId id);
void setKnobValue(ScheduleKnobs &k, KnobId id, llvm::ArrayRef<int64_t> value);

inline bool isPowerOf2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

namespace detail {
/// The plain error sink of ScheduleKnobs::verify(std::string &): the generated checks write
/// `emitError() << "..." << value` and return it, as with an InFlightDiagnostic.
class KnobErrorSink {
public:
  explicit KnobErrorSink(std::string &out) : os(out) {}
  template <typename T>
  KnobErrorSink &operator<<(const T &v) {
    os << v;
    return *this;
  }
  operator mlir::LogicalResult() const { return mlir::failure(); }

private:
  llvm::raw_string_ostream os;
};

/// A knob from a pass option: lists only when given (thread_tile keeps its default otherwise).
template <typename T, typename Opt>
void knobFromOption(T &field, const Opt &option) {
  field = option;
}
template <typename Opt>
void knobFromOption(KnobList &field, const Opt &option) {
  if (!option.empty())
    field.assign(option.begin(), option.end());
}
/// A pass option from another pass's (pipelines forward their knob options).
template <typename T, typename U>
void copyOption(T &dst, const U &src) {
  if constexpr (std::is_arithmetic_v<U> || std::is_enum_v<U>)
    dst = src;
  else if constexpr (std::is_convertible_v<const U &, T>)
    dst = src;
  else
    dst.assign(src.begin(), src.end());
}

/// #evo.knobs parameters from ScheduleKnobs fields, and back.
template <typename T>
std::optional<T> recordKnob(bool recorded, const T &v) {
  return recorded ? std::optional<T>(v) : std::nullopt;
}
inline llvm::ArrayRef<int64_t> recordKnob(bool recorded, const KnobList &v) {
  return recorded ? llvm::ArrayRef<int64_t>(v) : llvm::ArrayRef<int64_t>();
}
template <typename T>
void overlayKnob(T &field, const std::optional<T> &v) {
  if (v)
    field = *v;
}
inline void overlayKnob(KnobList &field, llvm::ArrayRef<int64_t> v) {
  if (!v.empty())
    field.assign(v.begin(), v.end());
}

/// JSON of one knob value: integers, flags as 0/1, strategies by name, lists as arrays.
llvm::json::Value knobJson(int64_t v);
llvm::json::Value knobJson(bool v);
llvm::json::Value knobJson(ReductionStrategy v);
llvm::json::Value knobJson(F32Matmul v);
llvm::json::Value knobJson(llvm::ArrayRef<int64_t> v);
template <typename T>
void knobToJson(llvm::json::Object &o, llvm::StringRef name, const std::optional<T> &v) {
  if (v)
    o[name] = knobJson(*v);
}
inline void knobToJson(llvm::json::Object &o, llvm::StringRef name, llvm::ArrayRef<int64_t> v) {
  if (!v.empty())
    o[name] = knobJson(v);
}

/// Assembly of #evo.knobs parameters: `block_size = 128`, `cache_row = true`,
/// `reduction = warp`, `tile_sizes = [64, 64, 16]`.
void printKnobParameter(mlir::AsmPrinter &printer, std::optional<int64_t> v);
void printKnobParameter(mlir::AsmPrinter &printer, std::optional<bool> v);
void printKnobParameter(mlir::AsmPrinter &printer, std::optional<ReductionStrategy> v);
void printKnobParameter(mlir::AsmPrinter &printer, std::optional<F32Matmul> v);
} // namespace detail

} // namespace evo

#endif // EVO_DIALECT_EVO_IR_KNOBS_H
