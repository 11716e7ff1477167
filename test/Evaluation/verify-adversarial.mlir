// The adversarial kernel suite -- hand-written kernels that are wrong in the ways the field has
// seen, each with the plan of the function it claims to compute. evo-verify must reject every
// one with the right reason (or time it out), accept the correct ones, and survive all of them
// in one process (-split-input-file runs every case in this one evo-opt).
//
// REQUIRES: cuda
// RUN: evo-opt %s -split-input-file -verify-diagnostics -evo-emit-ptx="output-dir=-" \
// RUN:   -evo-verify="timing=false timeout=5" -o /dev/null

// correct: y = 2x + 1 written by hand, accepted.
// expected-remark @+2 {{evo-verify: 'f' is valid (5 trials)}}
module attributes {gpu.container_module} {
  gpu.module @f_kernels attributes {evo.plan = #evo.plan<func = "f", source = "func.func @f(%x: tensor<1000xf32>) -> tensor<1000xf32> { %c2 = arith.constant dense<2.0> : tensor<1000xf32> %c1 = arith.constant dense<1.0> : tensor<1000xf32> %m = arith.mulf %x, %c2 : tensor<1000xf32> %y = arith.addf %m, %c1 : tensor<1000xf32> return %y : tensor<1000xf32> }", buffers = [#evo.buffer<name = "arg0", role = input, type = memref<1000xf32>>, #evo.buffer<name = "result0", role = output, type = memref<1000xf32>>], tasks = [#evo.task<name = "f_t0", family = elementwise, source = "", knobs = #evo.knobs<>, buffers = [0, 1]>], launches = [#evo.launch<kernel = "k", task = 0, grid = [4, 1, 1], block = [256, 1, 1], args = [0, 1]>]>} {
    gpu.func @k(%x: memref<1000xf32>, %y: memref<1000xf32>) kernel {
      %b = gpu.block_id x
      %t = gpu.thread_id x
      %c256 = arith.constant 256 : index
      %base = arith.muli %b, %c256 : index
      %i = arith.addi %base, %t : index
      %two = arith.constant 2.0 : f32
      %one = arith.constant 1.0 : f32
      %n = arith.constant 1000 : index
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %v = memref.load %x[%i] : memref<1000xf32>
        %m = arith.mulf %v, %two : f32
        %r = arith.addf %m, %one : f32
        memref.store %r, %y[%i] : memref<1000xf32>
      }
      gpu.return
    }
  }
}
// -----

// partial write: only the first half of the elements

// expected-error @+2 {{500 of 1000 elements of 'result0' were never written}}
module attributes {gpu.container_module} {
  gpu.module @f_kernels attributes {evo.plan = #evo.plan<func = "f", source = "func.func @f(%x: tensor<1000xf32>) -> tensor<1000xf32> { %c2 = arith.constant dense<2.0> : tensor<1000xf32> %c1 = arith.constant dense<1.0> : tensor<1000xf32> %m = arith.mulf %x, %c2 : tensor<1000xf32> %y = arith.addf %m, %c1 : tensor<1000xf32> return %y : tensor<1000xf32> }", buffers = [#evo.buffer<name = "arg0", role = input, type = memref<1000xf32>>, #evo.buffer<name = "result0", role = output, type = memref<1000xf32>>], tasks = [#evo.task<name = "f_t0", family = elementwise, source = "", knobs = #evo.knobs<>, buffers = [0, 1]>], launches = [#evo.launch<kernel = "k", task = 0, grid = [4, 1, 1], block = [256, 1, 1], args = [0, 1]>]>} {
    gpu.func @k(%x: memref<1000xf32>, %y: memref<1000xf32>) kernel {
      %b = gpu.block_id x
      %t = gpu.thread_id x
      %c256 = arith.constant 256 : index
      %base = arith.muli %b, %c256 : index
      %i = arith.addi %base, %t : index
      %two = arith.constant 2.0 : f32
      %one = arith.constant 1.0 : f32
      %n = arith.constant 500 : index
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %v = memref.load %x[%i] : memref<1000xf32>
        %m = arith.mulf %v, %two : f32
        %r = arith.addf %m, %one : f32
        memref.store %r, %y[%i] : memref<1000xf32>
      }
      gpu.return
    }
  }
}
// -----

