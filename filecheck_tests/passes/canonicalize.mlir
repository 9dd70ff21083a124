// RUN: vyre-opt %s --split-input-file -p canonicalize | filecheck %s

// Integer identities: x + 0, 0 + x, x - 0, x * 1, 1 * x, x / 1, x & ~0, x | 0,
// x ^ 0, saturating x + 0 and x - 0 are x (wrap-around changes none of them).
vyre.program @int_identity workgroup_size [4, 1, 1] {
  vyre.buffer @a binding 0 read_only : ui32[4]
  vyre.buffer @s binding 1 read_only : si32[4]
  vyre.buffer @o binding 2 write_only : ui32[16]
  vyre.buffer @so binding 3 write_only : si32[16]
  %i = vyre.invocation_id x
  %x = vyre.load @a[%i] : ui32
  %y = vyre.load @s[%i] : si32
  %zero = vyre.const 0 : ui32
  %one = vyre.const 1 : ui32
  %ones = vyre.const 4294967295 : ui32
  %szero = vyre.const 0 : si32
  %sone = vyre.const 1 : si32
  %sones = vyre.const -1 : si32
  %add = vyre.add %x, %zero : ui32
  vyre.store @o[%i] = %add : ui32
  %add_l = vyre.add %zero, %x : ui32
  vyre.store @o[%i] = %add_l : ui32
  %sub = vyre.sub %x, %zero : ui32
  vyre.store @o[%i] = %sub : ui32
  %mul = vyre.mul %one, %x : ui32
  vyre.store @o[%i] = %mul : ui32
  %div = vyre.div %x, %one : ui32
  vyre.store @o[%i] = %div : ui32
  %and = vyre.bit_and %x, %ones : ui32
  vyre.store @o[%i] = %and : ui32
  %or = vyre.bit_or %zero, %x : ui32
  vyre.store @o[%i] = %or : ui32
  %xor = vyre.bit_xor %x, %zero : ui32
  vyre.store @o[%i] = %xor : ui32
  %sat_add = vyre.saturating_add %x, %zero : ui32
  vyre.store @o[%i] = %sat_add : ui32
  %sat_sub = vyre.saturating_sub %x, %zero : ui32
  vyre.store @o[%i] = %sat_sub : ui32
  %sadd = vyre.add %y, %szero : si32
  vyre.store @so[%i] = %sadd : si32
  %smul = vyre.mul %y, %sone : si32
  vyre.store @so[%i] = %smul : si32
  %sdiv = vyre.div %y, %sone : si32
  vyre.store @so[%i] = %sdiv : si32
  %sand = vyre.bit_and %sones, %y : si32
  vyre.store @so[%i] = %sand : si32
}

// CHECK-LABEL: vyre.program @int_identity
// CHECK:         %x = vyre.load @a[%i] : ui32
// CHECK-NEXT:    %y = vyre.load @s[%i] : si32
// CHECK-NEXT:    vyre.store @o[%i] = %x : ui32
// CHECK-NEXT:    vyre.store @o[%i] = %x : ui32
// CHECK-NEXT:    vyre.store @o[%i] = %x : ui32
// CHECK-NEXT:    vyre.store @o[%i] = %x : ui32
// CHECK-NEXT:    vyre.store @o[%i] = %x : ui32
// CHECK-NEXT:    vyre.store @o[%i] = %x : ui32
// CHECK-NEXT:    vyre.store @o[%i] = %x : ui32
// CHECK-NEXT:    vyre.store @o[%i] = %x : ui32
// CHECK-NEXT:    vyre.store @o[%i] = %x : ui32
// CHECK-NEXT:    vyre.store @o[%i] = %x : ui32
// CHECK-NEXT:    vyre.store @so[%i] = %y : si32
// CHECK-NEXT:    vyre.store @so[%i] = %y : si32
// CHECK-NEXT:    vyre.store @so[%i] = %y : si32
// CHECK-NEXT:    vyre.store @so[%i] = %y : si32
// CHECK-NEXT:  }

// -----

