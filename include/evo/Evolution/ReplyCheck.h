//===- ReplyCheck.h - an LLM reply judged before its run takes it ---*- C++ -*-===//
//
// Whoever answers a prompt (a person, a `cmd:` agent, a relay) can check a reply before the run
// takes it: `evo-opt llm-check` parses it with the run's parser, checks it against the parent's
// kernels and the device-code contract and compiles it to PTX (then a cubin with ptxas) with
// the run's own code (compileLLMVariant), and prints what a repair prompt would carry. No GPU.
//
// What that needs travels with the prompt: the LLM proposer gives each request its first
// parent (kernels, launches, scratch, inputs) and the run's PTX options in the JSON form below,
// and the mailbox stores it in the prompt's sidecar as "parent_variant". A sidecar is someone
// else's file (Untrusted.h), so reading the form back checks every field. docs/llm.md.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_EVOLUTION_REPLYCHECK_H
#define EVO_EVOLUTION_REPLYCHECK_H

#include "evo/Evolution/VariantCompiler.h"
#include "mlir/IR/DialectRegistry.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"
#include <string>
#include <vector>

namespace evo {

/// What an LLM reply is checked and compiled against: its first parent, the run's PTX options.
struct ReplyTarget {
  VariantInfo parent;
  PTXOptions ptx;
};

/// {"format": "evo-variant/1", "ir", "launches" (the plan's JSON form, LaunchPlan.h),
/// "scratch": [{"name", "shape", "element_type", "zero_init"[, "tensor_map"]}], "num_inputs",
/// "chip", "features", "opt_level"}.
llvm::json::Object replyTargetJson(const VariantInfo &parent, const PTXOptions &ptx);

/// Reads that form, checking every field: the format, launches and tensor maps as their
/// fromJSON do, `num_inputs` in [0, 2^31), the chip `sm_<digits>[a-z]`, features a list of
/// `+name`/`-name`, the level 0 to 3, the IR's bracket nesting (kDefaultMaxNesting). The CUDA
/// path is not part of it: the reader's own is used.
llvm::Expected<ReplyTarget> replyTargetFromJson(const llvm::json::Value &value);

/// What the run makes of a reply: `ok` with the compiled variant, or the diagnostics its repair
/// prompt carries (no code in it; it breaks the contract; it does not parse, verify or compile).
struct ReplyCheck {
  bool ok = false;
  std::string diagnostics;
  CompiledVariant compiled;
};

/// Checks `text`, a reply as the client hands it over (cleaned: Client::cleanReply), the way
/// the LLM proposer does: parseReply, then compileLLMVariant on top of the target's parent.
ReplyCheck checkReply(const mlir::DialectRegistry &registry, llvm::StringRef text,
                      const ReplyTarget &target, llvm::StringRef ptxasPath);

/// What `evo-opt llm-check` checks.
struct ReplyCheckOptions {
  /// A mailbox directory (every reply in it that answers a prompt), or a reply file ("-":
  /// standard input).
  std::string path;
  /// The sidecar of the reply's prompt (DIR/pending/<key>.json). Empty: the reply file must be
  /// DIR/replies/<key>.md of a mailbox, whose sidecar is used.
  std::string prompt;
  /// ptxas for the cubin (registers, spills, its errors); empty: PTX only.
  std::string ptxasPath;
};

/// One reply's outcome, for the user.
struct CheckedReply {
  enum class Status {
    Ok,        // the run would evaluate it; `text` sums it up
    Failed,    // the run would not; `text` is the repair prompt's diagnostics or the run's reason
    Unchecked, // it cannot be checked here; `text` says why
  };
  std::string key; // the prompt's key (made safe to print)
  Status status = Status::Unchecked;
  std::string text;
};

/// Checks the replies `options` names, reading mailbox files as the run reads them (no links,
/// size caps, UTF-8). An error when there is nothing that can be read as asked (no such
/// mailbox, reply or sidecar, a reply not named <key>.md in a mailbox without --prompt).
llvm::Expected<std::vector<CheckedReply>> checkReplies(const mlir::DialectRegistry &registry,
                                                       const ReplyCheckOptions &options);

} // namespace evo

#endif
