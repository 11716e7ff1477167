//===- Passes.h - evo-opt target passes --------------------------*- C++ -*-===//

#ifndef EVO_TARGET_PASSES_H
#define EVO_TARGET_PASSES_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace evo {

#define GEN_PASS_DECL
#include "evo/Target/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "evo/Target/Passes.h.inc"

} // namespace evo

#endif // EVO_TARGET_PASSES_H
