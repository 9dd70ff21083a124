// RUN: VYRE_ROUNDTRIP
// RUN: VYRE_GENERIC_ROUNDTRIP
// Every vyre op in its custom syntax; prints identically, also after a trip through the generic form.

vyre.program @structure {non_composable} workgroup_size [8, 4, 2] {
  vyre.buffer @ro binding 0 read_only : f32[16]
  vyre.buffer @rw binding 3 read_write output : ui32[?]
  vyre.buffer @wo binding 1 write_only : si32[4]
  vyre.buffer @un binding 2 uniform : ui32[4]
  vyre.buffer @flags binding 4 read_write : i1[8]
  vyre.buffer @tile workgroup : f32[64]
  %gx = vyre.invocation_id x
  %gy = vyre.invocation_id y
  %wz = vyre.workgroup_id z
  %lx = vyre.local_id x
  %n = vyre.buf_len @rw
  %u = vyre.const 4294967295 : ui32
  %s = vyre.const -2147483648 : si32
  %f = vyre.const 1.5 : f32
  %g = vyre.const -0.0 : f32
  %inf = vyre.const 0x7F800000 : f32
  %t = vyre.const true : i1
  %e = vyre.const false : i1
  %v = vyre.load @ro[%gx] : f32
  %b = vyre.load @flags[%gx] : i1
  vyre.store @tile[%lx] = %v : f32
  vyre.store @flags[%gx] = %t : i1
  vyre.let @acc = %u : ui32
  vyre.assign @acc = %n : ui32
  %a = vyre.var @acc : ui32
  vyre.if %b {
    vyre.store @wo[%gx] = %s : si32
  }
  vyre.if %e {
    vyre.let @inner = %f : f32
  } else {
    vyre.block {
      vyre.let @inner = %g : f32
    }
  }
  vyre.loop @k = %gx to %n {
    %k = vyre.var @k : ui32
    vyre.store @rw[%k] = %a : ui32
  }
  vyre.region "example.generator" {
    vyre.barrier
    vyre.barrier acquire
    vyre.barrier release
    vyre.barrier acq_rel
  }
  vyre.barrier grid_sync
  %old = vyre.atomic add @rw[%gx], %u : ui32
  %o2 = vyre.atomic or @rw[%gx], %u : ui32
  %o3 = vyre.atomic and @rw[%gx], %u : ui32
  %o4 = vyre.atomic xor @rw[%gx], %u : ui32
  %o5 = vyre.atomic min @rw[%gx], %u : ui32
  %o6 = vyre.atomic max @rw[%gx], %u : ui32
  %o7 = vyre.atomic exchange @rw[%gx], %u : ui32
  %o8 = vyre.atomic compare_exchange @rw[%gx], %old, %u : ui32
  vyre.trap %gx "structure.tag"
  vyre.return
}
vyre.program @expressions workgroup_size [64, 1, 1] {
  %a = vyre.const 7 : ui32
  %b = vyre.const 3 : ui32
  %x = vyre.const -5 : si32
  %y = vyre.const 2 : si32
  %p = vyre.const 2.5 : f32
  %q = vyre.const 0.5 : f32
  %t = vyre.const true : i1
  %r0 = vyre.add %a, %b : ui32
  %r1 = vyre.add %x, %y : si32
  %r2 = vyre.add %p, %q : f32
  %r3 = vyre.sub %a, %b : ui32
  %r4 = vyre.sub %x, %y : si32
  %r5 = vyre.sub %p, %q : f32
  %r6 = vyre.mul %a, %b : ui32
  %r7 = vyre.mul %x, %y : si32
  %r8 = vyre.mul %p, %q : f32
  %r9 = vyre.div %a, %b : ui32
  %r10 = vyre.div %x, %y : si32
  %r11 = vyre.div %p, %q : f32
  %r12 = vyre.mod %a, %b : ui32
  %r13 = vyre.mod %x, %y : si32
  %r14 = vyre.min %a, %b : ui32
  %r15 = vyre.min %x, %y : si32
  %r16 = vyre.min %p, %q : f32
  %r17 = vyre.max %a, %b : ui32
  %r18 = vyre.max %x, %y : si32
  %r19 = vyre.max %p, %q : f32
  %r20 = vyre.bit_and %a, %b : ui32
  %r21 = vyre.bit_and %x, %y : si32
  %r22 = vyre.bit_or %a, %b : ui32
  %r23 = vyre.bit_or %x, %y : si32
  %r24 = vyre.bit_xor %a, %b : ui32
  %r25 = vyre.bit_xor %x, %y : si32
  %r26 = vyre.shl %a, %b : ui32
  %r27 = vyre.shl %x, %y : si32
  %r28 = vyre.shr %a, %b : ui32
  %r29 = vyre.shr %x, %y : si32
  %r30 = vyre.abs_diff %a, %b : ui32
  %r31 = vyre.saturating_add %a, %b : ui32
  %r32 = vyre.saturating_sub %a, %b : ui32
  %r33 = vyre.mul_high %a, %b : ui32
  %r34 = vyre.rotate_left %a, %b : ui32
  %r35 = vyre.rotate_right %a, %b : ui32
  %r36 = vyre.eq %a, %b : ui32
  %r37 = vyre.eq %x, %y : si32
  %r38 = vyre.eq %p, %q : f32
  %r39 = vyre.eq %t, %t : i1
  %r40 = vyre.ne %a, %b : ui32
  %r41 = vyre.ne %x, %y : si32
  %r42 = vyre.ne %p, %q : f32
  %r43 = vyre.ne %t, %t : i1
  %r44 = vyre.lt %a, %b : ui32
  %r45 = vyre.lt %x, %y : si32
  %r46 = vyre.lt %p, %q : f32
  %r47 = vyre.le %a, %b : ui32
  %r48 = vyre.le %x, %y : si32
  %r49 = vyre.le %p, %q : f32
  %r50 = vyre.gt %a, %b : ui32
  %r51 = vyre.gt %x, %y : si32
  %r52 = vyre.gt %p, %q : f32
  %r53 = vyre.ge %a, %b : ui32
  %r54 = vyre.ge %x, %y : si32
  %r55 = vyre.ge %p, %q : f32
  %r56 = vyre.and %t, %t : i1
  %r57 = vyre.or %t, %t : i1
  %r58 = vyre.not %t : i1
  %r59 = vyre.neg %x : si32
  %r60 = vyre.neg %p : f32
  %r61 = vyre.bit_not %a : ui32
  %r62 = vyre.bit_not %x : si32
  %r63 = vyre.popcount %a : ui32
  %r64 = vyre.popcount %x : si32
  %r65 = vyre.clz %a : ui32
  %r66 = vyre.clz %x : si32
  %r67 = vyre.ctz %a : ui32
  %r68 = vyre.ctz %x : si32
  %r69 = vyre.reverse_bits %a : ui32
  %r70 = vyre.reverse_bits %x : si32
  %r71 = vyre.abs %a : ui32
  %r72 = vyre.abs %x : si32
  %r73 = vyre.abs %p : f32
  %r74 = vyre.sign %x : si32
  %r75 = vyre.sign %p : f32
  %r76 = vyre.sqrt %p : f32
  %r77 = vyre.inverse_sqrt %p : f32
  %r78 = vyre.floor %p : f32
  %r79 = vyre.ceil %p : f32
  %r80 = vyre.round %p : f32
  %r81 = vyre.trunc %p : f32
  %r82 = vyre.exp %p : f32
  %r83 = vyre.exp2 %p : f32
  %r84 = vyre.log %p : f32
  %r85 = vyre.log2 %p : f32
  %r86 = vyre.sin %p : f32
  %r87 = vyre.cos %p : f32
  %r88 = vyre.tan %p : f32
  %r89 = vyre.tanh %p : f32
  %r90 = vyre.reciprocal %p : f32
  %r91 = vyre.is_nan %p : f32
  %r92 = vyre.is_inf %p : f32
  %r93 = vyre.is_finite %p : f32
  %sel = vyre.select %t, %p, %q : f32
  %fma = vyre.fma %p, %q, %p : f32
  %c_si32_f32 = vyre.cast %x : si32 to f32
  %c_f32_ui32 = vyre.cast %p : f32 to ui32
  %c_ui32_i1 = vyre.cast %a : ui32 to i1
  %c_i1_si32 = vyre.cast %t : i1 to si32
  %bits = vyre.bitcast %p : f32 to ui32
  %back = vyre.bitcast %bits : ui32 to f32
}

