// Names that become file names or PTX symbols (docs/reliability.md, "Input modules and output
// files"): a function, gpu.module, kernel, symbol or evo.plan name with '/', '..', '-', '.',
// control or non-UTF-8 bytes, or too long, is a diagnostic at the op (a name in an #evo.plan: at
// the attribute, when the module is parsed: one error). Nothing is ever written outside output-dir, and NVPTX never sees such a name (it aborts with "LLVM ERROR: Symbol name
// with unsupported characters").
//
// RUN: rm -rf %t && mkdir -p %t/a/b/c/out
// RUN: evo-opt %s -split-input-file -verify-diagnostics --evo-pipeline="output-dir=%t/a/b/c/out ptxas=none" -o /dev/null
// Only the valid chunk wrote files, and only inside output-dir:
// RUN: find %t -type f | sort | FileCheck %s --check-prefix=FILES
// RUN: find %t -type f | count 2
// FILES: a/b/c/out/fine.json
// FILES-NEXT: a/b/c/out/fine.ptx
//
// Without -verify-diagnostics: a non-zero exit, no crash, nothing written at all.
// RUN: rm -rf %t && mkdir -p %t/a/b/c/out
// RUN: not evo-opt %s -split-input-file --evo-pipeline="output-dir=%t/a/b/c/out ptxas=none" -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=EXIT
// EXIT-NOT: LLVM ERROR
// EXIT-NOT: Stack dump
// EXIT: error: evo-lower-to-gpu: function name "../../../x"
// EXIT-NOT: LLVM ERROR
// EXIT-NOT: Stack dump
// RUN: find %t -type f | count 0
// The same names reach evo-emit-ptx alone (hand-written modules) without a crash.
// RUN: not evo-opt %s -split-input-file -evo-emit-ptx="output-dir=%t/a/b/c/out ptxas=none" -o /dev/null 2>&1 | FileCheck %s --check-prefix=EMIT
// EMIT-NOT: LLVM ERROR
// EMIT: error: gpu.module name "../m"
// EMIT-NOT: LLVM ERROR
// RUN: find %t -type f | count 0

// expected-error @+1 {{evo-lower-to-gpu: function name "../../../x" cannot be a PTX symbol or a file name}}
func.func @"../../../x"(%x: tensor<16xf32>) -> tensor<16xf32> {
  %e = tensor.empty() : tensor<16xf32>
  %r = linalg.exp ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  return %r : tensor<16xf32>
}

// -----

// expected-error @+1 {{evo-lower-to-gpu: function name "a-b" cannot be a PTX symbol or a file name}}
func.func @"a-b"(%x: tensor<16xf32>) -> tensor<16xf32> {
  %e = tensor.empty() : tensor<16xf32>
  %r = linalg.exp ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  return %r : tensor<16xf32>
}

// -----

// expected-error @+1 {{function name "/tmp/abs" cannot be a PTX symbol or a file name}}
func.func @"/tmp/abs"(%x: tensor<16xf32>) -> tensor<16xf32> {
  %e = tensor.empty() : tensor<16xf32>
  %r = linalg.exp ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  return %r : tensor<16xf32>
}

// -----

// expected-error @+1 {{function name "\FF\FE" cannot be a PTX symbol}}
func.func @"\FF\FE"(%x: tensor<16xf32>) -> tensor<16xf32> {
  %e = tensor.empty() : tensor<16xf32>
  %r = linalg.exp ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  return %r : tensor<16xf32>
}

// -----

// expected-error @+1 {{function name "x\1B[2Jy\0A" cannot be a PTX symbol}}
func.func @"x\1B[2Jy\0A"(%x: tensor<16xf32>) -> tensor<16xf32> {
  %e = tensor.empty() : tensor<16xf32>
  %r = linalg.exp ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  return %r : tensor<16xf32>
}

// -----

// expected-error @+1 {{function name "a.b" cannot be a PTX symbol}}
func.func @"a.b"(%x: tensor<16xf32>) -> tensor<16xf32> {
  %e = tensor.empty() : tensor<16xf32>
  %r = linalg.exp ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  return %r : tensor<16xf32>
}

