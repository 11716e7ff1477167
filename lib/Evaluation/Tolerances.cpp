//===- Tolerances.cpp - the verifier's relative tolerances --------------------===//
//
// The table is share/evo-opt/tolerances.json, embedded at build time, so an installed evo-opt
// and the scripts reading the file cannot disagree.
//
//===----------------------------------------------------------------------===//

#include "evo/Evaluation/Tolerances.h"
#include "evo/Evaluation/InputGenerator.h"
#include "evo/Evaluation/Roofline.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/JSON.h"
#include <algorithm>
#include <cmath>

namespace json = llvm::json;

namespace evo {

static const char kTolerancesJson[] =
#include "tolerances.json.inc"
    ;

/// The numbers of the embedded table's object `key`; a table without it is a broken build.
static std::map<std::string, double> embeddedTable(llvm::StringRef key) {
  std::map<std::string, double> t;
  llvm::Expected<json::Value> v = json::parse(kTolerancesJson);
  const json::Object *o = v && v->getAsObject() ? v->getAsObject()->getObject(key) : nullptr;
  if (!o) {
    if (!v)
      llvm::consumeError(v.takeError());
    llvm::report_fatal_error("evo: the embedded share/evo-opt/tolerances.json has no \"" + key +
                             "\"");
  }
  for (const auto &[k, x] : *o)
    if (std::optional<double> d = x.getAsNumber())
      t[k.str()] = *d;
  return t;
}

const std::map<std::string, double> &defaultTolerances() {
  static const std::map<std::string, double> table = embeddedTable("rtol");
  return table;
}

double f32MatmulTolerance(F32Matmul mode) {
  static const std::map<std::string, double> table = embeddedTable("f32_matmul");
  if (mode == F32Matmul::Ieee)
    return defaultTolerances().at("f32");
  auto it = table.find(stringifyF32Matmul(mode).str());
  if (it == table.end())
    llvm::report_fatal_error("evo: share/evo-opt/tolerances.json has no f32_matmul tolerance for " +
                             stringifyF32Matmul(mode));
  return it->second;
}

void applyF32MatmulTolerance(const LaunchPlan &plan, std::map<std::string, double> &rtol) {
  F32Matmul mode = planF32Matmul(plan);
  if (mode == F32Matmul::Ieee)
    return;
  double &f32 = rtol["f32"];
  f32 = std::max(f32, f32MatmulTolerance(mode));
}

llvm::Error parseTolerances(llvm::StringRef spec, std::map<std::string, double> &table) {
  llvm::SmallVector<llvm::StringRef> items;
  spec.split(items, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef item : items) {
    auto [kind, value] = item.split('=');
    kind = kind.trim();
    value = value.trim();
    double x = 0;
    if (!symbolizeElementKind(kind))
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "tolerances: unknown element kind '" + kind +
                                         "' (f64, f32, f16, bf16, i64, i32, i16, i8)");
    if (value.empty() || value.getAsDouble(x) || !std::isfinite(x) || x < 0)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "tolerances: '" + item +
                                         "' is not kind=rtol with a finite rtol >= 0");
    table[kind.str()] = x;
  }
  return llvm::Error::success();
}

} // namespace evo
