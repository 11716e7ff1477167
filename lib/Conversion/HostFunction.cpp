//===- HostFunction.cpp - the host side of a launch plan ----------------------===//
//
// Builds the func.func that allocates a plan's scratch buffers (and tensor maps), copies its
// constants to the device, encodes the tensor maps, launches its kernels in order and frees
// what it allocated: what a lowered function becomes on the host. A constant's value is the
// memref.global its buffer names (made by evo-lower-to-gpu beside the function); it is copied
// at every call, which keeps the host function self-contained (a runtime that loads the
// emitted PTX uploads constants once instead: docs/runtime.md). Its arguments are the plan's
// inputs (memrefs, and the values of scalar arguments, which gpu.launch_func passes by value)
// then its outputs.
//
// A tensor map is encoded by a call to `mgpuEvoTensorMapEncodeTiled` (libevo_cuda_runtime.so,
// runtime/CudaRuntime.cpp) with the device addresses of the map's buffer and of its source and
// the map's arguments as i64 scalars: upstream's nvgpu.tma.create.descriptor returns a descriptor
// pointer of its own type, which cannot be a plan buffer (a memref<128xi8> kernel argument).
//
//===----------------------------------------------------------------------===//

#include "evo/Conversion/LowerToGPU.h"
#include "evo/Runtime/TensorMap.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

namespace evo {

/// The runtime's entry point: (dst, src, data type, element bytes, rank, swizzle, source bytes,
/// dims[5], strides[4], box[5]), all i64.
static constexpr llvm::StringLiteral kEncodeFn = "mgpuEvoTensorMapEncodeTiled";
static constexpr unsigned kEncodeArgs = 7 + 5 + 4 + 5;

static func::FuncOp encodeDeclaration(OpBuilder &builder, Location loc, Operation *host) {
  auto module = host->getParentOfType<ModuleOp>();
  if (!module)
    return {};
  if (auto f = module.lookupSymbol<func::FuncOp>(kEncodeFn))
    return f;
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(module.getBody());
  SmallVector<Type> args(kEncodeArgs, builder.getI64Type());
  auto decl = func::FuncOp::create(builder, loc, kEncodeFn, builder.getFunctionType(args, {}));
  decl.setPrivate();
  return decl;
}

func::FuncOp buildHostFunction(OpBuilder &builder, Location loc, const LaunchPlan &plan,
                               gpu::GPUModuleOp module) {
  // Scalar arguments (by-value buffers) stay scalars: the launches pass their values.
  SmallVector<Type> argTypes;
  for (const BufferDesc &buf : plan.buffers)
    if (buf.role == BufferRole::Input || buf.role == BufferRole::Output)
      argTypes.push_back(buf.abiType());
  auto func = func::FuncOp::create(builder, loc, plan.funcName,
                                   builder.getFunctionType(argTypes, {}));
  OpBuilder::InsertionGuard guard(builder);
  Block *entry = func.addEntryBlock();
  builder.setInsertionPointToStart(entry);

  SmallVector<Value> bufferValues;
  // Device buffers made here (scratch, tensor maps, copies of constants), freed at the end.
  SmallVector<Value> allocated;
  unsigned nextArg = 0;
  // Scratch buffers use the async forms (what upstream's gpu-to-llvm lowers), joined by a
  // gpu.wait before the first launch.
  auto tokenType = gpu::AsyncTokenType::get(builder.getContext());
  Value token;
  for (const BufferDesc &buf : plan.buffers) {
    if (buf.role == BufferRole::Input || buf.role == BufferRole::Output) {
      bufferValues.push_back(entry->getArgument(nextArg++));
      continue;
    }
    if (!token)
      token = gpu::WaitOp::create(builder, loc, tokenType, ValueRange()).getAsyncToken();
    auto alloc = gpu::AllocOp::create(builder, loc, buf.type, tokenType, ValueRange{token},
                                      /*dynamicSizes=*/ValueRange(), /*symbolOperands=*/ValueRange());
    token = alloc.getAsyncToken();
    if (buf.role == BufferRole::Constant) {
      Value host = memref::GetGlobalOp::create(builder, loc, buf.type, buf.global);
      token = gpu::MemcpyOp::create(builder, loc, tokenType, ValueRange{token}, alloc.getMemref(),
                                    host)
                  .getAsyncToken();
    }
    if (buf.zeroInit) {
      Value zero = arith::ConstantOp::create(
          builder, loc, builder.getZeroAttr(buf.type.getElementType()));
      token = gpu::MemsetOp::create(builder, loc, tokenType, ValueRange{token}, alloc.getMemref(),
                                    zero)
                  .getAsyncToken();
    }
    bufferValues.push_back(alloc.getMemref());
    allocated.push_back(alloc.getMemref());
  }
  if (token)
    gpu::WaitOp::create(builder, loc, Type(), ValueRange{token});

  // Tensor maps, encoded over their sources once every buffer exists.
  func::FuncOp encode;
  for (auto [i, buf] : llvm::enumerate(plan.buffers)) {
    if (!buf.tensorMap)
      continue;
    if (!encode)
      encode = encodeDeclaration(builder, loc, func);
    const TensorMapDesc &m = *buf.tensorMap;
    const BufferDesc &source = plan.buffers[m.source];
    tensormap::ElementInfo info{};
    (void)tensormap::elementInfo(elementTypeName(source.type.getElementType()), info);
    Type i64 = builder.getI64Type();
    auto cst = [&](int64_t v) -> Value {
      return arith::ConstantIntOp::create(builder, loc, v, 64);
    };
    auto address = [&](Value memref) -> Value {
      Value p = memref::ExtractAlignedPointerAsIndexOp::create(builder, loc, memref);
      return arith::IndexCastOp::create(builder, loc, i64, p);
    };
    SmallVector<Value> args = {address(bufferValues[i]),
                               address(bufferValues[m.source]),
                               cst(info.dataType),
                               cst(info.bytes),
                               cst(static_cast<int64_t>(m.dims.size())),
                               cst(m.swizzle),
                               cst(source.sizeInBytes())};
    for (auto [list, n] : {std::pair{ArrayRef<int64_t>(m.dims), 5u},
                           std::pair{ArrayRef<int64_t>(m.strides), 4u},
                           std::pair{ArrayRef<int64_t>(m.box), 5u}})
      for (unsigned k = 0; k < n; ++k)
        args.push_back(cst(k < list.size() ? list[k] : 1));
    func::CallOp::create(builder, loc, encode, args);
  }

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
  if (!allocated.empty()) {
    Value t = gpu::WaitOp::create(builder, loc, tokenType, ValueRange()).getAsyncToken();
    for (Value s : allocated)
      t = gpu::DeallocOp::create(builder, loc, tokenType, ValueRange{t}, s).getAsyncToken();
    gpu::WaitOp::create(builder, loc, Type(), ValueRange{t});
  }
  func::ReturnOp::create(builder, loc);
  return func;
}

} // namespace evo
