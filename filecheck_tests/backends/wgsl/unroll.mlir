// RUN: vyre-opt %s -t wgsl | filecheck %s
// A loop with ui32 constant bounds and at most 16 iterations prints unrolled:
// one scope per iteration binding the loop variable to its value; a longer
// loop stays a `for`, checked after it ends for a driver that left it early.

vyre.program @three workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : f32[192]
  vyre.buffer @y binding 1 write_only : f32[64]
  %i = vyre.invocation_id x
  %zero = vyre.const 0 : ui32
  %three = vyre.const 3 : ui32
  %stride = vyre.const 64 : ui32
  %f0 = vyre.const 0.0 : f32
  vyre.let @acc = %f0 : f32
  vyre.loop @k = %zero to %three {
    %k = vyre.var @k : ui32
    %off = vyre.mul %k, %stride : ui32
    %j = vyre.add %i, %off : ui32
    %v = vyre.load @x[%j] : f32
    %a = vyre.var @acc : f32
    %s = vyre.add %a, %v : f32
    vyre.assign @acc = %s : f32
  }
  %r = vyre.var @acc : f32
  vyre.store @y[%i] = %r : f32
}

// CHECK-LABEL: vyre kernel @three
// CHECK-NOT:     vyre_trap_sidecar
// CHECK:         var l_acc: f32 = v_f0;
// CHECK-NEXT:    // for 0 to 3, unrolled
// CHECK-NEXT:    {
// CHECK-NEXT:      let v_k = 0u;
// CHECK-NEXT:      let v_off = (v_k * v_stride);
// CHECK:           l_acc = v_s;
// CHECK-NEXT:    }
// CHECK-NEXT:    {
// CHECK-NEXT:      let v_k = 1u;
// CHECK:         }
// CHECK-NEXT:    {
// CHECK-NEXT:      let v_k = 2u;
// CHECK:         }
// CHECK-NEXT:    let v_r = l_acc;
// CHECK-NOT:     for (

vyre.program @seventeen workgroup_size [64, 1, 1] {
  vyre.buffer @y binding 0 read_write : ui32[64]
  %i = vyre.invocation_id x
  %zero = vyre.const 0 : ui32
  %n = vyre.const 17 : ui32
  vyre.loop @k = %zero to %n {
    %k = vyre.var @k : ui32
    %v = vyre.load @y[%i] : ui32
    %s = vyre.add %v, %k : ui32
    vyre.store @y[%i] = %s : ui32
  }
}

// CHECK-LABEL: vyre kernel @seventeen
// CHECK:         var i_k: u32 = v_zero;
// CHECK-NEXT:    for (; i_k < v_n; i_k = i_k + 1u) {
// CHECK:         if (i_k < v_n) {
// CHECK-NEXT:      vyre_loop_left_early();
