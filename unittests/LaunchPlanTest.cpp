//===- LaunchPlanTest.cpp - the plan attribute and the host function ---------===//

#include "evo/Conversion/LowerToGPU.h"
#include "evo/Conversion/ScalarArguments.h"
#include "evo/Dialect/Evo/IR/InputChecks.h"
#include "evo/Dialect/Evo/IR/LaunchPlan.h"
#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Dialect/SparseTensor/IR/SparseTensor.h"
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
                    memref::MemRefDialect, EvoDialect>();
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
    ScheduleKnobs knobs;
    knobs.blockSize = 64;
    task.knobs = knobs.toAttr(&ctx, TaskFamily::Reduction);
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

  /// The plan through its checked #evo.plan and back.
  FailureOr<LaunchPlan> roundTrip(const LaunchPlan &plan) {
    PlanAttr attr = plan.toAttr(&ctx, [&] { return err(); });
    if (!attr)
      return failure();
    return LaunchPlan::fromAttr(attr);
  }

  MLIRContext ctx;
  ScopedDiagnosticHandler handler;
  std::vector<std::string> messages;
};
} // namespace

TEST_F(LaunchPlanTest, AttributeRoundTrips) {
  LaunchPlan plan = samplePlan();
  FailureOr<LaunchPlan> back = roundTrip(plan);
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
  EXPECT_TRUE(failed(roundTrip(plan)));
  ASSERT_FALSE(messages.empty());
  EXPECT_NE(messages.back().find("index 7 is out of range"), std::string::npos);

  plan = samplePlan();
  plan.launches[0].grid = {0, 1, 1};
  EXPECT_TRUE(failed(roundTrip(plan)));
  EXPECT_NE(messages.back().find("'grid' must be 3 positive sizes"), std::string::npos);

  plan = samplePlan();
  plan.launches[0].task = 3;
  EXPECT_TRUE(failed(roundTrip(plan)));
  EXPECT_NE(messages.back().find("unknown task 3"), std::string::npos);

  // A plan missing its fields does not parse: one diagnostic naming the first missing key.
  messages.clear();
  EXPECT_FALSE(parseAttribute("#evo.plan<func = \"f\">", &ctx));
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages.front(), "#evo.plan: missing key 'source'");
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

  // The same buffer to two parameters of one launch (an input read through the non-coherent
  // path while the other parameter writes it): refused, even where the types match.
  kernel.erase();
  SmallVector<Type> right = {plan.buffers[0].type, plan.buffers[2].type, plan.buffers[1].type};
  auto good = gpu::GPUFuncOp::create(b, b.getUnknownLoc(), "f_k0", b.getFunctionType(right, {}));
  good->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  EXPECT_TRUE(succeeded(plan.verifyAgainst(gm)));
  plan.launches[0].args = {0, 2, 0};
  EXPECT_TRUE(failed(plan.verifyAgainst(gm)));
  EXPECT_NE(messages.back().find("passes buffer 'arg0' to two of its parameters"), std::string::npos);
}

TEST_F(LaunchPlanTest, PlanNamesThatWouldBePathsOrBadSymbolsAreRejected) {
  // Each plan name ends up as a file name, a PTX symbol or a run-store directory.
  auto rejects = [&](LaunchPlan plan, StringRef what) {
    messages.clear();
    EXPECT_TRUE(failed(roundTrip(plan)));
    ASSERT_FALSE(messages.empty()) << what.str();
    EXPECT_NE(messages.back().find(what), std::string::npos) << messages.back();
    EXPECT_NE(messages.back().find("cannot be a PTX symbol or a file name"), std::string::npos);
  };
  LaunchPlan plan = samplePlan();
  plan.funcName = "../../../x";
  rejects(plan, "function name \"../../../x\"");
  plan = samplePlan();
  plan.tasks[0].name = "../t";
  rejects(plan, "task name \"../t\"");
  plan = samplePlan();
  plan.launches[0].kernel = "a-b";
  rejects(plan, "kernel name \"a-b\"");
  plan = samplePlan();
  plan.buffers[0].name = "x y";
  rejects(plan, "buffer name \"x y\"");
  plan = samplePlan();
  plan.funcName = std::string(kMaxFunctionNameLength + 1, 'f');
  rejects(plan, "function name");
}

