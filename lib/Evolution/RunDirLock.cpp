//===- RunDirLock.cpp - one evo-opt at a time per run directory --------------===//
//
// The pid written into DIR/.evo-lock only serves the message of a process refused the lock.
//
//===----------------------------------------------------------------------===//

#include "evo/Evolution/RunDirLock.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace evo;
using llvm::Expected;
using llvm::StringRef;

static llvm::Error makeError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

Expected<RunDirLock> RunDirLock::acquire(StringRef dir, bool create) {
  // A holder may unlink its lock file as it gives up a run-dir it made (a run that failed before
  // its store existed): a lock taken on a file no longer at the path is worthless, so try again.
  for (int attempt = 0;; ++attempt) {
    Expected<RunDirLock> lock = acquireOnce(dir, create);
    if (!lock || lock->fd < 0 || attempt == 8)
      return lock;
    llvm::SmallString<256> file(dir);
    llvm::sys::path::append(file, ".evo-lock");
    struct stat held, now;
    if (::fstat(lock->fd, &held) == 0 && ::lstat(file.c_str(), &now) == 0 &&
        held.st_ino == now.st_ino && held.st_dev == now.st_dev)
      return lock;
  }
}

Expected<RunDirLock> RunDirLock::acquireOnce(StringRef dir, bool create) {
  if (create)
    if (std::error_code ec = llvm::sys::fs::create_directories(dir))
      return makeError(llvm::formatv("cannot create run directory '{0}': {1}", dir, ec.message()));
  llvm::SmallString<256> file(dir);
  llvm::sys::path::append(file, ".evo-lock");
  int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0)
    return makeError(llvm::formatv("cannot lock run directory '{0}': {1}: {2}", dir, file,
                                   std::strerror(errno)));
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return makeError(llvm::formatv("cannot lock run directory '{0}': {1} is not a regular file",
                                   dir, file));
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    char buf[32] = {};
    ssize_t n = ::pread(fd, buf, sizeof(buf) - 1, 0);
    ::close(fd);
    std::string owner = n > 0 ? StringRef(buf, n).trim().str() : "";
    if (err == EWOULDBLOCK)
      return makeError(llvm::formatv(
          "run directory '{0}' is in use by another evo-opt{1}; wait for it to finish, or "
          "choose another run-dir",
          dir, owner.empty() || !llvm::all_of(owner, llvm::isDigit) ? "" : " (pid " + owner + ")"));
    return makeError(llvm::formatv("cannot lock run directory '{0}': {1}", dir,
                                   std::strerror(err)));
  }
  std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) < 0) {
    // The pid is only a courtesy for the message above; the lock itself is held.
  }
  return RunDirLock(fd);
}

RunDirLock &RunDirLock::operator=(RunDirLock &&other) {
  if (this != &other) {
    if (fd >= 0)
      ::close(fd);
    fd = other.fd;
    other.fd = -1;
  }
  return *this;
}

RunDirLock::~RunDirLock() {
  if (fd >= 0)
    ::close(fd); // releases the flock
}
