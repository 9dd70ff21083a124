// RUN: %python -m vyre_xdsl.testing.cli_batch \
// RUN:   --run "vyre-opt %s -p vyre-to-wgsl -t wgsl > %t.pipeline.wgsl" \
// RUN:   --run "vyre-opt %s --lower -p kernel-vectorize,kernel-coarsen -t wgsl > %t.shortcuts.wgsl" \
// RUN:   --run "vyre-opt %s -p 'vyre-to-wgsl{fuse=true}' -t wgsl > %t.fused.wgsl" \
// RUN:   --run "vyre-opt %s --fuse --lower -p kernel-vectorize,kernel-coarsen -t wgsl > %t.fused-shortcuts.wgsl"
// RUN: filecheck %s < %t.pipeline.wgsl
// RUN: diff %t.pipeline.wgsl %t.shortcuts.wgsl
// RUN: filecheck %s --check-prefix=FUSED < %t.fused.wgsl
// RUN: diff %t.fused.wgsl %t.fused-shortcuts.wgsl

// vyre-to-wgsl is vyre-to-kernel under the name of its destination: the
// WGSL printed by -t wgsl is the one of --[fuse] --lower -t wgsl.

vyre.program @scale workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : f32[1024]
  vyre.buffer @t binding 1 write_only : f32[1024]
  %i = vyre.invocation_id x
  %two = vyre.const 2.0 : f32
  %v = vyre.load @x[%i] : f32
  %r = vyre.mul %v, %two : f32
  vyre.store @t[%i] = %r : f32
}
vyre.program @shift workgroup_size [64, 1, 1] {
  vyre.buffer @t binding 0 read_only : f32[1024]
  vyre.buffer @out binding 1 write_only : f32[1024]
  %i = vyre.invocation_id x
  %one = vyre.const 1.0 : f32
  %v = vyre.load @t[%i] : f32
  %r = vyre.add %v, %one : f32
  vyre.store @out[%i] = %r : f32
}

// Unfused: two kernels, one per program.
// CHECK: // vyre kernel @scale id
// CHECK: @compute @workgroup_size(64, 1, 1)
// CHECK: // vyre kernel @shift id
// CHECK: @compute @workgroup_size(64, 1, 1)

// Fused: one kernel; @t is an intermediate, forwarded, never bound.
// FUSED: // vyre kernel @fused_scale_shift id
// FUSED-NOT: b_t
// FUSED: var<storage, read> b_x
// FUSED: var<storage, read_write> b_out
// FUSED-NOT: // vyre kernel
