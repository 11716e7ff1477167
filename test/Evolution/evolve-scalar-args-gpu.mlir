// evo-evolve on the GPU with a scalar argument (docs/lowering.md, "Scalar arguments"):
// leaky_relu's negative slope is a by-value kernel parameter in every candidate the real worker
// launches (the value the input set drew, in the kernel's parameter list) and in the emitted
// PTX; the winner passes the final re-verification against the float64 oracle on fresh inputs,
// and the manifest says the argument is a scalar.
//
// REQUIRES: cuda
// RUN: rm -rf %t && mkdir -p %t
// RUN: evo-opt %s --evo-lower-to-gpu --evo-evolve="run-dir=%t/run max-candidates=8 quiet=true" --evo-emit-ptx="output-dir=%t" -o %t/out.mlir 2>%t/err
// RUN: FileCheck %s --input-file=%t/err
// RUN: FileCheck %s --input-file=%t/leaky_relu.ptx --check-prefix=PTX
// RUN: %python -c "import json,sys; m = json.load(open(sys.argv[1])); print([(b['name'], b['role'], b['dtype'], b['shape'], b.get('by_value', False)) for b in m['buffers']])" %t/leaky_relu.json | FileCheck %s --check-prefix=MANIFEST
// RUN: %python %S/Inputs/list_candidates.py %t/run | FileCheck %s --check-prefix=CANDIDATES

// CHECK-NOT: error
// CHECK: remark: evo-evolve: leaky_relu_t0: {{[0-9.]+}} ms -> {{[0-9.]+}} ms ({{[0-9.]+}}x), {{[0-9]+}} candidates evaluated, {{[1-9][0-9]*}} valid
// CHECK: remark: evo-evolve: 'leaky_relu': the emitted kernels passed the final re-verification
// CHECK-NOT: error

// PTX: .entry leaky_relu_k0(
// PTX-NEXT: .param .u64 .ptr {{.*}}leaky_relu_k0_param_0,
// PTX-NEXT: .param .f32 leaky_relu_k0_param_1,
// PTX-NEXT: .param .u64 .ptr {{.*}}leaky_relu_k0_param_2

// MANIFEST: [('arg0', 'input', 'f32', [4096, 1024], False), ('arg1', 'input', 'f32', [], True), ('result0', 'output', 'f32', [4096, 1024], False)]

// CANDIDATES: leaky_relu_t0 elementwise baseline valid

func.func @leaky_relu(%x: tensor<4096x1024xf32>, %alpha: f32) -> tensor<4096x1024xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4096x1024xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4096x1024xf32>) outs(%e : tensor<4096x1024xf32>) {
    ^bb0(%v: f32, %o: f32):
      %neg = arith.mulf %v, %alpha : f32
      %pos = arith.cmpf ogt, %v, %zero : f32
      %y = arith.select %pos, %v, %neg : f32
      linalg.yield %y : f32
  } -> tensor<4096x1024xf32>
  return %r : tensor<4096x1024xf32>
}