// off by one: the tail of a size that is not a multiple of the block

// expected-error @+2 {{1 of 1000 elements of 'result0' were never written}}
module attributes {gpu.container_module} {
  gpu.module @f_kernels attributes {evo.plan = #evo.plan<func = "f", source = "func.func @f(%x: tensor<1000xf32>) -> tensor<1000xf32> { %c2 = arith.constant dense<2.0> : tensor<1000xf32> %c1 = arith.constant dense<1.0> : tensor<1000xf32> %m = arith.mulf %x, %c2 : tensor<1000xf32> %y = arith.addf %m, %c1 : tensor<1000xf32> return %y : tensor<1000xf32> }", buffers = [#evo.buffer<name = "arg0", role = input, type = memref<1000xf32>>, #evo.buffer<name = "result0", role = output, type = memref<1000xf32>>], tasks = [#evo.task<name = "f_t0", family = elementwise, source = "", knobs = #evo.knobs<>, buffers = [0, 1]>], launches = [#evo.launch<kernel = "k", task = 0, grid = [4, 1, 1], block = [256, 1, 1], args = [0, 1]>]>} {
    gpu.func @k(%x: memref<1000xf32>, %y: memref<1000xf32>) kernel {
      %b = gpu.block_id x
      %t = gpu.thread_id x
      %c256 = arith.constant 256 : index
      %base = arith.muli %b, %c256 : index
      %i = arith.addi %base, %t : index
      %two = arith.constant 2.0 : f32
      %one = arith.constant 1.0 : f32
      %n = arith.constant 999 : index
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %v = memref.load %x[%i] : memref<1000xf32>
        %m = arith.mulf %v, %two : f32
        %r = arith.addf %m, %one : f32
        memref.store %r, %y[%i] : memref<1000xf32>
      }
      gpu.return
    }
  }
}
// -----

// out-of-bounds write: y[i + 1] instead of y[i]

// expected-error @+2 {{out-of-bounds write: 4 bytes changed in the red zones around buffer 'result0'}}
module attributes {gpu.container_module} {
  gpu.module @f_kernels attributes {evo.plan = #evo.plan<func = "f", source = "func.func @f(%x: tensor<1000xf32>) -> tensor<1000xf32> { %c2 = arith.constant dense<2.0> : tensor<1000xf32> %c1 = arith.constant dense<1.0> : tensor<1000xf32> %m = arith.mulf %x, %c2 : tensor<1000xf32> %y = arith.addf %m, %c1 : tensor<1000xf32> return %y : tensor<1000xf32> }", buffers = [#evo.buffer<name = "arg0", role = input, type = memref<1000xf32>>, #evo.buffer<name = "result0", role = output, type = memref<1000xf32>>], tasks = [#evo.task<name = "f_t0", family = elementwise, source = "", knobs = #evo.knobs<>, buffers = [0, 1]>], launches = [#evo.launch<kernel = "k", task = 0, grid = [4, 1, 1], block = [256, 1, 1], args = [0, 1]>]>} {
    gpu.func @k(%x: memref<1000xf32>, %y: memref<1000xf32>) kernel {
      %b = gpu.block_id x
      %t = gpu.thread_id x
      %c256 = arith.constant 256 : index
      %base = arith.muli %b, %c256 : index
      %i = arith.addi %base, %t : index
      %two = arith.constant 2.0 : f32
      %one = arith.constant 1.0 : f32
      %n = arith.constant 1000 : index
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %v = memref.load %x[%i] : memref<1000xf32>
        %m = arith.mulf %v, %two : f32
        %r = arith.addf %m, %one : f32
        %c1 = arith.constant 1 : index
        %j = arith.addi %i, %c1 : index
        memref.store %r, %y[%j] : memref<1000xf32>
        %c0 = arith.constant 0 : index
        %z = arith.cmpi eq, %i, %c0 : index
        scf.if %z {
          memref.store %r, %y[%c0] : memref<1000xf32>
        }
      }
      gpu.return
    }
  }
}
// -----

// NaN output: one element is 0/0

