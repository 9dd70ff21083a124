// RUN: vyre-opt %s -t wgsl | filecheck %s
// Barriers and workgroup memory: a barrier orders storage memory
// (`storageBarrier()`) only when invocations can meet in a storage buffer
// (one written by one op and accessed by another, or written in a loop);
// workgroup memory is zeroed in the prologue unless each invocation stores
// its own element first.

// The textbook tree: the input is only read, the output written once, the
// tile stored at local_id before anything reads it.
vyre.program @tree workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : f32[4096]
  vyre.buffer @partial binding 1 write_only : f32[64]
  vyre.buffer @tile workgroup : f32[64]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %w = vyre.workgroup_id x
  %v = vyre.load @x[%i] : f32
  vyre.store @tile[%l] = %v : f32
  vyre.barrier
  %zero = vyre.const 0 : ui32
  %levels = vyre.const 6 : ui32
  %half = vyre.const 32 : ui32
  vyre.loop @level = %zero to %levels {
    %k = vyre.var @level : ui32
    %stride = vyre.shr %half, %k : ui32
    %active = vyre.lt %l, %stride : ui32
    vyre.if %active {
      %j = vyre.add %l, %stride : ui32
      %a = vyre.load @tile[%l] : f32
      %b = vyre.load @tile[%j] : f32
      %s = vyre.add %a, %b : f32
      vyre.store @tile[%l] = %s : f32
    }
    vyre.barrier
  }
  %first = vyre.eq %l, %zero : ui32
  vyre.if %first {
    %total = vyre.load @tile[%zero] : f32
    vyre.store @partial[%w] = %total : f32
  }
}

// CHECK:      // vyre kernel @tree id
// CHECK-NOT:  vyre_z
// CHECK-NOT:  storageBarrier
// CHECK:        w_tile[v_l] = v_v;
// CHECK-NEXT:   workgroupBarrier();
// CHECK:          workgroupBarrier();
// CHECK-NEXT:   }
// CHECK-NOT:  storageBarrier
// CHECK:      // -----

// A storage buffer written by one invocation and read by another after the
// barrier: the barrier orders storage memory too.
vyre.program @exchange workgroup_size [64, 1, 1] {
  vyre.buffer @buf binding 0 read_write : ui32[64]
  vyre.buffer @out binding 1 write_only : ui32[64]
  %l = vyre.local_id x
  vyre.store @buf[%l] = %l : ui32
  vyre.barrier
  %one = vyre.const 1 : ui32
  %n = vyre.add %l, %one : ui32
  %r = vyre.load @buf[%n] : ui32
  vyre.store @out[%l] = %r : ui32
}

// CHECK:      // vyre kernel @exchange id
// CHECK:        storageBarrier();
// CHECK-NEXT:   workgroupBarrier();
// CHECK:      // -----

// Rows of 6 outputs over 8 columns of invocations (two workgroups of 4 x 4):
// each invocation reads its output before the barrier and writes it after,
// both under `col < 6`. Past the edge, row * 6 + col is the next row's
// element, but the guard keeps those invocations away from it: no two
// invocations meet in @c, and the barrier orders workgroup memory only.
vyre.program @overhang workgroup_size [4, 4, 1] grid [2, 1, 1] {
  vyre.buffer @c binding 0 read_write : f32[24]
  %col = vyre.invocation_id x
  %row = vyre.invocation_id y
  %six = vyre.const 6 : ui32
  %rc = vyre.mul %row, %six : ui32
  %i = vyre.add %rc, %col : ui32
  %inside = vyre.lt %col, %six : ui32
  %zero = vyre.const 0.0 : f32
  vyre.let @v = %zero : f32
  vyre.if %inside {
    %old = vyre.load @c[%i] : f32
    vyre.assign @v = %old : f32
  }
  vyre.barrier
  vyre.if %inside {
    %v = vyre.var @v : f32
    %twice = vyre.add %v, %v : f32
    vyre.store @c[%i] = %twice : f32
  }
}

// CHECK:      // vyre kernel @overhang id
// CHECK-NOT:  storageBarrier
// CHECK:        workgroupBarrier();
// CHECK-NOT:  storageBarrier
// CHECK:      // -----

// The same with the read outside the guard: invocation (row, 6) reads the
// element that invocation (row + 1, 0) writes, and the barrier orders storage.
vyre.program @overhang_read workgroup_size [4, 4, 1] grid [2, 1, 1] {
  vyre.buffer @c binding 0 read_write : f32[24]
  %col = vyre.invocation_id x
  %row = vyre.invocation_id y
  %six = vyre.const 6 : ui32
  %rc = vyre.mul %row, %six : ui32
  %i = vyre.add %rc, %col : ui32
  %inside = vyre.lt %col, %six : ui32
  %old = vyre.load @c[%i] : f32
  vyre.barrier
  vyre.if %inside {
    %twice = vyre.add %old, %old : f32
    vyre.store @c[%i] = %twice : f32
  }
}

// CHECK:      // vyre kernel @overhang_read id
// CHECK:        storageBarrier();
// CHECK-NEXT:   workgroupBarrier();
// CHECK:      // -----

// One store site, but inside a loop with a barrier: a later iteration of
// another invocation overwrites after the barrier, so it is ordered too.
// The tile is read before it is written: the prologue zeroes it.
vyre.program @looped workgroup_size [64, 1, 1] {
  vyre.buffer @last binding 0 write_only : ui32[1]
  vyre.buffer @tile workgroup : ui32[64]
  %l = vyre.local_id x
  %zero = vyre.const 0 : ui32
  %four = vyre.const 4 : ui32
  %t = vyre.load @tile[%l] : ui32
  vyre.loop @k = %zero to %four {
    %k = vyre.var @k : ui32
    %mine = vyre.eq %l, %k : ui32
    vyre.if %mine {
      vyre.store @last[%zero] = %t : ui32
    }
    vyre.barrier
  }
}

