//===- ConvGemm.cpp - convolutions seen as implicit GEMMs ----------------------===//
//
// A convolution is an implicit GEMM: output channels x (batch, output pixels), reduced over
// (input channels, filter window), batched over groups (a grouped convolution's group, a depthwise
// one's channel). The tiled and wgmma matmul schedules build their kernels from this view
// (EmitMatmul.cpp, EmitWgmma.cpp); the image is read through the op's indexing maps, so strides,
// dilations and the transposed convolution's reversed window need nothing of the view but the
// classification of the loop dimensions (docs/lowering.md, "Convolutions as implicit GEMMs").
//
//===----------------------------------------------------------------------===//

#include "Emitters.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"

using namespace mlir;

namespace evo {

namespace {

/// Whether `e` is a bare loop dimension.
bool isDim(AffineExpr e) { return isa<AffineDimExpr>(e); }

} // namespace

std::optional<GemmView> convolutionGemmView(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      linalg::isaContractionOpInterface(op))
    return std::nullopt;
  // A convolution as an implicit GEMM: output channels x (batch, output pixels), reduced over
  // (input channels, filter window). The filter is A, the image B: output pixels are contiguous
  // in the image and the result, so B's tile copies and C's stores coalesce.
  //
  // The loop dimensions are classified by the operands they index, whatever the affine form of
  // the image's accesses (strides `s*oh + d*kh`, dilations, the transposed convolution's
  // `oh - kh + pad` on a padded image): the kernel reads every operand through its indexing map.
  // The image is the input with a compound access (a sum of dimensions), the filter the other:
  //   parallel, in filter and image: batch of the GEMM (the group of a grouped convolution, the
  //     channel of a depthwise one: grid z);
  //   parallel, filter only: M (output channels; none for a depthwise convolution: M = 1);
  //   parallel, image only: N (batch, output pixels);
  //   reduction: K (input channels, filter window).
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  auto compound = [](AffineMap map) {
    return llvm::any_of(map.getResults(), [](AffineExpr e) { return !isDim(e); });
  };
  if (!maps[2].isProjectedPermutation() || compound(maps[0]) == compound(maps[1]))
    return std::nullopt;
  const unsigned image = compound(maps[0]) ? 0 : 1, filter = 1 - image;
  // Both inputs feed the payload (a pooling's window operand is only a shape).
  Block *body = op.getBlock();
  if (body->getArgument(0).use_empty() || body->getArgument(1).use_empty())
    return std::nullopt;
  GemmView v;
  v.a = filter;
  v.b = image;
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  // Parallel dimensions in the output's order (C's stores run along N's last, its fastest).
  for (AffineExpr e : maps[2].getResults()) {
    unsigned d = cast<AffineDimExpr>(e).getPosition();
    if (iters[d] != utils::IteratorType::parallel)
      return std::nullopt;
    bool inFilter = maps[filter].isFunctionOfDim(d), inImage = maps[image].isFunctionOfDim(d);
    if (inFilter && inImage)
      v.batch.push_back(d);
    else if (inFilter)
      v.m.push_back(d);
    else if (inImage)
      v.n.push_back(d);
    else
      return std::nullopt; // broadcast along an output dimension
  }
  // K in the image's layout order (its fastest dimension last: a K tile then spans the image's
  // contiguous run where there is one): (c, kh, kw) for NCHW, (kh, kw, c) for NHWC, whose tiles
  // of consecutive channels are read coalesced (B along K) and whose FHWC filter is read along K
  // too; then any dimension only the filter has, in its order.
  auto addK = [&](unsigned d) {
    if (iters[d] == utils::IteratorType::reduction && !llvm::is_contained(v.k, d))
      v.k.push_back(d);
  };
  auto addAll = [&](AffineExpr e) {
    e.walk([&](AffineExpr s) {
      if (auto d = dyn_cast<AffineDimExpr>(s))
        addK(d.getPosition());
    });
  };
  for (AffineExpr e : maps[image].getResults())
    addAll(e);
  for (AffineExpr e : maps[filter].getResults())
    addAll(e);
  for (auto [d, it] : llvm::enumerate(iters))
    if (it == utils::IteratorType::reduction && !llvm::is_contained(v.k, d))
      return std::nullopt; // a reduction dimension no input reads
  if (v.n.empty() || v.k.empty() ||
      v.batch.size() + v.m.size() + v.n.size() + v.k.size() != op.getNumLoops())
    return std::nullopt;
  return v;
}

} // namespace evo
