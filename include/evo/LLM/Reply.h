//===- Reply.h - reading an LLM reply -------------------------------*- C++ -*-===//
//
// The reply protocol is `name:`, a fenced code block, `thought:`. Models drift from it, so the
// parser falls back as the method does: a fenced block tagged mlir, else any fenced block that
// holds gpu IR, else any fenced block, else the raw text from the first `gpu.module` or
// `gpu.func`. What the code then has to satisfy is checked by the evolution engine.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_LLM_REPLY_H
#define EVO_LLM_REPLY_H

#include "llvm/ADT/StringRef.h"
#include <string>

namespace evo::llm {

struct ParsedReply {
  std::string name, code, thought;
  /// How the code was found: "fenced-mlir", "fenced-gpu", "fenced", "raw", or "" (no code).
  std::string how;
  bool hasCode() const { return !code.empty(); }
};

ParsedReply parseReply(llvm::StringRef text);

/// What a repair prompt says about a reply that holds no code: its beginning, quoted.
std::string missingCodeDiagnostics(llvm::StringRef text);

} // namespace evo::llm

#endif
