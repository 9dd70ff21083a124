// Every refusal of vyre-fuse is a located diagnostic that names the program(s),
// the cause and a fix. (--verify-diagnostics prints them to stdout, exit 0.)
// RUN: vyre-opt %s --split-input-file --verify-diagnostics -p 'vyre-fuse{split-grid-sync=false}' | filecheck %s
// RUN: vyre-opt %s --split-input-file --verify-diagnostics -p 'vyre-fuse{force=true}' | filecheck %s --check-prefix=SPLIT

// A reversed read crosses workgroups; with the split disabled, fusion refuses.
// (The producer's value goes through a named local, so it is not recomputed.)
vyre.program @produce workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[256]
  vyre.buffer @t binding 1 write_only : ui32[256]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  vyre.let @kept = %v : ui32
  %k = vyre.var @kept : ui32
  vyre.store @t[%i] = %k : ui32
}
// CHECK: vyre-fuse-invalid.mlir:[[# @LINE + 4]]:1: error: cannot fuse @produce and @reverse without a dispatch split: @reverse reads buffer @t that @produce writes
// CHECK-SAME: fix: allow the split (vyre-fuse{split-grid-sync=true}), index @t by the same invocation id in both programs, or keep @produce and @reverse in separate fusion groups
// SPLIT: vyre.program @fused_produce_reverse
// SPLIT: vyre.barrier grid_sync
vyre.program @reverse workgroup_size [64, 1, 1] {
  vyre.buffer @t binding 0 read_only : ui32[256]
  vyre.buffer @out binding 1 write_only : ui32[256]
  %i = vyre.invocation_id x
  %c255 = vyre.const 255 : ui32
  %j = vyre.sub %c255, %i : ui32
  %v = vyre.load @t[%j] : ui32
  vyre.store @out[%i] = %v : ui32
}

// -----

// Write-after-write from different invocations, split disabled.
vyre.program @fill workgroup_size [64, 1, 1] {
  vyre.buffer @out binding 0 write_only : ui32[128]
  %i = vyre.invocation_id x
  vyre.store @out[%i] = %i : ui32
}
// CHECK: vyre-fuse-invalid.mlir:[[# @LINE + 1]]:1: error: cannot fuse @fill and @overwrite without a dispatch split: @overwrite writes buffer @out that @fill also writes
vyre.program @overwrite workgroup_size [64, 1, 1] {
  vyre.buffer @out binding 0 write_only : ui32[128]
  %i = vyre.invocation_id x
  %c127 = vyre.const 127 : ui32
  %j = vyre.sub %c127, %i : ui32
  %seven = vyre.const 7 : ui32
  vyre.store @out[%j] = %seven : ui32
}

// -----

// Workgroup memory in an arm whose workgroup differs from the fused one.
// CHECK: vyre-fuse-invalid.mlir:[[# @LINE + 2]]:1: error: cannot fuse @tiled: its workgroup [32, 1, 1] differs from the fused workgroup [64, 1, 1] and it declares workgroup memory
// CHECK-SAME: fix: give every program of the fusion group the same workgroup size, or fuse @tiled in a separate group
vyre.program @tiled workgroup_size [32, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[64]
  vyre.buffer @a binding 1 write_only : ui32[64]
  vyre.buffer @tile workgroup : ui32[32]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %v = vyre.load @x[%i] : ui32
  vyre.store @tile[%l] = %v : ui32
  vyre.store @a[%i] = %v : ui32
}
vyre.program @wide workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[64]
  vyre.buffer @b binding 1 write_only : ui32[64]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  vyre.store @b[%i] = %v : ui32
}

// -----

// A barrier in an arm whose workgroup differs.
vyre.program @wide workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[64]
  vyre.buffer @b binding 1 write_only : ui32[64]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  vyre.store @b[%i] = %v : ui32
}
// CHECK: vyre-fuse-invalid.mlir:[[# @LINE + 1]]:1: error: cannot fuse @synced: its workgroup [32, 1, 1] differs from the fused workgroup [64, 1, 1] and it contains a barrier
vyre.program @synced workgroup_size [32, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[64]
  vyre.buffer @a binding 1 write_only : ui32[64]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  vyre.barrier
  vyre.store @a[%i] = %v : ui32
}

// -----

// local_id means something else under a different workgroup size.
vyre.program @wide workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[64]
  vyre.buffer @b binding 1 write_only : ui32[64]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  vyre.store @b[%i] = %v : ui32
}
// CHECK: vyre-fuse-invalid.mlir:[[# @LINE + 1]]:1: error: cannot fuse @local: its workgroup [32, 1, 1] differs from the fused workgroup [64, 1, 1] and it reads workgroup_id or local_id
vyre.program @local workgroup_size [32, 1, 1] {
  vyre.buffer @a binding 0 write_only : ui32[64]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  vyre.store @a[%i] = %l : ui32
}

// -----

// Over-dispatch: [64, 1, 1] and [1, 64, 1] fuse to [64, 64, 1].
// CHECK: vyre-fuse-invalid.mlir:[[# @LINE + 2]]:1: error: cannot fuse: the fused workgroup [64, 64, 1] (4096 invocations) is more than 4x the largest arm's (64) (over-dispatch); the arms are @rows [64, 1, 1], @columns [1, 64, 1]
// CHECK-SAME: fix: give @rows a workgroup size of the same shape as the others, or fuse it in a separate group
vyre.program @rows workgroup_size [64, 1, 1] {
  vyre.buffer @a binding 0 write_only : ui32[64]
  %i = vyre.invocation_id x
  vyre.store @a[%i] = %i : ui32
}
vyre.program @columns workgroup_size [1, 64, 1] {
  vyre.buffer @b binding 0 write_only : ui32[64]
  %j = vyre.invocation_id y
  vyre.store @b[%j] = %j : ui32
}

