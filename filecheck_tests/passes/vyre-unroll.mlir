// RUN: %python -m vyre_xdsl.testing.cli_batch \
// RUN:   --run "xdsl-opt %s --split-input-file -p vyre-unroll > %t.xdsl" \
// RUN:   --run "vyre-opt %s --split-input-file -p vyre-unroll > %t.unrolled" \
// RUN:   --run "vyre-opt %s --split-input-file -p 'vyre-unroll{max-trip-count=1}' > %t.max1"
// RUN: filecheck %s < %t.unrolled
// RUN: diff %t.unrolled %t.xdsl
// RUN: filecheck %s --check-prefix=MAX1 < %t.max1

// Two iterations become two blocks, in order: the loop variable is each
// iteration's constant, and @t, declared in the body, is declared once per
// block (a fresh scope per iteration, as in the loop).
vyre.program @p workgroup_size [64, 1, 1] {
  vyre.buffer @out binding 0 read_write : ui32[64]
  %i = vyre.invocation_id x
  %one = vyre.const 1 : ui32
  %three = vyre.const 3 : ui32
  vyre.let @sum = %one : ui32
  vyre.loop @k = %one to %three {
    %k = vyre.var @k : ui32
    vyre.let @t = %k : ui32
    %t = vyre.var @t : ui32
    %s = vyre.var @sum : ui32
    %n = vyre.add %s, %t : ui32
    vyre.assign @sum = %n : ui32
  }
  %r = vyre.var @sum : ui32
  vyre.store @out[%i] = %r : ui32
}

// CHECK-LABEL: vyre.program @p
// CHECK:         vyre.let @sum = %one : ui32
// CHECK-NEXT:    vyre.block {
// CHECK-NEXT:      %[[K1:.*]] = vyre.const 1 : ui32
// CHECK-NEXT:      vyre.let @t = %[[K1]] : ui32
// CHECK-NEXT:      %[[T1:.*]] = vyre.var @t : ui32
// CHECK-NEXT:      %[[S1:.*]] = vyre.var @sum : ui32
// CHECK-NEXT:      %[[N1:.*]] = vyre.add %[[S1]], %[[T1]] : ui32
// CHECK-NEXT:      vyre.assign @sum = %[[N1]] : ui32
// CHECK-NEXT:    }
// CHECK-NEXT:    vyre.block {
// CHECK-NEXT:      %[[K2:.*]] = vyre.const 2 : ui32
// CHECK-NEXT:      vyre.let @t = %[[K2]] : ui32
// CHECK:           vyre.assign @sum
// CHECK-NEXT:    }
// CHECK-NEXT:    %r = vyre.var @sum : ui32
// CHECK-NOT:     vyre.loop

// MAX1-LABEL: vyre.program @p
// MAX1:         vyre.loop @k = %one to %three {

// -----

// Zero trips (upper <= lower): the loop disappears. One trip: one block.
vyre.program @short workgroup_size [64, 1, 1] {
  vyre.buffer @out binding 0 write_only : ui32[64]
  %five = vyre.const 5 : ui32
  %six = vyre.const 6 : ui32
  %two = vyre.const 2 : ui32
  vyre.loop @none = %five to %two {
    %k = vyre.var @none : ui32
    vyre.store @out[%k] = %k : ui32
  }
  vyre.loop @once = %five to %six {
    %k = vyre.var @once : ui32
    vyre.store @out[%k] = %k : ui32
  }
}

// CHECK-LABEL: vyre.program @short
// CHECK:         %two = vyre.const 2 : ui32
// CHECK-NEXT:    vyre.block {
// CHECK-NEXT:      %[[K:.*]] = vyre.const 5 : ui32
// CHECK-NEXT:      vyre.store @out[%[[K]]] = %[[K]] : ui32
// CHECK-NEXT:    }
// CHECK-NEXT:  }

// MAX1-LABEL: vyre.program @short
// MAX1-NOT:     vyre.loop
// MAX1:         vyre.block {

// -----

// Kept: a bound that is not a constant, and more trips than max-trip-count.
// Nested constant loops unroll inside out: the inner copies read the outer
// iteration's constant.
vyre.program @kept workgroup_size [64, 1, 1] {
  vyre.buffer @out binding 0 write_only : ui32[64]
  %zero = vyre.const 0 : ui32
  %two = vyre.const 2 : ui32
  %many = vyre.const 17 : ui32
  %n = vyre.buf_len @out
  vyre.loop @a = %zero to %n {
    %a = vyre.var @a : ui32
    vyre.store @out[%a] = %a : ui32
  }
  vyre.loop @b = %zero to %many {
    %b = vyre.var @b : ui32
    vyre.store @out[%b] = %b : ui32
  }
  vyre.loop @c = %zero to %two {
    vyre.loop @d = %zero to %two {
      %c = vyre.var @c : ui32
      %d = vyre.var @d : ui32
      %cd = vyre.add %c, %d : ui32
      vyre.store @out[%cd] = %d : ui32
    }
  }
}

// CHECK-LABEL: vyre.program @kept
// CHECK:         vyre.loop @a = %zero to %n {
// CHECK:         vyre.loop @b = %zero to %many {
// CHECK:         vyre.block {
// CHECK-NEXT:      %[[C0:.*]] = vyre.const 0 : ui32
// CHECK-NEXT:      vyre.block {
// CHECK-NEXT:        %[[D0:.*]] = vyre.const 0 : ui32
// CHECK-NEXT:        %{{.*}} = vyre.add %[[C0]], %[[D0]] : ui32
// CHECK:           vyre.block {
// CHECK-NEXT:        %[[D1:.*]] = vyre.const 1 : ui32
// CHECK-NEXT:        %{{.*}} = vyre.add %[[C0]], %[[D1]] : ui32
// CHECK:         vyre.block {
// CHECK-NEXT:      %[[C1:.*]] = vyre.const 1 : ui32
// CHECK-NOT:     vyre.loop
