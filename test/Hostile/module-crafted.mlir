// Crafted and malformed modules (docs/reliability.md, "Input modules and output files"): each
// chunk is a diagnostic at the op (or, where marked, a documented safe outcome), never a crash.
// The splat-only chunk used to crash (SIGSEGV): its payload folded to `yield %cst` and the
// kernel kept a reference to the task function's constant.
//
// RUN: rm -rf %t && mkdir -p %t/out
// RUN: evo-opt %s -split-input-file -verify-diagnostics --evo-pipeline="output-dir=%t/out ptxas=none" -o %t/out.mlir
// Only the chunks that lower wrote files (the declaration and the non-target function have
// nothing to lower: an error under --evo-pipeline, which would emit nothing; a warning under
// --evo-lower-to-gpu, which leaves them as they are: test/Conversion/frontend-nothing.mlir):
// RUN: ls %t/out | FileCheck %s --check-prefix=FILES
// RUN: ls %t/out | count 4
// FILES: hex_splat.json
// FILES-NEXT: hex_splat.ptx
// FILES-NEXT: splat_only.json
// FILES-NEXT: splat_only.ptx
// RUN: FileCheck %s --input-file=%t/out/splat_only.ptx --check-prefix=SPLAT
// exp(1) = 2.7182817 = 0x402DF854 = 1076754516
// SPLAT: st.global.b32 {{.*}}, 1076754516;
//
// Without -verify-diagnostics: a non-zero exit and no crash.
// RUN: not evo-opt %s -split-input-file --evo-pipeline="output-dir=%t/out2 ptxas=none" -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXIT
// EXIT-NOT: Stack dump
// EXIT: error: operation being parsed with an unregistered dialect
// EXIT-NOT: Stack dump
// EXIT-NOT: LLVM ERROR
// RUN: not ls %t/out2

func.func @unknown_dialect(%x: tensor<16xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{operation being parsed with an unregistered dialect}}
  %r = "foo.bar"(%x) : (tensor<16xf32>) -> tensor<16xf32>
  return %r : tensor<16xf32>
}

// -----

func.func @unknown_op(%x: tensor<16xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{unregistered operation 'linalg.nonexistent' found in dialect ('linalg')}}
  %r = "linalg.nonexistent"(%x) : (tensor<16xf32>) -> tensor<16xf32>
  return %r : tensor<16xf32>
}

// -----

// A declaration (no body) is not a target.
// expected-error @+1 {{evo-lower-to-gpu: nothing to lower: no function computes on tensors with linalg ops (or arith/math); found 1 'func.func'}}
func.func private @decl(%x: tensor<16xf32>) -> tensor<16xf32>

// -----

// A function without linalg/arith on tensors is not a target.
// expected-error @+1 {{evo-lower-to-gpu: nothing to lower}}
func.func @no_target(%x: tensor<*xf32>) -> tensor<*xf32> {
  return %x : tensor<*xf32>
}

// -----

func.func @recursive(%x: tensor<16xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{'func.call' is not supported by evo-lower-to-gpu}}
  %r = func.call @recursive(%x) : (tensor<16xf32>) -> tensor<16xf32>
  %e = tensor.empty() : tensor<16xf32>
  %s = linalg.exp ins(%r : tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  return %s : tensor<16xf32>
}

// -----

