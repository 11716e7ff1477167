//===- UntrustedKernelTest.cpp - untrusted kernels end as compile errors --------===//
//
// An LLM-written kernel (a reply, or one read back from the run store) is untrusted text: text
// nested deeper than the parser's recursion can take must be refused before parsing, as a
// compile error for the repair prompt, never a stack overflow of evo-opt.
//
//===----------------------------------------------------------------------===//

#include "EvolutionFixture.h"
#include "evo/Dialect/Evo/IR/InputChecks.h"
#include "evo/Evolution/Engine.h"
#include "evo/Evolution/LLMMutator.h"
#include "gtest/gtest.h"
#include <string>

using namespace mlir;
using namespace evo;

using evo::unittest::kElementwise;
using evo::unittest::registry;

namespace {
/// A gpu.module whose kernel carries an attribute nested `depth` levels deep ([[[...]]]).
std::string nestedKernel(unsigned depth) {
  return "gpu.module @m {\n"
         "  gpu.func @relu_t0_k0(%x: memref<64x256xf32>, %y: memref<64x256xf32>) kernel "
         "attributes {deep = " +
         std::string(depth, '[') + std::string(depth, ']') +
         "} {\n    gpu.return\n  }\n}\n";
}

CompiledVariant parentVariant() {
  CompiledVariant parent =
      compileVariant(registry(), kElementwise, TaskFamily::Elementwise, Genome(), PTXOptions(), "");
  EXPECT_TRUE(parent.ok) << parent.diagnostics;
  return parent;
}
} // namespace

// 200000 levels would overflow any thread's stack in MLIR's parser (it recursed once per level);
// the reply is refused before parsing, naming the limit and where the text passes it.
TEST(UntrustedKernelTest, DeeplyNestedReplyIsACompileErrorNotAStackOverflow) {
  CompiledVariant parent = parentVariant();
  ASSERT_TRUE(parent.ok);
  CompiledVariant v = compileLLMVariant(registry(), nestedKernel(200000),
                                        VariantInfo::of(parent), PTXOptions(), "");
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.diagnostics.find("nests brackets deeper than 1000 levels (line 2, column"),
            std::string::npos)
      << v.diagnostics;
  EXPECT_TRUE(v.ptx.empty());

  // Just under the limit the check lets it through: it parses, and fails only on the contract
  // (this kernel does not write its output), not on the nesting.
  CompiledVariant shallow = compileLLMVariant(registry(), nestedKernel(kDefaultMaxNesting - 10),
                                              VariantInfo::of(parent), PTXOptions(), "");
  EXPECT_EQ(shallow.diagnostics.find("nests brackets"), std::string::npos)
      << shallow.diagnostics;
}

// A stored kernel read back (resume, the final re-check) goes through the same check.
TEST(UntrustedKernelTest, DeeplyNestedStoredKernelIsRefusedBeforeParsing) {
  CompiledVariant v = compileGpuModule(registry(), nestedKernel(200000), PTXOptions(), "");
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.diagnostics.find("nest brackets deeper than 1000 levels"), std::string::npos)
      << v.diagnostics;
}