// expected-error @+2 {{'result0'[7] = nan but the oracle says}}
module attributes {gpu.container_module} {
  gpu.module @f_kernels attributes {evo.plan = #evo.plan<func = "f", source = "func.func @f(%x: tensor<1000xf32>) -> tensor<1000xf32> { %c2 = arith.constant dense<2.0> : tensor<1000xf32> %c1 = arith.constant dense<1.0> : tensor<1000xf32> %m = arith.mulf %x, %c2 : tensor<1000xf32> %y = arith.addf %m, %c1 : tensor<1000xf32> return %y : tensor<1000xf32> }", buffers = [#evo.buffer<name = "arg0", role = input, type = memref<1000xf32>>, #evo.buffer<name = "result0", role = output, type = memref<1000xf32>>], tasks = [#evo.task<name = "f_t0", family = elementwise, source = "", knobs = #evo.knobs<>, buffers = [0, 1]>], launches = [#evo.launch<kernel = "k", task = 0, grid = [4, 1, 1], block = [256, 1, 1], args = [0, 1]>]>} {
    gpu.func @k(%x: memref<1000xf32>, %y: memref<1000xf32>) kernel {
      %b = gpu.block_id x
      %t = gpu.thread_id x
      %c256 = arith.constant 256 : index
      %base = arith.muli %b, %c256 : index
      %i = arith.addi %base, %t : index
      %two = arith.constant 2.0 : f32
      %one = arith.constant 1.0 : f32
      %n = arith.constant 1000 : index
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %v = memref.load %x[%i] : memref<1000xf32>
        %m = arith.mulf %v, %two : f32
        %r = arith.addf %m, %one : f32
        memref.store %r, %y[%i] : memref<1000xf32>
        %c7 = arith.constant 7 : index
        %is7 = arith.cmpi eq, %i, %c7 : index
        scf.if %is7 {
          %zero = arith.constant 0.0 : f32
          %nan = arith.divf %zero, %zero : f32
          memref.store %nan, %y[%i] : memref<1000xf32>
        }
      }
      gpu.return
    }
  }
}
// -----

// writes its input: the output is right but x is overwritten

// expected-error @+2 {{the kernel modified input buffer 'arg0'}}
module attributes {gpu.container_module} {
  gpu.module @f_kernels attributes {evo.plan = #evo.plan<func = "f", source = "func.func @f(%x: tensor<1000xf32>) -> tensor<1000xf32> { %c2 = arith.constant dense<2.0> : tensor<1000xf32> %c1 = arith.constant dense<1.0> : tensor<1000xf32> %m = arith.mulf %x, %c2 : tensor<1000xf32> %y = arith.addf %m, %c1 : tensor<1000xf32> return %y : tensor<1000xf32> }", buffers = [#evo.buffer<name = "arg0", role = input, type = memref<1000xf32>>, #evo.buffer<name = "result0", role = output, type = memref<1000xf32>>], tasks = [#evo.task<name = "f_t0", family = elementwise, source = "", knobs = #evo.knobs<>, buffers = [0, 1]>], launches = [#evo.launch<kernel = "k", task = 0, grid = [4, 1, 1], block = [256, 1, 1], args = [0, 1]>]>} {
    gpu.func @k(%x: memref<1000xf32>, %y: memref<1000xf32>) kernel {
      %b = gpu.block_id x
      %t = gpu.thread_id x
      %c256 = arith.constant 256 : index
      %base = arith.muli %b, %c256 : index
      %i = arith.addi %base, %t : index
      %two = arith.constant 2.0 : f32
      %one = arith.constant 1.0 : f32
      %n = arith.constant 1000 : index
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %v = memref.load %x[%i] : memref<1000xf32>
        %m = arith.mulf %v, %two : f32
        %r = arith.addf %m, %one : f32
        memref.store %r, %y[%i] : memref<1000xf32>
        memref.store %r, %x[%i] : memref<1000xf32>
      }
      gpu.return
    }
  }
}
// -----

// wrong answer: 2x - 1

