// RUN: xdsl-opt %s --split-input-file -p example-redundant-loads | filecheck %s
// RUN: vyre-opt %s --split-input-file -p example-redundant-loads | filecheck %s
// RUN: vyre-opt %s --split-input-file -p example-redundant-loads,vyre-licm | vyre-opt --split-input-file | filecheck %s --check-prefix=PIPE

// The second load of @x[%i] and the load at a recomputed equal index reuse the
// first; the load of @y after a store to @y, and the load of @x at another
// index, stay.
vyre.program @p workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[64]
  vyre.buffer @y binding 1 read_write : ui32[64]
  %i = vyre.invocation_id x
  %one = vyre.const 1 : ui32
  %a = vyre.load @x[%i] : ui32
  %ya = vyre.load @y[%i] : ui32
  %b = vyre.load @x[%i] : ui32
  %i2 = vyre.invocation_id x
  %c = vyre.load @x[%i2] : ui32
  %j = vyre.add %i, %one : ui32
  %d = vyre.load @x[%j] : ui32
  %s = vyre.add %a, %b : ui32
  %t = vyre.add %s, %c : ui32
  %u = vyre.add %t, %d : ui32
  vyre.store @y[%i] = %u : ui32
  %yb = vyre.load @y[%i] : ui32
  %v = vyre.add %ya, %yb : ui32
  vyre.store @y[%i] = %v : ui32
}

// CHECK-LABEL: vyre.program @p
// CHECK:         %a = vyre.load @x[%i] : ui32
// CHECK-NEXT:    %ya = vyre.load @y[%i] : ui32
// CHECK-NEXT:    %i2 = vyre.invocation_id x
// CHECK-NEXT:    %j = vyre.add %i, %one : ui32
// CHECK-NEXT:    %d = vyre.load @x[%j] : ui32
// CHECK-NEXT:    %s = vyre.add %a, %a : ui32
// CHECK-NEXT:    %t = vyre.add %s, %a : ui32
// CHECK-NEXT:    %u = vyre.add %t, %d : ui32
// CHECK-NEXT:    vyre.store @y[%i] = %u : ui32
// CHECK-NEXT:    %yb = vyre.load @y[%i] : ui32

// -----

// A barrier between two loads of a workgroup buffer: another invocation may
// have written the element, so the second load stays.
vyre.program @tile workgroup_size [64, 1, 1] {
  vyre.buffer @tile workgroup : ui32[64]
  vyre.buffer @out binding 0 write_only : ui32[64]
  %l = vyre.local_id x
  %a = vyre.load @tile[%l] : ui32
  vyre.barrier
  %b = vyre.load @tile[%l] : ui32
  %s = vyre.add %a, %b : ui32
  vyre.store @out[%l] = %s : ui32
}

// CHECK-LABEL: vyre.program @tile
// CHECK:         %a = vyre.load @tile[%l] : ui32
// CHECK-NEXT:    vyre.barrier
// CHECK-NEXT:    %b = vyre.load @tile[%l] : ui32

// The plugin's pass composes with the project's passes in one pipeline.
// PIPE-LABEL: vyre.program @p
// PIPE-COUNT-2: vyre.load @x
// PIPE-NOT:     vyre.load @x
