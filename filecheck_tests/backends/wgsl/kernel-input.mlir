// RUN: %python -m vyre_xdsl.testing.cli_batch \
// RUN:   --run "xdsl-opt %examples/axpy.mlir -t vyre-wgsl > %t.xdsl" \
// RUN:   --run "vyre-opt %s -t wgsl > %t.kernel" \
// RUN:   --run "vyre-opt %examples/axpy.mlir --lower -p kernel-vectorize | vyre-opt -t wgsl > %t.axpy"
// RUN: filecheck %s < %t.kernel
// RUN: filecheck %s --check-prefix=AXPY < %t.axpy
// -t wgsl takes already-lowered kernel IR too; only the bindings the body uses
// are declared (wgpu's automatic layout drops the others).

kernel.descriptor @copy id "c0ffee" entry "main" attributes {source = "copy"} {
  kernel.dispatch workgroup_size [32, 1, 1] program_workgroup_size [32, 1, 1] grid [2, 1, 1] count [@out]
  kernel.binding @unused slot 0 group 0 constant read_only : f32[4]
  kernel.binding @in slot 1 group 0 constant read_only : f32[?]
  kernel.binding @out slot 2 group 0 global write_only : f32[64]
  kernel.binding @__vyre_descriptor_trap_sidecar slot 3 group 0 global read_write atomic trap_sidecar : ui32[8]
  %i = kernel.invocation_id x
  %n = kernel.buffer_length slot 1
  %neg = vyre.const -0.0 : f32
  %nan = vyre.const 0x7FC00000 : f32
  %v = kernel.load_constant slot 1 [%i] : f32
  %s = vyre.add %v, %neg : f32
  kernel.for %k = %i to %n {
  }
  kernel.store_global slot 2 [%i] = %s : f32
}

// CHECK:      // vyre kernel @copy id c0ffee
// CHECK-NEXT: // program workgroup [32, 1, 1], kernel workgroup [32, 1, 1], grid [2, 1, 1], count [@out]
// CHECK-NEXT: @group(0) @binding(1) var<storage, read> b_in: array<f32>;
// CHECK-NEXT: @group(0) @binding(2) var<storage, read_write> b_out: array<f32>;
// CHECK-NEXT: @group(0) @binding(3) var<storage, read_write> vyre_trap_sidecar: array<atomic<u32>>;
// CHECK-EMPTY:
// CHECK-NEXT: fn vyre_loop_left_early() {
// CHECK-NEXT:   atomicOr(&vyre_trap_sidecar[3], 2u);
// CHECK-NEXT: }
// CHECK-EMPTY:
// CHECK-NEXT: @compute @workgroup_size(32, 1, 1)
// CHECK:        let v_i = (vyre_group * 32u + vyre_lid.x);
// CHECK-NEXT:   let v_n = arrayLength(&b_in);
// CHECK-NEXT:   let v_neg = bitcast<f32>(0x80000000u);
// CHECK-NEXT:   let v_nan = bitcast<f32>(0x7fc00000u);
// CHECK-NEXT:   let v_v = select(0.0f, b_in[min(v_i, arrayLength(&b_in) - 1u)], v_i < arrayLength(&b_in));
// CHECK-NEXT:   let v_s = (v_v + v_neg);
// CHECK-NEXT:   var i_k: u32 = v_i;
// CHECK-NEXT:   for (; i_k < v_n; i_k = i_k + 1u) {
// CHECK-NEXT:     let v_k = i_k;
// CHECK-NEXT:   }
// CHECK-NEXT:   if (i_k < v_n) {
// CHECK-NEXT:     vyre_loop_left_early();
// CHECK-NEXT:   }
// CHECK-NEXT:   if (v_i < 64u) {
// CHECK-NEXT:     b_out[v_i] = v_s;
// CHECK-NEXT:   }
// CHECK-NEXT: }

// axpy is elementwise over counts divisible by 4, so it prints in vec4 form.
// AXPY:      // vyre kernel @axpy id {{[0-9a-f]+$}}
// AXPY-NEXT: // program workgroup [64, 1, 1], kernel workgroup [64, 1, 1], grid [16, 1, 1], count [@y]
// AXPY-NEXT: // vec4 form: invocation i runs logical invocations 4i .. 4i+3; launch grid [4, 1, 1]
// AXPY-NEXT: @group(0) @binding(0) var<storage, read> b_x: array<vec4<f32>>;
// AXPY-NEXT: @group(0) @binding(1) var<storage, read_write> b_y: array<vec4<f32>>;
// AXPY-EMPTY:
// AXPY-NEXT: @compute @workgroup_size(64, 1, 1)
// AXPY-NEXT: fn main(@builtin(workgroup_id) vyre_wid: vec3<u32>, @builtin(local_invocation_id) vyre_lid: vec3<u32>, @builtin(num_workgroups) vyre_nwg: vec3<u32>) {
// AXPY-NEXT:   let vyre_group = vyre_wid.x + (vyre_wid.y + vyre_wid.z * vyre_nwg.y) * vyre_nwg.x;
// AXPY-NEXT:   let vyre_local = vyre_lid.x + vyre_lid.y * 64u + vyre_lid.z * 64u;
// AXPY-NEXT:   let vyre_invocation = vyre_group * 64u + vyre_local;
// AXPY-NEXT:   let v_i = (vyre_invocation * 4u + 0u);
// AXPY-NEXT:   let v_i_1 = (vyre_invocation * 4u + 1u);
// AXPY-NEXT:   let v_i_2 = (vyre_invocation * 4u + 2u);
// AXPY-NEXT:   let v_i_3 = (vyre_invocation * 4u + 3u);
// AXPY-NEXT:   let v_a = 2.0f;
// AXPY-NEXT:   let v_a_4 = 2.0f;
// AXPY-NEXT:   let v_a_5 = 2.0f;
// AXPY-NEXT:   let v_a_6 = 2.0f;
// AXPY-NEXT:   let w_xv = select(vec4<f32>(), b_x[min(vyre_invocation, 255u)], vyre_invocation < 256u);
// AXPY-NEXT:   let v_xv = w_xv[0];
// AXPY-NEXT:   let v_xv_7 = w_xv[1];
// AXPY-NEXT:   let v_xv_8 = w_xv[2];
// AXPY-NEXT:   let v_xv_9 = w_xv[3];
// AXPY:        b_y[vyre_invocation] = vec4<f32>(v_s, v_s_16, v_s_17, v_s_18);

// Stock xdsl-opt sees the same target as `vyre-wgsl` (xDSL has a toy `wgsl`).
// RUN: filecheck %s --check-prefix=AXPY < %t.xdsl
