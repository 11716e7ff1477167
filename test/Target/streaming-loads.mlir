// evo-streaming-loads: a nontemporal load of 4, 8 or 16 bytes from a kernel parameter that the
// kernel only reads becomes ld.global.nc.L1::no_allocate (inline PTX); anything else is left
// alone (lib/Target/StreamingLoads.cpp).

// RUN: evo-opt %s -split-input-file -evo-streaming-loads | FileCheck %s

// CHECK-LABEL: llvm.func @streamed
// CHECK:         %[[A:.*]] = llvm.ptrtoint %{{.*}} : !llvm.ptr to i64
// CHECK:         %[[R:.*]] = llvm.inline_asm asm_dialect = att "ld.global.nc.L1::no_allocate.v4.b32 {$0, $1, $2, $3}, [$4];", "=r,=r,=r,=r,l" %[[A]] : (i64) -> !llvm.struct<(i32, i32, i32, i32)>
// CHECK-COUNT-4: llvm.insertelement
// CHECK:         llvm.bitcast %{{.*}} : vector<4xi32> to vector<4xf32>
// CHECK:         llvm.inline_asm asm_dialect = att "ld.global.nc.L1::no_allocate.v2.b32 {$0, $1}, [$2];", "=r,=r,l"
// CHECK:         llvm.bitcast %{{.*}} : vector<2xi32> to vector<2xf32>
// CHECK:         llvm.inline_asm asm_dialect = att "ld.global.nc.L1::no_allocate.b32 $0, [$1];", "=r,l"
// CHECK:         llvm.bitcast %{{.*}} : i32 to vector<2xf16>
// CHECK:         llvm.inline_asm asm_dialect = att "ld.global.nc.L1::no_allocate.b32 $0, [$1];", "=r,l"
// CHECK-NOT:     llvm.bitcast
// Not rewritten: no nontemporal, 2 bytes, 32 bytes, under-aligned.
// CHECK:         llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
// CHECK:         llvm.load %{{.*}} {alignment = 2 : i64, nontemporal} : !llvm.ptr -> f16
// CHECK:         llvm.load %{{.*}} {alignment = 32 : i64, nontemporal} : !llvm.ptr -> vector<8xf32>
// CHECK:         llvm.load %{{.*}} {alignment = 4 : i64, nontemporal} : !llvm.ptr -> vector<4xf32>
// CHECK-NOT:     no_allocate
// CHECK:         llvm.return
gpu.module @m [#nvvm.target<chip = "sm_90", features = "+ptx80">] {
  llvm.func @streamed(%a: !llvm.ptr, %y: !llvm.ptr, %i: i64) attributes {gpu.kernel, nvvm.kernel} {
    %p = llvm.getelementptr %a[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
    %v4 = llvm.load %p {alignment = 16 : i64, nontemporal} : !llvm.ptr -> vector<4xf32>
    %v2 = llvm.load %p {alignment = 8 : i64, nontemporal} : !llvm.ptr -> vector<2xf32>
    %h2 = llvm.load %p {alignment = 4 : i64, nontemporal} : !llvm.ptr -> vector<2xf16>
    %s = llvm.load %p {alignment = 4 : i64, nontemporal} : !llvm.ptr -> i32
    %plain = llvm.load %p {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
    %h = llvm.load %p {alignment = 2 : i64, nontemporal} : !llvm.ptr -> f16
    %w = llvm.load %p {alignment = 32 : i64, nontemporal} : !llvm.ptr -> vector<8xf32>
    %u = llvm.load %p {alignment = 4 : i64, nontemporal} : !llvm.ptr -> vector<4xf32>
    llvm.store %v4, %y {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr
    %q = llvm.getelementptr %y[16] : (!llvm.ptr) -> !llvm.ptr, i8
    llvm.store %v2, %q : vector<2xf32>, !llvm.ptr
    llvm.store %h2, %q : vector<2xf16>, !llvm.ptr
    llvm.store %s, %q : i32, !llvm.ptr
    llvm.store %plain, %q : vector<4xf32>, !llvm.ptr
    llvm.store %h, %q : f16, !llvm.ptr
    llvm.store %w, %q : vector<8xf32>, !llvm.ptr
    llvm.store %u, %q : vector<4xf32>, !llvm.ptr
    llvm.return
  }
}

// -----

// Parameters the kernel writes (a store, an atomic, inline asm), reads volatile, or whose address
// escapes are not read-only: a load marked nontemporal from them stays a coherent load. So does
// one from shared memory.

// CHECK-LABEL: llvm.func @written
// CHECK-NOT:     no_allocate
// CHECK:         llvm.return
gpu.module @m [#nvvm.target<chip = "sm_90", features = "+ptx80">] {
  llvm.mlir.global internal @tile() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<64 x f32>
  llvm.func @written(%inout: !llvm.ptr, %escaped: !llvm.ptr, %atomic: !llvm.ptr, %asm: !llvm.ptr,
                     %vol: !llvm.ptr, %y: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel} {
    %c1 = llvm.mlir.constant(1.0 : f32) : f32
    %a = llvm.load %inout {alignment = 16 : i64, nontemporal} : !llvm.ptr -> vector<4xf32>
    %g = llvm.getelementptr %inout[4] : (!llvm.ptr) -> !llvm.ptr, f32
    llvm.store %a, %g {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr
    %b = llvm.load %escaped {alignment = 16 : i64, nontemporal} : !llvm.ptr -> vector<4xf32>
    %addr = llvm.ptrtoint %escaped : !llvm.ptr to i64
    %c = llvm.load %atomic {alignment = 16 : i64, nontemporal} : !llvm.ptr -> vector<4xf32>
    %old = llvm.atomicrmw fadd %atomic, %c1 monotonic : !llvm.ptr, f32
    %d = llvm.load %asm {alignment = 16 : i64, nontemporal} : !llvm.ptr -> vector<4xf32>
    llvm.inline_asm has_side_effects asm_dialect = att "st.global.b32 [$0], 0;", "l" %asm : (!llvm.ptr) -> ()
    %f = llvm.load %vol {alignment = 16 : i64, nontemporal} : !llvm.ptr -> vector<4xf32>
    %flag = llvm.load volatile %vol {alignment = 4 : i64} : !llvm.ptr -> i32
    %t = llvm.mlir.addressof @tile : !llvm.ptr<3>
    %e = llvm.load %t {alignment = 16 : i64, nontemporal} : !llvm.ptr<3> -> vector<4xf32>
    llvm.store %b, %y : vector<4xf32>, !llvm.ptr
    llvm.store %c, %y : vector<4xf32>, !llvm.ptr
    llvm.store %d, %y : vector<4xf32>, !llvm.ptr
    llvm.store %e, %y : vector<4xf32>, !llvm.ptr
    llvm.store %f, %y : vector<4xf32>, !llvm.ptr
    llvm.store %flag, %y : i32, !llvm.ptr
    llvm.store %addr, %y : i64, !llvm.ptr
    llvm.store %old, %y : f32, !llvm.ptr
    llvm.return
  }
}

// -----

// A target without L1::no_allocate (sm_60, or PTX older than 7.4), or no target: unchanged.

// CHECK-LABEL: llvm.func @old_chip
// CHECK-NOT:     no_allocate
// CHECK-LABEL: llvm.func @old_ptx
// CHECK-NOT:     no_allocate
// CHECK-LABEL: llvm.func @no_target
// CHECK-NOT:     no_allocate
// CHECK:         llvm.return
gpu.module @m1 [#nvvm.target<chip = "sm_60", features = "+ptx80">] {
  llvm.func @old_chip(%a: !llvm.ptr, %y: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel} {
    %v = llvm.load %a {alignment = 16 : i64, nontemporal} : !llvm.ptr -> vector<4xf32>
    llvm.store %v, %y : vector<4xf32>, !llvm.ptr
    llvm.return
  }
}
gpu.module @m2 [#nvvm.target<chip = "sm_90", features = "+ptx73">] {
  llvm.func @old_ptx(%a: !llvm.ptr, %y: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel} {
    %v = llvm.load %a {alignment = 16 : i64, nontemporal} : !llvm.ptr -> vector<4xf32>
    llvm.store %v, %y : vector<4xf32>, !llvm.ptr
    llvm.return
  }
}
gpu.module @m3 {
  llvm.func @no_target(%a: !llvm.ptr, %y: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel} {
    %v = llvm.load %a {alignment = 16 : i64, nontemporal} : !llvm.ptr -> vector<4xf32>
    llvm.store %v, %y : vector<4xf32>, !llvm.ptr
    llvm.return
  }
}

// -----

// Not a kernel (a device function's pointers are whatever its callers pass), a byval parameter
// (parameter space; grid constants are byval too), and a parameter cast to shared memory:
// unchanged.

// CHECK-LABEL: llvm.func @device_fn
// CHECK-NOT:     no_allocate
// CHECK-LABEL: llvm.func @odd_params
// CHECK-NOT:     no_allocate
// CHECK:         llvm.return
gpu.module @m [#nvvm.target<chip = "sm_90", features = "+ptx80">] {
  llvm.func @device_fn(%a: !llvm.ptr) -> vector<4xf32> {
    %v = llvm.load %a {alignment = 16 : i64, nontemporal} : !llvm.ptr -> vector<4xf32>
    llvm.return %v : vector<4xf32>
  }
  llvm.func @odd_params(%b: !llvm.ptr {llvm.byval = !llvm.array<4 x f32>}, %s: !llvm.ptr,
                        %y: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel} {
    %v = llvm.load %b {alignment = 16 : i64, nontemporal} : !llvm.ptr -> vector<4xf32>
    %c = llvm.addrspacecast %s : !llvm.ptr to !llvm.ptr<3>
    %u = llvm.load %c {alignment = 16 : i64, nontemporal} : !llvm.ptr<3> -> vector<4xf32>
    llvm.store %v, %y : vector<4xf32>, !llvm.ptr
    llvm.store %u, %y : vector<4xf32>, !llvm.ptr
    llvm.return
  }
}
