//===- Reply.cpp - reading an LLM reply --------------------------------------===//

#include "evo/LLM/Reply.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"

using llvm::StringRef;

namespace evo::llm {

namespace {
struct Fence {
  std::string lang, body;
};

/// Fenced blocks (``` or ~~~), in order; an unterminated last fence runs to the end.
llvm::SmallVector<Fence> fences(StringRef text) {
  llvm::SmallVector<Fence> out;
  llvm::SmallVector<StringRef> lines;
  text.split(lines, '\n');
  for (size_t i = 0; i < lines.size(); ++i) {
    StringRef l = lines[i].trim();
    if (!l.starts_with("```") && !l.starts_with("~~~"))
      continue;
    StringRef marker = l.take_front(3);
    Fence f;
    f.lang = l.drop_front(3).trim().lower();
    size_t j = i + 1;
    for (; j < lines.size() && !lines[j].trim().starts_with(marker); ++j)
      f.body += lines[j].rtrim("\r").str() + "\n";
    out.push_back(std::move(f));
    i = j;
  }
  return out;
}

/// The value of the first line `key: value` (case-insensitive key, optional markdown emphasis).
std::string field(StringRef text, StringRef key, bool toEnd) {
  llvm::SmallVector<StringRef> lines;
  text.split(lines, '\n');
  for (size_t i = 0; i < lines.size(); ++i) {
    StringRef l = lines[i].trim().ltrim("*#_ ");
    if (!StringRef(l.lower()).starts_with(key.lower() + ":"))
      continue;
    std::string v = l.drop_front(key.size() + 1).trim().trim("*_ ").str();
    if (toEnd)
      for (size_t j = i + 1; j < lines.size(); ++j) {
        StringRef n = lines[j].trim();
        if (n.starts_with("```") || StringRef(n.lower()).starts_with("name:"))
          break;
        v += (v.empty() ? "" : " ") + n.str();
      }
    return StringRef(v).trim().str();
  }
  return "";
}

bool holdsGpuIr(StringRef s) { return s.contains("gpu.module") || s.contains("gpu.func"); }
} // namespace

ParsedReply parseReply(StringRef text) {
  ParsedReply r;
  r.name = field(text, "name", false);
  r.thought = field(text, "thought", true);
  llvm::SmallVector<Fence> fs = fences(text);
  for (const Fence &f : fs)
    if (f.lang == "mlir" && holdsGpuIr(f.body)) {
      r.code = f.body;
      r.how = "fenced-mlir";
      return r;
    }
  for (const Fence &f : fs)
    if (holdsGpuIr(f.body)) {
      r.code = f.body;
      r.how = "fenced-gpu";
      return r;
    }
  for (const Fence &f : fs)
    if (!StringRef(f.body).trim().empty()) {
      r.code = f.body;
      r.how = "fenced";
      return r;
    }
  size_t mod = text.find("gpu.module"), fn = text.find("gpu.func");
  size_t start = std::min(mod, fn);
  if (start != StringRef::npos) {
    StringRef rest = text.drop_front(start);
    // Up to a trailing `thought:` line, if any.
    size_t t = StringRef(rest.lower()).find("\nthought:");
    r.code = rest.take_front(t).str();
    r.how = "raw";
  }
  return r;
}

std::string missingCodeDiagnostics(StringRef text) {
  return "the reply holds no MLIR code block (it begins: \"" + text.trim().take_front(120).str() +
         "\")";
}

} // namespace evo::llm