TEST_F(LaunchPlanTest, PlanSizesBeyondCudaOrIndexLimitsAreRejected) {
  auto rejects = [&](LaunchPlan plan, StringRef what) {
    messages.clear();
    EXPECT_TRUE(failed(roundTrip(plan)));
    ASSERT_FALSE(messages.empty()) << what.str();
    EXPECT_NE(messages.back().find(what), std::string::npos) << messages.back();
  };
  Builder b(&ctx);
  LaunchPlan plan = samplePlan();
  plan.launches[0].grid = {int64_t(1) << 31, 1, 1};
  rejects(plan, "grid larger than 2^31-1 x 65535 x 65535");
  plan = samplePlan();
  plan.launches[0].grid = {1, 65536, 1};
  rejects(plan, "grid larger");
  plan = samplePlan();
  plan.launches[0].block = {1024, 2, 1};
  rejects(plan, "block larger than 1024 threads");
  plan = samplePlan();
  plan.launches[0].block = {1, 1, 65};
  rejects(plan, "block larger than 1024 threads");
  plan = samplePlan();
  plan.launches[0].dynamicSharedMemory = -4;
  rejects(plan, "dynamic shared memory outside [0, 227 KiB]");
  plan = samplePlan();
  plan.launches[0].dynamicSharedMemory = kMaxDynamicSharedMemory + 1;
  rejects(plan, "dynamic shared memory outside [0, 227 KiB]");
  plan = samplePlan();
  plan.buffers[0].type = MemRefType::get({int64_t(1) << 62, 4}, b.getF32Type());
  rejects(plan, "supports buffers of at most 1 TiB");
  plan = samplePlan();
  plan.buffers[0].type = MemRefType::get({0, 4}, b.getF32Type());
  rejects(plan, "needs every dimension to be at least 1");

  // The limits themselves are accepted.
  plan = samplePlan();
  plan.launches[0].grid = {kMaxGridX, kMaxGridYZ, kMaxGridYZ};
  plan.launches[0].block = {16, 1, 64};
  plan.launches[0].dynamicSharedMemory = kMaxDynamicSharedMemory;
  messages.clear();
  EXPECT_TRUE(succeeded(roundTrip(plan)));
  EXPECT_TRUE(messages.empty());
}

TEST(InputChecksTest, SymbolNamesArePlainIdentifiers) {
  for (StringRef ok : {"f", "_f", "relu_k0", "F$1", "a1_b2"})
    EXPECT_TRUE(isValidSymbolName(ok)) << ok.str();
  for (StringRef bad : {"", "1f", "$f", "a-b", "a/b", "../x", ".", "a.b", "a b", "a\nb", "\xff",
                        "caf\xc3\xa9"})
    EXPECT_FALSE(isValidSymbolName(bad)) << bad.str();
  EXPECT_FALSE(isValidSymbolName(StringRef("a\0b", 3)));
  EXPECT_TRUE(isValidSymbolName(std::string(kMaxSymbolLength, 'a')));
  EXPECT_FALSE(isValidSymbolName(std::string(kMaxSymbolLength + 1, 'a')));
  EXPECT_FALSE(isValidSymbolName("abcd", 3));
}

TEST(InputChecksTest, QuotedNamesAreEscapedAndShortened) {
  EXPECT_EQ(quoteName("a-b"), "\"a-b\"");
  EXPECT_EQ(quoteName(StringRef("\xff\x1b[2J\"\\\n", 8)), "\"\\FF\\1B[2J\\\"\\\\\\0A\"");
  std::string longName(100, 'x');
  std::string q = quoteName(longName);
  EXPECT_EQ(q, "\"" + std::string(64, 'x') + "\"... (100 bytes)");
}

