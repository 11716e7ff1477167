//===- PtxasLogTest.cpp - parsing ptxas -v ----------------------------------===//

#include "evo/Target/PTXAssembler.h"
#include "gtest/gtest.h"

using namespace evo;

// The shape of `ptxas -arch=sm_90 -v` output of CUDA 13.
static const char *kLog = R"(ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'softmax_k0' for 'sm_90'
ptxas info    : Function properties for softmax_k0
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 30 registers, used 1 barriers, 32 bytes smem, 368 bytes cmem[0]
ptxas info    : Compiling entry function 'matmul_k0' for 'sm_90'
ptxas info    : Function properties for matmul_k0
    24 bytes stack frame, 16 bytes spill stores, 8 bytes spill loads
ptxas info    : Used 255 registers, used 1 barriers, 16384 bytes smem, 376 bytes cmem[0]
)";

TEST(PtxasLogTest, ReadsEveryKernelsResources) {
  llvm::StringMap<KernelResources> r = parsePtxasLog(kLog);
  ASSERT_EQ(r.size(), 2u);
  const KernelResources &s = r["softmax_k0"];
  EXPECT_EQ(s.registers, 30);
  EXPECT_EQ(s.barriers, 1);
  EXPECT_EQ(s.sharedMemory, 32);
  EXPECT_EQ(s.stackFrame, 0);
  const KernelResources &m = r["matmul_k0"];
  EXPECT_EQ(m.registers, 255);
  EXPECT_EQ(m.sharedMemory, 16384);
  EXPECT_EQ(m.stackFrame, 24);
  EXPECT_EQ(m.spillStores, 16);
  EXPECT_EQ(m.spillLoads, 8);
}

TEST(PtxasLogTest, KernelsWithoutSharedMemoryReportZero) {
  llvm::StringMap<KernelResources> r = parsePtxasLog(
      "ptxas info    : Compiling entry function 'k' for 'sm_90'\n"
      "ptxas info    : Function properties for k\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 8 registers, used 0 barriers, 360 bytes cmem[0]\n");
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r["k"].registers, 8);
  EXPECT_EQ(r["k"].sharedMemory, 0);
}

TEST(PtxasLogTest, NoiseIsIgnored) {
  EXPECT_TRUE(parsePtxasLog("").empty());
  EXPECT_TRUE(parsePtxasLog("ptxas info    : Used 8 registers\n").empty());
}

TEST(FindPtxasTest, AnExplicitPathMustExist) {
  llvm::Expected<std::optional<std::string>> r = findPtxas("/nonexistent/bin/ptxas");
  ASSERT_FALSE(static_cast<bool>(r));
  EXPECT_NE(llvm::toString(r.takeError()).find("does not exist"), std::string::npos);
}
