//===- RunDirLock.h - one evo-opt at a time per run directory -------*- C++ -*-===//
//
// Taken before a run directory's store is opened (evo-evolve, runs-merge); kept apart from the
// store because it guards the directory, not the SQLite file, and needs no SQLite.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_EVOLUTION_RUNDIRLOCK_H
#define EVO_EVOLUTION_RUNDIRLOCK_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace evo {

/// An exclusive lock on a run directory (flock on DIR/.evo-lock, which holds the owner's pid):
/// one evo-opt at a time runs, resumes or replays from a run-dir. The kernel drops it when the
/// process ends, however it ends, so a killed run never leaves a stale lock behind; the
/// descriptor is close-on-exec, so worker processes never hold it.
class RunDirLock {
public:
  /// Creates DIR when `create`; fails at once (no waiting) when another process holds the lock.
  static llvm::Expected<RunDirLock> acquire(llvm::StringRef dir, bool create);
  RunDirLock(RunDirLock &&other) : fd(other.fd) { other.fd = -1; }
  RunDirLock &operator=(RunDirLock &&other);
  RunDirLock(const RunDirLock &) = delete;
  ~RunDirLock();

private:
  static llvm::Expected<RunDirLock> acquireOnce(llvm::StringRef dir, bool create);
  explicit RunDirLock(int fd) : fd(fd) {}
  int fd = -1;
};

} // namespace evo

#endif // EVO_EVOLUTION_RUNDIRLOCK_H
