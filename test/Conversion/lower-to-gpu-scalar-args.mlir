// Scalar arguments (docs/lowering.md, "Scalar arguments"): an int or float argument of the
// function (torch-mlir's alpha, eps, scale) is a kernel parameter passed by value. The host
// function keeps it and passes it to the launches; the plan's buffer for it is a 0-d input
// marked by_value; the task sources keep it a scalar (read as a linalg `ins` operand through
// `() -> ()`); the kernels read the parameter itself, never memory.
// RUN: evo-opt %s -split-input-file -evo-lower-to-gpu | FileCheck %s
// RUN: evo-opt %s -split-input-file -evo-lower-to-gpu -evo-emit-ptx="output-dir=%t" -o /dev/null
// RUN: cat %t/leaky_relu.ptx %t/mul_scalar.ptx %t/fill_add.ptx %t/masked_i1.ptx %t/layernorm_eps.ptx %t/mm_alpha_beta.ptx | FileCheck %s --check-prefix=PTX
// RUN: %if ptxas %{ FileCheck %s --input-file=%t/leaky_relu.json --check-prefix=MANIFEST %}

// Captured by the payload: the payload takes it as an input (`() -> ()`), the kernel as a value.
// CHECK-LABEL: func.func @leaky_relu(
// CHECK-SAME:      %[[X:[^:]*]]: memref<4096xf32>, %[[A:[^:]*]]: f32, %[[Y:[^:]*]]: memref<4096xf32>)
// CHECK:         gpu.launch_func @leaky_relu_kernels::@leaky_relu_k0
// CHECK-SAME:      args(%[[X]] : memref<4096xf32>, %[[A]] : f32, %[[Y]] : memref<4096xf32>)
// CHECK:         gpu.module @leaky_relu_kernels
// CHECK-SAME:      source = "func.func @leaky_relu(%arg0: tensor<4096xf32>, %arg1: f32) -> tensor<4096xf32>
// CHECK-SAME:      #evo.buffer<name = "arg1", role = input, type = memref<f32>, by_value = true>
// CHECK-SAME:      #evo.task<name = "leaky_relu_t0", family = elementwise, source = "func.func @leaky_relu_t0(%arg0: tensor<4096xf32>, %arg1: f32) -> tensor<4096xf32>
// CHECK-SAME:      affine_map<(d0) -> ()>
// CHECK-SAME:      ins(%arg0, %arg1 : tensor<4096xf32>, f32)
// CHECK:         gpu.func @leaky_relu_k0(%[[KX:[^:]*]]: memref<4096xf32>, %[[KA:[^:]*]]: f32, %{{[^:]*}}: memref<4096xf32>) kernel
// CHECK-NOT:       memref.alloca
// CHECK:           %[[V:.*]] = memref.load %[[KX]]
// CHECK:           arith.mulf %[[V]], %[[KA]] : f32
// CHECK:           gpu.return

// PTX: .entry leaky_relu_k0(
// PTX-NEXT: .param .u64 .ptr .align 1 leaky_relu_k0_param_0,
// PTX-NEXT: .param .f32 leaky_relu_k0_param_1,
// PTX-NEXT: .param .u64 .ptr .align 1 leaky_relu_k0_param_2
// PTX-NOT:  .local
// PTX:      ld.param.b32 {{.*}}[leaky_relu_k0_param_1]
// PTX:      ret;

// MANIFEST: "by_value": true,
// MANIFEST-NEXT: "bytes": 4,
// MANIFEST-NEXT: "dtype": "f32",
// MANIFEST-NEXT: "index": 1,
// MANIFEST-NEXT: "name": "arg1",
// MANIFEST-NEXT: "role": "input",
// MANIFEST-NEXT: "shape": [],
// MANIFEST: "params": [
// MANIFEST:      "by_value": true,
// MANIFEST-NEXT: "dtype": "f32",
// MANIFEST-NEXT: "shape": []
// MANIFEST: "registers": {{[0-9]+}}

func.func @leaky_relu(%x: tensor<4096xf32>, %alpha: f32) -> tensor<4096xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4096xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      ins(%x : tensor<4096xf32>) outs(%e : tensor<4096xf32>) {
    ^bb0(%v: f32, %o: f32):
      %neg = arith.mulf %v, %alpha : f32
      %pos = arith.cmpf ogt, %v, %zero : f32
      %y = arith.select %pos, %v, %neg : f32
      linalg.yield %y : f32
  } -> tensor<4096xf32>
  return %r : tensor<4096xf32>
}

// -----

// torch-mlir's form: a `!torch.float` is an f64 argument truncated outside the payload; the
// truncation moves into the task (and the kernel), the parameter stays an f64.
// CHECK-LABEL: func.func @mul_scalar(
// CHECK-SAME:      %{{[^:]*}}: memref<1024xf32>, %{{[^:]*}}: f64, %{{[^:]*}}: memref<1024xf32>)
// CHECK:         source = "func.func @mul_scalar_t0(%arg0: tensor<1024xf32>, %arg1: f64) -> tensor<1024xf32>
// CHECK:         gpu.func @mul_scalar_k0(%{{[^:]*}}: memref<1024xf32>, %[[S:[^:]*]]: f64, %{{[^:]*}}: memref<1024xf32>) kernel
// CHECK:           arith.truncf %[[S]] : f64 to f32

