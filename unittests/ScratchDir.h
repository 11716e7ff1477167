//===- ScratchDir.h - Temporary directories the unit tests remove -------*- C++ -*-===//
//
// Tests that plant FIFOs, symlinks and mailboxes need directories of their own. Every
// directory made here is removed when the test program's environment is torn down,
// with whatever is in it: llvm::sys::fs::remove_directories leaves FIFOs and sockets
// behind (fs::remove refuses anything but files, directories and links), so /tmp
// filled up with one directory per run.
//
//===------------------------------------------------------------------------------===//

#ifndef EVO_UNITTESTS_SCRATCHDIR_H
#define EVO_UNITTESTS_SCRATCHDIR_H

#include <string>

namespace evo::test {

/// Creates a fresh directory under the system temporary directory, named after
/// `prefix`, and registers it for removal. Fails the current test if it cannot.
std::string scratchDir(const char *prefix);

/// Removes `path` and everything below it without following links.
void removeTree(const std::string &path);

} // namespace evo::test

#endif // EVO_UNITTESTS_SCRATCHDIR_H
