// Constant buffers (evo-lower-to-gpu's inline-constant-bytes) are written beside the PTX as
// <name>.constants.bin: each constant's little-endian bytes at a 256-aligned offset, which the
// manifest gives with the file's size and SHA-256; the runtimes upload them once per module.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: evo-opt %s -split-input-file -verify-diagnostics -evo-lower-to-gpu="inline-constant-bytes=3" -evo-emit-ptx="output-dir=%t ptxas=none" -o /dev/null
// RUN: FileCheck %s --input-file=%t/two.json
// RUN: od -An -v -tx1 %t/two.constants.bin | tr -d ' \n' | FileCheck %s --check-prefix=BYTES
// RUN: not ls %t/elided.json %t/elided.ptx %t/elided.constants.bin
// RUN: od -An -v -tx1 %t/res.constants.bin | tr -d ' \n' | FileCheck %s --check-prefix=RES
// RUN: FileCheck %s --input-file=%t/res.json --check-prefix=RES-JSON
//
// CHECK:      "buffers": [
// CHECK:          "name": "arg1",
// CHECK-NEXT:     "role": "input",
// CHECK:          "data": {
// CHECK-NEXT:       "bytes": 8,
// CHECK-NEXT:       "offset": 0
// CHECK-NEXT:     },
// CHECK-NEXT:     "dtype": "f16",
// CHECK-NEXT:     "index": 2,
// CHECK-NEXT:     "name": "const0",
// CHECK-NEXT:     "role": "constant",
// CHECK:          "data": {
// CHECK-NEXT:       "bytes": 4,
// CHECK-NEXT:       "offset": 256
// CHECK-NEXT:     },
// CHECK-NEXT:     "dtype": "i1",
// CHECK-NEXT:     "index": 3,
// CHECK-NEXT:     "name": "const1",
// CHECK-NEXT:     "role": "constant",
// CHECK:          "name": "result0",
// CHECK-NEXT:     "role": "output",
// CHECK:      "constants": {
// CHECK-NEXT:   "bytes": 260,
// CHECK-NEXT:   "file": "two.constants.bin",
// CHECK-NEXT:   "sha256": "{{([0-9a-f]{64})}}"
//
// const0: f16 [1, -2, 0.5, 65504] (0x3c00 0xc000 0x3800 0x7bff, little-endian); 248 bytes of
// padding; const1: i1 [1, 0, 1, 1], one byte each.
// BYTES: {{^}}003c00c00038ff7b{{((00){248})}}01000101{{$}}
func.func @two(%x: tensor<4xf16>, %m: tensor<4xi1>) -> tensor<4xf16> {
  %w = arith.constant dense<[1.0, -2.0, 0.5, 65504.0]> : tensor<4xf16>
  %k = arith.constant dense<[true, false, true, true]> : tensor<4xi1>
  %e = tensor.empty() : tensor<4xf16>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
    ins(%x, %w, %k, %m : tensor<4xf16>, tensor<4xf16>, tensor<4xi1>, tensor<4xi1>) outs(%e : tensor<4xf16>) {
  ^bb0(%a: f16, %b: f16, %c: i1, %d: i1, %o: f16):
    %p = arith.mulf %a, %b : f16
    %both = arith.andi %c, %d : i1
    %s = arith.select %both, %p, %a : f16
    linalg.yield %s : f16
  } -> tensor<4xf16>
  return %r : tensor<4xf16>
}

// -----

// A resource without its blob cannot be written: nothing of this function is written.
func.func @elided(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{evo-emit-ptx: the value of constant 'elided_const0' is not available to write beside the PTX (its dense_resource has no blob: elided, or dropped from the input)}}
  %w = arith.constant dense_resource<evo_nowhere> : tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.mul ins(%x, %w : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// A dense_resource weight (torch-mlir's form) with its blob: the blob's elements (after its
// 4-byte alignment header) are the file; a bf16 one and an i64 one after it, each 256-aligned.
// RES: {{^}}0000803f00000040000040400000804000000000000000000000000000000000{{((00){224})}}803f0040{{((00){252})}}0700000000000000f9ffffffffffffff{{$}}
// RES-JSON: "constants": {
// RES-JSON-NEXT: "bytes": 528,
// RES-JSON-NEXT: "file": "res.constants.bin",
func.func @res(%x: tensor<8xf32>, %y: tensor<2xbf16>, %z: tensor<2xi64>) -> (tensor<8xf32>, tensor<2xbf16>, tensor<2xi64>) {
  %w = arith.constant dense_resource<res_w> : tensor<8xf32>
  %v = arith.constant dense<[1.0, 2.0]> : tensor<2xbf16>
  %u = arith.constant dense<[7, -7]> : tensor<2xi64>
  %e = tensor.empty() : tensor<8xf32>
  %r = linalg.mul ins(%x, %w : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %eb = tensor.empty() : tensor<2xbf16>
  %rb = linalg.add ins(%y, %v : tensor<2xbf16>, tensor<2xbf16>) outs(%eb : tensor<2xbf16>) -> tensor<2xbf16>
  %ei = tensor.empty() : tensor<2xi64>
  %ri = linalg.add ins(%z, %u : tensor<2xi64>, tensor<2xi64>) outs(%ei : tensor<2xi64>) -> tensor<2xi64>
  return %r, %rb, %ri : tensor<8xf32>, tensor<2xbf16>, tensor<2xi64>
}
{-#
  dialect_resources: {
    builtin: {
      res_w: "0x040000000000803F00000040000040400000804000000000000000000000000000000000"
    }
  }
#-}


// -----

// A blob whose size is not the tensor's (33 bytes for 8 x f32): refused, nothing written.
// RUN: not ls %t/short.json %t/short.constants.bin
func.func @short(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{evo-emit-ptx: the value of constant 'short_const0' is not available to write beside the PTX (its blob has 33 bytes, not 32)}}
  %w = arith.constant dense_resource<short_w> : tensor<8xf32>
  %e = tensor.empty() : tensor<8xf32>
  %r = linalg.mul ins(%x, %w : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  return %r : tensor<8xf32>
}
{-#
  dialect_resources: {
    builtin: {
      short_w: "0x040000000000803F0000004000004040000080400000000000000000000000000000000000"
    }
  }
#-}
