// RUN: %python -m vyre_xdsl.testing.cli_batch \
// RUN:   --run "vyre-opt %s --split-input-file > %t.round" \
// RUN:   --run "vyre-opt %s --split-input-file --lower > %t.lower" \
// RUN:   --run "vyre-opt %s --split-input-file -t wgsl > %t.wgsl"
// RUN: filecheck %s --check-prefix=ROUND < %t.round
// RUN: filecheck %s --check-prefix=LOWER < %t.lower
// RUN: filecheck %s --check-prefix=WGSL < %t.wgsl
// Explicit grids (`grid [GX, GY, GZ]`) and `vyre.num_workgroups`: they print back
// as written, lower to `grid explicit [...]` on the descriptor (never widened,
// never cut down), and in WGSL every id spans its own axis of the grid.

// A 2-D launch: 3 x 2 workgroups of 8 x 4 invocations cover a 24 x 8 image.
vyre.program @image workgroup_size [8, 4, 1] grid [3, 2, 1] {
  vyre.buffer @out binding 0 write_only : ui32[192]
  %x = vyre.invocation_id x
  %y = vyre.invocation_id y
  %wy = vyre.workgroup_id y
  %ny = vyre.num_workgroups y
  %w = vyre.const 24 : ui32
  %r = vyre.mul %y, %w : ui32
  %i = vyre.add %r, %x : ui32
  %v = vyre.add %ny, %wy : ui32
  vyre.store @out[%i] = %v : ui32
}

// ROUND:      vyre.program @image workgroup_size [8, 4, 1] grid [3, 2, 1] {
// ROUND:        %ny = vyre.num_workgroups y

// LOWER:      kernel.descriptor @image
// LOWER-NEXT:   kernel.dispatch workgroup_size [8, 4, 1] program_workgroup_size [8, 4, 1] grid explicit [3, 2, 1] count [@out]
// LOWER:        %wy = kernel.workgroup_id y
// LOWER-NEXT:   %ny = kernel.num_workgroups y

// WGSL:      // program workgroup [8, 4, 1], kernel workgroup [8, 4, 1], grid [3, 2, 1], count [@out]
// WGSL:      @compute @workgroup_size(8, 4, 1)
// WGSL:        let v_x = (vyre_wid.x * 8u + vyre_lid.x);
// WGSL-NEXT:   let v_y = (vyre_wid.y * 4u + vyre_lid.y);
// WGSL-NEXT:   let v_wy = vyre_wid.y;
// WGSL-NEXT:   let v_ny = vyre_nwg.y;

// -----

// A 3-D launch of a [1, 1, 1] program: not widened (its ids are the grid's).
vyre.program @volume workgroup_size [1, 1, 1] grid [4, 3, 2] {
  vyre.buffer @out binding 0 write_only : ui32[24]
  %x = vyre.invocation_id x
  %y = vyre.invocation_id y
  %z = vyre.invocation_id z
  %nz = vyre.num_workgroups z
  %c4 = vyre.const 4 : ui32
  %c12 = vyre.const 12 : ui32
  %zy = vyre.mul %z, %c12 : ui32
  %yx = vyre.mul %y, %c4 : ui32
  %p = vyre.add %zy, %yx : ui32
  %i = vyre.add %p, %x : ui32
  vyre.store @out[%i] = %nz : ui32
}

// ROUND:      vyre.program @volume workgroup_size [1, 1, 1] grid [4, 3, 2] {

// LOWER:      kernel.dispatch workgroup_size [1, 1, 1] program_workgroup_size [1, 1, 1] grid explicit [4, 3, 2] count [@out]

// WGSL:      @compute @workgroup_size(1, 1, 1)
// WGSL:        let v_x = (vyre_wid.x * 1u + vyre_lid.x);
// WGSL-NEXT:   let v_y = (vyre_wid.y * 1u + vyre_lid.y);
// WGSL-NEXT:   let v_z = (vyre_wid.z * 1u + vyre_lid.z);
// WGSL-NEXT:   let v_nz = vyre_nwg.z;

// -----

// Without `grid`, num_workgroups reads the derived grid as launched: a kernel
// that reads it keeps that grid (no vector form, no widening).
vyre.program @derived workgroup_size [64, 1, 1] {
  vyre.buffer @out binding 0 write_only : ui32[1024]
  %i = vyre.invocation_id x
  %n = vyre.num_workgroups x
  vyre.store @out[%i] = %n : ui32
}

// LOWER:      kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [16, 1, 1] count [@out]
// LOWER-NOT:  explicit

// WGSL:      // program workgroup [64, 1, 1], kernel workgroup [64, 1, 1], grid [16, 1, 1], count [@out]
// WGSL-NOT:  vec4 form
// WGSL:        let v_n = vyre_nwg.x;
