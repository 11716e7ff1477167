// Hand-written kernels (an LLM's reply, a user's gpu.module) use the whole vector dialect. The
// NVVM conversion has patterns only for vector ops with an LLVM counterpart; evo-lower-vector
// (first in the kernel pipeline, lib/Target/LowerVector.cpp) lowers the others, so each kernel
// below compiles to PTX (and, with ptxas, assembles), and its PTX does what the ops say: one
// case per vector op family, n-d vectors throughout, and one of memref views. Without the two
// passes 16 of these 18 kernels fail in the translation to LLVM IR (e.g. "missing
// `LLVMTranslationDialectInterface` registration ... vector.shape_cast", or an
// unrealized_conversion_cast left by a transfer or a subview).
//
// The cases are in the alphabetical order of their gpu.modules: the PTX files are read in it.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: evo-opt %s -split-input-file -evo-emit-ptx="output-dir=%t ptxas=none" -o /dev/null
// RUN: cat %t/*.ptx | FileCheck %s
// RUN: %if ptxas %{ evo-opt %s -split-input-file -evo-emit-ptx="output-dir=%t/asm" -o /dev/null %}

// n-d bitcast (and 2-d transfers): the sign flip is an integer xor on every element.
// CHECK-LABEL: .entry bitcast(
// CHECK-COUNT-8: xor.b32 %r{{[0-9]+}}, %r{{[0-9]+}}, -2147483648;
// CHECK-NOT:     xor.b32
// CHECK:         ret;
module attributes {gpu.container_module} {
  gpu.module @bitcast {
    gpu.func @bitcast(%x: memref<64x64xf32>, %y: memref<64x64xf32>) kernel {
      %c0 = arith.constant 0 : index
      %pad = arith.constant 0.0 : f32
      %sign = arith.constant dense<-2147483648> : vector<2x4xi32>
      %t = gpu.thread_id x
      %v = vector.transfer_read %x[%t, %c0], %pad {in_bounds = [true, true]} : memref<64x64xf32>, vector<2x4xf32>
      %i = vector.bitcast %v : vector<2x4xf32> to vector<2x4xi32>
      %n = arith.xori %i, %sign : vector<2x4xi32>
      %f = vector.bitcast %n : vector<2x4xi32> to vector<2x4xf32>
      vector.transfer_write %f, %y[%t, %c0] {in_bounds = [true, true]} : vector<2x4xf32>, memref<64x64xf32>
      gpu.return
    }
  }
}

// -----

// Broadcasts of a scalar and of a row to 4x4: four distinct sums, each stored in every row.
// CHECK-LABEL: .entry broadcast(
// CHECK-COUNT-4: add.rn.f32
// CHECK-NOT:     add.rn.f32
// CHECK-COUNT-16: st.global.b32
// CHECK:         ret;
module attributes {gpu.container_module} {
  gpu.module @broadcast {
    gpu.func @broadcast(%x: memref<64xf32>, %r: memref<4xf32>, %y: memref<64x64xf32>) kernel {
      %c0 = arith.constant 0 : index
      %t = gpu.thread_id x
      %s = memref.load %x[%t] : memref<64xf32>
      %row = vector.load %r[%c0] : memref<4xf32>, vector<4xf32>
      %a = vector.broadcast %s : f32 to vector<4x4xf32>
      %b = vector.broadcast %row : vector<4xf32> to vector<4x4xf32>
      %sum = arith.addf %a, %b : vector<4x4xf32>
      vector.transfer_write %sum, %y[%t, %c0] {in_bounds = [true, true]} : vector<4x4xf32>, memref<64x64xf32>
      gpu.return
    }
  }
}

// -----

