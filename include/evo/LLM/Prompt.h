//===- Prompt.h - EvoEngineer's two-layer traverse techniques ------*- C++ -*-===//
//
// Layer 1 gathers the information a prompt may carry: I1 task context (the task's IR and
// shapes, the target GPU, the kernel contract, roofline numbers, the current kernel), I2
// historical solutions (earlier kernels with their runtimes), I3 optimization insights (thoughts
// from earlier replies, a profile summary, recent failure reasons). Layer 2 renders it through
// template files (share/evo-opt/prompts, built in; a user directory overrides any of them). Each
// strategy's templates include exactly the information the method gives it:
//
//   free       I1            insight   I1 + I3          full   I1 + I2 + I3
//   eoh        I1 + I2       funsearch I2
//
// Template syntax: {{name}} inserts a variable, {{#name}}...{{/name}} keeps the text only when
// the variable is not empty, {{> file}} includes another template. An unknown name is an error.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_LLM_PROMPT_H
#define EVO_LLM_PROMPT_H

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace evo::llm {

// The strategies themselves are evo::SearchStrategy (the evo dialect's enum, with the built-in
// ones): this library only ever sees a strategy's name (Request::strategy, the templates), so it
// needs neither the enum nor the dialect.

class Templates {
public:
  /// The built-in templates; files named <template>.md in `overrideDir` replace them.
  static llvm::Expected<Templates> load(llvm::StringRef overrideDir = "");
  llvm::Expected<std::string> render(llvm::StringRef name,
                                     const std::map<std::string, std::string> &vars) const;
  std::vector<std::string> names() const;

private:
  llvm::Expected<std::string> expand(llvm::StringRef name,
                                     const std::map<std::string, std::string> &vars,
                                     unsigned depth) const;
  std::map<std::string, std::string> files;
};

struct Solution {
  int64_t id = -1;
  std::string ir;
  double ms = NAN;
  std::string thought;
};

struct PromptContext {
  // I1: the task.
  std::string taskName, family, gpu, chip, taskSource, contract, launch, roofline;
  std::string currentKernel;
  double currentMs = NAN, baselineMs = NAN;
  // I2: earlier solutions, in the order the operator wants them shown.
  std::vector<Solution> solutions;
  // I3: insights.
  std::string bestThought, profile;
  std::vector<std::string> thoughts, failures;

  /// toJSON / fromJSON below, for callers that want an object or an error.
  llvm::json::Object toJson() const;
  static llvm::Expected<PromptContext> fromJson(const llvm::json::Value &v);
};

/// {"id", "ir", "ms" (null when not finite), "thought"}.
llvm::json::Value toJSON(const Solution &s);
bool fromJSON(const llvm::json::Value &value, Solution &s, llvm::json::Path path);
/// The context as the run store keeps it (the "context" of a candidate's llm_request) and
/// `evo-opt llm-prompt` reads it: snake_case keys of the fields, times null when not finite.
/// Every key is optional (missing: empty, NaN); a present key must have its type.
llvm::json::Value toJSON(const PromptContext &c);
bool fromJSON(const llvm::json::Value &value, PromptContext &c, llvm::json::Path path);

struct RenderedPrompt {
  std::string system, user, templateName;
};

/// Renders template `templateName` ("free", "full_crossover", "eoh_m1", "funsearch", ...).
llvm::Expected<RenderedPrompt> renderPrompt(const Templates &t, llvm::StringRef templateName,
                                            const PromptContext &ctx);
/// The bounded repair prompt: the problem with the previous reply and its code.
llvm::Expected<RenderedPrompt> renderRepair(const Templates &t, const PromptContext &ctx,
                                            llvm::StringRef code, llvm::StringRef diagnostics);

} // namespace evo::llm

#endif
