//===- FileCheckMain.cpp - evo-opt as FileCheck -----------------------------===//
//
// Invoked as `FileCheck`, evo-opt checks its input against a check file with LLVM's FileCheck
// library, so that the lit suite runs on GPU hosts without an LLVM installation. The options are
// parsed by hand (not with llvm::cl, whose registry in this binary holds every option of MLIR and
// LLVM): the ones lit tests use, with FileCheck's spellings (-x, --x, --x=v, --x v), also read
// from $FILECHECK_OPTS before the command line. Exit codes as FileCheck: 0 match, 1 mismatch,
// 2 usage or file errors. --dump-input and its companions are accepted and ignored (no annotated
// input dump; the diagnostics still quote the input line).
//
//===----------------------------------------------------------------------===//

#include "Personalities.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/FileCheck/FileCheck.h"
#include "llvm/Support/Allocator.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/StringSaver.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

using llvm::StringRef;

namespace {

constexpr int kMatch = 0, kMismatch = 1, kUsage = 2;

struct Options {
  std::string checkFile;
  std::string inputFile = "-";
  std::vector<std::string> checkPrefixes, commentPrefixes, implicitCheckNot, defines;
  bool allowEmpty = false, matchFullLines = false, strictWhitespace = false;
  bool enableVarScope = false, ignoreCase = false, allowUnusedPrefixes = false;
  bool allowDeprecatedDagOverlap = false, verbose = false, verboseVerbose = false;
  bool help = false;
};

const char *const kUsageText =
    "USAGE: FileCheck [options] <check-file>\n"
    "\n"
    "evo-opt's FileCheck (LLVM's FileCheck library). Options, also read from $FILECHECK_OPTS:\n"
    "  --input-file=<file>          file to check (default: stdin)\n"
    "  --check-prefix=<prefix>      a prefix to check for (repeatable; default CHECK)\n"
    "  --check-prefixes=<a,b,...>   several prefixes\n"
    "  --comment-prefixes=<a,...>   comment prefixes (default COM,RUN)\n"
    "  --implicit-check-not=<pat>   a CHECK-NOT for every gap (repeatable)\n"
    "  -D<VAR>=<value>              define a pattern variable (-D#<NUMVAR>=<expr> numeric)\n"
    "  --enable-var-scope           non-$ variables are local to their CHECK-LABEL block\n"
    "  --allow-empty                accept empty input\n"
    "  --match-full-lines           patterns must match whole lines\n"
    "  --strict-whitespace          do not canonicalize horizontal whitespace\n"
    "  --ignore-case                case-insensitive matching\n"
    "  --allow-unused-prefixes      no error for prefixes without directives\n"
    "  --allow-deprecated-dag-overlap\n"
    "  -v, -vv                      print good matches (-vv: also notes)\n"
    "  --dump-input=<mode>, --dump-input-context=<n>, --dump-input-filter=<f>, --color\n"
    "                               accepted and ignored\n"
    "Exit code: 0 when the input matches, 1 when it does not, 2 for usage or file errors.\n";

int usageError(const llvm::Twine &message) {
  llvm::errs() << "FileCheck: " << message << "\n(FileCheck --help lists the options)\n";
  return kUsage;
}

std::optional<bool> parseBool(StringRef value) {
  if (value.empty() || value == "true" || value == "TRUE" || value == "True" || value == "1")
    return true;
  if (value == "false" || value == "FALSE" || value == "False" || value == "0")
    return false;
  return std::nullopt;
}

void appendCommaSeparated(std::vector<std::string> &list, StringRef value) {
  llvm::SmallVector<StringRef> parts;
  value.split(parts, ',');
  for (StringRef part : parts)
    list.push_back(part.str());
}

/// Parses `args` (options from $FILECHECK_OPTS first, then the command line) into `opts`;
/// returns kMatch or kUsage.
int parseArguments(llvm::ArrayRef<const char *> args, Options &opts) {
  bool positionalOnly = false;
  for (size_t i = 0; i < args.size(); ++i) {
    StringRef arg = args[i];
    if (positionalOnly || arg == "-" || !arg.starts_with("-")) {
      if (!opts.checkFile.empty())
        return usageError("more than one check file: '" + opts.checkFile + "' and '" + arg + "'");
      opts.checkFile = arg.str();
      continue;
    }
    if (arg == "--") {
      positionalOnly = true;
      continue;
    }
    StringRef spelled = arg;
    arg = arg.drop_front(arg.starts_with("--") ? 2 : 1);

    // -D<VAR>=<value> and -D <VAR>=<value>.
    if (arg.starts_with("D")) {
      StringRef define = arg.drop_front();
      if (define.empty()) {
        if (i + 1 == args.size())
          return usageError("-D needs a definition");
        define = args[++i];
      }
      size_t eq = define.find('=');
      if (eq == StringRef::npos)
        return usageError("missing equal sign in command-line definition '-D" + define + "'");
      if (eq == 0)
        return usageError("missing variable name in command-line definition '-D" + define + "'");
      opts.defines.push_back(define.str());
      continue;
    }

    auto [name, inlineValue] = arg.split('=');
    bool hasInlineValue = arg.contains('=');

    bool *flag = llvm::StringSwitch<bool *>(name)
                     .Case("allow-empty", &opts.allowEmpty)
                     .Case("match-full-lines", &opts.matchFullLines)
                     .Case("strict-whitespace", &opts.strictWhitespace)
                     .Case("enable-var-scope", &opts.enableVarScope)
                     .Case("ignore-case", &opts.ignoreCase)
                     .Case("allow-unused-prefixes", &opts.allowUnusedPrefixes)
                     .Case("allow-deprecated-dag-overlap", &opts.allowDeprecatedDagOverlap)
                     .Case("v", &opts.verbose)
                     .Case("vv", &opts.verboseVerbose)
                     .Case("help", &opts.help)
                     .Default(nullptr);
    if (flag || name == "color") {
      std::optional<bool> value = parseBool(hasInlineValue ? inlineValue : "");
      if (!value)
        return usageError("'" + spelled + "': expected true or false");
      if (flag)
        *flag = *value;
      continue;
    }

    bool takesValue =
        llvm::StringSwitch<bool>(name)
            .Cases({"input-file", "check-prefix", "check-prefixes", "comment-prefixes",
                    "implicit-check-not", "dump-input", "dump-input-context", "dump-input-filter"},
                   true)
            .Default(false);
    if (!takesValue)
      return usageError("unknown option '" + spelled + "'");
    StringRef value = inlineValue;
    if (!hasInlineValue) {
      if (i + 1 == args.size())
        return usageError("'" + spelled + "' needs a value");
      value = args[++i];
    }
    if (name == "input-file")
      opts.inputFile = value.str();
    else if (name == "check-prefix")
      opts.checkPrefixes.push_back(value.str());
    else if (name == "check-prefixes")
      appendCommaSeparated(opts.checkPrefixes, value);
    else if (name == "comment-prefixes")
      appendCommaSeparated(opts.commentPrefixes, value);
    else if (name == "implicit-check-not")
      opts.implicitCheckNot.push_back(value.str());
    // --dump-input*: accepted, ignored.
  }
  return kMatch;
}

std::vector<StringRef> refs(const std::vector<std::string> &strings) {
  return std::vector<StringRef>(strings.begin(), strings.end());
}

} // namespace