// CHECK:      // vyre kernel @looped id
// CHECK:        for (var vyre_z: u32 = vyre_local; vyre_z < 64u; vyre_z = vyre_z + 64u) {
// CHECK-NEXT:     w_tile[vyre_z] = 0u;
// CHECK-NEXT:   }
// CHECK-NEXT:   workgroupBarrier();
// CHECK:          storageBarrier();
// CHECK-NEXT:     workgroupBarrier();
// CHECK:      // -----

// The tile is wider than the workgroup: a store at local_id leaves elements
// unwritten, so the prologue still zeroes it.
vyre.program @wide_tile workgroup_size [64, 1, 1] {
  vyre.buffer @out binding 0 write_only : ui32[64]
  vyre.buffer @tile workgroup : ui32[128]
  %l = vyre.local_id x
  vyre.store @tile[%l] = %l : ui32
  vyre.barrier
  %sixty4 = vyre.const 64 : ui32
  %j = vyre.add %l, %sixty4 : ui32
  %r = vyre.load @tile[%j] : ui32
  vyre.store @out[%l] = %r : ui32
}

// CHECK:      // vyre kernel @wide_tile id
// CHECK:        for (var vyre_z: u32 = vyre_local; vyre_z < 128u; vyre_z = vyre_z + 64u) {
// CHECK:        workgroupBarrier();
// CHECK-NOT:  storageBarrier
// CHECK:      // -----

// A storage buffer that each invocation writes and reads back only at its own
// `invocation_id x` (what fusing a producer with a consumer at the same index
// leaves) is private to the invocation: the barriers need not order it.
vyre.program @own workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : f32[256]
  vyre.buffer @p binding 1 read_write : f32[256]
  vyre.buffer @out binding 2 write_only : f32[4]
  vyre.buffer @tile workgroup : f32[64]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %w = vyre.workgroup_id x
  %v = vyre.load @x[%i] : f32
  vyre.store @p[%i] = %v : f32
  %back = vyre.load @p[%i] : f32
  vyre.store @tile[%l] = %back : f32
  vyre.barrier
  %zero = vyre.const 0 : ui32
  %first = vyre.eq %l, %zero : ui32
  vyre.if %first {
    %t = vyre.load @tile[%zero] : f32
    vyre.store @out[%w] = %t : f32
  }
}

// CHECK:      // vyre kernel @own id
// CHECK-NOT:  storageBarrier
// CHECK:      // -----

// The same in a two-dimensional workgroup (on an explicit grid that covers the
// 256 elements along x): `invocation_id x` is shared by the
// invocations of a column, so the buffer is not private and the barrier fences.
vyre.program @own2d workgroup_size [32, 2, 1] grid [8, 1, 1] {
  vyre.buffer @x binding 0 read_only : f32[256]
  vyre.buffer @p binding 1 read_write : f32[256]
  vyre.buffer @out binding 2 write_only : f32[4]
  vyre.buffer @tile workgroup : f32[64]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %w = vyre.workgroup_id x
  %v = vyre.load @x[%i] : f32
  vyre.store @p[%i] = %v : f32
  vyre.barrier
  %back = vyre.load @p[%i] : f32
  vyre.store @tile[%l] = %back : f32
}

// CHECK:      // vyre kernel @own2d id
// CHECK:        storageBarrier();
// CHECK-NEXT:   workgroupBarrier();
// CHECK:      // -----

// The tile's first store is at local_id in the then-branch of an `if` on a
// workgroup-uniform condition (a fused arm's guard) that holds every access
// to the tile: a workgroup either stores every element first or never touches
// it, so the prologue does not zero it.
vyre.program @guarded workgroup_size [64, 1, 1] {
  vyre.buffer @out binding 0 write_only : ui32[4]
  vyre.buffer @tile workgroup : ui32[64]
  %l = vyre.local_id x
  %w = vyre.workgroup_id x
  %two = vyre.const 2 : ui32
  %run = vyre.lt %w, %two : ui32
  vyre.if %run {
    vyre.store @tile[%l] = %l : ui32
    vyre.barrier
    %zero = vyre.const 0 : ui32
    %first = vyre.eq %l, %zero : ui32
    vyre.if %first {
      %t = vyre.load @tile[%two] : ui32
      vyre.store @out[%w] = %t : ui32
    }
  }
}

// CHECK:      // vyre kernel @guarded id
// CHECK-NOT:  vyre_z
// CHECK:      // -----

// The same with a read of the tile after the `if`: a workgroup whose guard is
// false reads it unwritten, so the prologue zeroes it.
vyre.program @read_after workgroup_size [64, 1, 1] {
  vyre.buffer @out binding 0 write_only : ui32[4]
  vyre.buffer @tile workgroup : ui32[64]
  %l = vyre.local_id x
  %w = vyre.workgroup_id x
  %two = vyre.const 2 : ui32
  %run = vyre.lt %w, %two : ui32
  vyre.if %run {
    vyre.store @tile[%l] = %l : ui32
  }
  vyre.barrier
  %t = vyre.load @tile[%two] : ui32
  vyre.store @out[%w] = %t : ui32
}

// CHECK:      // vyre kernel @read_after id
// CHECK:        for (var vyre_z: u32 = vyre_local; vyre_z < 64u; vyre_z = vyre_z + 64u) {