// -----

// Not over-dispatch (2048 = 4 x 512), but over the 1024-invocation limit.
// CHECK: vyre-fuse-invalid.mlir:[[# @LINE + 1]]:1: error: cannot fuse: the fused workgroup [512, 4, 1] has 2048 invocations, more than the limit 1024
vyre.program @long workgroup_size [512, 1, 1] {
  vyre.buffer @a binding 0 write_only : ui32[512]
  %i = vyre.invocation_id x
  vyre.store @a[%i] = %i : ui32
}
vyre.program @deep workgroup_size [1, 4, 1] {
  vyre.buffer @b binding 0 write_only : ui32[4]
  %j = vyre.invocation_id y
  vyre.store @b[%j] = %j : ui32
}

// -----

// A non_composable program fused with (a copy of) itself.
vyre.program @count {non_composable} workgroup_size [64, 1, 1] {
  vyre.buffer @hits binding 0 read_write : ui32[1]
  %z = vyre.const 0 : ui32
  %one = vyre.const 1 : ui32
  %old = vyre.atomic add @hits[%z], %one : ui32
}
// CHECK: vyre-fuse-invalid.mlir:[[# @LINE + 2]]:1: error: cannot fuse @count with @count_again: they are the same program (same buffers, workgroup size and statement count) and @count is non_composable
// CHECK-SAME: fix: run the second copy as its own program
vyre.program @count_again workgroup_size [64, 1, 1] {
  vyre.buffer @hits binding 0 read_write : ui32[1]
  %z = vyre.const 0 : ui32
  %one = vyre.const 1 : ui32
  %old = vyre.atomic add @hits[%z], %one : ui32
}

// -----

// Runtime-sized buffers under different workgroup sizes: the fused dispatch
// cannot be proven to launch every invocation of @narrow.
// CHECK: vyre-fuse-invalid.mlir:[[# @LINE + 2]]:1: error: cannot fuse @narrow: its own dispatch (workgroup [48, 1, 1] over len(@a) elements) launches invocations that the fused dispatch (workgroup [64, 1, 1] over max(len(@a), len(@b)) elements) may not launch
// CHECK-SAME: fix: give the programs of the group the same workgroup size and static buffer counts, or fuse @narrow in a separate group
vyre.program @narrow workgroup_size [48, 1, 1] {
  vyre.buffer @a binding 0 read_write : ui32[?]
  %i = vyre.invocation_id x
  %v = vyre.load @a[%i] : ui32
  %s = vyre.add %v, %v : ui32
  vyre.store @a[%i] = %s : ui32
}
vyre.program @wide workgroup_size [64, 1, 1] {
  vyre.buffer @b binding 0 read_write : ui32[?]
  %i = vyre.invocation_id x
  %v = vyre.load @b[%i] : ui32
  vyre.store @b[%i] = %v : ui32
}

// -----

// A return under a (uniform) condition before a barrier: fused, the return may
// only end the arm, and the barrier would depend on a per-invocation flag.
// CHECK: vyre-fuse-invalid.mlir:[[# @LINE + 1]]:1: error: cannot fuse @stop: it returns from inside a 'vyre.if' or 'vyre.loop' before a barrier
vyre.program @stop workgroup_size [64, 1, 1] {
  vyre.buffer @a binding 0 write_only : ui32[128]
  %i = vyre.invocation_id x
  %w = vyre.workgroup_id x
  %z = vyre.const 0 : ui32
  %first = vyre.eq %w, %z : ui32
  vyre.if %first {
    vyre.return
  }
  vyre.barrier
  vyre.store @a[%i] = %i : ui32
}
vyre.program @go workgroup_size [64, 1, 1] {
  vyre.buffer @b binding 0 write_only : ui32[128]
  %i = vyre.invocation_id x
  vyre.store @b[%i] = %i : ui32
}

// -----

// An arm that must run under a guard (it launched fewer invocations) but
// already contains a top-level grid_sync.
// CHECK: vyre-fuse-invalid.mlir:[[# @LINE + 1]]:1: error: cannot fuse @split: its dispatch launches fewer invocations than the fused one, so it must run under a guard, but it contains a grid_sync barrier
vyre.program @split workgroup_size [64, 1, 1] {
  vyre.buffer @a binding 0 write_only : ui32[64]
  %i = vyre.invocation_id x
  vyre.store @a[%i] = %i : ui32
  vyre.barrier grid_sync
  vyre.store @a[%i] = %i : ui32
}
vyre.program @bigger workgroup_size [64, 1, 1] {
  vyre.buffer @b binding 0 write_only : ui32[256]
  %i = vyre.invocation_id x
  vyre.store @b[%i] = %i : ui32
}

// -----

// One buffer name, two element types: the diagnostic is on the second declaration.
vyre.program @ints workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 write_only : ui32[64]
  %i = vyre.invocation_id x
  vyre.store @x[%i] = %i : ui32
}
vyre.program @floats workgroup_size [64, 1, 1] {
// CHECK: vyre-fuse-invalid.mlir:[[# @LINE + 1]]:3: error: cannot fuse @ints and @floats: buffer @x holds f32 in @floats but ui32 in @ints; fix: rename the buffer in one of the programs
  vyre.buffer @x binding 0 read_only : f32[64]
  vyre.buffer @y binding 1 write_only : f32[64]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : f32
  vyre.store @y[%i] = %v : f32
}