// expected-error @+2 {{but the oracle says}}
module attributes {gpu.container_module} {
  gpu.module @f_kernels attributes {evo.plan = #evo.plan<func = "f", source = "func.func @f(%x: tensor<1000xf32>) -> tensor<1000xf32> { %c2 = arith.constant dense<2.0> : tensor<1000xf32> %c1 = arith.constant dense<1.0> : tensor<1000xf32> %m = arith.mulf %x, %c2 : tensor<1000xf32> %y = arith.addf %m, %c1 : tensor<1000xf32> return %y : tensor<1000xf32> }", buffers = [#evo.buffer<name = "arg0", role = input, type = memref<1000xf32>>, #evo.buffer<name = "result0", role = output, type = memref<1000xf32>>], tasks = [#evo.task<name = "f_t0", family = elementwise, source = "", knobs = #evo.knobs<>, buffers = [0, 1]>], launches = [#evo.launch<kernel = "k", task = 0, grid = [4, 1, 1], block = [256, 1, 1], args = [0, 1]>]>} {
    gpu.func @k(%x: memref<1000xf32>, %y: memref<1000xf32>) kernel {
      %b = gpu.block_id x
      %t = gpu.thread_id x
      %c256 = arith.constant 256 : index
      %base = arith.muli %b, %c256 : index
      %i = arith.addi %base, %t : index
      %two = arith.constant 2.0 : f32
      %one = arith.constant 1.0 : f32
      %n = arith.constant 1000 : index
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %v = memref.load %x[%i] : memref<1000xf32>
        %m = arith.mulf %v, %two : f32
        %r = arith.addf %m, %one : f32
        %w = arith.subf %m, %one : f32
        memref.store %w, %y[%i] : memref<1000xf32>
      }
      gpu.return
    }
  }
}
// -----

// cached result: the first call's results are replayed from a device global on later calls

// expected-error @+2 {{but the oracle says}}
module attributes {gpu.container_module} {
  gpu.module @f_kernels attributes {evo.plan = #evo.plan<func = "f", source = "func.func @f(%x: tensor<1000xf32>) -> tensor<1000xf32> { %c2 = arith.constant dense<2.0> : tensor<1000xf32> %c1 = arith.constant dense<1.0> : tensor<1000xf32> %m = arith.mulf %x, %c2 : tensor<1000xf32> %y = arith.addf %m, %c1 : tensor<1000xf32> return %y : tensor<1000xf32> }", buffers = [#evo.buffer<name = "arg0", role = input, type = memref<1000xf32>>, #evo.buffer<name = "result0", role = output, type = memref<1000xf32>>], tasks = [#evo.task<name = "f_t0", family = elementwise, source = "", knobs = #evo.knobs<>, buffers = [0, 1]>], launches = [#evo.launch<kernel = "k", task = 0, grid = [4, 1, 1], block = [256, 1, 1], args = [0, 1]>]>} {
    memref.global "private" @cache : memref<1000xf32> = uninitialized
    memref.global "private" @flag : memref<1xi32> = dense<0>
    gpu.func @k(%x: memref<1000xf32>, %y: memref<1000xf32>) kernel {
      %b = gpu.block_id x
      %t = gpu.thread_id x
      %c256 = arith.constant 256 : index
      %base = arith.muli %b, %c256 : index
      %i = arith.addi %base, %t : index
      %two = arith.constant 2.0 : f32
      %one = arith.constant 1.0 : f32
      %n = arith.constant 1000 : index
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %v = memref.load %x[%i] : memref<1000xf32>
        %m = arith.mulf %v, %two : f32
        %r = arith.addf %m, %one : f32
        %c0 = arith.constant 0 : index
        %cache = memref.get_global @cache : memref<1000xf32>
        %flag = memref.get_global @flag : memref<1xi32>
        %f = memref.load %flag[%c0] : memref<1xi32>
        %c1i = arith.constant 1 : i32
        %seen = arith.cmpi eq, %f, %c1i : i32
        scf.if %seen {
          %old = memref.load %cache[%i] : memref<1000xf32>
          memref.store %old, %y[%i] : memref<1000xf32>
        } else {
          memref.store %r, %y[%i] : memref<1000xf32>
          memref.store %r, %cache[%i] : memref<1000xf32>
          memref.store %c1i, %flag[%c0] : memref<1xi32>
        }
      }
      gpu.return
    }
  }
}
// -----

// illegal address: a store 4 TB past the buffer