TEST(InputChecksTest, BufferTypesMustBeDenseStaticPositiveAndBounded) {
  MLIRContext ctx;
  ctx.loadDialect<sparse_tensor::SparseTensorDialect>();
  std::vector<std::string> messages;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    messages.push_back(d.str());
    return success();
  });
  Builder b(&ctx);
  auto err = [&] { return emitError(UnknownLoc::get(&ctx)); };
  auto check = [&](Type t) {
    messages.clear();
    return succeeded(checkBufferType(t, err));
  };
  Type f32 = b.getF32Type();
  EXPECT_TRUE(check(RankedTensorType::get({8, 4}, f32)));
  EXPECT_TRUE(check(MemRefType::get({}, f32)));
  EXPECT_TRUE(check(MemRefType::get({kMaxBufferBytes / 4}, f32)));
  EXPECT_FALSE(check(MemRefType::get({kMaxBufferBytes / 4 + 1}, f32)));
  EXPECT_NE(messages.back().find("at most 1 TiB"), std::string::npos);
  EXPECT_FALSE(check(RankedTensorType::get({0, 4}, f32)));
  EXPECT_NE(messages.back().find("at least 1"), std::string::npos);
  EXPECT_FALSE(check(RankedTensorType::get({ShapedType::kDynamic, 4}, f32)));
  EXPECT_NE(messages.back().find("needs static shapes"), std::string::npos);
  // Products that wrap int64 (2^62 * 4 elements, and the byte size of 2^61 * 2 f32).
  EXPECT_FALSE(check(RankedTensorType::get({int64_t(1) << 62, 4}, f32)));
  EXPECT_FALSE(check(RankedTensorType::get({int64_t(1) << 61, 2}, f32)));
  EXPECT_FALSE(check(RankedTensorType::get({INT64_MAX, 2}, f32)));
  EXPECT_FALSE(check(UnrankedTensorType::get(f32)));
  EXPECT_FALSE(check(RankedTensorType::get({4}, ComplexType::get(f32))));
  EXPECT_FALSE(check(RankedTensorType::get({4}, f32, b.getStringAttr("any encoding"))));
  EXPECT_NE(messages.back().find("does not support the tensor encoding"), std::string::npos);
  Attribute sparse = parseAttribute(
      "#sparse_tensor.encoding<{map = (d0, d1) -> (d0 : dense, d1 : compressed)}>", &ctx);
  ASSERT_TRUE(sparse);
  EXPECT_FALSE(check(RankedTensorType::get({8, 8}, f32, sparse)));
  EXPECT_NE(messages.back().find("only dense tensors"), std::string::npos);
}

TEST(InputChecksTest, ProductsDetectOverflow) {
  EXPECT_EQ(checkedProduct({}), 1);
  EXPECT_EQ(checkedProduct({3, 5, 7}), 105);
  EXPECT_EQ(checkedProduct({int64_t(1) << 31, int64_t(1) << 31}), int64_t(1) << 62);
  EXPECT_EQ(checkedProduct({int64_t(1) << 32, int64_t(1) << 32}), std::nullopt);
  EXPECT_EQ(checkedProduct({INT64_MAX, 2}), std::nullopt);
  EXPECT_EQ(checkedProduct({4, -1}), std::nullopt);
  EXPECT_EQ(checkedProduct({0, INT64_MAX}), 0);
}

TEST(InputChecksTest, NestingCountsBracketsOutsideStringsAndComments) {
  EXPECT_EQ(findExcessiveNesting("func.func @f() { return }", 2), std::nullopt);
  EXPECT_EQ(findExcessiveNesting("{{{", 2), 2u);
  EXPECT_EQ(findExcessiveNesting("{}{}{}{}", 1), std::nullopt);
  // Every kind of bracket counts, together.
  EXPECT_EQ(findExcessiveNesting("tensor<[(x)]>", 2), 8u);
  EXPECT_EQ(findExcessiveNesting("tensor<[(x)]>", 3), std::nullopt);
  // Brackets inside strings (with escaped quotes) and comments do not.
  EXPECT_EQ(findExcessiveNesting("\"{{{{\\\"{{\" // {{{{{\n{", 1), std::nullopt);
  EXPECT_EQ(findExcessiveNesting("\"{\"{{", 1), 4u);
  // A string ends at a newline (the lexer's rule), so it cannot hide the rest of the file.
  EXPECT_EQ(findExcessiveNesting("\"abc\n{{", 1), 6u);
  // `->` and `>=` are not brackets: they do not close what `<` or `(` opened.
  EXPECT_EQ(findExcessiveNesting("(d0) -> (d0 >= 0)", 1), std::nullopt);
  EXPECT_EQ(findExcessiveNesting("<(x -> y >= z)>", 2), std::nullopt);
  EXPECT_EQ(findExcessiveNesting("<(x -> y >= z {)>", 2), 14u);
  // Stray closers never make the depth negative.
  EXPECT_EQ(findExcessiveNesting("}}}}{{", 1), 5u);
  std::string deep = std::string(100000, '{') + std::string(100000, '}');
  EXPECT_EQ(findExcessiveNesting(deep, kDefaultMaxNesting), size_t(kDefaultMaxNesting));
}

