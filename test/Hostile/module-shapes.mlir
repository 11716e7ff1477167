// Shapes and types a GPU cannot run (docs/reliability.md, "Input modules and output files"):
// empty dimensions, sizes whose element count or byte size wraps int64 or exceeds 1 TiB, tensor
// encodings (sparse), dynamic shapes, element types NVPTX cannot compute on, launches beyond
// CUDA's limits and kernels of the wrong ABI are diagnostics at the op (in an #evo.plan: at the
// attribute, when the module is parsed), never an exit 0 with a grid of 0 or a negative size, and
// never an LLVM ERROR.
//
// RUN: rm -rf %t && mkdir -p %t/out
// RUN: evo-opt %s -split-input-file -verify-diagnostics --evo-pipeline="output-dir=%t/out ptxas=none" -o /dev/null
// RUN: ls %t/out | FileCheck %s --check-prefix=FILES
// RUN: ls %t/out | count 2
// FILES: big.json
// FILES-NEXT: big.ptx
// RUN: FileCheck %s --input-file=%t/out/big.json --check-prefix=BIG
// BIG: "bytes": 17179869184,
// BIG: "grid": [
// BIG-NEXT: 256,
//
// Without -verify-diagnostics: a non-zero exit, no crash, nothing written.
// RUN: rm -rf %t && mkdir -p %t/out
// RUN: not evo-opt %s -split-input-file --evo-pipeline="output-dir=%t/out ptxas=none" -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXIT
// EXIT-NOT: LLVM ERROR
// EXIT-NOT: Stack dump
// EXIT: error: evo-lower-to-gpu needs every dimension to be at least 1
// EXIT-NOT: LLVM ERROR
// EXIT-NOT: Stack dump
// RUN: ls %t/out | count 0

// expected-error @+1 {{evo-lower-to-gpu needs every dimension to be at least 1 (an empty buffer has no kernel to launch), got 'tensor<0x4xf32>'}}
func.func @zero(%x: tensor<0x4xf32>) -> tensor<0x4xf32> {
  %e = tensor.empty() : tensor<0x4xf32>
  %r = linalg.exp ins(%x : tensor<0x4xf32>) outs(%e : tensor<0x4xf32>) -> tensor<0x4xf32>
  return %r : tensor<0x4xf32>
}

// -----

// expected-error @+1 {{evo-lower-to-gpu supports buffers of at most 1 TiB, got 'tensor<9223372036854775807x2xf32>'}}
func.func @int64_max(%x: tensor<9223372036854775807x2xf32>) -> tensor<9223372036854775807x2xf32> {
  %e = tensor.empty() : tensor<9223372036854775807x2xf32>
  %r = linalg.exp ins(%x : tensor<9223372036854775807x2xf32>) outs(%e : tensor<9223372036854775807x2xf32>) -> tensor<9223372036854775807x2xf32>
  return %r : tensor<9223372036854775807x2xf32>
}

// -----

// expected-error @+1 {{supports buffers of at most 1 TiB}}
func.func @product_wraps(%x: tensor<4294967296x4294967296xf32>) -> tensor<4294967296x4294967296xf32> {
  %e = tensor.empty() : tensor<4294967296x4294967296xf32>
  %r = linalg.exp ins(%x : tensor<4294967296x4294967296xf32>) outs(%e : tensor<4294967296x4294967296xf32>) -> tensor<4294967296x4294967296xf32>
  return %r : tensor<4294967296x4294967296xf32>
}

// -----

// expected-error @+1 {{supports buffers of at most 1 TiB}}
func.func @bytes_wrap(%x: tensor<2305843009213693952x2xf32>) -> tensor<2305843009213693952x2xf32> {
  %e = tensor.empty() : tensor<2305843009213693952x2xf32>
  %r = linalg.exp ins(%x : tensor<2305843009213693952x2xf32>) outs(%e : tensor<2305843009213693952x2xf32>) -> tensor<2305843009213693952x2xf32>
  return %r : tensor<2305843009213693952x2xf32>
}

// -----

// expected-error @+1 {{supports buffers of at most 1 TiB}}
func.func @over_1tib(%x: tensor<1099511627776xf32>) -> tensor<1099511627776xf32> {
  %e = tensor.empty() : tensor<1099511627776xf32>
  %r = linalg.exp ins(%x : tensor<1099511627776xf32>) outs(%e : tensor<1099511627776xf32>) -> tensor<1099511627776xf32>
  return %r : tensor<1099511627776xf32>
}