// expected-error @+2 {{is crashed: cuStreamSynchronize failed: CUDA_ERROR_ILLEGAL_ADDRESS}}
module attributes {gpu.container_module} {
  gpu.module @f_kernels attributes {evo.plan = #evo.plan<func = "f", source = "func.func @f(%x: tensor<1000xf32>) -> tensor<1000xf32> { %c2 = arith.constant dense<2.0> : tensor<1000xf32> %c1 = arith.constant dense<1.0> : tensor<1000xf32> %m = arith.mulf %x, %c2 : tensor<1000xf32> %y = arith.addf %m, %c1 : tensor<1000xf32> return %y : tensor<1000xf32> }", buffers = [#evo.buffer<name = "arg0", role = input, type = memref<1000xf32>>, #evo.buffer<name = "result0", role = output, type = memref<1000xf32>>], tasks = [#evo.task<name = "f_t0", family = elementwise, source = "", knobs = #evo.knobs<>, buffers = [0, 1]>], launches = [#evo.launch<kernel = "k", task = 0, grid = [4, 1, 1], block = [256, 1, 1], args = [0, 1]>]>} {
    gpu.func @k(%x: memref<1000xf32>, %y: memref<1000xf32>) kernel {
      %b = gpu.block_id x
      %t = gpu.thread_id x
      %c256 = arith.constant 256 : index
      %base = arith.muli %b, %c256 : index
      %i = arith.addi %base, %t : index
      %two = arith.constant 2.0 : f32
      %one = arith.constant 1.0 : f32
      %n = arith.constant 1000 : index
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %v = memref.load %x[%i] : memref<1000xf32>
        %m = arith.mulf %v, %two : f32
        %r = arith.addf %m, %one : f32
        memref.store %r, %y[%i] : memref<1000xf32>
        %far = arith.constant 1099511627776 : index
        memref.store %r, %y[%far] : memref<1000xf32>
      }
      gpu.return
    }
  }
}
// -----

// trap: a device-side assertion that fails

// expected-error @+2 {{is crashed}}
module attributes {gpu.container_module} {
  gpu.module @f_kernels attributes {evo.plan = #evo.plan<func = "f", source = "func.func @f(%x: tensor<1000xf32>) -> tensor<1000xf32> { %c2 = arith.constant dense<2.0> : tensor<1000xf32> %c1 = arith.constant dense<1.0> : tensor<1000xf32> %m = arith.mulf %x, %c2 : tensor<1000xf32> %y = arith.addf %m, %c1 : tensor<1000xf32> return %y : tensor<1000xf32> }", buffers = [#evo.buffer<name = "arg0", role = input, type = memref<1000xf32>>, #evo.buffer<name = "result0", role = output, type = memref<1000xf32>>], tasks = [#evo.task<name = "f_t0", family = elementwise, source = "", knobs = #evo.knobs<>, buffers = [0, 1]>], launches = [#evo.launch<kernel = "k", task = 0, grid = [4, 1, 1], block = [256, 1, 1], args = [0, 1]>]>} {
    gpu.func @k(%x: memref<1000xf32>, %y: memref<1000xf32>) kernel {
      %b = gpu.block_id x
      %t = gpu.thread_id x
      %c256 = arith.constant 256 : index
      %base = arith.muli %b, %c256 : index
      %i = arith.addi %base, %t : index
      %two = arith.constant 2.0 : f32
      %one = arith.constant 1.0 : f32
      %n = arith.constant 1000 : index
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %v = memref.load %x[%i] : memref<1000xf32>
        %m = arith.mulf %v, %two : f32
        %r = arith.addf %m, %one : f32
        memref.store %r, %y[%i] : memref<1000xf32>
        %never = arith.cmpf olt, %v, %v : f32
        cf.assert %never, "evo adversarial: trap"
      }
      gpu.return
    }
  }
}
// -----

// infinite loop: counts an even number up to an odd one (storing each time, so it is not optimized away)

