// REQUIRES: cuda
// RUN: evo-opt %s -gpu-lower-to-nvvm-pipeline="cubin-chip=sm_90 cubin-features=+ptx80 cubin-format=isa" \
// RUN: | %mlir_runner --shared-libs=%evo_cuda_runtime --shared-libs=%evo_runner_utils \
// RUN:     --entry-point-result=void 2>&1 \
// RUN: | FileCheck %s --implicit-check-not=evo_cuda_runtime

// Block-wide reductions: gpu.all_reduce (add, maximumf, ori, minsi) over each of two blocks of 256
// threads (8 warps: shuffles plus shared memory), and a warp reduction written with gpu.shuffle xor.
// x[i] = i, so block 0 sums 0..255 and block 1 sums 256..511.

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c256 = arith.constant 256 : index
  %c512 = arith.constant 512 : index

  %x = gpu.alloc host_shared () : memref<512xf32>
  scf.for %i = %c0 to %c512 step %c1 {
    %ii = arith.index_cast %i : index to i32
    %f = arith.sitofp %ii : i32 to f32
    memref.store %f, %x[%i] : memref<512xf32>
  }
  %sums = gpu.alloc host_shared () : memref<2xf32>
  %maxs = gpu.alloc host_shared () : memref<2xf32>
  %ors = gpu.alloc host_shared () : memref<2xi32>
  %mins = gpu.alloc host_shared () : memref<2xi32>
  %warps = gpu.alloc host_shared () : memref<16xf32>

  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %base = arith.muli %bx, %c256 : index
    %i = arith.addi %base, %tx : index
    %v = memref.load %x[%i] : memref<512xf32>
    %ii = arith.index_cast %i : index to i32
    // 1 << (i % 16), and i - 100.
    %c16i = arith.constant 16 : i32
    %one = arith.constant 1 : i32
    %sh = arith.remui %ii, %c16i : i32
    %bit = arith.shli %one, %sh : i32
    %c100 = arith.constant 100 : i32
    %shifted = arith.subi %ii, %c100 : i32

    %sum = gpu.all_reduce add %v uniform {} : (f32) -> (f32)
    %max = gpu.all_reduce maximumf %v uniform {} : (f32) -> (f32)
    %or = gpu.all_reduce or %bit uniform {} : (i32) -> (i32)
    %min = gpu.all_reduce minsi %shifted uniform {} : (i32) -> (i32)

    // Warp sum by butterfly shuffles: every lane ends up with the sum of its warp.
    %c32i = arith.constant 32 : i32
    %o16 = arith.constant 16 : i32
    %o8 = arith.constant 8 : i32
    %o4 = arith.constant 4 : i32
    %o2 = arith.constant 2 : i32
    %o1 = arith.constant 1 : i32
    %s16, %p16 = gpu.shuffle xor %v, %o16, %c32i : f32
    %a16 = arith.addf %v, %s16 : f32
    %s8, %p8 = gpu.shuffle xor %a16, %o8, %c32i : f32
    %a8 = arith.addf %a16, %s8 : f32
    %s4, %p4 = gpu.shuffle xor %a8, %o4, %c32i : f32
    %a4 = arith.addf %a8, %s4 : f32
    %s2, %p2 = gpu.shuffle xor %a4, %o2, %c32i : f32
    %a2 = arith.addf %a4, %s2 : f32
    %s1, %p1 = gpu.shuffle xor %a2, %o1, %c32i : f32
    %warpSum = arith.addf %a2, %s1 : f32

    %c32 = arith.constant 32 : index
    %lane = arith.remui %i, %c32 : index
    %warp = arith.divui %i, %c32 : index
    %lane0 = arith.cmpi eq, %lane, %c0 : index
    scf.if %lane0 {
      memref.store %warpSum, %warps[%warp] : memref<16xf32>
    }
    %thread0 = arith.cmpi eq, %tx, %c0 : index
    scf.if %thread0 {
      memref.store %sum, %sums[%bx] : memref<2xf32>
      memref.store %max, %maxs[%bx] : memref<2xf32>
      memref.store %or, %ors[%bx] : memref<2xi32>
      memref.store %min, %mins[%bx] : memref<2xi32>
    }
    gpu.terminator
  }

  %vs = vector.load %sums[%c0] : memref<2xf32>, vector<2xf32>
  %vm = vector.load %maxs[%c0] : memref<2xf32>, vector<2xf32>
  %vo = vector.load %ors[%c0] : memref<2xi32>, vector<2xi32>
  %vn = vector.load %mins[%c0] : memref<2xi32>, vector<2xi32>
  %vw = vector.load %warps[%c0] : memref<16xf32>, vector<16xf32>
  // CHECK: ( 32640, 98176 )
  vector.print %vs : vector<2xf32>
  // CHECK-NEXT: ( 255, 511 )
  vector.print %vm : vector<2xf32>
  // CHECK-NEXT: ( 65535, 65535 )
  vector.print %vo : vector<2xi32>
  // CHECK-NEXT: ( -100, 156 )
  vector.print %vn : vector<2xi32>
  // Warp w sums 32w .. 32w + 31: 1024 w + 496.
  // CHECK-NEXT: ( 496, 1520, 2544, 3568, 4592, 5616, 6640, 7664, 8688, 9712, 10736, 11760, 12784, 13808, 14832, 15856 )
  vector.print %vw : vector<16xf32>
  return
}