// Integer absorbing elements and x mod 1: x * 0 and x & 0 are 0, x | ~0 is ~0,
// x mod 1 is 0 (1 is never a trapping divisor).
vyre.program @int_absorbing workgroup_size [4, 1, 1] {
  vyre.buffer @a binding 0 read_only : ui32[4]
  vyre.buffer @s binding 1 read_only : si32[4]
  vyre.buffer @o binding 2 write_only : ui32[16]
  vyre.buffer @so binding 3 write_only : si32[16]
  %i = vyre.invocation_id x
  %x = vyre.load @a[%i] : ui32
  %y = vyre.load @s[%i] : si32
  %zero = vyre.const 0 : ui32
  %ones = vyre.const 4294967295 : ui32
  %sone = vyre.const 1 : si32
  %szero = vyre.const 0 : si32
  %mul = vyre.mul %x, %zero : ui32
  vyre.store @o[%i] = %mul : ui32
  %and = vyre.bit_and %zero, %x : ui32
  vyre.store @o[%i] = %and : ui32
  %or = vyre.bit_or %x, %ones : ui32
  vyre.store @o[%i] = %or : ui32
  %smul = vyre.mul %szero, %y : si32
  vyre.store @so[%i] = %smul : si32
  %smod = vyre.mod %y, %sone : si32
  vyre.store @so[%i] = %smod : si32
}

// CHECK-LABEL: vyre.program @int_absorbing
// CHECK:         %i = vyre.invocation_id x
// CHECK-NEXT:    %zero = vyre.const 0 : ui32
// CHECK-NEXT:    %ones = vyre.const 4294967295 : ui32
// CHECK-NEXT:    %szero = vyre.const 0 : si32
// CHECK-NEXT:    vyre.store @o[%i] = %zero : ui32
// CHECK-NEXT:    vyre.store @o[%i] = %zero : ui32
// CHECK-NEXT:    vyre.store @o[%i] = %ones : ui32
// CHECK-NEXT:    vyre.store @so[%i] = %szero : si32
// CHECK-NEXT:    %[[M:.*]] = vyre.const 0 : si32
// CHECK-NEXT:    vyre.store @so[%i] = %[[M]] : si32
// CHECK-NEXT:  }

// -----

// Shifts and rotates use the low 5 bits of the amount: by 0 or 32, x is unchanged.
vyre.program @shifts workgroup_size [4, 1, 1] {
  vyre.buffer @a binding 0 read_only : ui32[4]
  vyre.buffer @s binding 1 read_only : si32[4]
  vyre.buffer @o binding 2 write_only : ui32[16]
  vyre.buffer @so binding 3 write_only : si32[16]
  %i = vyre.invocation_id x
  %x = vyre.load @a[%i] : ui32
  %y = vyre.load @s[%i] : si32
  %zero = vyre.const 0 : ui32
  %thirty_two = vyre.const 32 : ui32
  %three = vyre.const 3 : ui32
  %s64 = vyre.const 64 : si32
  %shl = vyre.shl %x, %zero : ui32
  vyre.store @o[%i] = %shl : ui32
  %shr = vyre.shr %x, %thirty_two : ui32
  vyre.store @o[%i] = %shr : ui32
  %rotl = vyre.rotate_left %x, %zero : ui32
  vyre.store @o[%i] = %rotl : ui32
  %rotr = vyre.rotate_right %x, %thirty_two : ui32
  vyre.store @o[%i] = %rotr : ui32
  %sshr = vyre.shr %y, %s64 : si32
  vyre.store @so[%i] = %sshr : si32
  %kept = vyre.shl %x, %three : ui32
  vyre.store @o[%i] = %kept : ui32
}

// CHECK-LABEL: vyre.program @shifts
// CHECK:         vyre.store @o[%i] = %x : ui32
// CHECK-NEXT:    vyre.store @o[%i] = %x : ui32
// CHECK-NEXT:    vyre.store @o[%i] = %x : ui32
// CHECK-NEXT:    vyre.store @o[%i] = %x : ui32
// CHECK-NEXT:    vyre.store @so[%i] = %y : si32
// CHECK-NEXT:    %kept = vyre.shl %x, %three : ui32
// CHECK-NEXT:    vyre.store @o[%i] = %kept : ui32

// -----

