//===- ScratchDir.cpp - Temporary directories the unit tests remove ------------===//

#include "ScratchDir.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "gtest/gtest.h"

#include <cstdio>
#include <ftw.h>
#include <mutex>
#include <vector>

namespace {

std::mutex &registryMutex() {
  static std::mutex m;
  return m;
}

std::vector<std::string> &registry() {
  static std::vector<std::string> dirs;
  return dirs;
}

class ScratchCleanup : public ::testing::Environment {
public:
  void TearDown() override {
    std::lock_guard<std::mutex> lock(registryMutex());
    for (const std::string &d : registry())
      evo::test::removeTree(d);
    registry().clear();
  }
};

[[maybe_unused]] ::testing::Environment *const kCleanup =
    ::testing::AddGlobalTestEnvironment(new ScratchCleanup);

} // namespace

namespace evo::test {

std::string scratchDir(const char *prefix) {
  llvm::SmallString<128> dir;
  std::error_code ec = llvm::sys::fs::createUniqueDirectory(prefix, dir);
  EXPECT_FALSE(ec) << "cannot create a scratch directory: " << ec.message();
  std::lock_guard<std::mutex> lock(registryMutex());
  registry().push_back(dir.str().str());
  return dir.str().str();
}

void removeTree(const std::string &path) {
  // Depth first, links not followed: ::remove unlinks any non-directory (FIFOs included)
  // and removes emptied directories.
  ::nftw(
      path.c_str(),
      [](const char *p, const struct stat *, int, struct FTW *) {
        std::remove(p);
        return 0;
      },
      16, FTW_DEPTH | FTW_PHYS);
}

} // namespace evo::test