//===----------------------------------------------------------------------===//
// Tensor maps
//===----------------------------------------------------------------------===//

namespace {
/// A plan whose kernel reads an f16 input through a tensor map (buffer 2).
LaunchPlan tensorMapPlan(MLIRContext &ctx) {
  Builder b(&ctx);
  LaunchPlan plan;
  plan.funcName = "g";
  plan.source = "func.func @g() {}";
  plan.buffers = {{"arg0", BufferRole::Input, MemRefType::get({256, 512}, b.getF16Type())},
                  {"result0", BufferRole::Output, MemRefType::get({256}, b.getF32Type())}};
  plan.buffers.push_back(tensorMapBuffer(&ctx, "tmap0", {0, {512, 256}, {1024}, {64, 128}, 128}));
  TaskDesc task;
  task.name = "g_t0";
  task.family = TaskFamily::Matmul;
  task.source = "func.func @g_t0() {}";
  task.knobs = ScheduleKnobs().toAttr(&ctx, TaskFamily::Matmul);
  task.buffers = {0, 1, 2};
  plan.tasks.push_back(task);
  KernelLaunch launch;
  launch.kernel = "g_k0";
  launch.args = {2, 0, 1};
  plan.launches.push_back(launch);
  return plan;
}
} // namespace

TEST_F(LaunchPlanTest, TensorMapsRoundTripThroughTheAttribute) {
  LaunchPlan plan = tensorMapPlan(ctx);
  FailureOr<LaunchPlan> back = roundTrip(plan);
  ASSERT_TRUE(succeeded(back)) << (messages.empty() ? "" : messages.back());
  ASSERT_EQ(back->buffers.size(), 3u);
  const BufferDesc &m = back->buffers[2];
  EXPECT_EQ(m.role, BufferRole::TensorMap);
  EXPECT_EQ(m.type, tensorMapBufferType(&ctx));
  EXPECT_EQ(m.sizeInBytes(), 128);
  ASSERT_TRUE(m.tensorMap);
  EXPECT_EQ(m.tensorMap->source, 0u);
  EXPECT_EQ(m.tensorMap->dims, (SmallVector<int64_t, 5>{512, 256}));
  EXPECT_EQ(m.tensorMap->strides, (SmallVector<int64_t, 5>{1024}));
  EXPECT_EQ(m.tensorMap->box, (SmallVector<int64_t, 5>{64, 128}));
  EXPECT_EQ(m.tensorMap->swizzle, 128);
  EXPECT_FALSE(back->buffers[0].tensorMap);
  // The printed attribute parses back to the same attribute.
  PlanAttr attr = plan.toAttr(&ctx);
  std::string text;
  llvm::raw_string_ostream os(text);
  os << Attribute(attr);
  EXPECT_EQ(parseAttribute(text, &ctx), Attribute(attr)) << text;
}

