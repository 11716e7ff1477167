//===- evo-opt.cpp - the evo-opt driver ----------------------------------------===//
//
// mlir-opt with every upstream dialect, extension, pass and LLVM IR translation, plus evo's
// passes and pipelines. Invoked under another name it is another tool (Personalities.h):
// evo-runner / mlir-runner (RunnerMain.cpp) or FileCheck (FileCheckMain.cpp).
//
//===----------------------------------------------------------------------===//

#include "Personalities.h"

#include "evo/Conversion/Passes.h"
#include "evo/Dialect/Evo/IR/EvoDialect.h"
#include "evo/Evaluation/Passes.h"
#include "evo/Evolution/Passes.h"
#include "evo/Evolution/ReplyCheck.h"
#include "evo/Evolution/RunMerge.h"
#include "evo/Evolution/RunStore.h"
#include "evo/Evolution/TuningExport.h"
#include "llvm/Support/FormatVariadic.h"
#include "evo/Pipelines/Pipelines.h"
#include "evo/Target/Manifest.h"
#include "evo/Target/Passes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "evo/LLM/Mailbox.h"
#include "evo/LLM/Prompt.h"
#include "evo/LLM/Untrusted.h"
#include "evo/Target/PTXAssembler.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "evo/Dialect/Evo/IR/InputChecks.h"
#include "evo/Target/OutputFiles.h"
#include "mlir/Bytecode/BytecodeReader.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"
#include <pthread.h>

/// Every upstream dialect, extension and LLVM IR translation, and evo's dialect.
static void registerDialects(mlir::DialectRegistry &registry) {
  mlir::registerAllDialects(registry);
  registry.insert<evo::EvoDialect>();
  mlir::registerAllExtensions(registry);
  mlir::registerAllToLLVMIRTranslations(registry);
}

