//===- EvolutionFixture.h - what the evolution's unit tests share ----------*- C++ -*-===//
//
// Every dialect, extension and LLVM IR translation evo-opt registers, and a task (an
// elementwise ReLU as a func.func on tensors) that lowers, compiles and is the parent of
// mutated and LLM-written variants in EvolutionTest and UntrustedKernelTest; a task of the
// reduction, softmax, matmul and scan families each (EvolutionTest and SeedsTest).
//
//===----------------------------------------------------------------------===//

#ifndef EVO_UNITTESTS_EVOLUTIONFIXTURE_H
#define EVO_UNITTESTS_EVOLUTIONFIXTURE_H

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

namespace evo::unittest {

inline mlir::DialectRegistry &registry() {
  static mlir::DialectRegistry r = [] {
    mlir::DialectRegistry reg;
    mlir::registerAllDialects(reg);
    mlir::registerAllExtensions(reg);
    mlir::registerAllToLLVMIRTranslations(reg);
    return reg;
  }();
  return r;
}

/// relu_t0: max(x, 0) over a 64x256 f32 tensor.
inline const char *const kElementwise = R"mlir(func.func @relu_t0(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x256xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<64x256xf32>) outs(%e : tensor<64x256xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.maximumf %v, %z : f32
    linalg.yield %m : f32
  } -> tensor<64x256xf32>
  return %r : tensor<64x256xf32>
})mlir";

/// sum_t0: the sum of each row of a 64x256 f32 tensor.
inline const char *const kReduction = R"mlir(func.func @sum_t0(%x: tensor<64x256xf32>) -> tensor<64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64xf32>
  %a = linalg.fill ins(%z : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<64x256xf32>) outs(%a : tensor<64xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = arith.addf %v, %o : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
})mlir";

/// sm_t0: a softmax along the rows of a 32x512 f32 tensor.
inline const char *const kSoftmax = R"mlir(func.func @sm_t0(%x: tensor<32x512xf32>) -> tensor<32x512xf32> {
  %e = tensor.empty() : tensor<32x512xf32>
  %r = linalg.softmax dimension(1) ins(%x : tensor<32x512xf32>) outs(%e : tensor<32x512xf32>) -> tensor<32x512xf32>
  return %r : tensor<32x512xf32>
})mlir";

/// mm_t0: a 128x64 by 64x128 f32 matmul.
inline const char *const kMatmul = R"mlir(func.func @mm_t0(%a: tensor<128x64xf32>, %b: tensor<64x128xf32>) -> tensor<128x128xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x128xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<128x128xf32>) -> tensor<128x128xf32>
  %r = linalg.matmul ins(%a, %b : tensor<128x64xf32>, tensor<64x128xf32>) outs(%f : tensor<128x128xf32>) -> tensor<128x128xf32>
  return %r : tensor<128x128xf32>
})mlir";

/// A cumsum written as a masked triangular reduction: the scan family.
inline const char *const kScan = R"mlir(func.func @cs_t0(%x: tensor<16x512xf32>) -> tensor<16x512xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x512xf32>
  %a = linalg.fill ins(%z : f32) outs(%e : tensor<16x512xf32>) -> tensor<16x512xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<16x512xf32>) outs(%a : tensor<16x512xf32>) {
  ^bb0(%v: f32, %o: f32):
    %j = linalg.index 1 : index
    %k = linalg.index 2 : index
    %keep = arith.cmpi ule, %k, %j : index
    %m = arith.select %keep, %v, %z : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<16x512xf32>
  return %r : tensor<16x512xf32>
})mlir";

} // namespace evo::unittest

#endif // EVO_UNITTESTS_EVOLUTIONFIXTURE_H
