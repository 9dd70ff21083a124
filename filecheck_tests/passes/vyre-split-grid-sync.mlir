// RUN: %python -m vyre_xdsl.testing.cli_batch \
// RUN:   --run "xdsl-opt %s --split-input-file -p vyre-split-grid-sync > %t.xdsl.mlir" \
// RUN:   --run "vyre-opt %s --split-input-file -p vyre-split-grid-sync > %t.once.mlir" \
// RUN:   --run "vyre-opt %s --split-input-file -p vyre-split-grid-sync,vyre-split-grid-sync > %t.twice.mlir" \
// RUN:   --run "vyre-opt %t.once.mlir --split-input-file > %t.reparsed.mlir" \
// RUN:   --run "vyre-opt %t.once.mlir --split-input-file --lower > %t.split.mlir" \
// RUN:   --run "vyre-opt %s --split-input-file --lower > %t.whole.mlir" \
// RUN:   --run "vyre-opt %s --split-input-file -p vyre-split-grid-sync --lower > %t.lower.mlir"
// RUN: filecheck %s < %t.once.mlir
// RUN: diff %t.once.mlir %t.xdsl.mlir
// RUN: filecheck %s < %t.twice.mlir
// RUN: filecheck %s < %t.reparsed.mlir
// RUN: diff %t.split.mlir %t.whole.mlir
// RUN: filecheck %s --check-prefix=LOWER < %t.lower.mlir

// The parts print and parse back, and lowering them gives exactly the
// descriptors that vyre-lower gives for the whole program (the diff above).

// Values live across a grid_sync: %v (a load of a buffer the program writes)
// and the named local @a (assigned under an if) are stored to per-invocation
// scratch right after they are set, and reloaded at the start of the next
// part; %seven and %big are recomputed there (pure), from the reloaded %v.
// Parts keep the buffers, the workgroup size and the buffers that size the
// whole program's dispatch (count_buffers).
vyre.program @spill workgroup_size [4, 1, 1] {
  vyre.buffer @x binding 0 read_write : ui32[16]
  vyre.buffer @out binding 1 write_only : ui32[16]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  %seven = vyre.const 7 : ui32
  %big = vyre.gt %v, %seven : ui32
  vyre.let @a = %v : ui32
  vyre.if %big {
    %t = vyre.add %v, %v : ui32
    vyre.assign @a = %t : ui32
  }
  vyre.store @x[%i] = %seven : ui32
  vyre.barrier grid_sync
  %w = vyre.var @a : ui32
  %s = vyre.select %big, %w, %v : ui32
  vyre.store @out[%i] = %s : ui32
}