/// `paused` is set when evo-evolve paused (a checkpoint, not an error: exit status 75).
static int optMain(int argc, char **argv, bool &paused) {
  mlir::DialectRegistry registry;
  registerDialects(registry);
  mlir::registerAllPasses();
  evo::registerEvoConversionPasses();
  evo::registerEvoTargetPasses();
  evo::registerEvoEvaluationPasses();
  evo::registerEvoEvolutionPasses();
  evo::registerEvoPipelines();

  llvm::cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << evo::evoVersionString() << "\n";
  });
  static llvm::cl::opt<unsigned> maxNesting(
      "evo-max-nesting",
      llvm::cl::desc("Refuse textual input whose brackets nest deeper than this (the parser "
                     "recurses once per level)"),
      llvm::cl::init(evo::kDefaultMaxNesting));
  auto [inputFile, outputFile] = mlir::registerAndParseCLIOptions(
      argc, argv, "evo-opt: lower linalg ops to evolved GPU kernels\n", registry);
  mlir::MlirOptMainConfig config = mlir::MlirOptMainConfig::createFromCLOptions();
  if (config.shouldListPasses())
    return mlir::asMainReturnCode(mlir::MlirOptMain(argc, argv, inputFile, outputFile, registry));
  // evo-evolve's result: a pause marks the module before the pass fails (Passes.h).
  config.setPassPipelineSetupFn(
      [pipeline = config, &paused](mlir::PassManager &pm) -> mlir::LogicalResult {
        if (mlir::failed(pipeline.setupPassPipeline(pm)))
          return mlir::failure();
        pm.addInstrumentation(evo::createPausedObserver(paused));
        return mlir::success();
      });

  // What upstream's MlirOptMain(argc, argv, ...) does, plus: the input's nesting is bounded
  // before the parser recurses into it, the -o file's directory is created, and every output
  // (the -o file and evo-emit-ptx's files) is written to a temporary file and renamed into
  // place only when the whole invocation succeeds (docs/reliability.md).
  llvm::InitLLVM initLLVM(argc, argv);
  if (inputFile == "-" && llvm::sys::Process::FileDescriptorIsDisplayed(fileno(stdin)))
    llvm::errs() << "(processing input from stdin now, hit ctrl-c/ctrl-d to interrupt)\n";
  std::string message;
  std::unique_ptr<llvm::MemoryBuffer> input = mlir::openInputFile(inputFile, &message);
  if (!input) {
    llvm::errs() << message << "\n";
    return 1;
  }
  if (!mlir::isBytecode(*input))
    if (std::optional<size_t> at = evo::findExcessiveNesting(input->getBuffer(), maxNesting)) {
      llvm::SourceMgr sources;
      const char *where = input->getBufferStart() + *at;
      sources.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
      sources.PrintMessage(llvm::errs(), llvm::SMLoc::getFromPointer(where),
                           llvm::SourceMgr::DK_Error,
                           llvm::Twine("brackets nest deeper than ") + llvm::Twine(maxNesting) +
                               " levels; evo-opt refuses such input (--evo-max-nesting)");
      return 1;
    }

  evo::OutputTransaction outputs;
  evo::OutputTransaction::Scope scope(outputs);
  std::vector<std::string> createdDirs;
  auto fail = [&] {
    outputs.discard();
    evo::removeEmptyDirectories(createdDirs);
    return 1;
  };
  auto run = [&](llvm::raw_ostream &os) {
    return mlir::MlirOptMain(os, std::move(input), registry, config);
  };
  if (outputFile == "-") {
    if (mlir::failed(run(llvm::outs())))
      return fail();
    if (llvm::Error e = outputs.commit()) {
      llvm::WithColor::error(llvm::errs(), "evo-opt") << llvm::toString(std::move(e)) << "\n";
      return fail();
    }
    return 0;
  }
  if (llvm::Error e = evo::createParentDirectories(outputFile, createdDirs)) {
    llvm::WithColor::error(llvm::errs(), "evo-opt") << llvm::toString(std::move(e)) << "\n";
    return fail();
  }
  // A regular file (or a new one) is written through a temporary beside it and renamed into
  // place. Anything else the user named -- a device, a FIFO, a symbolic link such as
  // /dev/stdout -- is opened and written directly, and never removed (upstream's ToolOutputFile
  // would delete a /dev/stdout link on failure, and a rename would replace it).
  llvm::sys::fs::file_status status;
  std::error_code statError = llvm::sys::fs::status(outputFile, status, /*follow=*/false);
  bool direct = !statError && llvm::sys::fs::exists(status) &&
                status.type() != llvm::sys::fs::file_type::regular_file;
  if (direct) {
    std::error_code ec;
    llvm::raw_fd_ostream out(outputFile, ec, llvm::sys::fs::OF_None);
    if (ec) {
      llvm::WithColor::error(llvm::errs(), "evo-opt")
          << "cannot open output file '" << outputFile << "': " << ec.message() << "\n";
      return fail();
    }
    if (mlir::failed(run(out)))
      return fail();
    out.flush();
    if (llvm::Error e = outputs.commit()) {
      llvm::WithColor::error(llvm::errs(), "evo-opt") << llvm::toString(std::move(e)) << "\n";
      return fail();
    }
    return 0;
  }
  llvm::SmallString<256> model(llvm::sys::path::parent_path(outputFile));
  llvm::sys::path::append(model, "." + llvm::sys::path::filename(outputFile) + ".tmp-%%%%%%");
  llvm::Expected<llvm::sys::fs::TempFile> temp = llvm::sys::fs::TempFile::create(model);
  if (!temp) {
    llvm::WithColor::error(llvm::errs(), "evo-opt")
        << "cannot open output file '" << outputFile << "': " << llvm::toString(temp.takeError())
        << "\n";
    return fail();
  }
  bool ok;
  {
    llvm::raw_fd_ostream os(temp->FD, /*shouldClose=*/false);
    ok = mlir::succeeded(run(os));
    os.flush();
    if (ok && os.has_error()) {
      llvm::WithColor::error(llvm::errs(), "evo-opt")
          << "cannot write output file '" << outputFile << "': " << os.error().message() << "\n";
      ok = false;
    }
    os.clear_error();
  }
  if (!ok) {
    llvm::consumeError(temp->discard());
    return fail();
  }
  if (llvm::Error e = outputs.commit()) {
    llvm::WithColor::error(llvm::errs(), "evo-opt") << llvm::toString(std::move(e)) << "\n";
    llvm::consumeError(temp->discard());
    return fail();
  }
  if (llvm::Error e = temp->keep(outputFile)) {
    llvm::WithColor::error(llvm::errs(), "evo-opt")
        << "cannot write output file '" << outputFile << "': " << llvm::toString(std::move(e))
        << "\n";
    for (const std::string &p : outputs.committed())
      llvm::sys::fs::remove(p);
    return fail();
  }
  return 0;
}