// PTX: .entry mul_scalar_k0(
// PTX: .param .f64 mul_scalar_k0_param_1,
// PTX: cvt.rn.f32.f64

func.func @mul_scalar(%x: tensor<1024xf32>, %s: f64) -> tensor<1024xf32> {
  %t = arith.truncf %s : f64 to f32
  %e = tensor.empty() : tensor<1024xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      ins(%x : tensor<1024xf32>) outs(%e : tensor<1024xf32>) {
    ^bb0(%a: f32, %o: f32):
      %m = arith.mulf %a, %t : f32
      linalg.yield %m : f32
  } -> tensor<1024xf32>
  return %r : tensor<1024xf32>
}

// -----

// A fill of a scalar (and a tensor.splat, the same) fuses into its consumer: one kernel, the
// f16 value a parameter.
// CHECK-LABEL: func.func @fill_add(
// CHECK-SAME:      %{{[^:]*}}: memref<64x64xf16>, %{{[^:]*}}: f16, %{{[^:]*}}: f16, %{{[^:]*}}: memref<64x64xf16>)
// CHECK-COUNT-1: gpu.launch_func
// CHECK:         gpu.func @fill_add_k0(%{{[^:]*}}: memref<64x64xf16>, %[[V:[^:]*]]: f16, %[[W:[^:]*]]: f16, %{{[^:]*}}: memref<64x64xf16>) kernel
// CHECK:           arith.addf %{{.*}}, %[[V]] : f16
// CHECK:           arith.mulf %{{.*}}, %[[W]] : f16

// PTX: .entry fill_add_k0(
// PTX: .param .align 2 .b8 fill_add_k0_param_1[2],
// PTX: .param .align 2 .b8 fill_add_k0_param_2[2],

func.func @fill_add(%x: tensor<64x64xf16>, %v: f16, %w: f16) -> tensor<64x64xf16> {
  %e = tensor.empty() : tensor<64x64xf16>
  %f = linalg.fill ins(%v : f16) outs(%e : tensor<64x64xf16>) -> tensor<64x64xf16>
  %s = linalg.add ins(%x, %f : tensor<64x64xf16>, tensor<64x64xf16>) outs(%e : tensor<64x64xf16>) -> tensor<64x64xf16>
  %t = tensor.splat %w : tensor<64x64xf16>
  %r = linalg.mul ins(%s, %t : tensor<64x64xf16>, tensor<64x64xf16>) outs(%e : tensor<64x64xf16>) -> tensor<64x64xf16>
  return %r : tensor<64x64xf16>
}

// -----

// i1 (a byte holding 0 or 1, as in buffers) and integer scalars.
// CHECK-LABEL: func.func @masked_i1(
// CHECK-SAME:      %{{[^:]*}}: memref<256xi32>, %{{[^:]*}}: i1, %{{[^:]*}}: i32, %{{[^:]*}}: memref<256xi32>)
// CHECK:         gpu.func @masked_i1_k0(%{{[^:]*}}: memref<256xi32>, %[[C:[^:]*]]: i1, %[[K:[^:]*]]: i32, %{{[^:]*}}: memref<256xi32>) kernel
// CHECK:           arith.select %[[C]], %{{.*}}, %[[K]] : i32

// PTX: .entry masked_i1_k0(
// PTX: .param .u8 masked_i1_k0_param_1,
// PTX: .param .u32 masked_i1_k0_param_2,

func.func @masked_i1(%x: tensor<256xi32>, %c: i1, %k: i32) -> tensor<256xi32> {
  %e = tensor.empty() : tensor<256xi32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      ins(%x : tensor<256xi32>) outs(%e : tensor<256xi32>) {
    ^bb0(%a: i32, %o: i32):
      %y = arith.select %c, %a, %k : i32
      linalg.yield %y : i32
  } -> tensor<256xi32>
  return %r : tensor<256xi32>
}

// -----

// LayerNorm's eps: the whole function is one row program, eps its parameter.
// CHECK-LABEL: func.func @layernorm_eps(
// CHECK-SAME:      %{{[^:]*}}: memref<64x256xf32>, %[[EPS:[^:]*]]: f32, %{{[^:]*}}: memref<64x256xf32>)
// CHECK-COUNT-1: gpu.launch_func
// CHECK:         gpu.func @layernorm_eps_k0(%{{[^:]*}}: memref<64x256xf32>, %[[KE:[^:]*]]: f32, %{{[^:]*}}: memref<64x256xf32>)
// CHECK-SAME:      evo.family = #evo.family<rows>
// CHECK:           arith.addf %{{.*}}, %[[KE]] : f32
// CHECK:           math.rsqrt

// PTX: .entry layernorm_eps_k0(
// PTX: .param .f32 layernorm_eps_k0_param_1,

