// Constant buffers through upstream's pipeline and evo-runner: @affine's weights (one dense, one
// dense_resource, over inline-constant-bytes=16) become memref.globals that its host function
// copies to the device at every call; @main passes only x and y.
//
// The host side lowers to LLVM with the weights as constant globals (no GPU needed):
// RUN: evo-opt %s --mlir-very-unsafe-disable-verifier-on-parsing --evo-lower-to-gpu="inline-constant-bytes=16" \
// RUN:     -gpu-lower-to-nvvm-pipeline="cubin-chip=sm_90 cubin-features=+ptx80 cubin-format=isa kernel-bare-ptr-calling-convention=1" \
// RUN: | FileCheck %s --check-prefix=LLVM
// LLVM-DAG: llvm.mlir.global private constant @affine_const0(dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00, 6.000000e+00, 7.000000e+00, 8.000000e+00]> : tensor<8xf32>)
// LLVM-DAG: llvm.mlir.global private constant @affine_const1(dense_resource<affine_b> : tensor<8xf32>)
// LLVM-DAG: llvm.mlir.addressof @affine_const0
//
// On a GPU, run:
// RUN: %if cuda %{ evo-opt %s --mlir-very-unsafe-disable-verifier-on-parsing --evo-lower-to-gpu="inline-constant-bytes=16" \
// RUN:     -gpu-lower-to-nvvm-pipeline="cubin-chip=sm_90 cubin-features=+ptx80 cubin-format=isa kernel-bare-ptr-calling-convention=1" \
// RUN: | %mlir_runner --shared-libs=%evo_cuda_runtime --shared-libs=%evo_runner_utils \
// RUN:     --entry-point-result=void 2>&1 \
// RUN: | FileCheck %s --implicit-check-not=evo_cuda_runtime %}

// y = x * w + b, w = [1 .. 8], b = [0.5, -0.5, 0.25, -0.25, 2, -2, 10, -10].
func.func @affine(%x: tensor<8xf32>) -> tensor<8xf32> {
  %w = arith.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> : tensor<8xf32>
  %b = arith.constant dense_resource<affine_b> : tensor<8xf32>
  %e = tensor.empty() : tensor<8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
    ins(%x, %w, %b : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %c: f32, %d: f32, %o: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %m, %d : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %xv = arith.constant dense<[1.0, 1.0, 2.0, 2.0, -1.0, -1.0, 0.5, 0.5]> : vector<8xf32>
  %x = memref.alloc() : memref<8xf32>
  vector.store %xv, %x[%c0] : memref<8xf32>, vector<8xf32>
  %t0 = gpu.wait async
  %dx, %t1 = gpu.alloc async [%t0] () : memref<8xf32>
  %dy, %t2 = gpu.alloc async [%t1] () : memref<8xf32>
  %t3 = gpu.memcpy async [%t2] %dx, %x : memref<8xf32>, memref<8xf32>
  gpu.wait [%t3]
  call @affine(%dx, %dy) : (memref<8xf32>, memref<8xf32>) -> ()
  %y = memref.alloc() : memref<8xf32>
  %u0 = gpu.wait async
  %u1 = gpu.memcpy async [%u0] %y, %dy : memref<8xf32>, memref<8xf32>
  %u2 = gpu.dealloc async [%u1] %dx : memref<8xf32>
  %u3 = gpu.dealloc async [%u2] %dy : memref<8xf32>
  gpu.wait [%u3]
  // CHECK: ( 1.5, 1.5, 6.25, 7.75, -3, -8, 13.5, -6 )
  %vy = vector.load %y[%c0] : memref<8xf32>, vector<8xf32>
  vector.print %vy : vector<8xf32>
  memref.dealloc %x : memref<8xf32>
  memref.dealloc %y : memref<8xf32>
  return
}
{-#
  dialect_resources: {
    builtin: {
      affine_b: "0x040000000000003F000000BF0000803E000080BE00000040000000C000002041000020C1"
    }
  }
#-}
