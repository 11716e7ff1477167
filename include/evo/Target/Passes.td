//===- Passes.td - evo-opt target passes -------------------*- tablegen -*-===//

#ifndef EVO_TARGET_PASSES
#define EVO_TARGET_PASSES

include "mlir/Pass/PassBase.td"

def EvoEmitPTXPass : Pass<"evo-emit-ptx", "mlir::ModuleOp"> {
  let summary = "Compile gpu.modules to PTX and write <name>.ptx plus a <name>.json manifest";
  let description = [{
    Lowers every `gpu.module` of the module through NVVM (bare-pointer kernel ABI) to PTX for
    `chip`, replaces it with a `gpu.binary` holding the PTX (the `evo.plan` of evo-lower-to-gpu
    moves onto the binary), and writes for each one `<output-dir>/<name>.ptx` and
    `<output-dir>/<name>.json`, where `<name>` is the lowered function's name (or the
    gpu.module's). The manifest lists the kernels with their parameters (buffer order, dtypes,
    shapes), grid/block dimensions, dynamic shared memory and schedule knobs.

    When ptxas is available the PTX is assembled for `chip` and the manifest records each
    kernel's registers, spills, stack frame and shared memory; an assembler error is a
    diagnostic and nothing is written.

    `chips=sm_80,sm_90a` (instead of `chip`) targets several chips: the PTX is written for the
    lowest one (it runs on every newer GPU, JIT-compiled by the driver), ptxas assembles it into
    a cubin per chip, `<name>.<chip>.cubin`, and the manifest lists them under `binaries` (chip,
    file, bytes, sha256) for the loaders to choose from by the device's compute capability. It
    needs ptxas. A kernel that cannot run on one of the chips (wgmma needs sm_90a) is a
    diagnostic naming the kernel and the chip, as is a chip the NVPTX backend does not know or
    a PTX version (`features`) older than the chip needs. `output-dir` is created if missing. Files are written to
    temporary names and renamed into place only when evo-opt's whole invocation succeeds (or,
    outside evo-opt, when the pass does), so a failure leaves no file, partial or complete; a
    name two modules or two input chunks would both write is a diagnostic. Every name that
    becomes a file name or a PTX symbol must be a plain identifier (docs/reliability.md).
  }];
  let dependentDialects = [
    "mlir::gpu::GPUDialect", "mlir::NVVM::NVVMDialect", "mlir::LLVM::LLVMDialect"
  ];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90\"", "Target SM (sm_XY or sm_XYa)">,
    ListOption<"chips", "chips", "std::string",
               "Target SMs, e.g. sm_80,sm_90a: PTX for the lowest plus a cubin per chip, listed "
               "in the manifest (needs ptxas; replaces chip)">,
    Option<"features", "features", "std::string", /*default=*/"\"+ptx80\"",
           "PTX ISA version, as an LLVM feature string">,
    Option<"optLevel", "opt-level", "int", /*default=*/"3", "LLVM optimization level (0-3)">,
    Option<"outputDir", "output-dir", "std::string", /*default=*/"\".\"",
           "Directory for <name>.ptx and <name>.json, created if missing ('-' writes nothing)">,
    Option<"ptxas", "ptxas", "std::string", /*default=*/"\"\"",
           "ptxas to assemble with: empty finds one (EVO_PTXAS, the CUDA toolkit, PATH) and "
           "skips assembly if none; 'none' skips it; a path must exist">,
    Option<"cudaPath", "cuda-path", "std::string", /*default=*/"\"\"",
           "CUDA toolkit root, for libdevice (default: CUDA_HOME, then the build's toolkit)">,
  ];
}

def EvoLowerVectorPass : Pass<"evo-lower-vector", "mlir::gpu::GPUModuleOp"> {
  let summary = "Lower vector ops of any rank to what the NVVM conversion handles";
  let description = [{
    The NVVM conversion (`convert-gpu-to-nvvm`) converts only vector ops that map one to one
    onto LLVM (1-d loads, stores, extract, insert, shuffle, reduction, fma, arith and math on
    vectors of any rank, ...); anything else (strided slices, transfers, contractions, outer
    products, multi-reductions, transposes, shape casts, n-d broadcasts, masks, ...) would be left
    behind and fail at translation ("missing LLVMTranslationDialectInterface"). This pass runs,
    in order, the preparation upstream's `convert-vector-to-llvm` and GPU-to-NVVM pipeline run
    before that conversion:

    1. `vector.mask` around transfers becomes a masked transfer, and transfer permutation maps
       become minor identities plus `vector.transpose`/`vector.broadcast`;
    2. n-d `vector.transfer_read/write` become 1-d transfers, fully unrolled (no staging buffer
       in local memory), guarded by `scf.if` where a row may be out of bounds;
    3. the lowering patterns of `convert-vector-to-llvm` (contraction as outer products,
       transpose, broadcast, shape_cast, bitcast, interleave, masks, strided slices as shuffles,
       1-d transfers as (masked) loads and stores, step, gather, scan, rank-reducing fma) plus
       `vector.outerproduct` as `vector.fma` and `vector.multi_reduction` as
       `vector.reduction`s.

    Kernels without such ops come out unchanged (folding aside).

    ```mlir
    %s = vector.extract_strided_slice %v {offsets = [2], sizes = [4], strides = [1]}
        : vector<8xf32> to vector<4xf32>
    // becomes
    %s = vector.shuffle %v, %v [2, 3, 4, 5] : vector<8xf32>, vector<8xf32>
    ```
  }];
  let dependentDialects = [
    "mlir::affine::AffineDialect", "mlir::arith::ArithDialect", "mlir::memref::MemRefDialect",
    "mlir::scf::SCFDialect", "mlir::ub::UBDialect", "mlir::vector::VectorDialect"
  ];
}

def EvoStreamingLoadsPass : Pass<"evo-streaming-loads", "mlir::gpu::GPUModuleOp"> {
  let summary = "Nontemporal loads of read-only kernel parameters bypass L1";
  let description = [{
    NVPTX ignores `!nontemporal` on loads. After the NVVM conversion, this pass turns each
    `llvm.load` marked `nontemporal` (what `vector.load ... {nontemporal = true}` becomes; the
    `stream_loads` knob sets it on a GEMV's matrix) into inline PTX
    `ld.global.nc.L1::no_allocate` of 4, 8 or 16 bytes: the read-only path, without allocating
    in L1, so a stream read once does not evict what other loads reuse there (a GEMV's x). Only
    where that is exact: the function is a kernel, the pointer is derived (GEPs, casts between
    the generic and global address spaces) from one of its pointer parameters (not byval, byref
    or a grid constant) that it only loads from (no store, atomic, call, inline asm, ptrtoint
    or other escape of any pointer derived from it, so nothing writes it while the kernel runs),
    the load is neither volatile nor atomic and aligned to its size, and the gpu.module targets
    sm_70 or newer with PTX 7.4 or newer. Every other load is left as it is.

    ```mlir
    %v = llvm.load %p {alignment = 16 : i64, nontemporal} : !llvm.ptr -> vector<4xf32>
    // becomes
    %a = llvm.ptrtoint %p : !llvm.ptr to i64
    %r = llvm.inline_asm "ld.global.nc.L1::no_allocate.v4.b32 {$0, $1, $2, $3}, [$4];",
         "=r,=r,=r,=r,l" %a : (i64) -> !llvm.struct<(i32, i32, i32, i32)>
    // ... and the four words back into a vector<4xf32>
    ```
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

#endif // EVO_TARGET_PASSES