// -----

// expected-error @+1 {{evo-lower-to-gpu does not support the tensor encoding #sparse_tensor.encoding}}
func.func @sparse(%x: tensor<8x8xf32, #sparse_tensor.encoding<{map = (d0, d1) -> (d0 : dense, d1 : compressed)}>>) -> tensor<8x8xf32, #sparse_tensor.encoding<{map = (d0, d1) -> (d0 : dense, d1 : compressed)}>> {
  %e = tensor.empty() : tensor<8x8xf32, #sparse_tensor.encoding<{map = (d0, d1) -> (d0 : dense, d1 : compressed)}>>
  %r = linalg.exp ins(%x : tensor<8x8xf32, #sparse_tensor.encoding<{map = (d0, d1) -> (d0 : dense, d1 : compressed)}>>) outs(%e : tensor<8x8xf32, #sparse_tensor.encoding<{map = (d0, d1) -> (d0 : dense, d1 : compressed)}>>) -> tensor<8x8xf32, #sparse_tensor.encoding<{map = (d0, d1) -> (d0 : dense, d1 : compressed)}>>
  return %r : tensor<8x8xf32, #sparse_tensor.encoding<{map = (d0, d1) -> (d0 : dense, d1 : compressed)}>>
}

// -----

// expected-error @+1 {{evo-lower-to-gpu does not support the tensor encoding "any" (only dense tensors are lowered)}}
func.func @encoded(%x: tensor<8xf32, "any">) -> tensor<8xf32, "any"> {
  %e = tensor.empty() : tensor<8xf32, "any">
  %r = linalg.exp ins(%x : tensor<8xf32, "any">) outs(%e : tensor<8xf32, "any">) -> tensor<8xf32, "any">
  return %r : tensor<8xf32, "any">
}

// -----

// A softmax over an empty row used to reach the GPU lowering ("failed to legalize").
// expected-error @+1 {{evo-lower-to-gpu needs every dimension to be at least 1}}
func.func @softmax_empty_row(%x: tensor<8x0xf32>) -> tensor<8x0xf32> {
  %e = tensor.empty() : tensor<8x0xf32>
  %r = linalg.softmax dimension(1) ins(%x : tensor<8x0xf32>) outs(%e : tensor<8x0xf32>) -> tensor<8x0xf32>
  return %r : tensor<8x0xf32>
}

// -----

// A reduction of 2^63-1 elements used to lower with exit 0.
// expected-error @+1 {{supports buffers of at most 1 TiB, got 'tensor<2x9223372036854775807xf32>'}}
func.func @reduce_huge(%x: tensor<2x9223372036854775807xf32>) -> tensor<2xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<2xf32>) -> tensor<2xf32>
  %r = linalg.reduce ins(%x : tensor<2x9223372036854775807xf32>) outs(%c : tensor<2xf32>) dimensions = [1]
    (%in: f32, %init: f32) {
      %s = arith.addf %in, %init : f32
      linalg.yield %s : f32
    }
  return %r : tensor<2xf32>
}

// -----

// An intermediate value is a buffer too.
func.func @zero_intermediate(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e0 = tensor.empty() : tensor<0x4xf32>
  // expected-error @+1 {{evo-lower-to-gpu needs every dimension to be at least 1}}
  %b = linalg.broadcast ins(%x : tensor<4xf32>) outs(%e0 : tensor<0x4xf32>) dimensions = [0]
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %r = linalg.reduce ins(%b : tensor<0x4xf32>) outs(%c : tensor<4xf32>) dimensions = [0]
    (%in: f32, %init: f32) {
      %s = arith.addf %in, %init : f32
      linalg.yield %s : f32
    }
  return %r : tensor<4xf32>
}

// -----

// Dynamic shapes: a diagnostic, as before.
func.func @dynamic(%x: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @-1 {{evo-lower-to-gpu needs static shapes, got 'tensor<?xf32>'}}
  %c0 = arith.constant 0 : index
  %d = tensor.dim %x, %c0 : tensor<?xf32>
  %e = tensor.empty(%d) : tensor<?xf32>
  %r = linalg.exp ins(%x : tensor<?xf32>) outs(%e : tensor<?xf32>) -> tensor<?xf32>
  return %r : tensor<?xf32>
}

// -----