/// Runs `body` on a thread with a large stack (512 MiB reserved, committed only as used), so
/// that the recursion of parsing, verifying and printing has room well beyond what
/// --evo-max-nesting lets through. Falls back to a smaller stack, then to the calling thread.
static int runWithLargeStack(llvm::function_ref<int()> body) {
  struct Call {
    llvm::function_ref<int()> body;
    int rc = 1;
  } call{body};
  for (size_t size : {size_t(512) << 20, size_t(64) << 20}) {
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0)
      break;
    pthread_t thread;
    bool started =
        pthread_attr_setstacksize(&attr, size) == 0 &&
        pthread_create(
            &thread, &attr,
            [](void *arg) -> void * {
              auto *c = static_cast<Call *>(arg);
              c->rc = c->body();
              return nullptr;
            },
            &call) == 0;
    pthread_attr_destroy(&attr);
    if (started) {
      pthread_join(thread, nullptr);
      return call.rc;
    }
  }
  return body();
}

/// `evo-opt report RUN_DIR [OUT_DIR]`: the reports of a stored run, without a GPU.
static int reportMain(int argc, char **argv) {
  if (argc < 3 || argc > 4) {
    llvm::errs() << "usage: evo-opt report RUN_DIR [OUT_DIR]\n";
    return 2;
  }
  llvm::Expected<std::unique_ptr<evo::RunStore>> store = evo::RunStore::open(argv[2], false);
  if (!store) {
    llvm::errs() << "evo-opt report: " << llvm::toString(store.takeError()) << "\n";
    return 1;
  }
  llvm::StringRef out = argc == 4 ? argv[3] : argv[2];
  if (llvm::Error e = evo::writeReports(**store, out)) {
    llvm::errs() << "evo-opt report: " << llvm::toString(std::move(e)) << "\n";
    return 1;
  }
  llvm::json::Value summary = evo::summarizeRun(**store);
  llvm::outs() << llvm::formatv("{0,-24} {1,-12} {2,12} {3,12} {4,9} {5,10}\n", "task", "family",
                                "baseline ms", "best ms", "speedup", "evaluated");
  if (const llvm::json::Array *tasks = summary.getAsObject()->getArray("tasks"))
    for (const llvm::json::Value &t : *tasks) {
      const llvm::json::Object &o = *t.getAsObject();
      const llvm::json::Object *counts = o.getObject("counts");
      llvm::outs() << llvm::formatv("{0,-24} {1,-12} {2,12:f4} {3,12:f4} {4,8:f2}x {5,10}\n",
                                    o.getString("name").value_or(""),
                                    o.getString("family").value_or(""),
                                    o.getNumber("baseline_ms").value_or(0),
                                    o.getNumber("best_ms").value_or(0),
                                    o.getNumber("speedup").value_or(0),
                                    counts ? counts->getInteger("evaluated").value_or(0) : 0);
    }
  llvm::outs() << "reports: " << out << "/report.html, " << out << "/report.json\n";
  return 0;
}