// expected-error @+2 {{is timeout: no result within 5 s}}
module attributes {gpu.container_module} {
  gpu.module @f_kernels attributes {evo.plan = #evo.plan<func = "f", source = "func.func @f(%x: tensor<1000xf32>) -> tensor<1000xf32> { %c2 = arith.constant dense<2.0> : tensor<1000xf32> %c1 = arith.constant dense<1.0> : tensor<1000xf32> %m = arith.mulf %x, %c2 : tensor<1000xf32> %y = arith.addf %m, %c1 : tensor<1000xf32> return %y : tensor<1000xf32> }", buffers = [#evo.buffer<name = "arg0", role = input, type = memref<1000xf32>>, #evo.buffer<name = "result0", role = output, type = memref<1000xf32>>], tasks = [#evo.task<name = "f_t0", family = elementwise, source = "", knobs = #evo.knobs<>, buffers = [0, 1]>], launches = [#evo.launch<kernel = "k", task = 0, grid = [4, 1, 1], block = [256, 1, 1], args = [0, 1]>]>} {
    gpu.func @k(%x: memref<1000xf32>, %y: memref<1000xf32>) kernel {
      %b = gpu.block_id x
      %t = gpu.thread_id x
      %c256 = arith.constant 256 : index
      %base = arith.muli %b, %c256 : index
      %i = arith.addi %base, %t : index
      %two = arith.constant 2.0 : f32
      %one = arith.constant 1.0 : f32
      %n = arith.constant 1000 : index
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %v = memref.load %x[%i] : memref<1000xf32>
        %m = arith.mulf %v, %two : f32
        %r = arith.addf %m, %one : f32
        memref.store %r, %y[%i] : memref<1000xf32>
        %c0 = arith.constant 0 : index
        %c2 = arith.constant 2 : index
        %odd = arith.constant 12345678901 : index
        %end = scf.while (%k = %c0) : (index) -> index {
          %go = arith.cmpi ne, %k, %odd : index
          scf.condition(%go) %k : index
        } do {
        ^bb0(%k: index):
          memref.store %r, %y[%i] : memref<1000xf32>
          %next = arith.addi %k, %c2 : index
          scf.yield %next : index
        }
      }
      gpu.return
    }
  }
}
// -----

// relies on pre-zeroed outputs: accumulates into y[row] without initializing it (on a fresh
// cudaMalloc this often "works"; the verifier's poison makes it NaN)

// expected-error @+2 {{but the oracle says}}
module attributes {gpu.container_module} {
  gpu.module @rowsum_kernels attributes {evo.plan = #evo.plan<func = "rowsum", source = "func.func @rowsum(%x: tensor<64x1024xf32>) -> tensor<64xf32> { %z = arith.constant 0.0 : f32 %e = tensor.empty() : tensor<64xf32> %a = linalg.fill ins(%z : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32> %r = linalg.reduce ins(%x : tensor<64x1024xf32>) outs(%a : tensor<64xf32>) dimensions = [1] (%in: f32, %acc: f32) { %s = arith.addf %in, %acc : f32 linalg.yield %s : f32 } return %r : tensor<64xf32> }", buffers = [#evo.buffer<name = "arg0", role = input, type = memref<64x1024xf32>>, #evo.buffer<name = "result0", role = output, type = memref<64xf32>>], tasks = [#evo.task<name = "rowsum_t0", family = reduction, source = "", knobs = #evo.knobs<>, buffers = [0, 1]>], launches = [#evo.launch<kernel = "k", task = 0, grid = [1, 1, 1], block = [64, 1, 1], args = [0, 1]>]>} {
    gpu.func @k(%x: memref<64x1024xf32>, %y: memref<64xf32>) kernel {
      %row = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %n = arith.constant 1024 : index
      scf.for %j = %c0 to %n step %c1 {
        %acc = memref.load %y[%row] : memref<64xf32>
        %v = memref.load %x[%row, %j] : memref<64x1024xf32>
        %s = arith.addf %acc, %v : f32
        memref.store %s, %y[%row] : memref<64xf32>
      }
      gpu.return
    }
  }
}
// -----

// inter-block race: 16 blocks per row add their partial sums into y[row] with a plain
// read-modify-write (no atomics): updates get lost

