//===- HostFunction.cpp - the host side of a launch plan ----------------------===//
//
// Builds the func.func that allocates a plan's scratch buffers, launches its kernels in order
// and frees the scratch: what a lowered function becomes on the host.
//
//===----------------------------------------------------------------------===//

#include "evo/Conversion/LowerToGPU.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

namespace evo {

func::FuncOp buildHostFunction(OpBuilder &builder, Location loc, const LaunchPlan &plan,
                               gpu::GPUModuleOp module) {
  SmallVector<Type> argTypes;
  for (const BufferDesc &buf : plan.buffers)
    if (buf.role != BufferRole::Scratch)
      argTypes.push_back(buf.type);
  auto func = func::FuncOp::create(builder, loc, plan.funcName,
                                   builder.getFunctionType(argTypes, {}));
  OpBuilder::InsertionGuard guard(builder);
  Block *entry = func.addEntryBlock();
  builder.setInsertionPointToStart(entry);

  SmallVector<Value> bufferValues;
  SmallVector<Value> scratch;
  unsigned nextArg = 0;
  // Scratch buffers use the async forms (what upstream's gpu-to-llvm lowers), joined by a
  // gpu.wait before the first launch.
  auto tokenType = gpu::AsyncTokenType::get(builder.getContext());
  Value token;
  for (const BufferDesc &buf : plan.buffers) {
    if (buf.role != BufferRole::Scratch) {
      bufferValues.push_back(entry->getArgument(nextArg++));
      continue;
    }
    if (!token)
      token = gpu::WaitOp::create(builder, loc, tokenType, ValueRange()).getAsyncToken();
    auto alloc = gpu::AllocOp::create(builder, loc, buf.type, tokenType, ValueRange{token},
                                      /*dynamicSizes=*/ValueRange(), /*symbolOperands=*/ValueRange());
    token = alloc.getAsyncToken();
    if (buf.zeroInit) {
      Value zero = arith::ConstantOp::create(
          builder, loc, builder.getZeroAttr(buf.type.getElementType()));
      token = gpu::MemsetOp::create(builder, loc, tokenType, ValueRange{token}, alloc.getMemref(),
                                    zero)
                  .getAsyncToken();
    }
    bufferValues.push_back(alloc.getMemref());
    scratch.push_back(alloc.getMemref());
  }
  if (token)
    gpu::WaitOp::create(builder, loc, Type(), ValueRange{token});

  llvm::DenseMap<int64_t, Value> indexConstants;
  auto idx = [&](int64_t v) -> Value {
    Value &c = indexConstants[v];
    if (!c)
      c = arith::ConstantIndexOp::create(builder, loc, v);
    return c;
  };
  for (const KernelLaunch &launch : plan.launches) {
    auto kernel = module.lookupSymbol<gpu::GPUFuncOp>(launch.kernel);
    SmallVector<Value> args;
    for (unsigned b : launch.args)
      args.push_back(bufferValues[b]);
    gpu::KernelDim3 grid{idx(launch.grid[0]), idx(launch.grid[1]), idx(launch.grid[2])};
    gpu::KernelDim3 block{idx(launch.block[0]), idx(launch.block[1]), idx(launch.block[2])};
    Value smem;
    if (launch.dynamicSharedMemory)
      smem = arith::ConstantIntOp::create(builder, loc, launch.dynamicSharedMemory, 32);
    gpu::LaunchFuncOp::create(builder, loc, kernel, grid, block, smem, args);
  }
  if (!scratch.empty()) {
    Value t = gpu::WaitOp::create(builder, loc, tokenType, ValueRange()).getAsyncToken();
    for (Value s : scratch)
      t = gpu::DeallocOp::create(builder, loc, tokenType, ValueRange{t}, s).getAsyncToken();
    gpu::WaitOp::create(builder, loc, Type(), ValueRange{t});
  }
  func::ReturnOp::create(builder, loc);
  return func;
}

} // namespace evo
