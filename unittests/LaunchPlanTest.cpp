//===- LaunchPlanTest.cpp - the plan attribute and the host function ---------===//

#include "evo/Conversion/LaunchPlan.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "gtest/gtest.h"

using namespace mlir;
using namespace evo;

namespace {
class LaunchPlanTest : public ::testing::Test {
protected:
  LaunchPlanTest() : handler(&ctx, [this](Diagnostic &d) {
                       messages.push_back(d.str());
                       return success();
                     }) {
    ctx.loadDialect<func::FuncDialect, gpu::GPUDialect, arith::ArithDialect,
                    memref::MemRefDialect>();
  }

  LaunchPlan samplePlan() {
    Builder b(&ctx);
    LaunchPlan plan;
    plan.funcName = "f";
    plan.source = "func.func @f() {}";
    auto t = MemRefType::get({64, 32}, b.getF32Type());
    plan.buffers = {{"arg0", BufferRole::Input, t},
                    {"result0", BufferRole::Output, t},
                    {"tmp0", BufferRole::Scratch, MemRefType::get({64}, b.getF16Type()), true}};
    TaskDesc task;
    task.name = "f_t0";
    task.family = TaskFamily::Reduction;
    task.source = "func.func @f_t0() {}";
    task.knobs = b.getDictionaryAttr({b.getNamedAttr("block_size", b.getI64IntegerAttr(64))});
    task.buffers = {0, 1, 2};
    plan.tasks.push_back(task);
    KernelLaunch launch;
    launch.kernel = "f_k0";
    launch.grid = {4, 2, 1};
    launch.block = {64, 1, 1};
    launch.dynamicSharedMemory = 1024;
    launch.args = {0, 2, 1};
    plan.launches.push_back(launch);
    return plan;
  }

  InFlightDiagnostic err() { return emitError(UnknownLoc::get(&ctx)); }

  MLIRContext ctx;
  ScopedDiagnosticHandler handler;
  std::vector<std::string> messages;
};
} // namespace

TEST_F(LaunchPlanTest, AttributeRoundTrips) {
  LaunchPlan plan = samplePlan();
  FailureOr<LaunchPlan> back = LaunchPlan::fromAttr(plan.toAttr(&ctx), [&] { return err(); });
  ASSERT_TRUE(succeeded(back));
  EXPECT_EQ(back->funcName, "f");
  ASSERT_EQ(back->buffers.size(), 3u);
  EXPECT_EQ(back->buffers[2].role, BufferRole::Scratch);
  EXPECT_TRUE(back->buffers[2].zeroInit);
  EXPECT_FALSE(back->buffers[0].zeroInit);
  EXPECT_EQ(back->buffers[2].sizeInBytes(), 128);
  ASSERT_EQ(back->tasks.size(), 1u);
  EXPECT_EQ(back->tasks[0].family, TaskFamily::Reduction);
  EXPECT_EQ(back->tasks[0].buffers, (SmallVector<unsigned>{0, 1, 2}));
  ASSERT_EQ(back->launches.size(), 1u);
  EXPECT_EQ(back->launches[0].grid, (std::array<int64_t, 3>{4, 2, 1}));
  EXPECT_EQ(back->launches[0].dynamicSharedMemory, 1024);
  EXPECT_EQ(back->launches[0].args, (SmallVector<unsigned>{0, 2, 1}));
  EXPECT_TRUE(messages.empty());
}

TEST_F(LaunchPlanTest, CorruptPlansAreRejectedWithAReason) {
  LaunchPlan plan = samplePlan();
  plan.launches[0].args = {0, 7};
  EXPECT_TRUE(failed(LaunchPlan::fromAttr(plan.toAttr(&ctx), [&] { return err(); })));
  ASSERT_FALSE(messages.empty());
  EXPECT_NE(messages.back().find("index 7 is out of range"), std::string::npos);

  plan = samplePlan();
  plan.launches[0].grid = {0, 1, 1};
  EXPECT_TRUE(failed(LaunchPlan::fromAttr(plan.toAttr(&ctx), [&] { return err(); })));
  EXPECT_NE(messages.back().find("'grid' must be 3 positive sizes"), std::string::npos);

  plan = samplePlan();
  plan.launches[0].task = 3;
  EXPECT_TRUE(failed(LaunchPlan::fromAttr(plan.toAttr(&ctx), [&] { return err(); })));
  EXPECT_NE(messages.back().find("unknown task 3"), std::string::npos);

  Builder b(&ctx);
  messages.clear();
  EXPECT_TRUE(failed(LaunchPlan::fromAttr(b.getDictionaryAttr({}), [&] { return err(); })));
  // One diagnostic per missing field.
  EXPECT_EQ(messages.size(), 5u);
  EXPECT_NE(messages.front().find("needs a valid 'func' field"), std::string::npos);
}