/// `evo-opt runs-merge OUT RUN... [--allow-incomplete]`: the finished shards of a run
/// (evo-evolve shard=I/N) joined into the new run directory OUT, without a GPU
/// (docs/evolution.md, "Many hosts: shards and Slurm").
static int mergeMain(int argc, char **argv) {
  evo::MergeOptions o;
  for (int i = 2; i < argc; ++i) {
    llvm::StringRef arg(argv[i]);
    if (arg == "--allow-incomplete") {
      o.allowIncomplete = true;
    } else if (arg.starts_with("-")) {
      llvm::errs() << "evo-opt runs-merge: unknown option '" << arg << "'\n";
      o.out.clear();
      break;
    } else if (o.out.empty()) {
      o.out = arg.str();
    } else {
      o.runs.push_back(arg.str());
    }
  }
  if (o.out.empty() || o.runs.empty()) {
    llvm::errs() << "usage: evo-opt runs-merge OUT RUN... [--allow-incomplete]\n";
    return 2;
  }
  llvm::Expected<evo::MergeSummary> s = evo::mergeRuns(o);
  if (!s) {
    llvm::errs() << "evo-opt runs-merge: " << llvm::toString(s.takeError()) << "\n";
    return 1;
  }
  for (const std::string &w : s->warnings)
    llvm::errs() << "evo-opt runs-merge: warning: " << w << "\n";
  for (const std::string &w : s->incomplete)
    llvm::errs() << "evo-opt runs-merge: warning: merged unfinished: " << w << "\n";
  auto list = [](const std::vector<std::string> &names) {
    std::string text;
    for (const std::string &n : names)
      text += (text.empty() ? "" : ", ") + n;
    return text;
  };
  llvm::outs() << llvm::formatv("runs-merge: {0} shards -> {1}: {2} tasks of {3} functions, {4} "
                                "candidates, {5} LLM cache entries\n",
                                s->shards, o.out, s->tasks, s->functions, s->candidates,
                                s->cacheEntries);
  if (!s->certified.empty())
    llvm::outs() << "runs-merge: verified as a whole by their shard (applied without a GPU): "
                 << list(s->certified) << "\n";
  if (!s->toVerify.empty())
    llvm::outs() << "runs-merge: verified as a whole when applied (on a GPU): "
                 << list(s->toVerify) << "\n";
  llvm::outs() << "reports: " << o.out << "/report.html, " << o.out << "/report.json\n"
               << "apply: evo-opt IN.mlir --evo-lower-to-gpu --evo-evolve=\"<the shards' "
                  "options> run-dir="
               << o.out << " resume=true shard=all\" -o OUT.mlir\n";
  return 0;
}

/// `evo-opt tuning-merge OUT DB... [--prefer=fastest|newest]`: tuning databases joined into
/// OUT (written atomically), one record per signature and chip: the fastest (default) or the
/// newest (docs/evolution.md, "Tuning records").
static int tuningMergeMain(int argc, char **argv) {
  evo::TuningDb::Prefer prefer = evo::TuningDb::Prefer::Fastest;
  std::string out;
  std::vector<std::string> inputs;
  for (int i = 2; i < argc; ++i) {
    llvm::StringRef arg(argv[i]);
    if (arg == "--prefer=fastest") {
      prefer = evo::TuningDb::Prefer::Fastest;
    } else if (arg == "--prefer=newest") {
      prefer = evo::TuningDb::Prefer::Newest;
    } else if (arg.starts_with("-")) {
      llvm::errs() << "evo-opt tuning-merge: unknown option '" << arg << "'\n";
      return 2;
    } else if (out.empty()) {
      out = arg.str();
    } else {
      inputs.push_back(arg.str());
    }
  }
  if (out.empty() || inputs.empty()) {
    llvm::errs() << "usage: evo-opt tuning-merge OUT DB... [--prefer=fastest|newest]\n";
    return 2;
  }
  evo::TuningDb merged;
  size_t read = 0;
  for (const std::string &in : inputs) {
    evo::TuningDbError e;
    std::optional<evo::TuningDb> db = evo::TuningDb::load(in, e);
    if (!db) {
      llvm::errs() << "evo-opt tuning-merge: " << evo::describe(in, e) << "\n";
      return 1;
    }
    for (const evo::TuningRecord &r : db->records())
      merged.add(r, prefer);
    read += db->records().size();
  }
  if (llvm::Error e = merged.write(out)) {
    llvm::errs() << "evo-opt tuning-merge: cannot write '" << out
                 << "': " << llvm::toString(std::move(e)) << "\n";
    return 1;
  }
  llvm::outs() << llvm::formatv("tuning-merge: {0} records from {1} databases -> {2}: {3} "
                                "records\n",
                                read, inputs.size(), out, merged.records().size());
  return 0;
}

