// evo-verify on i1 buffers (torch.bool: a byte per element holding 0 or 1): masks as inputs
// (a masked fill, a masked prefix sum), comparisons as outputs, a mask computed from masks
// (i1 in, i1 out) and a row-wise "any" (an i1 reduction). The verifier fills i1 inputs with 0
// and 1 only and compares i1 outputs exactly: a kernel that wrote any other byte, or a mask
// that lost elements, is wrong.
//
// REQUIRES: cuda
// RUN: rm -rf %t && mkdir -p %t
// RUN: evo-opt %s -split-input-file --evo-pipeline="output-dir=%t" --evo-verify="runs=3" -o /dev/null 2>&1 | FileCheck %s
// RUN: python3 -c "import json,sys; m = json.load(open(sys.argv[1])); print([b['dtype'] for b in m['buffers']])" %t/mask_logic.json | FileCheck %s --check-prefix=MANIFEST

// CHECK-NOT: error
// MANIFEST: ['f32', 'i1', 'i1', 'i1']

#m2 = affine_map<(i, j) -> (i, j)>
func.func @masked_fill(%x: tensor<100x300xf32>, %m: tensor<100x300xi1>) -> tensor<100x300xf32> {
  %big = arith.constant -1.0e4 : f32
  %e = tensor.empty() : tensor<100x300xf32>
  %y = linalg.generic {indexing_maps = [#m2, #m2, #m2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : tensor<100x300xf32>, tensor<100x300xi1>) outs(%e : tensor<100x300xf32>) {
  ^bb0(%a: f32, %b: i1, %o: f32):
    %v = arith.select %b, %big, %a : f32
    linalg.yield %v : f32
  } -> tensor<100x300xf32>
  return %y : tensor<100x300xf32>
}

// -----

#m2 = affine_map<(i, j) -> (i, j)>
func.func @mask_logic(%x: tensor<100x300xf32>, %m: tensor<100x300xi1>, %n: tensor<100x300xi1>) -> tensor<100x300xi1> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<100x300xi1>
  %y = linalg.generic {indexing_maps = [#m2, #m2, #m2, #m2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m, %n : tensor<100x300xf32>, tensor<100x300xi1>, tensor<100x300xi1>) outs(%e : tensor<100x300xi1>) {
  ^bb0(%a: f32, %b: i1, %c: i1, %o: i1):
    %pos = arith.cmpf ogt, %a, %zero : f32
    %x1 = arith.xori %b, %c : i1
    %r = arith.andi %x1, %pos : i1
    linalg.yield %r : i1
  } -> tensor<100x300xi1>
  return %y : tensor<100x300xi1>
}

// -----

#m2 = affine_map<(i, j) -> (i, j)>
#r = affine_map<(i, j) -> (i)>
func.func @row_any(%x: tensor<100x300xf32>) -> tensor<100xi1> {
  %f = arith.constant false
  %t = arith.constant 0.9 : f32
  %e = tensor.empty() : tensor<100xi1>
  %init = linalg.fill ins(%f : i1) outs(%e : tensor<100xi1>) -> tensor<100xi1>
  %a = linalg.generic {indexing_maps = [#m2, #r], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<100x300xf32>) outs(%init : tensor<100xi1>) {
  ^bb0(%v: f32, %o: i1):
    %c = arith.cmpf ogt, %v, %t : f32
    %r = arith.ori %c, %o : i1
    linalg.yield %r : i1
  } -> tensor<100xi1>
  return %a : tensor<100xi1>
}

// -----

#in = affine_map<(b, i, k) -> (b, k)>
#out = affine_map<(b, i, k) -> (b, i)>
func.func @masked_cumsum(%x: tensor<16x500xf32>, %m: tensor<16x500xi1>) -> tensor<16x500xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x500xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x500xf32>) -> tensor<16x500xf32>
  %y = linalg.generic {indexing_maps = [#in, #in, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %m : tensor<16x500xf32>, tensor<16x500xi1>) outs(%f : tensor<16x500xf32>) {
  ^bb0(%a: f32, %b: i1, %o: f32):
    %i = linalg.index 1 : index
    %k = linalg.index 2 : index
    %le = arith.cmpi ule, %k, %i : index
    %v = arith.select %b, %a, %zero : f32
    %s = arith.select %le, %v, %zero : f32
    %t = arith.addf %s, %o : f32
    linalg.yield %t : f32
  } -> tensor<16x500xf32>
  return %y : tensor<16x500xf32>
}