// x OP x. min/max/bit_and/bit_or give x (f32 min/max too: min(NaN, NaN) is NaN,
// min(-0, -0) is -0); sub, bit_xor, abs_diff and saturating_sub give 0 on integers;
// eq, le, ge give true and ne, lt, gt give false on integers.
vyre.program @same_operands workgroup_size [4, 1, 1] {
  vyre.buffer @a binding 0 read_only : ui32[4]
  vyre.buffer @f binding 1 read_only : f32[4]
  vyre.buffer @o binding 2 write_only : ui32[16]
  vyre.buffer @fo binding 3 write_only : f32[16]
  vyre.buffer @b binding 4 write_only : i1[16]
  %i = vyre.invocation_id x
  %x = vyre.load @a[%i] : ui32
  %f = vyre.load @f[%i] : f32
  %min = vyre.min %x, %x : ui32
  vyre.store @o[%i] = %min : ui32
  %fmax = vyre.max %f, %f : f32
  vyre.store @fo[%i] = %fmax : f32
  %and = vyre.bit_and %x, %x : ui32
  vyre.store @o[%i] = %and : ui32
  %sub = vyre.sub %x, %x : ui32
  vyre.store @o[%i] = %sub : ui32
  %xor = vyre.bit_xor %x, %x : ui32
  vyre.store @o[%i] = %xor : ui32
  %ad = vyre.abs_diff %x, %x : ui32
  vyre.store @o[%i] = %ad : ui32
  %eq = vyre.eq %x, %x : ui32
  vyre.store @b[%i] = %eq : i1
  %lt = vyre.lt %x, %x : ui32
  vyre.store @b[%i] = %lt : i1
}

// CHECK-LABEL: vyre.program @same_operands
// CHECK:         vyre.store @o[%i] = %x : ui32
// CHECK-NEXT:    vyre.store @fo[%i] = %f : f32
// CHECK-NEXT:    vyre.store @o[%i] = %x : ui32
// CHECK-NEXT:    %[[Z1:.*]] = vyre.const 0 : ui32
// CHECK-NEXT:    vyre.store @o[%i] = %[[Z1]] : ui32
// CHECK-NEXT:    %[[Z2:.*]] = vyre.const 0 : ui32
// CHECK-NEXT:    vyre.store @o[%i] = %[[Z2]] : ui32
// CHECK-NEXT:    %[[Z3:.*]] = vyre.const 0 : ui32
// CHECK-NEXT:    vyre.store @o[%i] = %[[Z3]] : ui32
// CHECK-NEXT:    %[[T:.*]] = vyre.const true : i1
// CHECK-NEXT:    vyre.store @b[%i] = %[[T]] : i1
// CHECK-NEXT:    %[[F:.*]] = vyre.const false : i1
// CHECK-NEXT:    vyre.store @b[%i] = %[[F]] : i1

// -----

// f32: x + -0.0, x - 0.0, x * 1.0 and x / 1.0 are x for every x (NaN, infinities
// and both zeros included). x + 0.0 is not (-0 + 0 is +0), nor x - -0.0, nor
// x * 0.0 (NaN, infinities, -0), nor x - x (NaN, infinities): those stay.
vyre.program @f32_identities workgroup_size [4, 1, 1] {
  vyre.buffer @f binding 0 read_only : f32[4]
  vyre.buffer @fo binding 1 write_only : f32[16]
  %i = vyre.invocation_id x
  %f = vyre.load @f[%i] : f32
  %pz = vyre.const 0.0 : f32
  %nz = vyre.const -0.0 : f32
  %one = vyre.const 1.0 : f32
  %add_nz = vyre.add %nz, %f : f32
  vyre.store @fo[%i] = %add_nz : f32
  %sub_pz = vyre.sub %f, %pz : f32
  vyre.store @fo[%i] = %sub_pz : f32
  %mul = vyre.mul %f, %one : f32
  vyre.store @fo[%i] = %mul : f32
  %div = vyre.div %f, %one : f32
  vyre.store @fo[%i] = %div : f32
  %add_pz = vyre.add %f, %pz : f32
  vyre.store @fo[%i] = %add_pz : f32
  %sub_nz = vyre.sub %f, %nz : f32
  vyre.store @fo[%i] = %sub_nz : f32
  %mul_z = vyre.mul %f, %pz : f32
  vyre.store @fo[%i] = %mul_z : f32
  %sub_self = vyre.sub %f, %f : f32
  vyre.store @fo[%i] = %sub_self : f32
  %eq_self = vyre.eq %f, %f : f32
  %sel = vyre.select %eq_self, %f, %one : f32
  vyre.store @fo[%i] = %sel : f32
}