/// `evo-opt tuning-export RUN_DIR [OUT]`: a stored run's winners as a tuning database (default
/// RUN_DIR/tuning.json), without a GPU.
static int tuningExportMain(int argc, char **argv) {
  if (argc < 3 || argc > 4) {
    llvm::errs() << "usage: evo-opt tuning-export RUN_DIR [OUT]\n";
    return 2;
  }
  llvm::Expected<std::unique_ptr<evo::RunStore>> store = evo::RunStore::open(argv[2], false);
  if (!store) {
    llvm::errs() << "evo-opt tuning-export: " << llvm::toString(store.takeError()) << "\n";
    return 1;
  }
  mlir::DialectRegistry registry;
  registerDialects(registry);
  mlir::MLIRContext ctx(registry);
  llvm::Expected<evo::TuningDb> db = evo::exportTuningDb(**store, &ctx);
  if (!db) {
    llvm::errs() << "evo-opt tuning-export: " << llvm::toString(db.takeError()) << "\n";
    return 1;
  }
  std::string out = argc == 4 ? std::string(argv[3])
                              : (llvm::Twine(argv[2]) + "/" + evo::kTuningDbFileName).str();
  if (llvm::Error e = db->write(out)) {
    llvm::errs() << "evo-opt tuning-export: cannot write '" << out
                 << "': " << llvm::toString(std::move(e)) << "\n";
    return 1;
  }
  llvm::outs() << "tuning-export: " << db->records().size() << " records -> " << out << "\n";
  return 0;
}

/// `evo-opt tuning-template LOWERED.mlir [OUT] [--chip=sm_90]`: a tuning database with one
/// record per task of a module evo-lower-to-gpu lowered (its current knobs), to edit by hand
/// and apply with tuning-db= (docs/evolution.md, "Tuning records").
static int tuningTemplateMain(int argc, char **argv) {
  std::string chip = "sm_90", in, out = "-";
  int positional = 0;
  for (int i = 2; i < argc; ++i) {
    llvm::StringRef arg(argv[i]);
    if (arg.consume_front("--chip=")) {
      chip = arg.str();
    } else if (arg.starts_with("-") && arg != "-") {
      llvm::errs() << "evo-opt tuning-template: unknown option '" << arg << "'\n";
      return 2;
    } else if (positional++ == 0) {
      in = arg.str();
    } else {
      out = arg.str();
    }
  }
  if (in.empty() || positional > 2) {
    llvm::errs() << "usage: evo-opt tuning-template LOWERED.mlir [OUT] [--chip=sm_90]\n";
    return 2;
  }
  mlir::DialectRegistry registry;
  registerDialects(registry);
  mlir::MLIRContext ctx(registry);
  llvm::SourceMgr sources;
  mlir::SourceMgrDiagnosticHandler diagnostics(sources, &ctx);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(in, sources, mlir::ParserConfig(&ctx));
  if (!module)
    return 1;
  mlir::FailureOr<evo::TuningDb> db = evo::tuningTemplate(*module, chip);
  if (mlir::failed(db))
    return 1;
  if (db->records().empty()) {
    llvm::errs() << "evo-opt tuning-template: '" << in
                 << "' has no lowered tasks (run evo-lower-to-gpu first)\n";
    return 1;
  }
  if (llvm::Error e = db->write(out)) {
    llvm::errs() << "evo-opt tuning-template: cannot write '" << out
                 << "': " << llvm::toString(std::move(e)) << "\n";
    return 1;
  }
  return 0;
}

