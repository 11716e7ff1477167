//===- PTXAssembler.cpp - running ptxas ---------------------------------------===//

#include "evo/Config.h"
#include "evo/Target/PTXAssembler.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/raw_ostream.h"


using namespace llvm;

namespace evo {

StringMap<KernelResources> parsePtxasLog(StringRef log) {
  StringMap<KernelResources> out;
  // "Compiling entry function 'name' for 'sm_90'" opens a kernel's section; later lines of the
  // section carry its properties.
  Regex entry("Compiling entry function '([^']+)'");
  Regex props("Function properties for ([^ \t\r\n]+)");
  Regex frame("([0-9]+) bytes stack frame, ([0-9]+) bytes spill stores, ([0-9]+) bytes spill loads");
  Regex used("Used ([0-9]+) registers");
  Regex barriers("used ([0-9]+) barriers");
  Regex smem("([0-9]+) bytes smem");
  std::string current;
  SmallVector<StringRef> lines;
  log.split(lines, '\n');
  for (StringRef line : lines) {
    SmallVector<StringRef, 4> m;
    if (entry.match(line, &m) || props.match(line, &m)) {
      current = m[1].str();
      out.try_emplace(current);
      continue;
    }
    if (current.empty())
      continue;
    KernelResources &r = out[current];
    if (frame.match(line, &m)) {
      m[1].getAsInteger(10, r.stackFrame);
      m[2].getAsInteger(10, r.spillStores);
      m[3].getAsInteger(10, r.spillLoads);
    }
    if (used.match(line, &m))
      m[1].getAsInteger(10, r.registers);
    if (barriers.match(line, &m))
      m[1].getAsInteger(10, r.barriers);
    if (smem.match(line, &m))
      m[1].getAsInteger(10, r.sharedMemory);
  }
  return out;
}

static bool isExecutable(StringRef path) {
  return !path.empty() && sys::fs::exists(path) && sys::fs::can_execute(path);
}

std::string defaultCudaPath() {
  for (const char *var : {"CUDA_HOME", "CUDA_PATH"})
    if (std::optional<std::string> v = sys::Process::GetEnv(var); v && sys::fs::is_directory(*v))
      return *v;
  for (StringRef p : {StringRef(EVO_DEFAULT_CUDA_PATH), StringRef("/usr/local/cuda")})
    if (!p.empty() && sys::fs::is_directory(p))
      return p.str();
  return "";
}

Expected<std::optional<std::string>> findPtxas(StringRef explicitPath) {
  if (!explicitPath.empty()) {
    if (isExecutable(explicitPath))
      return std::optional<std::string>(explicitPath.str());
    return createStringError(inconvertibleErrorCode(),
                             "ptxas '" + explicitPath + "' does not exist or is not executable");
  }
  if (std::optional<std::string> env = sys::Process::GetEnv("EVO_PTXAS")) {
    if (isExecutable(*env))
      return std::optional<std::string>(*env);
    return createStringError(inconvertibleErrorCode(),
                             "EVO_PTXAS='" + *env + "' does not exist or is not executable");
  }
  if (isExecutable(EVO_DEFAULT_PTXAS))
    return std::optional<std::string>(EVO_DEFAULT_PTXAS);
  std::string cuda = defaultCudaPath();
  if (!cuda.empty()) {
    SmallString<256> p(cuda);
    sys::path::append(p, "bin", "ptxas");
    if (isExecutable(p))
      return std::optional<std::string>(p.str().str());
  }
  if (ErrorOr<std::string> p = sys::findProgramByName("ptxas"))
    return std::optional<std::string>(*p);
  return std::optional<std::string>();
}

Expected<AssembleResult> assemblePtx(StringRef ptxas, StringRef ptx, StringRef chip,
                                     unsigned timeoutSeconds) {
  SmallString<128> in, out, log;
  if (std::error_code ec = sys::fs::createTemporaryFile("evo", "ptx", in))
    return errorCodeToError(ec);
  FileRemover removeIn(in);
  if (std::error_code ec = sys::fs::createTemporaryFile("evo", "cubin", out))
    return errorCodeToError(ec);
  FileRemover removeOut(out);
  if (std::error_code ec = sys::fs::createTemporaryFile("evo", "log", log))
    return errorCodeToError(ec);
  FileRemover removeLog(log);
  {
    std::error_code ec;
    raw_fd_ostream os(in, ec);
    if (ec)
      return errorCodeToError(ec);
    os << ptx;
  }
  std::string arch = ("-arch=" + chip).str();
  SmallVector<StringRef> args = {ptxas, arch, "-v", "-O3", in, "-o", out};
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(log), StringRef(log)};
  std::string errMsg;
  int rc = sys::ExecuteAndWait(ptxas, args, /*Env=*/std::nullopt, redirects, timeoutSeconds,
                               /*MemoryLimit=*/0, &errMsg);
  AssembleResult result;
  if (auto buf = MemoryBuffer::getFile(log))
    result.log = (*buf)->getBuffer().str();
  if (rc != 0) {
    std::string msg = rc < 0 ? "ptxas could not run: " + errMsg
                             : "ptxas failed (exit " + std::to_string(rc) + ")";
    if (!result.log.empty())
      msg += ":\n" + result.log;
    return createStringError(inconvertibleErrorCode(), msg);
  }
  if (auto buf = MemoryBuffer::getFile(out, /*IsText=*/false))
    result.cubin = (*buf)->getBuffer().str();
  result.kernels = parsePtxasLog(result.log);
  return result;
}

} // namespace evo
