//===- EnumNames.h - an enum's spellings, written once --------------*- C++ -*-===//
//
// The one pattern for enums that are spelled as strings in requests, stores and options: a
// table of (value, name) rows; stringify and symbolize both read it, so a spelling cannot
// differ between the two directions. Header-only, for any component (LLM depends on nothing).
// The dialect's enums (families, strategies) are TableGen EnumAttrs instead.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_SUPPORT_ENUMNAMES_H
#define EVO_SUPPORT_ENUMNAMES_H

#include "llvm/ADT/StringRef.h"
#include <cstddef>
#include <optional>

namespace evo {

template <typename Enum> struct EnumName {
  Enum value;
  llvm::StringLiteral name;
};

/// The name of `value` in `table`, or `otherwise` when the table has no row for it.
template <typename Enum, size_t N>
llvm::StringRef enumToName(const EnumName<Enum> (&table)[N], Enum value,
                           llvm::StringRef otherwise = "") {
  for (const EnumName<Enum> &row : table)
    if (row.value == value)
      return row.name;
  return otherwise;
}

/// The value named `name` in `table` (exact, case-sensitive), or nullopt.
template <typename Enum, size_t N>
std::optional<Enum> enumFromName(const EnumName<Enum> (&table)[N], llvm::StringRef name) {
  for (const EnumName<Enum> &row : table)
    if (row.name == name)
      return row.value;
  return std::nullopt;
}

} // namespace evo

#endif // EVO_SUPPORT_ENUMNAMES_H
