// RUN: evo-opt %s -convert-vector-to-scf -convert-scf-to-cf -convert-vector-to-llvm \
// RUN:     -convert-arith-to-llvm -convert-func-to-llvm -convert-cf-to-llvm -reconcile-unrealized-casts \
// RUN:     -o %t.mlir
// RUN: %mlir_runner %t.mlir --shared-libs=%evo_runner_utils --entry-point-result=void \
// RUN: | FileCheck %s --match-full-lines
// RUN: evo-runner %t.mlir -e main --entry-point-result=void --shared-libs=%evo_runner_utils \
// RUN: | FileCheck %s --match-full-lines

// What vector.print lowers to (libevo_runner_utils.so), in the format of upstream's runner utils:
// printf's %g for f32/f64 (f16 and bf16 widened), "nan"/"-nan" by sign, integers signed except
// i1 and index, vectors in parentheses. Also runs without a GPU: the runner personality of
// evo-opt and upstream's mlir-runner print the same.

func.func @main() {
  // CHECK:      1.5
  // CHECK-NEXT: -0
  // CHECK-NEXT: 3.40282e+38
  // CHECK-NEXT: 9.99995e-41
  // CHECK-NEXT: 1.23457e+08
  // CHECK-NEXT: inf
  // CHECK-NEXT: -inf
  // CHECK-NEXT: nan
  // CHECK-NEXT: -nan
  %f0 = arith.constant 1.5 : f32
  %f1 = arith.constant -0.0 : f32
  %f2 = arith.constant 3.4028235e38 : f32
  %f3 = arith.constant 1.0e-40 : f32
  %f4 = arith.constant 123456789.0 : f32
  %f5 = arith.constant 0x7F800000 : f32
  %f6 = arith.constant 0xFF800000 : f32
  %f7 = arith.constant 0x7FC00000 : f32
  %f8 = arith.constant 0xFFC00000 : f32
  vector.print %f0 : f32
  vector.print %f1 : f32
  vector.print %f2 : f32
  vector.print %f3 : f32
  vector.print %f4 : f32
  vector.print %f5 : f32
  vector.print %f6 : f32
  vector.print %f7 : f32
  vector.print %f8 : f32

  // CHECK-NEXT: 0.1
  // CHECK-NEXT: 4.94066e-324
  // CHECK-NEXT: 1.79769e+308
  // CHECK-NEXT: -nan
  %d0 = arith.constant 0.1 : f64
  %d1 = arith.constant 4.9e-324 : f64
  %d2 = arith.constant 1.7976931348623157e308 : f64
  %d3 = arith.constant 0xFFF8000000000000 : f64
  vector.print %d0 : f64
  vector.print %d1 : f64
  vector.print %d2 : f64
  vector.print %d3 : f64

  // f16: smallest subnormal, largest finite, inf, -nan; bf16: 1/3, -inf.
  // CHECK-NEXT: 5.96046e-08
  // CHECK-NEXT: 65504
  // CHECK-NEXT: inf
  // CHECK-NEXT: -nan
  // CHECK-NEXT: 0.333984
  // CHECK-NEXT: -inf
  %h0 = arith.constant 0x0001 : f16
  %h1 = arith.constant 0x7BFF : f16
  %h2 = arith.constant 0x7C00 : f16
  %h3 = arith.constant 0xFE00 : f16
  %b0 = arith.constant 0x3EAB : bf16
  %b1 = arith.constant 0xFF80 : bf16
  vector.print %h0 : f16
  vector.print %h1 : f16
  vector.print %h2 : f16
  vector.print %h3 : f16
  vector.print %b0 : bf16
  vector.print %b1 : bf16

  // CHECK-NEXT: -9223372036854775808
  // CHECK-NEXT: -1
  // CHECK-NEXT: -56
  // CHECK-NEXT: 1
  // CHECK-NEXT: 18446744073709551615
  %i0 = arith.constant -9223372036854775808 : i64
  %i1 = arith.constant -1 : i32
  %i2 = arith.constant 200 : i8
  %i3 = arith.constant 1 : i1
  %i4 = arith.constant -1 : index
  vector.print %i0 : i64
  vector.print %i1 : i32
  vector.print %i2 : i8
  vector.print %i3 : i1
  vector.print %i4 : index

  // CHECK-NEXT: ( 1.5, -0, nan )
  // CHECK-NEXT: ( ( 1, -2 ), ( 3, 4 ) )
  // CHECK-NEXT: ( 1, 0 )
  // CHECK-NEXT: ( 1.5, 2 )
  // CHECK-NEXT: 7, 8
  // CHECK-NEXT: ( )
  // CHECK-NEXT: done
  %v0 = arith.constant dense<[1.5, -0.0, 0x7FC00000]> : vector<3xf32>
  %v1 = arith.constant dense<[[1, -2], [3, 4]]> : vector<2x2xi64>
  %v2 = arith.constant dense<[true, false]> : vector<2xi1>
  %v3 = arith.constant dense<[1.5, 2.0]> : vector<2xf16>
  %s0 = arith.constant 7 : i32
  %s1 = arith.constant 8 : i32
  vector.print %v0 : vector<3xf32>
  vector.print %v1 : vector<2x2xi64>
  vector.print %v2 : vector<2xi1>
  vector.print %v3 : vector<2xf16>
  vector.print %s0 : i32 punctuation <no_punctuation>
  vector.print punctuation <comma>
  vector.print %s1 : i32
  vector.print punctuation <open>
  vector.print punctuation <close>
  vector.print punctuation <newline>
  vector.print str "done\n"
  return
}
