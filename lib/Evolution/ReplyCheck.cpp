//===- ReplyCheck.cpp - an LLM reply judged before its run takes it --------------===//
//
// `evo-opt llm-check` in library form: the reply and its prompt's sidecar are read as the run
// and the relay read them (Mailbox.h), the reply is cleaned as the client cleans it and judged
// with the LLM proposer's own steps (parseReply, compileLLMVariant). docs/llm.md.
//
//===----------------------------------------------------------------------===//

#include "evo/Evolution/ReplyCheck.h"
#include "evo/Dialect/Evo/IR/InputChecks.h"
#include "evo/LLM/Mailbox.h"
#include "evo/LLM/Reply.h"
#include "evo/LLM/Untrusted.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"
#include <unistd.h>

namespace json = llvm::json;
using llvm::StringRef;

namespace evo {

namespace {
constexpr StringRef kFormat = "evo-variant/1";

llvm::Error fail(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}
} // namespace

json::Object replyTargetJson(const VariantInfo &parent, const PTXOptions &ptx) {
  json::Array scratch;
  for (const ScratchSpec &s : parent.scratch) {
    json::Object o{{"name", s.name},
                   {"shape", json::Array(s.shape)},
                   {"element_type", s.elementType},
                   {"zero_init", s.zeroInit}};
    if (s.tensorMap)
      o["tensor_map"] = toJSON(*s.tensorMap, s.tensorMapElementType);
    scratch.push_back(std::move(o));
  }
  return json::Object{{"format", kFormat},
                      {"ir", parent.ir},
                      {"launches", launchesJson(parent.launches)},
                      {"scratch", std::move(scratch)},
                      {"num_inputs", parent.numInputs},
                      {"chip", ptx.chip},
                      {"features", ptx.features},
                      {"opt_level", ptx.optLevel}};
}

llvm::Expected<ReplyTarget> replyTargetFromJson(const json::Value &value) {
  const json::Object *o = value.getAsObject();
  if (!o)
    return fail("not a JSON object");
  if (o->getString("format") != kFormat)
    return fail("its format is not \"" + kFormat + "\"");
  ReplyTarget t;
  std::optional<StringRef> ir = o->getString("ir");
  if (!ir || ir->empty())
    return fail("it holds no \"ir\"");
  // The parser recurses once per bracket: text from a file must not overflow its stack.
  if (findExcessiveNesting(*ir, kDefaultMaxNesting))
    return fail(
        llvm::formatv("its \"ir\" nests brackets deeper than {0} levels", kDefaultMaxNesting));
  t.parent.ir = ir->str();
  json::Path::Root root("parent_variant");
  json::Path top(root);
  const json::Array *launches = o->getArray("launches");
  if (!launches || launches->empty())
    return fail("it holds no \"launches\"");
  for (auto [i, l] : llvm::enumerate(*launches)) {
    KernelLaunch k;
    if (!fromJSON(l, k, top.field("launches").index(i)))
      return root.getError();
    t.parent.launches.push_back(std::move(k));
  }
  json::Path scratchPath = top.field("scratch"); // (a Path points to its parent: kept alive)
  if (const json::Array *scratch = o->getArray("scratch"))
    for (auto [i, v] : llvm::enumerate(*scratch)) {
      json::Path at = scratchPath.index(i);
      const json::Object *s = v.getAsObject();
      const json::Array *shape = s ? s->getArray("shape") : nullptr;
      std::optional<StringRef> name = s ? s->getString("name") : std::nullopt;
      std::optional<StringRef> type = s ? s->getString("element_type") : std::nullopt;
      if (!shape || !name || !type) {
        at.report("expected {\"name\", \"shape\", \"element_type\"}");
        return root.getError();
      }
      ScratchSpec spec;
      spec.name = name->str();
      spec.elementType = type->str();
      spec.zeroInit = s->getBoolean("zero_init").value_or(false);
      for (const json::Value &d : *shape) {
        std::optional<int64_t> n = d.getAsInteger();
        if (!n || *n < 0 || *n > (int64_t(1) << 40)) {
          at.field("shape").report("expected sizes in [0, 2^40]");
          return root.getError();
        }
        spec.shape.push_back(*n);
      }
      if (const json::Value *m = s->get("tensor_map")) {
        TensorMapDesc map;
        if (!fromJSON(*m, map, spec.tensorMapElementType, at.field("tensor_map")))
          return root.getError();
        spec.tensorMap = std::make_shared<const TensorMapDesc>(std::move(map));
      }
      t.parent.scratch.push_back(std::move(spec));
    }
  std::optional<int64_t> inputs = o->getInteger("num_inputs");
  if (!inputs || *inputs < 0 || *inputs > std::numeric_limits<int32_t>::max())
    return fail("its \"num_inputs\" is not a count of buffers");
  t.parent.numInputs = static_cast<int>(*inputs);
  // The options reach NVPTX and ptxas' command line: only what the run could have used.
  std::optional<StringRef> chip = o->getString("chip");
  if (!chip || !llvm::Regex("^sm_[0-9]{2,3}[a-z]?$").match(*chip))
    return fail("its \"chip\" is not sm_<digits>[a-z]");
  t.ptx.chip = chip->str();
  // (Checked by hand: bounded repetitions make llvm::Regex backtrack exponentially.)
  std::optional<StringRef> features = o->getString("features");
  llvm::SmallVector<StringRef> items;
  if (features)
    features->split(items, ',');
  if (!features || items.size() > 16 || llvm::any_of(items, [](StringRef f) {
        return f.size() < 2 || f.size() > 33 || (f[0] != '+' && f[0] != '-') ||
               !llvm::all_of(f.drop_front(), [](char c) {
                 return llvm::isLower(c) || llvm::isDigit(c) || c == '_' || c == '.';
               });
      }))
    return fail("its \"features\" are not a list of +feature / -feature");
  t.ptx.features = features->str();
  std::optional<int64_t> level = o->getInteger("opt_level");
  if (!level || *level < 0 || *level > 3)
    return fail("its \"opt_level\" is not 0 to 3");
  t.ptx.optLevel = static_cast<int>(*level);
  return t;
}

ReplyCheck checkReply(const mlir::DialectRegistry &registry, StringRef text,
                      const ReplyTarget &target, StringRef ptxasPath) {
  // What LLMProposer::takeReply and TaskSearch::compileCode do with a reply.
  ReplyCheck out;
  llm::ParsedReply parsed = llm::parseReply(text);
  if (!parsed.hasCode()) {
    out.diagnostics = llm::missingCodeDiagnostics(text);
    return out;
  }
  out.compiled = compileLLMVariant(registry, parsed.code, target.parent, target.ptx, ptxasPath);
  out.ok = out.compiled.ok;
  if (!out.ok)
    out.diagnostics = out.compiled.diagnostics;
  return out;
}

namespace {
using Status = CheckedReply::Status;

/// "ok (2 kernels, PTX for sm_90, ptxas: 32 registers, 0 spilled)", with the launches when the
/// reply changed them (evo.launch).
std::string okSummary(const ReplyTarget &target, const CompiledVariant &v) {
  llvm::StringSet<> kernels;
  for (const KernelLaunch &l : v.launches)
    kernels.insert(l.kernel);
  std::string s = llvm::formatv("ok ({0} kernel{1}, PTX for {2}, ", kernels.size(),
                                kernels.size() == 1 ? "" : "s", target.ptx.chip)
                      .str();
  if (v.cubin.empty())
    s += "not assembled: no ptxas";
  else
    s += llvm::formatv("ptxas: {0} registers, {1} spilled", v.registers, std::max(v.spills, 0));
  for (auto [mine, theirs] : llvm::zip(v.launches, target.parent.launches))
    if (mine.grid != theirs.grid || mine.block != theirs.block ||
        mine.dynamicSharedMemory != theirs.dynamicSharedMemory)
      s += llvm::formatv("; @{0} launched with grid [{1}, {2}, {3}], block [{4}, {5}, {6}]",
                         mine.kernel, mine.grid[0], mine.grid[1], mine.grid[2], mine.block[0],
                         mine.block[1], mine.block[2]);
  return s + ")";
}

/// Judges one reply: `reply` as read (its error is what the run records), `side` its prompt's
/// sidecar.
CheckedReply judge(const mlir::DialectRegistry &registry, StringRef key,
                   llvm::Expected<std::string> reply, const json::Object &side, StringRef sideName,
                   StringRef ptxasPath) {
  CheckedReply out;
  out.key = key.str();
  if (!reply) {
    out.status = Status::Failed;
    out.text = llvm::toString(reply.takeError());
    return out;
  }
  const json::Value *pv = side.get("parent_variant");
  if (!pv) {
    out.text = "its prompt (" + sideName.str() +
               ") holds no \"parent_variant\": it was written by an evo-evolve that did not "
               "store the parent's kernels with its prompts, so the reply cannot be checked "
               "here (the run checks it when it takes it)";
    return out;
  }
  llvm::Expected<ReplyTarget> target = replyTargetFromJson(*pv);
  if (!target) {
    out.text = "the \"parent_variant\" of its prompt (" + sideName.str() +
               ") cannot be used: " + llm::sanitizeForTerminal(llvm::toString(target.takeError()));
    return out;
  }
  {
    // The parent must parse before the reply is judged against it (else compileLLMVariant
    // would blame the reply's check on an internal error).
    mlir::MLIRContext &ctx = compileContext(registry);
    mlir::ScopedDiagnosticHandler quiet(&ctx, [](mlir::Diagnostic &) { return mlir::success(); });
    mlir::Block block;
    if (failed(mlir::parseSourceString(target->parent.ir, &block, mlir::ParserConfig(&ctx))) ||
        block.empty() || !llvm::isa<mlir::gpu::GPUModuleOp>(block.front())) {
      out.text = "the \"parent_variant\" of its prompt (" + sideName.str() +
                 ") cannot be used: its \"ir\" is not a gpu.module";
      return out;
    }
  }
  // As the client hands a reply over (Client::cleanReply; a mailbox names no key variable).
  std::string text =
      llm::sanitizeReplyText(llm::redactSecrets(*reply, llm::environmentSecrets(/*keyEnv=*/"")));
  ReplyCheck r = checkReply(registry, text, *target, ptxasPath);
  out.status = r.ok ? Status::Ok : Status::Failed;
  // The repair prompt carries the diagnostics trimmed (llm::renderRepair).
  out.text = r.ok ? okSummary(*target, r.compiled)
                  : llm::sanitizeForTerminal(StringRef(r.diagnostics).trim(), /*keepLines=*/true);
  return out;
}

/// Standard input, at most `cap` bytes.
llvm::Expected<std::string> readStdinCapped(uint64_t cap) {
  std::string out;
  char chunk[1 << 16];
  while (out.size() <= cap) {
    ssize_t got =
        ::read(STDIN_FILENO, chunk, std::min<uint64_t>(sizeof(chunk), cap + 1 - out.size()));
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      return fail("the reply on standard input cannot be read: " + llvm::Twine(strerror(errno)));
    if (got == 0)
      break;
    out.append(chunk, static_cast<size_t>(got));
  }
  if (out.size() > cap)
    return fail("the reply on standard input is over the limit of " + llvm::Twine(cap) +
                " bytes: rejected");
  return out;
}

/// Whether there is anything at `path` (a link, even a dangling one, is something).
bool present(StringRef path) {
  llvm::sys::fs::file_status st;
  return !llvm::sys::fs::status(path, st, /*follow=*/false) && llvm::sys::fs::exists(st);
}

/// A reply file outside a mailbox, read with a mailbox's limits.
llvm::Expected<std::string> readReplyFile(StringRef path) {
  llvm::Expected<std::string> text = llm::readRegularFileCapped(path, llm::kMaxReplyBytes);
  if (!text)
    return fail("reply " + llvm::toString(text.takeError()));
  if (!json::isUTF8(*text))
    return fail("reply '" + llm::sanitizeForTerminal(path) + "' is not UTF-8: rejected");
  return text;
}

/// A reply named by the user with its prompt's sidecar (--prompt): read with the run's limits.
llvm::Expected<std::vector<CheckedReply>> checkWithSidecar(const mlir::DialectRegistry &registry,
                                                           const ReplyCheckOptions &o) {
  StringRef sideFile = llvm::sys::path::filename(o.prompt);
  std::string key = sideFile.ends_with(".json") ? sideFile.drop_back(5).str() : "";
  if (!llm::isMailboxKey(key))
    return fail("--prompt: '" + llm::sanitizeForTerminal(o.prompt) +
                "' is not a prompt's sidecar (DIR/pending/<64 hex digits>.json)");
  llvm::Expected<std::string> sideText =
      llm::readRegularFileCapped(o.prompt, llm::kMaxJsonFileBytes);
  if (!sideText)
    return fail("--prompt: " + llvm::toString(sideText.takeError()));
  std::optional<json::Object> side = llm::parseJsonObject(std::move(*sideText));
  if (!side || side->getString("key") != StringRef(key))
    return fail("--prompt: '" + llm::sanitizeForTerminal(o.prompt) +
                "' is not a sidecar of this key (JSON object with \"key\": \"<file name>\")");
  // A reply that is not there is the user's mistake, not the reply's verdict.
  if (o.path != "-" && !present(o.path))
    return fail("no reply '" + llm::sanitizeForTerminal(o.path) + "'");
  llvm::Expected<std::string> reply =
      o.path == "-" ? readStdinCapped(llm::kMaxReplyBytes) : readReplyFile(o.path);
  return std::vector<CheckedReply>{judge(registry, key, std::move(reply), *side,
                                         llm::sanitizeForTerminal(o.prompt), o.ptxasPath)};
}
} // namespace

llvm::Expected<std::vector<CheckedReply>> checkReplies(const mlir::DialectRegistry &registry,
                                                       const ReplyCheckOptions &o) {
  if (!o.prompt.empty())
    return checkWithSidecar(registry, o);
  std::string dir;
  std::vector<std::string> keys;
  std::vector<CheckedReply> out;
  bool single = !llvm::sys::fs::is_directory(o.path);
  if (o.path == "-")
    return fail("a reply on standard input needs its prompt: --prompt=DIR/pending/<key>.json");
  if (!single) {
    // A mailbox: every reply that answers a prompt; those that answer none are named.
    dir = o.path;
    if (!llvm::sys::fs::is_directory(dir + "/pending"))
      return fail("'" + llm::sanitizeForTerminal(dir) + "' is not a mailbox (no pending/)");
    llvm::Expected<std::vector<std::string>> answered = llm::answeredPrompts(dir);
    if (!answered)
      return answered.takeError();
    keys = std::move(*answered);
    for (const std::string &name : llm::strayReplies(dir))
      out.push_back({name, Status::Unchecked,
                     "no prompt of this mailbox has this key: a run ignores this reply"});
  } else {
    // DIR/replies/<key>.md.
    if (!present(o.path))
      return fail("no reply '" + llm::sanitizeForTerminal(o.path) + "'");
    StringRef file = llvm::sys::path::filename(o.path);
    StringRef parent = llvm::sys::path::parent_path(o.path);
    std::string key = file.ends_with(".md") ? file.drop_back(3).str() : "";
    if (!llm::isMailboxKey(key) || llvm::sys::path::filename(parent) != "replies")
      return fail("'" + llm::sanitizeForTerminal(o.path) +
                  "' is not a mailbox reply (DIR/replies/<64 hex digits>.md): name its prompt "
                  "with --prompt=DIR/pending/<key>.json");
    dir = llvm::sys::path::parent_path(parent).str();
    if (dir.empty())
      dir = ".";
    keys.push_back(key);
  }
  for (const std::string &key : keys) {
    std::string sideName = "pending/" + key + ".json";
    llvm::Expected<json::Object> side = llm::readMailboxSidecar(dir, key);
    if (!side) {
      std::string why = llvm::toString(side.takeError());
      if (single)
        return fail("the reply's prompt cannot be read: " + why);
      out.push_back({key, Status::Unchecked, "its prompt cannot be read: " + why});
      continue;
    }
    out.push_back(
        judge(registry, key, llm::readMailboxReply(dir, key), *side, sideName, o.ptxasPath));
  }
  return out;
}

} // namespace evo
