// RUN: vyre-opt %s --lower -t wgsl | filecheck %s
// The WGSL of the ops taken from upstream, and of Rust's saturating f32 -> integer
// cast (WGSL's own conversion stops at the largest f32 below the bound).

vyre.program @upstream workgroup_size [64, 1, 1] {
  vyre.buffer @u binding 0 read_only : ui32[63]
  vyre.buffer @s binding 1 read_only : si32[63]
  vyre.buffer @out binding 2 write_only : ui32[63]
  vyre.buffer @flags binding 3 write_only : i1[63]
  vyre.buffer @c binding 4 read_write : ui32[63]
  %i = vyre.invocation_id x
  %a = vyre.load @u[%i] : ui32
  %x = vyre.load @s[%i] : si32
  %d = vyre.abs_diff %x, %x : si32
  %h = vyre.mul_high %x, %x : si32
  %m = vyre.saturating_mul %a, %d : ui32
  %n = vyre.unpack4_high %x : si32
  %b = vyre.unpack8_high %a : ui32
  %t = vyre.and %a, %m : ui32
  %o = vyre.or %a, %m : ui32
  %z = vyre.not %a : ui32
  %q = vyre.neg %a : ui32
  %e = vyre.cast %x : si32 to f32
  %c = vyre.cast %e : f32 to ui32
  vyre.store @out[%i] = %h : ui32
  vyre.store @flags[%i] = %t : i1
  %nand = vyre.atomic fetch_nand acquire @c[%i], %a : ui32
  %weak = vyre.atomic compare_exchange_weak @c[%i], %a, %nand : ui32
}

// CHECK:      fn vyre_mul_high_u32(a: u32, b: u32) -> u32 {
// CHECK:        let v_d = select(bitcast<u32>(v_x) - bitcast<u32>(v_x), bitcast<u32>(v_x) - bitcast<u32>(v_x), v_x > v_x);
// CHECK-NEXT:   let v_h = (vyre_mul_high_u32(bitcast<u32>(v_x), bitcast<u32>(v_x)) - select(0u, bitcast<u32>(v_x), v_x < 0i) - select(0u, bitcast<u32>(v_x), v_x < 0i));
// CHECK-NEXT:   let v_m = select(v_a * v_d, 4294967295u, vyre_mul_high_u32(v_a, v_d) != 0u);
// CHECK-NEXT:   let v_n = ((bitcast<u32>(v_x) >> 4u) & 0xfu);
// CHECK-NEXT:   let v_b = ((v_a >> 24u) & 0xffu);
// CHECK-NEXT:   let v_t = ((v_a != 0u) & (v_m != 0u));
// CHECK-NEXT:   let v_o = ((v_a != 0u) | (v_m != 0u));
// CHECK-NEXT:   let v_z = (v_a == 0u);
// CHECK-NEXT:   let v_q = (0u - v_a);
// CHECK-NEXT:   let v_e = f32(v_x);
// CHECK-NEXT:   let v_c = select(select(u32(clamp(v_e, 0.0, 4294967040.0)), 4294967295u, v_e >= 4294967296.0), 0u, ((bitcast<u32>(v_e) & 0x7fffffffu) > 0x7f800000u));
// CHECK:          b_flags[v_i] = select(0u, 1u, v_t);
// fetch_nand: a compare-exchange loop (WGSL has no atomicNand), checked for a
// driver that leaves it early; every ordering prints as WGSL's relaxed atomics
// CHECK:        var a_nand: u32 = 0u;
// CHECK-NEXT:   if (v_i < 63u) {
// CHECK-NEXT:     var nand_done = false;
// CHECK-NEXT:     var a_nand_seen = atomicLoad(&b_c[v_i]);
// CHECK-NEXT:     loop {
// CHECK-NEXT:       let r = atomicCompareExchangeWeak(&b_c[v_i], a_nand_seen, ~(a_nand_seen & v_a));
// CHECK-NEXT:       if (r.exchanged) {
// CHECK-NEXT:         a_nand = r.old_value;
// CHECK-NEXT:         nand_done = true;
// CHECK-NEXT:         break;
// CHECK-NEXT:       }
// CHECK-NEXT:       a_nand_seen = r.old_value;
// CHECK-NEXT:     }
// CHECK-NEXT:     if (!nand_done) {
// CHECK-NEXT:       vyre_loop_left_early();
// CHECK-NEXT:     }
// CHECK-NEXT:   }
// CHECK-NEXT:   let v_nand = a_nand;
// CHECK-NEXT:   var a_weak: u32 = 0u;
// CHECK-NEXT:   if (v_i < 63u) {
// CHECK-NEXT:     a_weak = atomicCompareExchangeWeak(&b_c[v_i], v_a, v_nand).old_value;
// CHECK-NEXT:   }