/// `evo-opt llm-relay DIR --llm=SPEC [options]`: answers a mailbox's pending prompts
/// (docs/llm.md, "Mailbox").
static int relayMain(int argc, char **argv) {
  auto usage = [] {
    llvm::errs() << "usage: evo-opt llm-relay DIR --llm=openai|anthropic|cmd:<program> "
                    "[--llm-model=M] [--llm-base-url=URL] [--llm-key-env=VAR] [--llm-timeout=S] "
                    "[--llm-retries=N] [--llm-parallel=N] [--llm-max-calls=N] "
                    "[--llm-max-total-tokens=N] [--llm-max-cost=X] [--llm-prices=FILE] "
                    "[--llm-cache=DIR] [--llm-max-reply-bytes=N] [--watch=SECONDS]\n";
    return 2;
  };
  if (argc < 3 || llvm::StringRef(argv[2]).starts_with("-"))
    return usage();
  std::string dir = argv[2];
  evo::llm::BackendOptions bo;
  evo::llm::ClientOptions co;
  evo::llm::RelayOptions ro;
  std::string prices;
  for (int i = 3; i < argc; ++i) {
    auto [key, value] = llvm::StringRef(argv[i]).split('=');
    auto number = [&](auto &out) {
      double v;
      if (value.getAsDouble(v) || v < 0) {
        llvm::errs() << "evo-opt llm-relay: " << key << " needs a non-negative number, got '"
                     << value << "'\n";
        return false;
      }
      out = static_cast<std::remove_reference_t<decltype(out)>>(v);
      return true;
    };
    bool ok = true;
    if (key == "--llm")
      bo.spec = value.str();
    else if (key == "--llm-model")
      bo.model = value.str();
    else if (key == "--llm-base-url")
      bo.baseUrl = value.str();
    else if (key == "--llm-key-env")
      bo.keyEnv = value.str();
    else if (key == "--llm-timeout")
      ok = number(co.timeoutSeconds);
    else if (key == "--llm-retries")
      ok = number(co.maxRetries);
    else if (key == "--llm-parallel")
      ok = number(co.parallel);
    else if (key == "--llm-max-calls")
      ok = number(co.maxCalls);
    else if (key == "--llm-max-total-tokens")
      ok = number(co.maxTokens);
    else if (key == "--llm-max-cost")
      ok = number(co.maxCost);
    else if (key == "--llm-prices")
      prices = value.str();
    else if (key == "--llm-cache")
      co.cacheDir = value.str();
    else if (key == "--llm-max-reply-bytes") {
      double v = 0;
      ok = !value.getAsDouble(v) && v >= 1 && v <= double(1ull << 40);
      if (ok)
        bo.maxReplyBytes = static_cast<uint64_t>(v);
      else
        llvm::errs() << "evo-opt llm-relay: --llm-max-reply-bytes needs a number of bytes "
                        "between 1 and 2^40, got '"
                     << value << "'\n";
    }
    else if (key == "--watch")
      ok = number(ro.idleSeconds);
    else {
      llvm::errs() << "evo-opt llm-relay: unknown option '" << argv[i] << "'\n";
      return usage();
    }
    if (!ok)
      return 2;
  }
  if (bo.spec.empty() || llvm::StringRef(bo.spec).starts_with("mailbox:")) {
    llvm::errs() << "evo-opt llm-relay: --llm must name the backend that answers "
                    "(openai, anthropic or cmd:<program>)\n";
    return 2;
  }
  llvm::Expected<std::unique_ptr<evo::llm::Backend>> backend = evo::llm::createBackend(bo);
  if (!backend) {
    llvm::errs() << "evo-opt llm-relay: " << llvm::toString(backend.takeError()) << "\n";
    return 2;
  }
  evo::llm::PriceTable table = evo::llm::PriceTable::builtin();
  if (!prices.empty()) {
    llvm::Expected<evo::llm::PriceTable> t = evo::llm::PriceTable::load(prices);
    if (!t) {
      llvm::errs() << "evo-opt llm-relay: " << llvm::toString(t.takeError()) << "\n";
      return 2;
    }
    table = std::move(*t);
  }
  evo::llm::Client client(std::move(*backend), co, std::move(table));
  llvm::Expected<evo::llm::RelayStats> stats = evo::llm::relayMailbox(dir, client, ro);
  if (!stats) {
    llvm::errs() << "evo-opt llm-relay: " << llvm::toString(stats.takeError()) << "\n";
    return 1;
  }
  for (const std::string &p : stats->problems)
    llvm::errs() << "evo-opt llm-relay: " << p << "\n";
  evo::llm::Totals t = client.totals();
  llvm::outs() << llvm::formatv("llm-relay: {0} answered, {1} failed, {2} skipped, {3} still "
                                "pending; {4} calls, {5} prompt + {6} completion tokens, cost "
                                "{7:f4} {8}\n",
                                stats->answered, stats->failed, stats->skipped,
                                evo::llm::countPending(dir), t.calls, t.promptTokens,
                                t.completionTokens, t.cost, client.priceTable().currency());
  // A failed call or a skipped (unreadable, refused) prompt needs someone's attention.
  return stats->failed || stats->skipped ? 1 : 0;
}