// CHECK-LABEL: vyre.program @f32_identities
// CHECK:         vyre.store @fo[%i] = %f : f32
// CHECK-NEXT:    vyre.store @fo[%i] = %f : f32
// CHECK-NEXT:    vyre.store @fo[%i] = %f : f32
// CHECK-NEXT:    vyre.store @fo[%i] = %f : f32
// CHECK-NEXT:    %add_pz = vyre.add %f, %pz : f32
// CHECK-NEXT:    vyre.store @fo[%i] = %add_pz : f32
// CHECK-NEXT:    %sub_nz = vyre.sub %f, %nz : f32
// CHECK-NEXT:    vyre.store @fo[%i] = %sub_nz : f32
// CHECK-NEXT:    %mul_z = vyre.mul %f, %pz : f32
// CHECK-NEXT:    vyre.store @fo[%i] = %mul_z : f32
// CHECK-NEXT:    %sub_self = vyre.sub %f, %f : f32
// CHECK-NEXT:    vyre.store @fo[%i] = %sub_self : f32
// CHECK-NEXT:    %eq_self = vyre.eq %f, %f : f32
// CHECK-NEXT:    %sel = vyre.select %eq_self, %f, %one : f32

// -----

// i1 logic: c and true, c or false, c and c are c; c and false is false, c or true
// is true; not (not c) is c; select true/false picks a side; select c, a, a is a;
// select c, true, false is c and select c, false, true is not c.
vyre.program @logic_and_select workgroup_size [4, 1, 1] {
  vyre.buffer @a binding 0 read_only : ui32[4]
  vyre.buffer @f binding 1 read_only : f32[4]
  vyre.buffer @b binding 2 write_only : i1[16]
  vyre.buffer @fo binding 3 write_only : f32[16]
  %i = vyre.invocation_id x
  %x = vyre.load @a[%i] : ui32
  %f = vyre.load @f[%i] : f32
  %g = vyre.load @f[%x] : f32
  %zero = vyre.const 0 : ui32
  %c = vyre.lt %x, %zero : ui32
  %t = vyre.const true : i1
  %fl = vyre.const false : i1
  %and_t = vyre.and %c, %t : i1
  vyre.store @b[%i] = %and_t : i1
  %or_f = vyre.or %fl, %c : i1
  vyre.store @b[%i] = %or_f : i1
  %and_c = vyre.and %c, %c : i1
  vyre.store @b[%i] = %and_c : i1
  %and_f = vyre.and %c, %fl : i1
  vyre.store @b[%i] = %and_f : i1
  %or_t = vyre.or %c, %t : i1
  vyre.store @b[%i] = %or_t : i1
  %n1 = vyre.not %c : i1
  %n2 = vyre.not %n1 : i1
  vyre.store @b[%i] = %n2 : i1
  %s_t = vyre.select %t, %f, %g : f32
  vyre.store @fo[%i] = %s_t : f32
  %s_f = vyre.select %fl, %f, %g : f32
  vyre.store @fo[%i] = %s_f : f32
  %s_same = vyre.select %c, %g, %g : f32
  vyre.store @fo[%i] = %s_same : f32
  %s_id = vyre.select %c, %t, %fl : i1
  vyre.store @b[%i] = %s_id : i1
  %s_not = vyre.select %c, %fl, %t : i1
  vyre.store @b[%i] = %s_not : i1
}

// CHECK-LABEL: vyre.program @logic_and_select
// CHECK:         %t = vyre.const true : i1
// CHECK-NEXT:    %fl = vyre.const false : i1
// CHECK-NEXT:    vyre.store @b[%i] = %c : i1
// CHECK-NEXT:    vyre.store @b[%i] = %c : i1
// CHECK-NEXT:    vyre.store @b[%i] = %c : i1
// CHECK-NEXT:    vyre.store @b[%i] = %fl : i1
// CHECK-NEXT:    vyre.store @b[%i] = %t : i1
// CHECK-NEXT:    vyre.store @b[%i] = %c : i1
// CHECK-NEXT:    vyre.store @fo[%i] = %f : f32
// CHECK-NEXT:    vyre.store @fo[%i] = %g : f32
// CHECK-NEXT:    vyre.store @fo[%i] = %g : f32
// CHECK-NEXT:    vyre.store @b[%i] = %c : i1
// CHECK-NEXT:    %[[NOT:.*]] = vyre.not %c : i1
// CHECK-NEXT:    vyre.store @b[%i] = %[[NOT]] : i1

