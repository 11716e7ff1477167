# evo_link_mlir(<target>): link an executable against MLIR and LLVM.
#
# Normal builds link Debian's libMLIR.so + libLLVM.so (a tool links in seconds). With EVO_STATIC=ON
# every libMLIR*.a / libLLVM*.a goes into one --start-group so the binary depends only on libc,
# libstdc++, libz and libzstd and can be carried to a GPU host that has no LLVM installed.
set(EVO_NO_LLVM_DYLIB "")
if(EVO_STATIC)
  # Keep llvm_add_library from adding libLLVM.so to our targets (needs libzstd-dev for the
  # zstd target that LLVMSupport's static interface names).
  set(EVO_NO_LLVM_DYLIB DISABLE_LLVM_LINK_LLVM_DYLIB)
  file(GLOB EVO_MLIR_ARCHIVES "${LLVM_LIBRARY_DIR}/libMLIR*.a")
  file(GLOB EVO_LLVM_ARCHIVES "${LLVM_LIBRARY_DIR}/libLLVM*.a")
  # Test-only and CAPI archives define duplicate registrations and are never needed here.
  list(FILTER EVO_MLIR_ARCHIVES EXCLUDE REGEX "libMLIR(Test|CAPI|.*TestPasses|.*Test\\.a|LspServer|TblgenLib|TableGen|PDLL).*")
  list(FILTER EVO_LLVM_ARCHIVES EXCLUDE REGEX "libLLVM(BOLT|Exegesis|FuzzMutate|FuzzerCLI).*")
  find_library(EVO_ZSTD NAMES zstd libzstd.so.1 PATHS /usr/lib/x86_64-linux-gnu)
  find_library(EVO_Z NAMES libz.a z)
  set(EVO_MLIR_STATIC_LINK
    -Wl,--start-group ${EVO_MLIR_ARCHIVES} ${EVO_LLVM_ARCHIVES} -Wl,--end-group
    -Wl,--gc-sections ${EVO_Z} ${EVO_ZSTD} -lpthread -ldl -lrt -lm)
endif()

function(evo_link_mlir target)
  if(EVO_STATIC)
    target_link_libraries(${target} PRIVATE ${EVO_MLIR_STATIC_LINK})
    # --as-needed: LLVMSupport's CMake interface names shared libraries (z3, ...) that nothing
    # here uses; they must not become run-time dependencies of the carried binary.
    target_link_options(${target} PRIVATE -static-libstdc++ -static-libgcc -Wl,--as-needed)
  else()
    target_link_libraries(${target} PRIVATE MLIR LLVM)
  endif()
endfunction()
