// RUN: %python -m vyre_xdsl.testing.cli_batch \
// RUN:   --run "xdsl-opt %s --split-input-file -p vyre-licm > %t.xdsl" \
// RUN:   --run "vyre-opt %s --split-input-file -p vyre-licm > %t.vyre"
// RUN: filecheck %s < %t.vyre
// RUN: diff %t.vyre %t.xdsl

// Hoisted: a pure op over values from outside, a load of a buffer the loop
// never writes, a read of a named local the loop never assigns, and what
// depends only on them. Kept: a load of a buffer the loop stores to, an si32
// div (it may trap, and the loop might not run it), reads of the loop
// variable and of an assigned local, and everything using them.
vyre.program @p workgroup_size [64, 1, 1] {
  vyre.buffer @in binding 0 read_only : ui32[64]
  vyre.buffer @acc binding 1 read_write : ui32[64]
  vyre.buffer @out binding 2 write_only : ui32[64]
  %i = vyre.invocation_id x
  %lo = vyre.const 0 : ui32
  %hi = vyre.const 4 : ui32
  %a = vyre.const 3 : si32
  %b = vyre.const 5 : ui32
  vyre.let @base = %b : ui32
  vyre.let @sum = %lo : ui32
  vyre.loop @k = %lo to %hi {
    %s = vyre.mul %i, %b : ui32
    %x = vyre.load @in[%s] : ui32
    %y = vyre.load @acc[%i] : ui32
    %q = vyre.div %a, %a : si32
    %base = vyre.var @base : ui32
    %sum = vyre.var @sum : ui32
    %k = vyre.var @k : ui32
    %kx = vyre.add %k, %x : ui32
    %t = vyre.add %x, %base : ui32
    %n = vyre.add %sum, %t : ui32
    vyre.assign @sum = %n : ui32
    vyre.store @acc[%i] = %kx : ui32
  }
}

// CHECK-LABEL: vyre.program @p
// CHECK:         vyre.let @sum = %lo : ui32
// CHECK-NEXT:    %s = vyre.mul %i, %b : ui32
// CHECK-NEXT:    %x = vyre.load @in[%s] : ui32
// CHECK-NEXT:    %base = vyre.var @base : ui32
// CHECK-NEXT:    %t = vyre.add %x, %base : ui32
// CHECK-NEXT:    vyre.loop @k = %lo to %hi {
// CHECK-NEXT:      %y = vyre.load @acc[%i] : ui32
// CHECK-NEXT:      %q = vyre.div %a, %a : si32
// CHECK-NEXT:      %sum = vyre.var @sum : ui32
// CHECK-NEXT:      %k = vyre.var @k : ui32
// CHECK-NEXT:      %kx = vyre.add %k, %x : ui32
// CHECK-NEXT:      %n = vyre.add %sum, %t : ui32
// CHECK-NEXT:      vyre.assign @sum = %n : ui32
// CHECK-NEXT:      vyre.store @acc[%i] = %kx : ui32
// CHECK-NEXT:    }

// -----

// Nested loops: the outer loop variable is invariant in the inner loop (so
// its read and the product move out of the inner loop) but not in the outer
// one. A buffer touched by an atomic in the loop is written: its load stays.
vyre.program @nested workgroup_size [64, 1, 1] {
  vyre.buffer @count binding 0 read_write : ui32[4]
  vyre.buffer @out binding 1 write_only : ui32[64]
  %i = vyre.invocation_id x
  %zero = vyre.const 0 : ui32
  %two = vyre.const 2 : ui32
  %three = vyre.const 3 : ui32
  vyre.loop @a = %zero to %two {
    vyre.loop @b = %zero to %three {
      %a = vyre.var @a : ui32
      %scaled = vyre.mul %a, %three : ui32
      %c = vyre.load @count[%zero] : ui32
      %old = vyre.atomic add @count[%zero], %scaled : ui32
      %sum = vyre.add %c, %scaled : ui32
      vyre.store @out[%i] = %sum : ui32
    }
  }
}

// CHECK-LABEL: vyre.program @nested
// CHECK:         vyre.loop @a = %zero to %two {
// CHECK-NEXT:      %a = vyre.var @a : ui32
// CHECK-NEXT:      %scaled = vyre.mul %a, %three : ui32
// CHECK-NEXT:      vyre.loop @b = %zero to %three {
// CHECK-NEXT:        %c = vyre.load @count[%zero] : ui32
// CHECK-NEXT:        %old = vyre.atomic add @count[%zero], %scaled : ui32
// CHECK-NEXT:        %sum = vyre.add %c, %scaled : ui32
// CHECK-NEXT:        vyre.store @out[%i] = %sum : ui32
// CHECK-NEXT:      }
// CHECK-NEXT:    }

// -----

// Nothing to hoist: the loop is left as it is.
vyre.program @still workgroup_size [64, 1, 1] {
  vyre.buffer @out binding 0 write_only : ui32[64]
  %zero = vyre.const 0 : ui32
  %n = vyre.buf_len @out
  vyre.loop @k = %zero to %n {
    %k = vyre.var @k : ui32
    vyre.store @out[%k] = %k : ui32
  }
}

// CHECK-LABEL: vyre.program @still
// CHECK:         vyre.loop @k = %zero to %n {
// CHECK-NEXT:      %k = vyre.var @k : ui32
// CHECK-NEXT:      vyre.store @out[%k] = %k : ui32
// CHECK-NEXT:    }
