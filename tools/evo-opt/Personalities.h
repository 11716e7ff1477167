//===- Personalities.h - the tools evo-opt can be ----------------*- C++ -*-===//
//
// evo-opt is a multi-call binary: the basename it is invoked under picks the tool, so one
// self-contained (static) executable brings everything a GPU host without LLVM needs to run the
// lit suite (docs/runtime.md):
//
//   evo-opt (any other name)   mlir-opt with every upstream dialect and pass plus evo's
//   evo-runner, mlir-runner    upstream's mlir-runner (JIT-compile the LLVM dialect and run it)
//   FileCheck                  LLVM's FileCheck
//
//===----------------------------------------------------------------------===//

#ifndef EVO_TOOLS_EVO_OPT_PERSONALITIES_H
#define EVO_TOOLS_EVO_OPT_PERSONALITIES_H

namespace evo {

/// mlir-runner: options as upstream's (-e, --entry-point-result, --shared-libs, -O3, ...).
int runnerMain(int argc, char **argv);

/// FileCheck: 0 when the input matches, 1 when it does not, 2 for usage and file errors.
int fileCheckMain(int argc, char **argv);

} // namespace evo

#endif
