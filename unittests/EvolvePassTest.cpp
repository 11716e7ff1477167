//===- EvolvePassTest.cpp - evo-evolve's result for drivers --------------------===//
//
// A pause of evo-evolve reaches the driver as a mark on the module, read by a pass
// instrumentation after the pass fails (no global state): a failing pass with the mark is a
// pause, one without it is an error, and a pass that succeeds is neither.
//
//===----------------------------------------------------------------------===//

#include "evo/Evolution/Passes.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "gtest/gtest.h"

using namespace mlir;

namespace {
/// Marks the module as evo-evolve does when it pauses (`mark`), then fails or succeeds.
struct EndsLikeEvolve : PassWrapper<EndsLikeEvolve, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(EndsLikeEvolve)
  EndsLikeEvolve(bool mark, bool fail) : mark(mark), fail(fail) {}
  EndsLikeEvolve(const EndsLikeEvolve &o) : PassWrapper(o), mark(o.mark), fail(o.fail) {}
  void runOnOperation() override {
    if (mark)
      getOperation()->setAttr(evo::kEvolvePausedAttrName,
                              Builder(&getContext()).getI64IntegerAttr(3));
    if (fail)
      signalPassFailure();
  }
  bool mark, fail;
};

/// Runs the pass under the observer; returns whether it saw a pause, and the pass's result.
std::pair<bool, bool> run(bool mark, bool fail) {
  MLIRContext ctx;
  OwningOpRef<ModuleOp> module = ModuleOp::create(UnknownLoc::get(&ctx));
  PassManager pm(&ctx);
  bool paused = false;
  pm.addInstrumentation(evo::createPausedObserver(paused));
  pm.addPass(std::make_unique<EndsLikeEvolve>(mark, fail));
  bool ok = succeeded(pm.run(*module));
  return {paused, ok};
}
} // namespace

TEST(PausedObserverTest, AMarkedFailureIsAPause) {
  auto [paused, ok] = run(/*mark=*/true, /*fail=*/true);
  EXPECT_FALSE(ok);
  EXPECT_TRUE(paused);
}

TEST(PausedObserverTest, AnUnmarkedFailureIsAnError) {
  auto [paused, ok] = run(/*mark=*/false, /*fail=*/true);
  EXPECT_FALSE(ok);
  EXPECT_FALSE(paused);
}

TEST(PausedObserverTest, ASuccessIsNoPauseEvenIfMarked) {
  auto [paused, ok] = run(/*mark=*/true, /*fail=*/false);
  EXPECT_TRUE(ok);
  EXPECT_FALSE(paused);
}