// A 4x4x4 matmul contraction becomes outer products: 64 fused multiply-adds, nothing else.
// CHECK-LABEL: .entry contract(
// CHECK-COUNT-64: fma.rn.f32
// CHECK-NOT:     {{fma|mul|add}}.rn.f32
// CHECK:         ret;
module attributes {gpu.container_module} {
  gpu.module @contract {
    gpu.func @contract(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %c: memref<64x64xf32>) kernel {
      %c0 = arith.constant 0 : index
      %pad = arith.constant 0.0 : f32
      %t = gpu.thread_id x
      %va = vector.transfer_read %a[%t, %c0], %pad {in_bounds = [true, true]} : memref<64x64xf32>, vector<4x4xf32>
      %vb = vector.transfer_read %b[%c0, %t], %pad {in_bounds = [true, true]} : memref<64x64xf32>, vector<4x4xf32>
      %vc = vector.transfer_read %c[%t, %t], %pad {in_bounds = [true, true]} : memref<64x64xf32>, vector<4x4xf32>
      %r = vector.contract {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %va, %vb, %vc : vector<4x4xf32>, vector<4x4xf32> into vector<4x4xf32>
      vector.transfer_write %r, %c[%t, %t] {in_bounds = [true, true]} : vector<4x4xf32>, memref<64x64xf32>
      gpu.return
    }
  }
}

// -----

// f16 operands, f32 accumulator, K = 2: per k, the 8 operands it reads are widened once, then
// 4x4 f32 FMAs.
// CHECK-LABEL: .entry contract_mixed(
// CHECK-COUNT-8: cvt.f32.f16
// CHECK-COUNT-16: fma.rn.f32
// CHECK-COUNT-8: cvt.f32.f16
// CHECK-COUNT-16: fma.rn.f32
// CHECK-NOT:     {{cvt.f32.f16|fma.rn.f32}}
// CHECK:         ret;
module attributes {gpu.container_module} {
  gpu.module @contract_mixed {
    gpu.func @contract_mixed(%a: memref<64x64xf16>, %c: memref<64x64xf32>) kernel {
      %c0 = arith.constant 0 : index
      %pad = arith.constant 0.0 : f16
      %padf = arith.constant 0.0 : f32
      %t = gpu.thread_id x
      %va = vector.transfer_read %a[%t, %c0], %pad {in_bounds = [true, true]} : memref<64x64xf16>, vector<4x2xf16>
      %vb = vector.transfer_read %a[%c0, %t], %pad {in_bounds = [true, true]} : memref<64x64xf16>, vector<2x4xf16>
      %vc = vector.transfer_read %c[%t, %t], %padf {in_bounds = [true, true]} : memref<64x64xf32>, vector<4x4xf32>
      %r = vector.contract {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %va, %vb, %vc : vector<4x2xf16>, vector<2x4xf16> into vector<4x4xf32>
      vector.transfer_write %r, %c[%t, %t] {in_bounds = [true, true]} : vector<4x4xf32>, memref<64x64xf32>
      gpu.return
    }
  }
}

// -----

// arith and math on vector<4x4xf32>: every op on all 16 elements.
// CHECK-LABEL: .entry elementwise_nd(
// CHECK-COUNT-16: max.NaN.f32
// CHECK-COUNT-16: ex2.approx.ftz.f32
// CHECK-COUNT-16: st.global.b32
// CHECK:         ret;
module attributes {gpu.container_module} {
  gpu.module @elementwise_nd {
    gpu.func @elementwise_nd(%x: memref<64x64xf32>, %y: memref<64x64xf32>) kernel {
      %c0 = arith.constant 0 : index
      %pad = arith.constant 0.0 : f32
      %zero = arith.constant dense<0.0> : vector<4x4xf32>
      %t = gpu.thread_id x
      %v = vector.transfer_read %x[%t, %c0], %pad {in_bounds = [true, true]} : memref<64x64xf32>, vector<4x4xf32>
      %m = arith.maximumf %v, %zero : vector<4x4xf32>
      %e = math.exp %m : vector<4x4xf32>
      %p = arith.mulf %e, %v : vector<4x4xf32>
      vector.transfer_write %p, %y[%t, %c0] {in_bounds = [true, true]} : vector<4x4xf32>, memref<64x64xf32>
      gpu.return
    }
  }
}

// -----

// 1-d: elements 3..6 of a row go to 0..3 (bytes 12..24 to 0..12); 2-d: rows 1..2, columns
// 2..5 of a 4x8 tile at column 8 (x[t+1][10] is byte 296, x[t+2][13] byte 564) go to rows 0..1,
// columns 8..11 (bytes 32 and 300).
// CHECK-LABEL: .entry extract_strided_slice(
// CHECK-DAG:     ld.global.b32 [[E3:%[a-z]+[0-9]+]], [%rd{{[0-9]+}}+12];
// CHECK-DAG:     ld.global.b32 [[E6:%[a-z]+[0-9]+]], [%rd{{[0-9]+}}+24];
// CHECK-DAG:     st.global.b32 [%rd{{[0-9]+}}], [[E3]];
// CHECK-DAG:     st.global.b32 [%rd{{[0-9]+}}+12], [[E6]];
// CHECK-DAG:     ld.global.b32 [[F10:%[a-z]+[0-9]+]], [%rd{{[0-9]+}}+296];
// CHECK-DAG:     ld.global.b32 [[F213:%[a-z]+[0-9]+]], [%rd{{[0-9]+}}+564];
// CHECK-DAG:     st.global.b32 [%rd{{[0-9]+}}+32], [[F10]];
// CHECK-DAG:     st.global.b32 [%rd{{[0-9]+}}+300], [[F213]];
// CHECK:         ret;
module attributes {gpu.container_module} {
  gpu.module @extract_strided_slice {
    gpu.func @extract_strided_slice(%x: memref<64x64xf32>, %y: memref<64x64xf32>) kernel {
      %c0 = arith.constant 0 : index
      %c8 = arith.constant 8 : index
      %pad = arith.constant 0.0 : f32
      %t = gpu.thread_id x
      %v = vector.load %x[%t, %c0] : memref<64x64xf32>, vector<8xf32>
      %s = vector.extract_strided_slice %v {offsets = [3], sizes = [4], strides = [1]} : vector<8xf32> to vector<4xf32>
      vector.store %s, %y[%t, %c0] : memref<64x64xf32>, vector<4xf32>
      %w = vector.transfer_read %x[%t, %c8], %pad {in_bounds = [true, true]} : memref<64x64xf32>, vector<4x8xf32>
      %s2 = vector.extract_strided_slice %w {offsets = [1, 2], sizes = [2, 4], strides = [1, 1]} : vector<4x8xf32> to vector<2x4xf32>
      vector.transfer_write %s2, %y[%t, %c8] {in_bounds = [true, true]} : vector<2x4xf32>, memref<64x64xf32>
      gpu.return
    }
  }
}

// -----

// vector.fma on vector<4x4xf32>: 16 FMAs.
// CHECK-LABEL: .entry fma(
// CHECK-COUNT-16: fma.rn.f32
// CHECK-NOT:     fma.rn.f32
// CHECK:         ret;
module attributes {gpu.container_module} {
  gpu.module @fma {
    gpu.func @fma(%x: memref<64x64xf32>, %y: memref<64x64xf32>) kernel {
      %c0 = arith.constant 0 : index
      %c4 = arith.constant 4 : index
      %c8 = arith.constant 8 : index
      %pad = arith.constant 0.0 : f32
      %t = gpu.thread_id x
      %a = vector.transfer_read %x[%t, %c0], %pad {in_bounds = [true, true]} : memref<64x64xf32>, vector<4x4xf32>
      %b = vector.transfer_read %x[%t, %c4], %pad {in_bounds = [true, true]} : memref<64x64xf32>, vector<4x4xf32>
      %c = vector.transfer_read %x[%t, %c8], %pad {in_bounds = [true, true]} : memref<64x64xf32>, vector<4x4xf32>
      %r = vector.fma %a, %b, %c : vector<4x4xf32>
      vector.transfer_write %r, %y[%t, %c0] {in_bounds = [true, true]} : vector<4x4xf32>, memref<64x64xf32>
      gpu.return
    }
  }
}

// -----

// A 2x2 from_elements stored as two rows, and its elements reversed through to_elements.
// CHECK-LABEL: .entry from_elements(
// CHECK:         ld.global.b32 [[S:%r[0-9]+]], [%rd{{[0-9]+}}];
// CHECK-DAG:     add.rn.f32 [[D:%r[0-9]+]], [[S]], [[S]];
// CHECK-DAG:     mul.rn.f32 [[M:%r[0-9]+]], [[S]], [[S]];
// CHECK-DAG:     neg.f32 [[N:%r[0-9]+]], [[S]];
// CHECK-DAG:     st.global.b32 [%rd{{[0-9]+}}], [[S]];
// CHECK-DAG:     st.global.b32 [%rd{{[0-9]+}}+4], [[D]];
// CHECK-DAG:     st.global.b32 [%rd{{[0-9]+}}+256], [[M]];
// CHECK-DAG:     st.global.b32 [%rd{{[0-9]+}}+260], [[N]];
// CHECK-DAG:     st.global.b32 [%rd{{[0-9]+}}+16], [[N]];
// CHECK-DAG:     st.global.b32 [%rd{{[0-9]+}}+28], [[S]];
// CHECK:         ret;
module attributes {gpu.container_module} {
  gpu.module @from_elements {
    gpu.func @from_elements(%x: memref<64xf32>, %y: memref<64x64xf32>) kernel {
      %c0 = arith.constant 0 : index
      %c4 = arith.constant 4 : index
      %t = gpu.thread_id x
      %s = memref.load %x[%t] : memref<64xf32>
      %d = arith.addf %s, %s : f32
      %m = arith.mulf %s, %s : f32
      %n = arith.negf %s : f32
      %v = vector.from_elements %s, %d, %m, %n : vector<2x2xf32>
      %e:4 = vector.to_elements %v : vector<2x2xf32>
      %w = vector.from_elements %e#3, %e#2, %e#1, %e#0 : vector<4xf32>
      vector.transfer_write %v, %y[%t, %c0] {in_bounds = [true, true]} : vector<2x2xf32>, memref<64x64xf32>
      vector.store %w, %y[%t, %c4] : memref<64x64xf32>, vector<4xf32>
      gpu.return
    }
  }
}

// -----

// A masked gather with vector.step: each lane loads its index, then, when its mask bit is set,
// the element at that index.
// CHECK-LABEL: .entry gather(
// CHECK-COUNT-4: mul.wide.s32 %rd{{[0-9]+}}, %r{{[0-9]+}}, 4;
// CHECK-NOT:     mul.wide.s32
// CHECK:         ret;
module attributes {gpu.container_module} {
  gpu.module @gather {
    gpu.func @gather(%x: memref<64xf32>, %idx: memref<64xi32>, %y: memref<64xf32>) kernel {
      %c0 = arith.constant 0 : index
      %c4 = arith.constant 4 : index
      %pass = arith.constant dense<0.0> : vector<4xf32>
      %t = gpu.thread_id x
      %base = arith.muli %t, %c4 : index
      %iv = vector.load %idx[%base] : memref<64xi32>, vector<4xi32>
      %step = vector.step : vector<4xindex>
      %lim = vector.broadcast %t : index to vector<4xindex>
      %mask = arith.cmpi ult, %step, %lim : vector<4xindex>
      %g = vector.gather %x[%c0] [%iv], %mask, %pass : memref<64xf32>, vector<4xi32>, vector<4xi1>, vector<4xf32> into vector<4xf32>
      vector.store %g, %y[%base] : memref<64xf32>, vector<4xf32>
      gpu.return
    }
  }
}

// -----

// A 2x2 tile at (0, 1) and a row of 2 at (3, 5) inserted into a zero 4x8 tile.
// CHECK-LABEL: .entry insert_strided_slice(
// CHECK-DAG:     ld.global.b32 [[W00:%r[0-9]+]], [%rd{{[0-9]+}}];
// CHECK-DAG:     ld.global.b32 [[W01:%r[0-9]+]], [%rd{{[0-9]+}}+4];
// CHECK-DAG:     ld.global.b32 [[W10:%r[0-9]+]], [%rd{{[0-9]+}}+256];
// CHECK-DAG:     ld.global.b32 [[W11:%r[0-9]+]], [%rd{{[0-9]+}}+260];
// CHECK-DAG:     st.global.b32 [%rd{{[0-9]+}}], 0;
// CHECK-DAG:     st.global.b32 [%rd{{[0-9]+}}+4], [[W00]];
// CHECK-DAG:     st.global.b32 [%rd{{[0-9]+}}+8], [[W01]];
// CHECK-DAG:     st.global.b32 [%rd{{[0-9]+}}+260], [[W10]];
// CHECK-DAG:     st.global.b32 [%rd{{[0-9]+}}+264], [[W11]];
// CHECK-DAG:     st.global.b32 [%rd{{[0-9]+}}+788], [[W00]];
// CHECK-DAG:     st.global.b32 [%rd{{[0-9]+}}+792], [[W01]];
// CHECK:         ret;
module attributes {gpu.container_module} {
  gpu.module @insert_strided_slice {
    gpu.func @insert_strided_slice(%x: memref<64x64xf32>, %y: memref<64x64xf32>) kernel {
      %c0 = arith.constant 0 : index
      %pad = arith.constant 0.0 : f32
      %zero = arith.constant dense<0.0> : vector<4x8xf32>
      %t = gpu.thread_id x
      %v = vector.load %x[%t, %c0] : memref<64x64xf32>, vector<2xf32>
      %w = vector.transfer_read %x[%t, %c0], %pad {in_bounds = [true, true]} : memref<64x64xf32>, vector<2x2xf32>
      %a = vector.insert_strided_slice %v, %zero {offsets = [3, 5], strides = [1]} : vector<2xf32> into vector<4x8xf32>
      %b = vector.insert_strided_slice %w, %a {offsets = [0, 1], strides = [1, 1]} : vector<2x2xf32> into vector<4x8xf32>
      vector.transfer_write %b, %y[%t, %c0] {in_bounds = [true, true]} : vector<4x8xf32>, memref<64x64xf32>
      gpu.return
    }
  }
}

// -----

// Row sums of a 4x8 tile (4 ordered chains of 8 adds from the accumulators) and column maxima
// (8 chains of 4).
// CHECK-LABEL: .entry multi_reduction(
// CHECK-COUNT-32: add.rn.f32
// CHECK-COUNT-32: max.NaN.f32
// CHECK-COUNT-12: st.global.b32
// CHECK-NOT:     {{add.rn|max.NaN}}.f32
// CHECK:         ret;
module attributes {gpu.container_module} {
  gpu.module @multi_reduction {
    gpu.func @multi_reduction(%x: memref<64x64xf32>, %y: memref<64x64xf32>) kernel {
      %c0 = arith.constant 0 : index
      %c8 = arith.constant 8 : index
      %pad = arith.constant 0.0 : f32
      %t = gpu.thread_id x
      %v = vector.transfer_read %x[%t, %c0], %pad {in_bounds = [true, true]} : memref<64x64xf32>, vector<4x8xf32>
      %acc = vector.load %y[%t, %c0] : memref<64x64xf32>, vector<4xf32>
      %rows = vector.multi_reduction <add>, %v, %acc [1] : vector<4x8xf32> to vector<4xf32>
      %macc = vector.load %y[%t, %c0] : memref<64x64xf32>, vector<8xf32>
      %cols = vector.multi_reduction <maximumf>, %v, %macc [0] : vector<4x8xf32> to vector<8xf32>
      vector.store %rows, %y[%t, %c8] : memref<64x64xf32>, vector<4xf32>
      vector.store %cols, %y[%t, %c0] : memref<64x64xf32>, vector<8xf32>
      gpu.return
    }
  }
}

// -----

// An outer product with accumulator: 16 FMAs.
// CHECK-LABEL: .entry outerproduct(
// CHECK-COUNT-16: fma.rn.f32
// CHECK-NOT:     fma.rn.f32
// CHECK:         ret;
module attributes {gpu.container_module} {
  gpu.module @outerproduct {
    gpu.func @outerproduct(%x: memref<64x64xf32>, %y: memref<64x64xf32>) kernel {
      %c0 = arith.constant 0 : index
      %c4 = arith.constant 4 : index
      %pad = arith.constant 0.0 : f32
      %t = gpu.thread_id x
      %a = vector.load %x[%t, %c0] : memref<64x64xf32>, vector<4xf32>
      %b = vector.load %x[%t, %c4] : memref<64x64xf32>, vector<4xf32>
      %acc = vector.transfer_read %y[%t, %c0], %pad {in_bounds = [true, true]} : memref<64x64xf32>, vector<4x4xf32>
      %r = vector.outerproduct %a, %b, %acc {kind = #vector.kind<add>} : vector<4xf32>, vector<4xf32>
      vector.transfer_write %r, %y[%t, %c0] {in_bounds = [true, true]} : vector<4x4xf32>, memref<64x64xf32>
      gpu.return
    }
  }
}

// -----

// vector.reduction: a max tree, an ordered sum seeded with the max, an integer xor tree.
// CHECK-LABEL: .entry reduction(
// CHECK-COUNT-7: max.NaN.f32
// CHECK-COUNT-8: add.rn.f32
// CHECK-COUNT-7: xor.b32
// CHECK-NOT:     {{max.NaN.f32|add.rn.f32|xor.b32}}
// CHECK:         ret;
module attributes {gpu.container_module} {
  gpu.module @reduction {
    gpu.func @reduction(%x: memref<64x64xf32>, %n: memref<64x64xi32>, %y: memref<64xf32>, %z: memref<64xi32>) kernel {
      %c0 = arith.constant 0 : index
      %t = gpu.thread_id x
      %v = vector.load %x[%t, %c0] : memref<64x64xf32>, vector<8xf32>
      %m = vector.reduction <maximumf>, %v : vector<8xf32> into f32
      %s = vector.reduction <add>, %v, %m : vector<8xf32> into f32
      %i = vector.load %n[%t, %c0] : memref<64x64xi32>, vector<8xi32>
      %k = vector.reduction <xor>, %i : vector<8xi32> into i32
      memref.store %s, %y[%t] : memref<64xf32>
      memref.store %k, %z[%t] : memref<64xi32>
      gpu.return
    }
  }
}

// -----

// shape_cast to 4x4, transpose, shape_cast back: aligned 128-bit loads of the four rows, and
// 128-bit stores of the four columns.
// CHECK-LABEL: .entry shape_cast_transpose(
// CHECK-DAG:     ld.global.v4.b32 {[[A0:%r[0-9]+]], [[A1:%r[0-9]+]], [[A2:%r[0-9]+]], [[A3:%r[0-9]+]]}, [%rd{{[0-9]+}}];
// CHECK-DAG:     ld.global.v4.b32 {[[B0:%r[0-9]+]], [[B1:%r[0-9]+]], [[B2:%r[0-9]+]], [[B3:%r[0-9]+]]}, [%rd{{[0-9]+}}+16];
// CHECK-DAG:     ld.global.v4.b32 {[[C0:%r[0-9]+]], [[C1:%r[0-9]+]], [[C2:%r[0-9]+]], [[C3:%r[0-9]+]]}, [%rd{{[0-9]+}}+32];
// CHECK-DAG:     ld.global.v4.b32 {[[D0:%r[0-9]+]], [[D1:%r[0-9]+]], [[D2:%r[0-9]+]], [[D3:%r[0-9]+]]}, [%rd{{[0-9]+}}+48];
// CHECK-DAG:     st.global.v4.b32 [%rd{{[0-9]+}}], {[[A0]], [[B0]], [[C0]], [[D0]]};
// CHECK-DAG:     st.global.v4.b32 [%rd{{[0-9]+}}+16], {[[A1]], [[B1]], [[C1]], [[D1]]};
// CHECK-DAG:     st.global.v4.b32 [%rd{{[0-9]+}}+32], {[[A2]], [[B2]], [[C2]], [[D2]]};
// CHECK-DAG:     st.global.v4.b32 [%rd{{[0-9]+}}+48], {[[A3]], [[B3]], [[C3]], [[D3]]};
// CHECK:         ret;
module attributes {gpu.container_module} {
  gpu.module @shape_cast_transpose {
    gpu.func @shape_cast_transpose(%x: memref<64x64xf32>, %y: memref<64x64xf32>) kernel {
      %c0 = arith.constant 0 : index
      %t = gpu.thread_id x
      %v = vector.load %x[%t, %c0] {alignment = 16} : memref<64x64xf32>, vector<16xf32>
      %m = vector.shape_cast %v : vector<16xf32> to vector<4x4xf32>
      %tr = vector.transpose %m, [1, 0] : vector<4x4xf32> to vector<4x4xf32>
      %f = vector.shape_cast %tr : vector<4x4xf32> to vector<16xf32>
      vector.store %f, %y[%t, %c0] {alignment = 16} : memref<64x64xf32>, vector<16xf32>
      gpu.return
    }
  }
}

// -----

// vector.interleave of two rows of 4, and a shuffle reversing the second.
// CHECK-LABEL: .entry shuffle(
// CHECK-DAG:     ld.global.v4.b32 {[[A0:%r[0-9]+]], [[A1:%r[0-9]+]], [[A2:%r[0-9]+]], [[A3:%r[0-9]+]]}, [%rd{{[0-9]+}}];
// CHECK-DAG:     ld.global.v4.b32 {[[B0:%r[0-9]+]], [[B1:%r[0-9]+]], [[B2:%r[0-9]+]], [[B3:%r[0-9]+]]}, [%rd{{[0-9]+}}+16];
// CHECK-DAG:     st.global.b32 [%rd{{[0-9]+}}], [[A0]];
// CHECK-DAG:     st.global.b32 [%rd{{[0-9]+}}+4], [[B0]];
// CHECK-DAG:     st.global.b32 [%rd{{[0-9]+}}+8], [[A1]];
// CHECK-DAG:     st.global.b32 [%rd{{[0-9]+}}+28], [[B3]];
// CHECK-DAG:     st.global.v4.b32 [%rd{{[0-9]+}}+32], {[[B3]], [[B2]], [[B1]], [[B0]]};
// CHECK:         ret;
module attributes {gpu.container_module} {
  gpu.module @shuffle {
    gpu.func @shuffle(%x: memref<64x64xf32>, %y: memref<64x64xf32>) kernel {
      %c0 = arith.constant 0 : index
      %c4 = arith.constant 4 : index
      %c8 = arith.constant 8 : index
      %t = gpu.thread_id x
      %a = vector.load %x[%t, %c0] {alignment = 16} : memref<64x64xf32>, vector<4xf32>
      %b = vector.load %x[%t, %c4] {alignment = 16} : memref<64x64xf32>, vector<4xf32>
      %i = vector.interleave %a, %b : vector<4xf32> -> vector<8xf32>
      %r = vector.shuffle %a, %b [7, 6, 5, 4] : vector<4xf32>, vector<4xf32>
      vector.store %i, %y[%t, %c0] : memref<64x64xf32>, vector<8xf32>
      vector.store %r, %y[%t, %c8] {alignment = 16} : memref<64x64xf32>, vector<4xf32>
      gpu.return
    }
  }
}

// -----

// Views (expand-strided-metadata, which follows evo-lower-vector): a transfer from a 4x4
// subview at row t, and a store through a collapse_shape of the output.
// CHECK-LABEL: .entry subview(
// CHECK:         mul.wide.u32 [[ROW:%rd[0-9]+]], %r{{[0-9]+}}, 256;
// CHECK:         add.s64 [[X:%rd[0-9]+]], %rd{{[0-9]+}}, [[ROW]];
// CHECK-DAG:     ld.global.b32 [[E00:%r[0-9]+]], [[[X]]];
// CHECK-DAG:     ld.global.b32 %r{{[0-9]+}}, [[[X]]+780];
// CHECK-DAG:     st.global.b32 [%rd{{[0-9]+}}], [[E00]];
// CHECK:         ret;
module attributes {gpu.container_module} {
  gpu.module @subview {
    gpu.func @subview(%x: memref<64x64xf32>, %y: memref<64x64xf32>) kernel {
      %c0 = arith.constant 0 : index
      %pad = arith.constant 0.0 : f32
      %t = gpu.thread_id x
      %s = memref.subview %x[%t, 0] [4, 4] [1, 1] : memref<64x64xf32> to memref<4x4xf32, strided<[64, 1], offset: ?>>
      %v = vector.transfer_read %s[%c0, %c0], %pad {in_bounds = [true, true]} : memref<4x4xf32, strided<[64, 1], offset: ?>>, vector<4x4xf32>
      %flat = memref.collapse_shape %y [[0, 1]] : memref<64x64xf32> into memref<4096xf32>
      %e = memref.load %s[%c0, %c0] : memref<4x4xf32, strided<[64, 1], offset: ?>>
      memref.store %e, %flat[%t] : memref<4096xf32>
      vector.transfer_write %v, %y[%t, %c0] {in_bounds = [true, true]} : vector<4x4xf32>, memref<64x64xf32>
      gpu.return
    }
  }
}

// -----

// 1-d transfers: in bounds (plain loads), possibly out of bounds (each element compared with
// the 100 - 4t left, the rest padded with -1.0), masked by create_mask, and a vector.mask'ed
// write: four stores, each alone in a block that a branch skips.
// CHECK-LABEL: .entry transfer_1d(
// CHECK:         sub.s32 [[LEFT:%r[0-9]+]], 100, %r{{[0-9]+}};
// CHECK:         mov.b32 %r{{[0-9]+}}, 0fBF800000;
// CHECK:         setp.lt.s32 %p{{[0-9]+}}, [[LEFT]], 1;
// CHECK:         setp.lt.s32 %p{{[0-9]+}}, [[LEFT]], 4;
// CHECK:         st.global.b32 [%rd{{[0-9]+}}], %r{{[0-9]+}};
// CHECK-NEXT:  $L__BB0_{{[0-9]+}}:
// CHECK:         st.global.b32 [%rd{{[0-9]+}}+4], %r{{[0-9]+}};
// CHECK-NEXT:  $L__BB0_{{[0-9]+}}:
// CHECK:         st.global.b32 [%rd{{[0-9]+}}+8], %r{{[0-9]+}};
// CHECK-NEXT:  $L__BB0_{{[0-9]+}}:
// CHECK:         st.global.b32 [%rd{{[0-9]+}}+12], %r{{[0-9]+}};
// CHECK-NEXT:  $L__BB0_{{[0-9]+}}:
// CHECK-NEXT:    ret;
module attributes {gpu.container_module} {
  gpu.module @transfer_1d {
    gpu.func @transfer_1d(%x: memref<100xf32>, %y: memref<100xf32>, %n: memref<1xi32>) kernel {
      %c0 = arith.constant 0 : index
      %c4 = arith.constant 4 : index
      %pad = arith.constant -1.0 : f32
      %t = gpu.thread_id x
      %i = arith.muli %t, %c4 : index
      %len32 = memref.load %n[%c0] : memref<1xi32>
      %len = arith.index_cast %len32 : i32 to index
      %in = vector.transfer_read %x[%i], %pad {in_bounds = [true]} : memref<100xf32>, vector<4xf32>
      %oob = vector.transfer_read %x[%i], %pad : memref<100xf32>, vector<4xf32>
      %m = vector.create_mask %len : vector<4xi1>
      %masked = vector.transfer_read %x[%i], %pad, %m {in_bounds = [true]} : memref<100xf32>, vector<4xf32>
      %s = arith.addf %in, %oob : vector<4xf32>
      %r = arith.addf %s, %masked : vector<4xf32>
      vector.mask %m { vector.transfer_write %r, %y[%i] {in_bounds = [true]} : vector<4xf32>, memref<100xf32> } : vector<4xi1>
      gpu.return
    }
  }
}

// -----

// 2-d transfers on a 30x30 buffer (rows of 120 bytes): a 2x3 tile at (2t, 3b) that may cross
// the edges, and a masked, transposed read of the 3x2 tile at (3b, 2t) (3b rows of 360 bytes
// down, its third row 240 bytes further), then a guarded write of the sums.
// CHECK-LABEL: .entry transfer_2d(
// CHECK:         mad.lo.s64 %rd{{[0-9]+}}, %rd{{[0-9]+}}, 360, %rd{{[0-9]+}};
// CHECK:         ld.global.b32 %r{{[0-9]+}}, [%rd{{[0-9]+}}+240];
// CHECK:         ld.global.b32 %r{{[0-9]+}}, [%rd{{[0-9]+}}+244];
// CHECK-COUNT-6: st.global.b32
// CHECK-NOT:     st.global
// CHECK:         ret;
module attributes {gpu.container_module} {
  gpu.module @transfer_2d {
    gpu.func @transfer_2d(%x: memref<30x30xf32>, %y: memref<30x30xf32>) kernel {
      %c2 = arith.constant 2 : index
      %c3 = arith.constant 3 : index
      %pad = arith.constant 0.0 : f32
      %t = gpu.thread_id x
      %b = gpu.block_id x
      %i = arith.muli %t, %c2 : index
      %j = arith.muli %b, %c3 : index
      %v = vector.transfer_read %x[%i, %j], %pad : memref<30x30xf32>, vector<2x3xf32>
      %m = vector.create_mask %c3, %t : vector<3x2xi1>
      %w = vector.transfer_read %x[%j, %i], %pad, %m {in_bounds = [true, true], permutation_map = affine_map<(d0, d1) -> (d1, d0)>} : memref<30x30xf32>, vector<2x3xf32>
      %s = arith.addf %v, %w : vector<2x3xf32>
      vector.transfer_write %s, %y[%i, %j] : vector<2x3xf32>, memref<30x30xf32>
      gpu.return
    }
  }
}