// expected-error @+2 {{but the oracle says}}
module attributes {gpu.container_module} {
  gpu.module @rowsum_kernels attributes {evo.plan = #evo.plan<func = "rowsum", source = "func.func @rowsum(%x: tensor<64x1024xf32>) -> tensor<64xf32> { %z = arith.constant 0.0 : f32 %e = tensor.empty() : tensor<64xf32> %a = linalg.fill ins(%z : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32> %r = linalg.reduce ins(%x : tensor<64x1024xf32>) outs(%a : tensor<64xf32>) dimensions = [1] (%in: f32, %acc: f32) { %s = arith.addf %in, %acc : f32 linalg.yield %s : f32 } return %r : tensor<64xf32> }", buffers = [#evo.buffer<name = "arg0", role = input, type = memref<64x1024xf32>>, #evo.buffer<name = "result0", role = output, type = memref<64xf32>>], tasks = [#evo.task<name = "rowsum_t0", family = reduction, source = "", knobs = #evo.knobs<>, buffers = [0, 1]>], launches = [#evo.launch<kernel = "zero", task = 0, grid = [1, 1, 1], block = [64, 1, 1], args = [0, 1]>, #evo.launch<kernel = "racy", task = 0, grid = [1024, 1, 1], block = [64, 1, 1], args = [0, 1]>]>} {
    gpu.func @zero(%x: memref<64x1024xf32>, %y: memref<64xf32>) kernel {
      %t = gpu.thread_id x
      %z = arith.constant 0.0 : f32
      memref.store %z, %y[%t] : memref<64xf32>
      gpu.return
    }
    gpu.func @racy(%x: memref<64x1024xf32>, %y: memref<64xf32>) kernel {
      %b = gpu.block_id x
      %t = gpu.thread_id x
      %c16 = arith.constant 16 : index
      %row = arith.divui %b, %c16 : index
      %chunk = arith.remui %b, %c16 : index
      %c64 = arith.constant 64 : index
      %col0 = arith.muli %chunk, %c64 : index
      %col = arith.addi %col0, %t : index
      %v = memref.load %x[%row, %col] : memref<64x1024xf32>
      // Every thread of every block does its own unsynchronized read-modify-write.
      %acc = memref.load %y[%row] : memref<64xf32>
      %s = arith.addf %acc, %v : f32
      memref.store %s, %y[%row] : memref<64xf32>
      gpu.return
    }
  }
}
// -----

// correct reduction: two kernels (zero, then one warp per row with shuffles, lane 0 adds), accepted.

// expected-remark @+2 {{evo-verify: 'rowsum' is valid (5 trials)}}
module attributes {gpu.container_module} {
  gpu.module @rowsum_kernels attributes {evo.plan = #evo.plan<func = "rowsum", source = "func.func @rowsum(%x: tensor<64x1024xf32>) -> tensor<64xf32> { %z = arith.constant 0.0 : f32 %e = tensor.empty() : tensor<64xf32> %a = linalg.fill ins(%z : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32> %r = linalg.reduce ins(%x : tensor<64x1024xf32>) outs(%a : tensor<64xf32>) dimensions = [1] (%in: f32, %acc: f32) { %s = arith.addf %in, %acc : f32 linalg.yield %s : f32 } return %r : tensor<64xf32> }", buffers = [#evo.buffer<name = "arg0", role = input, type = memref<64x1024xf32>>, #evo.buffer<name = "result0", role = output, type = memref<64xf32>>], tasks = [#evo.task<name = "rowsum_t0", family = reduction, source = "", knobs = #evo.knobs<>, buffers = [0, 1]>], launches = [#evo.launch<kernel = "zero", task = 0, grid = [1, 1, 1], block = [64, 1, 1], args = [0, 1]>, #evo.launch<kernel = "warp", task = 0, grid = [64, 1, 1], block = [32, 1, 1], args = [0, 1]>]>} {
    gpu.func @zero(%x: memref<64x1024xf32>, %y: memref<64xf32>) kernel {
      %t = gpu.thread_id x
      %z = arith.constant 0.0 : f32
      memref.store %z, %y[%t] : memref<64xf32>
      gpu.return
    }
    gpu.func @warp(%x: memref<64x1024xf32>, %y: memref<64xf32>) kernel {
      %row = gpu.block_id x
      %lane = gpu.thread_id x
      %c32 = arith.constant 32 : index
      %n = arith.constant 1024 : index
      %z = arith.constant 0.0 : f32
      %part = scf.for %j = %lane to %n step %c32 iter_args(%acc = %z) -> (f32) {
        %v = memref.load %x[%row, %j] : memref<64x1024xf32>
        %s = arith.addf %acc, %v : f32
        scf.yield %s : f32
      }
      %sum = gpu.all_reduce add %part uniform {} : (f32) -> (f32)
      %c0 = arith.constant 0 : index
      %first = arith.cmpi eq, %lane, %c0 : index
      scf.if %first {
        %old = memref.load %y[%row] : memref<64xf32>
        %new = arith.addf %old, %sum : f32
        memref.store %new, %y[%row] : memref<64xf32>
      }
      gpu.return
    }
  }
}
