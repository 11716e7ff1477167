//===- Manifest.h - the JSON that travels with emitted PTX -------*- C++ -*-===//
//
// A manifest is everything a runtime needs to launch emitted PTX without evo-opt: the buffers
// (role, dtype, shape, bytes; `by_value` for a scalar argument) in ABI order, the kernels with their parameters, and the ordered
// launches with grid/block/shared memory. Format documented in docs/architecture.md.
//
//===----------------------------------------------------------------------===//

#ifndef EVO_TARGET_MANIFEST_H
#define EVO_TARGET_MANIFEST_H

#include "evo/Dialect/Evo/IR/LaunchPlan.h"
#include "evo/Target/PTXAssembler.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/JSON.h"
#include <optional>

namespace evo {

inline constexpr llvm::StringLiteral kManifestFormat = "evo-manifest/1";

struct KernelSignature {
  std::string name;
  /// Memrefs (device pointers) and scalars (values: a scalar argument, `by_value` in the JSON).
  llvm::SmallVector<mlir::Type> params;
  mlir::Attribute knobs; // #evo.knobs (or another knob set); may be null
};

struct ManifestInfo {
  std::string name;
  std::string chip, features;
  std::string ptxFile;
  std::string ptx;
  std::optional<LaunchPlan> plan;
  llvm::SmallVector<KernelSignature> kernels;
  /// Present when ptxas assembled the PTX.
  std::optional<std::string> ptxasPath;
  llvm::StringMap<KernelResources> resources;
  /// `chips=`: every target chip (`chip` is the PTX's, the lowest) and a cubin per chip, in the
  /// order of `chips` (the manifest's `target.chips` and `binaries`). Empty for `chip=`.
  struct Binary {
    std::string chip, file, image;
  };
  llvm::SmallVector<std::string> chips;
  llvm::SmallVector<Binary> binaries;
  /// The plan's constant buffers: their bytes, each at a multiple of kConstantAlignment, in
  /// `constantsImage` (written as `constantsFile`), and each one's offset by buffer index.
  std::string constantsFile, constantsImage;
  llvm::DenseMap<unsigned, int64_t> constantOffsets;
};

/// The alignment of each constant in a constants file (runtimes upload each one separately, so
/// it only keeps every constant's bytes at an address as aligned as a device allocation's).
inline constexpr int64_t kConstantAlignment = 256;

llvm::json::Value attrToJson(mlir::Attribute attr);
llvm::json::Value buildManifest(const ManifestInfo &info);
std::string sha256Hex(llvm::StringRef data);

/// The version string evo-opt reports (its own and MLIR's).
std::string evoVersionString();

} // namespace evo

#endif
