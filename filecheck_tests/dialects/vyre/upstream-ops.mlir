// RUN: VYRE_ROUNDTRIP
// RUN: VYRE_GENERIC_ROUNDTRIP
// The ops taken from upstream: inverse trigonometry and hyperbolics, nibble and
// byte unpacking, saturating_mul, abs_diff/mul_high on si32 with a ui32 result,
// and not/and/or on ui32 (truthiness) with an i1 result.

vyre.program @upstream workgroup_size [64, 1, 1] {
  vyre.buffer @u binding 0 read_only : ui32[64]
  vyre.buffer @s binding 1 read_only : si32[64]
  vyre.buffer @f binding 2 read_only : f32[64]
  vyre.buffer @c binding 3 read_write : ui32[64]
  %i = vyre.invocation_id x
  %a = vyre.load @u[%i] : ui32
  %x = vyre.load @s[%i] : si32
  %p = vyre.load @f[%i] : f32
  %r0 = vyre.acos %p : f32
  %r1 = vyre.asin %p : f32
  %r2 = vyre.atan %p : f32
  %r3 = vyre.sinh %p : f32
  %r4 = vyre.cosh %p : f32
  %r5 = vyre.unpack4_low %a : ui32
  %r6 = vyre.unpack4_high %x : si32
  %r7 = vyre.unpack8_low %a : ui32
  %r8 = vyre.unpack8_high %x : si32
  %r9 = vyre.saturating_mul %a, %a : ui32
  %r10 = vyre.abs_diff %x, %x : si32
  %r11 = vyre.mul_high %x, %x : si32
  %r12 = vyre.not %a : ui32
  %r13 = vyre.and %a, %r9 : ui32
  %r14 = vyre.or %a, %r9 : ui32
  %sum = vyre.add %r10, %r11 : ui32
  %both = vyre.and %r12, %r13 : i1
  %n0 = vyre.atomic fetch_nand @c[%i], %a : ui32
  %n1 = vyre.atomic fetch_nand relaxed @c[%i], %a : ui32
  %w0 = vyre.atomic compare_exchange_weak acquire @c[%i], %a, %r9 : ui32
  %s0 = vyre.atomic add release @c[%i], %a : ui32
  %s1 = vyre.atomic max acq_rel @c[%i], %a : ui32
  %s2 = vyre.atomic exchange seq_cst @c[%i], %a : ui32
}

// CHECK:      %r0 = vyre.acos %p : f32
// CHECK-NEXT: %r1 = vyre.asin %p : f32
// CHECK-NEXT: %r2 = vyre.atan %p : f32
// CHECK-NEXT: %r3 = vyre.sinh %p : f32
// CHECK-NEXT: %r4 = vyre.cosh %p : f32
// CHECK-NEXT: %r5 = vyre.unpack4_low %a : ui32
// CHECK-NEXT: %r6 = vyre.unpack4_high %x : si32
// CHECK-NEXT: %r7 = vyre.unpack8_low %a : ui32
// CHECK-NEXT: %r8 = vyre.unpack8_high %x : si32
// CHECK-NEXT: %r9 = vyre.saturating_mul %a, %a : ui32
// CHECK-NEXT: %r10 = vyre.abs_diff %x, %x : si32
// CHECK-NEXT: %r11 = vyre.mul_high %x, %x : si32
// CHECK-NEXT: %r12 = vyre.not %a : ui32
// CHECK-NEXT: %r13 = vyre.and %a, %r9 : ui32
// CHECK-NEXT: %r14 = vyre.or %a, %r9 : ui32
// CHECK-NEXT: %sum = vyre.add %r10, %r11 : ui32
// CHECK-NEXT: %both = vyre.and %r12, %r13 : i1
// CHECK-NEXT: %n0 = vyre.atomic fetch_nand @c[%i], %a : ui32
// CHECK-NEXT: %n1 = vyre.atomic fetch_nand relaxed @c[%i], %a : ui32
// CHECK-NEXT: %w0 = vyre.atomic compare_exchange_weak acquire @c[%i], %a, %r9 : ui32
// CHECK-NEXT: %s0 = vyre.atomic add release @c[%i], %a : ui32
// CHECK-NEXT: %s1 = vyre.atomic max acq_rel @c[%i], %a : ui32
// CHECK-NEXT: %s2 = vyre.atomic exchange seq_cst @c[%i], %a : ui32
