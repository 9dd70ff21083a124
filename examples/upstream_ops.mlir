// The ops taken from upstream vyre: inverse trigonometry and hyperbolics,
// nibble/byte unpacking, saturating_mul, abs_diff/mul_high on si32 (a ui32
// result), truthiness of ui32 (not/and/or give i1), fetch_nand and
// compare_exchange_weak with memory orderings.
// Inputs: u, s, f (64 each), c (64 ui32).
vyre.program @upstream_ops workgroup_size [64, 1, 1] {
  vyre.buffer @u binding 0 read_only : ui32[64]
  vyre.buffer @s binding 1 read_only : si32[64]
  vyre.buffer @f binding 2 read_only : f32[64]
  vyre.buffer @c binding 3 read_write : ui32[64]
  vyre.buffer @ints binding 4 write_only : ui32[64]
  vyre.buffer @floats binding 5 write_only : f32[64]
  vyre.buffer @flags binding 6 write_only : i1[64]
  %i = vyre.invocation_id x
  %a = vyre.load @u[%i] : ui32
  %x = vyre.load @s[%i] : si32
  %p = vyre.load @f[%i] : f32
  %acos = vyre.acos %p : f32
  %asin = vyre.asin %p : f32
  %atan = vyre.atan %p : f32
  %sinh = vyre.sinh %p : f32
  %cosh = vyre.cosh %p : f32
  %f1 = vyre.add %acos, %asin : f32
  %f2 = vyre.add %f1, %atan : f32
  %f3 = vyre.add %f2, %sinh : f32
  %f4 = vyre.add %f3, %cosh : f32
  vyre.store @floats[%i] = %f4 : f32
  %lo4 = vyre.unpack4_low %a : ui32
  %hi4 = vyre.unpack4_high %x : si32
  %lo8 = vyre.unpack8_low %a : ui32
  %hi8 = vyre.unpack8_high %x : si32
  %sat = vyre.saturating_mul %a, %lo8 : ui32
  %dist = vyre.abs_diff %x, %x : si32
  %high = vyre.mul_high %x, %x : si32
  %s1 = vyre.add %lo4, %hi4 : ui32
  %s2 = vyre.add %s1, %hi8 : ui32
  %s3 = vyre.add %s2, %sat : ui32
  %s4 = vyre.add %s3, %dist : ui32
  %s5 = vyre.add %s4, %high : ui32
  vyre.store @ints[%i] = %s5 : ui32
  %zero = vyre.not %a : ui32
  %both = vyre.and %a, %lo4 : ui32
  %either = vyre.or %a, %hi8 : ui32
  %t1 = vyre.or %zero, %both : i1
  %t2 = vyre.and %t1, %either : i1
  vyre.store @flags[%i] = %t2 : i1
  %old = vyre.atomic fetch_nand acq_rel @c[%i], %a : ui32
  %prev = vyre.atomic compare_exchange_weak relaxed @c[%i], %old, %a : ui32
}