// CHECK-LABEL: vyre.program @spill_part0 {source = "spill", part = 0 : i64, count_buffers = [@out, @x]} workgroup_size [4, 1, 1] {
// CHECK-NEXT:    vyre.buffer @x binding 0 read_write : ui32[16]
// CHECK-NEXT:    vyre.buffer @out binding 1 write_only : ui32[16]
// CHECK-NEXT:    vyre.buffer @__vyre_spill_ui32 read_write : ui32[2] {vyre.scratch}
// the invocation's linear index p = workgroup_id x * 4 + local_id x
// CHECK-NEXT:    %[[SIZE:.*]] = vyre.const 4 : ui32
// CHECK-NEXT:    %[[WID:.*]] = vyre.workgroup_id x
// CHECK-NEXT:    %[[BASE:.*]] = vyre.mul %[[WID]], %[[SIZE]] : ui32
// CHECK-NEXT:    %[[LID:.*]] = vyre.local_id x
// CHECK-NEXT:    %[[P:.*]] = vyre.add %[[BASE]], %[[LID]] : ui32
// CHECK-NEXT:    %i = vyre.invocation_id x
// CHECK-NEXT:    %v = vyre.load @x[%i] : ui32
// %v goes to slot 1: element p * 2 + 1
// CHECK-NEXT:    %[[K:.*]] = vyre.const 2 : ui32
// CHECK-NEXT:    %[[ONE:.*]] = vyre.const 1 : ui32
// CHECK-NEXT:    %[[SCALED:.*]] = vyre.mul %[[P]], %[[K]] : ui32
// CHECK-NEXT:    %[[AT:.*]] = vyre.add %[[SCALED]], %[[ONE]] : ui32
// CHECK-NEXT:    vyre.store @__vyre_spill_ui32[%[[AT]]] = %v : ui32
// CHECK-NEXT:    %seven = vyre.const 7 : ui32
// CHECK-NEXT:    %big = vyre.gt %v, %seven : ui32
// @a goes to slot 0, after its declaration and after every assignment
// CHECK-NEXT:    vyre.let @a = %v : ui32
// CHECK-NEXT:    %{{.*}} = vyre.const 2 : ui32
// CHECK-NEXT:    %{{.*}} = vyre.const 0 : ui32
// CHECK-NEXT:    %{{.*}} = vyre.mul %[[P]], %{{.*}} : ui32
// CHECK-NEXT:    %[[AT0:.*]] = vyre.add %{{.*}}, %{{.*}} : ui32
// CHECK-NEXT:    vyre.store @__vyre_spill_ui32[%[[AT0]]] = %v : ui32
// CHECK-NEXT:    vyre.if %big {
// CHECK-NEXT:      %t = vyre.add %v, %v : ui32
// CHECK-NEXT:      vyre.assign @a = %t : ui32
// CHECK:           vyre.store @__vyre_spill_ui32[%{{.*}}] = %t : ui32
// CHECK-NEXT:    }
// CHECK-NEXT:    vyre.store @x[%i] = %seven : ui32
// CHECK-NEXT:  }
// CHECK-NOT:   grid_sync
// CHECK-NEXT:  vyre.program @spill_part1 {source = "spill", part = 1 : i64, count_buffers = [@out, @x]} workgroup_size [4, 1, 1] {
// CHECK:         vyre.buffer @__vyre_spill_ui32 read_write : ui32[2] {vyre.scratch}
// CHECK:         %[[P1:.*]] = vyre.add %{{.*}}, %{{.*}} : ui32
// CHECK:         %[[AT1:.*]] = vyre.add %{{.*}}, %{{.*}} : ui32
// CHECK-NEXT:    %[[V:.*]] = vyre.load @__vyre_spill_ui32[%[[AT1]]] : ui32
// CHECK-NEXT:    %i = vyre.invocation_id x
// CHECK-NEXT:    %seven = vyre.const 7 : ui32
// CHECK-NEXT:    %big = vyre.gt %[[V]], %seven : ui32
// CHECK:         %[[A:.*]] = vyre.load @__vyre_spill_ui32[%{{.*}}] : ui32
// CHECK-NEXT:    vyre.let @a = %[[A]] : ui32
// CHECK-NEXT:    %w = vyre.var @a : ui32
// CHECK-NEXT:    %s = vyre.select %big, %w, %[[V]] : ui32
// CHECK-NEXT:    vyre.store @out[%i] = %s : ui32
// CHECK-NEXT:  }

// Every part is launched on the whole program's grid, sized by its count buffers.
// LOWER:      kernel.descriptor @spill_part0 id "{{.*}}" entry "main" attributes {source = "spill", part = 0 : i64} {
// LOWER-NEXT:   kernel.dispatch workgroup_size [4, 1, 1] program_workgroup_size [4, 1, 1] grid [4, 1, 1] count [@out, @x]
// LOWER:        kernel.binding @__vyre_spill_ui32 slot 2 group 0 scratch read_write : ui32[2]
// LOWER:      kernel.descriptor @spill_part1 id "{{.*}}" entry "main" attributes {source = "spill", part = 1 : i64} {
// LOWER-NEXT:   kernel.dispatch workgroup_size [4, 1, 1] program_workgroup_size [4, 1, 1] grid [4, 1, 1] count [@out, @x]
// LOWER:        kernel.binding @__vyre_spill_ui32 slot 2 group 0 scratch read_write : ui32[2]

// -----

// A load of a buffer the program never writes and pure arithmetic are
// recomputed in the part that uses them: nothing is spilled.
vyre.program @recompute workgroup_size [64, 1, 1] {
  vyre.buffer @table binding 0 read_only : ui32[256]
  vyre.buffer @out binding 1 read_write : ui32[256]
  %i = vyre.invocation_id x
  %t = vyre.load @table[%i] : ui32
  %three = vyre.const 3 : ui32
  %m = vyre.mul %t, %three : ui32
  vyre.store @out[%i] = %m : ui32
  vyre.barrier grid_sync
  %o = vyre.load @out[%i] : ui32
  %s = vyre.add %o, %m : ui32
  vyre.store @out[%i] = %s : ui32
}