/// `evo-opt llm-prompt --template=NAME --context=FILE.json [--prompts=DIR]`: renders a prompt
/// as evo-evolve would send it (docs/llm.md; for checking templates).
static int promptMain(int argc, char **argv) {
  std::string name, context, dir;
  for (int i = 2; i < argc; ++i) {
    auto [key, value] = llvm::StringRef(argv[i]).split('=');
    if (key == "--template")
      name = value.str();
    else if (key == "--context")
      context = value.str();
    else if (key == "--prompts")
      dir = value.str();
    else
      name.clear(), context.clear(), i = argc;
  }
  if (name.empty() || context.empty()) {
    llvm::errs() << "usage: evo-opt llm-prompt --template=NAME --context=FILE.json "
                    "[--prompts=DIR]\n";
    return 2;
  }
  auto buf = llvm::MemoryBuffer::getFile(context);
  if (!buf) {
    llvm::errs() << "evo-opt llm-prompt: cannot read '" << context << "'\n";
    return 1;
  }
  llvm::Expected<llvm::json::Value> v = llvm::json::parse((*buf)->getBuffer());
  if (!v) {
    llvm::errs() << "evo-opt llm-prompt: " << context << ": " << llvm::toString(v.takeError())
                 << "\n";
    return 1;
  }
  llvm::Expected<evo::llm::PromptContext> ctx = evo::llm::PromptContext::fromJson(*v);
  llvm::Expected<evo::llm::Templates> t = evo::llm::Templates::load(dir);
  if (!ctx || !t) {
    llvm::errs() << "evo-opt llm-prompt: "
                 << (ctx ? llvm::toString(t.takeError()) : llvm::toString(ctx.takeError()))
                 << "\n";
    if (ctx && !t)
      return 1;
    if (t)
      return 1;
    llvm::consumeError(t.takeError());
    return 1;
  }
  llvm::Expected<evo::llm::RenderedPrompt> p = evo::llm::renderPrompt(*t, name, *ctx);
  if (!p) {
    llvm::errs() << "evo-opt llm-prompt: " << llvm::toString(p.takeError()) << "\n";
    return 1;
  }
  llvm::outs() << "=== system ===\n" << p->system << "=== user (" << name << ") ===\n" << p->user;
  return 0;
}

