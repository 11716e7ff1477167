//===- ConvGemm.cpp - convolutions seen as implicit GEMMs
//--------------------===//
//
// A convolution is an implicit GEMM: output channels x (batch, output pixels),
// reduced over (input channels, filter window). The tiled and wgmma matmul
// schedules build their kernels from this view (EmitMatmul.cpp, EmitWgmma.cpp);
// the image is read through the op's indexing maps.
//
//===----------------------------------------------------------------------===//

#include "Emitters.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"

using namespace mlir;

namespace evo {

std::optional<GemmView> convolutionGemmView(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1)
    return std::nullopt;
  // A convolution as an implicit GEMM: output channels x (batch, output
  // pixels), reduced over (input channels, filter window). The filter is A, the
  // image B: output pixels are contiguous in the image and the result, so B's
  // tile copies and C's stores coalesce.
  FailureOr<linalg::ConvolutionDimensions> c = linalg::inferConvolutionDims(op);
  if (linalg::isaContractionOpInterface(op) || failed(c) || !c->depth.empty() ||
      c->outputChannel.size() != 1 || c->inputChannel.empty() ||
      c->outputImage.empty() ||
      llvm::any_of(c->strides, [](int64_t x) { return x != 1; }) ||
      llvm::any_of(c->dilations, [](int64_t x) { return x != 1; }))
    return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  unsigned filter = maps[0].isFunctionOfDim(c->outputChannel.front()) ? 0 : 1;
  if (!maps[filter].isFunctionOfDim(c->outputChannel.front()) ||
      maps[1 - filter].isFunctionOfDim(c->outputChannel.front()))
    return std::nullopt;
  GemmView v;
  v.a = filter;
  v.b = 1 - filter;
  v.m.assign(c->outputChannel.begin(), c->outputChannel.end());
  v.n.append(c->batch.begin(), c->batch.end());
  v.n.append(c->outputImage.begin(), c->outputImage.end());
  v.k.append(c->inputChannel.begin(), c->inputChannel.end());
  v.k.append(c->filterLoop.begin(), c->filterLoop.end());
  return v;
}

} // namespace evo