// -----

// expected-error @+1 {{function name "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"... (185 bytes) cannot be a PTX symbol or a file name: use letters, digits, '_' and '$', starting with a letter or '_', at most 184 characters}}
func.func @fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff(%x: tensor<16xf32>) -> tensor<16xf32> {
  %e = tensor.empty() : tensor<16xf32>
  %r = linalg.exp ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  return %r : tensor<16xf32>
}

// -----

// expected-error @+2 {{gpu.module name "../m" cannot be a PTX symbol or a file name}}
module attributes {gpu.container_module} {
  gpu.module @"../m" {
    gpu.func @k(%x: memref<16xf32>) kernel { gpu.return }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @m {
    // expected-error @+1 {{symbol "a-b" cannot be a PTX symbol or a file name}}
    gpu.func @"a-b"(%x: memref<16xf32>) kernel { gpu.return }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @m {
    // expected-error @+1 {{symbol "\FF\01k" cannot be a PTX symbol}}
    gpu.func @"\FF\01k"(%x: memref<16xf32>) kernel { gpu.return }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k(%x: memref<16xf32>) kernel { gpu.return }
    // expected-error @+1 {{symbol "x/y" cannot be a PTX symbol}}
    func.func @"x/y"() { return }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k(%x: memref<16xf32>) kernel { gpu.return }
    // expected-error @+1 {{symbol "llvm.nvvm/../x" cannot be a PTX symbol}}
    llvm.func @"llvm.nvvm/../x"()
  }
}

// -----

// expected-error @+2 {{evo.plan: function name "../../../x" cannot be a PTX symbol or a file name}}
module attributes {gpu.container_module} {
  gpu.module @m attributes {evo.plan = #evo.plan<func = "../../../x", source = "", buffers = [#evo.buffer<name = "arg0", role = input, type = memref<16xf32>>], tasks = [#evo.task<name = "t", family = elementwise, source = "", knobs = #evo.knobs<>, buffers = [0]>], launches = [#evo.launch<kernel = "k", task = 0, grid = [1, 1, 1], block = [16, 1, 1], args = [0]>]>} {
    gpu.func @k(%x: memref<16xf32>) kernel { gpu.return }
  }
}

// -----

// expected-error @+2 {{evo.plan: task name "../t" cannot be a PTX symbol or a file name}}
module attributes {gpu.container_module} {
  gpu.module @m attributes {evo.plan = #evo.plan<func = "m", source = "", buffers = [#evo.buffer<name = "arg0", role = input, type = memref<16xf32>>], tasks = [#evo.task<name = "../t", family = elementwise, source = "", knobs = #evo.knobs<>, buffers = [0]>], launches = [#evo.launch<kernel = "k", task = 0, grid = [1, 1, 1], block = [16, 1, 1], args = [0]>]>} {
    gpu.func @k(%x: memref<16xf32>) kernel { gpu.return }
  }
}

// -----

// expected-error @+2 {{evo.plan: kernel name "../k" cannot be a PTX symbol or a file name}}
module attributes {gpu.container_module} {
  gpu.module @m attributes {evo.plan = #evo.plan<func = "m", source = "", buffers = [#evo.buffer<name = "arg0", role = input, type = memref<16xf32>>], tasks = [#evo.task<name = "t", family = elementwise, source = "", knobs = #evo.knobs<>, buffers = [0]>], launches = [#evo.launch<kernel = "../k", task = 0, grid = [1, 1, 1], block = [16, 1, 1], args = [0]>]>} {
    gpu.func @k(%x: memref<16xf32>) kernel { gpu.return }
  }
}

// -----

// A valid function, to show what is written: two files, inside output-dir.
func.func @fine(%x: tensor<16xf32>) -> tensor<16xf32> {
  %e = tensor.empty() : tensor<16xf32>
  %r = linalg.exp ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  return %r : tensor<16xf32>
}
