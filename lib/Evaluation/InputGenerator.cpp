//===- InputGenerator.cpp - the verifier's inputs on the CPU ------------------===//
//
// Compiled with -ffp-contract=off (see CMakeLists.txt): `lo + span * u` must be two roundings, as
// on the GPU.
//
//===----------------------------------------------------------------------===//

#include "evo/Evaluation/InputGenerator.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/APFloat.h"
#include "evo/Support/EnumNames.h"
#include <cmath>

using namespace mlir;

namespace evo {

ElementKind elementKindOf(Type type) {
  if (type.isF64())
    return ElementKind::F64;
  if (type.isF32())
    return ElementKind::F32;
  if (type.isF16())
    return ElementKind::F16;
  if (type.isBF16())
    return ElementKind::BF16;
  if (auto i = dyn_cast<IntegerType>(type)) {
    switch (i.getWidth()) {
    case 64:
      return ElementKind::I64;
    case 32:
      return ElementKind::I32;
    case 16:
      return ElementKind::I16;
    case 8:
      return ElementKind::I8;
    case 1:
      return ElementKind::I1;
    default:
      break;
    }
  }
  if (isa<IndexType>(type))
    return ElementKind::I64;
  return ElementKind::Unsupported;
}

/// Unsupported has no row: it is named "unsupported" and never symbolized.
static constexpr EnumName<ElementKind> kElementKindNames[] = {
    {ElementKind::F64, "f64"}, {ElementKind::F32, "f32"}, {ElementKind::F16, "f16"},
    {ElementKind::BF16, "bf16"}, {ElementKind::I64, "i64"}, {ElementKind::I32, "i32"},
    {ElementKind::I16, "i16"}, {ElementKind::I8, "i8"}, {ElementKind::I1, "i1"}};

StringRef elementKindName(ElementKind kind) {
  return enumToName(kElementKindNames, kind, "unsupported");
}

std::optional<ElementKind> symbolizeElementKind(StringRef name) {
  return enumFromName(kElementKindNames, name);
}

InputRange defaultRange(ElementKind kind) {
  if (kind == ElementKind::I1)
    return {0.0, 1.0};
  return contract::isFloat(kind) ? InputRange{-1.0, 1.0} : InputRange{-8.0, 8.0};
}

FailureOr<SmallVector<InputRange>> argumentRanges(func::FuncOp func) {
  SmallVector<InputRange> ranges;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    Type elt = getElementTypeOrSelf(func.getArgumentTypes()[i]);
    InputRange r = defaultRange(elementKindOf(elt));
    if (Attribute a = func.getArgAttr(i, kRangeAttrName)) {
      auto array = dyn_cast<ArrayAttr>(a);
      auto number = [](Attribute x) -> std::optional<double> {
        if (auto f = dyn_cast<FloatAttr>(x))
          return f.getValueAsDouble();
        if (auto n = dyn_cast<IntegerAttr>(x))
          return static_cast<double>(n.getInt());
        return std::nullopt;
      };
      std::optional<double> lo, hi;
      if (array && array.size() == 2) {
        lo = number(array[0]);
        hi = number(array[1]);
      }
      if (!lo || !hi || !(*lo < *hi) || !std::isfinite(*lo) || !std::isfinite(*hi))
        return func.emitError() << "argument " << i << ": '" << kRangeAttrName
                                << "' must be [lo, hi] with finite lo < hi";
      r = {*lo, *hi, /*declared=*/true};
    }
    ranges.push_back(r);
  }
  return ranges;
}

static double roundThroughFloat(double v, const llvm::fltSemantics &sem) {
  // double -> f32 (round to nearest even), then f32 -> the narrow type, as the GPU does.
  llvm::APFloat f(static_cast<float>(v));
  bool lost = false;
  f.convert(sem, llvm::APFloat::rmNearestTiesToEven, &lost);
  f.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven, &lost);
  return f.convertToDouble();
}

double generatedValue(const contract::FillParams &params, uint64_t index) {
  double v = contract::fillValue(params, index);
  switch (static_cast<ElementKind>(params.kind)) {
  case ElementKind::F64:
    return v;
  case ElementKind::F32:
    return static_cast<double>(static_cast<float>(v));
  case ElementKind::F16:
    return roundThroughFloat(v, llvm::APFloat::IEEEhalf());
  case ElementKind::BF16:
    return roundThroughFloat(v, llvm::APFloat::BFloat());
  default:
    return v;
  }
}

double generatedValue(uint64_t seed, unsigned buffer, uint64_t index, ElementKind kind,
                      InputRange range) {
  return generatedValue(contract::uniformFill(seed, buffer, kind, range.lo, range.hi), index);
}

double maxFinite(ElementKind kind) {
  switch (kind) {
  case ElementKind::F64:
    return 1.7976931348623157e308;
  case ElementKind::F32:
  case ElementKind::BF16:
    return 3.4028234663852886e38; // bf16's is 3.3895e38; close enough for a limit
  case ElementKind::F16:
    return 65504.0;
  case ElementKind::I64:
    return 9.2233720368547758e18;
  case ElementKind::I32:
    return 2147483647.0;
  case ElementKind::I16:
    return 32767.0;
  case ElementKind::I8:
    return 127.0;
  case ElementKind::I1:
    return 1.0;
  case ElementKind::Unsupported:
    break;
  }
  return 0;
}

} // namespace evo
