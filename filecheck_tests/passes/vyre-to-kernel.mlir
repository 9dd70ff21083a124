// RUN: %python -m vyre_xdsl.testing.cli_batch \
// RUN:   --run "vyre-opt %s -p 'vyre-to-kernel{fuse=true}' > %t.pipeline.mlir" \
// RUN:   --run "vyre-opt %s --fuse --lower -p kernel-vectorize,kernel-coarsen > %t.shortcuts.mlir" \
// RUN:   --run "vyre-opt %s -p vyre-to-kernel > %t.unfused.mlir" \
// RUN:   --run "vyre-opt %s -p 'vyre-to-wgsl{fuse=true}' -t wgsl > %t.wgsl" \
// RUN:   --run "vyre-opt %s -p 'vyre-to-kernel{fuse=true}' --time-passes --mlir-print-ir-after=vyre-inline > /dev/null 2> %t.steps"
// RUN: filecheck %s < %t.pipeline.mlir
// RUN: diff %t.pipeline.mlir %t.shortcuts.mlir
// RUN: filecheck %s --check-prefix=UNFUSED < %t.unfused.mlir
// RUN: filecheck %s --check-prefix=WGSL < %t.wgsl
// RUN: filecheck %s --check-prefix=STEPS < %t.steps
// RUN: not vyre-opt %s -p 'vyre-to-kernel{max-invocations=32}' 2>&1 | filecheck %s --check-prefix=PROFILE

// The named pipeline: convert-to-vyre (standard MLIR only), vyre-inline,
// vyre-fuse (fuse=true), vyre-coarsen-reductions (nothing to do here: see
// vyre-to-kernel-reductions.mlir), vyre-split-grid-sync, vyre-privatize-atomics,
// vyre-lower, kernel-elide-clears, kernel-vectorize, kernel-coarsen,
// kernel-verify; the same output as --fuse --lower (vyre-lower splits and
// privatizes with the same functions when run on its own).

vyre.func @twice(%a: f32) -> f32 {
  %r = vyre.add %a, %a : f32
  vyre.yield %r : f32
}
vyre.program @a workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : f32[256]
  vyre.buffer @t binding 1 read_write : f32[256]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : f32
  %w = vyre.call @twice(%v) : f32
  vyre.store @t[%i] = %w : f32
}
vyre.program @b workgroup_size [64, 1, 1] {
  vyre.buffer @t binding 0 read_only : f32[256]
  vyre.buffer @y binding 1 read_write : f32[256]
  %i = vyre.invocation_id x
  %v = vyre.load @t[%i] : f32
  %w = vyre.mul %v, %v : f32
  vyre.store @y[%i] = %w : f32
}

// CHECK:      kernel.descriptor @fused_a_b
// CHECK-NEXT:   kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [1, 1, 1] count [@t, @y] elements_per_invocation 4 logical_grid [4, 1, 1]
// CHECK:        vyre.add
// CHECK:        vyre.mul
// CHECK-NOT:  kernel.descriptor
// CHECK-NOT:  vyre.func

// UNFUSED:     kernel.descriptor @a
// UNFUSED:     vyre.add
// UNFUSED:     kernel.descriptor @b
// UNFUSED-NOT: vyre.func

// WGSL:     @compute @workgroup_size(64, 1, 1)
// WGSL-NOT: // -----

// Each step is a pass of the driver's pipeline; vyre-inline changed the module here.
// STEPS:      Pass vyre-inline took
// STEPS:      IR Dump After vyre-inline
// STEPS-NOT:  vyre.func
// STEPS:      Pass vyre-fuse took
// STEPS:      Pass vyre-coarsen-reductions took
// STEPS:      Pass vyre-split-grid-sync took
// STEPS:      Pass vyre-privatize-atomics took
// STEPS:      Pass vyre-lower took

// PROFILE: vyre-to-kernel.mlir:{{[0-9]+}}:1: error: workgroup size [64, 1, 1] has 64 invocations; the target profile allows 32
