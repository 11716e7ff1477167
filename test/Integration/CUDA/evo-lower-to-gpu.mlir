// REQUIRES: cuda
// RUN: evo-opt %s --mlir-very-unsafe-disable-verifier-on-parsing --evo-lower-to-gpu \
// RUN:     -gpu-lower-to-nvvm-pipeline="cubin-chip=sm_90 cubin-features=+ptx80 cubin-format=isa kernel-bare-ptr-calling-convention=1" \
// RUN: | %mlir_runner --shared-libs=%evo_cuda_runtime --shared-libs=%evo_runner_utils \
// RUN:     --entry-point-result=void 2>&1 \
// RUN: | FileCheck %s --implicit-check-not=evo_cuda_runtime

// evo's own flow: linalg functions on tensors lowered by evo-lower-to-gpu into host functions on
// bare buffers (inputs, then outputs) and kernels with the bare-pointer ABI, then upstream's
// pipeline. @main fills device buffers and calls the host functions; it is written against their
// lowered signatures, so the input only verifies after evo-lower-to-gpu (hence parsing without
// the verifier). The host functions allocate scratch buffers with the async gpu.alloc/dealloc
// forms, which gpu-to-llvm lowers directly.

// Matmul (tiled through shared memory, from evo.knobs), then relu through a device scratch buffer.
func.func @mm_relu(%a: tensor<32x16xf32>, %b: tensor<16x24xf32>) -> tensor<32x24xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x24xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<32x24xf32>) -> tensor<32x24xf32>
  %c = linalg.matmul {evo.knobs = {tile_sizes = [16, 8, 8], thread_tile = [2, 2]}}
         ins(%a, %b : tensor<32x16xf32>, tensor<16x24xf32>) outs(%acc : tensor<32x24xf32>) -> tensor<32x24xf32>
  %r = linalg.max ins(%c, %acc : tensor<32x24xf32>, tensor<32x24xf32>) outs(%e : tensor<32x24xf32>) -> tensor<32x24xf32>
  return %r : tensor<32x24xf32>
}

// Row sums, one warp per row (shuffles).
func.func @row_sum(%x: tensor<8x100xf32>) -> tensor<8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %r = linalg.reduce ins(%x : tensor<8x100xf32>) outs(%acc : tensor<8xf32>) dimensions = [1]
         {evo.knobs = {reduction = "warp"}}
    (%in: f32, %init: f32) {
      %s = arith.addf %in, %init : f32
      linalg.yield %s : f32
    }
  return %r : tensor<8xf32>
}

