//===- Passes.h - evo-opt conversion passes ----------------------*- C++ -*-===//

#ifndef EVO_CONVERSION_PASSES_H
#define EVO_CONVERSION_PASSES_H

#include "evo/Dialect/Evo/IR/Knobs.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace evo {

#define GEN_PASS_DECL
#include "evo/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "evo/Conversion/Passes.h.inc"

} // namespace evo

#endif // EVO_CONVERSION_PASSES_H