TEST_F(LaunchPlanTest, HostileTensorMapsAreRejectedWithAReason) {
  auto rejects = [&](LaunchPlan plan, StringRef what) {
    messages.clear();
    EXPECT_TRUE(failed(roundTrip(plan))) << what.str();
    ASSERT_FALSE(messages.empty()) << what.str();
    EXPECT_NE(messages.back().find(what), std::string::npos) << messages.back();
  };
  LaunchPlan plan = tensorMapPlan(ctx);
  plan.buffers[2].tensorMap->dims = {512, 257}; // one row past the source
  rejects(plan, "addresses bytes up to 263168 of its source, which has 262144");
  plan = tensorMapPlan(ctx);
  plan.buffers[2].tensorMap->dims = {512, 4294967296, 4294967296};
  plan.buffers[2].tensorMap->strides = {1024, (int64_t(1) << 40) - 16};
  plan.buffers[2].tensorMap->box = {64, 1, 1};
  rejects(plan, "beyond 2^64");
  plan = tensorMapPlan(ctx);
  plan.buffers[2].tensorMap->source = 2;
  rejects(plan, "which is a tensor map itself");
  plan = tensorMapPlan(ctx);
  plan.buffers[2].tensorMap->source = 9;
  rejects(plan, "names source buffer 9, which is out of range");
  plan = tensorMapPlan(ctx);
  plan.buffers[2].tensorMap->strides = {1000};
  rejects(plan, "strides[0] = 1000 bytes is not a positive multiple of 16");
  plan = tensorMapPlan(ctx);
  plan.buffers[2].tensorMap->box = {128, 128};
  rejects(plan, "exceeds the swizzle of 128 bytes");
  plan = tensorMapPlan(ctx);
  plan.buffers[2].tensorMap.reset();
  rejects(plan, "of role tensor_map needs a tensor_map");
  plan = tensorMapPlan(ctx);
  plan.buffers[0].tensorMap = plan.buffers[2].tensorMap;
  rejects(plan, "has a tensor_map but its role is not tensor_map");
  plan = tensorMapPlan(ctx);
  plan.buffers[2].type = MemRefType::get({64}, IntegerType::get(&ctx, 8));
  rejects(plan, "must have type 'memref<128xi8>'");
}

TEST_F(LaunchPlanTest, HostFunctionEncodesTensorMapsBeforeTheLaunches) {
  LaunchPlan plan = tensorMapPlan(ctx);
  OpBuilder b(&ctx);
  OwningOpRef<ModuleOp> module = ModuleOp::create(b.getUnknownLoc());
  (*module)->setAttr(gpu::GPUDialect::getContainerModuleAttrName(), b.getUnitAttr());
  b.setInsertionPointToEnd(module->getBody());
  auto gm = gpu::GPUModuleOp::create(b, b.getUnknownLoc(), "g_kernels");
  b.setInsertionPointToEnd(gm.getBody());
  SmallVector<Type> params = {plan.buffers[2].type, plan.buffers[0].type, plan.buffers[1].type};
  auto kernel = gpu::GPUFuncOp::create(b, b.getUnknownLoc(), "g_k0", b.getFunctionType(params, {}));
  kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  b.setInsertionPointToStart(&kernel.getBody().front());
  gpu::ReturnOp::create(b, b.getUnknownLoc());
  ASSERT_TRUE(succeeded(plan.verifyAgainst(gm)));
  {
    // An unused tensor map is a leftover like an unused scratch buffer.
    LaunchPlan stale = plan;
    stale.buffers.push_back(tensorMapBuffer(&ctx, "tmap9", *plan.buffers[2].tensorMap));
    EXPECT_TRUE(failed(stale.verifyAgainst(gm)));
    EXPECT_NE(messages.back().find("tensor_map buffer 'tmap9' is not passed to any launch"),
              std::string::npos);
  }

  b.setInsertionPointToEnd(module->getBody());
  func::FuncOp host = buildHostFunction(b, b.getUnknownLoc(), plan, gm);
  // The tensor map is not an argument: (input, output).
  ASSERT_EQ(host.getNumArguments(), 2u);
  auto decl = module->lookupSymbol<func::FuncOp>("mgpuEvoTensorMapEncodeTiled");
  ASSERT_TRUE(decl);
  EXPECT_TRUE(decl.isPrivate());
  SmallVector<func::CallOp> calls;
  host.walk([&](func::CallOp c) { calls.push_back(c); });
  ASSERT_EQ(calls.size(), 1u);
  gpu::LaunchFuncOp launch;
  host.walk([&](gpu::LaunchFuncOp l) { launch = l; });
  ASSERT_TRUE(launch);
  EXPECT_TRUE(calls[0]->isBeforeInBlock(launch));
  // The constants passed: data type f16 (6), 2 bytes, rank 2, swizzle 128, source bytes, then
  // dims[5], strides[4], box[5] padded with 1.
  SmallVector<int64_t> values;
  for (Value v : calls[0].getOperands().drop_front(2)) {
    auto c = v.getDefiningOp<arith::ConstantIntOp>();
    ASSERT_TRUE(c);
    values.push_back(c.value());
  }
  EXPECT_EQ(values, (SmallVector<int64_t>{6, 2, 2, 128, 262144, 512, 256, 1, 1, 1, 1024, 1, 1,
                                          1, 64, 128, 1, 1, 1}));
  // The map's buffer is allocated on the device and is what the kernel receives first; the
  // source's address is the host function's first argument's.
  Value mapBuffer = launch.getKernelOperands()[0];
  EXPECT_TRUE(mapBuffer.getDefiningOp<gpu::AllocOp>());
  auto addressOf = [](Value v) {
    auto cast = v.getDefiningOp<arith::IndexCastOp>();
    auto p = cast ? cast.getIn().getDefiningOp<memref::ExtractAlignedPointerAsIndexOp>() : nullptr;
    return p ? p.getSource() : Value();
  };
  EXPECT_EQ(addressOf(calls[0].getOperand(0)), mapBuffer);
  EXPECT_EQ(addressOf(calls[0].getOperand(1)), host.getArgument(0));
  EXPECT_TRUE(succeeded(verify(*module)));
}