// CHECK-LABEL: vyre.program @recompute_part0 {source = "recompute", part = 0 : i64, count_buffers = [@out]} workgroup_size [64, 1, 1] {
// CHECK-NOT:     __vyre_spill
// CHECK:         vyre.store @out[%i] = %m : ui32
// CHECK-NEXT:  }
// CHECK-NEXT:  vyre.program @recompute_part1 {source = "recompute", part = 1 : i64, count_buffers = [@out]} workgroup_size [64, 1, 1] {
// CHECK-NEXT:    vyre.buffer @table binding 0 read_only : ui32[256]
// CHECK-NEXT:    vyre.buffer @out binding 1 read_write : ui32[256]
// CHECK-NEXT:    %i = vyre.invocation_id x
// CHECK-NEXT:    %t = vyre.load @table[%i] : ui32
// CHECK-NEXT:    %three = vyre.const 3 : ui32
// CHECK-NEXT:    %m = vyre.mul %t, %three : ui32
// CHECK-NEXT:    %o = vyre.load @out[%i] : ui32
// CHECK-NEXT:    %s = vyre.add %o, %m : ui32
// CHECK-NEXT:    vyre.store @out[%i] = %s : ui32
// CHECK-NEXT:  }

// -----

// A grid_sync inside a vyre.block: the block is cut in one block per side of
// the barrier (hoisted to the top level); the explicit grid stays on every part.
vyre.program @nested workgroup_size [64, 1, 1] grid [4, 1, 1] {
  vyre.buffer @state binding 0 read_write : ui32[256]
  vyre.block {
    %g = vyre.invocation_id x
    %one = vyre.const 1 : ui32
    vyre.store @state[%g] = %one : ui32
    vyre.barrier grid_sync
    %two = vyre.const 2 : ui32
    vyre.store @state[%g] = %two : ui32
  }
}

// CHECK-LABEL: vyre.program @nested_part0 {source = "nested", part = 0 : i64, count_buffers = [@state]} workgroup_size [64, 1, 1] grid [4, 1, 1] {
// CHECK-NEXT:    vyre.buffer @state binding 0 read_write : ui32[256]
// CHECK-NEXT:    vyre.block {
// CHECK-NEXT:      %g = vyre.invocation_id x
// CHECK-NEXT:      %one = vyre.const 1 : ui32
// CHECK-NEXT:      vyre.store @state[%g] = %one : ui32
// CHECK-NEXT:    }
// CHECK-NEXT:  }
// CHECK-NEXT:  vyre.program @nested_part1 {source = "nested", part = 1 : i64, count_buffers = [@state]} workgroup_size [64, 1, 1] grid [4, 1, 1] {
// CHECK-NEXT:    vyre.buffer @state binding 0 read_write : ui32[256]
// CHECK-NEXT:    %g = vyre.invocation_id x
// CHECK-NEXT:    vyre.block {
// CHECK-NEXT:      %two = vyre.const 2 : ui32
// CHECK-NEXT:      vyre.store @state[%g] = %two : ui32
// CHECK-NEXT:    }
// CHECK-NEXT:  }

// LOWER:      kernel.descriptor @nested_part0 id "{{.*}}" entry "main" attributes {source = "nested", part = 0 : i64} {
// LOWER-NEXT:   kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid explicit [4, 1, 1] count [@state]
// LOWER:      kernel.descriptor @nested_part1 id "{{.*}}" entry "main" attributes {source = "nested", part = 1 : i64} {
// LOWER-NEXT:   kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid explicit [4, 1, 1] count [@state]

// -----

// A program without grid_sync is left as it is, and the module keeps its
// order (the dispatch order).
vyre.program @first workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_write : ui32[64]
  %i = vyre.invocation_id x
  vyre.store @x[%i] = %i : ui32
}
vyre.program @second workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_write : ui32[64]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  vyre.store @x[%i] = %i : ui32
  vyre.barrier grid_sync
  vyre.store @x[%i] = %v : ui32
}
vyre.program @third workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_write : ui32[64]
  %i = vyre.invocation_id x
  vyre.store @x[%i] = %i : ui32
}

// CHECK-LABEL: vyre.program @first workgroup_size [64, 1, 1] {
// CHECK:       vyre.program @second_part0 {source = "second", part = 0 : i64, count_buffers = [@x]}
// CHECK:       vyre.program @second_part1 {source = "second", part = 1 : i64, count_buffers = [@x]}
// CHECK:       vyre.program @third workgroup_size [64, 1, 1] {
