//===- ChipsTest.cpp - the chips evo-opt compiles for ---------------------===//
//
// evo/Target/Chips.h asks the NVPTX backend which chips it knows and which PTX version each
// needs, so that chip=, chips= and features= are refused with a message instead of an LLVM ERROR;
// evo/Runtime/ChipRules.h says where the result runs.
//
//===----------------------------------------------------------------------===//

#include "evo/Runtime/ChipRules.h"
#include "evo/Target/Chips.h"
#include "llvm/ADT/StringExtras.h"
#include <gtest/gtest.h>

namespace {

std::string errorOf(llvm::Error e) { return e ? llvm::toString(std::move(e)) : ""; }

TEST(Chips, MinimumPtxVersionsComeFromNvptx) {
  // What LLVM 22's NVPTX writes without a +ptx feature (llc -mcpu=... on an empty module).
  const std::pair<const char *, unsigned> expected[] = {
      {"sm_75", 63}, {"sm_80", 70}, {"sm_86", 71}, {"sm_89", 78},  {"sm_90", 78},
      {"sm_90a", 80}, {"sm_100", 86}, {"sm_100a", 86}, {"sm_120", 87}, {"sm_121", 88}};
  for (auto [chip, version] : expected) {
    llvm::Expected<unsigned> v = evo::minPtxVersion(chip);
    ASSERT_TRUE(bool(v)) << chip << ": " << llvm::toString(v.takeError());
    EXPECT_EQ(*v, version) << chip;
  }
  llvm::Expected<unsigned> bad = evo::minPtxVersion("sm_999");
  ASSERT_FALSE(bool(bad));
  EXPECT_EQ(llvm::toString(bad.takeError()), "NVPTX does not know chip 'sm_999'");
}

TEST(Chips, CheckChip) {
  EXPECT_EQ(errorOf(evo::checkChip("sm_90", "+ptx80")), "");
  EXPECT_EQ(errorOf(evo::checkChip("sm_90a", "+ptx80")), "");
  EXPECT_EQ(errorOf(evo::checkChip("sm_120", "+ptx87")), "");
  EXPECT_EQ(errorOf(evo::checkChip("sm_120", "")), ""); // NVPTX picks the chip's minimum
  EXPECT_EQ(errorOf(evo::checkChip("sm_120", "+ptx80")),
            "chip sm_120 needs PTX ISA 8.7 or newer, but features='+ptx80' asks for 8.0: pass "
            "features=+ptx87 (a driver must support that PTX version to JIT it)");
  // The last +ptx feature is the version.
  EXPECT_NE(errorOf(evo::checkChip("sm_90a", "+ptx80,+ptx78")), "");
  EXPECT_EQ(errorOf(evo::checkChip("sm_90a", "+ptx78,+ptx80")), "");
  for (const char *bad : {"sm_999", "gfx90a", "", "sm_90x", "SM_90", "compute_90"})
    EXPECT_NE(errorOf(evo::checkChip(bad, "+ptx80")).find("is not one the NVPTX backend"),
              std::string::npos)
        << bad;
  EXPECT_NE(errorOf(evo::checkChip("sm_90", "ptx80")).find("is not an NVPTX feature"),
            std::string::npos);
  EXPECT_NE(errorOf(evo::checkChip("sm_90", "+ptx80,+nope")).find("'+nope' is not an NVPTX"),
            std::string::npos);
}

TEST(Chips, ResolveChips) {
  llvm::Expected<evo::ChipTargets> t = evo::resolveChips({"sm_90a", "sm_120", "sm_80"}, "+ptx80");
  ASSERT_TRUE(bool(t)) << llvm::toString(t.takeError());
  EXPECT_EQ(t->ptxChip, "sm_80");
  EXPECT_EQ(t->chips, (llvm::SmallVector<std::string>{"sm_90a", "sm_120", "sm_80"}));
  // For one number the generic chip is the lower: its PTX assembles for the `a` one.
  t = evo::resolveChips({"sm_90a", "sm_90"}, "+ptx80");
  ASSERT_TRUE(bool(t));
  EXPECT_EQ(t->ptxChip, "sm_90");
  // The PTX version is checked against the PTX's chip only.
  t = evo::resolveChips({"sm_120"}, "+ptx80");
  ASSERT_FALSE(bool(t));
  EXPECT_NE(llvm::toString(t.takeError()).find("needs PTX ISA 8.7"), std::string::npos);
  t = evo::resolveChips({"sm_100f", "sm_103a"}, "");
  ASSERT_TRUE(bool(t)) << llvm::toString(t.takeError());
  EXPECT_EQ(t->ptxChip, "sm_100f");
  for (std::vector<std::string> bad : std::vector<std::vector<std::string>>{
           {"sm_90a", "sm_100a"}, {"sm_100f", "sm_120"}, {"sm_80", "sm_80"}, {}, {"sm_80", "x"}}) {
    t = evo::resolveChips(bad, "+ptx80");
    EXPECT_FALSE(bool(t)) << llvm::join(bad, ",");
    if (!t)
      llvm::consumeError(t.takeError());
  }
}

TEST(Chips, WhereCodeRuns) {
  using evo::chips::whyNotRunnable;
  EXPECT_EQ(whyNotRunnable("sm_90", 9, 0, true), "");
  EXPECT_EQ(whyNotRunnable("sm_90a", 9, 0, true), "");
  EXPECT_EQ(whyNotRunnable("sm_80", 8, 6, true), "");
  EXPECT_EQ(whyNotRunnable("sm_80", 9, 0, false), ""); // PTX runs on newer GPUs
  EXPECT_EQ(whyNotRunnable("sm_80", 9, 0, true), "a cubin for sm_80 runs on sm_80 to sm_89 only");
  EXPECT_EQ(whyNotRunnable("sm_86", 8, 0, true), "a cubin for sm_86 runs on sm_86 to sm_89 only");
  EXPECT_EQ(whyNotRunnable("sm_90a", 10, 0, false), "PTX for sm_90a runs on sm_90 only");
  EXPECT_EQ(whyNotRunnable("sm_90a", 10, 0, true), "a cubin for sm_90a runs on sm_90 only");
  EXPECT_EQ(whyNotRunnable("sm_100", 9, 0, false), "PTX for sm_100 needs sm_100 or newer");
  EXPECT_EQ(whyNotRunnable("sm_100f", 10, 3, false), "");
  EXPECT_EQ(whyNotRunnable("sm_100f", 12, 0, false),
            "PTX for sm_100f runs on sm_100 to sm_109 only");
  EXPECT_EQ(whyNotRunnable("x", 9, 0, false), "'x' is not a chip name (sm_XY, sm_XYa or sm_XYf)");
}

} // namespace