namespace {
/// f(%x: tensor<256xf32>, %alpha: f32) -> tensor<256xf32>: alpha a by-value input.
LaunchPlan scalarPlan(MLIRContext &ctx) {
  Builder b(&ctx);
  LaunchPlan plan;
  plan.funcName = "s";
  plan.source = "func.func @s() {}";
  auto t = MemRefType::get({256}, b.getF32Type());
  std::optional<BufferDesc> alpha = argumentBuffer(b.getF32Type(), "arg1", BufferRole::Input);
  plan.buffers = {{"arg0", BufferRole::Input, t}, *alpha, {"result0", BufferRole::Output, t}};
  TaskDesc task;
  task.name = "s_t0";
  task.family = TaskFamily::Elementwise;
  task.source = "func.func @s_t0() {}";
  task.knobs = ScheduleKnobs().toAttr(&ctx, TaskFamily::Elementwise);
  task.buffers = {0, 1, 2};
  plan.tasks.push_back(task);
  KernelLaunch launch;
  launch.kernel = "s_k0";
  launch.block = {256, 1, 1};
  launch.args = {0, 1, 2};
  plan.launches.push_back(launch);
  return plan;
}
} // namespace

TEST_F(LaunchPlanTest, ScalarArgumentsAreByValueInputsOfRankZero) {
  Builder b(&ctx);
  // Tensors are memrefs of their shape; scalars the kernels take by value are 0-d by-value
  // inputs; anything else (or a scalar result) has no buffer.
  std::optional<BufferDesc> x =
      argumentBuffer(RankedTensorType::get({4, 8}, b.getF16Type()), "x", BufferRole::Input);
  ASSERT_TRUE(x);
  EXPECT_FALSE(x->byValue);
  EXPECT_EQ(x->abiType(), Type(MemRefType::get({4, 8}, b.getF16Type())));
  for (Type t : {Type(b.getF16Type()), Type(b.getBF16Type()), Type(b.getF32Type()),
                 Type(b.getF64Type()), Type(b.getI1Type()), Type(b.getI8Type()),
                 Type(b.getI64Type())}) {
    std::optional<BufferDesc> s = argumentBuffer(t, "s", BufferRole::Input);
    ASSERT_TRUE(s);
    EXPECT_TRUE(s->byValue);
    EXPECT_EQ(s->type, MemRefType::get({}, t));
    EXPECT_EQ(s->abiType(), t);
  }
  EXPECT_EQ(argumentBuffer(b.getF32Type(), "r", BufferRole::Output), std::nullopt);
  for (Type t : {Type(b.getIndexType()), Type(Float80Type::get(&ctx)),
                 Type(b.getIntegerType(128)), Type(ComplexType::get(b.getF32Type())),
                 Type(VectorType::get({4}, b.getF32Type()))})
    EXPECT_EQ(argumentBuffer(t, "s", BufferRole::Input), std::nullopt);

  // Through the checked attribute and its text, and back.
  LaunchPlan plan = scalarPlan(ctx);
  FailureOr<LaunchPlan> back = roundTrip(plan);
  ASSERT_TRUE(succeeded(back)) << (messages.empty() ? "" : messages.back());
  EXPECT_TRUE(back->buffers[1].byValue);
  EXPECT_FALSE(back->buffers[0].byValue);
  EXPECT_EQ(back->buffers[1].sizeInBytes(), 4);
  PlanAttr attr = plan.toAttr(&ctx);
  std::string text;
  llvm::raw_string_ostream os(text);
  os << Attribute(attr);
  EXPECT_NE(text.find("type = memref<f32>, by_value = true>"), std::string::npos) << text;
  EXPECT_EQ(parseAttribute(text, &ctx), Attribute(attr)) << text;
}