// m[i][j] = float((i * p + j * q) % r - s), on the host.
func.func @fill(%m: memref<?x?xf32>, %p: index, %q: index, %r: index, %s: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = memref.dim %m, %c0 : memref<?x?xf32>
  %cols = memref.dim %m, %c1 : memref<?x?xf32>
  scf.for %i = %c0 to %rows step %c1 {
    scf.for %j = %c0 to %cols step %c1 {
      %ip = arith.muli %i, %p : index
      %jq = arith.muli %j, %q : index
      %sum = arith.addi %ip, %jq : index
      %mod = arith.remui %sum, %r : index
      %v = arith.subi %mod, %s : index
      %vi = arith.index_cast %v : index to i64
      %vf = arith.sitofp %vi : i64 to f32
      memref.store %vf, %m[%i, %j] : memref<?x?xf32>
    }
  }
  return
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %c7 = arith.constant 7 : index
  %c9 = arith.constant 9 : index
  %c11 = arith.constant 11 : index
  %c13 = arith.constant 13 : index
  %c24 = arith.constant 24 : index
  %c32 = arith.constant 32 : index
  %c37 = arith.constant 37 : index

  // Host inputs: a[i][k] = (7i + 3k) % 11 - 5, b[k][j] = (5k + 2j) % 9 - 4, x[i][j] = (37i + 11j) % 13 - 6.
  %a = memref.alloc() : memref<32x16xf32>
  %b = memref.alloc() : memref<16x24xf32>
  %x = memref.alloc() : memref<8x100xf32>
  %ad = memref.cast %a : memref<32x16xf32> to memref<?x?xf32>
  %bd = memref.cast %b : memref<16x24xf32> to memref<?x?xf32>
  %xd = memref.cast %x : memref<8x100xf32> to memref<?x?xf32>
  call @fill(%ad, %c7, %c3, %c11, %c5) : (memref<?x?xf32>, index, index, index, index) -> ()
  call @fill(%bd, %c5, %c2, %c9, %c4) : (memref<?x?xf32>, index, index, index, index) -> ()
  call @fill(%xd, %c37, %c11, %c13, %c6) : (memref<?x?xf32>, index, index, index, index) -> ()

  // Device buffers, filled from the host.
  %t0 = gpu.wait async
  %da, %t1 = gpu.alloc async [%t0] () : memref<32x16xf32>
  %db, %t2 = gpu.alloc async [%t1] () : memref<16x24xf32>
  %dc, %t3 = gpu.alloc async [%t2] () : memref<32x24xf32>
  %dx, %t4 = gpu.alloc async [%t3] () : memref<8x100xf32>
  %dy, %t5 = gpu.alloc async [%t4] () : memref<8xf32>
  %t6 = gpu.memcpy async [%t5] %da, %a : memref<32x16xf32>, memref<32x16xf32>
  %t7 = gpu.memcpy async [%t6] %db, %b : memref<16x24xf32>, memref<16x24xf32>
  %t8 = gpu.memcpy async [%t7] %dx, %x : memref<8x100xf32>, memref<8x100xf32>
  gpu.wait [%t8]

  call @mm_relu(%da, %db, %dc) : (memref<32x16xf32>, memref<16x24xf32>, memref<32x24xf32>) -> ()
  call @row_sum(%dx, %dy) : (memref<8x100xf32>, memref<8xf32>) -> ()

  %c = memref.alloc() : memref<32x24xf32>
  %y = memref.alloc() : memref<8xf32>
  %u0 = gpu.wait async
  %u1 = gpu.memcpy async [%u0] %c, %dc : memref<32x24xf32>, memref<32x24xf32>
  %u2 = gpu.memcpy async [%u1] %y, %dy : memref<8xf32>, memref<8xf32>
  %u3 = gpu.dealloc async [%u2] %da : memref<32x16xf32>
  %u4 = gpu.dealloc async [%u3] %db : memref<16x24xf32>
  %u5 = gpu.dealloc async [%u4] %dc : memref<32x24xf32>
  %u6 = gpu.dealloc async [%u5] %dx : memref<8x100xf32>
  %u7 = gpu.dealloc async [%u6] %dy : memref<8xf32>
  gpu.wait [%u7]

  // CHECK:      ( 74, 0, 0, 0, 35, 23, 0, 0, 5, 74, 0, 0, 0, 35, 23, 0, 0, 5, 74, 0, 0, 0, 35, 23 )
  // CHECK-NEXT: ( 0, 0, 52, 12, 0, 0, 18, 50, 0, 0, 0, 52, 12, 0, 0, 18, 50, 0, 0, 0, 52, 12, 0, 0 )
  // CHECK-NEXT: ( 0, 0, 70, 0, 0, 0, 24, 26, 0, 0, 0, 70, 0, 0, 0, 24, 26, 0, 0, 0, 70, 0, 0, 0 )
  %r0 = vector.load %c[%c0, %c0] : memref<32x24xf32>, vector<24xf32>
  vector.print %r0 : vector<24xf32>
  %r13 = vector.load %c[%c13, %c0] : memref<32x24xf32>, vector<24xf32>
  vector.print %r13 : vector<24xf32>
  %c31 = arith.constant 31 : index
  %r31 = vector.load %c[%c31, %c0] : memref<32x24xf32>, vector<24xf32>
  vector.print %r31 : vector<24xf32>

  // Every element, weighted by its position: sum of c[i][j] * (24 i + j + 1).
  // CHECK-NEXT: 4069136
  %zero = arith.constant 0.0 : f64
  %check = scf.for %i = %c0 to %c32 step %c1 iter_args(%acc = %zero) -> (f64) {
    %row = scf.for %j = %c0 to %c24 step %c1 iter_args(%racc = %acc) -> (f64) {
      %v = memref.load %c[%i, %j] : memref<32x24xf32>
      %vd = arith.extf %v : f32 to f64
      %i24 = arith.muli %i, %c24 : index
      %pos = arith.addi %i24, %j : index
      %pos1 = arith.addi %pos, %c1 : index
      %pi = arith.index_cast %pos1 : index to i64
      %w = arith.sitofp %pi : i64 to f64
      %term = arith.mulf %vd, %w : f64
      %next = arith.addf %racc, %term : f64
      scf.yield %next : f64
    }
    scf.yield %row : f64
  }
  %checki = arith.fptosi %check : f64 to i64
  vector.print %checki : i64

  // CHECK-NEXT: ( 4, 12, 7, 2, -3, -8, 0, 8 )
  %vy = vector.load %y[%c0] : memref<8xf32>, vector<8xf32>
  vector.print %vy : vector<8xf32>

  memref.dealloc %a : memref<32x16xf32>
  memref.dealloc %b : memref<16x24xf32>
  memref.dealloc %x : memref<8x100xf32>
  memref.dealloc %c : memref<32x24xf32>
  memref.dealloc %y : memref<8xf32>
  return
}