module attributes {gpu.container_module} {
  // expected-error @+1 {{evo-emit-ptx: gpu.module 'empty' has no kernel (gpu.func ... kernel): nothing to launch}}
  gpu.module @empty {
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @helpers_only {
    // expected-error @-1 {{evo-emit-ptx: gpu.module 'helpers_only' has no kernel}}
    gpu.func @helper(%x: memref<16xf32>) { gpu.return }
  }
}

// -----

// A huge splat constant is a scalar, but the result would be a 4 TiB buffer.
// expected-error @+1 {{evo-lower-to-gpu supports buffers of at most 1 TiB, got 'tensor<1099511627776xf32>'}}
func.func @huge_splat() -> tensor<1099511627776xf32> {
  %c = arith.constant dense<1.0> : tensor<1099511627776xf32>
  %e = tensor.empty() : tensor<1099511627776xf32>
  %s = linalg.exp ins(%c : tensor<1099511627776xf32>) outs(%e : tensor<1099511627776xf32>) -> tensor<1099511627776xf32>
  return %s : tensor<1099511627776xf32>
}

// -----

// All inputs constant: the payload folds to a constant, which the kernel stores.
func.func @splat_only() -> tensor<4xf32> {
  %c = arith.constant dense<1.0> : tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %s = linalg.exp ins(%c : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

// The same written as a hex blob (the parser makes it a splat).
func.func @hex_splat() -> tensor<4xf32> {
  %c = arith.constant dense<"0x0000803F0000803F0000803F0000803F"> : tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %s = linalg.exp ins(%c : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

// A scalar argument of a type no kernel can take by value (docs/lowering.md, "Scalar arguments").
// expected-error @+1 {{evo-lower-to-gpu supports scalar arguments of f16, bf16, f32, f64 and integers up to 64 bits (passed to the kernels by value), got 'f128'}}
func.func @scalar_arg(%a: f128, %x: tensor<16xf32>) -> tensor<16xf32> {
  %e = tensor.empty() : tensor<16xf32>
  %s = linalg.exp ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  return %s : tensor<16xf32>
}

// -----

// expected-error @+1 {{evo-lower-to-gpu: the function has no linalg op to lower}}
func.func @multi_block(%x: tensor<16xf32>) -> tensor<16xf32> {
  cf.br ^bb1
^bb1:
  %e = tensor.empty() : tensor<16xf32>
  %s = linalg.exp ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  return %s : tensor<16xf32>
}

// -----

// expected-error @+1 {{evo-lower-to-gpu supports integer and float elements, got 'complex<f32>'}}
func.func @complex_elt(%x: tensor<16xcomplex<f32>>) -> tensor<16xcomplex<f32>> {
  %e = tensor.empty() : tensor<16xcomplex<f32>>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<16xcomplex<f32>>) outs(%e : tensor<16xcomplex<f32>>) {
  ^bb0(%a: complex<f32>, %b: complex<f32>):
    linalg.yield %a : complex<f32>
  } -> tensor<16xcomplex<f32>>
  return %r : tensor<16xcomplex<f32>>
}

// -----

// expected-error @+1 {{evo-lower-to-gpu supports integer and float elements, got 'index'}}
func.func @index_elt(%x: tensor<16xindex>) -> tensor<16xindex> {
  %e = tensor.empty() : tensor<16xindex>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<16xindex>) outs(%e : tensor<16xindex>) {
  ^bb0(%a: index, %b: index):
    linalg.yield %a : index
  } -> tensor<16xindex>
  return %r : tensor<16xindex>
}

// -----

func.func @knobs_not_a_dictionary(%x: tensor<16xf32>) -> tensor<16xf32> {
  %e = tensor.empty() : tensor<16xf32>
  // expected-error @+1 {{'evo.knobs' must be a dictionary or an #evo.knobs attribute}}
  %r = linalg.exp {evo.knobs = 3 : i64} ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  return %r : tensor<16xf32>
}

// -----

func.func @knobs_out_of_range(%x: tensor<16xf32>) -> tensor<16xf32> {
  %e = tensor.empty() : tensor<16xf32>
  // expected-error @+1 {{block_size must be a multiple of 32 in [32, 1024], got 9223372036854775807}}
  %r = linalg.exp {evo.knobs = {block_size = 9223372036854775807 : i64}} ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  return %r : tensor<16xf32>
}

// -----

// The dialect's verifier rejects a plan that is not a #evo.plan when the module is parsed.
module attributes {gpu.container_module} {
  // expected-error @+1 {{'evo.plan' must be a #evo.plan attribute}}
  gpu.module @m attributes {evo.plan = "not a dictionary"} {
    gpu.func @k(%x: memref<16xf32>) kernel { gpu.return }
  }
}

// -----

// A plan without its source, buffers, tasks and launches does not parse.
module attributes {gpu.container_module} {
  // expected-error @+1 {{#evo.plan: missing key 'source'}}
  gpu.module @m attributes {evo.plan = #evo.plan<func = "m">} {
    gpu.func @k(%x: memref<16xf32>) kernel { gpu.return }
  }
}

// -----

func.func @clash(%x: tensor<16xf32>) -> tensor<16xf32> {
  // expected-error @-1 {{evo-lower-to-gpu: symbol 'clash_kernels' already exists in the module}}
  %e = tensor.empty() : tensor<16xf32>
  %r = linalg.exp ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  return %r : tensor<16xf32>
}
gpu.module @clash_kernels {
}

// -----

func.func @returns_arg(%x: tensor<16xf32>) -> tensor<16xf32> {
  %e = tensor.empty() : tensor<16xf32>
  %r = linalg.exp ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  // expected-error @+1 {{evo-lower-to-gpu: result 0 returns an argument unchanged}}
  return %x : tensor<16xf32>
}