TEST_F(LaunchPlanTest, MalformedScalarArgumentsAreRejectedWithAReason) {
  auto rejects = [&](LaunchPlan plan, StringRef what) {
    messages.clear();
    EXPECT_TRUE(failed(roundTrip(plan))) << what.str();
    ASSERT_FALSE(messages.empty()) << what.str();
    EXPECT_NE(messages.back().find(what), std::string::npos) << messages.back();
  };
  Builder b(&ctx);
  LaunchPlan plan = scalarPlan(ctx);
  plan.buffers[2].byValue = true;
  rejects(plan, "buffer 'result0' is by_value: it must be an input of rank 0");
  plan = scalarPlan(ctx);
  plan.buffers[0].byValue = true;
  rejects(plan, "buffer 'arg0' is by_value: it must be an input of rank 0 (a scalar argument, "
                "e.g. memref<f32>), not zero_init, got input 'memref<256xf32>'");
  plan = scalarPlan(ctx);
  plan.buffers[1].zeroInit = true;
  rejects(plan, "not zero_init");
  plan = scalarPlan(ctx);
  plan.buffers[1].type = MemRefType::get({}, b.getIntegerType(128));
  rejects(plan, "by_value buffer 'arg1': supports scalar arguments of f16, bf16, f32, f64 and "
                "integers up to 64 bits (passed to the kernels by value), got 'i128'");
  // A tensor map cannot be encoded over a value.
  plan = scalarPlan(ctx);
  plan.buffers.push_back(tensorMapBuffer(&ctx, "tmap0", TensorMapDesc{1, {4}, {}, {4}, 0}));
  rejects(plan, "has source 'arg1', which is a scalar argument (by_value)");
  // In text, by_value is a boolean key like zero_init.
  messages.clear();
  EXPECT_FALSE(parseAttribute(
      "#evo.buffer<name = \"a\", role = input, type = memref<4xf32>, by_value = true>", &ctx));
  ASSERT_FALSE(messages.empty());
  EXPECT_NE(messages.back().find("is by_value: it must be an input of rank 0"), std::string::npos);
}

