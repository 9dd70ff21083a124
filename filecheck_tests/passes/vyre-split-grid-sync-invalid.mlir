// RUN: vyre-opt %s --split-input-file --verify-diagnostics -p vyre-split-grid-sync | filecheck %s
// RUN: vyre-opt %s --split-input-file --verify-diagnostics --lower | filecheck %s

// What vyre-split-grid-sync refuses, located (vyre-lower, which splits a
// program that still has grid_sync barriers, refuses the same): a return
// before a grid_sync...
vyre.program @early workgroup_size [64, 1, 1] {
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
// CHECK: vyre-split-grid-sync-invalid.mlir:[[# @LINE - 6]]:5: error: 'vyre.return' before a grid_sync: the split dispatch would run the rest of the program for invocations that returned. Fix: guard the later statements with a condition instead

// -----

// ... an indirect grid with a value live across the barrier ...
vyre.program @indirect {indirect = @grid} workgroup_size [64, 1, 1] {
  vyre.buffer @grid binding 2 read_only : ui32[3]
  vyre.buffer @x binding 0 read_write : ui32[?]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  vyre.store @x[%i] = %i : ui32
  vyre.barrier grid_sync
  vyre.store @x[%i] = %v : ui32
}
// CHECK: vyre-split-grid-sync-invalid.mlir:[[# @LINE - 9]]:1: error: @indirect has an indirect grid and values live across a grid_sync; their scratch is sized by a grid known only on the GPU. Fix: pass the values through a buffer, or split the program in two

// -----

// ... a buffer named like a spill ...
vyre.program @reserved workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_write : ui32[64]
  vyre.buffer @__vyre_spill_f32 binding 1 read_write : f32[64]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  vyre.store @x[%i] = %i : ui32
  vyre.barrier grid_sync
  vyre.store @x[%i] = %v : ui32
}
// CHECK: vyre-split-grid-sync-invalid.mlir:[[# @LINE - 7]]:3: error: buffer name @__vyre_spill_f32 is reserved for grid_sync spills (prefix __vyre_spill_). Fix: rename the buffer

// -----

// ... and a derived grid that cannot cover the whole program's elements
// (checked on the whole program: its second part no longer reads invocation_id).
vyre.program @tall workgroup_size [8, 8, 1] {
  vyre.buffer @x binding 0 read_write : ui32[256]
  %i = vyre.invocation_id x
  vyre.store @x[%i] = %i : ui32
  vyre.barrier grid_sync
  %one = vyre.const 1 : ui32
  %w = vyre.workgroup_id x
  vyre.store @x[%w] = %one : ui32
}
// CHECK: vyre-split-grid-sync-invalid.mlir:[[# @LINE - 9]]:1: error: @tall: workgroup_size [8, 8, 1] has y or z above 1
