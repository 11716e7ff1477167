//===- LowerVector.cpp - the evo-lower-vector pass ------------------------------===//
//
// Hand-written kernels (LLM replies, tests) use the whole vector dialect; the NVVM conversion
// only converts the vector ops with a one-to-one LLVM counterpart and silently leaves the rest,
// which then fails to translate. This pass is the preparation upstream's convert-vector-to-llvm
// and GPU-to-NVVM pipeline run first, so that every kernel that verifies also compiles.
//
//===----------------------------------------------------------------------===//

#include "evo/Target/Passes.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace evo {
#define GEN_PASS_DEF_EVOLOWERVECTORPASS
#include "evo/Target/Passes.h.inc"
} // namespace evo

#define DEBUG_TYPE "evo-lower-vector"

using namespace mlir;

namespace {
struct EvoLowerVectorPass final : evo::impl::EvoLowerVectorPassBase<EvoLowerVectorPass> {
  using Base::Base;
  void runOnOperation() override;
};
} // namespace

void EvoLowerVectorPass::runOnOperation() {
  MLIRContext *ctx = &getContext();
  Operation *root = getOperation();
  // Each step's patterns would fight the next one's (e.g. the transfer lowering of step 3 would
  // take the 1-d pieces before step 2 has unrolled an n-d transfer), hence three rounds. Like
  // upstream's passes, a round that stops short of a fixed point is not an error: what is left
  // fails, with its op named, in the translation.

  // 1. Transfers in a normal form: masks as operands, minor-identity permutation maps.
  {
    RewritePatternSet patterns(ctx);
    vector::populateVectorMaskLoweringPatternsForSideEffectingOps(patterns);
    vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
    (void)applyPatternsGreedily(root, std::move(patterns));
  }
  // 2. n-d transfers to 1-d ones. Fully unrolled: the looped form stages the vector through a
  //    memref.alloca, which on a GPU is local memory.
  {
    RewritePatternSet patterns(ctx);
    populateVectorToSCFConversionPatterns(patterns,
                                          VectorTransferToSCFOptions().enableFullUnroll());
    (void)applyPatternsGreedily(root, std::move(patterns));
  }
  // 3. convert-vector-to-llvm's own preparation (ConvertVectorToLLVMPass.cpp upstream), with
  //    contractions as outer products (fma chains, not horizontal reductions), plus the
  //    outerproduct and multi_reduction lowerings it leaves to the transform dialect.
  {
    RewritePatternSet patterns(ctx);
    vector::populateVectorToVectorCanonicalizationPatterns(patterns);
    vector::populateVectorBitCastLoweringPatterns(patterns);
    vector::populateVectorBroadcastLoweringPatterns(patterns);
    vector::populateVectorContractLoweringPatterns(patterns,
                                                   vector::VectorContractLowering::OuterProduct);
    vector::populateVectorOuterProductLoweringPatterns(patterns);
    vector::populateVectorMultiReductionLoweringPatterns(
        patterns, vector::VectorMultiReductionLowering::InnerReduction);
    vector::populateVectorMaskOpLoweringPatterns(patterns);
    vector::populateVectorShapeCastLoweringPatterns(patterns);
    vector::populateVectorInterleaveLoweringPatterns(patterns);
    vector::populateVectorTransposeLoweringPatterns(patterns,
                                                    vector::VectorTransposeLowering::EltWise);
    vector::populateVectorTransferLoweringPatterns(patterns, /*maxTransferRank=*/1);
    vector::populateVectorMaskMaterializationPatterns(patterns,
                                                      /*force32BitVectorIndices=*/true);
    vector::populateVectorInsertExtractStridedSliceTransforms(patterns);
    vector::populateVectorStepLoweringPatterns(patterns);
    vector::populateVectorRankReducingFMAPattern(patterns);
    vector::populateVectorGatherLoweringPatterns(patterns);
    vector::populateVectorScanLoweringPatterns(patterns);
    (void)applyPatternsGreedily(root, std::move(patterns));
  }
}
