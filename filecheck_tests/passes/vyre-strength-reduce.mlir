// RUN: %python -m vyre_xdsl.testing.cli_batch \
// RUN:   --run "xdsl-opt %s -p vyre-strength-reduce > %t.xdsl" \
// RUN:   --run "vyre-opt %s -p vyre-strength-reduce > %t.vyre"
// RUN: filecheck %s < %t.vyre
// RUN: diff %t.vyre %t.xdsl

// ui32 by 2^k: mul -> shl (either operand order), div -> shr, mod -> bit_and
// with 2^k - 1; by 1: mul and div give %x itself, mod masks with 0.
// Left alone: a constant that is not a power of two, division and remainder
// by zero, a constant dividend, and si32 (rounds toward zero, may trap).
vyre.program @p workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[64]
  vyre.buffer @y binding 1 read_only : si32[64]
  vyre.buffer @out binding 2 write_only : ui32[64]
  vyre.buffer @sout binding 3 write_only : si32[64]
  %i = vyre.invocation_id x
  %x = vyre.load @x[%i] : ui32
  %y = vyre.load @y[%i] : si32
  %c0 = vyre.const 0 : ui32
  %c1 = vyre.const 1 : ui32
  %c6 = vyre.const 6 : ui32
  %c8 = vyre.const 8 : ui32
  %big = vyre.const 2147483648 : ui32
  %s8 = vyre.const 8 : si32
  %m1 = vyre.mul %x, %c8 : ui32
  %m2 = vyre.mul %big, %x : ui32
  %m3 = vyre.mul %x, %c1 : ui32
  %m4 = vyre.mul %x, %c6 : ui32
  %d1 = vyre.div %x, %c8 : ui32
  %d2 = vyre.div %x, %c1 : ui32
  %d3 = vyre.div %x, %c0 : ui32
  %d4 = vyre.div %c8, %x : ui32
  %r1 = vyre.mod %x, %c8 : ui32
  %r2 = vyre.mod %x, %c1 : ui32
  %r3 = vyre.mod %x, %c0 : ui32
  %sd = vyre.div %y, %s8 : si32
  %sm = vyre.mul %y, %s8 : si32
  vyre.store @out[%c0] = %m1 : ui32
  vyre.store @out[%c0] = %m2 : ui32
  vyre.store @out[%c0] = %m3 : ui32
  vyre.store @out[%c0] = %m4 : ui32
  vyre.store @out[%c0] = %d1 : ui32
  vyre.store @out[%c0] = %d2 : ui32
  vyre.store @out[%c0] = %d3 : ui32
  vyre.store @out[%c0] = %d4 : ui32
  vyre.store @out[%c0] = %r1 : ui32
  vyre.store @out[%c0] = %r2 : ui32
  vyre.store @out[%c0] = %r3 : ui32
  vyre.store @sout[%c0] = %sd : si32
  vyre.store @sout[%c0] = %sm : si32
}

// CHECK:       %[[K3:.*]] = vyre.const 3 : ui32
// CHECK-NEXT:  %[[M1:.*]] = vyre.shl %x, %[[K3]] : ui32
// CHECK-NEXT:  %[[K31:.*]] = vyre.const 31 : ui32
// CHECK-NEXT:  %[[M2:.*]] = vyre.shl %x, %[[K31]] : ui32
// CHECK-NEXT:  %m4 = vyre.mul %x, %c6 : ui32
// CHECK-NEXT:  %[[K3B:.*]] = vyre.const 3 : ui32
// CHECK-NEXT:  %[[D1:.*]] = vyre.shr %x, %[[K3B]] : ui32
// CHECK-NEXT:  %d3 = vyre.div %x, %c0 : ui32
// CHECK-NEXT:  %d4 = vyre.div %c8, %x : ui32
// CHECK-NEXT:  %[[K7:.*]] = vyre.const 7 : ui32
// CHECK-NEXT:  %[[R1:.*]] = vyre.bit_and %x, %[[K7]] : ui32
// CHECK-NEXT:  %[[K0:.*]] = vyre.const 0 : ui32
// CHECK-NEXT:  %[[R2:.*]] = vyre.bit_and %x, %[[K0]] : ui32
// CHECK-NEXT:  %r3 = vyre.mod %x, %c0 : ui32
// CHECK-NEXT:  %sd = vyre.div %y, %s8 : si32
// CHECK-NEXT:  %sm = vyre.mul %y, %s8 : si32
// CHECK-NEXT:  vyre.store @out[%c0] = %[[M1]] : ui32
// CHECK-NEXT:  vyre.store @out[%c0] = %[[M2]] : ui32
// CHECK-NEXT:  vyre.store @out[%c0] = %x : ui32
// CHECK-NEXT:  vyre.store @out[%c0] = %m4 : ui32
// CHECK-NEXT:  vyre.store @out[%c0] = %[[D1]] : ui32
// CHECK-NEXT:  vyre.store @out[%c0] = %x : ui32
// CHECK-NEXT:  vyre.store @out[%c0] = %d3 : ui32
// CHECK-NEXT:  vyre.store @out[%c0] = %d4 : ui32
// CHECK-NEXT:  vyre.store @out[%c0] = %[[R1]] : ui32
// CHECK-NEXT:  vyre.store @out[%c0] = %[[R2]] : ui32
// CHECK-NEXT:  vyre.store @out[%c0] = %r3 : ui32