TEST_F(LaunchPlanTest, HostFunctionAllocatesScratchAndLaunchesInOrder) {
  LaunchPlan plan = samplePlan();
  OpBuilder b(&ctx);
  OwningOpRef<ModuleOp> module = ModuleOp::create(b.getUnknownLoc());
  b.setInsertionPointToEnd(module->getBody());
  auto gm = gpu::GPUModuleOp::create(b, b.getUnknownLoc(), "f_kernels");
  b.setInsertionPointToEnd(gm.getBody());
  SmallVector<Type> params = {plan.buffers[0].type, plan.buffers[2].type, plan.buffers[1].type};
  auto kernel = gpu::GPUFuncOp::create(b, b.getUnknownLoc(), "f_k0", b.getFunctionType(params, {}));
  kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  b.setInsertionPointToStart(&kernel.getBody().front());
  gpu::ReturnOp::create(b, b.getUnknownLoc());
  EXPECT_TRUE(succeeded(plan.verifyAgainst(gm)));
  // A scratch buffer that no launch uses (a leftover) is rejected.
  {
    LaunchPlan stale = plan;
    stale.buffers.push_back({"tmp9", BufferRole::Scratch, plan.buffers[2].type});
    EXPECT_TRUE(failed(stale.verifyAgainst(gm)));
    ASSERT_FALSE(messages.empty());
    EXPECT_NE(messages.back().find("scratch buffer 'tmp9' is not passed to any launch"),
              std::string::npos);
  }

  b.setInsertionPointToEnd(module->getBody());
  func::FuncOp host = buildHostFunction(b, b.getUnknownLoc(), plan, gm);
  // Scratch buffers are not arguments.
  EXPECT_EQ(host.getNumArguments(), 2u);
  EXPECT_EQ(host.getNumResults(), 0u);
  SmallVector<Operation *> ops;
  for (Operation &op : host.getBody().front())
    if (!isa<arith::ConstantOp>(op))
      ops.push_back(&op);
  // wait, alloc, memset (zero_init), wait | launch | wait, dealloc, wait | return: the async
  // forms upstream's gpu-to-llvm lowers.
  ASSERT_EQ(ops.size(), 9u);
  EXPECT_TRUE(isa<gpu::WaitOp>(ops[0]));
  auto alloc = dyn_cast<gpu::AllocOp>(ops[1]);
  ASSERT_TRUE(alloc);
  EXPECT_TRUE(alloc.getAsyncToken());
  EXPECT_TRUE(isa<gpu::MemsetOp>(ops[2]));
  EXPECT_TRUE(isa<gpu::WaitOp>(ops[3]));
  auto launch = dyn_cast<gpu::LaunchFuncOp>(ops[4]);
  ASSERT_TRUE(launch);
  EXPECT_EQ(launch.getKernelOperands()[1], alloc.getMemref());
  EXPECT_EQ(launch.getKernelOperands()[2], host.getArgument(1));
  EXPECT_TRUE(isa<gpu::WaitOp>(ops[5]));
  EXPECT_TRUE(isa<gpu::DeallocOp>(ops[6]));
  EXPECT_TRUE(isa<gpu::WaitOp>(ops[7]));
  EXPECT_TRUE(isa<func::ReturnOp>(ops[8]));
}

TEST_F(LaunchPlanTest, PlansThatDoNotMatchTheirKernelsAreRejected) {
  LaunchPlan plan = samplePlan();
  OpBuilder b(&ctx);
  OwningOpRef<ModuleOp> module = ModuleOp::create(b.getUnknownLoc());
  b.setInsertionPointToEnd(module->getBody());
  auto gm = gpu::GPUModuleOp::create(b, b.getUnknownLoc(), "f_kernels");
  EXPECT_TRUE(failed(plan.verifyAgainst(gm)));
  EXPECT_NE(messages.back().find("which is not a kernel of this gpu.module"), std::string::npos);

  b.setInsertionPointToEnd(gm.getBody());
  SmallVector<Type> wrong = {plan.buffers[0].type, plan.buffers[0].type, plan.buffers[1].type};
  auto kernel = gpu::GPUFuncOp::create(b, b.getUnknownLoc(), "f_k0", b.getFunctionType(wrong, {}));
  kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  EXPECT_TRUE(failed(plan.verifyAgainst(gm)));
  EXPECT_NE(messages.back().find("parameter 1 has type"), std::string::npos);
}
