// Scalar arguments the kernels cannot take by value, and scalar arguments read where the
// lowering cannot carry them, are diagnostics at the argument or at the reading op; the module
// is left as it was (docs/lowering.md, "Scalar arguments").

// RUN: evo-opt %s -split-input-file -verify-diagnostics -evo-lower-to-gpu

// expected-error @+1 {{evo-lower-to-gpu supports scalar arguments of f16, bf16, f32, f64 and integers up to 64 bits (passed to the kernels by value), got 'f80'}}
func.func @f80(%x: tensor<16xf32>, %s: f80) -> tensor<16xf32> {
  %r = arith.addf %x, %x : tensor<16xf32>
  return %r : tensor<16xf32>
}

// -----

// expected-error @+1 {{got 'index' (use i64: an index's width is the target's)}}
func.func @index(%x: tensor<16xf32>, %s: index) -> tensor<16xf32> {
  %r = arith.addf %x, %x : tensor<16xf32>
  return %r : tensor<16xf32>
}

// -----

// expected-error @+1 {{got 'i128'}}
func.func @wide_int(%x: tensor<16xf32>, %s: i128) -> tensor<16xf32> {
  %r = arith.addf %x, %x : tensor<16xf32>
  return %r : tensor<16xf32>
}

// -----

// expected-error @+1 {{evo-lower-to-gpu supports only tensor arguments and scalar arguments (f16, bf16, f32, f64, integers up to 64 bits), got 'complex<f32>'}}
func.func @complex(%x: tensor<16xf32>, %s: complex<f32>) -> tensor<16xf32> {
  %r = arith.addf %x, %x : tensor<16xf32>
  return %r : tensor<16xf32>
}

// -----

// expected-error @+1 {{got 'vector<4xf32>'}}
func.func @vector(%x: tensor<16xf32>, %s: vector<4xf32>) -> tensor<16xf32> {
  %r = arith.addf %x, %x : tensor<16xf32>
  return %r : tensor<16xf32>
}

// -----

// expected-error @+1 {{got 'memref<16xf32>'}}
func.func @memref(%x: tensor<16xf32>, %s: memref<16xf32>) -> tensor<16xf32> {
  %r = arith.addf %x, %x : tensor<16xf32>
  return %r : tensor<16xf32>
}

// -----

// The diagnostic is at the argument, not at the function: here on the second line.
func.func @located(%x: tensor<16xf32>,
                   // expected-error @+1 {{got 'f80'}}
                   %s: f80) -> tensor<16xf32> {
  %r = arith.addf %x, %x : tensor<16xf32>
  return %r : tensor<16xf32>
}

// -----

// A value only tensor ops can take (a pad's value, tensor.from_elements) cannot come from a
// scalar argument: the diagnostic is at the op of the function that reads it.
func.func @pad_value(%x: tensor<16xf32>, %s: f32) -> tensor<18xf32> {
  // expected-error @+1 {{evo-lower-to-gpu: scalar argument #1 ('f32') is read by 'tensor.pad': scalar arguments may be read by linalg ops (as an `ins` operand or in their payloads) and by scalar arith/math ops that only those read}}
  %p = tensor.pad %x low[1] high[1] {
  ^bb0(%i: index):
    tensor.yield %s : f32
  } : tensor<16xf32> to tensor<18xf32>
  %r = arith.addf %p, %p : tensor<18xf32>
  return %r : tensor<18xf32>
}

// -----

func.func @from_elements(%x: tensor<2xf32>, %s: f32) -> tensor<2xf32> {
  %h = arith.mulf %s, %s : f32
  // expected-error @+1 {{a value computed from a scalar argument is read by 'tensor.from_elements'}}
  %t = tensor.from_elements %h, %h : tensor<2xf32>
  %r = arith.addf %x, %t : tensor<2xf32>
  return %r : tensor<2xf32>
}
