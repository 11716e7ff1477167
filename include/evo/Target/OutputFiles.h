//===- OutputFiles.h - all-or-nothing output files -------------------*- C++ -*-===//
//
// The files one evo-opt invocation writes (evo-emit-ptx's <name>.ptx and <name>.json, with any
// --split-input-file chunk or gpu.module count) form one transaction: each file is written to a
// temporary file beside its final name (removed by LLVM's signal handlers if the process dies),
// and all are renamed into place only when the whole invocation has succeeded. On failure the
// temporary files and the directories the transaction created are removed, so the output
// directory is left as it was. A path may be claimed once per transaction, so two modules or two
// chunks can never overwrite each other's files.
//
// evo-opt's driver opens one transaction for the whole invocation (`OutputTransaction::Scope`).
// evo-emit-ptx stages its files in a transaction of its own, which it hands to the invocation's
// when the pass succeeds (so a failed pass leaves nothing, also under -verify-diagnostics), or
// commits itself when there is none (a pass manager in another program).
//
//===----------------------------------------------------------------------===//

#ifndef EVO_TARGET_OUTPUTFILES_H
#define EVO_TARGET_OUTPUTFILES_H

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"
#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace evo {

class OutputTransaction {
public:
  OutputTransaction() = default;
  OutputTransaction(const OutputTransaction &) = delete;
  OutputTransaction &operator=(const OutputTransaction &) = delete;
  /// Discards whatever was neither committed nor discarded.
  ~OutputTransaction();

  /// The transaction of the running invocation, or null when none was opened.
  static OutputTransaction *current();

  /// Makes `tx` the invocation's transaction while it lives.
  class Scope {
  public:
    explicit Scope(OutputTransaction &tx);
    ~Scope();

  private:
    OutputTransaction *previous;
  };

  /// Creates `dir` and its missing parents, remembering those it created (removed again by
  /// discard() when still empty). Returns the directory's real path.
  llvm::Expected<std::string> createDirectory(llvm::StringRef dir);

  /// Reserves the final path `dir/name`, where `dir` is a real path from createDirectory. Fails
  /// when this transaction already holds a file of that name in that directory (compared without
  /// case, for case-insensitive file systems).
  llvm::Error claim(llvm::StringRef dir, llvm::StringRef name);

  /// Fails like claim() would, without claiming.
  llvm::Error checkClaim(llvm::StringRef dir, llvm::StringRef name);

  /// Writes a claimed file's content to a temporary file next to it.
  llvm::Error stage(llvm::StringRef dir, llvm::StringRef name,
                    llvm::function_ref<void(llvm::raw_ostream &)> write);

  /// Moves everything `other` holds (claims, staged files, created directories) into this
  /// transaction, or nothing when one of its claims is already held here (the error names it).
  llvm::Error adopt(OutputTransaction &other);

  /// Renames every staged file into place. A target that is a directory fails the commit before
  /// any rename; if a rename fails, the files already renamed are put back as they were (a
  /// replaced file is kept under a hard link until the last rename) and the rest discarded: on
  /// error the directories look as they did before the transaction.
  llvm::Error commit();

  /// Removes every staged file and every directory this transaction created that is empty.
  void discard();

  /// The final paths committed so far (for tests and messages).
  const std::vector<std::string> &committed() const { return committedPaths; }

private:
  struct Staged {
    std::string path;
    llvm::sys::fs::TempFile temp;
  };
  /// discard() with `mutex` already held (a failing commit ends this way too).
  void discardLocked();

  std::mutex mutex;
  llvm::StringMap<std::string> claims; // lowercased path -> path as claimed
  std::vector<Staged> staged;
  std::vector<std::string> createdDirs; // outermost first
  std::vector<std::string> committedPaths;
};

/// Creates the parent directory of `file` if it is missing (the `-o` file of evo-opt), recording
/// the directories it created in `created`, outermost first.
llvm::Error createParentDirectories(llvm::StringRef file, std::vector<std::string> &created);

/// Removes the directories in `dirs` (outermost first) that are empty, innermost first.
void removeEmptyDirectories(const std::vector<std::string> &dirs);

} // namespace evo

#endif // EVO_TARGET_OUTPUTFILES_H