// expected-error @+1 {{evo-lower-to-gpu supports f16, bf16, f32, f64, i1 (a byte per element) and integers up to 64 bits, got 'f128'}}
func.func @f128(%x: tensor<16xf128>) -> tensor<16xf128> {
  %e = tensor.empty() : tensor<16xf128>
  %r = linalg.exp ins(%x : tensor<16xf128>) outs(%e : tensor<16xf128>) -> tensor<16xf128>
  return %r : tensor<16xf128>
}

// -----

// expected-error @+1 {{evo-lower-to-gpu supports f16, bf16, f32, f64, i1 (a byte per element) and integers up to 64 bits, got 'f8E4M3FN'}}
func.func @f8(%x: tensor<16xf8E4M3FN>) -> tensor<16xf8E4M3FN> {
  %e = tensor.empty() : tensor<16xf8E4M3FN>
  %r = linalg.exp ins(%x : tensor<16xf8E4M3FN>) outs(%e : tensor<16xf8E4M3FN>) -> tensor<16xf8E4M3FN>
  return %r : tensor<16xf8E4M3FN>
}

// -----

// expected-error @+2 {{evo.plan: launch of 'k' exceeds CUDA's launch limits: grid larger than 2^31-1 x 65535 x 65535 (grid 2147483648x1x1, block 16x1x1, 0 bytes of dynamic shared memory)}}
module attributes {gpu.container_module} {
  gpu.module @m attributes {evo.plan = #evo.plan<func = "m", source = "", buffers = [#evo.buffer<name = "arg0", role = input, type = memref<16xf32>>], tasks = [#evo.task<name = "t", family = elementwise, source = "", knobs = #evo.knobs<>, buffers = [0]>], launches = [#evo.launch<kernel = "k", task = 0, grid = [2147483648, 1, 1], block = [16, 1, 1], args = [0]>]>} {
    gpu.func @k(%x: memref<16xf32>) kernel { gpu.return }
  }
}

// -----

// expected-error @+2 {{evo.plan: launch of 'k' exceeds CUDA's launch limits: grid larger}}
module attributes {gpu.container_module} {
  gpu.module @m attributes {evo.plan = #evo.plan<func = "m", source = "", buffers = [#evo.buffer<name = "arg0", role = input, type = memref<16xf32>>], tasks = [#evo.task<name = "t", family = elementwise, source = "", knobs = #evo.knobs<>, buffers = [0]>], launches = [#evo.launch<kernel = "k", task = 0, grid = [1, 1, 65536], block = [16, 1, 1], args = [0]>]>} {
    gpu.func @k(%x: memref<16xf32>) kernel { gpu.return }
  }
}

// -----

// expected-error @+2 {{evo.plan: launch 'grid' must be 3 positive sizes}}
module attributes {gpu.container_module} {
  gpu.module @m attributes {evo.plan = #evo.plan<func = "m", source = "", buffers = [#evo.buffer<name = "arg0", role = input, type = memref<16xf32>>], tasks = [#evo.task<name = "t", family = elementwise, source = "", knobs = #evo.knobs<>, buffers = [0]>], launches = [#evo.launch<kernel = "k", task = 0, grid = [-1, 1, 1], block = [16, 1, 1], args = [0]>]>} {
    gpu.func @k(%x: memref<16xf32>) kernel { gpu.return }
  }
}

// -----

// expected-error @+2 {{evo.plan: launch of 'k' exceeds CUDA's launch limits: block larger than 1024 threads}}
module attributes {gpu.container_module} {
  gpu.module @m attributes {evo.plan = #evo.plan<func = "m", source = "", buffers = [#evo.buffer<name = "arg0", role = input, type = memref<16xf32>>], tasks = [#evo.task<name = "t", family = elementwise, source = "", knobs = #evo.knobs<>, buffers = [0]>], launches = [#evo.launch<kernel = "k", task = 0, grid = [1, 1, 1], block = [64, 32, 1], args = [0]>]>} {
    gpu.func @k(%x: memref<16xf32>) kernel { gpu.return }
  }
}

// -----

// expected-error @+2 {{evo.plan: launch of 'k' exceeds CUDA's launch limits: dynamic shared memory outside [0, 227 KiB]}}
module attributes {gpu.container_module} {
  gpu.module @m attributes {evo.plan = #evo.plan<func = "m", source = "", buffers = [#evo.buffer<name = "arg0", role = input, type = memref<16xf32>>], tasks = [#evo.task<name = "t", family = elementwise, source = "", knobs = #evo.knobs<>, buffers = [0]>], launches = [#evo.launch<kernel = "k", task = 0, grid = [1, 1, 1], block = [16, 1, 1], dynamic_shared_memory = 232449, args = [0]>]>} {
    gpu.func @k(%x: memref<16xf32>) kernel { gpu.return }
  }
}

