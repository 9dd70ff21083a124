// RUN: vyre-opt %s -p canonicalize | filecheck %s

// Constant folding goes through the same table: upstream's values.
vyre.program @fold workgroup_size [1, 1, 1] {
  vyre.buffer @out binding 0 read_write : ui32[8]
  vyre.buffer @flags binding 1 write_only : i1[8]
  %z = vyre.const 0 : ui32
  %max = vyre.const 4294967295 : ui32
  %two = vyre.const 2 : ui32
  %m = vyre.const -2147483648 : si32
  %p = vyre.const 2147483647 : si32
  %w = vyre.const -559038737 : si32
  %sat = vyre.saturating_mul %max, %two : ui32
  vyre.store @out[%z] = %sat : ui32
  %dist = vyre.abs_diff %m, %p : si32
  vyre.store @out[%z] = %dist : ui32
  %high = vyre.mul_high %m, %p : si32
  vyre.store @out[%z] = %high : ui32
  %byte = vyre.unpack8_high %w : si32
  vyre.store @out[%z] = %byte : ui32
  %nib = vyre.unpack4_high %w : si32
  vyre.store @out[%z] = %nib : ui32
  %u = vyre.load @out[%z] : ui32
  %n1 = vyre.not %u : ui32
  %n2 = vyre.not %n1 : i1
  vyre.store @flags[%z] = %n2 : i1
}

// CHECK-LABEL: vyre.program @fold
// u32::MAX.saturating_mul(2), i32::MIN.abs_diff(i32::MAX), high word of
// -2^31 * (2^31 - 1) = -2^62 + 2^31 (0xC0000000), 0xDEADBEEF >> 24, (0xDEADBEEF >> 4) & 0xF
// CHECK:      %sat = vyre.const 4294967295 : ui32
// CHECK:      %dist = vyre.const 4294967295 : ui32
// CHECK:      %high = vyre.const 3221225472 : ui32
// CHECK:      %byte = vyre.const 222 : ui32
// CHECK:      %nib = vyre.const 14 : ui32
// not (not x) on a ui32 x is "x != 0", an i1: it stays
// CHECK:      %n1 = vyre.not %u : ui32
// CHECK-NEXT: %n2 = vyre.not %n1 : i1