TEST_F(LaunchPlanTest, KernelsAndTheHostPassScalarArgumentsByValue) {
  LaunchPlan plan = scalarPlan(ctx);
  OpBuilder b(&ctx);
  OwningOpRef<ModuleOp> module = ModuleOp::create(b.getUnknownLoc());
  b.setInsertionPointToEnd(module->getBody());
  auto gm = gpu::GPUModuleOp::create(b, b.getUnknownLoc(), "s_kernels");
  auto addKernel = [&](Type alpha) {
    b.setInsertionPointToEnd(gm.getBody());
    SmallVector<Type> params = {plan.buffers[0].type, alpha, plan.buffers[2].type};
    auto k = gpu::GPUFuncOp::create(b, b.getUnknownLoc(), "s_k0", b.getFunctionType(params, {}));
    k->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
    b.setInsertionPointToStart(&k.getBody().front());
    gpu::ReturnOp::create(b, b.getUnknownLoc());
    return k;
  };
  // A kernel taking a pointer to the scalar is not the plan's ABI.
  gpu::GPUFuncOp pointer = addKernel(plan.buffers[1].type);
  EXPECT_TRUE(failed(plan.verifyAgainst(gm)));
  EXPECT_NE(messages.back().find("parameter 1 has type 'memref<f32>' but evo.plan passes the "
                                 "value of scalar argument 'arg1' of type 'f32'"),
            std::string::npos)
      << messages.back();
  pointer.erase();
  addKernel(b.getF32Type());
  EXPECT_TRUE(succeeded(plan.verifyAgainst(gm)));

  b.setInsertionPointToEnd(module->getBody());
  func::FuncOp host = buildHostFunction(b, b.getUnknownLoc(), plan, gm);
  EXPECT_EQ(SmallVector<Type>(host.getFunctionType().getInputs()),
            (SmallVector<Type>{plan.buffers[0].type, b.getF32Type(), plan.buffers[2].type}));
  gpu::LaunchFuncOp launch;
  host.walk([&](gpu::LaunchFuncOp l) { launch = l; });
  ASSERT_TRUE(launch);
  EXPECT_EQ(launch.getKernelOperands()[1], host.getArgument(1));
  (*module)->setAttr(gpu::GPUDialect::getContainerModuleAttrName(), b.getUnitAttr());
  EXPECT_TRUE(succeeded(verify(*module)));
}

TEST_F(LaunchPlanTest, AScalarParameterIsLoadedAsItsValueAndCopiedForOtherReads) {
  // The emitters read a scalar argument as a 0-d buffer; by value, its loads become the value
  // and any other read (here a memref.copy) sees a private copy stored at entry.
  OpBuilder b(&ctx);
  Location loc = b.getUnknownLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  auto gm = gpu::GPUModuleOp::create(b, loc, "k_kernels");
  b.setInsertionPointToEnd(gm.getBody());
  auto scalar = MemRefType::get({}, b.getF32Type());
  auto k = gpu::GPUFuncOp::create(b, loc, "k", b.getFunctionType({scalar, scalar}, {}));
  k->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  b.setInsertionPointToStart(&k.getBody().front());
  Value v = memref::LoadOp::create(b, loc, k.getArgument(0), ValueRange());
  memref::CopyOp::create(b, loc, k.getArgument(0), k.getArgument(1));
  memref::StoreOp::create(b, loc, v, k.getArgument(1), ValueRange());
  gpu::ReturnOp::create(b, loc);

  passScalarByValue(k, 0);
  EXPECT_EQ(SmallVector<Type>(k.getFunctionType().getInputs()),
            (SmallVector<Type>{b.getF32Type(), scalar}));
  EXPECT_EQ(k.getArgument(0).getType(), b.getF32Type());
  unsigned loads = 0;
  memref::AllocaOp copy;
  k.walk([&](Operation *op) {
    loads += isa<memref::LoadOp>(op);
    if (auto a = dyn_cast<memref::AllocaOp>(op))
      copy = a;
  });
  EXPECT_EQ(loads, 0u);
  ASSERT_TRUE(copy);
  auto stores = llvm::to_vector(k.getOps<memref::StoreOp>());
  ASSERT_EQ(stores.size(), 2u);
  EXPECT_EQ(stores[0].getValueToStore(), k.getArgument(0)); // the prologue's copy
  EXPECT_EQ(stores[0].getMemRef(), copy.getResult());
  EXPECT_EQ(stores[1].getValueToStore(), k.getArgument(0)); // the load it replaced
  auto copies = llvm::to_vector(k.getOps<memref::CopyOp>());
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0].getSource(), copy.getResult());
  EXPECT_TRUE(succeeded(verify(*module)));
}
