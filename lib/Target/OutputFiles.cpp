//===- OutputFiles.cpp - all-or-nothing output files ---------------------------===//

#include "evo/Target/OutputFiles.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Path.h"
#include <atomic>
#include <unistd.h>

using namespace llvm;

namespace evo {

static std::atomic<OutputTransaction *> currentTransaction{nullptr};

OutputTransaction *OutputTransaction::current() { return currentTransaction.load(); }

OutputTransaction::Scope::Scope(OutputTransaction &tx)
    : previous(currentTransaction.exchange(&tx)) {}

OutputTransaction::Scope::~Scope() { currentTransaction.store(previous); }

OutputTransaction::~OutputTransaction() { discard(); }

/// The missing directories on the way to `dir`, outermost first.
static std::vector<std::string> missingDirectories(StringRef dir) {
  std::vector<std::string> missing;
  SmallString<256> p(dir);
  while (!p.empty() && !sys::fs::exists(p)) {
    missing.insert(missing.begin(), std::string(p));
    StringRef parent = sys::path::parent_path(p);
    if (parent.size() == p.size())
      break;
    p.resize(parent.size());
  }
  return missing;
}

Expected<std::string> OutputTransaction::createDirectory(StringRef dir) {
  SmallString<256> abs(dir);
  if (std::error_code ec = sys::fs::make_absolute(abs))
    return createStringError(ec, "cannot resolve output directory '%s': %s", dir.str().c_str(),
                             ec.message().c_str());
  std::vector<std::string> missing = missingDirectories(abs);
  if (std::error_code ec = sys::fs::create_directories(abs))
    return createStringError(ec, "cannot create output directory '%s': %s", dir.str().c_str(),
                             ec.message().c_str());
  {
    std::lock_guard<std::mutex> lock(mutex);
    createdDirs.insert(createdDirs.end(), missing.begin(), missing.end());
  }
  if (!sys::fs::is_directory(abs))
    return createStringError(std::errc::not_a_directory, "output directory '%s' is not a directory",
                             dir.str().c_str());
  SmallString<256> real;
  if (std::error_code ec = sys::fs::real_path(abs, real))
    return createStringError(ec, "cannot resolve output directory '%s': %s", dir.str().c_str(),
                             ec.message().c_str());
  return std::string(real);
}

static Error writtenTwice(StringRef path) {
  return createStringError(std::errc::file_exists,
                           "'%s' is written twice by this invocation (two gpu.modules or two "
                           "input chunks share a name, compared without case)",
                           path.str().c_str());
}

Error OutputTransaction::claim(StringRef dir, StringRef name) {
  SmallString<256> path(dir);
  sys::path::append(path, name);
  std::lock_guard<std::mutex> lock(mutex);
  if (!claims.try_emplace(StringRef(path).lower(), std::string(path)).second)
    return writtenTwice(path);
  return Error::success();
}

Error OutputTransaction::checkClaim(StringRef dir, StringRef name) {
  SmallString<256> path(dir);
  sys::path::append(path, name);
  std::lock_guard<std::mutex> lock(mutex);
  if (claims.contains(StringRef(path).lower()))
    return writtenTwice(path);
  return Error::success();
}

Error OutputTransaction::stage(StringRef dir, StringRef name,
                               function_ref<void(raw_ostream &)> write) {
  SmallString<256> path(dir), model(dir);
  sys::path::append(path, name);
  // Hidden, beside the final file (a rename stays on one file system).
  sys::path::append(model, "." + name + ".tmp-%%%%%%");
  Expected<sys::fs::TempFile> temp = sys::fs::TempFile::create(model);
  if (!temp)
    return createStringError(inconvertibleErrorCode(), "cannot create a file in '%s': %s",
                             dir.str().c_str(), toString(temp.takeError()).c_str());
  raw_fd_ostream os(temp->FD, /*shouldClose=*/false);
  write(os);
  os.flush();
  if (std::error_code ec = os.error()) {
    os.clear_error();
    consumeError(temp->discard());
    return createStringError(ec, "cannot write '%s': %s", path.c_str(), ec.message().c_str());
  }
  std::lock_guard<std::mutex> lock(mutex);
  staged.push_back({std::string(path), std::move(*temp)});
  return Error::success();
}

Error OutputTransaction::adopt(OutputTransaction &other) {
  if (&other == this)
    return Error::success();
  std::scoped_lock lock(mutex, other.mutex);
  for (const auto &c : other.claims)
    if (claims.contains(c.getKey()))
      return writtenTwice(c.getValue());
  for (const auto &c : other.claims)
    claims.try_emplace(c.getKey(), c.getValue());
  for (Staged &s : other.staged)
    staged.push_back(std::move(s));
  createdDirs.insert(createdDirs.end(), other.createdDirs.begin(), other.createdDirs.end());
  other.claims.clear();
  other.staged.clear();
  other.createdDirs.clear();
  return Error::success();
}

Error OutputTransaction::commit() {
  std::lock_guard<std::mutex> lock(mutex);
  auto fail = [&](Error e) {
    discardLocked();
    return e;
  };
  // A target that cannot be replaced fails the commit before any file changes.
  for (Staged &s : staged) {
    sys::fs::file_status st;
    if (!sys::fs::status(s.path, st, /*follow=*/false) && sys::fs::exists(st) &&
        sys::fs::is_directory(st))
      return fail(createStringError(std::errc::is_a_directory, "cannot write '%s': it is a directory",
                                    s.path.c_str()));
  }
  // Files being replaced are kept under a hard link until every rename has succeeded, so that a
  // failing commit can put them back.
  struct Done {
    std::string path, backup;
  };
  std::vector<Done> done;
  Error failure = Error::success();
  for (Staged &s : staged) {
    if (failure) {
      consumeError(s.temp.discard());
      continue;
    }
    Done d{s.path, ""};
    if (sys::fs::is_regular_file(s.path)) {
      SmallString<256> backup(sys::path::parent_path(s.path));
      sys::path::append(backup, "." + sys::path::filename(s.path) + ".old-" +
                                    std::to_string(::getpid()));
      (void)sys::fs::remove(backup);
      if (!sys::fs::create_hard_link(s.path, backup))
        d.backup = std::string(backup);
    }
    if (Error e = s.temp.keep(s.path)) { // keep() removes the temporary file when it fails
      failure = createStringError(inconvertibleErrorCode(), "cannot write '%s': %s",
                                  s.path.c_str(), toString(std::move(e)).c_str());
      if (!d.backup.empty())
        (void)sys::fs::remove(d.backup);
      continue;
    }
    done.push_back(std::move(d));
  }
  staged.clear();
  if (failure) {
    for (const Done &d : done) {
      if (d.backup.empty() || sys::fs::rename(d.backup, d.path))
        (void)sys::fs::remove(d.path);
    }
    return fail(std::move(failure));
  }
  for (const Done &d : done) {
    if (!d.backup.empty())
      (void)sys::fs::remove(d.backup);
    committedPaths.push_back(d.path);
  }
  claims.clear();
  createdDirs.clear();
  return Error::success();
}

void OutputTransaction::discard() {
  std::lock_guard<std::mutex> lock(mutex);
  discardLocked();
}

void OutputTransaction::discardLocked() {
  for (Staged &s : staged)
    consumeError(s.temp.discard());
  staged.clear();
  claims.clear();
  removeEmptyDirectories(createdDirs);
  createdDirs.clear();
}

Error createParentDirectories(StringRef file, std::vector<std::string> &created) {
  StringRef parent = sys::path::parent_path(file);
  if (parent.empty() || sys::fs::exists(parent))
    return Error::success();
  std::vector<std::string> missing = missingDirectories(parent);
  if (std::error_code ec = sys::fs::create_directories(parent))
    return createStringError(ec, "cannot create directory '%s' for '%s': %s",
                             parent.str().c_str(), file.str().c_str(), ec.message().c_str());
  created.insert(created.end(), missing.begin(), missing.end());
  return Error::success();
}

void removeEmptyDirectories(const std::vector<std::string> &dirs) {
  // sys::fs::remove refuses a directory that is not empty: only what we left empty goes.
  for (auto it = dirs.rbegin(); it != dirs.rend(); ++it)
    (void)sys::fs::remove(*it);
}

} // namespace evo
