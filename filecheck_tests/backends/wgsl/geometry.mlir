// RUN: vyre-opt %s -t wgsl | filecheck %s
// Ids and launch geometry: logical workgroups fold over y; a widened [1, 1, 1]
// program skips invocations past its declared launch (static and runtime-sized
// counts); grid_sync gives one module per part, separated by `// -----`;
// barrier kernels record traps without returning.

vyre.program @ids workgroup_size [8, 4, 2] {
  vyre.buffer @out binding 0 write_only : ui32[8]
  %gx = vyre.invocation_id x
  %gy = vyre.invocation_id y
  %wx = vyre.workgroup_id x
  %wy = vyre.workgroup_id y
  %lz = vyre.local_id z
  vyre.store @out[%gx] = %gy : ui32
}

// CHECK:      // vyre kernel @ids id [[ID:[0-9a-f]+]]
// CHECK-NEXT: // program workgroup [8, 4, 2], kernel workgroup [8, 4, 2], grid [1, 1, 1], count [@out]
// CHECK:      @compute @workgroup_size(8, 4, 2)
// CHECK-NEXT: fn main(@builtin(workgroup_id) vyre_wid: vec3<u32>, @builtin(local_invocation_id) vyre_lid: vec3<u32>, @builtin(num_workgroups) vyre_nwg: vec3<u32>) {
// CHECK-NEXT:   let vyre_group = vyre_wid.x + (vyre_wid.y + vyre_wid.z * vyre_nwg.y) * vyre_nwg.x;
// CHECK-NEXT:   let vyre_local = vyre_lid.x + vyre_lid.y * 8u + vyre_lid.z * 32u;
// CHECK-NEXT:   let vyre_invocation = vyre_group * 64u + vyre_local;
// CHECK-NEXT:   let v_gx = (vyre_group * 8u + vyre_lid.x);
// CHECK-NEXT:   let v_gy = vyre_lid.y;
// CHECK-NEXT:   let v_wx = vyre_group;
// CHECK-NEXT:   let v_wy = 0u;
// CHECK-NEXT:   let v_lz = vyre_lid.z;
// CHECK:      // -----

vyre.program @scalar workgroup_size [1, 1, 1] {
  vyre.buffer @out binding 0 write_only : ui32[1000]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  vyre.store @out[%i] = %l : ui32
}

// CHECK:      // program workgroup [1, 1, 1], kernel workgroup [128, 1, 1], grid [8, 1, 1], count [@out]
// CHECK:      @compute @workgroup_size(128, 1, 1)
// CHECK:        let vyre_invocation = vyre_group * 128u + vyre_lid.x;
// CHECK-NEXT:   if (vyre_invocation >= 1000u) {
// CHECK-NEXT:     return;
// CHECK-NEXT:   }
// CHECK-NEXT:   let v_i = vyre_invocation;
// CHECK-NEXT:   let v_l = 0u;
// CHECK:      // -----

vyre.program @scalar_dynamic workgroup_size [1, 1, 1] {
  vyre.buffer @x binding 0 read_only : f32[?]
  vyre.buffer @out binding 1 read_write : f32[?]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : f32
  vyre.store @out[%i] = %v : f32
}

// CHECK:      // program workgroup [1, 1, 1], kernel workgroup [128, 1, 1], grid runtime, count [@out]
// CHECK:        let vyre_invocation = vyre_group * 128u + vyre_lid.x;
// CHECK-NEXT:   let vyre_n = max(1u, arrayLength(&b_out));
// CHECK-NEXT:   let vyre_gy = (vyre_n + 65534u) / 65535u;
// CHECK-NEXT:   let vyre_declared = ((vyre_n + vyre_gy - 1u) / vyre_gy) * vyre_gy;
// CHECK-NEXT:   if (vyre_invocation >= vyre_declared) {
// CHECK-NEXT:     return;
// CHECK-NEXT:   }
// CHECK:      // -----

vyre.program @split workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_write : si32[128]
  vyre.buffer @tile workgroup : si32[64]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %v = vyre.load @x[%i] : si32
  vyre.store @tile[%l] = %v : si32
  vyre.barrier
  vyre.barrier grid_sync
  %j = vyre.invocation_id x
  %w = vyre.load @x[%j] : si32
  %q = vyre.mod %w, %w : si32
  vyre.store @x[%j] = %q : si32
  vyre.barrier
}

// CHECK:      // vyre kernel @split_part0 id
// CHECK:      var<workgroup> w_tile: array<i32, 64>;
// CHECK:        w_tile[v_l] = v_v;
// CHECK-NEXT:   workgroupBarrier();
// CHECK-NEXT: }
// CHECK-NEXT: // -----
// CHECK-NEXT: // vyre kernel @split_part1 id
// CHECK:        if ((v_w == 0i) || ((v_w == i32(-2147483648)) && (v_w == -1i))) {
// CHECK-NEXT:     vyre_record_trap(0u, 1u, vyre_invocation);
// CHECK-NEXT:   }
// CHECK-NEXT:   let v_q = (v_w - (v_w / v_w) * v_w);