/// `evo-opt llm-check DIR | DIR/replies/<key>.md | REPLY --prompt=DIR/pending/<key>.json`:
/// judges replies as evo-evolve will, without a GPU (docs/llm.md, "Checking a reply before
/// answering").
static int checkMain(int argc, char **argv) {
  auto usage = [] {
    llvm::errs() << "usage: evo-opt llm-check DIR | DIR/replies/<key>.md | "
                    "REPLY|- --prompt=DIR/pending/<key>.json [--ptxas=PATH]\n";
    return 2;
  };
  evo::ReplyCheckOptions o;
  std::string ptxas;
  for (int i = 2; i < argc; ++i) {
    llvm::StringRef arg(argv[i]);
    auto [key, value] = arg.split('=');
    if (key == "--prompt" && !value.empty())
      o.prompt = value.str();
    else if (key == "--ptxas" && !value.empty())
      ptxas = value.str();
    else if ((arg == "-" || !arg.starts_with("-")) && o.path.empty())
      o.path = arg.str();
    else {
      llvm::errs() << "evo-opt llm-check: unexpected argument '"
                   << evo::llm::sanitizeForTerminal(arg) << "'\n";
      return usage();
    }
  }
  if (o.path.empty())
    return usage();
  if (!o.prompt.empty() && llvm::sys::fs::is_directory(o.path)) {
    llvm::errs() << "evo-opt llm-check: --prompt names the prompt of one reply file, not of a "
                    "mailbox\n";
    return usage();
  }
  llvm::Expected<std::optional<std::string>> found = evo::findPtxas(ptxas);
  if (!found) {
    llvm::errs() << "evo-opt llm-check: " << llvm::toString(found.takeError()) << "\n";
    return 2;
  }
  o.ptxasPath = found->value_or("");
  mlir::DialectRegistry registry;
  registerDialects(registry);
  llvm::Expected<std::vector<evo::CheckedReply>> checked = evo::checkReplies(registry, o);
  if (!checked) {
    llvm::errs() << "evo-opt llm-check: " << llvm::toString(checked.takeError()) << "\n";
    return 1;
  }
  using Status = evo::CheckedReply::Status;
  unsigned counts[3] = {0, 0, 0};
  for (const evo::CheckedReply &r : *checked) {
    ++counts[static_cast<int>(r.status)];
    llvm::outs() << r.key << ": " << (r.status == Status::Unchecked ? "not checked: " : "")
                 << r.text << "\n";
  }
  if (llvm::sys::fs::is_directory(o.path))
    llvm::outs() << llvm::formatv("llm-check: {0} ok, {1} not usable, {2} not checked; {3} "
                                  "prompt(s) without a reply\n",
                                  counts[0], counts[1], counts[2],
                                  evo::llm::countPending(o.path));
  return counts[1] || counts[2] ? 1 : 0;
}

static int dispatch(int argc, char **argv) {
  llvm::StringRef tool = argc > 0 ? llvm::sys::path::filename(argv[0]) : "evo-opt";
  if (tool == "evo-runner" || tool == "mlir-runner")
    return evo::runnerMain(argc, argv);
  if (argc > 1 && llvm::StringRef(argv[1]) == "report")
    return reportMain(argc, argv);
  if (argc > 1 && llvm::StringRef(argv[1]) == "runs-merge")
    return mergeMain(argc, argv);
  if (argc > 1 && llvm::StringRef(argv[1]) == "tuning-merge")
    return tuningMergeMain(argc, argv);
  if (argc > 1 && llvm::StringRef(argv[1]) == "tuning-template")
    return tuningTemplateMain(argc, argv);
  if (argc > 1 && llvm::StringRef(argv[1]) == "tuning-export")
    return tuningExportMain(argc, argv);
  if (argc > 1 && llvm::StringRef(argv[1]) == "llm-relay")
    return relayMain(argc, argv);
  if (argc > 1 && llvm::StringRef(argv[1]) == "llm-prompt")
    return promptMain(argc, argv);
  if (argc > 1 && llvm::StringRef(argv[1]) == "llm-check")
    return checkMain(argc, argv);
  if (tool == "FileCheck")
    return evo::fileCheckMain(argc, argv);
  bool paused = false;
  int rc = optMain(argc, argv, paused);
  // evo-evolve paused with LLM prompts waiting in a mailbox: a checkpoint, not an error.
  if (rc != 0 && paused)
    return evo::llm::kPausedExitCode;
  return rc;
}

int main(int argc, char **argv) {
  return runWithLargeStack([&] { return dispatch(argc, argv); });
}
