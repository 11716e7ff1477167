//===- Prompt.cpp - templates and the information they render ---------------===//

#include "evo/LLM/Prompt.h"
#include "evo/LLM/Untrusted.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"

namespace json = llvm::json;
using llvm::StringRef;

namespace evo::llm {

namespace {
struct BuiltinTemplate {
  const char *name;
  const char *text;
};
// share/evo-opt/prompts/*.md, embedded at build time (cmake/EmbedFiles.cmake).
const BuiltinTemplate kBuiltins[] = {
#include "prompts.inc"
};

std::string fmtMs(double ms) {
  if (!std::isfinite(ms))
    return "";
  return llvm::formatv("{0:f4}", ms).str();
}
} // namespace

//===----------------------------------------------------------------------===//
// Templates
//===----------------------------------------------------------------------===//

llvm::Expected<Templates> Templates::load(StringRef overrideDir) {
  Templates t;
  for (const BuiltinTemplate &b : kBuiltins)
    t.files[b.name] = b.text;
  if (overrideDir.empty())
    return t;
  if (!llvm::sys::fs::is_directory(overrideDir))
    return llvm::createStringError("llm-prompts: '" + sanitizeForTerminal(overrideDir) +
                                   "' is not a directory");
  // The directory is the user's; the files listed in it are read like mailbox files
  // (Untrusted.h): no symbolic link, regular, capped, UTF-8.
  llvm::Expected<SafeDir> dir = SafeDir::open(overrideDir, /*create=*/false);
  if (!dir)
    return llvm::createStringError("llm-prompts: " + llvm::toString(dir.takeError()));
  llvm::Expected<std::vector<std::string>> names = dir->list();
  if (!names)
    return llvm::createStringError("llm-prompts: " + llvm::toString(names.takeError()));
  for (StringRef name : *names) {
    if (llvm::sys::path::extension(name) != ".md")
      continue;
    llvm::Expected<std::string> text = dir->read(name, kMaxPromptFileBytes);
    if (!text)
      return llvm::createStringError("llm-prompts: " + llvm::toString(text.takeError()));
    if (!llvm::json::isUTF8(*text))
      return llvm::createStringError("llm-prompts: '" + dir->display(name) +
                                     "' is not UTF-8");
    t.files[llvm::sys::path::stem(name).str()] = std::move(*text);
  }
  return t;
}

std::vector<std::string> Templates::names() const {
  std::vector<std::string> out;
  for (const auto &[name, text] : files)
    out.push_back(name);
  return out;
}

llvm::Expected<std::string> Templates::render(StringRef name,
                                              const std::map<std::string, std::string> &vars) const {
  llvm::Expected<std::string> text = expand(name, vars, 0);
  if (!text)
    return text.takeError();
  // Sections that were dropped leave runs of blank lines; keep at most one.
  std::string out;
  unsigned newlines = 0;
  for (char c : *text) {
    newlines = c == '\n' ? newlines + 1 : 0;
    if (newlines <= 2)
      out += c;
  }
  return StringRef(out).trim().str() + "\n";
}

llvm::Expected<std::string> Templates::expand(StringRef name,
                                              const std::map<std::string, std::string> &vars,
                                              unsigned depth) const {
  auto it = files.find(name.str());
  if (it == files.end())
    return llvm::createStringError("no prompt template '" + name.str() + "'");
  if (depth > 8)
    return llvm::createStringError("prompt template '" + name.str() + "' includes itself");
  StringRef text = it->second;
  std::string out;
  auto fail = [&](const std::string &msg) {
    return llvm::createStringError("prompt template '" + name.str() + "': " + msg);
  };
  while (!text.empty()) {
    size_t open = text.find("{{");
    if (open == StringRef::npos) {
      out += text;
      break;
    }
    out += text.take_front(open);
    text = text.drop_front(open + 2);
    size_t close = text.find("}}");
    if (close == StringRef::npos)
      return fail("unterminated '{{'");
    StringRef tag = text.take_front(close).trim();
    text = text.drop_front(close + 2);
    if (tag.consume_front(">")) {
      llvm::Expected<std::string> inner = expand(tag.trim(), vars, depth + 1);
      if (!inner)
        return inner.takeError();
      out += *inner;
    } else if (tag.consume_front("#")) {
      std::string var = tag.trim().str();
      std::string endTag = "{{/" + var + "}}";
      size_t end = text.find(endTag);
      if (end == StringRef::npos)
        return fail("section '" + var + "' has no {{/" + var + "}}");
      StringRef body = text.take_front(end);
      text = text.drop_front(end + endTag.size());
      auto v = vars.find(var);
      if (v == vars.end())
        return fail("unknown variable '" + var + "'");
      if (!v->second.empty()) {
        // Expand the body by itself (a tiny template).
        Templates sub;
        sub.files = files;
        sub.files["\x01section"] = body.str();
        llvm::Expected<std::string> inner = sub.expand("\x01section", vars, depth + 1);
        if (!inner)
          return inner.takeError();
        out += *inner;
      }
    } else {
      auto v = vars.find(tag.str());
      if (v == vars.end())
        return fail("unknown variable '" + tag.str() + "'");
      out += v->second;
    }
  }
  return out;
}

//===----------------------------------------------------------------------===//
// Context
//===----------------------------------------------------------------------===//

static json::Value finiteOrNull(double x) {
  return std::isfinite(x) ? json::Value(x) : json::Value(nullptr);
}

/// A time: a number, or null (or absent) for none (NaN).
static bool mapTime(json::ObjectMapper &m, llvm::StringLiteral key, double &out) {
  std::optional<double> v;
  if (!m.map(key, v))
    return false;
  out = v.value_or(NAN);
  return true;
}

json::Value toJSON(const Solution &s) {
  return json::Object{{"id", s.id}, {"ir", s.ir}, {"ms", finiteOrNull(s.ms)}, {"thought", s.thought}};
}

bool fromJSON(const json::Value &value, Solution &s, json::Path path) {
  json::ObjectMapper m(value, path);
  return m && m.mapOptional("id", s.id) && m.mapOptional("ir", s.ir) && mapTime(m, "ms", s.ms) &&
         m.mapOptional("thought", s.thought);
}

json::Value toJSON(const PromptContext &c) {
  return json::Object{{"task_name", c.taskName},
                      {"family", c.family},
                      {"gpu", c.gpu},
                      {"chip", c.chip},
                      {"task_source", c.taskSource},
                      {"contract", c.contract},
                      {"launch", c.launch},
                      {"roofline", c.roofline},
                      {"current_kernel", c.currentKernel},
                      {"current_ms", finiteOrNull(c.currentMs)},
                      {"baseline_ms", finiteOrNull(c.baselineMs)},
                      {"solutions", c.solutions},
                      {"best_thought", c.bestThought},
                      {"profile", c.profile},
                      {"thoughts", c.thoughts},
                      {"failures", c.failures}};
}

bool fromJSON(const json::Value &value, PromptContext &c, json::Path path) {
  json::ObjectMapper m(value, path);
  return m && m.mapOptional("task_name", c.taskName) && m.mapOptional("family", c.family) &&
         m.mapOptional("gpu", c.gpu) && m.mapOptional("chip", c.chip) &&
         m.mapOptional("task_source", c.taskSource) && m.mapOptional("contract", c.contract) &&
         m.mapOptional("launch", c.launch) && m.mapOptional("roofline", c.roofline) &&
         m.mapOptional("current_kernel", c.currentKernel) &&
         mapTime(m, "current_ms", c.currentMs) && mapTime(m, "baseline_ms", c.baselineMs) &&
         m.mapOptional("solutions", c.solutions) && m.mapOptional("best_thought", c.bestThought) &&
         m.mapOptional("profile", c.profile) && m.mapOptional("thoughts", c.thoughts) &&
         m.mapOptional("failures", c.failures);
}

json::Object PromptContext::toJson() const { return std::move(*toJSON(*this).getAsObject()); }

llvm::Expected<PromptContext> PromptContext::fromJson(const json::Value &v) {
  if (!v.getAsObject())
    return llvm::createStringError("a prompt context must be a JSON object");
  PromptContext c;
  json::Path::Root root("context");
  if (!fromJSON(v, c, root))
    return llvm::createStringError("a prompt context: " + llvm::toString(root.getError()));
  return c;
}

//===----------------------------------------------------------------------===//
// Rendering
//===----------------------------------------------------------------------===//

static std::map<std::string, std::string> variables(StringRef templateName,
                                                    const PromptContext &c) {
  std::map<std::string, std::string> v;
  v["task_name"] = c.taskName;
  v["family"] = c.family;
  v["gpu"] = c.gpu;
  v["chip"] = c.chip;
  v["task_source"] = StringRef(c.taskSource).trim().str();
  v["contract"] = c.contract;
  v["launch"] = c.launch;
  v["roofline"] = c.roofline;
  v["current_kernel"] = StringRef(c.currentKernel).trim().str();
  v["current_ms"] = fmtMs(c.currentMs);
  v["baseline_ms"] = fmtMs(c.baselineMs);
  v["best_thought"] = c.bestThought;
  v["profile"] = c.profile;
  std::string thoughts, failures;
  for (const std::string &t : c.thoughts)
    thoughts += "- " + t + "\n";
  for (const std::string &f : c.failures)
    failures += "- " + f + "\n";
  v["thoughts"] = thoughts;
  v["failures"] = failures;
  // I2. FunSearch shows the programs as versions v0, v1, ... (worst first); the others number
  // them and give each one's runtime and speedup.
  bool funsearch = templateName == "funsearch";
  // Each distinct kernel is shown once: a solution that is the current kernel (shown in the
  // task section, except to FunSearch, whose prompt has no task section) or repeats an earlier
  // solution is named, not repeated; its time is still given.
  std::string sols;
  StringRef current = StringRef(c.currentKernel).trim();
  std::vector<StringRef> shown;
  for (auto [i, s] : llvm::enumerate(c.solutions)) {
    auto name = [&](size_t k) {
      return funsearch ? "v" + std::to_string(k) : "Solution " + std::to_string(k + 1);
    };
    std::string head = "### " + name(i);
    if (std::isfinite(s.ms)) {
      head += " (" + fmtMs(s.ms) + " ms";
      if (std::isfinite(c.baselineMs) && s.ms > 0)
        head += llvm::formatv(", {0:f2}x the naive baseline", c.baselineMs / s.ms).str();
      head += ")";
    }
    StringRef ir = StringRef(s.ir).trim();
    auto earlier = llvm::find(shown, ir);
    if (!funsearch && ir == current)
      sols += head + ": the current kernel above\n\n";
    else if (earlier != shown.end())
      sols += head + ": the same code as " + name(earlier - shown.begin()) + "\n\n";
    else
      sols += head + "\n\n```mlir\n" + ir.str() + "\n```\n\n";
    shown.push_back(ir);
  }
  v["solutions"] = StringRef(sols).rtrim().str();
  v["next_version"] = std::to_string(c.solutions.size());
  v["diagnostics"] = "";
  v["code"] = "";
  return v;
}

llvm::Expected<RenderedPrompt> renderPrompt(const Templates &t, StringRef templateName,
                                            const PromptContext &ctx) {
  std::map<std::string, std::string> vars = variables(templateName, ctx);
  RenderedPrompt p;
  p.templateName = templateName.str();
  llvm::Expected<std::string> system = t.render("system", vars);
  if (!system)
    return system.takeError();
  llvm::Expected<std::string> user = t.render(templateName, vars);
  if (!user)
    return user.takeError();
  p.system = std::move(*system);
  p.user = std::move(*user);
  return p;
}

llvm::Expected<RenderedPrompt> renderRepair(const Templates &t, const PromptContext &ctx,
                                            StringRef code, StringRef diagnostics) {
  std::map<std::string, std::string> vars = variables("repair", ctx);
  vars["code"] = StringRef(code).trim().str();
  vars["diagnostics"] = StringRef(diagnostics).trim().str();
  RenderedPrompt p;
  p.templateName = "repair";
  llvm::Expected<std::string> system = t.render("system", vars);
  if (!system)
    return system.takeError();
  llvm::Expected<std::string> user = t.render("repair", vars);
  if (!user)
    return user.takeError();
  p.system = std::move(*system);
  p.user = std::move(*user);
  return p;
}

} // namespace evo::llm