int evo::fileCheckMain(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  llvm::sys::Process::UseANSIEscapeCodes(true);

  // $FILECHECK_OPTS first, so that the command line wins where that matters.
  llvm::BumpPtrAllocator allocator;
  llvm::StringSaver saver(allocator);
  llvm::SmallVector<const char *, 32> args;
  if (std::optional<std::string> env = llvm::sys::Process::GetEnv("FILECHECK_OPTS"))
    llvm::cl::TokenizeGNUCommandLine(*env, saver, args);
  args.append(argv + 1, argv + argc);

  Options opts;
  if (int rc = parseArguments(args, opts))
    return rc;
  if (opts.help) {
    llvm::outs() << kUsageText;
    return kMatch;
  }
  if (opts.checkFile.empty())
    return usageError("<check-file> not specified");
  if (opts.checkFile == "-" && opts.inputFile == "-")
    return usageError("the check file and the input cannot both be stdin");

  llvm::FileCheckRequest req;
  req.CheckPrefixes = refs(opts.checkPrefixes);
  req.CommentPrefixes = refs(opts.commentPrefixes);
  req.ImplicitCheckNot = refs(opts.implicitCheckNot);
  req.GlobalDefines = refs(opts.defines);
  req.IsDefaultCheckPrefix = opts.checkPrefixes.empty();
  req.AllowEmptyInput = opts.allowEmpty;
  req.AllowUnusedPrefixes = opts.allowUnusedPrefixes;
  req.MatchFullLines = opts.matchFullLines;
  req.NoCanonicalizeWhiteSpace = opts.strictWhitespace;
  req.IgnoreCase = opts.ignoreCase;
  req.EnableVarScope = opts.enableVarScope;
  req.AllowDeprecatedDagOverlap = opts.allowDeprecatedDagOverlap;
  req.Verbose = opts.verbose || opts.verboseVerbose;
  req.VerboseVerbose = opts.verboseVerbose;

  llvm::FileCheck checker(req);
  if (!checker.ValidateCheckPrefixes()) // the library said why
    return kUsage;

  llvm::SourceMgr sourceMgr;
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> checkFile =
      llvm::MemoryBuffer::getFileOrSTDIN(opts.checkFile, /*IsText=*/true);
  if (std::error_code ec = checkFile.getError()) {
    llvm::errs() << "Could not open check file '" << opts.checkFile << "': " << ec.message()
                 << "\n";
    return kUsage;
  }
  llvm::SmallString<4096> checkBuffer;
  StringRef checkText = checker.CanonicalizeFile(**checkFile, checkBuffer);
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(checkText, (*checkFile)->getBufferIdentifier()),
      llvm::SMLoc());
  if (checker.readCheckFile(sourceMgr, checkText))
    return kUsage;

  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> input =
      llvm::MemoryBuffer::getFileOrSTDIN(opts.inputFile, /*IsText=*/true);
  std::string inputName = opts.inputFile == "-" ? "<stdin>" : opts.inputFile;
  if (std::error_code ec = input.getError()) {
    llvm::errs() << "Could not open input file '" << inputName << "': " << ec.message() << "\n";
    return kUsage;
  }
  if ((*input)->getBufferSize() == 0 && !opts.allowEmpty) {
    llvm::errs() << "FileCheck error: '" << inputName << "' is empty.\n";
    return kUsage;
  }
  llvm::SmallString<4096> inputBuffer;
  StringRef inputText = checker.CanonicalizeFile(**input, inputBuffer);
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(inputText, (*input)->getBufferIdentifier()), llvm::SMLoc());
  return checker.checkInput(sourceMgr, inputText) ? kMatch : kMismatch;
}
