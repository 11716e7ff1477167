//===- EvolutionFixture.h - what the evolution's unit tests share ----------*- C++ -*-===//
//
// Every dialect, extension and LLVM IR translation evo-opt registers, and a task (an
// elementwise ReLU as a func.func on tensors) that lowers, compiles and is the parent of
// mutated and LLM-written variants in EvolutionTest and UntrustedKernelTest.
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

} // namespace evo::unittest

#endif // EVO_UNITTESTS_EVOLUTIONFIXTURE_H
