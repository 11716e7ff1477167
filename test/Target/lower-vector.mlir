// RUN: evo-opt %s -split-input-file --pass-pipeline='builtin.module(gpu.module(evo-lower-vector))' | FileCheck %s
//
// evo-lower-vector, the first step of the kernel pipeline: vector ops the NVVM conversion has no
// pattern for become ones it has (emit-ptx-vector.mlir checks the PTX of each family); the 1-d
// loads, stores, extracts and from_elements the built-in emitters write are left as they are.

// A 1-d strided slice is a shuffle.
// CHECK-LABEL: gpu.func @strided_slice
// CHECK:         %[[S:.*]] = vector.shuffle %arg0, %arg0 [2, 3, 4, 5] : vector<8xf32>, vector<8xf32>
// CHECK:         vector.store %[[S]], %arg1
// CHECK-NOT:     vector.extract_strided_slice
gpu.module @strided_slice {
  gpu.func @strided_slice(%v: vector<8xf32>, %y: memref<4xf32>) {
    %c0 = arith.constant 0 : index
    %s = vector.extract_strided_slice %v {offsets = [2], sizes = [4], strides = [1]} : vector<8xf32> to vector<4xf32>
    vector.store %s, %y[%c0] : memref<4xf32>, vector<4xf32>
    gpu.return
  }
}

// -----

// A contraction becomes outer products (rows of vector.fma), its 2-d write two 1-d stores.
// CHECK-LABEL: gpu.func @contract
// CHECK-COUNT-4: vector.fma {{.*}} : vector<2xf32>
// CHECK-COUNT-2: vector.store {{.*}} : memref<2x2xf32>, vector<2xf32>
// CHECK-NOT:     vector.{{contract|outerproduct|transfer_write}}
gpu.module @contract {
  gpu.func @contract(%a: vector<2x2xf32>, %b: vector<2x2xf32>, %c: vector<2x2xf32>, %y: memref<2x2xf32>) {
    %c0 = arith.constant 0 : index
    %r = vector.contract {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %a, %b, %c : vector<2x2xf32>, vector<2x2xf32> into vector<2x2xf32>
    vector.transfer_write %r, %y[%c0, %c0] {in_bounds = [true, true]} : vector<2x2xf32>, memref<2x2xf32>
    gpu.return
  }
}

// -----

// A 2-d transfer that may leave the buffer: fully unrolled into rows (no staging buffer in local
// memory), each row behind an scf.if on its index and read by a masked load.
// CHECK-LABEL: gpu.func @transfer_2d
// CHECK-NOT:     memref.alloca
// CHECK:         scf.if
// CHECK:           vector.maskedload %arg0[%arg1, %arg1]
// CHECK:         scf.if
// CHECK:           vector.maskedload
// CHECK-NOT:     vector.transfer_read
gpu.module @transfer_2d {
  gpu.func @transfer_2d(%x: memref<64x64xf32>, %i: index) -> vector<2x4xf32> {
    %pad = arith.constant 0.0 : f32
    %v = vector.transfer_read %x[%i, %i], %pad : memref<64x64xf32>, vector<2x4xf32>
    gpu.return %v : vector<2x4xf32>
  }
}

// -----

// What the built-in emitters write is left alone.
// CHECK-LABEL: gpu.func @builtin
// CHECK-NEXT:    %[[V:.*]] = vector.load %arg0[%arg2] {alignment = 16 : i64} : memref<64xf32>, vector<4xf32>
// CHECK-NEXT:    %[[E:.*]] = vector.extract %[[V]][1] : f32 from vector<4xf32>
// CHECK-NEXT:    %[[W:.*]] = vector.from_elements %[[E]], %[[E]], %[[E]], %[[E]] : vector<4xf32>
// CHECK-NEXT:    vector.store %[[W]], %arg1[%arg2] {alignment = 16 : i64} : memref<64xf32>, vector<4xf32>
// CHECK-NEXT:    gpu.return
gpu.module @builtin {
  gpu.func @builtin(%x: memref<64xf32>, %y: memref<64xf32>, %i: index) {
    %v = vector.load %x[%i] {alignment = 16} : memref<64xf32>, vector<4xf32>
    %e = vector.extract %v[1] : f32 from vector<4xf32>
    %w = vector.from_elements %e, %e, %e, %e : vector<4xf32>
    vector.store %w, %y[%i] {alignment = 16} : memref<64xf32>, vector<4xf32>
    gpu.return
  }
}
