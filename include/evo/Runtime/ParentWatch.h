//===- ParentWatch.h - a worker process that never outlives its parent -*- C++ -*-===//
//
// evo-eval-worker holds a GPU context; if evo-opt dies without ending it (SIGKILL, the OOM
// killer, a crash), an orphaned worker would keep polling its queue, or keep a hung kernel on the
// GPU, forever. The parent writes its pid into the request ("parent_pid"); the worker checks at
// start that it is still that process's child and then watches from a thread: once the parent is
// gone (the worker is re-parented, getppid() changes) it ends itself at once.
//
// PR_SET_PDEATHSIG is not used: it fires when the *thread* that started the worker exits, and
// evo-opt starts workers from short-lived evaluation threads.
//
// Plain C++ (no LLVM): the worker links none.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_RUNTIME_PARENTWATCH_H
#define EVO_RUNTIME_PARENTWATCH_H

#include <chrono>
#include <thread>
#include <unistd.h>

namespace evo {

/// Exit status of a worker that ended because its parent was gone.
constexpr int kWorkerParentGone = 5;

/// Ends the process now if `parent` (> 0) is not its parent any more, and from then on within
/// about `periodMs` of the parent's death. A `parent` of 0 or less (run by hand) watches nothing.
inline void exitWhenParentDies(long parent, int periodMs = 100) {
  if (parent <= 0)
    return;
  if (static_cast<long>(::getppid()) != parent)
    ::_exit(kWorkerParentGone);
  std::thread([parent, periodMs] {
    while (true) {
      std::this_thread::sleep_for(std::chrono::milliseconds(periodMs));
      if (static_cast<long>(::getppid()) != parent)
        ::_exit(kWorkerParentGone);
    }
  }).detach();
}

} // namespace evo

#endif