func.func @layernorm_eps(%x: tensor<64x256xf32>, %eps: f32) -> tensor<64x256xf32> {
  %zero = arith.constant 0.0 : f32
  %inv_n = arith.constant 3.90625e-03 : f32
  %er = tensor.empty() : tensor<64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%er : tensor<64xf32>) -> tensor<64xf32>
  %sum = linalg.reduce ins(%x : tensor<64x256xf32>) outs(%acc : tensor<64xf32>) dimensions = [1]
    (%in: f32, %a: f32) {
      %s = arith.addf %in, %a : f32
      linalg.yield %s : f32
    }
  %e = tensor.empty() : tensor<64x256xf32>
  %centered = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>],
                              iterator_types = ["parallel", "parallel"]}
      ins(%x, %sum : tensor<64x256xf32>, tensor<64xf32>) outs(%e : tensor<64x256xf32>) {
  ^bb0(%v: f32, %s: f32, %o: f32):
    %m = arith.mulf %s, %inv_n : f32
    %c = arith.subf %v, %m : f32
    linalg.yield %c : f32
  } -> tensor<64x256xf32>
  %sq = linalg.reduce ins(%centered : tensor<64x256xf32>) outs(%acc : tensor<64xf32>) dimensions = [1]
    (%in: f32, %a: f32) {
      %p = arith.mulf %in, %in : f32
      %s = arith.addf %p, %a : f32
      linalg.yield %s : f32
    }
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%centered, %sq : tensor<64x256xf32>, tensor<64xf32>) outs(%e : tensor<64x256xf32>) {
  ^bb0(%c: f32, %q: f32, %o: f32):
    %var = arith.mulf %q, %inv_n : f32
    %ve = arith.addf %var, %eps : f32
    %r = math.rsqrt %ve : f32
    %n = arith.mulf %c, %r : f32
    linalg.yield %n : f32
  } -> tensor<64x256xf32>
  return %y : tensor<64x256xf32>
}

// -----

// alpha * (A @ B) + beta, tiled: the scalars are parameters of the contraction's kernel, read in
// its epilogue.
// CHECK-LABEL: func.func @mm_alpha_beta(
// CHECK-SAME:      %{{[^:]*}}: memref<128x64xf32>, %{{[^:]*}}: memref<64x128xf32>, %{{[^:]*}}: f32, %{{[^:]*}}: f32, %{{[^:]*}}: memref<128x128xf32>)
// CHECK-COUNT-1: gpu.launch_func
// CHECK:         gpu.func @mm_alpha_beta_k0(%{{[^:]*}}: memref<128x64xf32>, %{{[^:]*}}: memref<64x128xf32>, %[[AL:[^:]*]]: f32, %[[BE:[^:]*]]: f32, %{{[^:]*}}: memref<128x128xf32>)
// CHECK-SAME:      evo.family = #evo.family<matmul>, evo.knobs = #evo.knobs<vector_width = 4, tile_sizes = [32, 64, 8], thread_tile = [4, 4]>
// CHECK:           arith.mulf %{{.*}}, %[[AL]] {{.*}}: f32
// CHECK:           arith.addf %{{.*}}, %[[BE]] {{.*}}: f32

// PTX: .entry mm_alpha_beta_k0(
// PTX: .param .f32 mm_alpha_beta_k0_param_2,
// PTX: .param .f32 mm_alpha_beta_k0_param_3,

func.func @mm_alpha_beta(%a: tensor<128x64xf32>, %b: tensor<64x128xf32>, %alpha: f32, %beta: f32) -> tensor<128x128xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x128xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<128x128xf32>) -> tensor<128x128xf32>
  %m = linalg.matmul {evo.knobs = {tile_sizes = [32, 64, 8], thread_tile = [4, 4], vector_width = 4}}
      ins(%a, %b : tensor<128x64xf32>, tensor<64x128xf32>) outs(%f : tensor<128x128xf32>) -> tensor<128x128xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%m : tensor<128x128xf32>) outs(%e : tensor<128x128xf32>) {
    ^bb0(%v: f32, %o: f32):
      %s = arith.mulf %v, %alpha : f32
      %t = arith.addf %s, %beta : f32
      linalg.yield %t : f32
  } -> tensor<128x128xf32>
  return %r : tensor<128x128xf32>
}

// -----

// A scalar no op reads stays an argument of the host function (the callers' signature); no
// kernel takes it.
// CHECK-LABEL: func.func @unused(
// CHECK-SAME:      %{{[^:]*}}: memref<16xf32>, %{{[^:]*}}: i64, %{{[^:]*}}: memref<16xf32>)
// CHECK:         gpu.launch_func @unused_kernels::@unused_k0
// CHECK-SAME:      args(%{{[^:]*}} : memref<16xf32>, %{{[^:]*}} : memref<16xf32>)
// CHECK:         #evo.buffer<name = "arg1", role = input, type = memref<i64>, by_value = true>
func.func @unused(%x: tensor<16xf32>, %n: i64) -> tensor<16xf32> {
  %r = arith.addf %x, %x : tensor<16xf32>
  return %r : tensor<16xf32>
}
