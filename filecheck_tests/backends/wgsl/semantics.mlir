// RUN: vyre-opt %s -t wgsl | filecheck %s
// SPEC 3.4 in WGSL: guarded ui32 div/mod, masked shifts, si32 division traps
// through the sidecar, bounds-checked loads and stores, Bool buffers as u32
// words, atomics on atomic<u32>, uniform buffers in group 1.

vyre.program @semantics workgroup_size [64, 1, 1] {
  vyre.buffer @a binding 0 read_only : ui32[?]
  vyre.buffer @s binding 1 uniform : si32[4]
  vyre.buffer @flags binding 2 read_write : i1[64]
  vyre.buffer @cnt binding 3 read_write : ui32[8]
  %i = vyre.invocation_id x
  %x = vyre.load @a[%i] : ui32
  %d = vyre.div %x, %x : ui32
  %m = vyre.mod %x, %d : ui32
  %l = vyre.shl %m, %x : ui32
  %zero = vyre.const 0 : ui32
  %sv = vyre.load @s[%zero] : si32
  %q = vyre.div %sv, %sv : si32
  %f = vyre.load @flags[%i] : i1
  %nf = vyre.not %f : i1
  vyre.store @flags[%i] = %nf : i1
  %old = vyre.atomic add @cnt[%zero], %l : ui32
  %prev = vyre.atomic compare_exchange @cnt[%i], %old, %x : ui32
  %plain = vyre.load @cnt[%i] : ui32
  vyre.store @cnt[%i] = %plain : ui32
}

// CHECK:      @group(0) @binding(0) var<storage, read> b_a: array<u32>;
// CHECK-NEXT: @group(1) @binding(1) var<storage, read> b_s: array<i32>;
// CHECK-NEXT: @group(0) @binding(2) var<storage, read_write> b_flags: array<u32>;
// CHECK-NEXT: @group(0) @binding(3) var<storage, read_write> b_cnt: array<atomic<u32>>;
// CHECK-NEXT: @group(0) @binding(4) var<storage, read_write> vyre_trap_sidecar: array<atomic<u32>>;
// CHECK:      fn vyre_loop_left_early() {
// CHECK-NEXT:   atomicOr(&vyre_trap_sidecar[3], 2u);
// CHECK:      fn vyre_record_trap(address: u32, code: u32, invocation: u32) {
// CHECK-NEXT:   let key = ~invocation;
// CHECK-NEXT:   if (atomicMax(&vyre_trap_sidecar[0], key) >= key) {
// CHECK:          if (attempt == 4096u) {
// CHECK-NEXT:       atomicOr(&vyre_trap_sidecar[3], 4u);
// CHECK:          let held = atomicOr(&vyre_trap_sidecar[3], 1u);
// CHECK:              atomicStore(&vyre_trap_sidecar[4], address);
// CHECK-NEXT:         atomicStore(&vyre_trap_sidecar[5], key);
// CHECK-NEXT:         atomicStore(&vyre_trap_sidecar[6], code);
// CHECK-NEXT:         atomicStore(&vyre_trap_sidecar[7], key);
// CHECK:      @compute @workgroup_size(64, 1, 1)
// CHECK:        let v_x = select(0u, b_a[min(v_i, arrayLength(&b_a) - 1u)], v_i < arrayLength(&b_a));
// CHECK-NEXT:   let v_d = select(v_x / select(v_x, 1u, v_x == 0u), 4294967295u, v_x == 0u);
// CHECK-NEXT:   let v_m = select(v_x % select(v_d, 1u, v_d == 0u), 0u, v_d == 0u);
// CHECK-NEXT:   let v_l = (v_m << (v_x & 31u));
// An index provably below a static count (here the constant 0) needs no check.
// CHECK:        let v_sv = b_s[v_zero];
// CHECK-NEXT:   if ((v_sv == 0i) || ((v_sv == i32(-2147483648)) && (v_sv == -1i))) {
// CHECK-NEXT:     vyre_record_trap(0u, 1u, vyre_invocation);
// CHECK-NEXT:     return;
// CHECK-NEXT:   }
// CHECK-NEXT:   let v_q = (v_sv / v_sv);
// CHECK-NEXT:   let v_f = select(false, (b_flags[min(v_i, 64u - 1u)] != 0u), v_i < 64u);
// CHECK-NEXT:   let v_nf = (!v_f);
// CHECK-NEXT:   if (v_i < 64u) {
// CHECK-NEXT:     b_flags[v_i] = select(0u, 1u, v_nf);
// CHECK-NEXT:   }
// CHECK-NEXT:   let v_old = atomicAdd(&b_cnt[v_zero], v_l);
// CHECK-NEXT:   var a_prev: u32 = 0u;
// CHECK-NEXT:   if (v_i < 8u) {
// CHECK-NEXT:     var cas_done = false;
// CHECK-NEXT:     loop {
// CHECK-NEXT:       let r = atomicCompareExchangeWeak(&b_cnt[v_i], v_old, v_x);
// CHECK-NEXT:       if (r.exchanged || r.old_value != v_old) {
// CHECK-NEXT:         a_prev = r.old_value;
// CHECK-NEXT:         cas_done = true;
// CHECK-NEXT:         break;
// CHECK-NEXT:       }
// CHECK-NEXT:     }
// CHECK-NEXT:     if (!cas_done) {
// CHECK-NEXT:       vyre_loop_left_early();
// CHECK-NEXT:     }
// CHECK-NEXT:   }
// CHECK-NEXT:   let v_prev = a_prev;
// CHECK-NEXT:   let v_plain = select(0u, atomicLoad(&b_cnt[min(v_i, 8u - 1u)]), v_i < 8u);
// CHECK-NEXT:   if (v_i < 8u) {
// CHECK-NEXT:     atomicStore(&b_cnt[v_i], v_plain);
// CHECK-NEXT:   }
// CHECK-NEXT: }