// -----

// Involutions and conversions: neg (neg x) and bit_not (bit_not x) are x (neg wraps,
// so neg (neg INT_MIN) is INT_MIN again); a cast or bitcast to its own type is x;
// a bitcast there and back is x.
vyre.program @involutions workgroup_size [4, 1, 1] {
  vyre.buffer @s binding 0 read_only : si32[4]
  vyre.buffer @f binding 1 read_only : f32[4]
  vyre.buffer @so binding 2 write_only : si32[16]
  vyre.buffer @fo binding 3 write_only : f32[16]
  %i = vyre.invocation_id x
  %y = vyre.load @s[%i] : si32
  %f = vyre.load @f[%i] : f32
  %n1 = vyre.neg %y : si32
  %n2 = vyre.neg %n1 : si32
  vyre.store @so[%i] = %n2 : si32
  %b1 = vyre.bit_not %y : si32
  %b2 = vyre.bit_not %b1 : si32
  vyre.store @so[%i] = %b2 : si32
  %fn1 = vyre.neg %f : f32
  %fn2 = vyre.neg %fn1 : f32
  vyre.store @fo[%i] = %fn2 : f32
  %c = vyre.cast %y : si32 to si32
  vyre.store @so[%i] = %c : si32
  %bits = vyre.bitcast %f : f32 to ui32
  %back = vyre.bitcast %bits : ui32 to f32
  vyre.store @fo[%i] = %back : f32
  %same = vyre.bitcast %f : f32 to f32
  vyre.store @fo[%i] = %same : f32
}

// CHECK-LABEL: vyre.program @involutions
// CHECK:         vyre.store @so[%i] = %y : si32
// CHECK-NEXT:    vyre.store @so[%i] = %y : si32
// CHECK-NEXT:    vyre.store @fo[%i] = %f : f32
// CHECK-NEXT:    vyre.store @so[%i] = %y : si32
// CHECK-NEXT:    vyre.store @fo[%i] = %f : f32
// CHECK-NEXT:    vyre.store @fo[%i] = %f : f32

// -----

// Traps survive: an unused si32 division by zero stays (it must still trap), and
// x * 0 does not remove the trapping division that computes x.
vyre.program @traps_stay workgroup_size [4, 1, 1] {
  vyre.buffer @s binding 0 read_only : si32[4]
  vyre.buffer @so binding 1 write_only : si32[4]
  %i = vyre.invocation_id x
  %y = vyre.load @s[%i] : si32
  %zero = vyre.const 0 : si32
  %unused = vyre.div %y, %zero : si32
  %q = vyre.mod %y, %y : si32
  %p = vyre.mul %q, %zero : si32
  vyre.store @so[%i] = %p : si32
}

// CHECK-LABEL: vyre.program @traps_stay
// CHECK:         %unused = vyre.div %y, %zero : si32
// CHECK-NEXT:    %q = vyre.mod %y, %y : si32
// CHECK-NEXT:    vyre.store @so[%i] = %zero : si32

// -----

// `not` on ui32 is truthiness (an i1 result): not (not x : ui32) : i1 is x != 0, not x.
vyre.program @truthiness workgroup_size [4, 1, 1] {
  vyre.buffer @a binding 0 read_only : ui32[4]
  vyre.buffer @b binding 1 write_only : i1[4]
  %i = vyre.invocation_id x
  %x = vyre.load @a[%i] : ui32
  %n1 = vyre.not %x : ui32
  %n2 = vyre.not %n1 : i1
  vyre.store @b[%i] = %n2 : i1
}

// CHECK-LABEL: vyre.program @truthiness
// CHECK:         %n1 = vyre.not %x : ui32
// CHECK-NEXT:    %n2 = vyre.not %n1 : i1
// CHECK-NEXT:    vyre.store @b[%i] = %n2 : i1