// CHECK:      builtin.module {
// CHECK-NEXT:   vyre.program @structure {non_composable} workgroup_size [8, 4, 2] {
// CHECK-NEXT:     vyre.buffer @ro binding 0 read_only : f32[16]
// CHECK-NEXT:     vyre.buffer @rw binding 3 read_write output : ui32[?]
// CHECK-NEXT:     vyre.buffer @wo binding 1 write_only : si32[4]
// CHECK-NEXT:     vyre.buffer @un binding 2 uniform : ui32[4]
// CHECK-NEXT:     vyre.buffer @flags binding 4 read_write : i1[8]
// CHECK-NEXT:     vyre.buffer @tile workgroup : f32[64]
// CHECK-NEXT:     %gx = vyre.invocation_id x
// CHECK-NEXT:     %gy = vyre.invocation_id y
// CHECK-NEXT:     %wz = vyre.workgroup_id z
// CHECK-NEXT:     %lx = vyre.local_id x
// CHECK-NEXT:     %n = vyre.buf_len @rw
// CHECK-NEXT:     %u = vyre.const 4294967295 : ui32
// CHECK-NEXT:     %s = vyre.const -2147483648 : si32
// CHECK-NEXT:     %f = vyre.const 1.5 : f32
// CHECK-NEXT:     %g = vyre.const -0.0 : f32
// CHECK-NEXT:     %inf = vyre.const 0x7F800000 : f32
// CHECK-NEXT:     %t = vyre.const true : i1
// CHECK-NEXT:     %e = vyre.const false : i1
// CHECK-NEXT:     %v = vyre.load @ro[%gx] : f32
// CHECK-NEXT:     %b = vyre.load @flags[%gx] : i1
// CHECK-NEXT:     vyre.store @tile[%lx] = %v : f32
// CHECK-NEXT:     vyre.store @flags[%gx] = %t : i1
// CHECK-NEXT:     vyre.let @acc = %u : ui32
// CHECK-NEXT:     vyre.assign @acc = %n : ui32
// CHECK-NEXT:     %a = vyre.var @acc : ui32
// CHECK-NEXT:     vyre.if %b {
// CHECK-NEXT:       vyre.store @wo[%gx] = %s : si32
// CHECK-NEXT:     }
// CHECK-NEXT:     vyre.if %e {
// CHECK-NEXT:       vyre.let @inner = %f : f32
// CHECK-NEXT:     } else {
// CHECK-NEXT:       vyre.block {
// CHECK-NEXT:         vyre.let @inner = %g : f32
// CHECK-NEXT:       }
// CHECK-NEXT:     }
// CHECK-NEXT:     vyre.loop @k = %gx to %n {
// CHECK-NEXT:       %k = vyre.var @k : ui32
// CHECK-NEXT:       vyre.store @rw[%k] = %a : ui32
// CHECK-NEXT:     }
// CHECK-NEXT:     vyre.region "example.generator" {
// CHECK-NEXT:       vyre.barrier
// CHECK-NEXT:       vyre.barrier acquire
// CHECK-NEXT:       vyre.barrier release
// CHECK-NEXT:       vyre.barrier acq_rel
// CHECK-NEXT:     }
// CHECK-NEXT:     vyre.barrier grid_sync
// CHECK-NEXT:     %old = vyre.atomic add @rw[%gx], %u : ui32
// CHECK-NEXT:     %o2 = vyre.atomic or @rw[%gx], %u : ui32
// CHECK-NEXT:     %o3 = vyre.atomic and @rw[%gx], %u : ui32
// CHECK-NEXT:     %o4 = vyre.atomic xor @rw[%gx], %u : ui32
// CHECK-NEXT:     %o5 = vyre.atomic min @rw[%gx], %u : ui32
// CHECK-NEXT:     %o6 = vyre.atomic max @rw[%gx], %u : ui32
// CHECK-NEXT:     %o7 = vyre.atomic exchange @rw[%gx], %u : ui32
// CHECK-NEXT:     %o8 = vyre.atomic compare_exchange @rw[%gx], %old, %u : ui32
// CHECK-NEXT:     vyre.trap %gx "structure.tag"
// CHECK-NEXT:     vyre.return
// CHECK-NEXT:   }
// CHECK-NEXT:   vyre.program @expressions workgroup_size [64, 1, 1] {
// CHECK-NEXT:     %a = vyre.const 7 : ui32
// CHECK-NEXT:     %b = vyre.const 3 : ui32
// CHECK-NEXT:     %x = vyre.const -5 : si32
// CHECK-NEXT:     %y = vyre.const 2 : si32
// CHECK-NEXT:     %p = vyre.const 2.5 : f32
// CHECK-NEXT:     %q = vyre.const 0.5 : f32
// CHECK-NEXT:     %t = vyre.const true : i1
// CHECK-NEXT:     %r0 = vyre.add %a, %b : ui32
// CHECK-NEXT:     %r1 = vyre.add %x, %y : si32
// CHECK-NEXT:     %r2 = vyre.add %p, %q : f32
// CHECK-NEXT:     %r3 = vyre.sub %a, %b : ui32
// CHECK-NEXT:     %r4 = vyre.sub %x, %y : si32
// CHECK-NEXT:     %r5 = vyre.sub %p, %q : f32
// CHECK-NEXT:     %r6 = vyre.mul %a, %b : ui32
// CHECK-NEXT:     %r7 = vyre.mul %x, %y : si32
// CHECK-NEXT:     %r8 = vyre.mul %p, %q : f32
// CHECK-NEXT:     %r9 = vyre.div %a, %b : ui32
// CHECK-NEXT:     %r10 = vyre.div %x, %y : si32
// CHECK-NEXT:     %r11 = vyre.div %p, %q : f32
// CHECK-NEXT:     %r12 = vyre.mod %a, %b : ui32
// CHECK-NEXT:     %r13 = vyre.mod %x, %y : si32
// CHECK-NEXT:     %r14 = vyre.min %a, %b : ui32
// CHECK-NEXT:     %r15 = vyre.min %x, %y : si32
// CHECK-NEXT:     %r16 = vyre.min %p, %q : f32
// CHECK-NEXT:     %r17 = vyre.max %a, %b : ui32
// CHECK-NEXT:     %r18 = vyre.max %x, %y : si32
// CHECK-NEXT:     %r19 = vyre.max %p, %q : f32
// CHECK-NEXT:     %r20 = vyre.bit_and %a, %b : ui32
// CHECK-NEXT:     %r21 = vyre.bit_and %x, %y : si32
// CHECK-NEXT:     %r22 = vyre.bit_or %a, %b : ui32
// CHECK-NEXT:     %r23 = vyre.bit_or %x, %y : si32
// CHECK-NEXT:     %r24 = vyre.bit_xor %a, %b : ui32
// CHECK-NEXT:     %r25 = vyre.bit_xor %x, %y : si32
// CHECK-NEXT:     %r26 = vyre.shl %a, %b : ui32
// CHECK-NEXT:     %r27 = vyre.shl %x, %y : si32
// CHECK-NEXT:     %r28 = vyre.shr %a, %b : ui32
// CHECK-NEXT:     %r29 = vyre.shr %x, %y : si32
// CHECK-NEXT:     %r30 = vyre.abs_diff %a, %b : ui32
// CHECK-NEXT:     %r31 = vyre.saturating_add %a, %b : ui32
// CHECK-NEXT:     %r32 = vyre.saturating_sub %a, %b : ui32
// CHECK-NEXT:     %r33 = vyre.mul_high %a, %b : ui32
// CHECK-NEXT:     %r34 = vyre.rotate_left %a, %b : ui32
// CHECK-NEXT:     %r35 = vyre.rotate_right %a, %b : ui32
// CHECK-NEXT:     %r36 = vyre.eq %a, %b : ui32
// CHECK-NEXT:     %r37 = vyre.eq %x, %y : si32
// CHECK-NEXT:     %r38 = vyre.eq %p, %q : f32
// CHECK-NEXT:     %r39 = vyre.eq %t, %t : i1
// CHECK-NEXT:     %r40 = vyre.ne %a, %b : ui32
// CHECK-NEXT:     %r41 = vyre.ne %x, %y : si32
// CHECK-NEXT:     %r42 = vyre.ne %p, %q : f32
// CHECK-NEXT:     %r43 = vyre.ne %t, %t : i1
// CHECK-NEXT:     %r44 = vyre.lt %a, %b : ui32
// CHECK-NEXT:     %r45 = vyre.lt %x, %y : si32
// CHECK-NEXT:     %r46 = vyre.lt %p, %q : f32
// CHECK-NEXT:     %r47 = vyre.le %a, %b : ui32
// CHECK-NEXT:     %r48 = vyre.le %x, %y : si32
// CHECK-NEXT:     %r49 = vyre.le %p, %q : f32
// CHECK-NEXT:     %r50 = vyre.gt %a, %b : ui32
// CHECK-NEXT:     %r51 = vyre.gt %x, %y : si32
// CHECK-NEXT:     %r52 = vyre.gt %p, %q : f32
// CHECK-NEXT:     %r53 = vyre.ge %a, %b : ui32
// CHECK-NEXT:     %r54 = vyre.ge %x, %y : si32
// CHECK-NEXT:     %r55 = vyre.ge %p, %q : f32
// CHECK-NEXT:     %r56 = vyre.and %t, %t : i1
// CHECK-NEXT:     %r57 = vyre.or %t, %t : i1
// CHECK-NEXT:     %r58 = vyre.not %t : i1
// CHECK-NEXT:     %r59 = vyre.neg %x : si32
// CHECK-NEXT:     %r60 = vyre.neg %p : f32
// CHECK-NEXT:     %r61 = vyre.bit_not %a : ui32
// CHECK-NEXT:     %r62 = vyre.bit_not %x : si32
// CHECK-NEXT:     %r63 = vyre.popcount %a : ui32
// CHECK-NEXT:     %r64 = vyre.popcount %x : si32
// CHECK-NEXT:     %r65 = vyre.clz %a : ui32
// CHECK-NEXT:     %r66 = vyre.clz %x : si32
// CHECK-NEXT:     %r67 = vyre.ctz %a : ui32
// CHECK-NEXT:     %r68 = vyre.ctz %x : si32
// CHECK-NEXT:     %r69 = vyre.reverse_bits %a : ui32
// CHECK-NEXT:     %r70 = vyre.reverse_bits %x : si32
// CHECK-NEXT:     %r71 = vyre.abs %a : ui32
// CHECK-NEXT:     %r72 = vyre.abs %x : si32
// CHECK-NEXT:     %r73 = vyre.abs %p : f32
// CHECK-NEXT:     %r74 = vyre.sign %x : si32
// CHECK-NEXT:     %r75 = vyre.sign %p : f32
// CHECK-NEXT:     %r76 = vyre.sqrt %p : f32
// CHECK-NEXT:     %r77 = vyre.inverse_sqrt %p : f32
// CHECK-NEXT:     %r78 = vyre.floor %p : f32
// CHECK-NEXT:     %r79 = vyre.ceil %p : f32
// CHECK-NEXT:     %r80 = vyre.round %p : f32
// CHECK-NEXT:     %r81 = vyre.trunc %p : f32
// CHECK-NEXT:     %r82 = vyre.exp %p : f32
// CHECK-NEXT:     %r83 = vyre.exp2 %p : f32
// CHECK-NEXT:     %r84 = vyre.log %p : f32
// CHECK-NEXT:     %r85 = vyre.log2 %p : f32
// CHECK-NEXT:     %r86 = vyre.sin %p : f32
// CHECK-NEXT:     %r87 = vyre.cos %p : f32
// CHECK-NEXT:     %r88 = vyre.tan %p : f32
// CHECK-NEXT:     %r89 = vyre.tanh %p : f32
// CHECK-NEXT:     %r90 = vyre.reciprocal %p : f32
// CHECK-NEXT:     %r91 = vyre.is_nan %p : f32
// CHECK-NEXT:     %r92 = vyre.is_inf %p : f32
// CHECK-NEXT:     %r93 = vyre.is_finite %p : f32
// CHECK-NEXT:     %sel = vyre.select %t, %p, %q : f32
// CHECK-NEXT:     %fma = vyre.fma %p, %q, %p : f32
// CHECK-NEXT:     %c_si32_f32 = vyre.cast %x : si32 to f32
// CHECK-NEXT:     %c_f32_ui32 = vyre.cast %p : f32 to ui32
// CHECK-NEXT:     %c_ui32_i1 = vyre.cast %a : ui32 to i1
// CHECK-NEXT:     %c_i1_si32 = vyre.cast %t : i1 to si32
// CHECK-NEXT:     %bits = vyre.bitcast %p : f32 to ui32
// CHECK-NEXT:     %back = vyre.bitcast %bits : ui32 to f32
// CHECK-NEXT:   }
// CHECK-NEXT: }
// CHECK-EMPTY:
