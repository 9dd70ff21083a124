// RUN: %python -m vyre_xdsl.testing.cli_batch \
// RUN:   --run "vyre-opt %s --split-input-file --verify-diagnostics --lower > %t.lowered.mlir" \
// RUN:   --run "vyre-opt %s --split-input-file --verify-diagnostics -p 'vyre-lower{subgroup-size=64}' > %t.sg64"
// RUN: filecheck %s < %t.lowered.mlir
// RUN: filecheck %s --check-prefix=SG64 < %t.sg64
// RUN: filecheck %s --check-prefix=ERR < %t.lowered.mlir

// axpy: bindings keep their slots; read_only -> constant, read_write -> global;
// the grid covers the written buffer (1024 / 64 = 16 workgroups).
vyre.program @axpy workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : f32[1024]
  vyre.buffer @y binding 1 read_write : f32[1024]
  %i = vyre.invocation_id x
  %a = vyre.const 2.0 : f32
  %xv = vyre.load @x[%i] : f32
  %yv = vyre.load @y[%i] : f32
  %p = vyre.mul %a, %xv : f32
  %s = vyre.add %p, %yv : f32
  vyre.store @y[%i] = %s : f32
}

// CHECK:      kernel.descriptor @axpy id "[[ID:[0-9a-f]{64}]]" entry "main" attributes {source = "axpy"} {
// CHECK-NEXT:   kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [16, 1, 1] count [@y]
// CHECK-NEXT:   kernel.binding @x slot 0 group 0 constant read_only : f32[1024]
// CHECK-NEXT:   kernel.binding @y slot 1 group 0 global read_write : f32[1024]
// CHECK-NEXT:   %i = kernel.invocation_id x
// CHECK-NEXT:   %a = vyre.const 2.0 : f32
// CHECK-NEXT:   %xv = kernel.load_constant slot 0 [%i] : f32
// CHECK-NEXT:   %yv = kernel.load_global slot 1 [%i] : f32
// CHECK-NEXT:   %p = vyre.mul %a, %xv : f32
// CHECK-NEXT:   %s = vyre.add %p, %yv : f32
// CHECK-NEXT:   kernel.store_global slot 1 [%i] = %s : f32
// CHECK-NEXT: }

// -----

// Slots: a taken binding moves to the lowest slot no buffer declares; uniform
// goes to bind group 1; workgroup memory from 2^24; the grid counts every
// buffer because of the workgroup memory (4096 / 64).
vyre.program @slots workgroup_size [64, 1, 1] {
  vyre.buffer @a binding 3 read_only : ui32[4096]
  vyre.buffer @b binding 3 write_only : ui32[64]
  vyre.buffer @c binding 0 read_write : ui32[16]
  vyre.buffer @tile workgroup : ui32[64]
  vyre.buffer @d binding 1 uniform : ui32[4]
  %l = vyre.local_id x
  %v = vyre.load @a[%l] : ui32
  vyre.store @tile[%l] = %v : ui32
  vyre.barrier
  %t = vyre.load @tile[%l] : ui32
  vyre.store @b[%l] = %t : ui32
}

// CHECK-LABEL: kernel.descriptor @slots
// CHECK-NEXT:   kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [64, 1, 1] count [@a, @b, @c, @d]
// CHECK-NEXT:   kernel.binding @a slot 3 group 0 constant read_only : ui32[4096]
// CHECK-NEXT:   kernel.binding @b slot 2 group 0 global write_only : ui32[64]
// CHECK-NEXT:   kernel.binding @c slot 0 group 0 global read_write : ui32[16]
// CHECK-NEXT:   kernel.binding @tile slot 16777216 shared read_write : ui32[64]
// CHECK-NEXT:   kernel.binding @d slot 1 group 1 uniform read_only : ui32[4]
// CHECK-NEXT:   %l = kernel.local_id x
// CHECK-NEXT:   %v = kernel.load_constant slot 3 [%l] : ui32
// CHECK-NEXT:   kernel.store_shared slot 16777216 [%l] = %v : ui32
// CHECK-NEXT:   kernel.barrier
// CHECK-NEXT:   %t = kernel.load_shared slot 16777216 [%l] : ui32
// CHECK-NEXT:   kernel.store_global slot 2 [%l] = %t : ui32
// CHECK-NEXT: }

// -----

// Workgroup memory that top-level stores write in full before the barrier after
// its first access needs no zeroing (`written_first`): @staged (two elements
// per invocation, the second at a swizzled slot) does not; @half (128 slots,
// stored only at local_id x, then read past them) does.
vyre.program @stored_in_full workgroup_size [64, 1, 1] {
  vyre.buffer @a binding 0 read_only : ui32[128]
  vyre.buffer @b binding 1 write_only : ui32[64]
  vyre.buffer @staged workgroup : ui32[128]
  vyre.buffer @half workgroup : ui32[128]
  %l = vyre.local_id x
  %c64 = vyre.const 64 : ui32
  %c5 = vyre.const 5 : ui32
  %c1 = vyre.const 1 : ui32
  %j = vyre.add %l, %c64 : ui32
  %run = vyre.shr %j, %c5 : ui32
  %flip = vyre.bit_and %run, %c1 : ui32
  %slot = vyre.bit_xor %j, %flip : ui32
  %v = vyre.load @a[%l] : ui32
  %w = vyre.load @a[%j] : ui32
  vyre.store @staged[%l] = %v : ui32
  vyre.store @staged[%slot] = %w : ui32
  vyre.store @half[%l] = %v : ui32
  vyre.barrier
  %t = vyre.load @staged[%j] : ui32
  %h = vyre.load @half[%j] : ui32
  %s = vyre.add %t, %h : ui32
  vyre.store @b[%l] = %s : ui32
}

// CHECK-LABEL: kernel.descriptor @stored_in_full
// CHECK:        kernel.binding @staged slot {{[0-9]+}} shared read_write : ui32[128] {written_first}
// CHECK-NEXT:   kernel.binding @half slot {{[0-9]+}} shared read_write : ui32[128]{{$}}

// -----

// The binding is optional: buffers without one take the lowest free slots in
// order of declaration, around the declared ones.
vyre.program @unbound workgroup_size [64, 1, 1] {
  vyre.buffer @x read_only : ui32[64]
  vyre.buffer @y binding 0 read_only : ui32[64]
  vyre.buffer @z write_only : ui32[64]
  %i = vyre.invocation_id x
  %a = vyre.load @x[%i] : ui32
  %b = vyre.load @y[%i] : ui32
  %s = vyre.add %a, %b : ui32
  vyre.store @z[%i] = %s : ui32
}

// CHECK-LABEL: kernel.descriptor @unbound
// CHECK:        kernel.binding @x slot 1 group 0 constant read_only : ui32[64]
// CHECK-NEXT:   kernel.binding @y slot 0 group 0 constant read_only : ui32[64]
// CHECK-NEXT:   kernel.binding @z slot 2 group 0 global write_only no_clear : ui32[64]

// -----

// Atomics keep their kind and memory ordering; fetch_nand gets the sidecar (its
// WGSL is a loop that a driver could leave early).
vyre.program @atomics workgroup_size [64, 1, 1] {
  vyre.buffer @c binding 0 read_write : ui32[64]
  %i = vyre.invocation_id x
  %n = vyre.atomic fetch_nand acq_rel @c[%i], %i : ui32
  %w = vyre.atomic compare_exchange_weak relaxed @c[%i], %i, %n : ui32
}

// CHECK-LABEL: kernel.descriptor @atomics
// CHECK:        kernel.binding @c slot 0 group 0 global read_write atomic : ui32[64]
// CHECK-NEXT:   kernel.binding @__vyre_descriptor_trap_sidecar slot 1 group 0 global read_write atomic trap_sidecar : ui32[8]
// CHECK:        %n = kernel.atomic fetch_nand acq_rel slot 0 [%i], %i : ui32
// CHECK-NEXT:   %w = kernel.atomic compare_exchange_weak relaxed slot 0 [%i], %i, %n : ui32

// -----

// A [1, 1, 1] program is widened to 4 x subgroup size (32 when unknown: 128;
// 64 -> 256); the grid still launches the program's 1000 invocations.
vyre.program @scalar workgroup_size [1, 1, 1] {
  vyre.buffer @out binding 0 write_only : ui32[1000]
  %i = vyre.invocation_id x
  vyre.store @out[%i] = %i : ui32
}

// CHECK-LABEL: kernel.descriptor @scalar
// CHECK-NEXT:   kernel.dispatch workgroup_size [128, 1, 1] program_workgroup_size [1, 1, 1] grid [8, 1, 1] count [@out]
// SG64-LABEL:  kernel.descriptor @scalar
// SG64-NEXT:    kernel.dispatch workgroup_size [256, 1, 1] program_workgroup_size [1, 1, 1] grid [4, 1, 1] count [@out]

// -----

// [1, 1, 1] with a barrier keeps its geometry (its ids mean workgroups); it
// writes nothing, so every buffer counts (10 workgroups of 1). An explicit
// no-op program keeps 1.
vyre.program @pinned workgroup_size [1, 1, 1] {
  vyre.buffer @out binding 0 write_only : ui32[10]
  vyre.barrier
}
vyre.program @noop workgroup_size [1, 1, 1] {
}

// CHECK-LABEL: kernel.descriptor @pinned
// CHECK-NEXT:   kernel.dispatch workgroup_size [1, 1, 1] program_workgroup_size [1, 1, 1] grid [10, 1, 1] count [@out]
// CHECK-LABEL: kernel.descriptor @noop
// CHECK-NEXT:   kernel.dispatch workgroup_size [1, 1, 1] program_workgroup_size [1, 1, 1] grid [1, 1, 1] count []
// CHECK-NEXT: }

// -----

// 2^23 elements at 64 per workgroup = 131072 workgroups: folded into y
// (3 rows of 43691).
vyre.program @big workgroup_size [64, 1, 1] {
  vyre.buffer @out binding 0 write_only : f32[8388608]
  %i = vyre.invocation_id x
  %z = vyre.const 0.0 : f32
  vyre.store @out[%i] = %z : f32
}

// CHECK-LABEL: kernel.descriptor @big
// CHECK-NEXT:   kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [43691, 3, 1] count [@out]

// -----

// Runtime-sized: no static grid; atomics make every buffer count; si32 division
// may trap, so the sidecar comes at the highest host slot + 1. The atomic
// counter is privatized: a workgroup copy in the shared slots, flushed at the end.
vyre.program @dynamic workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 4 read_only : si32[?]
  vyre.buffer @hits binding 2 read_write : ui32[1]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : si32
  %q = vyre.div %v, %v : si32
  %zero = vyre.const 0 : ui32
  %one = vyre.const 1 : ui32
  %old = vyre.atomic add @hits[%zero], %one : ui32
}

// CHECK-LABEL: kernel.descriptor @dynamic
// CHECK-NEXT:   kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid ? count [@x, @hits]
// CHECK-NEXT:   kernel.binding @x slot 4 group 0 constant read_only : si32[?]
// CHECK-NEXT:   kernel.binding @hits slot 2 group 0 global read_write atomic : ui32[1]
// CHECK-NEXT:   kernel.binding @__vyre_private_hits slot 16777216 shared read_write atomic : ui32[1]
// CHECK-NEXT:   kernel.binding @__vyre_descriptor_trap_sidecar slot 5 group 0 global read_write atomic trap_sidecar : ui32[8]
// CHECK:        %q = vyre.div %v, %v : si32
// CHECK:        %old = kernel.atomic add slot 16777216 [%zero], %one : ui32
// CHECK-NEXT:   }
// CHECK-NEXT:   kernel.barrier
// CHECK:        kernel.atomic add slot 2

// -----

// Named locals become function-local variables; the loop variable becomes the
// loop's induction value.
vyre.program @locals workgroup_size [32, 1, 1] {
  vyre.buffer @out binding 0 write_only : ui32[32]
  %i = vyre.invocation_id x
  %zero = vyre.const 0 : ui32
  %four = vyre.const 4 : ui32
  vyre.let @acc = %zero : ui32
  vyre.loop @k = %zero to %four {
    %k = vyre.var @k : ui32
    %a = vyre.var @acc : ui32
    %s = vyre.add %a, %k : ui32
    vyre.assign @acc = %s : ui32
  }
  %total = vyre.var @acc : ui32
  vyre.store @out[%i] = %total : ui32
}

// CHECK-LABEL: kernel.descriptor @locals
// CHECK:        kernel.local @acc = %zero : ui32
// CHECK-NEXT:   kernel.for %k = %zero to %four {
// CHECK-NEXT:     %a = kernel.local_load @acc : ui32
// CHECK-NEXT:     %s = vyre.add %a, %k : ui32
// CHECK-NEXT:     kernel.local_store @acc = %s : ui32
// CHECK-NEXT:   }
// CHECK-NEXT:   %total = kernel.local_load @acc : ui32
// CHECK-NEXT:   kernel.store_global slot 0 [%i] = %total : ui32

// -----

// grid_sync: two descriptors in order, each launching the whole program; the
// second recomputes the invocation id it uses.
vyre.program @split workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[256]
  vyre.buffer @tmp binding 1 read_write : ui32[256]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  vyre.store @tmp[%i] = %v : ui32
  vyre.barrier grid_sync
  %last = vyre.const 255 : ui32
  %j = vyre.sub %last, %i : ui32
  %r = vyre.load @tmp[%j] : ui32
  %w = vyre.load @x[%i] : ui32
  %s = vyre.add %r, %v : ui32
  vyre.store @tmp[%i] = %s : ui32
}

// CHECK:        kernel.descriptor @split_part0 id "[[P0:[0-9a-f]{64}]]" entry "main" attributes {source = "split", part = 0 : i64} {
// CHECK-NEXT:   kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [4, 1, 1] count [@tmp]
// CHECK:        kernel.store_global slot 1 [%i] = %v : ui32
// CHECK-NEXT: }
// CHECK-NEXT: kernel.descriptor @split_part1 id "[[P1:[0-9a-f]{64}]]" entry "main" attributes {source = "split", part = 1 : i64} {
// CHECK-NEXT:   kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [4, 1, 1] count [@tmp]
// CHECK-NEXT:   kernel.binding @x slot 0 group 0 constant read_only : ui32[256]
// CHECK-NEXT:   kernel.binding @tmp slot 1 group 0 global read_write : ui32[256]
// CHECK-NEXT:   %i = kernel.invocation_id x
// CHECK-NEXT:   %v = kernel.load_constant slot 0 [%i] : ui32
// CHECK-NEXT:   %last = vyre.const 255 : ui32
// CHECK-NEXT:   %j = vyre.sub %last, %i : ui32
// CHECK-NEXT:   %r = kernel.load_global slot 1 [%j] : ui32

// -----

// Errors (ERR; located, all at once, printed before the modules): a return before a grid_sync,
// and kernel-verify's reserved sidecar name.
vyre.program @bad_split workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_write : ui32[64]
  %i = vyre.invocation_id x
  %n = vyre.buf_len @x
  %zero = vyre.const 0 : ui32
  %empty = vyre.eq %n, %zero : ui32
  vyre.if %empty {
    vyre.return
  }
  vyre.store @x[%i] = %i : ui32
  vyre.barrier grid_sync
  vyre.store @x[%i] = %n : ui32
}
// ERR: vyre-lower.mlir:[[# @LINE - 6]]:5: error: 'vyre.return' before a grid_sync: the split dispatch would run the rest of the program for invocations that returned. Fix: guard the later statements with a condition instead

// -----

vyre.program @reserved workgroup_size [64, 1, 1] {
// ERR: vyre-lower.mlir:[[# @LINE + 1]]:3: error: buffer name @__vyre_descriptor_trap_sidecar is reserved for the trap sidecar. Fix: rename the buffer
  vyre.buffer @__vyre_descriptor_trap_sidecar binding 0 read_only : ui32[4]
}

// -----

// Values live across a grid_sync are spilled to per-invocation scratch: a value that cannot be recomputed (a
// load of a written buffer) is stored right after its definition, a named local after its declaration; the
// later part reloads both from element p * 2 + slot of the scratch binding (p: the linear invocation index).
vyre.program @spill workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_write : ui32[128]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  vyre.let @keep = %i : ui32
  vyre.store @x[%i] = %i : ui32
  vyre.barrier grid_sync
  %k = vyre.var @keep : ui32
  %w = vyre.add %v, %k : ui32
  vyre.store @x[%i] = %w : ui32
}
// CHECK-LABEL: kernel.descriptor @spill_part0
// CHECK:        kernel.binding @x slot 0 group 0 global read_write : ui32[128]
// CHECK-NEXT:   kernel.binding @__vyre_spill_ui32 slot 1 group 0 scratch read_write : ui32[2]
// CHECK-NEXT:   %[[SIZE:.*]] = vyre.const 64 : ui32
// CHECK-NEXT:   %[[WID:.*]] = kernel.workgroup_id x
// CHECK-NEXT:   %[[BASE:.*]] = vyre.mul %[[WID]], %[[SIZE]] : ui32
// CHECK-NEXT:   %[[LID:.*]] = kernel.local_id x
// CHECK-NEXT:   %[[P:.*]] = vyre.add %[[BASE]], %[[LID]] : ui32
// CHECK-NEXT:   %i = kernel.invocation_id x
// CHECK-NEXT:   %v = kernel.load_global slot 0 [%i] : ui32
// CHECK-NEXT:   %[[K1:.*]] = vyre.const 2 : ui32
// CHECK-NEXT:   %[[S1:.*]] = vyre.const 1 : ui32
// CHECK-NEXT:   %[[M1:.*]] = vyre.mul %[[P]], %[[K1]] : ui32
// CHECK-NEXT:   %[[A1:.*]] = vyre.add %[[M1]], %[[S1]] : ui32
// CHECK-NEXT:   kernel.store_global slot 1 [%[[A1]]] = %v : ui32
// CHECK-NEXT:   kernel.local @keep = %i : ui32
// CHECK:        %[[A0:.*]] = vyre.add %{{.*}}, %{{.*}} : ui32
// CHECK-NEXT:   kernel.store_global slot 1 [%[[A0]]] = %i : ui32
// CHECK-NEXT:   kernel.store_global slot 0 [%i] = %i : ui32
// CHECK-NEXT: }
// CHECK-LABEL: kernel.descriptor @spill_part1
// CHECK:        kernel.binding @__vyre_spill_ui32 slot 1 group 0 scratch read_write : ui32[2]
// CHECK:        %[[V:.*]] = kernel.load_global slot 1 [%{{.*}}] : ui32
// CHECK-NEXT:   %i = kernel.invocation_id x
// CHECK:        %[[KEEP:.*]] = kernel.load_global slot 1 [%{{.*}}] : ui32
// CHECK-NEXT:   kernel.local @keep = %[[KEEP]] : ui32
// CHECK-NEXT:   %k = kernel.local_load @keep : ui32
// CHECK-NEXT:   %w = vyre.add %[[V]], %k : ui32
// CHECK-NEXT:   kernel.store_global slot 0 [%i] = %w : ui32

// -----

// An indirect grid: no static grid, the dispatch names the grid buffer; the workgroup is never widened.
vyre.program @consume {indirect = @grid} workgroup_size [1, 1, 1] {
  vyre.buffer @grid binding 3 read_only : ui32[3]
  vyre.buffer @out binding 1 write_only : ui32[64]
  %i = vyre.invocation_id x
  vyre.store @out[%i] = %i : ui32
}
// CHECK-LABEL: kernel.descriptor @consume
// CHECK-NEXT:   kernel.dispatch workgroup_size [1, 1, 1] program_workgroup_size [1, 1, 1] grid indirect @grid count [@out]
// CHECK-NEXT:   kernel.binding @grid slot 3 group 0 constant read_only : ui32[3]

// -----

// An indirect grid at a byte offset (upstream's count_offset): the dispatch keeps it.
vyre.program @at_offset {indirect = @grid, indirect_offset = 12} workgroup_size [8, 1, 1] {
  vyre.buffer @grid binding 3 read_only : ui32[6]
  vyre.buffer @out binding 1 write_only : ui32[64]
  %i = vyre.invocation_id x
  vyre.store @out[%i] = %i : ui32
}
// CHECK-LABEL: kernel.descriptor @at_offset
// CHECK-NEXT:   kernel.dispatch workgroup_size [8, 1, 1] program_workgroup_size [8, 1, 1] grid indirect @grid offset 12 count [@out]

// -----

// A part whose only effect is under `workgroup_id x < 3` launches 3 workgroups,
// not the program's 16 (the part after the grid_sync of a fused 3-workgroup arm).
vyre.program @parts workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_write : ui32[1024]
  vyre.buffer @out binding 1 write_only : ui32[1024]
  %i = vyre.invocation_id x
  vyre.store @x[%i] = %i : ui32
  vyre.barrier grid_sync
  %g = vyre.workgroup_id x
  %three = vyre.const 3 : ui32
  %inside = vyre.lt %g, %three : ui32
  vyre.if %inside {
    %j = vyre.invocation_id x
    %v = vyre.load @x[%j] : ui32
    vyre.store @out[%j] = %v : ui32
  }
}

// CHECK-LABEL: kernel.descriptor @parts_part0
// CHECK-NEXT:    kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [16, 1, 1] count [@out, @x]
// CHECK-LABEL: kernel.descriptor @parts_part1
// CHECK-NEXT:    kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [3, 1, 1] count [@out, @x]