// -----

// expected-error @+2 {{evo.plan: launch of 'k' exceeds CUDA's launch limits: dynamic shared memory outside [0, 227 KiB]}}
module attributes {gpu.container_module} {
  gpu.module @m attributes {evo.plan = #evo.plan<func = "m", source = "", buffers = [#evo.buffer<name = "arg0", role = input, type = memref<16xf32>>], tasks = [#evo.task<name = "t", family = elementwise, source = "", knobs = #evo.knobs<>, buffers = [0]>], launches = [#evo.launch<kernel = "k", task = 0, grid = [1, 1, 1], block = [16, 1, 1], dynamic_shared_memory = -1, args = [0]>]>} {
    gpu.func @k(%x: memref<16xf32>) kernel { gpu.return }
  }
}

// -----

// expected-error @+2 {{evo.plan: buffer 'arg0': needs every dimension to be at least 1}}
module attributes {gpu.container_module} {
  gpu.module @m attributes {evo.plan = #evo.plan<func = "m", source = "", buffers = [#evo.buffer<name = "arg0", role = input, type = memref<0x16xf32>>], tasks = [#evo.task<name = "t", family = elementwise, source = "", knobs = #evo.knobs<>, buffers = [0]>], launches = [#evo.launch<kernel = "k", task = 0, grid = [1, 1, 1], block = [16, 1, 1], args = [0]>]>} {
    gpu.func @k(%x: memref<0x16xf32>) kernel { gpu.return }
  }
}

// -----

// expected-error @+2 {{evo.plan: buffer 'arg0': supports buffers of at most 1 TiB}}
module attributes {gpu.container_module} {
  gpu.module @m attributes {evo.plan = #evo.plan<func = "m", source = "", buffers = [#evo.buffer<name = "arg0", role = input, type = memref<9223372036854775807x2xf32>>], tasks = [#evo.task<name = "t", family = elementwise, source = "", knobs = #evo.knobs<>, buffers = [0]>], launches = [#evo.launch<kernel = "k", task = 0, grid = [1, 1, 1], block = [16, 1, 1], args = [0]>]>} {
    gpu.func @k(%x: memref<9223372036854775807x2xf32>) kernel { gpu.return }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @m {
    // expected-error @+1 {{evo-emit-ptx: kernel parameter 0 needs every dimension to be at least 1}}
    gpu.func @k(%x: memref<0xf32>) kernel { gpu.return }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @m {
    // expected-error @+1 {{evo-emit-ptx: kernel parameter 0 supports buffers of at most 1 TiB}}
    gpu.func @k(%x: memref<4611686018427387904x4xf32>) kernel { gpu.return }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @m {
    // expected-error @+1 {{in global memory (the bare-pointer ABI), got 'memref<16xf32, 3>'}}
    gpu.func @k(%x: memref<16xf32, 3>) kernel { gpu.return }
  }
}

// -----

// NVPTX aborts on f128 arithmetic ("LLVM ERROR: unsupported library call operation").
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k(%x: memref<16xf128>) kernel {
      %i = gpu.thread_id x
      // expected-error @+1 {{NVPTX cannot compile the type 'f128' (no f80/f128 arithmetic on GPUs)}}
      %v = memref.load %x[%i] : memref<16xf128>
      %w = arith.addf %v, %v : f128
      memref.store %w, %x[%i] : memref<16xf128>
      gpu.return
    }
  }
}

// -----

// A gpu.module without a kernel has nothing to launch.
module attributes {gpu.container_module} {
  // expected-error @+1 {{evo-emit-ptx: gpu.module 'empty' has no kernel (gpu.func ... kernel): nothing to launch}}
  gpu.module @empty {
  }
}

// -----

// The limits themselves are fine: 65536 x 65536 f32 (16 GiB) lowers.
func.func @big(%x: tensor<65536x65536xf32>) -> tensor<65536x65536xf32> {
  %e = tensor.empty() : tensor<65536x65536xf32>
  %r = linalg.softmax dimension(1) ins(%x : tensor<65536x65536xf32>) outs(%e : tensor<65536x65536xf32>) -> tensor<65536x65536xf32>
  return %r : tensor<65536x65536xf32>
}
