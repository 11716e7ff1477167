//===- OracleTestFixture.h - what the oracle's unit tests share -------*- C++ -*-===//
//
// The OracleTest fixture (a context with the dialects the oracle reads, its diagnostics kept),
// the deterministic inputs every case compares against and the layer-norm chain two files use.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_UNITTESTS_ORACLETESTFIXTURE_H
#define EVO_UNITTESTS_ORACLETESTFIXTURE_H

#include "evo/Evaluation/Oracle.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "gtest/gtest.h"
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

// A named namespace, not an anonymous one: GoogleTest requires every TEST_F of a suite to use
// the same fixture class, and the suite's cases live in two files.
namespace evo::unittest {

/// A deterministic input: a multiple of 1/64 in [-2, 2), exact in f16.
inline double inputValue(unsigned arg, uint64_t i) {
  uint64_t h = (i + 1) * 0x9E3779B97F4A7C15ull ^ (arg + 1) * 0xC2B2AE3D27D4EB4Full;
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 32;
  return static_cast<double>(static_cast<int64_t>(h % 256) - 128) / 64.0;
}

class OracleTest : public ::testing::Test {
protected:
  OracleTest()
      : handler(&ctx, [this](mlir::Diagnostic &d) {
          messages.push_back(d.str());
          locations.push_back(d.getLocation());
          return mlir::success();
        }) {
    ctx.loadDialect<mlir::func::FuncDialect, mlir::arith::ArithDialect, mlir::math::MathDialect,
                    mlir::linalg::LinalgDialect, mlir::tensor::TensorDialect>();
  }

  /// Parses `source` and builds the oracle of its first function; null on failure.
  std::unique_ptr<Oracle> compile(llvm::StringRef source) {
    module = mlir::parseSourceString<mlir::ModuleOp>(source, &ctx);
    if (!module) {
      ADD_FAILURE() << "parse error: " << joinedMessages();
      return nullptr;
    }
    auto funcs = module->getOps<mlir::func::FuncOp>();
    if (funcs.empty()) {
      ADD_FAILURE() << "no function";
      return nullptr;
    }
    mlir::FailureOr<std::unique_ptr<Oracle>> oracle =
        Oracle::create(*funcs.begin());
    if (mlir::failed(oracle))
      return nullptr;
    return std::move(*oracle);
  }

  std::string joinedMessages() const {
    std::string all;
    for (const std::string &m : messages)
      all += m + "\n";
    return all;
  }
  bool hasMessage(llvm::StringRef needle) const {
    for (const std::string &m : messages)
      if (llvm::StringRef(m).contains(needle))
        return true;
    return false;
  }

  mlir::MLIRContext ctx;
  mlir::ScopedDiagnosticHandler handler;
  std::vector<std::string> messages;
  std::vector<mlir::Location> locations;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

inline const char *const kLayerNorm = R"mlir(
  func.func @ln(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
    %zero = arith.constant 0.0 : f32
    %e4 = tensor.empty() : tensor<4xf32>
    %e = tensor.empty() : tensor<4x16xf32>
    %acc = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
    %sum = linalg.reduce ins(%x : tensor<4x16xf32>) outs(%acc : tensor<4xf32>) dimensions = [1]
      (%in: f32, %init: f32) {
        %s = arith.addf %in, %init : f32
        linalg.yield %s : f32
      }
    %n = arith.constant dense<16.0> : tensor<4xf32>
    %mean = arith.divf %sum, %n : tensor<4xf32>
    %meanb = linalg.broadcast ins(%mean : tensor<4xf32>) outs(%e : tensor<4x16xf32>) dimensions = [1]
    %xc = arith.subf %x, %meanb : tensor<4x16xf32>
    %sq = arith.mulf %xc, %xc : tensor<4x16xf32>
    %sqsum = linalg.reduce ins(%sq : tensor<4x16xf32>) outs(%acc : tensor<4xf32>) dimensions = [1]
      (%in: f32, %init: f32) {
        %s = arith.addf %in, %init : f32
        linalg.yield %s : f32
      }
    %var = arith.divf %sqsum, %n : tensor<4xf32>
    %eps = arith.constant dense<1.0e-5> : tensor<4xf32>
    %ve = arith.addf %var, %eps : tensor<4xf32>
    %rs = math.rsqrt %ve : tensor<4xf32>
    %rsb = linalg.broadcast ins(%rs : tensor<4xf32>) outs(%e : tensor<4x16xf32>) dimensions = [1]
    %y = arith.mulf %xc, %rsb : tensor<4x16xf32>
    return %y : tensor<4x16xf32>
  })mlir";

} // namespace evo::unittest

#endif // EVO_UNITTESTS_ORACLETESTFIXTURE_H
